#include "decision_cache.h"

#include <functional>

#include "fmte/policy.h"
#include "fmte/record.h"

namespace fmte::slurm {
namespace {

// The key's fields, hashed one by one and combined in order (no copy of any of them).
class KeyHasher {
 public:
  void Add(std::string_view text) { Mix(std::hash<std::string_view>{}(text) ^ text.size()); }
  void Add(int64_t v) { Mix(static_cast<uint64_t>(v)); }
  uint64_t value() const { return h_; }

 private:
  void Mix(uint64_t v) {  // boost::hash_combine's step, 64-bit
    h_ ^= v + 0x9e3779b97f4a7c15ULL + (h_ << 12) + (h_ >> 4);
  }
  uint64_t h_ = 0;
};

// Every SlurmFacts field ParseJobRequest reads (job_name and user are not: CacheKeyTest), the
// SPANK values and, `with_script`, the script: the same fields, in the same order, for the key,
// its length and its hash.
template <typename Sink>
void AddFields(const SubmitInputs& in, bool with_script, Sink* sink) {
  const SlurmFacts& f = in.facts;
  sink->Add(f.partition);
  sink->Add(f.time_limit_min);
  sink->Add(f.min_nodes);
  sink->Add(f.num_tasks);
  sink->Add(f.ntasks_per_node);
  sink->Add(int64_t{f.exclusive});
  sink->Add(f.tres_per_node);
  sink->Add(f.tres_per_job);
  sink->Add(f.tres_per_task);
  sink->Add(f.tres_per_socket);
  sink->Add(f.mem_per_node_mb);
  sink->Add(f.mem_per_cpu_mb);
  sink->Add(f.mem_per_gpu_mb);
  sink->Add(f.cpus_per_task);
  sink->Add(static_cast<int64_t>(in.spank_values.size()));
  for (const auto& [k, v] : in.spank_values) {
    sink->Add(k);
    sink->Add(v);
  }
  sink->Add(int64_t{with_script});
  if (with_script) sink->Add(in.script);
}

// The key's exact length, for the bound and the one allocation.
struct KeySize {
  size_t bytes = 0;
  void Add(std::string_view text) { bytes += sizeof(uint64_t) + text.size(); }
  void Add(int64_t) { bytes += sizeof(int64_t); }
};

struct KeyWriter {
  std::string* key;
  void Add(std::string_view text) {
    const uint64_t n = text.size();
    key->append(reinterpret_cast<const char*>(&n), sizeof(n));  // length first: no ambiguity
    key->append(text);
  }
  void Add(int64_t v) { key->append(reinterpret_cast<const char*>(&v), sizeof(v)); }
};

}  // namespace

CachedDecision DecideJob(const JobRequest& request, const Config& config,
                         const Estimator& estimator) {
  CachedDecision c;
  c.is_llm_job = request.is_llm_job;
  if (!request.is_llm_job) return c;
  const Decision d = Decide(request, config, estimator);
  if (d.touched && d.kind != DecisionKind::kReject) c.record = EncodeRecord(MakeRecord(request, d));
  c.outcome = OutcomeOf(d);
  c.model = request.job.model;
  c.slurm_gpus = request.slurm_gpus;
  c.script_read = !request.forwarded_scan;
  return c;
}

bool DecisionCache::MayOmitScript(const SubmitInputs& in) {
  for (const auto& [k, v] : in.spank_values)
    if (k == kReadKey) return true;
  return false;
}

uint64_t DecisionCache::InputsHash(const SubmitInputs& in) {
  StableHasher hasher;
  AddFields(in, false, &hasher);
  return hasher.value();
}

DecisionCache::Probe DecisionCache::ProbeFor(const SubmitInputs& in, bool with_script) {
  KeyHasher hasher;
  AddFields(in, with_script, &hasher);
  return Probe{&in, with_script, hasher.value()};
}

std::string DecisionCache::Key(const SubmitInputs& in, bool with_script) {
  KeySize size;
  AddFields(in, with_script, &size);
  std::string key;
  if (size.bytes > kMaxKeyBytes) return key;
  key.reserve(size.bytes);
  KeyWriter writer{&key};
  AddFields(in, with_script, &writer);
  return key;
}

const CachedDecision* DecisionCache::Find(const Probe& probe) const {
  std::string key;  // built once, only when a hash matches
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (hashes_[i] != probe.hash) continue;
    if (key.empty()) key = Key(*probe.in, probe.with_script);
    if (!key.empty() && keys_[i] == key) return &values_[i];
  }
  return nullptr;
}

const CachedDecision* DecisionCache::Put(const Probe& probe, CachedDecision value,
                                         CachedDecision* scratch) {
  std::string key = Key(*probe.in, probe.with_script);
  if (key.empty()) {
    *scratch = std::move(value);
    return scratch;
  }
  size_t slot = keys_.size();
  if (slot < kMaxEntries) {
    keys_.push_back(std::move(key));
    values_.push_back(std::move(value));
  } else {
    slot = next_;
    next_ = (next_ + 1) % kMaxEntries;
    keys_[slot] = std::move(key);
    values_[slot] = std::move(value);
  }
  hashes_[slot] = probe.hash;
  return &values_[slot];
}

void DecisionCache::Clear() {
  keys_.clear();
  values_.clear();
  next_ = 0;
}

}  // namespace fmte::slurm
