// Private pieces of the step-time model (time.cc composes them): FLOPs per token from the
// architecture's shapes, collective times on a two-level network, optimizer bytes.
// Thread-safety: pure functions.
#ifndef FMTE_ESTIMATOR_SRC_TIME_PARTS_H_
#define FMTE_ESTIMATOR_SRC_TIME_PARTS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "fmte/job.h"
#include "fmte/lora.h"
#include "fmte/model.h"
#include "fmte/time.h"

namespace fmte::time_parts {

// Forward FLOPs per token of one block, whole (before tensor-parallel splitting).
struct BlockFlops {
  double linear = 0;         // 2 x active weight elements of every linear (MoE: experts that fire)
  double frozen_linear = 0;  // the part of `linear` whose weights get no gradient (LoRA base, ...)
  double adapter = 0;        // LoRA adapters: 2 x r x (in + out) per targeted linear
  // `adapter` weighted by the (tokens, in, r) and (tokens, r, out) products' shape factors: rank-r
  // products run far below the large-matrix rate (gemm-h100-hf.csv: 0.07 of peak).
  double adapter_fwd_weighted = 0, adapter_bwd_weighted = 0;
  double attention_full = 0;      // QK^T and AV over the whole context: 4 x ctx x heads x head_dim
  double attention_executed = 0;  // what the kernel runs: causal fused kernels skip half
  // `attention_executed` weighted like a linear (time = weighted / gemm rate): the fused kernel's
  // own rate where measured (FusedAttentionPeakFraction, MaskedSdpaPeakFraction), else the
  // large-matrix rate.
  double attention_weighted = 0;
  double weight_elements = 0;  // weight elements of the block (all experts)
  // `linear` (and its frozen part) weighted by the shape's efficiency: each linear's FLOPs divided
  // by its GemmCurve factor at its per-GPU shape, so that time = these / (peak x gemm_efficiency).
  // Equal to `linear` (`frozen_linear`) without curves.
  double linear_fwd_weighted = 0;  // forward
  double linear_bwd_weighted = 0;  // one backward product (input or weight gradient) per linear
  double frozen_bwd_weighted = 0;  // the frozen linears' part of linear_bwd_weighted
  // The forward of what Megatron's recompute modules rerun (TrainingJob::recompute_modules): the
  // MLP's linears with the router (a dense MLP, or a MoE layer's experts and shared experts), and
  // of those the shared experts'; FLOPs and weighted like linear_fwd_weighted.
  double mlp_fwd = 0, mlp_fwd_weighted = 0, shared_fwd = 0, shared_fwd_weighted = 0;
  // The forward of what torchtitan's op-level selective checkpointing reruns
  // (TrainingJob::OpLevelSac): every other matrix product in forward order (the 2nd, 4th, ...:
  // wk, wo and w3 of a Llama block); FLOPs and weighted like linear_fwd_weighted. Its elementwise
  // kernels, rerun too, are not counted (the policy's runs are compiled: fused into the products'
  // neighbours).
  double op_sac_fwd = 0, op_sac_fwd_weighted = 0;
};

// Per-GPU GEMM shape of one linear under Megatron tensor parallelism (Shoeybi et al. 2019):
// column-parallel projections (Q/K/V, gate/up) split the output, row-parallel ones (attention
// output, MLP down) split the input; routers stay whole. `tokens` are the micro-batch's tokens
// that reach it (routed experts: their share).
struct GemmShape {
  double m = 0, k = 0, n = 0;
};
GemmShape LinearGemmShape(const LinearShape& l, int64_t tp, double tokens);

// Weight of `flops` run as an (m, k, n) product in the forward / backward pass: flops divided by
// the curve's shape factor (backward also by its large-matrix ratio to the forward).
double FwdWeighted(const TimeEfficiency& eff, double flops, const GemmShape& s);
double BwdWeighted(const TimeEfficiency& eff, double flops, const GemmShape& s);

// `context` is the attention context length (sequence, plus prefix tokens); `lora` the adapted
// linears (fmte/lora.h, resolved once per estimate); `tokens_mb` the micro-batch's tokens (for the
// GEMM shapes).
BlockFlops BlockFlopsPerToken(const ModelArch& model, const BlockSpec& block,
                              const TrainingJob& job, const LoraTargets& lora, double context,
                              double tokens_mb, const TimeEfficiency& eff);

// What one layer of a block kind adds to its stage (time_stage.cc).
struct LayerWork {
  double fwd_flops = 0, bwd_flops = 0, recompute_flops = 0;
  double fwd_weighted = 0, bwd_weighted = 0, recompute_weighted = 0;
  double model_flops = 0;
  double weight_elems = 0;
  double expert_elems = 0;  // of weight_elems: the routed experts' weights (split by EP)
  // Row-parallel outputs whose tensor-parallel all-reduce the layer ends with: attention or SSM
  // output, MLP down (2 in a transformer block; 1 in a hybrid model's one-mixer layer).
  double tp_sublayers = 0;
  bool attends = false;  // the layer has an attention core (context parallelism's ring)
  // Eager kernels (EagerKernels): the bytes the layer saves for backward per micro-batch on this
  // GPU without checkpointing that its kernels write (the memory model's
  // LayerWrittenActivationBytes), the measure of its memory-bound traffic. 0 otherwise.
  double saved_bytes = 0;
  // Of them, PEFT's LoRA modules' own; their elementwise kernels' bytes per micro-batch in the
  // forward and the backward (fmte/memory.h PeftAdapterBytes), and how many modules. 0 otherwise.
  double peft_saved_bytes = 0, peft_forward_bytes = 0, peft_backward_bytes = 0;
  double peft_modules = 0;
  double trainable_elems = 0;  // full fine-tuning and prefix tuning
  // PEFT's LoRA on the routed experts (TrainingJob::PeftLoraOnTransformers): the adapted experts'
  // weight elements, all of them (kExpertDeltaTraffic); 0 otherwise.
  double expert_delta_elems = 0;
  // A mixture-of-experts layer's experts per token (the copies of each token its router sends to
  // the experts); 0 for a dense layer.
  double routed_copies = 0;
  // LoRA: each adapted linear's adapter elements, in the block's order (StageWorkOf adds them to
  // the stage's trainable elements one by one, in layer order).
  std::vector<double> lora_adapters;
};

// Whether the job runs the model's elementwise work as separate PyTorch kernels (every framework
// but Megatron's fused Transformer Engine kernels, unless torch.compile fuses them): its
// memory-bound traffic then follows the tensors each op writes and reads (time.cc).
bool EagerKernels(const TrainingJob& job);

// Measured inside real training steps (tests/data/time-profiled: 45 HF Trainer runs on one H100,
// every kernel of one step; fitted by scripts/fit-eager-traffic.py on the 43 dense runs, bytes at
// the GPU's nominal HBM bandwidth, so they hold the bandwidth eager kernels reach): the
// memory-bound kernels (elementwise, norms, reductions, softmax and loss) of a step move
// kEagerTraffic bytes per byte its layers save for backward (forward + backward), plus
// kEagerRecomputeTraffic per saved byte when full checkpointing reruns the forward; their logits
// and loss move the LM head's logit bytes per pass. PEFT's LoRA modules are counted on their own:
// their saved tensors are left out of those bytes and the bytes their casts, scaling and sums
// move (memory_internal.h PeftChainBytes) take kPeftChainTraffic times their time at nominal
// bandwidth (1.50: the kernels reach 67% of it). Left out one model family at a time, the
// memory-bound time is predicted within 10.6% (mean absolute; 16% when PEFT's modules were only
// part of the saved bytes: LoRA runs -16% on average, full fine-tuning +7%). Fused AdamW and the
// gradient-norm clipping of full fine-tuning (24 runs) ran at kOptimizerBandwidth of nominal HBM
// bandwidth (medians 0.68 bf16 states, 0.79 fp32; the geometric mean over the 24).
inline constexpr double kEagerTraffic = 17.36;
inline constexpr double kEagerRecomputeTraffic = 5.75;
inline constexpr double kPeftChainTraffic = 1.50;
// The same profiles' GPU idle time within a step (its steady wall time less the kernels' busy
// time): eager PyTorch's host issues every op, and between kernels the GPU waits (launch latency,
// the host's Python and dispatch, syncs). Fitted over the 43 dense runs as kEagerLayerGap per layer
// and pass (forward, backward counted twice, recomputed forward) plus kPeftModuleGap per PEFT
// module and pass (its Python forward and a dozen small kernels); one model family left out at a
// time the idle time is predicted within 29% (mean absolute). Measured on one H100 host only: a
// slower host CPU leaves longer gaps.
inline constexpr double kEagerLayerGap = 143e-6;
inline constexpr double kPeftModuleGap = 46e-6;
inline constexpr double kOptimizerBandwidth = 0.74;
// PEFT's LoRA on a mixture of experts' routed experts under transformers 5
// (TrainingJob::PeftLoraOnTransformers): each layer's ParamWrapper builds every expert's delta
// weight, einsum(lora_B, lora_A) x scaling in the adapters' dtype, casts it and adds it to the
// stacked weight through a parametrization registered for that forward (peft/tuners/lora/layer.py
// ParamWrapper._activate_lora, get_delta_weight), whatever tokens reached the expert ("PEFT
// always materializes the LoRA contribution for each expert", PEFT's LoRA guide); backward takes
// the whole stacked gradient back through the same chain to lora_A and lora_B. The step time this
// adds per adapted expert weight element and pass (each forward, the recomputed one included, and
// the backward), in bytes at the GPU's nominal HBM bandwidth: the GPU's time for those kernels
// (the (E, out, 2r, in) products, copies and casts: about 19 of them in the profiles) and the
// host's gaps around them. Measured (tests/data/memory-measured/measured-h100-hf.csv, one H100,
// transformers 5.17, PEFT 0.21, all-linear r 16, full checkpointing): the step time fmte missed
// without it over the elements x passes of Qwen3-30B-A3B (128 experts, 1024 tokens: 24.6 bytes)
// and DeepSeek-V2-Lite (64 experts, 2 x 2048 tokens: 20.3); their pooled 23.1 here. Either one
// left out, the other's step time is predicted from the other's constant within -11% (Qwen3)
// and +7% (DeepSeek-V2-Lite); they were -63% and -34%.
inline constexpr double kExpertDeltaTraffic = 23.1;

// FlashAttention-2 through PyTorch's SDPA on Hopper (the same profiles, 33 causal runs without a
// sliding-window mask, head_dim 64-256, 1k-32k tokens): the fraction of dense peak the attention
// kernels reach, 1 / (1 + 2338 / context + 92.5 / head_dim) (0.35 at 2048 tokens and head_dim 128,
// 0.54 at 16k), within 8% (mean absolute log error); MoE runs left out. Other generations keep the
// large-matrix rate (not measured here).
double FusedAttentionPeakFraction(const TimeEfficiency& eff, double context, double head_dim);
// How much faster an FP8 job's linear products run than in 16 bits: 2 for Megatron (Transformer
// Engine) on the generations with FP8 tensor cores (hopper, blackwell, cdna3), else 1
// (BlockFlopsPerToken).
double Fp8LinearSpeedup(const TrainingJob& job, const TimeEfficiency& eff);
// The masked SDPA kernel's fraction of dense peak counting every score, on Hopper: 0.195 (the
// geometric mean of Phi-3-mini at 4096 tokens, window 2047, two runs, and StarCoder2-7B at 4096,
// window 4096: 0.216, 0.213, 0.161; Gemma-2's alternating global layers left out); 0 elsewhere
// (the large-matrix rate).
double MaskedSdpaPeakFraction(const TimeEfficiency& eff);

// Layers of one block kind share their work: each kind's LayerWork is computed on first use
// (this runs per estimate in the admission path and thousands of times in a layout search).
using KindWork = std::vector<std::optional<LayerWork>>;

// Per-token FLOPs (whole, before TP) and bytes of one pipeline stage.
struct StageWork {
  int64_t layers = 0;
  double fwd_flops = 0, bwd_flops = 0, recompute_flops = 0;  // executed, per token
  // The same weighted by each product's shape efficiency (GemmCurve): time = these / gemm rate.
  double fwd_weighted = 0, bwd_weighted = 0, recompute_weighted = 0;
  double model_flops = 0;            // Megatron convention, per token
  double act_bytes_per_token = 0;    // per GPU, memory-bound traffic of one forward pass
  double logit_bytes_per_token = 0;  // its part from the LM head's logits and loss (last stage)
  // Sum of the layers' LayerWork::saved_bytes without PEFT's adapters' part (per micro-batch).
  double eager_saved_bytes = 0;
  double peft_forward_bytes = 0, peft_backward_bytes = 0;  // sums of the layers' (per micro-batch)
  double peft_module_passes = 0;  // PEFT's modules x passes, as layer_passes counts the layers
  // The layers' LayerWork::expert_delta_elems (per micro-batch, each pass).
  double expert_delta_elems = 0;
  // The stage's mixture-of-experts layers and the sum of their LayerWork::routed_copies.
  double moe_layers = 0, routed_copies = 0;
  double weight_elems = 0;     // all weights of the stage (whole, before TP)
  double trainable_elems = 0;  // parameters that get gradients and optimizer state
  // Parameters whose gradients are reduced: trainable_elems, plus the frozen weights of the
  // layers when their FSDP units give them gradients (TrainingJob::GradientsCoverFrozenWeights).
  double grad_elems = 0;
  // Of weight_elems and grad_elems: the routed experts', which expert parallelism splits over ep
  // ranks and whose gradients reduce over the expert-data-parallel group.
  double expert_elems = 0, expert_grad_elems = 0;
  double layer_passes = 0;  // layers x passes (fwd 1, bwd 2, recompute 1)
  // The share of the layers whose forward full checkpointing reruns (TrainingJob::
  // RecomputedLayers / layers; 0 without full checkpointing).
  double recomputed_share = 0;
  double tp_allreduces = 0;      // per micro-batch
  double tp_fwd_allreduces = 0;  // of tp_allreduces: the forward's
  double attention_layers = 0;   // layers with an attention core
};

// One stage's work: layers [first_layer, first_layer + layers), with the embedding on the first
// stage and the LM head on the last; `kind_work` (size block_kinds) fills as kinds are met.
StageWork StageWorkOf(const ModelArch& model, const TrainingJob& job, const LoraTargets& lora,
                      KindWork& kind_work, int64_t first_layer, int64_t layers, bool first_stage,
                      bool last_stage, double context, double tokens_mb, const TimeEfficiency& eff);

// Links a collective group sees: `ranks` in all, `ranks_per_node` of them on each node.
struct Links {
  double intra_bytes_per_s = 0;  // per GPU, NVLink or PCIe peer
  double inter_bytes_per_s = 0;  // per GPU: the node's network divided among its GPUs
};

// Ring/hierarchical all-reduce of `bytes` per GPU (docs/formulas.md §5: each GPU moves 2(k-1)/k of
// the buffer; across nodes NCCL reduces inside the node first, so the network carries 2(N-1)/N of
// the buffer per node's share). Includes the learned efficiency and latency.
double AllReduceSeconds(double bytes, int64_t ranks, int64_t ranks_per_node, const Links& links,
                        const TimeEfficiency& eff);
// All-gather or reduce-scatter: half the traffic of an all-reduce.
double AllGatherSeconds(double bytes, int64_t ranks, int64_t ranks_per_node, const Links& links,
                        const TimeEfficiency& eff);
// All-to-all over an expert-parallel group of `ep` ranks `stride` ranks apart (Megatron's expert
// groups: expert-TP innermost, then EP, so members are etp ranks apart), `domain` consecutive ranks
// sharing NVLink: each rank sends 1/ep of its `bytes` to every member (itself included) and
// receives as much. The members inside its NVLink domain are reached over NVLink, the others over
// the rank's share of the node's network, both at once: the slower of the two, plus the latency.
double ExpertAllToAllSeconds(double bytes, int64_t ep, int64_t stride, int64_t domain,
                             const Links& links, const TimeEfficiency& eff);
// One pass of a MoE layer's token dispatch and combine under expert parallelism (job.ep > 1), as
// the job's dispatcher moves them (TrainingJob::moe_dispatcher; Megatron's
// megatron/core/transformer/moe/token_dispatcher.py at d98e8a64). `local_tokens`: the rank's
// tokens of the micro-batch entering the layer (its sequence-parallel share); `copies`: the
// experts per token; `domain`: consecutive ranks sharing NVLink.
//   alltoall (and auto): the k copies of each token to their experts' ranks and back, two
//     all-to-alls over the EP group (members etp apart); with etp > 1 the received tokens
//     all-gathered over the expert-TP group and the outputs reduce-scattered (in the routing
//     probabilities' dtype, the activations').
//   allgather: every token all-gathered over the expert TP x EP group (consecutive ranks) and the
//     outputs reduce-scattered back over it.
//   flex (DeepEP, HybridEP): each token sent once to every rank one of its experts is on, and
//     back: the expected number of such ranks for k of E experts spread evenly over ep ranks,
//     ep x (1 - C(E - E/ep, k) / C(E, k)), in place of the k copies.
double ExpertDispatchSeconds(const ModelArch& model, const TrainingJob& job, double local_tokens,
                             double copies, double act_bytes, int64_t domain, const Links& links,
                             const TimeEfficiency& eff);
// Point-to-point send of `bytes` between neighbouring pipeline stages.
double P2pSeconds(double bytes, bool cross_node, const Links& links, const TimeEfficiency& eff);

// Context parallelism (job.cp > 1): ring attention, per layer and micro-batch. Each rank passes
// its keys and values around the cp ranks (cp - 1 hops) while it computes attention of its
// queries against the chunk in hand, and in backward passes them again with their gradients
// (Transformer Engine AttnFuncWithCPAndKVP2P; torch.distributed.tensor.experimental
// context_parallel). The seconds of exchange not hidden under that attention, forward and
// backward. `tokens_mb`: the rank's tokens of the micro-batch (seq / cp); `context`: the whole
// sequence attended to; `attention_rate`: FLOP/s of the attention kernels.
struct RingSeconds {
  double fwd = 0, bwd = 0;
};
RingSeconds RingAttentionSeconds(const ModelArch& model, const TrainingJob& job, double tokens_mb,
                                 double context, double attention_rate, bool cross_node,
                                 const Links& links, const TimeEfficiency& eff);

// Bytes the optimizer step reads and writes per trainable parameter (memory-bound on HBM): one
// fused pass, or, for torch's foreach AdamW (TrainingJob::ForeachOptimizerStep), one per op.
double OptimizerBytesPerParam(Optimizer opt, Precision precision, bool foreach = false);
// Bytes of one gradient element as it is reduced across data-parallel ranks.
double GradBytes(Precision precision);
// Bytes of one 16-bit (or fp32) weight element as held for compute.
double ComputeWeightBytes(Precision precision);

}  // namespace fmte::time_parts

#endif  // FMTE_ESTIMATOR_SRC_TIME_PARTS_H_
