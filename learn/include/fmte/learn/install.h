// Atomic installation of trained regressors into a regressors directory (RegressorsDir).
//
// Every file is written as a temporary ".fmte-install-<name>.<pid>.tmp" in the same directory,
// fsync'ed, then renamed over its final name, and the directory is fsync'ed: a reader (the plugin,
// fmte-advise) sees either the old or the new file, never a partial one, and a killed install
// leaves at most a temporary file (removed by the next install). The model being replaced is kept
// as
// "<stem>.prev.json". manifest.json is merged: the entries ("regressors": [{key, model, ...}]) of
// other keys and its other top-level members are kept, so models of other kinds (operators,
// vtrain) can share one directory. The rename changes the directory's mtime, which is what the
// plugin watches to reload without a controller restart.
// Thread-safety: functions; concurrent installs into one directory are not supported.
#ifndef FMTE_LEARN_INSTALL_H_
#define FMTE_LEARN_INSTALL_H_

#include <string>
#include <vector>

#include "fmte/status.h"

namespace fmte::learn {

struct ModelToInstall {
  std::string key;         // manifest key, e.g. "sacct_time_correction"
  std::string file;        // file name in the directory, e.g. "sacct_time_correction.json"
  std::string model_json;  // XGBoost JSON text
  std::string entry_json;  // JSON object with more members for its manifest entry ("{}" if none)
};

// Writes `text` to `path` atomically (temp in the same directory, fsync, rename, fsync dir).
Status WriteFileAtomic(const std::string& path, const std::string& text);

// Installs the models and merges manifest.json. `manifest_json` is a JSON object whose members are
// set at the manifest's top level (e.g. "retrain": {...}). Creates `dir` if missing.
Status InstallModels(const std::string& dir, const std::vector<ModelToInstall>& models,
                     const std::string& manifest_json);

// Reads `dir`/manifest.json (NotFound when absent).
Result<std::string> ReadManifest(const std::string& dir);

}  // namespace fmte::learn

#endif  // FMTE_LEARN_INSTALL_H_
