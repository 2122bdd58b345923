// Private to the memory model (memory*.cc, layout.cc): the quantities derived once per estimate
// (layout, dtypes, LoRA targets) and the per-concern pieces EstimateMemory composes.
// All byte arithmetic is in double (no int64 overflow for absurd inputs) and saturated to int64
// only at the end (Saturate). Thread-safety: plain values, no shared state.
#ifndef FMTE_SRC_MEMORY_INTERNAL_H_
#define FMTE_SRC_MEMORY_INTERNAL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "fmte/gpu.h"
#include "fmte/job.h"
#include "fmte/lora.h"
#include "fmte/memory.h"
#include "fmte/model.h"
#include "fmte/status.h"

namespace fmte::memory_internal {

// Clamps a byte count to [0, INT64_MAX]; NaN becomes 0.
int64_t Saturate(double bytes);

bool IsFsdp(Sharding s);  // fsdp-full | fsdp-grad-op | fsdp-hybrid | fsdp-no-shard
bool IsPeft(Method m);    // everything but full: the base model is frozen

// Which linears carry LoRA adapters: the shared rule (fmte/lora.h).
using ::fmte::LoraTargets;
using ::fmte::ResolveLoraTargets;

// Bytes per element of every kind of state, decided once from precision, framework and method
// (reference.md section 2; per-framework sources in memory_states.cc).
struct Dtypes {
  double act = 2;          // saved activations
  double base_weight = 2;  // frozen (PEFT base) non-quantised weights
  double param = 2;        // trainable parameters' persistent copy on the GPU
  double grad = 2;         // their gradients
  double master = 0;       // fp32 master copy kept by the optimizer (0: the param is fp32)
  double state = 4;        // one optimizer state element
  double gather = 2;       // FSDP/ZeRO-3 gathered (unsharded) weights while a unit runs
  bool autocast = false;   // amp-*: 16-bit casts of fp32 weights live for backward
};
Dtypes ChooseDtypes(const TrainingJob& j);

// The layout numbers every piece needs.
struct Layout {
  int64_t t = 1, p = 1, d = 1, v = 1;
  int64_t shard = 1;  // ranks one copy of the sharded state is split over
  int64_t gpus_per_node = 1, nodes = 1;
  int64_t micro_batches = 1;  // per optimizer step per pipeline (grad_accum)
};
Layout MakeLayout(const TrainingJob& j);
// The same with the given tensor/pipeline/virtual degrees instead of the job's (TrainableParams
// counts the whole model on one GPU: MakeLayout(j, 1, 1, 1)).
Layout MakeLayout(const TrainingJob& j, int64_t tp, int64_t pp, int64_t vpp);

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

// EstimateMemory (fmte/memory.h) of a prepared model, written into `out`. Every field is written
// (on success) and the vector and string reuse their buffers, so a caller estimating many jobs in a
// row with one MemoryEstimate (the policy's searches) allocates nothing per estimate.
// `stage_params`, when given, are CountPipelineParams of a job that differs from `job` at most in
// what the parameter counts do not read (see there); `stage_activations`, when given,
// CountPipelineActivations of a job that differs at most in what the activations do not read.
// They are then not computed again.
struct StageParams;
struct StageActivations;
Status EstimateMemory(const PreparedModel& model, const TrainingJob& job, const GpuSpec& gpu,
                      MemoryEstimate* out, const std::vector<StageParams>* stage_params = nullptr,
                      const std::vector<StageActivations>* stage_activations = nullptr);

// PipelineStageLayers (fmte/memory.h) into `out`, reusing its buffer.
void PipelineStageLayers(int64_t num_layers, int64_t pp, std::vector<int>* out);

// ValidateLayout (fmte/memory.h) with the model's layers already counted (`all_layers`:
// KindUses(m, 0, LayerCount(m))), so that a layer of an unknown kind is found without another pass,
// and the job's LoRA targets already resolved (ResolveLoraTargets(model, job)).
Status ValidateLayout(const ModelArch& model, const TrainingJob& job, const KindUses& all_layers,
                      const LoraTargets& targets);

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
  double first_grads = 0;     // trainable params whose gradients appear first in backward
};
// `uses`: the stage's layers per block kind; `num_layers`: how many layers the stage holds.
StageParams CountStageParams(const ModelArch& m, const TrainingJob& j, const Layout& lay,
                             const LoraTargets& targets, const KindUses& uses, int stage,
                             int num_layers);

// CountStageParams of every pipeline stage of `job`. They read the model, the job's method,
// LoRA rank and targets, virtual tokens, framework, tp and pp; not its GPU count or GPU model,
// sharding, offload, batch, sequence or checkpointing. A search over those (the policy's
// alternatives and GPU-count search) counts them once. REQUIRES: job valid (ValidateJob and
// ValidateLayout ok).
std::vector<StageParams> CountPipelineParams(const PreparedModel& model, const TrainingJob& job);
// Whether CountPipelineParams gives the same for `a` and `b` (of one model): they agree in every
// field it reads.
bool SameParamCounts(const TrainingJob& a, const TrainingJob& b);

// Model-state bytes of one stage on one GPU (memory_states.cc).
struct ModelStates {
  double weights = 0;  // persistent weights on the GPU (sharded where sharding shards them)
  double quant_consts = 0;
  double grads = 0;        // all gradients of the step (sharded where sharded)
  double first_grads = 0;  // gradients alive early in backward
  double optimizer = 0;    // optimizer states + fp32 master on the GPU
  double step_temp = 0;    // temporaries of the optimizer step (foreach AdamW)
  double cpu = 0;          // host bytes of this GPU's offloaded state
};
ModelStates ComputeModelStates(const ModelArch& m, const TrainingJob& j, const Layout& lay,
                               const Dtypes& dt, const StageParams& sp);

// Activations saved for backward by one layer of kind `block` for one micro-batch on one GPU
// (memory_activations.cc). `recompute_working` returns the same layer without checkpointing.
double LayerActivations(const ModelArch& m, const TrainingJob& j, const Layout& lay,
                        const Dtypes& dt, const LoraTargets& targets, const BlockSpec& block,
                        bool checkpointed);

// Activations of one stage on one GPU at the peak (in-flight micro-batches included), and the
// host bytes moved there by activation offloading.
struct StageActivations {
  double gpu = 0;
  double cpu = 0;
};
StageActivations ComputeStageActivations(const ModelArch& m, const TrainingJob& j,
                                         const Layout& lay, const Dtypes& dt,
                                         const LoraTargets& targets, const KindUses& uses,
                                         int stage);

// ComputeStageActivations of every pipeline stage of `job`. They read the model, the job's
// micro-batch, sequence, method, adapters, precision, framework, attention, checkpointing,
// compile, activation offload, tp/sp, pp, vpp and (with pp > 1) gradient accumulation; not its
// GPU count or GPUs per node, sharding or model-state offload. REQUIRES: job valid.
std::vector<StageActivations> CountPipelineActivations(const PreparedModel& model,
                                                       const TrainingJob& job);

// Logits and loss at their peak on the last stage (memory_logits.cc).
double LogitsBytes(const ModelArch& m, const TrainingJob& j, const Layout& lay, const Dtypes& dt,
                   const StageParams& last_stage);

// Framework buffers present at the peak (memory_overheads.cc).
struct Buffers {
  double persistent = 0;  // DDP buckets, ZeRO reduce buckets
  double forward = 0;     // gathered weights / autocast casts alive at the forward-backward turn
  double backward = 0;    // unsharded gradients of the running unit
};
Buffers ComputeBuffers(const ModelArch& m, const TrainingJob& j, const Layout& lay,
                       const Dtypes& dt, const StageParams& sp);
double CudaContextBytes(const TrainingJob& j, const Layout& lay);
double FragmentationBytes(double allocated_bytes);

// Pipeline in-flight micro-batches (per layer chunk) on `stage` (1F1B, interleaved).
double InFlightLayerFactor(const Layout& lay, int stage);

}  // namespace fmte::memory_internal

#endif  // FMTE_SRC_MEMORY_INTERNAL_H_
