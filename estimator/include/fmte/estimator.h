// The estimator facade: what the policy and the tools call to predict one job. It bundles the
// catalogs (loaded once, at plugin init() or tool start) and calls the memory model (memory.h) and,
// once engineer "time" adds it, the time model. Estimating is pure and allocation-light: no I/O.
// Thread-safety: Catalogs and Estimator are immutable after loading; Estimate may run concurrently.
#ifndef FMTE_ESTIMATOR_H_
#define FMTE_ESTIMATOR_H_

#include <string>
#include <utility>

#include "fmte/gpu.h"
#include "fmte/job.h"
#include "fmte/memory.h"
#include "fmte/model.h"
#include "fmte/status.h"
#include "fmte/cluster.h"
#include "fmte/time.h"
#include "fmte/walltime.h"

namespace fmte {

struct Catalogs {
  ModelCatalog models;
  GpuCatalog gpus;
  // Time (issue 4): etc/clusters/*.json and regressors/vtrain/ (missing model: no time estimate).
  ClusterCatalog clusters;
  TimeModel time_model;
  bool has_time_model = false;
};

// Loads `<etc_dir>/models/` and `<etc_dir>/gpus.csv` (empty etc_dir: the compiled-in FMTE_ETC_DIR, or
// $FMTE_ETC_DIR). Errors name the file.
Result<Catalogs> LoadCatalogs(const std::string& etc_dir = "");

struct JobEstimate {
  MemoryEstimate memory;
  // Wall time. has_time is false until a time model provides it (the policy then sets no limit).
  bool has_time = false;
  double wall_time_s = 0;        // predicted (median) wall time of the whole job
  double wall_time_bound_s = 0;  // calibrated upper bound (quantile) to size a time limit from
  // Step time (whenever the time model is loaded) and the wall-time details (when has_time).
  bool has_step_time = false;
  WallTimeEstimate time;         // time.step: the step-time estimate with its breakdown
};

// One job on one GPU model. REQUIRES nothing: runs ValidateJob itself and returns its error.
Result<JobEstimate> Estimate(const Catalogs& catalogs, const ModelArch& model, const TrainingJob& job,
                             const GpuSpec& gpu);

// Owner of the loaded catalogs (and, later, the regressors): what the plugin keeps between calls.
class Estimator {
 public:
  explicit Estimator(Catalogs catalogs) : catalogs_(std::move(catalogs)) {}
  static Result<Estimator> Load(const std::string& etc_dir = "");

  const Catalogs& catalogs() const { return catalogs_; }
  Result<JobEstimate> Estimate(const ModelArch& model, const TrainingJob& job, const GpuSpec& gpu) const {
    return ::fmte::Estimate(catalogs_, model, job, gpu);
  }

 private:
  Catalogs catalogs_;
};

}  // namespace fmte

#endif  // FMTE_ESTIMATOR_H_
