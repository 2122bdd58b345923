// Operator-level step time (the "Distributed Training Estimator" seed, docs/formulas.md §5):
// one regressor per operator (forward / backward) and per collective (nodes, GPUs per node),
// composed into the batch time of a Megatron-style 3D-parallel job with 1F1B pipelining:
//   (m - 1 + p) * (max stage fwd + max stage bwd) + DP all-reduce + max(DP all-gather + optimizer).
//
// Regressors are XGBoost JSON models evaluated natively (tree_model.h). Each predicts
// log(time_us / work) from log-scale shape features, where `work` is an analytic quantity (FLOPs
// of a GEMM or attention, elements of an element-wise kernel, bytes of a message); the prediction
// is exp(.) * work, so outside the sampled shapes it extrapolates as "same efficiency", not as a
// constant time. OperatorFeatures() is the single definition used to train and to predict.
// Thread-safety: OperatorModels is immutable after Load; all functions are pure.
#ifndef FMTE_OPERATOR_TIME_H_
#define FMTE_OPERATOR_TIME_H_

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/job.h"
#include "fmte/model.h"
#include "fmte/status.h"
#include "fmte/tree_model.h"

namespace fmte {

// The shapes one operator call sees on one GPU. Defaults follow the seed's sampling conventions
// (GPT-NeoX layer: QKV 3h, MLP 4h, vocabulary 50257 padded to 128 x tp).
struct OperatorConfig {
  double tp = 1;           // tensor (model) parallel degree, "mp"
  double micro_batch = 1;  // b
  double heads = 1;        // h
  double seq_len = 1;      // l
  double hidden = 1;       // dim
  double ffn = 0;          // MLP intermediate width; 0 = 4 * hidden
  bool gated_mlp = false;  // SwiGLU: the first MLP linear outputs 2 * ffn
  double qkv_out = 0;      // fused QKV output width; 0 = 3 * hidden
  double vocab = 50257;    // the seed hard-codes GPT-2's vocabulary
  double layers = 0;       // transformer layers on the stage (optimizer regressors)
  double params = 0;       // parameters on the GPU (optimizer regressors); 0 = seed's count

  double Ffn() const { return ffn > 0 ? ffn : 4 * hidden; }
  double QkvOut() const { return qkv_out > 0 ? qkv_out : 3 * hidden; }
  // Megatron pads the vocabulary to a multiple of 128 x tp: ceil(V / (128 tp)) * 128 per GPU.
  double VocabPartition() const;
};

constexpr int kMaxOperatorFeatures = 6;

// Feature values (log2 of shapes) and the analytic work of operator `op` under `c`.
// Returns the number of features written; NotFound for an unknown operator (the message lists the
// known ones). `stage` selects the optimizer's parameter count: "firstStage_optimizer" (embedding
// + layers), "middleStage_optimizer", "lastStage_optimizer" (layers + final norm + head).
Result<int> OperatorFeatures(std::string_view op, const OperatorConfig& c,
                             std::span<float, kMaxOperatorFeatures> features, double* work);
// Names of the features OperatorFeatures writes for `op` (for manifests); empty when unknown.
std::vector<std::string> OperatorFeatureNames(std::string_view op);
// The operators OperatorFeatures knows, and whether each has fwd/bwd (else one "dur" regressor).
const std::vector<std::string>& KnownOperators();
bool OperatorHasPasses(std::string_view op);

// Collectives: features are log2(elements) (per (nodes, gpus_per_node) regressor) or
// log2(elements), nodes, gpus_per_node, log2(ranks) (the pooled fallback "<collective>_any").
// Work = elements (fp16, 2 bytes each).
int CollectiveFeatures(double elements, int64_t nodes, int64_t gpus_per_node, bool pooled,
                       std::span<float, kMaxOperatorFeatures> features, double* work);

enum class Pass { kFwd, kBwd, kDur };  // kDur: single-pass operators (optimizer step)
std::string_view ToString(Pass p);

// What the composition asks for. Implemented by OperatorModels and by tests that replay the seed's
// own per-operator predictions.
class OperatorPredictor {
 public:
  virtual ~OperatorPredictor() = default;
  virtual Result<double> OperatorUs(std::string_view op, Pass pass,
                                    const OperatorConfig& c) const = 0;
  // `collective`: "allreduce", "allreduce_large", "allgather_large", "p2p".
  virtual Result<double> CollectiveUs(std::string_view collective, int64_t nodes,
                                      int64_t gpus_per_node, double elements) const = 0;
};

// The regressors of one cluster: regressors/<cluster>/manifest.json and the models it lists.
class OperatorModels : public OperatorPredictor {
 public:
  // Reads manifest.json in `dir` and every model it lists, once.
  static Result<OperatorModels> Load(const std::string& dir);
  // FMTE_REGRESSORS_DIR/<cluster> (or $FMTE_REGRESSORS_DIR/<cluster>).
  static std::string DefaultDir(std::string_view cluster);
  // Where the set called `name` is: `site_dir`/NAME (a set a site sampled with fmte-sample and
  // trained with fmte-retrain train --kind operators --cluster NAME --into site_dir), else the
  // installed regressors' NAME, the shipped Perlmutter and Vista also by their lower-case names;
  // the first holding manifest.json. Empty: none.
  static std::string FindDir(std::string_view name, const std::string& site_dir);

  Result<double> OperatorUs(std::string_view op, Pass pass, const OperatorConfig& c) const override;
  Result<double> CollectiveUs(std::string_view collective, int64_t nodes, int64_t gpus_per_node,
                              double elements) const override;

  const std::string& cluster() const { return cluster_; }
  const std::string& gpu() const { return gpu_; }
  size_t size() const { return models_.size(); }

 private:
  std::string cluster_;
  std::string gpu_;
  // Key: "<op>_<fwd|bwd|dur>" or "<collective>_<nodes>_<gpn>" or "<collective>_any".
  std::map<std::string, TreeModel, std::less<>> models_;
};

// The seed's training configuration (target_config/*.yml).
struct PipelineConfig {
  int64_t pp = 1, tp = 1, dp = 1;
  int64_t micro_batch = 1;    // b
  int64_t heads = 1;          // h
  int64_t seq_len = 1;        // l
  int64_t hidden = 1;         // dim
  int64_t micro_batches = 1;  // steps_per_update (m)
  int64_t gpus_per_node = 1;
  int64_t encoders = 1;                            // transformer layers
  double comm_bucket = 1.26e9;                     // DP gradient bucket, elements
  std::vector<std::string> function_list;          // operators sampled (informational)
  std::vector<std::string> encoder_function_list;  // operators of one layer, in order
  std::string layernorm_name = "RMSlayernorm";
  int64_t fwd_syncs = 2, bwd_syncs = 2;  // TP all-reduces per layer
  std::string gpu_name;                  // informational
  // Beyond the seed (defaults reproduce it).
  double ffn = 0, qkv_out = 0, vocab = 50257;
  bool gated_mlp = false;
  bool seed_partition = true;  // the seed's stage split (embedding ~2 layers, head ~3 layers)
  bool recompute = true;       // full activation recomputation: backward re-runs the forward
};

// Parses the seed's YAML-like config (a Python-dict literal with '#' comments and single-quoted
// lists) or the same fields as JSON. Errors name the field.
Result<PipelineConfig> ParsePipelineConfig(std::string_view text);

struct OperatorTimeEstimate {
  double batch_us = 0;                 // one optimizer step
  double encoder_fwd_us = 0;           // one layer, one micro-batch (incl. TP all-reduces)
  double encoder_bwd_us = 0;           // incl. the recomputed forward
  int64_t layers[3] = {0, 0, 0};       // first / middle / last stage
  double stage_fwd_us[3] = {0, 0, 0};  // per micro-batch, without p2p
  double stage_bwd_us[3] = {0, 0, 0};
  double pp_p2p_us = 0, tp_allreduce_us = 0;
  double dp_allreduce_us[3] = {0, 0, 0}, dp_allgather_us[3] = {0, 0, 0},
         optimizer_us[3] = {0, 0, 0};
  // Breakdown of batch_us, in seconds (time.h's names).
  double compute_s = 0, communication_s = 0, bubble_s = 0, optimizer_s = 0;
  // Every regressor call as (name, microseconds), like the seed's results CSV.
  std::vector<std::pair<std::string, double>> trace;
};

// The seed's composition (Estimator/mml_3d_prediction.py): per-layer sums, stage sums, 1F1B batch.
Result<OperatorTimeEstimate> ComposeBatchTime(const PipelineConfig& config,
                                              const OperatorPredictor& predictor);

// The same for a job on a cluster with shipped regressors: the layout and shapes come from the
// architecture (real FFN width, QKV width with grouped-query attention, vocabulary, norm kind) and
// the job (tp, pp, dp, micro-batch, gradient accumulation as m, GPUs per node).
Result<PipelineConfig> PipelineConfigFor(const ModelArch& model, const TrainingJob& job);
Result<OperatorTimeEstimate> EstimateStepTimeFromOperators(const ModelArch& model,
                                                           const TrainingJob& job,
                                                           const OperatorModels& models);

}  // namespace fmte

#endif  // FMTE_OPERATOR_TIME_H_
