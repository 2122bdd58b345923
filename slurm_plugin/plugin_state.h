// What job_submit/fmte keeps between calls: the Config from fmte.conf (beside the slurm.conf in
// use) and the Estimator with its catalogs and the regressors of RegressorsDir (step-time model,
// the site corrections fmte-retrain installs), loaded in init() and reloaded when one of their
// files or directories changes (looked at at most every kReloadCheckS seconds, as job_submit/lua
// does for its script). The look is one read() of an inotify descriptor that watches every
// directory of the watched trees (and the folder of each watched file); only when it reports an
// event, or every kFullCheckS seconds when a watched folder is on a shared file system (changes
// made on another host raise no local event; on a local one inotify sees every change), are the
// mtimes of the whole trees compared, a stat() per entry (2-3 ms for the shipped catalogs, under
// slurmctld's job write lock, which every 5 s would cost every submission). Without
// inotify (no descriptor, watch limit reached) the trees are compared at every look. A failed
// reload keeps the previous state and is logged once per change; a broken RegressorsDir at the
// first load falls back to the shipped regressors (logged). Thread-safety: not internally
// synchronised. REQUIRES: the caller holds the plugin's mutex.
#ifndef FMTE_SLURM_PLUGIN_PLUGIN_STATE_H_
#define FMTE_SLURM_PLUGIN_PLUGIN_STATE_H_

#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fmte/config.h"
#include "fmte/estimator.h"
#include "fmte/status.h"

namespace fmte::slurm {

inline constexpr time_t kReloadCheckS = 5;
inline constexpr time_t kFullCheckS = 60;

// Change notification for a set of files and directory trees (inotify). Not copyable.
class TreeNotifier {
 public:
  TreeNotifier() = default;
  TreeNotifier(const TreeNotifier&) = delete;
  TreeNotifier& operator=(const TreeNotifier&) = delete;
  ~TreeNotifier() { Close(); }
  // Watches every directory under each directory of `paths` and the folder of each other path.
  // False (and nothing armed) when inotify is unavailable or a watch could not be added.
  bool Arm(const std::vector<std::string>& paths);
  // Whether something may have changed since Arm or the last call: true when an event arrived (the
  // events are consumed) or nothing is armed.
  bool Fired();
  bool armed() const { return fd_ >= 0; }
  // Whether every watched directory is on a local file system, where inotify sees every change
  // (LocalFileSystem); false when not armed. Elsewhere a change made on another host raises no
  // event, so the trees are also compared every kFullCheckS.
  bool sees_every_change() const { return fd_ >= 0 && local_; }
  void Close();

 private:
  int fd_ = -1;
  bool local_ = false;
};

// Whether a file system of this statfs f_type (linux/magic.h) is local to the host: ext2/3/4, XFS,
// Btrfs, tmpfs, overlayfs, F2FS, ZFS, ramfs. NFS, Lustre, GPFS, BeeGFS, CephFS, CIFS/SMB, FUSE and
// any type not listed are not: changes made elsewhere raise no inotify event there.
bool LocalFileSystem(int64_t f_type);

struct Loaded {
  Config config;
  Estimator estimator;
  bool config_from_file = false;  // false: no fmte.conf, every key at its default
  std::string files_fingerprint;  // FilesFingerprint of what was loaded (client_decision.h)
};

class PluginState {
 public:
  // The slurm.conf in use: $SLURM_CONF, else the path slurmctld parsed (slurm_conf.slurm_conf when
  // running inside a Slurm process), else /etc/slurm/slurm.conf.
  static std::string SlurmConfPath();

  // Loads everything. `fmte_conf_path` empty: FindConfigPath(SlurmConfPath()). `watch` false:
  // loaded once, never reloaded (sbatch's SPANK plugin, which decides one job and exits).
  Status Init(std::string fmte_conf_path = "", bool watch = true);
  // Before Init: read only the OperatorSet= of `partition` (fmte.conf's For(partition)), not every
  // partition's: sbatch decides one job, and each set it reads costs it tens of milliseconds.
  void OperatorSetsOnlyFor(std::string partition) { sets_for_ = std::move(partition); }
  // The loaded state (null before a successful Init); reloads first when a file changed and the
  // last check is older than kReloadCheckS (or `force`). Errors of a reload are in last_error().
  const Loaded* Current(bool force = false);

  const std::string& config_path() const { return config_path_; }
  const std::string& last_error() const { return last_error_; }
  // What the last reload did ("reloaded ..." / "reload failed: ..."), once; empty otherwise.
  std::string TakeReloadMessage() { return std::exchange(reload_message_, std::string()); }
  void Reset() { loaded_.reset(); }

 private:
  struct Watched {
    std::string path;
    std::optional<struct timespec> mtime;  // nullopt: missing
  };
  Result<std::unique_ptr<Loaded>> Load();
  // Arms the notifier on the watched paths, then records their mtimes.
  std::vector<Watched> WatchList(const Loaded& loaded);
  bool Changed() const;

  std::string config_path_;
  std::unique_ptr<Loaded> loaded_;
  std::vector<Watched> watched_;
  TreeNotifier notifier_;
  time_t last_check_ = 0;
  time_t last_full_check_ = 0;
  std::string last_error_;
  std::string reload_message_;
  std::optional<std::string> sets_for_;  // OperatorSetsOnlyFor
};

}  // namespace fmte::slurm

#endif  // FMTE_SLURM_PLUGIN_PLUGIN_STATE_H_
