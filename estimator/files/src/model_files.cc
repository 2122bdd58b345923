#include "fmte/model_files.h"

#include <dirent.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "fmte/model.h"
#include "fmte/request.h"

namespace fmte {
namespace {

constexpr size_t kMaxConfigBytes = 1 << 20;  // a config.json is a few KiB; refuse anything huge

bool IsDir(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool IsFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string EnvValue(std::span<const char* const> entries, std::string_view name) {
  for (const char* e : entries) {
    if (e == nullptr) continue;
    const std::string_view entry(e);
    if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=')
      return std::string(entry.substr(name.size() + 1));
  }
  return {};
}

Result<std::string> ReadBounded(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot read '" + path + "'");
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxConfigBytes)
    return Status::InvalidArgument("'" + path + "' is larger than 1 MiB");
  return text;
}

std::string Joined(const std::string& dir, const std::string& path) {
  return path.empty() || path[0] == '/' || dir.empty() ? path : dir + "/" + path;
}

}  // namespace

bool LooksLikeModelPath(std::string_view model, const std::string& dir) {
  if (model.empty()) return false;
  if (model[0] == '/' || model[0] == '.' || model[0] == '~') return true;
  if (model.ends_with(".json")) return true;
  struct stat st {};
  return stat(Joined(dir, std::string(model)).c_str(), &st) == 0;
}

std::string HfCacheConfig(std::string_view id, std::span<const char* const> environ_entries) {
  std::vector<std::string> roots;
  const auto env = [&](std::string_view name) { return EnvValue(environ_entries, name); };
  if (!env("HF_HUB_CACHE").empty()) roots.push_back(env("HF_HUB_CACHE"));
  if (!env("HUGGINGFACE_HUB_CACHE").empty()) roots.push_back(env("HUGGINGFACE_HUB_CACHE"));
  if (!env("HF_HOME").empty()) roots.push_back(env("HF_HOME") + "/hub");
  if (!env("XDG_CACHE_HOME").empty()) roots.push_back(env("XDG_CACHE_HOME") + "/huggingface/hub");
  if (!env("HOME").empty()) roots.push_back(env("HOME") + "/.cache/huggingface/hub");
  // org/name only: the id becomes part of a path.
  const size_t slash = id.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == id.size() ||
      id.find('/', slash + 1) != std::string_view::npos || id.find("..") != std::string_view::npos)
    return {};
  std::string repo = "models--";
  for (char c : id) repo += c == '/' ? std::string("--") : std::string(1, c);
  for (const std::string& root : roots) {
    const std::string dir = root + "/" + repo;
    if (!IsDir(dir)) continue;
    std::ifstream ref(dir + "/refs/main");
    std::string rev;
    if (ref && std::getline(ref, rev) && !rev.empty() && rev.find('/') == std::string::npos &&
        IsFile(dir + "/snapshots/" + rev + "/config.json"))
      return dir + "/snapshots/" + rev + "/config.json";
    if (DIR* d = opendir((dir + "/snapshots").c_str()); d != nullptr) {
      std::string found;
      for (dirent* e; found.empty() && (e = readdir(d)) != nullptr;) {
        const std::string name = e->d_name;
        if (name != "." && name != ".." && IsFile(dir + "/snapshots/" + name + "/config.json"))
          found = dir + "/snapshots/" + name + "/config.json";
      }
      closedir(d);
      if (!found.empty()) return found;
    }
  }
  return {};
}

Result<std::string> CompactArchJson(std::string_view json_text, const std::string& origin) {
  Result<ModelArch> arch = ParseModelConfig(json_text, origin);
  if (!arch.ok()) {                   // the error names the file or URL it came from
    const Status st = arch.status();  // by value: status() returns a copy
    if (st.message().find(origin) != std::string::npos) return st;
    return st.WithContext("'" + origin + "'");
  }
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return Status::ParseError("'" + origin + "' is not a JSON object");
  // Keys the estimator never reads but that can be long (label maps, remote code references).
  for (const char* key : {"id2label", "label2id", "auto_map", "task_specific_params"}) j.erase(key);
  std::string compact = j.dump();
  if (compact.size() > kMaxArchJsonBytes)
    return Status::InvalidArgument("'" + origin + "' is too large to forward (" +
                                   std::to_string(compact.size()) + " bytes)");
  return compact;
}

Result<std::string> LocalModelArch(std::string_view model, const std::string& dir,
                                   std::span<const char* const> environ_entries) {
  std::string value(model);
  if (LooksLikeModelPath(value, dir)) {
    if (value[0] == '~') value = EnvValue(environ_entries, "HOME") + value.substr(1);
    value = std::filesystem::path(Joined(dir, value)).lexically_normal().string();
    const std::string file = IsDir(value) ? value + "/config.json" : value;
    if (!IsFile(file))
      return Status::NotFound("'" + file +
                              "': no such file (expected a config.json or a model directory "
                              "holding one)");
    Result<std::string> text = ReadBounded(file);
    if (!text.ok()) return text.status();
    return CompactArchJson(*text, file);
  }
  const std::string cached = HfCacheConfig(value, environ_entries);
  if (cached.empty()) return Status::NotFound("'" + value + "' is not in the Hugging Face cache");
  Result<std::string> text = ReadBounded(cached);
  if (!text.ok()) return text.status();
  return CompactArchJson(*text, cached);
}

}  // namespace fmte
