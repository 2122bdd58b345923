// Builders for the Llama-shaped families: separate q/k/v/o projections, gated MLP, RMSNorm.
// Module names and biases follow transformers' modeling_<family>.py:
//   llama/granite: q,k,v,o bias = attention_bias; gate/up/down bias = mlp_bias; 2 RMSNorms.
//   mistral: no biases.  qwen2: q,k,v bias always, o without.  qwen3: attention_bias on q,k,v,o
//   plus q_norm/k_norm (RMSNorm over head_dim) per layer.  gemma: head_dim given, tied embeddings
//   by default.  gemma2: four RMSNorms per layer (input, post_attention, pre_ and
//   post_feedforward). gemma3_text: gemma2's four plus q_norm/k_norm over head_dim. mixtral:
//   block_sparse_moe.gate (h->E, no bias) + experts w1/w3/w2. qwen2_moe/qwen3_moe: mlp.gate (h->E,
//   no bias) + experts gate/up/down of moe_intermediate_size; sparse on layers with (i+1) %
//   decoder_sparse_step == 0 unless i is in mlp_only_layers; qwen2_moe also a shared_expert
//   (shared_expert_intermediate_size) and shared_expert_gate (h->1). phi3: fused qkv_proj (h ->
//   (heads + 2*kv_heads)*head_dim) and gate_up_proj (h -> 2f), o_proj, down_proj, no biases, two
//   RMSNorms, untied by default (modeling_phi3.py).
#include <algorithm>
#include <string>

#include "model_config.h"

namespace fmte::model_internal {
namespace {

// The config class defaults of tie_word_embeddings (transformers configuration_<family>.py).
bool DefaultTie(const std::string& t) {
  return t == "gemma" || t == "gemma2" || t == "gemma3_text" || t == "smollm3" || t == "cohere" ||
         t == "cohere2";
}

}  // namespace

CommonDims ReadCommon(ConfigReader& r, ModelArch& arch) {
  CommonDims d{};
  d.h = r.Int({"hidden_size"});
  d.layers = r.Layers({"num_hidden_layers"});
  d.heads = r.Int({"num_attention_heads"});
  d.vocab = r.Int({"vocab_size"});
  // LLaMA-1 configs have no num_key_value_heads: plain multi-head attention.
  d.kv_heads = r.IntOr({"num_key_value_heads"}, d.heads);
  if (r.Has({"head_dim"})) {
    d.head_dim = r.Int({"head_dim"});
  } else if (d.heads > 0 && d.h % d.heads == 0) {
    d.head_dim = d.h / d.heads;
  } else if (d.heads > 0) {
    r.Fail("hidden_size " + std::to_string(d.h) + " is not divisible by num_attention_heads " +
           std::to_string(d.heads) + " and no head_dim is given");
  }
  if (d.kv_heads > 0 && d.heads % d.kv_heads != 0) {
    r.Fail("num_attention_heads " + std::to_string(d.heads) +
           " is not a multiple of num_key_value_heads " + std::to_string(d.kv_heads));
  }
  arch.hidden_size = d.h;
  arch.num_layers = d.layers;
  arch.num_heads = d.heads;
  arch.num_kv_heads = d.kv_heads;
  arch.head_dim = d.head_dim;
  arch.vocab_size = d.vocab;
  arch.max_position_embeddings = r.IntOr({"max_position_embeddings"}, 0);
  arch.norm = NormKind::kRms;
  arch.gated_mlp = true;
  arch.parallel_attn_mlp = false;
  arch.tie_word_embeddings = r.BoolOr({"tie_word_embeddings"}, DefaultTie(r.model_type()));
  return d;
}

namespace {

// Attention plus norms of one Llama-shaped block (without its MLP).
BlockSpec AttentionBlock(ConfigReader& r, const CommonDims& d) {
  const std::string& t = r.model_type();
  BlockSpec b;
  bool qkv_bias = false, o_bias = false;
  if (t == "qwen2" || t == "qwen2_moe") {
    qkv_bias = true;
  } else if (t != "mistral" && t != "mixtral") {
    qkv_bias = o_bias = r.BoolOr({"attention_bias"}, false);
  }
  AddAttention(b, d.h, d.heads, d.kv_heads, d.head_dim, qkv_bias, o_bias);
  AddNorms(b, NormKind::kRms, d.h, t == "gemma2" || t == "gemma3_text" ? 4 : 2);
  if (t == "qwen3" || t == "qwen3_moe" || t == "gemma3_text")
    AddNorms(b, NormKind::kRms, d.head_dim, 2);  // q_norm, k_norm
  return b;
}

}  // namespace

void BuildLlamaLike(ConfigReader& r, ModelArch& arch) {
  CommonDims d = ReadCommon(r, arch);
  int64_t f = r.Int({"intermediate_size"});
  arch.intermediate_size = f;
  const std::string& t = r.model_type();
  bool mlp_bias = (t == "llama" || t == "granite") && r.BoolOr({"mlp_bias"}, false);
  BlockSpec b = AttentionBlock(r, d);
  AddGatedMlp(b, d.h, f, mlp_bias);
  SetUniformBlocks(arch, std::move(b));
  SetEmbeddingsAndHead(arch, NormKind::kRms, /*head_bias=*/false);
}

// OLMo-2 and OLMo-3 (transformers modeling_olmo2.py / modeling_olmo3.py): no input_layernorm; an
// RMSNorm after attention and one after the MLP (post_attention_layernorm,
// post_feedforward_layernorm); q_norm and k_norm are RMSNorms over the whole q and k projections
// (heads * head_dim and kv_heads * head_dim wide, applied before the split into heads).
void BuildOlmo2(ConfigReader& r, ModelArch& arch) {
  CommonDims d = ReadCommon(r, arch);
  int64_t f = r.Int({"intermediate_size"});
  arch.intermediate_size = f;
  const bool bias = r.BoolOr({"attention_bias"}, false);
  BlockSpec b;
  AddAttention(b, d.h, d.heads, d.kv_heads, d.head_dim, bias, bias);
  AddNorms(b, NormKind::kRms, d.h, 2);
  AddNorms(b, NormKind::kRms, d.heads * d.head_dim, 1);     // q_norm
  AddNorms(b, NormKind::kRms, d.kv_heads * d.head_dim, 1);  // k_norm
  AddGatedMlp(b, d.h, f, false);
  SetUniformBlocks(arch, std::move(b));
  SetEmbeddingsAndHead(arch, NormKind::kRms, /*head_bias=*/false);
}

void BuildPhi3(ConfigReader& r, ModelArch& arch) {
  CommonDims d = ReadCommon(r, arch);
  int64_t f = r.Int({"intermediate_size"});
  arch.intermediate_size = f;
  BlockSpec b;
  b.linears.push_back(
      Linear("qkv_proj", LinearRole::kQkv, d.h, (d.heads + 2 * d.kv_heads) * d.head_dim, false));
  b.linears.push_back(Linear("o_proj", LinearRole::kO, d.heads * d.head_dim, d.h, false));
  b.linears.push_back(Linear("gate_up_proj", LinearRole::kGateUp, d.h, 2 * f, false));
  b.linears.push_back(Linear("down_proj", LinearRole::kDown, f, d.h, false));
  AddNorms(b, NormKind::kRms, d.h, 2);
  SetUniformBlocks(arch, std::move(b));
  SetEmbeddingsAndHead(arch, NormKind::kRms, /*head_bias=*/false);
}

void BuildMoeLlamaLike(ConfigReader& r, ModelArch& arch) {
  CommonDims d = ReadCommon(r, arch);
  const std::string& t = r.model_type();
  bool mixtral = t == "mixtral";
  int64_t experts = r.Int({mixtral ? "num_local_experts" : "num_experts"});
  int64_t top_k = r.Int({"num_experts_per_tok"});
  int64_t expert_f = r.Int({mixtral ? "intermediate_size" : "moe_intermediate_size"});
  int64_t dense_f = mixtral ? 0 : r.IntOr({"intermediate_size"}, 0);
  int64_t step = mixtral ? 1 : r.IntOr({"decoder_sparse_step"}, 1);
  std::vector<int64_t> mlp_only = mixtral ? std::vector<int64_t>{} : r.IntList("mlp_only_layers");
  int64_t shared_f = t == "qwen2_moe" ? r.Int({"shared_expert_intermediate_size"}) : 0;
  if (step <= 0) r.Fail("decoder_sparse_step: expected a positive integer");
  if (top_k > experts) r.Fail("num_experts_per_tok is larger than the number of experts");

  BlockSpec moe = AttentionBlock(r, d);
  moe.linears.push_back(Linear("gate", LinearRole::kRouter, d.h, experts, false));
  if (mixtral) {
    AddGatedMlp(moe, d.h, expert_f, false, experts, true, "w1", "w3", "w2");
  } else {
    AddGatedMlp(moe, d.h, expert_f, false, experts, true);
  }
  if (shared_f > 0) {
    AddGatedMlp(moe, d.h, shared_f, false);  // mlp.shared_expert.{gate,up,down}_proj
    moe.linears.push_back(Linear("shared_expert_gate", LinearRole::kOther, d.h, 1, false));
  }
  moe.experts_per_token = top_k;

  arch.num_experts = experts;
  arch.experts_per_token = top_k;
  arch.expert_intermediate_size = expert_f;
  arch.num_shared_experts = shared_f > 0 ? 1 : 0;
  arch.transformers_stacks_experts = true;  // mixtral, qwen2_moe, qwen3_moe
  arch.block_kinds.assign(1, std::move(moe));
  arch.block_kind_of_layer.assign(static_cast<size_t>(std::max<int64_t>(d.layers, 0)), 0);
  bool any_dense = false;
  for (int64_t i = 0; i < d.layers && step > 0; ++i) {
    bool sparse =
        std::find(mlp_only.begin(), mlp_only.end(), i) == mlp_only.end() && (i + 1) % step == 0;
    if (sparse) continue;
    if (!any_dense) {
      if (dense_f <= 0) r.Fail("intermediate_size is needed: some layers have a dense MLP");
      BlockSpec dense = AttentionBlock(r, d);
      AddGatedMlp(dense, d.h, dense_f, false);
      arch.block_kinds.push_back(std::move(dense));
      any_dense = true;
    }
    arch.block_kind_of_layer[i] = 1;
  }
  arch.intermediate_size = any_dense ? dense_f : expert_f;
  SetEmbeddingsAndHead(arch, NormKind::kRms, /*head_bias=*/false);
}

}  // namespace fmte::model_internal
