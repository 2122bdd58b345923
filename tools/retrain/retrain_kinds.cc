// Shared by the training kinds: kind directories, staging and installing staged models.
#include "retrain_kinds.h"

#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "fmte/learn/install.h"
#include "fmte/learn/version.h"

namespace fmte::retrain {
namespace {

namespace fs = std::filesystem;

Result<std::string> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot read");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::IoError(path + ": read error");
  return ss.str();
}

}  // namespace

std::string KindDir(const std::string& into, const std::string& name,
                    const std::string& marker_file) {
  std::error_code ec;
  const fs::path p(into);
  const std::string base = (p.has_filename() ? p : p.parent_path()).filename().string();
  if (base == name || fs::exists(p / marker_file, ec)) return into;
  return (p / name).string();
}

Staging::Staging(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    status_ = Status::IoError(dir + ": cannot create directory: " + ec.message());
    return;
  }
  path_ = dir + "/.fmte-staging-" + std::to_string(::getpid());
  fs::remove_all(path_, ec);
  fs::create_directories(path_, ec);
  if (ec) status_ = Status::IoError(path_ + ": cannot create: " + ec.message());
}

Staging::~Staging() {
  std::error_code ec;
  if (!path_.empty()) fs::remove_all(path_, ec);
}

Status InstallStaged(const std::string& staging, const std::string& dir,
                     const nlohmann::json& retrain, std::vector<std::string>* installed) {
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(staging, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const std::string rel = fs::relative(it->path(), staging).string();
    if (rel != "manifest.json") files.push_back(rel);
  }
  if (ec) return Status::IoError(staging + ": " + ec.message());
  std::sort(files.begin(), files.end());
  for (const std::string& rel : files) {
    const fs::path target = fs::path(dir) / rel;
    fs::create_directories(target.parent_path(), ec);
    if (ec) return Status::IoError(target.parent_path().string() + ": " + ec.message());
    Result<std::string> text = ReadAll((fs::path(staging) / rel).string());
    if (!text.ok()) return text.status();
    if (Result<std::string> prev = ReadAll(target.string()); prev.ok()) {
      if (*prev == *text) continue;  // unchanged: keep the older .prev.json
      FMTE_RETURN_IF_ERROR(learn::WriteFileAtomic(
          (target.parent_path() / (target.stem().string() + ".prev.json")).string(), *prev));
    }
    FMTE_RETURN_IF_ERROR(learn::WriteFileAtomic(target.string(), *text));
    if (installed != nullptr) installed->push_back(rel);
  }
  nlohmann::json manifest = nlohmann::json::object();
  if (Result<std::string> m = ReadAll(staging + "/manifest.json"); m.ok()) {
    manifest = nlohmann::json::parse(*m, nullptr, false);
    if (!manifest.is_object())
      return Status::ParseError(staging + "/manifest.json: not a JSON object");
  }
  manifest["retrain"] = retrain;
  if (Result<std::string> old = learn::ReadManifest(dir); old.ok()) {
    FMTE_RETURN_IF_ERROR(learn::WriteFileAtomic(dir + "/manifest.prev.json", *old));
  }
  return learn::WriteFileAtomic(dir + "/manifest.json", manifest.dump(1) + "\n");
}

nlohmann::json RetrainBlock(const ReadFlags& flags, const std::string& kind,
                            const nlohmann::json& comparison) {
  return {{"installed_at", FormatTime(static_cast<int64_t>(std::time(nullptr)))},
          {"kind", kind},
          {"sources", flags.files},
          {"xgboost_version", learn::XgboostVersion()},
          {"forced", flags.force},
          {"comparison", comparison}};
}

void PrintRefusal(const std::string& what, bool forced) {
  std::cerr << "fmte-retrain: "
            << (forced ? "warning: installed anyway (--force): " : "error: not installed: ") << what
            << (forced ? "" : " (use --force to install anyway)") << "\n";
}

}  // namespace fmte::retrain
