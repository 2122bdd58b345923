// The kinds of `fmte-retrain train --kind K` beyond sacct (docs/retrain.md), and what they share:
// where a kind installs inside --into, staging a trainer's output and installing it with the same
// rules as the sacct corrections (install.h: atomic files, .prev.json kept, manifest).
#ifndef FMTE_TOOLS_RETRAIN_KINDS_H_
#define FMTE_TOOLS_RETRAIN_KINDS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fmte/status.h"
#include "retrain_common.h"

namespace fmte::retrain {

int TrainVtrainKind(const ReadFlags& flags);     // retrain_kind_vtrain.cc
int TrainOperatorsKind(const ReadFlags& flags);  // retrain_kind_operators.cc
int TrainFmCsvKind(const ReadFlags& flags);      // retrain_kind_fm.cc

// Where a kind's models go inside --into: `into` itself when it already is such a directory (holds
// `marker_file`, or is named `name`), else into/name. (vtrain: "vtrain", efficiency.json;
// operators: the cluster name, manifest.json.)
std::string KindDir(const std::string& into, const std::string& name,
                    const std::string& marker_file);

// A fresh staging directory inside `dir` (same file system); removed by the destructor.
class Staging {
 public:
  explicit Staging(const std::string& dir);
  ~Staging();
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  const std::string& path() const { return path_; }
  Status status() const { return status_; }

 private:
  std::string path_;
  Status status_;
};

// Installs every file under `staging` into `dir` (same relative paths): each written atomically,
// the replaced one kept as <stem>.prev.json beside it; then manifest.json = the staged manifest
// with `retrain` set as its "retrain" member (the replaced manifest kept as manifest.prev.json),
// written last. `installed` receives the relative paths.
Status InstallStaged(const std::string& staging, const std::string& dir,
                     const nlohmann::json& retrain, std::vector<std::string>* installed);

// The "retrain" manifest block every kind writes (when, sources, kind, forced, comparison).
nlohmann::json RetrainBlock(const ReadFlags& flags, const std::string& kind,
                            const nlohmann::json& comparison);

// Prints a refusal to stderr (exit code 1 follows unless --force).
void PrintRefusal(const std::string& what, bool forced);

}  // namespace fmte::retrain

#endif  // FMTE_TOOLS_RETRAIN_KINDS_H_
