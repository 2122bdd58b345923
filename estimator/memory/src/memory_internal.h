// Private to the memory model (the reuse API is fmte/memory_prepared.h) (memory*.cc, layout.cc):
// the quantities derived once per estimate (layout, dtypes, LoRA targets) and the per-concern
// pieces EstimateMemory composes. All byte arithmetic is in double (no int64 overflow for absurd
// inputs) and saturated to int64 only at the end (Saturate). Thread-safety: plain values, no shared
// state.
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
#include "fmte/memory_prepared.h"
#include "fmte/model.h"
#include "fmte/status.h"

namespace fmte::memory {

// Clamps a byte count to [0, INT64_MAX]; NaN becomes 0.
int64_t Saturate(double bytes);

bool IsFsdp(Sharding s);  // fsdp-full | fsdp-grad-op | fsdp-hybrid | fsdp-no-shard
bool IsPeft(Method m);    // everything but full: the base model is frozen

// Which linears carry LoRA adapters: the shared rule (fmte/lora.h).
using ::fmte::LoraTargets;
using ::fmte::ResolveLoraTargets;

// Bytes per element of every kind of state, decided once from precision, framework and method
// (docs/formulas.md §2; per-framework sources in memory_states.cc).
struct Dtypes {
  double act = 2;          // saved activations
  double base_weight = 2;  // frozen (PEFT base) non-quantised weights
  double param = 2;        // trainable parameters' persistent copy on the GPU
  double grad = 2;         // their gradients
  double master = 0;       // fp32 master copy kept by the optimizer (0: the param is fp32)
  double state = 4;        // one optimizer state element
  double gather = 2;       // FSDP/ZeRO-3 gathered (unsharded) weights while a unit runs
  bool autocast = false;   // amp-*: 16-bit casts of fp32 weights live for backward
  // PEFT modules_to_save copies (StageParams::saved_modules) train as full fine-tuning would in
  // this precision: PEFT upcasts only its adapters (param/grad/state/master above are theirs).
  double copy_param = 2, copy_grad = 2, copy_state = 4, copy_master = 0;
};
Dtypes ChooseDtypes(const TrainingJob& j);

// The layout numbers every piece needs.
struct Layout {
  // d: the ranks holding the same weights, data x context parallel (gpus / (t * p)); c: the
  // context-parallel ranks among them, over which each sequence is split.
  int64_t t = 1, p = 1, d = 1, v = 1, c = 1;
  int64_t e = 1;      // expert-parallel ranks (routed experts split over e of the d ranks)
  int64_t et = 1;     // the routed experts' tensor-parallel split (t unless set)
  int64_t shard = 1;  // ranks one copy of the sharded state is split over
  int64_t gpus_per_node = 1, nodes = 1;
  int64_t micro_batches = 1;  // per optimizer step per pipeline (grad_accum)
  bool megatron = false;      // Megatron's pipeline split (PipelineStageLayers)
};
Layout MakeLayout(const TrainingJob& j);
// The same with the given tensor/pipeline/virtual degrees instead of the job's (TrainableParams
// counts the whole model on one GPU: MakeLayout(j, 1, 1, 1)).
Layout MakeLayout(const TrainingJob& j, int64_t tp, int64_t pp, int64_t vpp);

// PipelineStageLayers (fmte/memory.h) into `out`, reusing its buffer; `megatron` with `vpp` chunks
// per stage: Megatron's split (PipelineStageLayers(num_layers, job)).
void PipelineStageLayers(int64_t num_layers, int64_t pp, std::vector<int>* out,
                         bool megatron = false, int64_t vpp = 1);

// ValidateLayout (fmte/memory.h) with the model's layers already counted (`all_layers`:
// KindUses(m, 0, LayerCount(m))), so that a layer of an unknown kind is found without another pass,
// and the job's LoRA targets already resolved (ResolveLoraTargets(model, job)).
Status ValidateLayout(const ModelArch& model, const TrainingJob& job, const KindUses& all_layers,
                      const LoraTargets& targets);

// `uses`: the stage's layers per block kind; `num_layers`: how many layers the stage holds.
StageParams CountStageParams(const ModelArch& m, const TrainingJob& j, const Layout& lay,
                             const LoraTargets& targets, const KindUses& uses, int stage,
                             int num_layers);

// Model-state bytes of one stage on one GPU (memory_states.cc).
struct ModelStates {
  double weights = 0;  // persistent weights on the GPU (sharded where sharding shards them)
  double quant_consts = 0;
  double grads = 0;        // all gradients of the step (sharded where sharded)
  double first_grads = 0;  // gradients alive early in backward
  // Gradients alive while later micro-batches of a step run (gradient accumulation, pipelining):
  // `grads`, or the unsharded gradients an FSDP job accumulates without synchronising.
  double accum_grads = 0;
  double optimizer = 0;     // optimizer states + fp32 master on the GPU
  double lazy_states = 0;   // the part of `optimizer` allocated only in the first optimizer step
  double step_temp = 0;     // temporaries of the optimizer step (foreach AdamW)
  double cpu = 0;           // host bytes of this GPU's offloaded state
  double host_weights = 0;  // of them, the weights offloaded with offload_params
};
// A checkpoint save that gathers the full state on rank 0 (TrainingJob::SavesFullStateDict):
// what it adds on each GPU while it gathers one unit, and the host memory of rank 0's node for the
// gathered state (memory_states.cc). Zero for a job that saves sharded.
struct CheckpointSave {
  double gpu = 0;
  double host = 0;
};
CheckpointSave ComputeCheckpointSave(const TrainingJob& j, const Dtypes& dt, const StageParams& sp);
// The stage's weights gathered whole in 16 bits under ZeRO-3 (deepspeed.zero.GatheredParameters
// over every parameter; 4-bit base weights stay packed): a full state dict's, or a generation's.
double ZeroGatheredModelBytes(const Dtypes& dt, const StageParams& sp);

ModelStates ComputeModelStates(const ModelArch& m, const TrainingJob& j, const Layout& lay,
                               const Dtypes& dt, const StageParams& sp);

// The bytes PEFT's LoRA module moves per token outside its two products (peft/tuners/lora/
// layer.py Linear.forward, 0.7-0.21: x = _cast_input_dtype(x, lora_A.weight.dtype); result =
// result + lora_B(lora_A(dropout(x))) * scaling; result = result.to(torch_result_dtype)), as
// separate eager kernels, each reading its inputs and writing its output once. The adapters are
// fp32 (get_peft_model's autocast_adapter_dtype=True upcasts them over a 16-bit model);
// `in_bytes` and `result_bytes` are the element sizes of the module's input and of the base
// layer's output; under autocast the products run in 16 bits (autocast casts x again, and their
// output, the scaling and the sum stay 16-bit), otherwise in fp32, the sum promoted to fp32 and
// cast back to a 16-bit result. The backward runs each cast, the scaling and the dropout mask
// again on the gradients and adds x's gradient to the base layer's (read two, write one). `in`,
// `out`: the module's features.
struct PeftChain {
  double forward = 0, backward = 0;
};
PeftChain PeftChainBytes(double in_bytes, double result_bytes, bool autocast, bool dropout,
                         double in, double out);

// Bytes per token of the distinct input tensors of a block's linears (the ones that share an input,
// q/k/v or gate/up, read one tensor), in the activations' dtype, whole (before tensor parallelism);
// a routed expert's input counted once per expert a token goes to.
double LinearInputBytesPerToken(const BlockSpec& block, const Dtypes& dt);

// Activations saved for backward by one layer of kind `block` for one micro-batch on one GPU
// (memory_activations.cc). `kept`, when given, receives the part of them that the layer keeps
// alive without its kernels writing it for backward: the rest of a fused output that a saved view
// holds, SDPA's converted mask (LayerWrittenActivationBytes leaves it out). `peft`, when given,
// receives PEFT's adapters' own part (fmte/memory.h PeftAdapterBytes).
double LayerActivations(const ModelArch& m, const TrainingJob& j, const Layout& lay,
                        const Dtypes& dt, const LoraTargets& targets, const BlockSpec& block,
                        bool checkpointed, double* kept = nullptr,
                        PeftAdapterBytes* peft = nullptr);

StageActivations ComputeStageActivations(const ModelArch& m, const TrainingJob& j,
                                         const Layout& lay, const Dtypes& dt,
                                         const LoraTargets& targets, const KindUses& uses,
                                         int stage);

// litgpt's training loops run the output layer on chunks of this many positions
// (model(input_ids, lm_head_chunk_size=128) in finetune/lora.py, adapter.py, adapter_v2.py) and
// take chunked_cross_entropy over 128-token chunks (litgpt/utils.py).
inline constexpr double kLitgptHeadChunk = 128;

// What one LoRA adapter saves per token for its backward when nothing else keeps its input (a
// PEFT-style module's own copy of it, or the output head's), `in` its input features
// (memory_activations.cc).
double AdapterSavedBytes(const TrainingJob& j, const Dtypes& dt, double in);

// What a trained copy of the head (PEFT modules_to_save, `head_params` on this GPU) keeps for its
// backward over `tokens` tokens (memory_activations.cc).
double HeadCopySavedBytes(const TrainingJob& j, const Dtypes& dt, double tokens, double h,
                          double head_params);

// Logits and loss at their peak on the last stage, with a LoRA adapter's saved tensors when the
// head carries one (memory_logits.cc).
double LogitsBytes(const ModelArch& m, const TrainingJob& j, const Layout& lay, const Dtypes& dt,
                   const StageParams& last_stage);

// An evaluation forward (no_grad) of j.eval_batch sequences: the most one layer of the stage has
// alive at once (memory_activations.cc; nothing is saved for backward) and, on the last stage, the
// logits and the loss (memory_logits.cc).
double EvalLayerBytes(const ModelArch& m, const TrainingJob& j, const Layout& lay, const Dtypes& dt,
                      const KindUses& uses);
double EvalLogitsBytes(const ModelArch& m, const TrainingJob& j, const Layout& lay,
                       const Dtypes& dt);
// model.generate's KV cache for TrainingJob::generation_batch sequences on the stage whose layers
// `uses` counts (memory_activations.cc); 0 without a generation batch.
double GenerationKvCacheBytes(const ModelArch& m, const TrainingJob& j, const Layout& lay,
                              const Dtypes& dt, const KindUses& uses);

// Framework buffers present at the peak (memory_overheads.cc).
struct Buffers {
  double persistent = 0;  // DDP buckets, ZeRO reduce buckets
  double forward = 0;     // gathered weights / autocast casts alive at the forward-backward turn
  double backward = 0;    // unsharded gradients of the running unit
  double eval = 0;        // gathered weights / cached autocast casts during an evaluation forward
};
Buffers ComputeBuffers(const ModelArch& m, const TrainingJob& j, const Layout& lay,
                       const Dtypes& dt, const StageParams& sp);
double CudaContextBytes(const TrainingJob& j, const Layout& lay);
double FragmentationBytes(double allocated_bytes);

// How far measured peaks have been from fmte's prediction of the same statistic: measured /
// predicted was between `low` and `high` on every published run fmte estimates
// (scripts/eval-memory.py --calibrate; docs/memory.md "The bound").
struct BoundFactors {
  double low, high;
};
BoundFactors MeasuredBoundFactors();

// Pipeline in-flight micro-batches (per layer chunk) on `stage` (1F1B, interleaved).
double InFlightLayerFactor(const Layout& lay, int stage);

}  // namespace fmte::memory

#endif  // FMTE_SRC_MEMORY_INTERNAL_H_
