// vTrain measured step times (VIA-Research/vTrain data/ground_truth_*.csv, MIT): importer, the jobs
// they describe, and the training of the step-time model's learned parts from them:
//   1. the analytic model's efficiency constants (TimeEfficiency), fitted by Levenberg-Marquardt on
//      log(predicted / measured);
//   2. a boosted-tree correction of log(measured / analytic) on StepTimeFeatures (XGBoost, xgb.h).
// Both are validated by grouped k-fold cross-validation over held-out configurations (every fold
// refits both parts on its training rows only). docs/time.md reports the numbers.
// Thread-safety: pure functions.
#ifndef FMTE_LEARN_VTRAIN_H_
#define FMTE_LEARN_VTRAIN_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/cluster.h"
#include "fmte/gpu.h"
#include "fmte/job.h"
#include "fmte/model.h"
#include "fmte/status.h"
#include "fmte/time.h"

namespace fmte::learn {

struct VtrainRow {
  int64_t gpus = 0, global_batch = 0, micro_batch = 0, hidden = 0, heads = 0, layers = 0;
  int64_t seq_len = 0, tp = 0, dp = 0, pp = 0;
  double iteration_s = 0;  // measured, seconds (the CSV has ms)
};

// Parses the CSV (header "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,
// sequence length,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)").
// Errors name the line and the column.
Result<std::vector<VtrainRow>> ParseVtrainCsv(std::string_view text, std::string_view origin);

// The GPT model Megatron-DeepSpeed trains in these runs: h, heads, layers from the row; GPT-2
// vocabulary 50257 padded by Megatron to a multiple of 128 x tp; learned positions; tied head.
ModelArch VtrainGptArch(const VtrainRow& row);
// The job: Megatron, mixed fp16, full activation checkpointing (vTrain configs: use_checkpoint),
// Megatron's fused (non-flash) softmax = eager attention, 1F1B, m = B / (b x dp).
TrainingJob VtrainJob(const VtrainRow& row, const std::string& gpu_name);
// One 8-GPU DGX-A100-like node (vTrain: node_size 8).
ClusterSpec VtrainCluster();

// Group id of a row for cross-validation.
enum class VtrainGrouping { kConfig /* (layers, tp, pp, dp) */, kLayout /* (tp, pp, dp) */ };
std::vector<int64_t> VtrainGroups(const std::vector<VtrainRow>& rows, VtrainGrouping grouping);

// Fits the efficiency constants on `rows` (all of them) starting from `init`.
// The fit minimises the squared log ratio predicted/measured.
Result<TimeEfficiency> FitEfficiency(const std::vector<VtrainRow>& rows, const GpuSpec& gpu,
                                     const TimeEfficiency& init);

struct VtrainCvReport {
  int folds = 0;
  int64_t rows = 0, groups = 0;
  double analytic_mape = 0;   // held-out, analytic model with constants fitted on the other folds
  double corrected_mape = 0;  // held-out, analytic + correction (both fitted on the other folds)
  double analytic_p90_ape = 0, corrected_p90_ape = 0;
  double analytic_max_ape = 0, corrected_max_ape = 0;
  std::vector<double> heldout_log_residuals;  // log(measured / corrected), one per row
  std::vector<double> heldout_analytic_log_residuals;
};

struct VtrainTrainOptions {
  int folds = 6;
  uint64_t seed = 1234;
  VtrainGrouping grouping = VtrainGrouping::kConfig;
  int xgb_rounds = 200;
  int xgb_depth = 3;
  double xgb_eta = 0.05;
  bool correction = true;
  // GEMM curves (gemm.json, learn/gemm_fit.h) giving the analytic model its width-dependent GEMM
  // efficiency: "" = <out_dir>/gemm.json when training into a directory that has one, else
  // TimeModel::DefaultDir()/gemm.json when present; "none" = one flat efficiency (no shape
  // dependence).
  std::string gemm_curves;
  // With a curve: fit its large-matrix efficiency on these rows too (true), or keep the
  // operator-measured one and fit only the other constants (false).
  bool fit_gemm_efficiency = false;
};

// Grouped k-fold CV of the whole pipeline (fit constants + correction on k-1 folds, predict the
// held-out fold).
Result<VtrainCvReport> CrossValidateVtrain(const std::vector<VtrainRow>& rows, const GpuSpec& gpu,
                                           const VtrainTrainOptions& options);

// Fits on all rows and writes `out_dir`/efficiency.json, correction.json and manifest.json (with
// the cross-validation report and `provenance`). Files are written to temporaries and renamed.
Status TrainVtrainModel(const std::vector<VtrainRow>& rows, const GpuSpec& gpu,
                        const VtrainTrainOptions& options, const std::string& provenance,
                        const std::string& out_dir, VtrainCvReport* report);

}  // namespace fmte::learn

#endif  // FMTE_LEARN_VTRAIN_H_
