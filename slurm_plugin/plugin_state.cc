#include "plugin_state.h"

#include <dlfcn.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <utility>

extern "C" {
#include <slurm/slurm.h>
}

#include "client_decision.h"
#include "fmte/model.h"

namespace fmte::slurm {
namespace {

std::optional<struct timespec> MtimeOf(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  return st.st_mtim;
}

// The latest mtime in a catalog tree (the directory and everything under it, to kMaxWatched
// entries): a config.json edited in place or a model added under an existing organisation's folder
// changes no mtime of etc/models itself. A file or a missing path: MtimeOf.
constexpr int kMaxWatched = 20000;
std::optional<struct timespec> LatestMtimeIn(const std::string& path) {
  std::optional<struct timespec> latest = MtimeOf(path);
  std::error_code ec;
  if (!latest.has_value() || !std::filesystem::is_directory(path, ec)) return latest;
  int seen = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
       !ec && it != std::filesystem::recursive_directory_iterator() && ++seen <= kMaxWatched;
       it.increment(ec)) {
    std::optional<struct timespec> t = MtimeOf(it->path().string());
    if (t && (t->tv_sec > latest->tv_sec ||
              (t->tv_sec == latest->tv_sec && t->tv_nsec > latest->tv_nsec))) {
      latest = t;
    }
  }
  return latest;
}

// What changes a watched tree: entries written, created, removed, renamed or re-permissioned,
// and the watched directory itself removed or renamed.
constexpr uint32_t kWatchMask = IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_CREATE | IN_DELETE |
                                IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF;

bool SameTime(const std::optional<struct timespec>& a, const std::optional<struct timespec>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a.has_value() || (a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec);
}

}  // namespace

bool LocalFileSystem(int64_t f_type) {
  // Magic numbers of linux/magic.h (ZFS: its own, 0x2fc12fc1), 32 bits wide: compared as such,
  // so that one sign-extended into statfs's f_type still matches.
  constexpr uint32_t kLocal[] = {0xEF53,       // ext2, ext3, ext4
                                 0x58465342,   // XFS
                                 0x9123683E,   // Btrfs
                                 0x01021994,   // tmpfs
                                 0x794C7630,   // overlayfs
                                 0xF2F52010,   // F2FS
                                 0x2FC12FC1,   // ZFS
                                 0x858458F6};  // ramfs
  return std::find(std::begin(kLocal), std::end(kLocal), static_cast<uint32_t>(f_type)) !=
         std::end(kLocal);
}

bool TreeNotifier::Arm(const std::vector<std::string>& paths) {
  Close();
  fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) return false;
  local_ = true;
  int watches = 0;
  const auto watch = [&](const std::string& dir) {
    struct statfs fs;
    local_ =
        local_ && statfs(dir.c_str(), &fs) == 0 && LocalFileSystem(static_cast<int64_t>(fs.f_type));
    return ++watches <= kMaxWatched && inotify_add_watch(fd_, dir.c_str(), kWatchMask) >= 0;
  };
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) {
      // A file (or a missing path): its folder sees it written, replaced, created or removed.
      std::string dir = std::filesystem::path(path).parent_path().string();
      if (!watch(dir.empty() ? "." : dir)) return Close(), false;
      continue;
    }
    if (!watch(path)) return Close(), false;
    for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec) && !watch(it->path().string())) return Close(), false;
    }
    if (ec) return Close(), false;
  }
  return true;
}

bool TreeNotifier::Fired() {
  if (fd_ < 0) return true;
  alignas(struct inotify_event) char buf[4096];
  bool fired = false;
  for (ssize_t n; (n = read(fd_, buf, sizeof(buf))) > 0;) fired = true;
  return fired;
}

void TreeNotifier::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

std::string PluginState::SlurmConfPath() {
  if (const char* env = std::getenv("SLURM_CONF"); env != nullptr && *env != '\0') return env;
  // Inside slurmctld the global slurm_conf (public slurm_conf_t layout, exported by libslurmfull)
  // holds the path given with -f. Looked up at run time so the plugin also loads without it.
  if (void* sym = dlsym(RTLD_DEFAULT, "slurm_conf"); sym != nullptr) {
    const char* path = static_cast<const slurm_conf_t*>(sym)->slurm_conf;
    if (path != nullptr && *path != '\0') return path;
  }
  return "/etc/slurm/slurm.conf";
}

Status PluginState::Init(std::string fmte_conf_path, bool watch) {
  config_path_ =
      fmte_conf_path.empty() ? FindConfigPath(SlurmConfPath()) : std::move(fmte_conf_path);
  Result<std::unique_ptr<Loaded>> loaded = Load();
  if (!loaded.ok()) return loaded.status();
  loaded_ = std::move(loaded).value();
  if (watch) watched_ = WatchList(*loaded_);
  last_check_ = watch ? time(nullptr) : std::numeric_limits<time_t>::max() / 2;
  last_error_.clear();
  return Status::Ok();
}

Result<std::unique_ptr<Loaded>> PluginState::Load() {
  auto loaded =
      std::make_unique<Loaded>(Loaded{Config{}, Estimator(Catalogs{}), false, std::string()});
  if (MtimeOf(config_path_).has_value()) {
    Result<Config> config = LoadConfigFile(config_path_);
    if (!config.ok()) return config.status();
    loaded->config = std::move(config).value();
    loaded->config_from_file = true;
  }
  // The catalogs and the regressors of RegressorsDir (step-time model, the site's corrections).
  Result<Estimator> estimator =
      Estimator::Load(loaded->config.catalog_dir, loaded->config.regressors_dir);
  bool shipped_fallback = false;
  if (!estimator.ok() && loaded_ == nullptr && !loaded->config.regressors_dir.empty()) {
    // First load only (a reload keeps the previous state instead): a broken regressors directory
    // must not leave every job unchecked; run on the shipped regressors and say why.
    Result<Estimator> shipped = Estimator::Load(loaded->config.catalog_dir, "");
    if (shipped.ok()) {
      reload_message_ = "RegressorsDir " + loaded->config.regressors_dir +
                        " not used (running on the shipped regressors until it is fixed): " +
                        estimator.status().ToString();
      estimator = std::move(shipped);
      shipped_fallback = true;
    }
  }
  if (!estimator.ok()) return estimator.status();
  // The partitions' operator regressors (OperatorSet=): one that cannot be read is named once and
  // its partitions decide without it (fail open).
  Catalogs catalogs = std::move(estimator).value().TakeCatalogs();
  std::string problems;
  LoadOperatorSets(loaded->config, &catalogs, &problems,
                   sets_for_ ? &loaded->config.For(*sets_for_) : nullptr);
  if (!problems.empty()) reload_message_ += (reload_message_.empty() ? "" : "; ") + problems;
  loaded->estimator = Estimator(std::move(catalogs));
  Config fingerprinted = loaded->config;  // with the regressors actually loaded
  if (shipped_fallback) fingerprinted.regressors_dir.clear();
  loaded->files_fingerprint = FilesFingerprint(config_path_, fingerprinted);
  return loaded;
}

std::vector<PluginState::Watched> PluginState::WatchList(const Loaded& loaded) {
  std::string etc = loaded.config.catalog_dir;
  std::string models = etc.empty() ? ModelCatalog::DefaultDir() : etc + "/models";
  std::string gpus = etc.empty() ? GpuCatalog::DefaultPath() : etc + "/gpus.csv";
  std::vector<Watched> list;
  // A directory's mtime changes when entries are added, removed or renamed (atomic installs).
  // fmte-retrain installs by renaming into RegressorsDir (its mtime changes); the step-time model
  // may be replaced in its vtrain/ subdirectory.
  const std::string& reg = loaded.config.regressors_dir;
  std::vector<std::string> paths;
  for (const std::string& path :
       {config_path_, models, gpus, reg, reg.empty() ? reg : reg + "/vtrain"}) {
    if (!path.empty()) paths.push_back(path);
  }
  // A set fmte-retrain installs into RegressorsDir/NAME renames inside that folder.
  for (const auto& [name, set] : loaded.estimator.catalogs().operator_sets) {
    const std::string dir = OperatorModels::FindDir(name, reg);
    if (!dir.empty()) paths.push_back(dir);
  }
  notifier_.Arm(paths);  // before the mtimes: a change in between is an event
  last_full_check_ = time(nullptr);
  for (const std::string& path : paths) list.push_back(Watched{path, LatestMtimeIn(path)});
  return list;
}

bool PluginState::Changed() const {
  for (const Watched& w : watched_) {
    if (!SameTime(w.mtime, LatestMtimeIn(w.path))) return true;
  }
  return false;
}

const Loaded* PluginState::Current(bool force) {
  time_t now = time(nullptr);
  if (loaded_ != nullptr && (force || now - last_check_ >= kReloadCheckS)) {
    last_check_ = now;
    // The trees are compared when the kernel saw a change, and every kFullCheckS where it may miss
    // one (a watched folder on a shared file system).
    const bool look = force || notifier_.Fired() ||
                      (!notifier_.sees_every_change() && now - last_full_check_ >= kFullCheckS);
    if (look) last_full_check_ = now;
    if (look && Changed()) {
      // An fmte.conf that was read and is now gone is a file being replaced (an editor's or a
      // config manager's rename) or removed by mistake, not a wish for every default: keep what
      // was loaded. An empty fmte.conf asks for the defaults.
      Result<std::unique_ptr<Loaded>> fresh =
          loaded_->config_from_file && !MtimeOf(config_path_).has_value()
              ? Result<std::unique_ptr<Loaded>>(Status::NotFound(
                    config_path_ + ": missing (renamed or removed); an empty file means defaults"))
              : Load();
      if (fresh.ok()) {
        loaded_ = std::move(fresh).value();
        last_error_.clear();
        const Catalogs& c = loaded_->estimator.catalogs();
        // Load() may have said what it left out (an OperatorSet= it could not read).
        const std::string left_out = std::exchange(reload_message_, std::string());
        reload_message_ =
            "reloaded " + config_path_ + ", the catalogs and the regressors (site corrections: " +
            (c.corrections.time ? "time " : "") + (c.corrections.memory ? "memory " : "") +
            (c.corrections.empty() ? "none" : "installed") + ")" +
            (left_out.empty() ? "" : "; " + left_out);
      } else {
        last_error_ = fresh.status().ToString();
        reload_message_ = "reload failed, keeping the previous settings: " + last_error_;
      }
      // Remember the new mtimes either way: a broken file is reported once, not every call.
      std::vector<Watched> list = WatchList(*loaded_);
      list[0] = Watched{config_path_, LatestMtimeIn(config_path_)};
      watched_ = std::move(list);
    }
  }
  return loaded_.get();
}

}  // namespace fmte::slurm
