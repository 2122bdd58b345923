#include "model_resolver.h"

#include <curl/curl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "fmte/model.h"
#include "fmte/model_files.h"
#include "fmte/request.h"
#include "fmte/submission.h"

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
  const std::string value(model);
  const auto named = [](const Status& st) {
    const std::string msg = "--fmte-model: " + st.message();
    return st.code() == Status::Code::kNotFound ? Status::NotFound(msg)
                                                : Status::InvalidArgument(msg);
  };
  // A config.json or a model directory on this machine (estimator/files, as check reads it).
  if (LooksLikeModelPath(value, ".")) {
    Result<std::string> local = LocalModelArch(value, ".", ProcessEnviron());
    if (!local.ok()) return named(local.status());
    return local;
  }
  // A Hugging Face id: the catalog (exact file first, then case-insensitive lookup), the user's
  // Hugging Face cache, the site's cache, the hub.
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
  if (Result<std::string> cached = LocalModelArch(value, ".", ProcessEnviron()); cached.ok())
    return cached;
  std::string cached = options.cache_dir + "/" + value + "/config.json";
  // A cached file that no longer reads (truncated by a full disk, emptied, overwritten) is fetched
  // again and replaced; without the hub, the message names it.
  std::string bad_cache;
  if (!options.cache_dir.empty() && IsFile(cached)) {
    Result<std::string> json = LocalModelArch(cached, ".", {});
    if (json.ok()) return json;
    bad_cache = "; its cached config is unreadable (" + json.status().message() + ")";
  }
  if (options.hub_url.empty()) {
    return Status::NotFound("--fmte-model: '" + value +
                            "' is not in the model catalog and no hub_url "
                            "is configured for spank_fmte.so" +
                            bad_cache);
  }
  std::string url = options.hub_url + "/" + value + "/resolve/main/config.json";
  Result<std::string> body = HttpGet(url, options.timeout_ms, kMaxConfigBytes);
  if (!body.ok())
    return Status::NotFound("--fmte-model: '" + value + "': " + body.status().message() +
                            bad_cache);
  Result<std::string> json = CompactArchJson(*body, url);
  if (!json.ok())
    return Status::InvalidArgument(
        "--fmte-model: '" + value +
        "': the hub's answer is not a model config: " + json.status().message());
  if (!options.cache_dir.empty()) WriteCache(cached, *body);
  return json;
}

}  // namespace fmte::slurm
