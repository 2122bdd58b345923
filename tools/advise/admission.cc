#include "admission.h"

#include <cstdlib>
#include <fstream>
#include <utility>

#include "fmte/script_files.h"
#include "time_output.h"

namespace fmte::advise {
namespace {

// --config, else fmte.conf beside $SLURM_CONF, else /etc/slurm/fmte.conf, else defaults ("none").
Result<Config> LoadPolicyConfig(const std::string& flag, std::string* used) {
  std::string path = flag;
  if (path.empty()) {
    const char* slurm_conf = std::getenv("SLURM_CONF");
    for (const std::string& p : {slurm_conf ? FindConfigPath(slurm_conf) : std::string(),
                                 std::string("/etc/slurm/fmte.conf")}) {
      if (!p.empty() && std::ifstream(p).good()) {
        path = p;
        break;
      }
    }
  }
  if (path.empty() || path == "none") {
    *used = "(none: defaults)";
    return Config{};
  }
  *used = path;
  return LoadConfigFile(path);
}

}  // namespace

Result<Admission> LoadAdmission(const std::string& config_flag,
                                const std::string& regressors_flag) {
  Admission a;
  auto config = LoadPolicyConfig(config_flag, &a.config_path);
  if (!config.ok()) return config.status();
  a.config = std::move(config).value();
  // The regressors the plugin uses (RegressorsDir), unless --regressors names others.
  auto catalogs = LoadCatalogs(a.config.catalog_dir, a.config.regressors_dir);
  if (!catalogs.ok())
    return Status::IoError("cannot load the catalogs: " + catalogs.status().message());
  if (Status s = tools::ApplyRegressorsDir(regressors_flag, &catalogs.value()); !s.ok()) return s;
  // The partitions' operator regressors, as the plugin loads them.
  LoadOperatorSets(a.config, &catalogs.value(), &a.operator_set_problems);
  a.estimator = std::make_unique<Estimator>(std::move(catalogs).value());
  auto launchers = LoadLauncherTable(a.config.catalog_dir);
  if (!launchers.ok()) return launchers.status();
  a.launchers = std::move(launchers).value();
  return a;
}

}  // namespace fmte::advise
