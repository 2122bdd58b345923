// The parsed-architecture cache of the policy (policy_internal.h): a forwarded (SPANK FMTE_ARCH) or
// derived (Megatron --num-layers/--hidden-size/...) config.json text is parsed once per distinct
// (id, text) instead of on every decision. Parsing is the dearest single step of a Megatron
// submission (nlohmann_json builds a DOM: ~40k instructions, measured with callgrind), and the same
// script is submitted again and again (job arrays, resubmits, one script per project).
//
// Correctness: ParseModelConfig is a pure function of (text, id) (no catalog, config or file
// involved), so the key is its whole input and an entry can never go stale; the plugin still clears
// the cache when it reloads its files, so nothing outlives a configuration. Failed parses are not
// cached (their error message is rebuilt each time).
// Bounds: at most kArchCacheEntries entries, each key at most id + kMaxArchJsonBytes (the parser
// refuses longer forwarded JSON before it gets here); when full, the cache is emptied (a cluster
// with more distinct ad-hoc architectures than that gets the uncached speed, never unbounded
// memory). Thread-safety: one mutex guards the map; parsing runs outside it, so concurrent
// decisions never wait for each other's parse (two may parse the same text at once; the first
// insert wins).
#include <atomic>
#include <mutex>
#include <unordered_map>

#include "policy_internal.h"

namespace fmte::internal {
namespace {

struct ArchCache {
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<const ModelArch>> entries;  // GUARDED_BY(mu)
  std::atomic<bool> enabled{true};
};

ArchCache& Cache() {
  static ArchCache* cache = new ArchCache();  // never destroyed: decisions may run during exit
  return *cache;
}

std::string Key(std::string_view json, std::string_view id) {
  std::string key;
  key.reserve(id.size() + 1 + json.size());
  key.append(id);
  key.push_back('\0');  // ids never hold NUL: (id, json) pairs cannot collide
  key.append(json);
  return key;
}

}  // namespace

Result<std::shared_ptr<const ModelArch>> CachedModelConfig(std::string_view json,
                                                           const std::string& id) {
  ArchCache& cache = Cache();
  const bool enabled = cache.enabled.load(std::memory_order_relaxed);
  std::string key;
  if (enabled) {
    key = Key(json, id);
    std::lock_guard<std::mutex> lock(cache.mu);
    if (auto it = cache.entries.find(key); it != cache.entries.end()) return it->second;
  }
  auto parsed = ParseModelConfig(json, id);
  if (!parsed.ok()) return parsed.status();
  auto arch = std::make_shared<const ModelArch>(std::move(parsed).value());
  if (enabled) {
    std::lock_guard<std::mutex> lock(cache.mu);
    if (cache.entries.size() >= kArchCacheEntries) cache.entries.clear();
    cache.entries.emplace(std::move(key), arch);
  }
  return arch;
}

void ClearArchCache() {
  std::lock_guard<std::mutex> lock(Cache().mu);
  Cache().entries.clear();
}

size_t ArchCacheSize() {
  std::lock_guard<std::mutex> lock(Cache().mu);
  return Cache().entries.size();
}

void EnableArchCache(bool enabled) {
  Cache().enabled.store(enabled, std::memory_order_relaxed);
  if (!enabled) ClearArchCache();
}

}  // namespace fmte::internal
