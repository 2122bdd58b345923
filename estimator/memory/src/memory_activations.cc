// Activations saved for backward, per saved tensor.
//
// In Korthikanti et al. 2022's setting (Megatron GPT: LayerNorm, 4h GeLU MLP, dropout, eager
// attention, 16-bit activations) the tensors below sum to Table 2 exactly:
//   sequence-region (split by t only with sequence parallel): 2 LayerNorm inputs 4sbh, QKV input
//   2sbh, attention dropout mask sbh, MLP input 2sbh, MLP dropout mask sbh          = 10sbh
//   tensor-parallel region (split by t): Q,K 4sbh, V 2sbh, projection input 2sbh, GeLU input
//   8sbh, fc2 input 8sbh                                                            = 24sbh
//   attention core (split by t, dropped by selective recompute): softmax output 2as^2b, dropout
//   mask as^2b, dropout output 2as^2b                                               = 5as^2b
// Everything else is re-derived from what the frameworks' code saves (docs/formulas.md §4b); each
// tensor's comment names the code path.
#include <algorithm>

#include "memory_internal.h"

namespace fmte::memory {
namespace {

bool HfLike(Framework f) {
  return f == Framework::kHf || f == Framework::kDeepspeed || f == Framework::kFsdp ||
         f == Framework::kLitgpt;
}

// Megatron's GPT recipes train with hidden/attention dropout 0.1 (Korthikanti's setting); HF GPT-2
// configs keep resid/attn dropout 0.1. Llama-style and NeoX configs use 0.
bool HasDropout(const ModelArch& m, const TrainingJob& j) {
  if (m.norm != NormKind::kLayer || m.gated_mlp) return false;
  return j.framework == Framework::kMegatron || m.model_type == "gpt2";
}

// Whether the layers' ops run under torch.autocast, or (litgpt "bf16-true") in 16 bits: the HF
// Trainer (accelerate) autocasts whenever bf16/fp16 is set, also over weights loaded in bf16
// (pure-bf16); other frameworks only with the amp-* precisions.
bool UnderAutocast(const TrainingJob& j, const Dtypes& dt) {
  return dt.autocast || ((j.framework == Framework::kHf || j.framework == Framework::kLitgpt) &&
                         j.precision != Precision::kFp32);
}

}  // namespace

PeftChain PeftChainBytes(double in_bytes, double result_bytes, bool autocast, bool dropout,
                         double in, double out) {
  const double x1 = 4;  // x after _cast_input_dtype to the fp32 adapters
  const double r = result_bytes;
  const double c = autocast ? 2 : x1;  // the products' dtype
  const double sum = std::max(r, c);   // result + lora, promoted
  const double cast_in = in_bytes != x1 ? in_bytes + x1 : 0;
  const double drop = dropout ? 2 * x1 + 1 : 0;  // read, write, 1-byte mask
  const double autocast_in = autocast ? x1 + c : 0;
  const double scale = 2 * c;
  const double add = r + c + sum;
  const double cast_out = sum != r ? sum + r : 0;
  PeftChain b;
  b.forward = in * (cast_in + drop + autocast_in) + out * (scale + add + cast_out);
  // Backward: the result's cast, the sum's grad cast to the 16-bit result and to the product's
  // dtype where they differ, the scaling, the casts and the mask of x, x's gradient accumulated.
  const double grad_split = (sum != r ? sum + r : 0) + (sum != c ? sum + c : 0);
  b.backward =
      out * (cast_out + grad_split + scale) + in * (autocast_in + drop + cast_in + 3 * in_bytes);
  return b;
}

double AdapterSavedBytes(const TrainingJob& j, const Dtypes& dt, double in) {
  // PEFT's copy of x (fp32, 16-bit under autocast: LayerActivations says why), litgpt's 16-bit
  // dropout output, torchtune's and NeMo's x itself; the dropout mask; lora_A's r-wide output.
  const double xb = HfLike(j.framework) ? (UnderAutocast(j, dt) ? 2 : 4) : dt.act;
  return (xb + (j.lora_dropout > 0 ? 1 : 0)) * in + xb * static_cast<double>(j.lora_r);
}

double HeadCopySavedBytes(const TrainingJob& j, const Dtypes& dt, double tokens, double h,
                          double head_params) {
  // Its 16-bit input for its weight gradient and, where autocast runs over an fp32 copy, the
  // 16-bit cast of its weight that F.linear saves (autocast caches the casts of leaves that
  // require grad): as UnderAutocast says, the HF Trainer autocasts whenever bf16/fp16 is set.
  return tokens * h * dt.act + (UnderAutocast(j, dt) && dt.copy_param >= 4 ? 2 * head_params : 0);
}

namespace {

// Bytes one norm saves per token.
double NormBytes(const ModelArch& m, const TrainingJob& j, const Dtypes& dt, bool norm_trainable) {
  const double h = static_cast<double>(m.hidden_size);
  // Megatron's fused LayerNorm/RMSNorm (apex, TE) saves its input plus per-token statistics
  // (Korthikanti: 2sbh per LayerNorm); inductor (torch.compile) does the same.
  if (j.framework == Framework::kMegatron || j.compile) return dt.act * h;
  if (m.norm == NormKind::kRms) {
    // transformers LlamaRMSNorm / torchtune RMSNorm: hidden_states.to(float32) is saved by pow and
    // mul (4h); weight * normed.to(input_dtype) saves the 16-bit normed input when the weight
    // trains (models/llama/modeling_llama.py, torchtune/modules/rms_norm.py).
    return 4 * h + (norm_trainable ? dt.act * h : 0);
  }
  // nn.LayerNorm: autocast runs layer_norm in fp32 (its fp32 input copy is saved).
  return (dt.autocast ? 4 : dt.act) * h;
}

// Whether a norm saves its input tensor itself rather than a copy (an fp32 cast): then the two
// norms of a parallel block (GPT-NeoX's input_layernorm and post_attention_layernorm, litgpt's
// norm_1 and norm_2 without shared_attention_norm), which read the same input, save it once.
bool NormSavesItsInput(const ModelArch& m, const TrainingJob& j, const Dtypes& dt) {
  return j.framework == Framework::kMegatron || j.compile ||
         (m.norm != NormKind::kRms && !dt.autocast);
}

struct Saved {
  double seq = 0;    // per token, split by t only with sequence parallel
  double tp = 0;     // per token, split by t
  double score = 0;  // per token per key position, split by t
};

// Which input group a linear reads (inputs of one group are one tensor).
int InputGroup(LinearRole r) {
  switch (r) {
    case LinearRole::kQ:
    case LinearRole::kK:
    case LinearRole::kV:
    case LinearRole::kQkv:
    case LinearRole::kSsmIn:
      return 0;
    case LinearRole::kO:
    case LinearRole::kSsmOut:
      return 1;
    case LinearRole::kDown:
      return 3;
    default:
      return 2;  // gate, up, gate_up, router, other: the MLP input
  }
}

// Output features and parts (q, k, v) of litgpt's fused qkv linear that its LoRA adapts
// (LoRAQKVLinear enable_lora), for one q/k/v linear of the model's own spec that the targets match;
// `q_dim`, `kv_dim`: the query and key/value widths.
struct QkvParts {
  double out = 0;
  int parts = 0;
};
QkvParts LitgptQkvAdapted(const LoraTargets& targets, const LinearShape& l, double q_dim,
                          double kv_dim) {
  if (l.role != LinearRole::kQkv) return {static_cast<double>(l.out_features), 1};
  // A fused linear in the model's config: its parts by the roles the targets name.
  LinearShape part = l;
  QkvParts out;
  const std::pair<LinearRole, double> parts[] = {
      {LinearRole::kQ, q_dim}, {LinearRole::kK, kv_dim}, {LinearRole::kV, kv_dim}};
  for (const auto& [role, width] : parts) {
    part.role = role;
    if (targets.Matches(part)) {
      out.out += width;
      ++out.parts;
    }
  }
  // A name or all-linear match of the fused module itself adapts all of it.
  if (out.parts == 0) return {static_cast<double>(l.out_features), 3};
  return out;
}

}  // namespace

double LinearInputBytesPerToken(const BlockSpec& block, const Dtypes& dt) {
  double widest[4] = {0, 0, 0, 0};  // per input group (InputGroup)
  const double k = block.experts_per_token > 0 ? static_cast<double>(block.experts_per_token) : 1;
  for (const LinearShape& l : block.linears) {
    const double copies =
        l.expert ? std::min(k, static_cast<double>(l.copies)) : static_cast<double>(l.copies);
    double& w = widest[InputGroup(l.role)];
    w = std::max(w,
                 static_cast<double>(l.in_features) * (l.role == LinearRole::kDown ? copies : 1));
  }
  return dt.act * (widest[0] + widest[1] + widest[2] + widest[3]);
}

double LayerActivations(const ModelArch& m, const TrainingJob& j, const Layout& lay,
                        const Dtypes& dt, const LoraTargets& targets, const BlockSpec& block,
                        bool checkpointed, double* kept, PeftAdapterBytes* peft) {
  if (kept != nullptr) *kept = 0;
  if (peft != nullptr) *peft = PeftAdapterBytes{};
  const double ab = dt.act;
  const double h = static_cast<double>(m.hidden_size);
  const double t = static_cast<double>(lay.t);
  const double b = static_cast<double>(j.micro_batch);
  const bool prompt = j.method == Method::kPromptTuning, prefix = j.method == Method::kPrefixTuning;
  // Context parallelism: a rank runs its seq/cp tokens through every layer and keeps their
  // activations; ring attention (Transformer Engine's AttnFuncWithCPAndKVP2P, torch's
  // _templated_ring_attention) saves the local queries, keys, values and output only, the other
  // ranks' key/value chunks being passed on and dropped (docs/memory.md "Context parallelism").
  const double s =
      static_cast<double>(j.LocalSeqLen()) + (prompt ? static_cast<double>(j.virtual_tokens) : 0);
  const double s_kv = s + (prefix ? static_cast<double>(j.virtual_tokens) : 0);
  const double seq_split = j.sequence_parallel ? t : 1;

  if (checkpointed) {
    // Full recompute keeps each layer's input (Korthikanti: 2sbh per layer; with sequence
    // parallel the input is kept split, Megatron distribute_saved_activations).
    return s * b * ab * h / seq_split;
  }

  const Framework fw = j.framework;
  if (j.OpLevelSac(block)) {
    // torchtitan's op-level selective checkpointing (activation_checkpoint.mode "selective",
    // selective_ac_option "op": torchtitan/distributed/activation_checkpoint.py, _apply_op_sac):
    // in each block the policy saves the outputs of SDPA (its output and fp32 log-sum-exp) and of
    // every other aten.mm in forward order (the 1st, 3rd, ...: wq, wv, w1 and w2 of a Llama
    // block); the checkpoint wrapper keeps the block's input; everything else is recomputed from
    // them while the block's backward runs (ComputeStageActivations adds that layer once).
    const double a = static_cast<double>(m.num_heads);
    const double hd = m.head_dim > 0 ? static_cast<double>(m.head_dim) : (a > 0 ? h / a : 0);
    Saved sv;
    sv.seq += ab * h;  // the block's input
    int64_t mm = 0;
    for (const LinearShape& l : block.linears) {
      for (int64_t c = 0; c < l.copies; ++c) {
        if (++mm % 2 == 0) continue;
        // A row-parallel output (wo, w2) is the full hidden state (sequence region); the others
        // are split by tensor parallelism.
        const bool row_parallel = RowParallel(l.role);
        (row_parallel ? sv.seq : sv.tp) += ab * static_cast<double>(l.out_features);
      }
    }
    sv.tp += ab * a * hd + 4 * a;  // SDPA output and log-sum-exp
    return s * b * (sv.seq / seq_split + sv.tp / t);
  }
  const bool full = j.TrainsLanguageModel();
  const bool lora = j.method == Method::kLora || j.method == Method::kQlora;
  // bitsandbytes MatMul4Bit/MatMul8bitLt save the input whenever it needs a gradient, even for a
  // frozen weight (bitsandbytes/autograd/_functions.py: ctx.tensors = (A, B)); torchtune's NF4
  // linear (torchao linear_nf4) and a frozen nn.Linear do not.
  const bool base_saves = full || (j.method == Method::kQlora && fw != Framework::kTorchtune);
  const double a = static_cast<double>(m.num_heads);
  const double g = static_cast<double>(m.num_kv_heads > 0 ? m.num_kv_heads : m.num_heads);
  const double hd = m.head_dim > 0 ? static_cast<double>(m.head_dim) : (a > 0 ? h / a : 0);
  const double q_dim = a * hd, kv_dim = g * hd;
  const bool dropout = HasDropout(m, j);
  // Selective recompute of the attention core (Megatron's core_attn, its default module).
  const bool selective = j.Recomputes(RecomputeModule::kCoreAttn);
  const double k_active =
      block.experts_per_token > 0 ? static_cast<double>(block.experts_per_token) : 1;

  Saved sv;
  Saved peft_saved;                            // of sv: PEFT's adapters' own tensors
  double peft_forward = 0, peft_backward = 0;  // PeftChainBytes per token, whole (before TP)
  double mask = 0;  // per token per key position, not split by tensor parallelism
  // Norms (sequence region).
  const int64_t norm_inputs = m.parallel_attn_mlp && NormSavesItsInput(m, j, dt)
                                  ? std::min<int64_t>(block.num_norms, 1)
                                  : block.num_norms;
  sv.seq += static_cast<double>(norm_inputs) * NormBytes(m, j, dt, full);

  // litgpt's attention input is one fused qkv linear in every version (lit_gpt/model.py
  // CausalSelfAttention.attn, litgpt/model.py .qkv), whose LoRA is one LoRAQKVLinear: one lora_A
  // over the shared input for the enabled parts (enable_lora (q, k, v)), and zero_pad, whose
  // index_copy saves its source, the enabled parts' r-to-out products, when not all three are on.
  // litgpt's other LoRALinear modules apply their own lora_dropout, which is the identity at 0
  // (lambda x: x), so without autocast and dropout every lora_A of an input group saves the same
  // input tensor. (Saved tensors counted with saved_tensors_hooks on lit-gpt 8641822's own model
  // and LoRA code, docs/memory.md "litgpt's attention and LoRA".)
  const bool litgpt = fw == Framework::kLitgpt;
  const bool litgpt_shared_x = litgpt && !dt.autocast && j.lora_dropout <= 0;
  double litgpt_qkv_out = 0, litgpt_qkv_total = 0;  // adapted and all q/k/v output features
  int litgpt_qkv_parts = 0;

  // Linear inputs, one per input group (q/k/v share the attention input, gate/up the MLP input).
  bool group_saved[4] = {false, false, false, false};
  bool group_adapted[4] = {false, false, false, false};
  double mlp_width = 0;     // intermediate activations per token (routed experts: k of them run)
  double routed_width = 0;  // of mlp_width: the routed experts'
  double experts_total = 0;
  for (const LinearShape& l : block.linears) {
    const int grp = InputGroup(l.role);
    if (base_saves) group_saved[grp] = true;
    if (l.role == LinearRole::kDown) {
      const double width = static_cast<double>(l.in_features) *
                           (l.expert ? std::min(k_active, static_cast<double>(l.copies))
                                     : static_cast<double>(l.copies));
      mlp_width += width;
      if (l.expert) routed_width += width;
    }
    if (l.expert) experts_total = std::max(experts_total, static_cast<double>(l.copies));
    if (litgpt && grp == 0) litgpt_qkv_total += static_cast<double>(l.out_features * l.copies);
    if (lora && targets.Matches(l)) {
      // litgpt builds a checkpoint's fused gate_up_proj (Phi-3) as its LLaMAMLP's fc_1 and fc_2,
      // two LoRALinear modules, each with its own lora_dropout of the shared input.
      const double modules = litgpt && l.role == LinearRole::kGateUp ? 2 : 1;
      const double copies = modules * (l.expert ? std::min(k_active, static_cast<double>(l.copies))
                                                : static_cast<double>(l.copies));
      const double in = static_cast<double>(l.in_features);
      const bool row_parallel = RowParallel(l.role);
      if (litgpt && grp == 0) {
        const QkvParts p = LitgptQkvAdapted(targets, l, q_dim, kv_dim);
        litgpt_qkv_out += p.out * static_cast<double>(l.copies);
        litgpt_qkv_parts += p.parts;
      } else if (litgpt_shared_x) {
        group_adapted[grp] = true;
        (row_parallel ? sv.tp : sv.seq) += copies * ab * static_cast<double>(j.lora_r);
      } else if (HfLike(fw)) {
        // PEFT casts x to the fp32 adapter dtype in every adapted module (peft/tuners/lora/
        // layer.py Linear.forward, _cast_input_dtype). Under autocast lora_A's F.linear casts that
        // copy back to 16 bits and saves the 16-bit copy; without autocast it saves the fp32 copy.
        // lora_dropout > 0 (nn.Dropout) adds a 1-byte mask of the input; lora_B saves lora_A's
        // r-wide output. litgpt's LoRA keeps the adapters in the model's dtype and casts nothing
        // (litgpt/lora.py LoRALinear.forward), which in 16 bits saves the same 2 + 1 bytes.
        // Measured (tests/data/memory-measured/measured-h100-hf.csv): all-linear
        // LoRA of Llama-3.1-8B without checkpointing, 2 x 2048 tokens, dropout 0, HF Trainer bf16
        // peaks at 47.98 GiB, which 2 bytes per input element fit and 4 over-predict by 9.5 GiB.
        const double bytes = copies * AdapterSavedBytes(j, dt, in);
        (row_parallel ? sv.tp : sv.seq) += bytes;
        if (!litgpt) {
          (row_parallel ? peft_saved.tp : peft_saved.seq) += bytes;
          // The input's dtype: 16 bits, or under autocast over fp32 weights (amp) the fp32
          // residual stream's norm output for the attention and MLP inputs.
          const bool autocast = UnderAutocast(j, dt);
          const bool fp32_in = autocast && dt.param >= 4 && (grp == 0 || grp == 2);
          const PeftChain c =
              PeftChainBytes(fp32_in ? 4 : ab, autocast ? 2 : ab, autocast, j.lora_dropout > 0, in,
                             static_cast<double>(l.out_features));
          peft_forward += copies * c.forward;
          peft_backward += copies * c.backward;
        }
      } else {
        // torchtune LoRALinear / NeMo adapters: lora_a saves x itself (shared per input group).
        group_adapted[grp] = true;
        (row_parallel ? sv.tp : sv.seq) += copies * ab * static_cast<double>(j.lora_r);
      }
    }
  }
  if (litgpt_qkv_out > 0) {
    // The fused module's lora_A input: x itself (shared with whatever else saves it), or
    // lora_dropout's output and its 1-byte mask, or (autocast) a 16-bit copy; its r-wide output
    // per enabled part; zero_pad's source.
    const double xb = UnderAutocast(j, dt) ? 2 : 4;
    if (litgpt_shared_x) {
      group_adapted[0] = true;
    } else {
      sv.seq += (xb + (j.lora_dropout > 0 ? 1 : 0)) * h;
    }
    sv.seq += xb * static_cast<double>(j.lora_r) * litgpt_qkv_parts;
    if (litgpt_qkv_out < litgpt_qkv_total) sv.tp += ab * litgpt_qkv_out;
  }
  // Bytes per element of a linear input saved for the weight gradient. Transformer Engine's FP8
  // linears (Megatron --fp8-format) save the input already cast to FP8 (te/pytorch/module/
  // linear.py, layernorm_linear.py: the quantized input is what backward's wgrad GEMM reads);
  // torchao's Float8Linear saves the high-precision input and casts again in backward
  // (torchao/float8/float8_linear.py), so its inputs stay 16-bit.
  const double lb = fw == Framework::kMegatron && j.fp8 != Fp8::kNone ? 1 : ab;
  // Attention input (QKV linear input) and MLP input (sequence region), saved once per group.
  if (group_saved[0] || group_adapted[0]) sv.seq += (group_saved[0] ? lb : ab) * h;
  const bool moe = block.experts_per_token > 0;
  // Megatron's selective recompute modules (transformer_layer.py, moe/experts.py): "moe"
  // checkpoints the whole MoE layer on its input; "layernorm" discards the output of a norm that
  // is a module of its own (a MoE layer's pre_mlp_layernorm; elsewhere Transformer Engine fuses
  // the norm into the next linear) and recomputes it in backward.
  const bool moe_recomputed = moe && j.Recomputes(RecomputeModule::kMoe);
  const bool mlp_norm_recomputed =
      moe && fw == Framework::kMegatron && j.Recomputes(RecomputeModule::kLayernorm);
  if ((group_saved[2] || group_adapted[2]) &&
      !(m.parallel_attn_mlp && (group_saved[0] || group_adapted[0])) && !mlp_norm_recomputed) {
    sv.seq += (group_saved[2] ? lb : ab) * h;
  }
  if (moe && !moe_recomputed) {
    sv.tp += lb * h * k_active;   // tokens permuted/copied to their k experts
    sv.seq += 4 * experts_total;  // fp32 router logits/probabilities
  }

  const bool ssm = block.ssm.heads > 0;
  if (ssm) {
    // Mamba-2's fused mamba_split_conv1d_scan_combined (mamba_ssm/ops/triton/ssd_combined.py,
    // called by Megatron's MambaMixer and by transformers' cuda_kernels_forward) saves the in_proj
    // output zxbcdt and the scan's output before the gated norm (with an fp32 rstd per group) and
    // recomputes the conv, the scan and the norm in backward. Megatron's out_proj is a linear of
    // its own, which saves its input; transformers passes out_proj's weight into the kernel, which
    // recomputes that input too.
    const BlockSpec::Ssm& mx = block.ssm;
    const double inner = static_cast<double>(mx.Inner());
    const double proj =
        2 * inner + 2 * static_cast<double>(mx.groups * mx.state) + static_cast<double>(mx.heads);
    sv.tp += ab * (proj + inner) + 4 * static_cast<double>(mx.groups);
    if ((group_saved[1] || group_adapted[1]) && fw == Framework::kMegatron)
      sv.tp += (group_saved[1] ? lb : ab) * inner;
  }
  const bool attends = block.HasAttention();

  // Attention core.
  // litgpt computes Gemma-2's capped scores itself (scaled_dot_product_attention: "with
  // softcapping we cannot use SDPA"): q @ k.mT, tanh(x / cap) * cap, the mask, softmax in fp32 and
  // .to(q.dtype), then scores @ v.
  const bool litgpt_softcap = litgpt && m.attn_logit_softcapping > 0;
  const bool eager = AttentionUsed(m, j) == Attention::kEager || litgpt_softcap;
  const bool native_gqa = fw == Framework::kMegatron;  // TE/flash take GQA natively
  // litgpt's v is a view of the fused qkv output when nothing expands K/V (multi-head attention:
  // view, permute or transpose, split, reshape), so what SDPA saves for v keeps that whole output
  // alive; q and k are new tensors (rotary embedding, torch.cat). transformers' fused-qkv models
  // with rotary embeddings do the same (Phi-3's qkv_proj sliced, GPT-NeoX's query_key_value
  // chunked; repeat_kv returns v itself for multi-head attention): measured on an H100, Phi-3-mini
  // keeps 2 (q + 2 kv) bytes per token per layer (scripts/device/peak_snapshot.py). Without rotary
  // (GPT-2's c_attn) q, k and v are all views and together are that output, counted as they are.
  const bool fused_qkv =
      std::any_of(block.linears.begin(), block.linears.end(),
                  [](const LinearShape& l) { return l.role == LinearRole::kQkv; });
  const bool v_keeps_qkv =
      attends && g == a &&
      (litgpt || (HfLike(fw) && fused_qkv && m.position_embedding_params == 0));
  const double v_saved = v_keeps_qkv ? q_dim + 2 * kv_dim : q_dim;
  if (!attends) {
    // A Mamba, MLP or MoE layer of a hybrid model: no attention core.
  } else if (eager) {
    // Q and K for Q K^T, V for the product with the probabilities; HF repeat_kv and Megatron's
    // unfused path expand K/V to all heads before the matmuls.
    sv.tp += ab * (q_dim + q_dim) + ab * v_saved * (s_kv / s);
    if (!selective && litgpt_softcap) {
      // tanh saves its output, softmax its fp32 output, scores @ v the 16-bit copy.
      sv.score += a * (ab + 4 + ab);
    } else if (!selective) {
      if (fw == Framework::kMegatron) {
        // Fused scale-mask-softmax saves its output; dropout saves a 1-byte mask and its output.
        sv.score += a * (dropout ? ab + 1 + ab : ab);
      } else {
        // transformers eager_attention_forward: softmax(dtype=float32) saves its fp32 output and
        // .to(query.dtype) is saved by the matmul with V.
        sv.score += a * (4 + ab) + (dropout ? a * (1 + ab) : 0);
      }
    }
  } else {
    // SDPA / flash: q, k, v, output and the fp32 log-sum-exp per head (O(s) statistics).
    const double kv_saved = native_gqa ? kv_dim : q_dim;  // HF/torchtune expand K/V (repeat_kv)
    sv.tp += ab * q_dim + ab * (kv_saved + (v_keeps_qkv ? v_saved : kv_saved)) * (s_kv / s);
    if (!selective) sv.tp += ab * q_dim + 4 * a;
    // A boolean mask reaches SDPA (HfMasksAttention), which converts it to the query's dtype
    // (aten convert_boolean_attn_mask) in every call; the memory-efficient kernel saves that copy,
    // one (b, 1, s, s_kv) tensor per windowed layer (measured on an H100: Phi-3-mini at 2 x 4096
    // tokens keeps 64 MiB per layer, scripts/device/peak_snapshot.py).
    if (HfMasksAttention(m, j, s_kv) && m.num_layers > 0) {
      mask = (UnderAutocast(j, dt) ? 2 : ab) * static_cast<double>(m.sliding_window_layers) /
             static_cast<double>(m.num_layers);
    }
  }
  // Output projection input: a contiguous copy of the attention output in HF/torchtune and in
  // Megatron's unfused path; Megatron's fused path hands its saved output to linear_proj.
  if ((group_saved[1] || group_adapted[1]) && !ssm) {
    if (eager || fw != Framework::kMegatron || selective)
      sv.tp += (group_saved[1] ? lb : ab) * q_dim;
  }
  if (dropout) sv.seq += 2 * h;  // 1-byte masks after attention and after the MLP

  // MLP intermediate tensors (tensor-parallel region): `f` channels keep the activation's input,
  // `f_down` the down projection's input. Recompute modules drop them: "moe" all of a MoE layer's,
  // "shared_experts" the shared experts', "moe_act" the routed experts' activation output (the
  // down projection's input, rebuilt from the kept activation input), "mlp" a dense MLP's.
  double f = mlp_width, f_down = mlp_width;
  if (moe_recomputed || (!moe && j.Recomputes(RecomputeModule::kMlp))) {
    f = f_down = 0;
  } else if (moe) {
    if (j.Recomputes(RecomputeModule::kSharedExperts)) {
      f -= mlp_width - routed_width;
      f_down -= mlp_width - routed_width;
    }
    if (j.Recomputes(RecomputeModule::kMoeAct)) f_down -= routed_width;
  }
  const bool down_saves = group_saved[3] || group_adapted[3];
  const double down_b = group_saved[3] ? lb : ab;  // the down projection's input
  if (!m.gated_mlp) {
    if (m.gelu_new && !j.compile && HfLike(fw) && fw != Framework::kLitgpt) {
      // transformers' NewGELUActivation (hidden_act gelu_new: GPT-2, GPT-J, Phi-1/1.5/2) is
      // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3)))) in separate ops
      // (transformers/activations.py). Saved for backward: pow's input, tanh's output, and both
      // factors of the last product (0.5 * x and 1 + tanh). Under autocast pow runs in fp32, so
      // its input is a 4-byte copy and everything after it is fp32 except 0.5 * x. Measured
      // (measured-h100-hf.csv): phi-2 full fine-tuning without checkpointing peaks 17.8 GiB
      // above what a fused GeLU's 2 bytes per element give.
      sv.tp += (UnderAutocast(j, dt) ? 4 + 4 + ab + 4 : 4 * ab) * f;
    } else {
      sv.tp += ab * f;  // GeLU input
    }
    if (down_saves) sv.tp += down_b * f_down;  // fc2 input (GeLU output)
  } else if (fw == Framework::kMegatron) {
    sv.tp += 2 * ab * f;  // fused bias_swiglu saves its 2f-wide input
    if (down_saves) sv.tp += down_b * f_down;
  } else if (j.compile) {
    sv.tp += 2 * ab * f;  // inductor keeps gate and up, recomputes silu*up
    if (down_saves) sv.tp += down_b * f_down;
  } else {
    // act_fn(gate_proj(x)) * up_proj(x): silu saves its input, mul saves both operands
    // (modeling_llama.py LlamaMLP, torchtune FeedForward).
    sv.tp += 3 * ab * f;
    if (down_saves) sv.tp += down_b * f_down;
  }

  if (kept != nullptr) {
    *kept =
        s * b * s_kv * mask + (v_keeps_qkv ? s * b * ab * (v_saved - q_dim) * (s_kv / s) / t : 0);
  }
  if (peft != nullptr) {
    peft->saved = s * b * (peft_saved.seq / seq_split + peft_saved.tp / t);
    peft->forward = s * b * peft_forward / t;
    peft->backward = s * b * peft_backward / t;
  }
  return s * b * (sv.seq / seq_split + sv.tp / t) + s * b * s_kv * (sv.score / t + mask);
}

double GenerationKvCacheBytes(const ModelArch& m, const TrainingJob& j, const Layout& lay,
                              const Dtypes& dt, const KindUses& uses) {
  if (j.generation_batch <= 0) return 0;
  // transformers' DynamicCache: keys and values of every attention layer (Mamba layers keep a small
  // fixed state, not counted) for each sequence up to its full length, a sliding-window layer's up
  // to its window, in the activations' dtype, split over tensor parallelism with the heads. (MLA
  // caches its compressed keys and values under transformers as full heads: counted as full
  // heads.)
  double attention_layers = 0;
  for (size_t kind = 0; kind < uses.size(); ++kind)
    if (m.block_kinds[kind].HasAttention()) attention_layers += uses[kind];
  const double all_layers = static_cast<double>(std::max<int64_t>(1, m.num_layers));
  const double sliding =
      m.sliding_window > 0
          ? attention_layers *
                std::min(1.0, static_cast<double>(m.sliding_window_layers) / all_layers)
          : 0;
  const double seq = static_cast<double>(j.seq_len);
  const double cached_positions =
      (attention_layers - sliding) * seq +
      sliding * std::min(seq, static_cast<double>(std::max<int64_t>(1, m.sliding_window)));
  const double kv_heads = static_cast<double>(m.num_kv_heads > 0 ? m.num_kv_heads : m.num_heads);
  const double head_dim = static_cast<double>(
      m.head_dim > 0 ? m.head_dim : m.hidden_size / std::max<int64_t>(1, m.num_heads));
  return static_cast<double>(j.generation_batch) * cached_positions * 2 * kv_heads * head_dim *
         dt.act / static_cast<double>(lay.t);
}

double EvalLayerBytes(const ModelArch& m, const TrainingJob& j, const Layout& lay, const Dtypes& dt,
                      const KindUses& uses) {
  // Under no_grad nothing is saved: each intermediate is freed as soon as the next op has read it,
  // so one layer's forward holds at most a few of its own tensors beside the residual stream. Per
  // token, for the widest block kind of the stage, the largest of: the norm (its fp32 input copy
  // and the fp32 normed output, transformers LlamaRMSNorm); the attention (its q, k, v projections
  // and the attention output; eager attention also the 16-bit scores and the fp32 softmax,
  // modeling_llama.py eager_attention_forward); the MLP (SwiGLU down_proj(act(gate(x)) * up(x)):
  // act's output, up's output and their product, 1.5x the gate and up outputs; a plain MLP its
  // first linear's output and the activation's, 2x; a fused gate_up output, its activation and the
  // product, 2x; routed experts one expert at a time over about experts_per_token / experts of the
  // tokens, transformers' per-expert loop), plus the residual stream and the normed input.
  const double b = static_cast<double>(j.eval_batch);
  const double s = static_cast<double>(j.LocalSeqLen());
  const double tokens = b * s;
  const double t = static_cast<double>(lay.t);
  const double h = static_cast<double>(m.hidden_size);
  const double ab = dt.act;
  double widest = 0;
  for (size_t k = 0; k < m.block_kinds.size() && k < uses.size(); ++k) {
    if (uses[k] == 0) continue;
    const BlockSpec& block = m.block_kinds[k];
    double attn = 0, mlp = 0, experts = 0;
    for (const LinearShape& l : block.linears) {
      const double out =
          static_cast<double>(l.out_features) / (l.role == LinearRole::kRouter ? 1 : t);
      switch (l.role) {
        case LinearRole::kQ:
          attn += 2 * out;  // q and the attention output of the same width
          break;
        case LinearRole::kK:
        case LinearRole::kV:
        case LinearRole::kSsmIn:
          attn += out;
          break;
        case LinearRole::kQkv:
          attn += 2 * out;  // the fused output and the split, rotated copies
          break;
        case LinearRole::kGate:
        case LinearRole::kUp:
        case LinearRole::kGateUp: {
          const double factor = l.role == LinearRole::kGateUp || !m.gated_mlp ? 2.0 : 1.5;
          if (l.expert) {
            const double copies = static_cast<double>(std::max<int64_t>(l.copies, 1));
            const double share =
                std::min(1.0, static_cast<double>(block.experts_per_token) / copies);
            experts += factor * out * share;
          } else {
            mlp += factor * out * static_cast<double>(std::max<int64_t>(l.copies, 1));
          }
          break;
        }
        default:
          break;
      }
    }
    double per_token = std::max({attn * ab, (mlp + experts) * ab, 8 * h});
    if (block.HasAttention() && AttentionUsed(m, j) == Attention::kEager) {
      const double heads = static_cast<double>(m.num_heads) / t;
      per_token = std::max(per_token, attn * ab + heads * s * (ab + 4));
    }
    widest = std::max(widest, per_token + 2 * ab * h);
  }
  return tokens * widest;
}

double InFlightLayerFactor(const Layout& lay, int stage) {
  if (lay.p <= 1) return 1;
  const double m = static_cast<double>(lay.micro_batches);
  const double p = static_cast<double>(lay.p), st = static_cast<double>(stage);
  if (lay.v <= 1) {
    // 1F1B (PipeDream-flush): stage i warms up with p - i - 1 forwards, then holds one more
    // (Megatron core/pipeline_parallel/schedules.py
    // forward_backward_pipelining_without_interleaving).
    return std::max(1.0, std::min(p - st, m));
  }
  // Interleaved: (p - i - 1) * 2 + (v - 1) * p warm-up chunks plus one, each chunk 1/v of the
  // stage's layers; stage 0 gives Korthikanti's L * (1 + (p - 1) / (p v)).
  const double v = static_cast<double>(lay.v);
  const double chunks = std::min((p - st - 1) * 2 + (v - 1) * p + 1, m * v);
  return std::max(1.0 / v, chunks / v);
}

StageActivations ComputeStageActivations(const ModelArch& m, const TrainingJob& j,
                                         const Layout& lay, const Dtypes& dt,
                                         const LoraTargets& targets, const KindUses& uses,
                                         int stage) {
  StageActivations out;
  const bool full_ckpt = j.activation_checkpointing == Checkpointing::kFull;
  bool op_sac = false;
  double saved = 0, widest_layer = 0;
  TrainingJob plain;  // the job without checkpointing, for an op-level SAC layer's recompute
  // Megatron's selective recompute of modules beyond the attention core (recompute_modules): the
  // job with the attention core's alone, to size what a module rebuilds.
  const bool module_recompute =
      j.activation_checkpointing == Checkpointing::kSelective &&
      (j.recompute_modules & ~RecomputeModuleBit(RecomputeModule::kCoreAttn)) != 0;
  TrainingJob core_attn_only;
  if (module_recompute) {
    core_attn_only = j;
    core_attn_only.recompute_modules = RecomputeModuleBit(RecomputeModule::kCoreAttn);
  }
  double widest_module = 0;
  // Full checkpointing of some layers only (TrainingJob::recompute_method): the recomputed share
  // keeps one input per group of RecomputeGroup() layers, the rest all their activations.
  double stage_layers = 0;
  for (size_t k = 0; k < m.block_kinds.size(); ++k) stage_layers += uses[k];
  // A group holds at most the layers of one virtual chunk (Megatron groups within a chunk).
  const double group =
      std::max(1.0, std::min(static_cast<double>(j.RecomputeGroup()),
                             stage_layers / static_cast<double>(std::max<int64_t>(lay.v, 1))));
  const double recomputed =
      full_ckpt && stage_layers > 0
          ? static_cast<double>(j.RecomputedLayers(static_cast<int64_t>(stage_layers), lay.v)) /
                stage_layers
          : 0;
  for (size_t k = 0; k < m.block_kinds.size(); ++k) {
    if (uses[k] == 0) continue;
    const BlockSpec& block = m.block_kinds[k];
    const double per = LayerActivations(m, j, lay, dt, targets, block, full_ckpt);
    double uncheckpointed = per;
    if (full_ckpt) {
      uncheckpointed = LayerActivations(m, j, lay, dt, targets, block, false);
      saved += uses[k] * (recomputed * per / group + (1 - recomputed) * uncheckpointed);
    } else {
      saved += uses[k] * per;
    }
    if (module_recompute) {
      // What a recompute module dropped from the layer comes back while its backward runs.
      widest_module = std::max(
          widest_module, LayerActivations(m, core_attn_only, lay, dt, targets, block, false) - per);
    }
    if (!full_ckpt && j.OpLevelSac(block)) {
      if (!op_sac) {
        plain = j;
        plain.activation_checkpointing = Checkpointing::kNone;
      }
      op_sac = true;
      uncheckpointed = LayerActivations(m, plain, lay, dt, targets, block, false);
    }
    widest_layer = std::max(widest_layer, uncheckpointed);
  }
  saved *= InFlightLayerFactor(lay, stage);
  if (j.activation_offload && saved > 0) {
    // torchtune OffloadActivations: saved tensors go to pinned host memory and come back one
    // layer ahead of backward; about two layers stay on the GPU.
    const double keep = std::min(saved, 2 * widest_layer);
    out.cpu = saved - keep;
    saved = keep;
  }
  // Full recompute: one layer's activations (one group's, for groups of layers) are rebuilt
  // while its backward runs (op-level SAC rebuilds what it did not save of that layer: at most
  // the whole layer).
  if ((full_ckpt && recomputed > 0) || op_sac) {
    out.rebuilt = (full_ckpt ? group : 1) * widest_layer;
    saved += out.rebuilt;
  } else if (widest_module > 0) {
    out.rebuilt = widest_module;
    saved += out.rebuilt;
  }
  if (stage == lay.p - 1) {
    // Final norm and the LM head input (when the head trains), one micro-batch in flight.
    const double s =
        static_cast<double>(j.LocalSeqLen()) +
        (j.method == Method::kPromptTuning ? static_cast<double>(j.virtual_tokens) : 0);
    const double tokens = s * static_cast<double>(j.micro_batch);
    const bool full = j.TrainsLanguageModel();
    const double h = static_cast<double>(m.hidden_size);
    saved += tokens * (NormBytes(m, j, dt, full) + (full ? dt.act * h : 0));
  }
  out.gpu = saved;
  return out;
}

}  // namespace fmte::memory
