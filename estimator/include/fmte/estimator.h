// The estimator facade: what the policy and the tools call to predict one job. It bundles the
// catalogs and regressors (loaded once, at plugin init() or tool start), calls the memory model
// (memory.h) and the time model (time.h, walltime.h), then applies the site's own corrections
// (site_correction.h) when a regressors directory holds them. Estimating is pure: no I/O.
// Thread-safety: Catalogs and Estimator are immutable after loading; Estimate may run concurrently.
#ifndef FMTE_ESTIMATOR_H_
#define FMTE_ESTIMATOR_H_

#include <string>
#include <utility>

#include "fmte/gpu.h"
#include "fmte/job.h"
#include "fmte/memory.h"
#include "fmte/model.h"
#include "fmte/site_correction.h"
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
  // The site's corrections (fmte-retrain train --into DIR); empty: none.
  SiteCorrections corrections;
};

// Loads `<etc_dir>/models/`, `<etc_dir>/gpus.csv` and `<etc_dir>/clusters/` (empty etc_dir: the
// compiled-in FMTE_ETC_DIR, or $FMTE_ETC_DIR), then LoadRegressors(regressors_dir). Errors name the file.
Result<Catalogs> LoadCatalogs(const std::string& etc_dir = "", const std::string& regressors_dir = "");

// Loads a regressors directory into `catalogs` (empty: the shipped one, RegressorsDir()):
//  - the step-time model from DIR itself when it holds efficiency.json, else DIR/vtrain, else the
//    shipped regressors/vtrain (none there: no time estimates; a broken one: the error);
//  - the site corrections from DIR/manifest.json (none: no correction; a broken or mismatched
//    model: the error, naming the file).
Status LoadRegressors(const std::string& regressors_dir, Catalogs* catalogs);

struct JobEstimate {
  MemoryEstimate memory;
  // Wall time. has_time is false until a time model provides it (the policy then sets no limit).
  bool has_time = false;
  double wall_time_s = 0;        // predicted (median) wall time of the whole job
  double wall_time_bound_s = 0;  // calibrated upper bound (quantile) to size a time limit from
  // Step time (whenever the time model is loaded) and the wall-time details (when has_time).
  bool has_step_time = false;
  WallTimeEstimate time;         // time.step: the step-time estimate with its breakdown
  // Site corrections (site_correction.h). When applied, memory.per_gpu_bytes (and memory.fits),
  // wall_time_s and wall_time_bound_s above are the CORRECTED values (what the policy decides by);
  // the models' own predictions are kept here (and in ModelPerGpuBytes / ModelWallTimeS). `time`
  // (the wall-time breakdown) stays the time model's own.
  SiteCorrectionInfo correction;
};

// The models' own (uncorrected) predictions: what the accounting record stores, because that is
// what fmte-retrain divides the measured values by.
int64_t ModelPerGpuBytes(const JobEstimate& estimate);
double ModelWallTimeS(const JobEstimate& estimate);

// Applies `corrections` to an estimate of `job` on `gpu` (Estimate does this itself).
void ApplySiteCorrections(const SiteCorrections& corrections, const TrainingJob& job, const GpuSpec& gpu,
                          JobEstimate* estimate);

// One job on one GPU model. REQUIRES nothing: runs ValidateJob itself and returns its error.
Result<JobEstimate> Estimate(const Catalogs& catalogs, const ModelArch& model, const TrainingJob& job,
                             const GpuSpec& gpu);
// The same over a dataset (a TE2 contract, walltime.h DatasetTokens): the wall time comes from
// EstimateWallTimeForDataset (steps at the padded micro-batch width, or packed rows); memory is
// still sized for seq_len, the widest micro-batch. A contract that cannot be used is an error.
Result<JobEstimate> Estimate(const Catalogs& catalogs, const ModelArch& model, const TrainingJob& job,
                             const GpuSpec& gpu, const DatasetTokens& dataset);

// Owner of the loaded catalogs and regressors: what the plugin keeps between calls.
class Estimator {
 public:
  explicit Estimator(Catalogs catalogs) : catalogs_(std::move(catalogs)) {}
  // LoadCatalogs(etc_dir, regressors_dir).
  static Result<Estimator> Load(const std::string& etc_dir = "", const std::string& regressors_dir = "");

  const Catalogs& catalogs() const { return catalogs_; }
  Result<JobEstimate> Estimate(const ModelArch& model, const TrainingJob& job, const GpuSpec& gpu) const {
    return ::fmte::Estimate(catalogs_, model, job, gpu);
  }

 private:
  Catalogs catalogs_;
};

}  // namespace fmte

#endif  // FMTE_ESTIMATOR_H_
