// What each GPU holds of the model: layout numbers, dtypes per precision and framework, LoRA
// targets, and the parameters of one pipeline stage after tensor-parallel splitting.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "memory_internal.h"

namespace fmte::memory {

int64_t Saturate(double bytes) {
  if (!(bytes > 0)) return 0;  // also NaN
  if (bytes >= 9.2e18) return std::numeric_limits<int64_t>::max();
  // Rounds as std::llround does (halves away from zero), without the libm call: for a positive
  // double below 2^63 the truncation and the fraction `bytes - whole` are both exact.
  const int64_t whole = static_cast<int64_t>(bytes);
  return bytes - static_cast<double>(whole) >= 0.5 ? whole + 1 : whole;
}

bool IsFsdp(Sharding s) {
  return s == Sharding::kFsdpFull || s == Sharding::kFsdpGradOp || s == Sharding::kFsdpHybrid ||
         s == Sharding::kFsdpNoShard;
}

bool IsPeft(Method m) { return m != Method::kFull; }

Dtypes ChooseDtypes(const TrainingJob& j) {
  Dtypes d;
  const Precision p = j.precision;
  const bool fp32 = p == Precision::kFp32;
  const bool amp = p == Precision::kAmpBf16 || p == Precision::kAmpFp16;
  const bool mixed = p == Precision::kMixedBf16 || p == Precision::kMixedFp16;
  d.act = fp32 ? 4 : 2;
  d.autocast = amp;
  const double w = (fp32 || amp) ? 4 : 2;  // the model's weights as stored
  d.base_weight = w;
  d.gather = fp32 ? 4 : 2;
  d.state = p == Precision::kPureBf16 ? 2 : 4;  // pure bf16: Adam states follow the bf16 params
  d.param = w;
  d.grad = w;
  if (mixed) {
    if (IsFsdp(j.sharding)) {
      // FSDP MixedPrecision: the sharded flat parameter stays fp32 (it is the master) and
      // gradients are kept in the parameter dtype; only the gathered copy is 16-bit
      // (torch/distributed/fsdp/_flat_param.py).
      d.param = 4;
      d.grad = 4;
      d.master = 0;
    } else {
      d.master = 4;
      // Megatron accumulates and all-reduces gradients in fp32 main_grad buffers for bf16
      // (Megatron-LM docs, distributed optimizer: "bf16 param, fp32 grads: 18 / 6 + 12/d");
      // fp16 keeps fp16 grads (20 / 4 + 16/d, counting the fp32 main grad as master-side).
      // DeepSpeed ZeRO keeps 16-bit gradients (ZeRO paper: 2 + 2 + K).
      if (j.framework == Framework::kMegatron) {
        // --grad-reduce-in-bf16 (Bridge ddp.grad_reduce_in_fp32=false): the main_grad buffer
        // takes the parameters' dtype (distributed_data_parallel.py: grad_dtype = torch.float if
        // grad_reduce_in_fp32 else param.dtype; FP8 parameters report bf16).
        d.grad = p == Precision::kMixedBf16 && !j.grad_reduce_bf16 ? 4 : 2;
        if (p == Precision::kMixedFp16) d.master = 8;  // fp32 main param + fp32 main grad
        // The precision-aware optimizer's bf16 moments (megatron/core/optimizer/
        // optimizer_config.py exp_avg_dtype / exp_avg_sq_dtype, TE FusedAdam).
        if (j.optimizer_states_bf16) d.state = 2;
      } else {
        d.grad = 2;
      }
    }
  }
  d.copy_param = d.param;
  d.copy_grad = d.grad;
  d.copy_state = d.state;
  d.copy_master = d.master;
  if (d.master == 0 &&
      (j.trainable_fp32 ||
       (j.method == Method::kQlora && j.kbit_upcast && j.framework != Framework::kTorchtune &&
        j.framework != Framework::kMegatron && j.framework != Framework::kLitgpt))) {
    // prepare_model_for_kbit_training casts the embeddings and the head to fp32 before PEFT
    // copies them (memory_states.cc FrozenBytes), LLaMA-Factory every trainable parameter after
    // (TrainingJob::trainable_fp32): the copies train in fp32.
    d.copy_param = d.copy_grad = d.copy_state = 4;
    d.copy_master = 0;
  }
  if (IsPeft(j.method)) {
    // Adapters / virtual tokens. PEFT keeps them fp32 whatever the base dtype
    // (autocast_adapter_dtype=True, peft/tuners/tuners_utils.py), so their gradients and
    // optimizer states are fp32 too; torchtune and NeMo keep them in the model dtype. litgpt's own
    // LoRA is taken as PEFT's (its published peaks were checked against that reading).
    const bool peft_lib = j.framework == Framework::kHf || j.framework == Framework::kFsdp ||
                          j.framework == Framework::kLitgpt ||
                          (j.framework == Framework::kDeepspeed && !mixed);
    if (peft_lib) {
      d.param = 4;
      d.grad = 4;
      d.master = 0;
      d.state = 4;
    }
  }
  // Custom figures replace what the job implies.
  const ElementBytes& o = j.element_bytes;
  if (o.param >= 0) d.param = o.param;
  if (o.grad >= 0) d.grad = o.grad;
  if (o.master >= 0) d.master = o.master;
  if (o.optimizer_state >= 0) d.state = o.optimizer_state;
  if (o.activation >= 0) d.act = o.activation;
  if (o.frozen_weight >= 0) d.base_weight = o.frozen_weight;
  return d;
}

Layout MakeLayout(const TrainingJob& j) { return MakeLayout(j, j.tp, j.pp, j.vpp); }

Layout MakeLayout(const TrainingJob& j, int64_t tp, int64_t pp, int64_t vpp) {
  Layout l;
  l.t = std::max<int64_t>(1, tp);
  l.p = std::max<int64_t>(1, pp);
  l.v = std::max<int64_t>(1, vpp);
  l.e = std::max<int64_t>(1, j.ep);
  // The experts' split follows the job's etp only in the job's own layout (a whole-model count
  // with tp 1 splits nothing).
  l.et = j.etp > 0 && l.t == j.tp ? j.etp : l.t;
  l.c = std::max<int64_t>(1, j.cp);
  l.d = std::max<int64_t>(1, j.gpus / std::max<int64_t>(1, l.t * l.p));
  l.gpus_per_node = std::max<int64_t>(1, j.EffectiveGpusPerNode());
  l.nodes = std::max<int64_t>(1, j.Nodes());
  l.micro_batches = std::max<int64_t>(1, j.grad_accum);
  l.megatron = j.framework == Framework::kMegatron;
  l.shard = 1;
  if (j.sharding == Sharding::kFsdpHybrid) {
    // HYBRID_SHARD: shard inside a node, replicate across nodes.
    l.shard = std::max<int64_t>(1, std::min(l.d, l.gpus_per_node / (l.t * l.p)));
  } else if (ShardsOptimizer(j.sharding)) {
    l.shard = l.d;
  }
  return l;
}

KindUses::KindUses(const ModelArch& m, int first_layer, int num_layers)
    : size_(m.block_kinds.size()) {
  if (size_ > kInlineKinds) heap_.assign(size_, 0);
  int* counts = heap_.empty() ? inline_.data() : heap_.data();
  const int begin = std::max(first_layer, 0);
  const int end =
      static_cast<int>(std::min<int64_t>(static_cast<int64_t>(first_layer) + num_layers,
                                         static_cast<int64_t>(m.block_kind_of_layer.size())));
  for (int i = begin; i < end; ++i) {
    const int k = m.block_kind_of_layer[static_cast<size_t>(i)];
    if (k >= 0 && static_cast<size_t>(k) < size_) ++counts[k];
  }
  for (size_t k = 0; k < size_; ++k) counted_ += counts[k];
}

int LayerCount(const ModelArch& m) {
  return static_cast<int>(std::clamp<int64_t>(m.num_layers, 0, 1 << 30));
}

namespace {

// bitsandbytes replaces nn.Linear modules only (transformers' replace_with_bnb_linear): not a
// stacked 3-D expert parameter (gpt-oss, Llama 4), nor any routed experts under transformers 5,
// which stacks every mixture of experts' experts (Qwen3MoeExperts' gate_up_proj and down_proj are
// nn.Parameter; bitsandbytes issue #1849, "the experts stay full precision"; axolotl's
// quantize_moe_experts exists for it: GLM-4.7-Flash QLoRA ~127 -> ~23 GiB reserved, its
// docs/expert_quantization.qmd): fmte::KeepsExpertsUnquantized. With quantize_experts the
// framework quantises them, stacked or not.
bool Quantizable(const LinearShape& l, const TrainingJob& j, const ModelArch& m) {
  if (!l.expert) return !l.stacked;
  if (j.quantize_experts) return true;
  return !l.stacked && !KeepsExpertsUnquantized(m, j);
}

// Adds `count` tensors of `n` elements (matrices rows x cols when cols > 0) to the stage.
void AddTrainable(StageParams& s, double n, double rows, double cols, double count = 1) {
  s.trainable += count * n;
  if (cols > 0 && rows > 1) {
    s.factored_state += count * (rows + cols);  // Adafactor: row and column statistics
  } else {
    s.factored_state += count * n;
  }
  if (n < 4096) s.small_trainable += count * n;  // bitsandbytes min_8bit_size
}

}  // namespace

StageParams CountStageParams(const ModelArch& m, const TrainingJob& j, const Layout& lay,
                             const LoraTargets& targets, const KindUses& uses, int stage,
                             int num_layers) {
  StageParams s;
  const double t = static_cast<double>(lay.t);
  const double e = static_cast<double>(lay.e);
  // The routed experts' own tensor-parallel split (Megatron --expert-tensor-parallel-size; tp
  // when not set).
  const double et = static_cast<double>(lay.et);
  // Full fine-tuning of the language model's own weights (not with --freeze-language).
  const bool full = j.TrainsLanguageModel();
  const bool lora = j.method == Method::kLora || j.method == Method::kQlora;
  const bool qlora = j.method == Method::kQlora;
  const double r = static_cast<double>(j.lora_r);
  const double kv_heads = static_cast<double>(m.num_kv_heads);
  for (size_t k = 0; k < m.block_kinds.size(); ++k) {
    const BlockSpec& b = m.block_kinds[k];
    const double n = uses[k];
    if (n == 0) continue;
    double block_params = 0;
    for (const LinearShape& l : b.linears) {
      // Tensor parallel: column-parallel (q,k,v,gate,up) and row-parallel (o,down) linears both
      // split their weight over t; a row-parallel bias is replicated (Megatron
      // core/tensor_parallel/layers.py RowParallelLinear); with fewer KV heads than t the k/v
      // projections are replicated over t/g ranks.
      double split = l.expert ? et : t;
      if ((l.role == LinearRole::kK || l.role == LinearRole::kV) && kv_heads > 0)
        split = std::min(t, kv_heads);
      const bool row_parallel = RowParallel(l.role);
      const double bias = l.has_bias ? static_cast<double>(l.copies * l.out_features) : 0;
      // Expert parallelism: this rank holds copies / e of the routed experts, each split by the
      // expert tensor parallel size (Megatron's default: tp).
      const double ep = l.expert ? e : 1;
      const double params = (row_parallel ? (static_cast<double>(l.Params()) - bias) / split + bias
                                          : static_cast<double>(l.Params()) / split) /
                            ep;
      const double copies = static_cast<double>(l.copies) / ep;
      block_params += params;
      s.total += n * params;
      s.linear += n * params;
      s.largest_module = std::max(s.largest_module, static_cast<double>(l.ModuleParams()) /
                                                        (l.expert ? et : t) / (l.stacked ? ep : 1));
      if (l.expert) {
        s.expert += n * params;
        if (full) s.expert_trainable += n * params;
      }
      if (full) {
        s.trainable_linear += n * params;
        AddTrainable(s, params, static_cast<double>(l.out_features) / t * copies,
                     static_cast<double>(l.in_features), n);
      } else if (qlora && Quantizable(l, j, m)) {
        s.quantized += n * params;
        s.quant_rows += n * copies * static_cast<double>(l.out_features) / t;
      } else {
        s.frozen += n * params;
      }
      if (lora && targets.Matches(l)) {
        // LoRA: A is r x in, B is out x r (PEFT lora/layer.py); per expert copy; B's rank doubled
        // where PEFT adapts the experts' fused gate_up (LoraBRank).
        const double in = static_cast<double>(l.in_features),
                     out = static_cast<double>(l.out_features);
        const double rb = static_cast<double>(LoraBRank(b, l, j, targets));
        const double a = copies * r * in / t, bb = copies * rb * out / t;
        s.total += n * (a + bb);
        s.trainable_linear += n * (a + bb);
        if (l.expert) {
          s.expert += n * (a + bb);
          s.expert_trainable += n * (a + bb);
        }
        AddTrainable(s, a, r, in / t, n);
        AddTrainable(s, bb, out / t, rb, n);
      }
    }
    const double rest = static_cast<double>(b.norm_params + b.other_params);
    block_params += rest;
    s.total += n * rest;
    if (full) {
      AddTrainable(s, rest, 1, 0, n);
    } else {
      s.frozen += n * rest;
    }
    s.largest_block = std::max(s.largest_block, block_params);
  }
  const bool first = stage == 0, last = stage == lay.p - 1;
  const double h = static_cast<double>(m.hidden_size);
  double emb = 0, head = 0, fnorm = 0;
  // Megatron's VocabParallelEmbedding splits the vocabulary over t; transformers' tensor-parallel
  // plans leave embed_tokens replicated and split lm_head column-wise ("colwise_rep").
  const double emb_split = j.framework == Framework::kMegatron ? t : 1;
  if (first)
    emb = static_cast<double>(m.embedding_params) / emb_split +
          static_cast<double>(m.position_embedding_params);
  if (last) {
    fnorm = static_cast<double>(m.final_norm_params);
    head = static_cast<double>(m.lm_head_params) / t;
    // Tied embeddings across stages: Megatron keeps a copy of the word embeddings on the last
    // stage as the output layer (core/models/common/language_module: shared_embedding). litgpt
    // never ties: its GPT has its own lm_head (litgpt/model.py, no tying option in any version),
    // and convert_hf_checkpoint copies the embeddings into lm_head.weight for a checkpoint that
    // has none, so a tied model's head is a second parameter there too.
    if (m.tie_word_embeddings && m.lm_head_params == 0 &&
        (lay.p > 1 || j.framework == Framework::kLitgpt))
      head = static_cast<double>(m.embedding_params) / t;
  }
  // LoRA on the output head (LoraTargets::head): A is r x h, B is vocab x r, split like the head's
  // weight under tensor parallelism (column-parallel: B's rows); one adapter also when PEFT's
  // lm_head Linear shares the embeddings' weight. PEFT injects no adapter into a module it also
  // saves (inject_adapter skips modules_to_save): then the copy below trains instead.
  if (lora && targets.head && last && !j.save_head) {
    const double a = r * h, bb = r * static_cast<double>(m.vocab_size) / t;
    s.head_adapter = a + bb;
    s.total += a + bb;
    s.trainable_linear += a + bb;
    AddTrainable(s, a, r, h);
    AddTrainable(s, bb, static_cast<double>(m.vocab_size) / t, r);
  }
  // PEFT modules_to_save (TrainingJob::save_embedding, save_head): ModulesToSaveWrapper keeps the
  // original module, frozen (counted above), and trains a deep copy of it (peft/utils/other.py):
  // on the first stage a copy of the embeddings, on the last one of the head (of the tied
  // embedding matrix where the head has no weight of its own).
  if (!full) {
    if (first && j.save_embedding)
      s.saved_modules += static_cast<double>(m.embedding_params) / emb_split;
    if (last && j.save_head) {
      s.saved_head = head > 0 ? head : static_cast<double>(m.embedding_params) / t;
      s.saved_modules += s.saved_head;
    }
    s.total += s.saved_modules;
  }
  // A multimodal model's vision encoder and projector run before the first block, on the first
  // stage, replicated under tensor parallelism (their linears are small; counted as one tensor).
  const double vision = first && LoadsVisionTower(m, j) ? static_cast<double>(m.vision_params) : 0;
  s.root = emb + head + fnorm + vision;
  s.head = head;
  s.total += s.root;
  s.linear += head;
  s.largest_module = std::max({s.largest_module, emb, head});
  if (full) {
    if (emb > 0) AddTrainable(s, emb, emb / std::max(h, 1.0), h);
    if (head > 0) AddTrainable(s, head, head / std::max(h, 1.0), h);
    if (fnorm > 0) AddTrainable(s, fnorm, 1, 0);
    s.trainable_linear += head;
    // The loss backward produces the head (tied: embedding) and final-norm gradients first,
    // then one block's.
    s.first_grads = (last ? head + fnorm + (head == 0 && m.tie_word_embeddings ? emb : 0) : 0) +
                    s.largest_block;
  } else if (qlora && j.framework == Framework::kLitgpt) {
    // Lightning's BitsandbytesPrecision replaces every nn.Linear with a 4-bit one while litgpt
    // builds the model (module_init_context; lightning/fabric/plugins/precision/bitsandbytes.py),
    // its lm_head too; the embeddings and norms stay in the precision's dtype.
    s.quantized += head;
    s.quant_rows += head / std::max(h, 1.0);
    s.frozen += s.root - vision - head;
  } else {
    s.frozen += s.root - vision;
  }
  // The vision encoder and projector, also with the language model frozen (freeze_language).
  if (vision > 0 && j.TrainsVisionTower()) {
    AddTrainable(s, vision, 1, 0);
  } else {
    s.frozen += vision;
  }
  if (j.method == Method::kPromptTuning && first) {
    // PEFT PromptEmbedding: num_virtual_tokens x token_dim (peft/tuners/prompt_tuning/model.py).
    const double n = static_cast<double>(j.virtual_tokens) * h;
    s.total += n;
    AddTrainable(s, n, static_cast<double>(j.virtual_tokens), h);
  }
  if (j.method == Method::kPrefixTuning) {
    // PEFT PrefixEncoder without projection: num_virtual_tokens x (num_layers * 2 * token_dim);
    // for GQA models token_dim is the key/value width (peft_model.py
    // _prepare_prompt_learning_config).
    const double kv =
        static_cast<double>(m.num_kv_heads > 0 ? m.num_kv_heads : m.num_heads) *
        static_cast<double>(m.head_dim > 0 ? m.head_dim
                                           : (m.num_heads > 0 ? m.hidden_size / m.num_heads : 0));
    const double n = static_cast<double>(j.virtual_tokens) * num_layers * 2 * kv / t;
    s.total += n;
    AddTrainable(s, n, static_cast<double>(j.virtual_tokens), num_layers * 2 * kv / t);
  }
  // Adapters: small, count them all. With the language model frozen the vision encoder's
  // gradients come at the very end of backward, after the activations are gone (the
  // end-of-backward phase counts them).
  if (j.freeze_language)
    s.first_grads = 0;
  else if (!full)
    s.first_grads = s.trainable;
  return s;
}

}  // namespace fmte::memory
