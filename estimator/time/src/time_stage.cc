// The work of one pipeline stage per token (time.cc turns it into seconds): each layer's FLOPs,
// weighted FLOPs, weights and trainable elements, plus the embedding and the LM head.
#include <algorithm>
#include <optional>
#include <vector>

#include "fmte/memory.h"
#include "time_parts.h"

namespace fmte::time_parts {
namespace {

double ActivationBytesPerToken(const ModelArch& model, const TrainingJob& job, double context) {
  // Korthikanti et al. 2022, Table 2, per token: h*(10 + 24/t) with TP, h*34/t with TP+SP, plus the
  // s x s scores 5*a*s/t when attention is not fused. Used as the memory-bound traffic of a pass.
  const double h = static_cast<double>(model.hidden_size);
  const double t = static_cast<double>(job.tp);
  double bytes = job.sequence_parallel ? h * 34.0 / t : h * (10.0 + 24.0 / t);
  if (AttentionUsed(model, job) == Attention::kEager)
    bytes += 5.0 * static_cast<double>(model.num_heads) * context / t;
  return bytes;
}

LayerWork LayerWorkOf(const ModelArch& model, const TrainingJob& job, int64_t layer,
                      const LoraTargets& lora, double context, double tokens_mb,
                      const TimeEfficiency& eff) {
  const BlockSpec& block = model.Block(layer);
  const BlockFlops f = BlockFlopsPerToken(model, block, job, lora, context, tokens_mb, eff);
  LayerWork lw;
  const double fwd = f.linear + f.adapter + f.attention_executed;
  // Backward: the input gradient of every linear (also frozen ones: gradients flow to the
  // adapters/prompts below), weight gradients only for trainable weights, attention twice.
  // Frozen weights get weight gradients too where their FSDP unit's flat parameter requires grad
  // (TrainingJob::GradientsCoverFrozenWeights).
  const double dgrad = f.linear + f.adapter + 2 * f.attention_executed;
  const bool frozen_grads = job.GradientsCoverFrozenWeights();
  const double frozen_wgrad = frozen_grads ? 0 : f.frozen_linear;
  const double frozen_wgrad_weighted = frozen_grads ? 0 : f.frozen_bwd_weighted;
  const double wgrad = (f.linear - frozen_wgrad) + f.adapter;
  lw.fwd_flops = fwd;
  lw.bwd_flops = dgrad + wgrad;
  // Adapters run at their rank-r shapes' efficiency, attention at the fused kernel's rate
  // (BlockFlops::adapter_*_weighted, attention_weighted).
  const double fwd_weighted = f.linear_fwd_weighted + f.adapter_fwd_weighted + f.attention_weighted;
  lw.fwd_weighted = fwd_weighted;
  lw.bwd_weighted = (f.linear_bwd_weighted + f.adapter_bwd_weighted + 2 * f.attention_weighted) +
                    (f.linear_bwd_weighted - frozen_wgrad_weighted) + f.adapter_bwd_weighted;
  if (job.activation_checkpointing == Checkpointing::kFull) {
    lw.recompute_flops = fwd;
    lw.recompute_weighted = fwd_weighted;
  }
  if (job.OpLevelSac(block)) {
    // torchtitan's op-level policy: every other matrix product (SDPA's output is saved).
    lw.recompute_flops += f.op_sac_fwd;
    lw.recompute_weighted += f.op_sac_fwd_weighted;
  } else if (job.activation_checkpointing == Checkpointing::kSelective) {
    // What Megatron's selective recompute reruns: the attention core (core_attn), a MoE layer (moe)
    // or its shared experts (shared_experts), a dense MLP (mlp); moe_act and layernorm rerun
    // elementwise kernels only.
    const bool moe = block.experts_per_token > 0;
    if (job.Recomputes(RecomputeModule::kCoreAttn)) {
      lw.recompute_flops += f.attention_executed;
      lw.recompute_weighted += f.attention_weighted;
    }
    if (moe ? job.Recomputes(RecomputeModule::kMoe) : job.Recomputes(RecomputeModule::kMlp)) {
      lw.recompute_flops += f.mlp_fwd;
      lw.recompute_weighted += f.mlp_fwd_weighted;
    } else if (moe && job.Recomputes(RecomputeModule::kSharedExperts)) {
      lw.recompute_flops += f.shared_fwd;
      lw.recompute_weighted += f.shared_fwd_weighted;
    }
  }
  const double model_fwd = f.linear + f.adapter + f.attention_full;
  lw.model_flops = model_fwd + (f.linear + f.adapter + 2 * f.attention_full) + wgrad;
  lw.weight_elems = f.weight_elements + static_cast<double>(block.norm_params + block.other_params);
  bool mixer_out = false, mlp_out = false;
  for (const LinearShape& lin : block.linears) {
    if (lin.expert) lw.expert_elems += static_cast<double>(lin.Params());
    mixer_out = mixer_out || lin.role == LinearRole::kO || lin.role == LinearRole::kSsmOut;
    mlp_out = mlp_out || lin.role == LinearRole::kDown;
  }
  lw.tp_sublayers = (mixer_out ? 1.0 : 0.0) + (mlp_out ? 1.0 : 0.0);
  if (block.experts_per_token > 0 && lw.expert_elems > 0)
    lw.routed_copies = static_cast<double>(block.experts_per_token);
  lw.attends = block.HasAttention();
  if (EagerKernels(job)) {
    TrainingJob uncheckpointed = job;
    uncheckpointed.activation_checkpointing = Checkpointing::kNone;
    PeftAdapterBytes peft;
    lw.saved_bytes =
        static_cast<double>(LayerWrittenActivationBytes(model, uncheckpointed, layer, &peft));
    lw.peft_saved_bytes = peft.saved;
    lw.peft_forward_bytes = peft.forward;
    lw.peft_backward_bytes = peft.backward;
  }
  if (job.method == Method::kLora || job.method == Method::kQlora) {
    lw.lora_adapters.reserve(block.linears.size());  // at most one per linear: never reallocates
    const bool stacked_experts = job.PeftLoraOnTransformers() && block.experts_per_token > 0 &&
                                 model.transformers_stacks_experts;
    for (const LinearShape& lin : block.linears) {
      if (!lora.Matches(lin)) continue;
      lw.lora_adapters.push_back(static_cast<double>(
          (job.lora_r * lin.in_features + LoraBRank(block, lin, job, lora) * lin.out_features) *
          lin.copies));
      if (stacked_experts && lin.expert) lw.expert_delta_elems += static_cast<double>(lin.Params());
    }
    if (lw.peft_forward_bytes > 0) lw.peft_modules = static_cast<double>(lw.lora_adapters.size());
  } else if (job.TrainsLanguageModel()) {
    lw.trainable_elems = lw.weight_elems;
  } else if (job.method == Method::kPrefixTuning) {
    // PEFT prefix tuning: virtual key and value vectors per layer.
    lw.trainable_elems = 2.0 * static_cast<double>(job.virtual_tokens * model.hidden_size);
  }
  return lw;
}

}  // namespace

bool EagerKernels(const TrainingJob& job) {
  return job.framework != Framework::kMegatron && !job.compile;
}

StageWork StageWorkOf(const ModelArch& model, const TrainingJob& job, const LoraTargets& lora,
                      KindWork& kind_work, int64_t first_layer, int64_t layers, bool first_stage,
                      bool last_stage, double context, double tokens_mb,
                      const TimeEfficiency& eff) {
  StageWork w;
  w.layers = layers;
  const bool full_method = job.TrainsLanguageModel();
  const bool lora_method = job.method == Method::kLora || job.method == Method::kQlora;
  const bool full_ckpt = job.activation_checkpointing == Checkpointing::kFull;
  const bool recompute = full_ckpt || job.activation_checkpointing == Checkpointing::kSelective;
  // Full checkpointing of some layers only (TrainingJob::recompute_method) reruns their share.
  const double share =
      full_ckpt && layers > 0
          ? static_cast<double>(job.RecomputedLayers(layers, job.vpp)) / static_cast<double>(layers)
          : 0;
  const double rerun = full_ckpt ? share : 1;
  // Each block kind's work first (computed once per kind), so the summing loop below only adds;
  // its sums are written into `w` after the loop.
  for (int64_t l = first_layer; l < first_layer + layers; ++l) {
    std::optional<LayerWork>& cached = kind_work[static_cast<size_t>(model.block_kind_of_layer[l])];
    if (!cached) cached = LayerWorkOf(model, job, l, lora, context, tokens_mb, eff);
  }
  // Each layer's work is added in layer order, so the sums are those of adding every layer's own.
  double fwd_flops = 0, bwd_flops = 0, fwd_weighted = 0, bwd_weighted = 0;
  double recompute_flops = 0, recompute_weighted = 0, model_flops = 0, weight_elems = 0;
  double expert_elems = 0;
  double trainable_elems = 0, layer_passes = 0, tp_allreduces = 0, saved_bytes = 0;
  double peft_forward = 0, peft_backward = 0, peft_module_passes = 0, expert_delta_elems = 0;
  double moe_layers = 0, routed_copies = 0;
  const double passes = 3.0 + share;
  // Megatron TP: an all-reduce after each row-parallel sublayer in the forward and one in the
  // backward (Shoeybi et al. 2019: 2 and 2 per transformer block), and the forward's again when
  // the full recomputation reruns it.
  const double allreduces_per_sublayer = 2.0 + share;
  double tp_fwd_allreduces = 0, attention_layers = 0;
  for (int64_t l = first_layer; l < first_layer + layers; ++l) {
    const LayerWork& lw = *kind_work[static_cast<size_t>(model.block_kind_of_layer[l])];
    fwd_flops += lw.fwd_flops;
    bwd_flops += lw.bwd_flops;
    fwd_weighted += lw.fwd_weighted;
    bwd_weighted += lw.bwd_weighted;
    if (recompute) {
      recompute_flops += rerun * lw.recompute_flops;
      recompute_weighted += rerun * lw.recompute_weighted;
    }
    model_flops += lw.model_flops;
    weight_elems += lw.weight_elems;
    expert_elems += lw.expert_elems;
    saved_bytes += lw.saved_bytes - lw.peft_saved_bytes;
    peft_forward += lw.peft_forward_bytes;
    peft_backward += lw.peft_backward_bytes;
    peft_module_passes += lw.peft_modules * passes;
    expert_delta_elems += lw.expert_delta_elems;
    if (lw.routed_copies > 0) {
      moe_layers += 1;
      routed_copies += lw.routed_copies;
    }
    if (lora_method) {
      for (const double adapter : lw.lora_adapters) trainable_elems += adapter;
    } else if (full_method || job.method == Method::kPrefixTuning) {
      trainable_elems += lw.trainable_elems;
    }
    layer_passes += passes;
    tp_allreduces += allreduces_per_sublayer * lw.tp_sublayers;
    tp_fwd_allreduces += lw.tp_sublayers;
    attention_layers += lw.attends ? 1 : 0;
  }
  w.fwd_flops = fwd_flops;
  w.bwd_flops = bwd_flops;
  w.fwd_weighted = fwd_weighted;
  w.bwd_weighted = bwd_weighted;
  w.recompute_flops = recompute_flops;
  w.recompute_weighted = recompute_weighted;
  w.model_flops = model_flops;
  w.weight_elems = weight_elems;
  w.expert_elems = expert_elems;
  w.expert_grad_elems = full_method || job.GradientsCoverFrozenWeights() ? expert_elems : 0;
  w.trainable_elems = trainable_elems;
  w.layer_passes = layer_passes;
  w.recomputed_share = share;
  w.tp_allreduces = tp_allreduces;
  w.tp_fwd_allreduces = tp_fwd_allreduces;
  w.attention_layers = attention_layers;
  w.eager_saved_bytes = saved_bytes;
  w.peft_forward_bytes = peft_forward;
  w.peft_backward_bytes = peft_backward;
  w.peft_module_passes = peft_module_passes;
  w.expert_delta_elems = expert_delta_elems;
  w.moe_layers = moe_layers;
  w.routed_copies = routed_copies;
  w.act_bytes_per_token =
      static_cast<double>(layers) * ActivationBytesPerToken(model, job, context);
  const double h = static_cast<double>(model.hidden_size);
  const double v = static_cast<double>(model.vocab_size);
  if (first_stage) {
    w.weight_elems += static_cast<double>(model.embedding_params + model.position_embedding_params);
    if (full_method)
      w.trainable_elems +=
          static_cast<double>(model.embedding_params + model.position_embedding_params);
    if (job.method == Method::kPromptTuning)
      w.trainable_elems += static_cast<double>(job.virtual_tokens) * h;
    // PEFT modules_to_save: a trained copy of the embeddings (its gradient is a scatter-add, no
    // GEMM), all-reduced and stepped with the rest.
    if (!full_method && job.save_embedding)
      w.trainable_elems += static_cast<double>(model.embedding_params);
  }
  if (last_stage) {
    // LM head: 2*h*V per token forward, its input gradient always, its weight gradient when trained
    // (Megatron's V/(12*L*h) term; also for a PEFT modules_to_save copy of the head). Logits and
    // the fp32 loss are memory-bound traffic.
    const bool head_trains = full_method || job.save_head;
    w.fwd_flops += 2 * h * v;
    w.bwd_flops += 2 * h * v + (head_trains ? 2 * h * v : 0);
    // Megatron's vocabulary-parallel head: an (tokens, h, V/t) product (column-parallel).
    const GemmShape head_shape{tokens_mb, h, v / static_cast<double>(std::max<int64_t>(job.tp, 1))};
    w.fwd_weighted += FwdWeighted(eff, 2 * h * v, head_shape);
    w.bwd_weighted += BwdWeighted(eff, 2 * h * v + (head_trains ? 2 * h * v : 0), head_shape);
    w.model_flops += 6 * h * v - (head_trains ? 0 : 2 * h * v);
    const double head = static_cast<double>(model.lm_head_params > 0 ? model.lm_head_params : 0);
    w.weight_elems += head + static_cast<double>(model.final_norm_params);
    if (full_method) w.trainable_elems += head + static_cast<double>(model.final_norm_params);
    if (!full_method && job.save_head)
      w.trainable_elems += head > 0 ? head : static_cast<double>(model.embedding_params);
    w.logit_bytes_per_token = (job.chunked_loss ? 2.0 : 6.0) * v / static_cast<double>(job.tp);
    w.act_bytes_per_token += w.logit_bytes_per_token;
  }
  // The layers' frozen weights (the root unit's embeddings and head hold no adapter).
  w.grad_elems = w.trainable_elems + (job.GradientsCoverFrozenWeights() ? weight_elems : 0);
  return w;
}

}  // namespace fmte::time_parts
