// Model states per GPU: weights (full, frozen, quantised), gradients, optimizer states and fp32
// master copies, sharded by ZeRO/FSDP and moved to the host by CPU offload.
// Sources: docs/formulas.md §2 and §3; the ZeRO paper (Rajbhandari et al. 2020, section 3:
// 2 + 2 + K bytes, K = 12 for mixed-precision Adam); Megatron-LM's distributed optimizer table;
// bitsandbytes and PEFT as cited below.
#include <algorithm>

#include "memory_internal.h"

namespace fmte::memory {
namespace {

// Optimizer bytes per trainable parameter (states only; the fp32 master is added by the caller).
double OptimizerStateBytes(const TrainingJob& j, const Dtypes& dt, const StageParams& sp) {
  switch (j.optimizer) {
    case Optimizer::kAdamW:
      return sp.trainable * 2 * dt.state;  // exp_avg + exp_avg_sq (torch/optim/adamw.py)
    case Optimizer::kAdamW8bit: {
      // bitsandbytes 8-bit Adam: two uint8 states with blockwise dynamic quantisation (one fp32
      // absmax per 256 elements, bitsandbytes/optim/optimizer.py Optimizer8bit.init_state);
      // tensors under min_8bit_size = 4096 elements keep 32-bit states.
      const double big = std::max(0.0, sp.trainable - sp.small_trainable);
      return big * 2 * (1 + 4.0 / 256) + sp.small_trainable * 8;
    }
    case Optimizer::kSgd:
      return sp.trainable * dt.state;  // momentum_buffer (torch/optim/sgd.py, momentum > 0)
    case Optimizer::kAdafactor:
      // transformers' Adafactor (beta1=None): factored exp_avg_sq_row + exp_avg_sq_col for
      // matrices, a full exp_avg_sq for vectors, in the gradient's dtype
      // (transformers/optimization.py Adafactor._get_options / step).
      return sp.factored_state * dt.state;
  }
  return sp.trainable * 2 * dt.state;
}

// Bytes per frozen, non-quantised parameter.
double FrozenBytes(const TrainingJob& j, const Dtypes& dt) {
  // litgpt quantises through Lightning's BitsandbytesPrecision and never calls PEFT: its other
  // parameters stay in the precision's dtype.
  if (j.method == Method::kQlora && j.kbit_upcast && j.framework != Framework::kTorchtune &&
      j.framework != Framework::kMegatron && j.framework != Framework::kLitgpt) {
    // peft prepare_model_for_kbit_training (peft/utils/other.py) casts every parameter that is not
    // Params4bit/Int8Params (embeddings, norms, lm_head) to fp32 (TrainingJob::kbit_upcast).
    return 4;
  }
  return dt.base_weight;
}

// The stage's weights as stored, before any sharding (quantised, FP8 or in their precision's
// dtype), and the quantisation constants beside them.
struct StoredWeights {
  double weights = 0, consts = 0;
};
StoredWeights WeightsOf(const TrainingJob& j, const Dtypes& dt, const StageParams& sp) {
  // QLoRA: bitsandbytes 4-bit packs two values per byte with one fp32 absmax per block
  // of 64; double quantisation stores the absmax as 8-bit with an fp32 constant per 256 blocks
  // (Dettmers et al. 2023, section 3; docs/formulas.md §2). torchtune's NF4 (torchao) always
  // double-quantises (scaler_block_size 256). LLM.int8: one byte per weight plus an fp32 scale
  // per output row (bitsandbytes Int8Params.SCB).
  StoredWeights w;
  double quant = 0;
  if (sp.quantized > 0) {
    if (j.quant == Quant::kInt8) {
      quant = sp.quantized;
      w.consts = sp.quant_rows * 4;
    } else {
      quant = sp.quantized * 0.5;
      const bool dq = j.double_quant || j.framework == Framework::kTorchtune;
      w.consts = dq ? sp.quantized / 64 + sp.quantized / (64.0 * 256) * 4 : sp.quantized / 64 * 4;
    }
  }
  w.weights = sp.frozen * FrozenBytes(j, dt) + quant + sp.trainable * dt.param;
  if (j.fp8_params) {
    // FP8 primary weights (Megatron --fp8-param-gather: Transformer Engine fp8_model_init, the
    // DDP param buffer in torch.uint8, distributed_data_parallel.py): one byte per parameter of
    // the transformer layers' linears; embedding, output layer and norms stay 16-bit. The fp32
    // main params in the optimizer are unchanged.
    w.weights -= (sp.linear - sp.head) * std::max(0.0, dt.param - 1);
  }
  return w;
}

}  // namespace

double ZeroGatheredModelBytes(const Dtypes& dt, const StageParams& sp) {
  return (sp.frozen + sp.trainable) * dt.gather + sp.quantized * 0.5;
}

CheckpointSave ComputeCheckpointSave(const TrainingJob& j, const Dtypes& dt,
                                     const StageParams& sp) {
  CheckpointSave c;
  if (!j.SavesFullStateDict()) return c;
  if (j.sharding == Sharding::kZero3) {
    // DeepSpeed's _zero3_consolidated_16bit_state_dict (the HF Trainer's and accelerate's
    // save_model with stage3_gather_16bit_weights_on_model_save): each module's parameters
    // gathered in 16 bits (GatheredParameters), rank 0 copying them to its host; the optimizer
    // goes to the sharded ZeRO checkpoint, each rank its own partition.
    c.gpu = sp.largest_module * dt.gather;
    c.host = ZeroGatheredModelBytes(dt, sp);
    return c;
  }
  // FSDP1's FULL_STATE_DICT with offload_to_cpu and rank0_only (accelerate's FullStateDictConfig
  // and FullOptimStateDictConfig for it; Lightning's FSDPStrategy state_dict_type="full"): the
  // model's state dict unshards one FSDP unit at a time in full precision (its flat parameter's
  // dtype, mixed precision off) and copies it to rank 0's host; the optimizer's state dict
  // all-gathers each unit's states into one fp32 buffer of the unit's unsharded size, one state at
  // a time, and copies them to the host (torch/distributed/fsdp/_optim_utils.py
  // _allgather_orig_param_states: gathered_tensor = empty(flat_param._padded_unsharded_size)).
  // Every rank takes part in the gathers; rank 0 keeps the result.
  const double unit = std::max(sp.largest_block, sp.root);
  const double frozen = FrozenBytes(j, dt);
  const double unit_bytes = sp.trainable > 0 ? std::max(dt.param, frozen) : frozen;
  c.gpu = std::max(unit * unit_bytes, std::min(unit, sp.trainable) * 4);
  // Rank 0's host holds the whole model in those dtypes, then the whole optimizer state: the HF
  // Trainer saves them one after the other (save_model, then _save_optimizer_and_scheduler, which
  // frees the model's dict first), litgpt's full.py in one dict (fabric.save(path, {"model":
  // model, "optimizer": optimizer, ...})); its LoRA scripts save the adapters alone.
  const StoredWeights stored = WeightsOf(j, dt, sp);
  const double model = stored.weights + stored.consts;
  const double optimizer = OptimizerStateBytes(j, dt, sp) + sp.trainable * dt.master;
  if (j.framework == Framework::kLitgpt)
    c.host = j.method == Method::kFull ? model + optimizer : sp.trainable * dt.param;
  else
    c.host = std::max(model, optimizer);
  return c;
}

ModelStates ComputeModelStates(const ModelArch& m, const TrainingJob& j, const Layout& lay,
                               const Dtypes& dt, const StageParams& sp) {
  (void)m;
  ModelStates s;
  const Sharding sh = j.sharding;
  const double shard_w =
      (ShardsWeights(sh) || ShardsWithFsdp(sh)) ? static_cast<double>(lay.shard) : 1;
  const double shard_g = ShardsGradients(sh) ? static_cast<double>(lay.shard) : 1;
  const double shard_o = ShardsOptimizer(sh) ? static_cast<double>(lay.shard) : 1;
  // `bytes` of all parameters on this GPU, of which `expert_bytes` are routed experts, sharded
  // over `shard` ranks. Under expert parallelism the experts (1/e of them on this rank) are
  // sharded over the expert-data-parallel group, shard / e ranks (Megatron's distributed
  // optimizer and FSDP2's expert mesh): per GPU the same share as without expert parallelism.
  // With MoE parallel folding the expert-data-parallel group is shard x t / (et x e) ranks.
  const double e = static_cast<double>(lay.e) * static_cast<double>(lay.et) /
                   static_cast<double>(std::max<int64_t>(1, lay.t));
  const auto sharded = [e](double bytes, double expert_bytes, double shard) {
    if (shard <= 1 || e == 1) return bytes / shard;
    return (bytes - expert_bytes) / shard + expert_bytes / std::max(1.0, shard / e);
  };
  const double expert_share = sp.trainable > 0 ? sp.expert_trainable / sp.trainable : 0;

  const StoredWeights stored = WeightsOf(j, dt, sp);
  const double weights = stored.weights, consts = stored.consts;
  // The experts' share of the weights, by their share of the parameters (frozen, quantised and
  // trainable experts are stored like the rest of their kind).
  const double expert_weights = sp.total > 0 ? weights * sp.expert / sp.total : 0;
  s.weights = sharded(weights, expert_weights, shard_w);
  s.quant_consts = sharded(consts, sp.total > 0 ? consts * sp.expert / sp.total : 0, shard_w);

  // The parameters that carry gradients: the trainable ones, or (GradientsCoverFrozenWeights)
  // every parameter of the transformer blocks, whose FSDP1 units hold adapters and frozen weights
  // in one flat parameter that requires grad as a whole: PyTorch's FSDP docs, "the gradient memory
  // usage will be higher than expected (namely, equivalent to not freezing those parameters)".
  // The root unit (embeddings, final norm, head) holds no adapter unless the head is adapted.
  const bool frozen_grads = j.GradientsCoverFrozenWeights();
  const double grad_params =
      frozen_grads ? std::max(sp.trainable, sp.total - sp.root - sp.saved_modules) : sp.trainable;
  const double grads = grad_params * dt.grad;
  s.grads = sharded(grads, grads * expert_share, shard_g);
  s.first_grads = std::min(sp.first_grads, sp.trainable) * dt.grad / shard_g;
  if (frozen_grads) s.first_grads = std::max(s.first_grads, sp.largest_block * dt.grad / shard_g);

  s.accum_grads = s.grads;
  if (j.AccumulatesUnshardedGradients()) {
    // The HF Trainer (and TRL, axolotl, accelerate's accumulate()) runs every micro-batch of a
    // step but the last under FSDP's no_sync (FSDP2: set_requires_gradient_sync(False)), so each
    // rank accumulates the unsharded gradient of every parameter that trains, in the dtype it was
    // computed in (the gathered 16-bit copy under mixed precision), until the last micro-batch
    // reduce-scatters it (transformers trainer.py _inner_training_loop; torch FSDP no_sync: "FSDP
    // will accumulate the full model gradients (instead of gradient shards) until the eventual
    // sync"; accelerate docs "no_sync requires additional GPU memory when using FSDP"). FSDP2
    // does the same since accelerate 1.11 (before, no_sync was a no-op for FSDP2 modules).
    // accelerate's sync_each_batch (job.sync_each_batch) avoids it; transformers 4.47 to 5.1
    // ignore it.
    s.accum_grads = grad_params * dt.gather;
  }
  const double states = OptimizerStateBytes(j, dt, sp);
  const double optimizer = states + sp.trainable * dt.master;
  s.optimizer = sharded(optimizer, optimizer * expert_share, shard_o);
  // The optimizer's states appear in its first step: torch.optim (AdamW, SGD, Adafactor),
  // bitsandbytes and Megatron's FusedAdam fill `state` on the first step() (torch/optim/adamw.py
  // _init_group; Megatron initialises them early only to load a checkpoint). DeepSpeed's ZeRO
  // optimizers allocate them at initialisation (stage_1_and_2.py initialize_optimizer_states).
  // Master weights exist from the start.
  const bool eager_states = j.framework == Framework::kDeepspeed && ShardsOptimizer(sh);
  if (!eager_states) s.lazy_states = sharded(states, states * expert_share, shard_o);

  // The foreach AdamW/SGD of torch.optim (HF Trainer's adamw_torch, plain FSDP loops, litgpt,
  // which builds torch.optim.AdamW from its config's class_path without fused)
  // allocates one state-sized temporary list (torch._foreach_sqrt of exp_avg_sq,
  // torch/optim/adamw.py _multi_tensor_adamw); the fused step (HF Trainer's default
  // adamw_torch_fused with torch >= 2.8 since transformers PR #37358 (July 2025), torchtitan's
  // default) and Megatron/DeepSpeed/torchtune's kernels update in place. Measured: full AdamW
  // fine-tuning of Qwen2.5-3B under the HF Trainer's adamw_torch_fused peaks at weights + gradients
  // + states (16 bytes x 3.09e9 parameters = 45.98 GiB; 46.06 GiB measured on an H100,
  // tests/data/memory-measured/measured-h100-hf.csv).
  if (j.ForeachOptimizerStep())
    s.step_temp = sharded(sp.trainable * dt.state, sp.expert_trainable * dt.state, shard_o);
  if (sp.saved_modules > 0) {
    // PEFT's modules_to_save copies (StageParams::saved_modules) train as full fine-tuning would
    // in this precision (Dtypes::copy_*): PEFT upcasts only its tuner layers to fp32
    // (_cast_adapter_dtype), not a ModulesToSaveWrapper; the HF Trainer's torch.optim states follow
    // the copy (zeros_like), DeepSpeed's and Megatron's mixed precision add their fp32 master and
    // states. Sharded as the rest; the head's gradients are the first of the backward.
    const double n = sp.saved_modules;
    s.weights += n * dt.copy_param / shard_w;
    s.grads += n * dt.copy_grad / shard_g;
    s.first_grads += sp.saved_head * dt.copy_grad / shard_g;
    s.accum_grads += j.AccumulatesUnshardedGradients() ? n * dt.gather : n * dt.copy_grad / shard_g;
    // Their states as OptimizerStateBytes counts any trainable tensors, in the copies' dtype (two
    // big matrices: no small tensors, Adafactor's row and column statistics next to nothing).
    StageParams copies;
    copies.trainable = n;
    Dtypes copy_dt = dt;
    copy_dt.state = dt.copy_state;
    const double copy_states = OptimizerStateBytes(j, copy_dt, copies);
    s.optimizer += (copy_states + n * dt.copy_master) / shard_o;
    if (!eager_states) s.lazy_states += copy_states / shard_o;
    if (j.ForeachOptimizerStep()) s.step_temp += n * dt.copy_state / shard_o;
  }
  if (j.framework == Framework::kMegatron && dt.master > 0 && dt.grad < 4) {
    // Megatron's optimizer hands its fp32 master shard a gradient with
    // `shard_main_param.grad = shard_model_grad.float()` (core/optimizer/distrib_optimizer.py
    // _copy_model_grads_to_main_grads; optimizer.py the same without the distributed optimizer):
    // free for fp32 main grads, an fp32 copy of the shard when they are 16-bit
    // (--grad-reduce-in-bf16). It lives from the step until the next iteration's zero_grad.
    s.step_temp += sharded(sp.trainable * 4, sp.expert_trainable * 4, shard_o);
  }

  if (j.optimizer_in_backward) {
    // Each parameter is stepped and its gradient freed as soon as it is ready
    // (torchtune optimizer_in_bwd, register_post_accumulate_grad_hook): one module's gradient.
    s.grads = std::min(sp.largest_module, sp.trainable) * dt.grad / shard_g;
    s.first_grads = s.grads;
    s.accum_grads = s.grads;
    s.step_temp = 0;
  }
  if (j.offload_optimizer) {
    // ZeRO-Offload / FSDP CPU offload: fp32 master, optimizer states and fp32 gradients live in
    // host memory and the step runs on the CPU (DeepSpeed estimator, docs/formulas.md §3).
    s.cpu += s.optimizer + sp.trainable * 4 / shard_g;
    s.optimizer = 0;
    s.lazy_states = 0;
    s.step_temp = 0;
    s.grads = s.first_grads;  // gradients leave the GPU bucket by bucket
    s.accum_grads = s.grads;
  }
  if (j.offload_params) {
    s.host_weights = s.weights + s.quant_consts;
    s.cpu += s.host_weights;
    s.weights = 0;
    s.quant_consts = 0;
  }
  return s;
}

}  // namespace fmte::memory
