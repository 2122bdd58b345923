// Llama-shaped families that differ in their biases, norms or MLP, from transformers'
// modeling_<family>.py (the layouts and defaults are in docs/models.md):
//   smollm3: Llama's modules (attention_bias, mlp_bias), tied by default; its NoPE layers hold
//     nothing.
//   ministral: Mistral's (no biases).
//   seed_oss: q, k, v biased by attention_bias (default true), o_proj by attention_out_bias, the
//     gated MLP by mlp_bias.
//   hunyuan_v1_dense: q, k, v, o by attention_bias; query_layernorm and key_layernorm (RMSNorm over
//     head_dim) always; gated MLP without biases.
//   arcee: a plain up/down MLP (ReLU^2) biased by mlp_bias; q, k, v, o by attention_bias.
//   apertus: a plain up/down MLP without biases whose xIELU activation holds two learnable scalars
//     (alpha_p, alpha_n) per layer; q_norm and k_norm over head_dim; q, k, v, o by attention_bias.
//   glm4: fused gate_up_proj; q, k, v biased by attention_bias (default true), o_proj never; four
//     RMSNorms per layer (input, post_self_attn, post_attention, post_mlp).
//   cohere, cohere2: attention and MLP in parallel after one input_layernorm (CohereLayerNorm: a
//     weight only); q, k, v, o by attention_bias; gated MLP without biases; cohere's use_qk_norm
//     adds per-head weights for q and k ((heads + kv_heads) x head_dim); tied by default.
//   stablelm: LayerNorms with biases (input_layernorm, and post_attention_layernorm unless
//     use_parallel_residual); q, k, v biased by use_qkv_bias, o_proj never; qk_layernorm adds one
//     bias-free LayerNorm over head_dim per head for q and k; gated MLP without biases.
//   internlm2 (remote code modeling_internlm2.py): attention.wqkv fused (q + 2 kv) and
//   attention.wo,
//     both biased by `bias` (InternLM2Config's default true; every published checkpoint false);
//     feed_forward.w1 (gate), w3 (up), w2 (down) without biases; attention_norm and ffn_norm
//     RMSNorms; tok_embeddings and an untied output head.
#include <string>

#include "model_config.h"

namespace fmte::model_internal {

void BuildLlamaVariant(ConfigReader& r, ModelArch& arch) {
  const std::string& t = r.model_type();
  CommonDims d = ReadCommon(r, arch);
  const int64_t f = r.Int({"intermediate_size"});
  arch.intermediate_size = f;
  const int64_t q = d.heads * d.head_dim, kv = d.kv_heads * d.head_dim;

  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  if (t == "seed_oss") {
    qkv_bias = r.BoolOr({"attention_bias"}, true);
    o_bias = r.BoolOr({"attention_out_bias"}, false);
    mlp_bias = r.BoolOr({"mlp_bias"}, false);
  } else if (t == "glm4") {
    qkv_bias = r.BoolOr({"attention_bias"}, true);
  } else if (t == "stablelm") {
    qkv_bias = r.BoolOr({"use_qkv_bias"}, false);
  } else if (t != "ministral") {
    qkv_bias = o_bias = r.BoolOr({"attention_bias"}, false);
    if (t == "smollm3" || t == "arcee") mlp_bias = r.BoolOr({"mlp_bias"}, false);
  }

  BlockSpec b;
  if (t == "internlm2") {
    const bool bias = r.BoolOr({"bias"}, true);
    b.linears.push_back(Linear("wqkv", LinearRole::kQkv, d.h, q + 2 * kv, bias));
    b.linears.push_back(Linear("wo", LinearRole::kO, q, d.h, bias));
    b.linears.push_back(Linear("w1", LinearRole::kGate, d.h, f, false));
    b.linears.push_back(Linear("w3", LinearRole::kUp, d.h, f, false));
    b.linears.push_back(Linear("w2", LinearRole::kDown, f, d.h, false));
    AddNorms(b, NormKind::kRms, d.h, 2);
    SetUniformBlocks(arch, std::move(b));
    SetEmbeddingsAndHead(arch, NormKind::kRms, /*head_bias=*/false);
    return;
  }
  AddAttention(b, d.h, d.heads, d.kv_heads, d.head_dim, qkv_bias, o_bias);
  if (t == "cohere" || t == "cohere2") {
    AddNorms(b, NormKind::kRms, d.h, 1);  // CohereLayerNorm: weight only
    if (t == "cohere" && r.BoolOr({"use_qk_norm"}, false)) {
      // q_norm = CohereLayerNorm((heads, head_dim)), k_norm = CohereLayerNorm((kv_heads,
      // head_dim)): one weight per head and channel, q + kv elements in all.
      b.norm_params += q + kv;
      b.num_norms += 2;
    }
    arch.parallel_attn_mlp = true;
  } else if (t == "stablelm") {
    arch.norm = NormKind::kLayer;
    const bool parallel = r.BoolOr({"use_parallel_residual"}, false);
    AddNorms(b, NormKind::kLayer, d.h, parallel ? 1 : 2);
    arch.parallel_attn_mlp = parallel;
    if (r.BoolOr({"qk_layernorm"}, false)) {  // one bias-free LayerNorm(head_dim) per head
      b.norm_params += q + kv;
      b.num_norms += 2;
    }
  } else {
    AddNorms(b, NormKind::kRms, d.h, t == "glm4" ? 4 : 2);
    if (t == "hunyuan_v1_dense" || t == "apertus") AddNorms(b, NormKind::kRms, d.head_dim, 2);
  }

  if (t == "glm4") {
    b.linears.push_back(Linear("gate_up_proj", LinearRole::kGateUp, d.h, 2 * f, false));
    b.linears.push_back(Linear("down_proj", LinearRole::kDown, f, d.h, false));
  } else if (t == "arcee" || t == "apertus") {
    b.linears.push_back(Linear("up_proj", LinearRole::kUp, d.h, f, mlp_bias));
    b.linears.push_back(Linear("down_proj", LinearRole::kDown, f, d.h, mlp_bias));
    arch.gated_mlp = false;
    // transformers' XIELUActivation: alpha_p and alpha_n, one element each (beta and eps are
    // buffers, not parameters).
    if (t == "apertus" && r.StringOr({"hidden_act"}, "xielu") == "xielu") b.other_params += 2;
  } else {
    AddGatedMlp(b, d.h, f, mlp_bias);
  }
  SetUniformBlocks(arch, std::move(b));
  SetEmbeddingsAndHead(arch, arch.norm, /*head_bias=*/false);  // cohere's: weight only (kRms)
}

}  // namespace fmte::model_internal
