// Framework buffers (DDP buckets, ZeRO buckets and live parameters, FSDP gathered units, autocast
// weight casts), the CUDA context with NCCL, and allocator fragmentation.
#include <algorithm>
#include <cmath>

#include "memory_internal.h"

namespace fmte::memory {
namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
}  // namespace

Buffers ComputeBuffers(const ModelArch& m, const TrainingJob& j, const Layout& lay,
                       const Dtypes& dt, const StageParams& sp) {
  Buffers b;
  const Sharding sh = j.sharding;
  const Framework fw = j.framework;
  const double h = static_cast<double>(m.hidden_size);
  const bool deepspeed_engine = !IsFsdp(sh) && fw != Framework::kMegatron;

  if ((sh == Sharding::kDdp || (sh == Sharding::kNone && lay.d > 1)) &&
      fw != Framework::kMegatron) {
    // torch DDP allocates flat bucket buffers for every gradient and, with the default
    // gradient_as_bucket_view=False, keeps them beside param.grad: a second gradient copy
    // (torch/nn/parallel/distributed.py, reducer.cpp). Megatron's DDP reduces in its contiguous
    // main_grad buffer, already counted as the gradients.
    b.persistent += sp.trainable * dt.grad;
  }
  if ((sh == Sharding::kZero1 || sh == Sharding::kZero2 || sh == Sharding::kZero3) &&
      deepspeed_engine) {
    // DeepSpeed reduce bucket: reduce_bucket_size elements (5e8 default; the HF integration's
    // "auto" sets hidden_size^2, transformers/integrations/deepspeed.py).
    const double elems = fw == Framework::kDeepspeed ? 5e8 : h * h;
    b.persistent += std::min(elems, sp.trainable) * dt.grad;
  }
  if (sh == Sharding::kZero3 && deepspeed_engine) {
    // Live gathered parameters: DeepSpeed's own estimate counts 4 bytes per parameter of the
    // largest layer (16-bit weight + gradient; estimate_zero3_model_states_mem_needs,
    // docs/formulas.md §3).
    b.forward += 4 * sp.largest_module;
    b.eval += 2 * sp.largest_module;  // an evaluation forward gathers the weights only
  }
  if (sh == Sharding::kFsdpFull || sh == Sharding::kFsdpHybrid || sh == Sharding::kFsdpNoShard) {
    // FSDP gathers a unit (one transformer block under the usual auto-wrap policy) while it runs
    // and prefetches the next; the root unit (embeddings, final norm, head) is not resharded after
    // forward (FSDP1 _runtime_utils, FSDP2 fully_shard root). Backward holds one unit's unsharded
    // gradients before the reduce-scatter.
    b.forward += 2 * sp.largest_block * dt.gather;
    if (sh != Sharding::kFsdpNoShard) b.forward += sp.root * dt.gather;
  }
  if (sh == Sharding::kFsdpGradOp) {
    // SHARD_GRAD_OP keeps parameters gathered from forward until the end of backward.
    b.forward += sp.total * dt.gather;
  }
  // An evaluation forward gathers units as the training forward does (and keeps them under
  // SHARD_GRAD_OP).
  if (IsFsdp(sh)) b.eval += b.forward;
  if (IsFsdp(sh)) {
    // The unit's gradient covers its frozen weights too where they share its flat parameter.
    const double unit = j.GradientsCoverFrozenWeights() ? sp.largest_block
                                                        : std::min(sp.largest_block, sp.trainable);
    b.backward += unit * dt.gather;
    if ((fw == Framework::kHf || fw == Framework::kLitgpt) && j.TrainsLanguageModel() &&
        sh != Sharding::kFsdpNoShard) {
      // The HF Trainer (accelerate) wraps each decoder layer, litgpt each Block
      // (FSDPStrategy(auto_wrap_policy={Block}) in finetune/full.py and pretrain.py); embeddings,
      // final norm and head stay in the root unit, whose unsharded gradient appears at the head's
      // backward and is reduce-scattered only once the embeddings' gradient arrives, at the end of
      // backward (FSDP1 post-backward hook on the root's flat parameter; FSDP2's root group in its
      // final callback).
      b.backward += sp.root * dt.gather;
    }
  }
  if (j.method == Method::kQlora && fw == Framework::kLitgpt && j.quant != Quant::kInt8) {
    // bitsandbytes' 4-bit product dequantises its weight for every matmul, forward and backward
    // (MatMul4Bit: F.dequantize_4bit(B, state).to(A.dtype)): the weight in the dtype it was
    // quantised from (Lightning quantises litgpt's weights from fp16) and its 16-bit copy, alive
    // while the product runs. The largest is litgpt's quantised lm_head, whose chunks' products
    // run at the end of the forward and at the start of the backward, beside the logits.
    b.forward += 4 * sp.largest_module;
  }
  if (j.fp8 != Fp8::kNone && fw == Framework::kMegatron) {
    // Transformer Engine keeps an FP8 copy of every linear weight and, for the backward GEMMs, its
    // transpose (MXFP8: row- and column-wise copies), cast on the first micro-batch and reused by
    // the others (Megatron passes is_first_microbatch; te/pytorch/module/linear.py): 2 bytes per
    // linear parameter of the transformer layers on this GPU beside the 16-bit weights (the output
    // layer is Megatron's own ColumnParallelLinear, in 16 bits). torchao's FP8 casts per use.
    // With FP8 primary weights (--fp8-param-gather) there is no cast to cache, only the
    // transpose: 1 byte per parameter (Megatron-Bridge's recipes also disable that cache,
    // disable_parameter_transpose_cache, which this keeps as an upper estimate).
    b.persistent += (j.fp8_params ? 1 : 2) * (sp.linear - sp.head);
  }
  if (dt.autocast && !IsFsdp(sh)) {
    // torch.autocast casts fp32 weights to 16-bit for every linear; the casts are saved by the
    // matmuls for backward (and cached for weights that require grad until autocast exits,
    // torch/amp/autocast_mode.py cache_enabled). With full recompute only the cached casts of
    // trainable weights are alive at the end of forward. Under FSDP the gathered copy is already
    // 16-bit (the MixedPrecision policy accelerate and the HF Trainer set from mixed_precision,
    // counted as FSDP's gathered units above): autocast finds nothing to cast.
    const bool full_recompute = j.activation_checkpointing == Checkpointing::kFull;
    const double cast = full_recompute ? sp.trainable_linear : sp.linear;
    b.forward += 2 * cast / (ShardsWeights(sh) ? static_cast<double>(lay.shard) : 1);
    if (fw == Framework::kLitgpt && IsPeft(j.method) && sp.head > 0) {
      // litgpt's PEFT loops run the frozen head once per kLitgptHeadChunk positions: each call
      // casts its weight again (not a leaf that requires grad: not cached) and saves that cast for
      // the chunk's input gradient, so the head's 16-bit copy is alive once per chunk at the end
      // of the forward (outside the checkpointed blocks: also under full recompute), not once.
      const double chunks = std::ceil(static_cast<double>(j.LocalSeqLen()) / kLitgptHeadChunk);
      b.forward += 2 * sp.head * std::max(0.0, chunks - (full_recompute ? 0 : 1));
    }
    // Under no_grad autocast still caches the casts of weights that require grad (cached_cast:
    // arg.requires_grad() && arg.is_leaf()), until the evaluation's autocast context exits.
    b.eval += 2 * sp.trainable_linear / (ShardsWeights(sh) ? static_cast<double>(lay.shard) : 1);
  }
  return b;
}

double CudaContextBytes(const TrainingJob& j, const Layout& lay) {
  // CUDA context, kernel images and cuBLAS/cuDNN handles of one PyTorch process: 0.3-1 GiB
  // (docs/formulas.md §4); 0.5 GiB with CUDA lazy loading. NCCL communicators add buffers per
  // communicator (NCCL_BUFFSIZE 4 MiB per channel and peer): about 0.25 GiB for the data-parallel
  // group and 0.125 GiB for each tensor or pipeline group.
  double bytes = 0.5 * kGiB;
  if (j.gpus > 1) bytes += 0.25 * kGiB;
  if (lay.t > 1) bytes += 0.125 * kGiB;
  if (lay.p > 1) bytes += 0.125 * kGiB;
  return bytes;
}

double FragmentationBytes(double allocated_bytes) {
  // PyTorch's caching allocator reserves more than it hands out (block rounding, split blocks
  // that cannot be reused across sizes): max_memory_reserved exceeds max_memory_allocated by a
  // few percent in steady training. 5% until fmte-retrain learns it from measured peaks.
  return 0.05 * std::max(0.0, allocated_bytes);
}

BoundFactors MeasuredBoundFactors() {
  // scripts/eval-memory.py --calibrate over tests/data/memory-measured/measured.csv and
  // measured-h100-hf.csv (2026-11-28: 300 runs that ran, from 7 public sources: litgpt, axolotl,
  // DeepSpeed, Liger-Kernel, pytorch/ao with torchtitan, Megatron-Bridge, and 172 HF Trainer runs
  // this project measured on an H100): measured / predicted of the statistic each source measured
  // lay between 0.713 (axolotl's README figure for gpt-oss-20b on 4 A100) and 1.382
  // (Megatron-Bridge's Llama-3-70B FP8 runs). The high factor stays at 1.546, where litgpt's
  // gemma-2b full fine-tuning on 4 A10G put it before litgpt's untied output head was modelled, and
  // the low at 0.693, where a litgpt run put it before litgpt's logits were modelled: each is on
  // the safe side of the range. Left out one source at a time, the other sources' factors never put
  // a run that ran out of its GPU; one Megatron-Bridge FP8 run lies above their high (1.38) and
  // two axolotl README figures below their low (0.71). LoRA under FSDP had its own high factor
  // (3.80) until litgpt's whole-block FSDP units were modelled (TrainingJob::fsdp_frozen_grads).
  // Test memory_measured_eval fails when a change moves a run outside this range.
  return {0.693, 1.546};
}

}  // namespace fmte::memory
