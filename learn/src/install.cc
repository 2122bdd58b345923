// Atomic install (write temp, fsync, rename, fsync directory), see install.h.
#include "fmte/learn/install.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace fmte::learn {
namespace {

namespace fs = std::filesystem;
constexpr std::string_view kTempPrefix = ".fmte-install-";

std::string Errno() { return std::strerror(errno); }

Status FsyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return Status::IoError(dir + ": cannot open directory to fsync: " + Errno());
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Status::IoError(dir + ": fsync: " + Errno());
  return Status::Ok();
}

Result<std::string> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": not found");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::IoError(path + ": read error");
  return ss.str();
}

void RemoveStaleTemps(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(kTempPrefix) && name.ends_with(".tmp")) fs::remove(e.path(), ec);
  }
}

}  // namespace

Status WriteFileAtomic(const std::string& path, const std::string& text) {
  const fs::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  const std::string tmp = dir + "/" + std::string(kTempPrefix) + p.filename().string() + "." +
                          std::to_string(::getpid()) + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError(tmp + ": cannot create: " + Errno());
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string err = Errno();
      ::close(fd);
      ::unlink(tmp.c_str());
      return Status::IoError(tmp + ": write: " + err);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string err = Errno();
    ::unlink(tmp.c_str());
    return Status::IoError(tmp + ": fsync/close: " + err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = Errno();
    ::unlink(tmp.c_str());
    return Status::IoError(path + ": rename from temporary file: " + err);
  }
  return FsyncDir(dir);
}

Result<std::string> ReadManifest(const std::string& dir) { return ReadAll(dir + "/manifest.json"); }

Status InstallModels(const std::string& dir, const std::vector<ModelToInstall>& models,
                     const std::string& manifest_json) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError(dir + ": cannot create directory: " + ec.message());
  RemoveStaleTemps(dir);
  try {
    nlohmann::json manifest = nlohmann::json::object();
    if (Result<std::string> old = ReadManifest(dir); old.ok()) {
      manifest = nlohmann::json::parse(*old, nullptr, false);
      if (!manifest.is_object()) {
        return Status::ParseError(dir +
                                  "/manifest.json: not a JSON object; move it away or fix it");
      }
    }
    nlohmann::json regs = manifest.contains("regressors") && manifest["regressors"].is_array()
                              ? manifest["regressors"]
                              : nlohmann::json::array();
    for (const ModelToInstall& m : models) {
      const std::string path = dir + "/" + m.file;
      // Keep the model being replaced.
      if (Result<std::string> prev = ReadAll(path); prev.ok()) {
        const std::string stem = fs::path(m.file).stem().string();
        FMTE_RETURN_IF_ERROR(WriteFileAtomic(dir + "/" + stem + ".prev.json", *prev));
      }
      FMTE_RETURN_IF_ERROR(WriteFileAtomic(path, m.model_json));
      nlohmann::json entry =
          m.entry_json.empty() ? nlohmann::json::object() : nlohmann::json::parse(m.entry_json);
      entry["key"] = m.key;
      entry["model"] = m.file;
      nlohmann::json kept = nlohmann::json::array();
      for (const auto& r : regs) {
        if (!r.is_object() || r.value("key", "") != m.key) kept.push_back(r);
      }
      kept.push_back(entry);
      regs = std::move(kept);
    }
    manifest["regressors"] = regs;
    const nlohmann::json extra =
        nlohmann::json::parse(manifest_json.empty() ? "{}" : manifest_json);
    for (const auto& [k, v] : extra.items()) manifest[k] = v;
    return WriteFileAtomic(dir + "/manifest.json", manifest.dump(2) + "\n");
  } catch (const nlohmann::json::exception& e) {
    return Status::ParseError(dir + "/manifest.json: " + e.what());
  }
}

}  // namespace fmte::learn
