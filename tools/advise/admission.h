// The admission side as job_submit/fmte loads it, for the commands that decide like the plugin
// (check, replay): fmte.conf, the catalogs with the regressors, and the launcher table.
// Thread-safety: value types.
#ifndef FMTE_TOOLS_ADVISE_ADMISSION_H_
#define FMTE_TOOLS_ADVISE_ADMISSION_H_

#include <memory>
#include <string>

#include "fmte/config.h"
#include "fmte/estimator.h"
#include "fmte/launchers.h"
#include "fmte/status.h"

namespace fmte::advise {

struct Admission {
  Config config;
  std::string config_path;  // the file read, or "(none: defaults)"
  std::unique_ptr<Estimator> estimator;
  LauncherTable launchers;
  // The OperatorSet= names that could not be loaded, one line each naming the file
  // (LoadOperatorSets): their partitions decide without them, as in the plugin. Empty: all loaded.
  std::string operator_set_problems;
};

// `config_flag`: --config (a path, "none", or "" for fmte.conf beside $SLURM_CONF, else
// /etc/slurm/fmte.conf, else defaults); `regressors_flag`: --regressors ("" for the config's
// RegressorsDir). Errors name the file that could not be read.
Result<Admission> LoadAdmission(const std::string& config_flag, const std::string& regressors_flag);

}  // namespace fmte::advise

#endif  // FMTE_TOOLS_ADVISE_ADMISSION_H_
