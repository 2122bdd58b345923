#include "model_resolver.h"

#include <curl/curl.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "fmte/model.h"
#include "fmte/request.h"

namespace fmte::slurm {
namespace {

constexpr size_t kMaxConfigBytes = 1 << 20;  // a config.json is a few KiB; refuse anything huge

bool IsDir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Result<std::string> ReadBounded(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("--fmte-model: cannot read '" + path + "'");
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxConfigBytes) {
    return Status::InvalidArgument("--fmte-model: '" + path + "' is larger than 1 MiB");
  }
  return text;
}

// org/name with conservative characters only: it becomes part of a URL and of a cache path.
bool IsHubId(std::string_view id) {
  size_t slash = id.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == id.size()) return false;
  if (id.find('/', slash + 1) != std::string_view::npos) return false;
  if (id.find("..") != std::string_view::npos || id.size() > 200) return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.' || c == '/';
    if (!ok) return false;
  }
  return true;
}

void MakeDirs(const std::string& dir) {
  for (size_t pos = 1; pos != std::string::npos;) {
    pos = dir.find('/', pos + 1);
    mkdir(dir.substr(0, pos).c_str(), 0755);
  }
}

// Writes atomically so that concurrent sbatch runs never read half a file.
void WriteCache(const std::string& path, const std::string& text) {
  MakeDirs(path.substr(0, path.rfind('/')));
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out << text;
    if (!out) return;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) std::remove(tmp.c_str());
}

size_t CollectBody(char* data, size_t size, size_t nmemb, void* user) {
  auto* sink = static_cast<std::pair<std::string*, size_t>*>(user);
  size_t n = size * nmemb;
  if (sink->first->size() + n > sink->second) return 0;  // aborts the transfer: too large
  sink->first->append(data, n);
  return n;
}

}  // namespace

std::string HfCacheConfig(std::string_view id) {
  std::vector<std::string> roots;
  const auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v != nullptr ? v : "");
  };
  if (!env("HF_HUB_CACHE").empty()) roots.push_back(env("HF_HUB_CACHE"));
  if (!env("HUGGINGFACE_HUB_CACHE").empty()) roots.push_back(env("HUGGINGFACE_HUB_CACHE"));
  if (!env("HF_HOME").empty()) roots.push_back(env("HF_HOME") + "/hub");
  if (!env("XDG_CACHE_HOME").empty()) roots.push_back(env("XDG_CACHE_HOME") + "/huggingface/hub");
  if (!env("HOME").empty()) roots.push_back(env("HOME") + "/.cache/huggingface/hub");
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

bool LooksLikePath(std::string_view model) {
  if (model.empty()) return false;
  if (model[0] == '/' || model[0] == '.' || model[0] == '~') return true;
  if (model.size() >= 5 && model.substr(model.size() - 5) == ".json") return true;
  struct stat st;
  return stat(std::string(model).c_str(), &st) == 0;
}

Result<std::string> CompactArchJson(std::string_view json_text, const std::string& origin) {
  Result<ModelArch> arch = ParseModelConfig(json_text, origin);
  if (!arch.ok()) return Status::InvalidArgument("--fmte-model: " + arch.status().message());
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::ParseError("--fmte-model: '" + origin + "' is not a JSON object");
  }
  // Keys the estimator never reads but that can be long (label maps, remote code references).
  for (const char* key : {"id2label", "label2id", "auto_map", "task_specific_params"}) j.erase(key);
  std::string compact = j.dump();
  if (compact.size() > kMaxArchJsonBytes) {
    return Status::InvalidArgument("--fmte-model: '" + origin + "' is too large to forward (" +
                                   std::to_string(compact.size()) + " bytes)");
  }
  return compact;
}

Result<std::string> HttpGet(const std::string& url, long timeout_ms, size_t max_bytes) {
  static const bool kInit = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  if (!kInit) return Status::Internal("libcurl initialisation failed");
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Status::Internal("libcurl: no handle");
  std::string body;
  std::pair<std::string*, size_t> sink{&body, max_bytes};
  curl_slist* headers = nullptr;
  if (const char* token = std::getenv("HF_TOKEN"); token != nullptr && *token != '\0') {
    headers = curl_slist_append(headers, (std::string("Authorization: Bearer ") + token).c_str());
  }
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "fmte-spank/1");
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, CollectBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  if (headers != nullptr) curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  CURLcode rc = curl_easy_perform(curl);
  long http_code = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http_code);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) return Status::IoError(url + ": " + curl_easy_strerror(rc));
  if (http_code != 200) {
    return Status::NotFound(url + ": HTTP " + std::to_string(http_code));
  }
  return body;
}

Result<std::string> ResolveForController(std::string_view model, const ResolverOptions& options) {
  std::string value(model);
  if (LooksLikePath(value)) {
    if (value[0] == '~') {
      const char* home = std::getenv("HOME");
      value = std::string(home != nullptr ? home : "") + value.substr(1);
    }
    std::string file = IsDir(value) ? value + "/config.json" : value;
    if (!IsFile(file)) {
      return Status::NotFound("--fmte-model: '" + file +
                              "': no such file (expected a config.json or a "
                              "model directory holding one)");
    }
    Result<std::string> text = ReadBounded(file);
    if (!text.ok()) return text.status();
    return CompactArchJson(*text, file);
  }
  // A Hugging Face id: the catalog (exact file first, then case-insensitive lookup), the cache,
  // the hub.
  if (IsFile(options.models_dir + "/" + value + "/config.json")) return std::string();
  if (IsDir(options.models_dir)) {
    Result<ModelCatalog> catalog = ModelCatalog::LoadDir(options.models_dir);
    if (catalog.ok() && catalog->Find(value).ok()) return std::string();
  }
  if (!IsHubId(value)) {
    return Status::NotFound("--fmte-model: '" + value +
                            "' is not in the model catalog and is not a "
                            "Hugging Face id (org/name) or a config.json path");
  }
  // The Hugging Face cache the user's jobs load from: models--org--name/snapshots/<rev>/, the
  // revision refs/main names first.
  if (std::string hf = HfCacheConfig(value); !hf.empty()) {
    Result<std::string> text = ReadBounded(hf);
    if (text.ok()) {
      Result<std::string> json = CompactArchJson(*text, hf);
      if (json.ok()) return json;
    }
  }
  std::string cached = options.cache_dir + "/" + value + "/config.json";
  if (!options.cache_dir.empty() && IsFile(cached)) {
    Result<std::string> text = ReadBounded(cached);
    if (text.ok()) {
      Result<std::string> json = CompactArchJson(*text, cached);
      if (json.ok()) return json;
    }
  }
  if (options.hub_url.empty()) {
    return Status::NotFound("--fmte-model: '" + value +
                            "' is not in the model catalog and no hub_url "
                            "is configured for spank_fmte.so");
  }
  std::string url = options.hub_url + "/" + value + "/resolve/main/config.json";
  Result<std::string> body = HttpGet(url, options.timeout_ms, kMaxConfigBytes);
  if (!body.ok())
    return Status::NotFound("--fmte-model: '" + value + "': " + body.status().message());
  Result<std::string> json = CompactArchJson(*body, url);
  if (!json.ok()) return json.status();
  if (!options.cache_dir.empty()) WriteCache(cached, *body);
  return json;
}

}  // namespace fmte::slurm
