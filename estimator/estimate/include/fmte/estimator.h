// The estimator facade: what the policy and the tools call to predict one job. It bundles the
// catalogs and regressors (loaded once, at plugin init() or tool start), calls the memory model
// (memory.h) and the time model (time.h, walltime.h), then applies the site's own corrections
// (site_correction.h) when a regressors directory holds them. Estimating is pure: no I/O.
// Thread-safety: Catalogs and Estimator are immutable after loading; Estimate may run concurrently.
#ifndef FMTE_ESTIMATOR_H_
#define FMTE_ESTIMATOR_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fmte/cluster.h"
#include "fmte/config.h"
#include "fmte/gpu.h"
#include "fmte/job.h"
#include "fmte/memory.h"
#include "fmte/model.h"
#include "fmte/operator_time.h"
#include "fmte/site_correction.h"
#include "fmte/status.h"
#include "fmte/time.h"
#include "fmte/walltime.h"

namespace fmte {

struct Catalogs {
  ModelCatalog models;
  GpuCatalog gpus;
  // Time: etc/clusters/*.json and regressors/vtrain/ (missing model: no time estimate).
  ClusterCatalog clusters;
  TimeModel time_model;
  bool has_time_model = false;
  // The site's corrections (fmte-retrain train --into DIR); empty: none.
  SiteCorrections corrections;
  // Operator regressors by the name fmte.conf's OperatorSet= gives them (LoadOperatorSets).
  std::map<std::string, OperatorModels> operator_sets;
};

// Loads `<etc_dir>/models/`, `<etc_dir>/gpus.csv` and `<etc_dir>/clusters/` (empty etc_dir: the
// compiled-in FMTE_ETC_DIR, or $FMTE_ETC_DIR), then LoadRegressors(regressors_dir). Errors name the
// file.
Result<Catalogs> LoadCatalogs(const std::string& etc_dir = "",
                              const std::string& regressors_dir = "");

// Loads a regressors directory into `catalogs` (empty: the shipped one, RegressorsDir()):
//  - the step-time model from DIR itself when it holds efficiency.json, else DIR/vtrain, else the
//    shipped regressors/vtrain (none there: no time estimates; a broken one: the error);
//  - the site corrections from DIR/manifest.json (none: no correction; a broken or mismatched
//    model: the error, naming the file).
Status LoadRegressors(const std::string& regressors_dir, Catalogs* catalogs);

// The operator regressor sets that `config` names (OperatorSet= of its defaults and partitions),
// each read from <RegressorsDir>/NAME (a set the site trained with fmte-retrain train --kind
// operators --cluster NAME), else from the shipped regressors (Perlmutter, Vista; the name
// case-insensitive). A set that cannot be read is left out and its error appended to *problems
// (one line each, naming the file): the partitions that name it decide without it. `only` (not
// null): read only that partition's set (a client deciding one job).
void LoadOperatorSets(const Config& config, Catalogs* catalogs, std::string* problems,
                      const PartitionConfig* only = nullptr);

struct JobEstimate {
  MemoryEstimate memory;
  // Wall time. has_time is false until a time model provides it (the policy then sets no limit).
  bool has_time = false;
  double wall_time_s = 0;        // predicted (median) wall time of the whole job
  double wall_time_bound_s = 0;  // calibrated upper bound (quantile) to size a time limit from
  // Step time (whenever the time model is loaded) and the wall-time details (when has_time).
  bool has_step_time = false;
  WallTimeEstimate time;  // time.step: the step-time estimate with its breakdown
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
void ApplySiteCorrections(const SiteCorrections& corrections, const TrainingJob& job,
                          const GpuSpec& gpu, JobEstimate* estimate);

// One job on one GPU model. REQUIRES nothing: runs ValidateJob itself and returns its error.
Result<JobEstimate> Estimate(const Catalogs& catalogs, const ModelArch& model,
                             const TrainingJob& job, const GpuSpec& gpu);
// The same over a dataset (a TE2 contract, walltime.h DatasetTokens): the wall time comes from
// EstimateWallTimeForDataset (steps at the padded micro-batch width, or packed rows); memory is
// still sized for seq_len, the widest micro-batch. A contract that cannot be used is an error.
Result<JobEstimate> Estimate(const Catalogs& catalogs, const ModelArch& model,
                             const TrainingJob& job, const GpuSpec& gpu,
                             const DatasetTokens& dataset);

// One model prepared for many estimates of its jobs: a decision with its GPU-count search and
// alternatives estimate one model many times. The model's layers are counted once; per-stage
// parameter counts registered with ShareParamsOf serve every later estimate of a job that reads the
// same counts (same method, adapters, framework, tp and pp), and activations registered with
// ShareActivationsOf serve a GPU-count search. Every estimate of the decision goes through here, so
// a mechanism added to the estimate reaches the decision, the search and the alternatives at once.
// Holds references: `catalogs` and `model` must outlive it, unchanged. Not thread-safe: one per
// decision (the catalogs it reads are shared and immutable).
class PreparedEstimate {
 public:
  PreparedEstimate(const Catalogs& catalogs, const ModelArch& model);
  ~PreparedEstimate();
  PreparedEstimate(const PreparedEstimate&) = delete;
  PreparedEstimate& operator=(const PreparedEstimate&) = delete;

  const Catalogs& catalogs() const { return catalogs_; }
  const ModelArch& model() const;

  // The full estimate (memory, step and wall time, site corrections), as ::fmte::Estimate; with a
  // dataset, as its dataset overload. `out` must be default-constructed; on error it holds a
  // partial estimate.
  [[nodiscard]] Status Estimate(const TrainingJob& job, const GpuSpec& gpu, JobEstimate* out,
                                const DatasetTokens* dataset = nullptr);
  // Memory and the site's memory correction only: what a search compares with the GPU's capacity
  // (time would double the cost of the reject path inside slurmctld). `out` is default-constructed
  // or was last written by EstimateMemory: only its memory and correction are written, reusing
  // their buffers. On error out->memory.per_gpu_bytes is 0.
  [[nodiscard]] Status EstimateMemory(const TrainingJob& job, const GpuSpec& gpu, JobEstimate* out);

  // Counts the per-stage parameters of `job` once for the estimates that follow (REQUIRES: `job`
  // valid, e.g. estimated without error). At most kSharedParams counts are kept (oldest dropped).
  void ShareParamsOf(const TrainingJob& job);
  static constexpr size_t kSharedParams = 4;
  // Counts the stage activations of `job` for the estimates that follow until ForgetActivations.
  // REQUIRES: until then, only jobs that differ from `job` in the GPU count and GPUs per node (and,
  // with one pipeline stage, in gradient accumulation) are estimated: a GPU-count search.
  void ShareActivationsOf(const TrainingJob& job);
  void ForgetActivations();

 private:
  struct Shared;
  const Catalogs& catalogs_;
  std::unique_ptr<Shared> shared_;
};

// Owner of the loaded catalogs and regressors: what the plugin keeps between calls.
class Estimator {
 public:
  explicit Estimator(Catalogs catalogs) : catalogs_(std::move(catalogs)) {}
  // LoadCatalogs(etc_dir, regressors_dir).
  static Result<Estimator> Load(const std::string& etc_dir = "",
                                const std::string& regressors_dir = "");

  const Catalogs& catalogs() const { return catalogs_; }
  // The catalogs, moved out (to add to them before building a new Estimator).
  Catalogs TakeCatalogs() && { return std::move(catalogs_); }
  Result<JobEstimate> Estimate(const ModelArch& model, const TrainingJob& job,
                               const GpuSpec& gpu) const {
    return ::fmte::Estimate(catalogs_, model, job, gpu);
  }

 private:
  Catalogs catalogs_;
};

}  // namespace fmte

#endif  // FMTE_ESTIMATOR_H_
