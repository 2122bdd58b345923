// The memory model's reuse API: a model prepared once and the per-stage counts that estimates
// of jobs differing only in what the counts do not read can share. Only the estimate component
// (fmte/estimator.h: PreparedEstimate) calls it; everyone else estimates through there.
// Thread-safety: plain values; PreparedModel holds a reference to its architecture.
#ifndef FMTE_MEMORY_PREPARED_H_
#define FMTE_MEMORY_PREPARED_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fmte/gpu.h"
#include "fmte/job.h"
#include "fmte/memory.h"
#include "fmte/model.h"
#include "fmte/status.h"

namespace fmte::memory {

// How many layers of each block kind (index into ModelArch::block_kinds) the layers
// [first_layer, first_layer + num_layers) hold; layers outside the model or with an unknown kind
// are not counted. Counted once per pipeline stage and shared by the parameter and activation
// counts. No heap allocation up to kInlineKinds kinds (the catalog's models have one or two).
class KindUses {
 public:
  KindUses(const ModelArch& m, int first_layer, int num_layers);
  size_t size() const { return size_; }
  int operator[](size_t kind) const { return data()[kind]; }
  std::span<const int> counts() const { return {data(), size_}; }
  int64_t counted() const { return counted_; }  // layers of a known kind in the range

 private:
  const int* data() const { return heap_.empty() ? inline_.data() : heap_.data(); }
  static constexpr size_t kInlineKinds = 4;
  size_t size_ = 0;
  int64_t counted_ = 0;
  std::array<int, kInlineKinds> inline_{};
  std::vector<int> heap_;  // only for models with more than kInlineKinds kinds
};

// All layers of the model, for KindUses (the count is an int; no model has 2^30 layers).
int LayerCount(const ModelArch& m);

// What a memory estimate needs of the model alone: its layers counted by block kind and its
// parameter counts. EstimateMemory prepares it for each call; a caller that estimates many jobs of
// one model (the policy's alternatives and GPU-count search) prepares it once. Holds a reference:
// `arch` must outlive it, unchanged (a catalog entry or a parsed const architecture).
struct PreparedModel {
  explicit PreparedModel(const ModelArch& m);
  const ModelArch& arch;
  KindUses all_layers;  // KindUses(arch, 0, LayerCount(arch))
  ParamCounts counts;   // arch.CountsWithLayers(all_layers.counts()): arch.Counts() once valid
};

// Parameters held by one pipeline stage on one GPU (after tensor parallel splitting).
struct StageParams {
  double total = 0;           // all parameters on this GPU before data-parallel sharding
  double frozen = 0;          // frozen, stored in Dtypes::base_weight (or fp32 for QLoRA non-quant)
  double quantized = 0;       // frozen, stored quantised (QLoRA base linears)
  double quant_rows = 0;      // output rows of quantised linears (int8 row scales)
  double trainable = 0;       // carry gradients and optimizer state
  double factored_state = 0;  // Adafactor state elements of the trainable tensors
  double small_trainable = 0;  // trainable tensors under 4096 elements (8-bit Adam keeps fp32)
  double linear = 0;           // parameters of linears (autocast casts them)
  double trainable_linear = 0;
  double largest_block = 0;   // one transformer block (an FSDP unit)
  double largest_module = 0;  // one module (DeepSpeed's "largest layer")
  double root = 0;            // embedding + head + final norm (FSDP root unit)
  double head = 0;            // the output layer (in `linear` and `root`)
  double head_adapter = 0;    // a LoRA adapter on the output layer (in `total`, `trainable`)
  // PEFT modules_to_save: the trained copies of the embeddings and the head (in `total`, not in
  // `trainable`: they keep the copied module's dtype, not the adapters'), and the head's of them.
  double saved_modules = 0;
  double saved_head = 0;
  double first_grads = 0;  // trainable params whose gradients appear first in backward
  // Routed-expert parameters on this GPU (1/ep of them under expert parallelism), included in
  // the counts above: with ep > 1 they are sharded over the expert-data-parallel group.
  double expert = 0;
  double expert_trainable = 0;
};

// Activations of one stage on one GPU at the peak (in-flight micro-batches included), and the
// host bytes moved there by activation offloading.
struct StageActivations {
  double gpu = 0;
  double cpu = 0;
  // Of `gpu`: the layer (or group of layers) that recomputation rebuilds while its backward runs.
  // It exists only once backward has reached the layers, after the loss backward.
  double rebuilt = 0;
};

// EstimateMemory (fmte/memory.h) of a prepared model, written into `out`. Every field is written
// (on success) and the vector and string reuse their buffers, so a caller estimating many jobs in a
// row with one MemoryEstimate (the policy's searches) allocates nothing per estimate.
// `stage_params`, when given, are CountPipelineParams of a job that differs from `job` at most in
// what the parameter counts do not read (see there); `stage_activations`, when given,
// CountPipelineActivations of a job that differs at most in what the activations do not read.
// They are then not computed again.
Status EstimateMemory(const PreparedModel& model, const TrainingJob& job, const GpuSpec& gpu,
                      MemoryEstimate* out, const std::vector<StageParams>* stage_params = nullptr,
                      const std::vector<StageActivations>* stage_activations = nullptr);

// CountStageParams of every pipeline stage of `job`. They read the model, the job's method,
// LoRA rank and targets, virtual tokens, framework, tp and pp; not its GPU count or GPU model,
// sharding, offload, batch, sequence or checkpointing. A search over those (the policy's
// alternatives and GPU-count search) counts them once. REQUIRES: job valid (ValidateJob and
// ValidateLayout ok).
std::vector<StageParams> CountPipelineParams(const PreparedModel& model, const TrainingJob& job);
// Whether CountPipelineParams gives the same for `a` and `b` (of one model): they agree in every
// field it reads.
bool SameParamCounts(const TrainingJob& a, const TrainingJob& b);

// ComputeStageActivations of every pipeline stage of `job`. They read the model, the job's
// micro-batch, sequence, method, adapters, precision, framework, attention, checkpointing,
// compile, activation offload, tp/sp, pp, vpp and (with pp > 1) gradient accumulation; not its
// GPU count or GPUs per node, sharding or model-state offload. REQUIRES: job valid.
std::vector<StageActivations> CountPipelineActivations(const PreparedModel& model,
                                                       const TrainingJob& job);

}  // namespace fmte::memory

#endif  // FMTE_MEMORY_PREPARED_H_
