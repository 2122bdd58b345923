// The per-GPU memory model: peak device memory of one training job on its busiest GPU, with a
// breakdown, and the host memory per node that CPU offload needs.
//
// Pure function of (ModelArch, TrainingJob, GpuSpec): no I/O, no allocation-heavy work, cheap
// enough for a layout search (target: one estimate < 5 us, bench/memory_bench.cc).
// Every formula's comment in src/memory*.cc names its source (docs/formulas.md sections).
#ifndef FMTE_MEMORY_H_
#define FMTE_MEMORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "fmte/gpu.h"
#include "fmte/job.h"
#include "fmte/model.h"
#include "fmte/status.h"

namespace fmte {

// Bytes per GPU. Sums to allocator_peak_bytes (other includes allocator fragmentation);
// per_gpu_bytes adds the CUDA context and NCCL buffers.
struct MemoryBreakdown {
  int64_t weights = 0;
  int64_t gradients = 0;
  int64_t optimizer = 0;
  int64_t activations = 0;
  int64_t logits = 0;     // logits + loss (fp32 upcast) + their gradients at the peak
  int64_t other = 0;      // framework buffers (DDP buckets, FSDP gathered units, quant constants,
                          // allocator fragmentation)
  int64_t reference = 0;  // a frozen reference model (TrainingJob::KeepsReferenceModel)
  int64_t critic = 0;     // an online job's value model, resident (TrainingJob::critic)
  // A colocated inference engine's share of the GPU (TrainingJob::generation_memory) where it is
  // held at the peak: in every phase unless it sleeps, then in the generation phase only.
  int64_t generation = 0;
};

// One phase of a training step on the busiest GPU: its name and the device memory it needs
// (allocator-level bytes plus fragmentation and the CUDA context, as per_gpu_bytes).
struct MemoryPhase {
  // "forward-backward" | "end-of-backward" | "optimizer-step" | "first-forward-backward" (the
  // first step's, before the optimizer has allocated its states) | "evaluation" (a no_grad forward
  // of TrainingJob::eval_batch sequences; only for a job that evaluates) | "checkpoint-save" (a
  // save that gathers the full state on rank 0; only for TrainingJob::SavesFullStateDict) |
  // "weight-sync" (an online job's weights gathered whole under ZeRO-3 to sync them into its
  // engine: TrainingJob::generation_gathers with generation_memory) | "generation" (a colocated
  // inference engine that sleeps while the policy trains, awake beside the resident states; or
  // the trainer's own model generating, TrainingJob::generation_batch, gathered under ZeRO-3, with
  // its KV cache)
  const char* name = "";
  int64_t per_gpu_bytes = 0;
  int64_t allocated_bytes = 0;  // by tensors (max_memory_allocated), no fragmentation or context
  // Host memory of one node the phase needs beyond offloaded state: rank 0's node at a
  // checkpoint-save that gathers the full model and optimizer state there.
  int64_t host_bytes = 0;
};

// One kind of rank: a pipeline stage (the first holds the embedding, the last the output layer and
// the loss) with its own total and breakdown.
struct MemoryRank {
  int stage = 0;
  int layers = 0;
  bool embedding = false, head = false;
  int64_t per_gpu_bytes = 0;
  MemoryBreakdown breakdown;
  const char* peak_phase = "";
};

struct MemoryEstimate {
  ParamCounts params;
  int64_t trainable_params = 0;

  int64_t per_gpu_bytes = 0;         // everything the busiest GPU needs: what must fit
  int64_t allocator_peak_bytes = 0;  // the same without CUDA context / NCCL: max_memory_reserved()
  int64_t allocated_peak_bytes = 0;  // the same without allocator fragmentation:
                                     // max_memory_allocated()
  int64_t cuda_context_bytes = 0;    // per_gpu_bytes - allocator_peak_bytes
  int64_t gpu_capacity_bytes = 0;
  bool fits = false;  // per_gpu_bytes <= gpu_capacity_bytes
  // The range of the real peak, from how far published measured peaks have been from fmte's
  // predictions (docs/memory.md "The bound"): bound_bytes = per_gpu_bytes x the highest measured /
  // predicted seen (never under on those runs); low_bytes = allocated_peak_bytes x the lowest (a
  // job whose low_bytes exceeds the GPU cannot run: the policy rejects only then).
  int64_t bound_bytes = 0;
  int64_t low_bytes = 0;
  int64_t cpu_bytes_per_node = 0;  // host memory for offloaded state (0 without offload)
  MemoryBreakdown breakdown;

  // Pipeline: layers held by each stage (first/last also hold embedding/head) and the heaviest.
  std::vector<int> layers_per_stage;
  int heaviest_stage = 0;
  // Every pipeline stage (one entry without pipelining); per_gpu_bytes is the heaviest's.
  std::vector<MemoryRank> ranks;
  // The phases of a step on the heaviest stage; peak_phase names the largest.
  std::vector<MemoryPhase> phases;

  // When the peak happens: "forward-backward" (saved activations + logits + first gradients),
  // "end-of-backward" (all gradients), "optimizer-step" (step temporaries), "evaluation" (the
  // evaluation batch's logits and loss), "checkpoint-save" (a unit gathered for a full state
  // dict) or "generation" (a sleeping inference engine's share beside the resident states).
  std::string peak_phase;
};

// Checks the layout against the architecture: tp divides heads (and kv heads, or kv heads divide
// tp), pp <= layers, tp*pp*dp == gpus, sequence parallel needs tp > 1, vpp needs pp > 1 and
// layers divisible by pp*vpp, ... Errors say what is wrong and what would work.
Status ValidateLayout(const ModelArch& model, const TrainingJob& job);

// REQUIRES: ValidateJob(job).ok(). Runs ValidateLayout itself.
Result<MemoryEstimate> EstimateMemory(const ModelArch& model, const TrainingJob& job,
                                      const GpuSpec& gpu);

// Trainable parameters of the method (LoRA adapters, prompt/prefix embeddings, or all).
int64_t TrainableParams(const ModelArch& model, const TrainingJob& job);

// Bytes one transformer layer (`layer`, 0-based) saves for backward for one micro-batch on one GPU
// with the job's precision, attention, checkpointing, tp/sp and framework (Korthikanti et al. 2022
// Table 2 in its setting; re-derived per saved tensor otherwise, docs/formulas.md §4 and §4b).
// REQUIRES: ValidateJob(job).ok() and 0 <= layer < model.num_layers.
int64_t LayerActivationBytes(const ModelArch& model, const TrainingJob& job, int64_t layer);
// The part of LayerActivationBytes that the layer's own kernels write: without what it only keeps
// alive (the rest of a fused qkv output that a saved view of v holds, SDPA's converted mask). The
// time model's measure of a layer's memory-bound traffic (time_parts LayerWork::saved_bytes).
// What PEFT's LoRA modules (the adapters of the HF-like frameworks; litgpt, torchtune and
// Megatron have their own) save and move of their own per micro-batch on one GPU in a layer that
// is not checkpointed, beside the base layer's work: the time model's measure of their
// memory-bound kernels (memory_internal.h PeftChainBytes). All 0 for other jobs.
struct PeftAdapterBytes {
  double saved = 0;  // of the layer's written activation bytes: input copies, masks, r-wide outputs
  double forward = 0;   // bytes their elementwise kernels read and write in the forward
  double backward = 0;  // and in the backward (with the input gradient's accumulation)
};
int64_t LayerWrittenActivationBytes(const ModelArch& model, const TrainingJob& job, int64_t layer,
                                    PeftAdapterBytes* peft = nullptr);

// The bytes per element the memory model uses for `job`: its precision's, framework's and method's
// (docs/memory.md), or job.element_bytes where set. Every field is >= 0.
ElementBytes ElementBytesUsed(const TrainingJob& job);

// Transformer layers of each pipeline stage: an even split when pp divides the layers, otherwise
// DeepSpeed's partition_uniform (the first `layers % pp` stages hold one more layer).
// REQUIRES: 1 <= pp <= num_layers.
std::vector<int> PipelineStageLayers(int64_t num_layers, int64_t pp);
// The same for `job`'s pp: under Megatron, where pp x vpp does not divide the layers but does the
// layers + 2, the embedding and the loss take a layer's place each (Megatron's
// --account-for-embedding/loss-in-pipeline-split): the first and last stages hold one layer fewer.
std::vector<int> PipelineStageLayers(int64_t num_layers, const TrainingJob& job);

}  // namespace fmte

#endif  // FMTE_MEMORY_H_
