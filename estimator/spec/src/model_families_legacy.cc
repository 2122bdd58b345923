// Builders for the GPT-2-era families: LayerNorm (weight + bias), plain two-linear MLPs with
// biases, fused or separate attention projections. Shapes and names follow transformers'
// modeling_<family>.py (and the legacy remote code where the published config still uses it).
#include <string>

#include "model_config.h"

namespace fmte::model_internal {
namespace {

struct Dims {
  int64_t h, layers, heads, kv_heads, f, vocab;
};

// The MLP activation: "gelu_new" under hidden_act or activation_function, or the family's config
// default when neither is given (GPT2Config, GPTJConfig, PhiConfig: gelu_new).
void ReadGeluNew(ConfigReader& r, ModelArch& arch, bool family_default) {
  arch.gelu_new = r.Has({"hidden_act", "activation_function"})
                      ? r.StringOr({"hidden_act", "activation_function"}, "") == "gelu_new"
                      : family_default;
}

// The dimension reads every GPT-era family does, under the family's key names (the first key
// present wins): hidden size, layers, heads, KV heads (`kv` empty or absent: multi-head attention),
// MLP width (`ffn` absent: 4h when `ffn_default_4h`, else required), vocabulary and positions.
// Checks that the heads divide the hidden size and fills `arch`'s dimensions, LayerNorm, plain MLP
// and tie_word_embeddings (default `tie_default`, the family's config-class default).
Dims ReadDims(ConfigReader& r, ModelArch& arch, Keys hidden, Keys layers, Keys heads, Keys kv,
              Keys ffn, bool ffn_default_4h, Keys positions, bool tie_default) {
  Dims d{};
  d.h = r.Int(hidden);
  d.layers = r.Layers(layers);
  d.heads = r.Int(heads);
  d.kv_heads = kv.size() == 0 ? d.heads : r.IntOr(kv, d.heads);
  d.vocab = r.Int({"vocab_size"});
  d.f = ffn_default_4h ? r.IntOr(ffn, 4 * d.h) : r.Int(ffn);
  if (d.heads > 0 && d.h % d.heads != 0) {
    r.Fail("hidden size " + std::to_string(d.h) + " is not divisible by the head count " +
           std::to_string(d.heads));
  }
  arch.hidden_size = d.h;
  arch.num_layers = d.layers;
  arch.num_heads = d.heads;
  arch.num_kv_heads = d.kv_heads;
  arch.head_dim = d.heads > 0 ? d.h / d.heads : 0;
  arch.intermediate_size = d.f;
  arch.vocab_size = d.vocab;
  arch.max_position_embeddings = r.IntOr(positions, 0);
  arch.norm = NormKind::kLayer;
  arch.gated_mlp = false;
  arch.tie_word_embeddings = r.BoolOr({"tie_word_embeddings"}, tie_default);
  ReadGeluNew(r, arch, false);
  return d;
}

// Plain MLP: up (h->f) and down (f->h) linears with the family's names.
void AddPlainMlp(BlockSpec& b, int64_t h, int64_t f, bool bias, const char* up, const char* down) {
  b.linears.push_back(Linear(up, LinearRole::kUp, h, f, bias));
  b.linears.push_back(Linear(down, LinearRole::kDown, f, h, bias));
}

}  // namespace

// modeling_gpt2.py: Conv1D c_attn (h->3h), attn.c_proj, mlp.c_fc (h->n_inner|4h), mlp.c_proj, all
// with bias; ln_1, ln_2, ln_f; learned positions wpe; lm_head tied (GPT2Config default).
void BuildGpt2(ConfigReader& r, ModelArch& arch) {
  const Dims d = ReadDims(r, arch, {"n_embd", "hidden_size"}, {"n_layer", "num_hidden_layers"},
                          {"n_head", "num_attention_heads"}, {}, {"n_inner"}, true,
                          {"n_positions", "max_position_embeddings"}, true);
  ReadGeluNew(r, arch, true);
  const int64_t h = d.h, f = d.f;
  const int64_t positions = r.Int({"n_positions", "max_position_embeddings"});  // required here
  BlockSpec b;
  b.linears.push_back(Linear("c_attn", LinearRole::kQkv, h, 3 * h, true));
  b.linears.push_back(Linear("c_proj", LinearRole::kO, h, h, true));
  AddPlainMlp(b, h, f, true, "c_fc", "c_proj");
  AddNorms(b, NormKind::kLayer, h, 2);
  SetUniformBlocks(arch, std::move(b));
  SetEmbeddingsAndHead(arch, NormKind::kLayer, false);
  arch.position_embedding_params = positions * h;
}

// modeling_gptj.py: q/k/v/out_proj without bias, mlp fc_in/fc_out with bias, one ln_1 (attention
// and MLP in parallel), ln_f, lm_head with bias, untied (GPTJConfig default).
void BuildGptJ(ConfigReader& r, ModelArch& arch) {
  const Dims d =
      ReadDims(r, arch, {"n_embd", "hidden_size"}, {"n_layer", "num_hidden_layers"},
               {"n_head", "num_attention_heads"}, {}, {"n_inner"}, true, {"n_positions"}, false);
  ReadGeluNew(r, arch, true);
  const int64_t h = d.h, heads = d.heads, f = d.f;
  arch.parallel_attn_mlp = true;
  BlockSpec b;
  AddAttention(b, h, heads, heads, h / (heads > 0 ? heads : 1), false, false, "out_proj");
  AddPlainMlp(b, h, f, true, "fc_in", "fc_out");
  AddNorms(b, NormKind::kLayer, h, 1);
  SetUniformBlocks(arch, std::move(b));
  SetEmbeddingsAndHead(arch, NormKind::kLayer, /*head_bias=*/true);
}

// modeling_gpt_neox.py: attention.query_key_value (h->3h) and attention.dense with bias
// (attention_bias, default true), mlp dense_h_to_4h/dense_4h_to_h with bias, input_layernorm and
// post_attention_layernorm, final_layer_norm, embed_out untied (GPTNeoXConfig default).
void BuildGptNeoX(ConfigReader& r, ModelArch& arch) {
  const Dims d = ReadDims(r, arch, {"hidden_size"}, {"num_hidden_layers"}, {"num_attention_heads"},
                          {}, {"intermediate_size"}, false, {"max_position_embeddings"}, false);
  const int64_t h = d.h, f = d.f;
  arch.parallel_attn_mlp = r.BoolOr({"use_parallel_residual"}, true);
  bool bias = r.BoolOr({"attention_bias"}, true);
  BlockSpec b;
  b.linears.push_back(Linear("query_key_value", LinearRole::kQkv, h, 3 * h, bias));
  b.linears.push_back(Linear("dense", LinearRole::kO, h, h, bias));
  AddPlainMlp(b, h, f, true, "dense_h_to_4h", "dense_4h_to_h");
  AddNorms(b, NormKind::kLayer, h, 2);
  SetUniformBlocks(arch, std::move(b));
  SetEmbeddingsAndHead(arch, NormKind::kLayer, false);
}

// modeling_phi.py (Phi-1/1.5/2 in transformers): q/k/v_proj and dense with bias, fc1/fc2 with bias,
// one input_layernorm (parallel attention and MLP), optional q_layernorm/k_layernorm over head_dim,
// final_layernorm, lm_head with bias, untied (PhiConfig default).
void BuildPhi(ConfigReader& r, ModelArch& arch) {
  const Dims d = ReadDims(r, arch, {"hidden_size"}, {"num_hidden_layers"}, {"num_attention_heads"},
                          {"num_key_value_heads"}, {"intermediate_size"}, false,
                          {"max_position_embeddings"}, false);
  ReadGeluNew(r, arch, true);
  const int64_t h = d.h, heads = d.heads, kv_heads = d.kv_heads, f = d.f;
  arch.parallel_attn_mlp = true;
  int64_t hd = arch.head_dim;
  BlockSpec b;
  AddAttention(b, h, heads, kv_heads, hd, true, true, "dense");
  AddPlainMlp(b, h, f, true, "fc1", "fc2");
  AddNorms(b, NormKind::kLayer, h, 1);
  if (r.BoolOr({"qk_layernorm"}, false)) AddNorms(b, NormKind::kLayer, hd, 2);
  SetUniformBlocks(arch, std::move(b));
  SetEmbeddingsAndHead(arch, NormKind::kLayer, /*head_bias=*/true);
}

// Legacy remote code modeling_phi.py (model_type phi-msft, Phi-1.5 before transformers 4.37):
// layers.0.wte, ParallelBlock{ln, mixer.Wqkv (h -> (heads + 2*kv_heads)*hd), mixer.out_proj,
// mlp.fc1, mlp.fc2, all with bias}, lm_head {ln, linear with bias}. Same tensors as BuildPhi.
void BuildPhiMsft(ConfigReader& r, ModelArch& arch) {
  const Dims d = ReadDims(r, arch, {"n_embd"}, {"n_layer"}, {"n_head"}, {"n_head_kv"}, {"n_inner"},
                          true, {"n_positions"}, false);
  ReadGeluNew(r, arch, true);
  const int64_t h = d.h, heads = d.heads, kv_heads = d.kv_heads, f = d.f;
  arch.parallel_attn_mlp = true;
  int64_t hd = arch.head_dim;
  BlockSpec b;
  b.linears.push_back(Linear("Wqkv", LinearRole::kQkv, h, (heads + 2 * kv_heads) * hd, true));
  b.linears.push_back(Linear("out_proj", LinearRole::kO, h, h, true));
  AddPlainMlp(b, h, f, true, "fc1", "fc2");
  AddNorms(b, NormKind::kLayer, h, 1);
  SetUniformBlocks(arch, std::move(b));
  SetEmbeddingsAndHead(arch, NormKind::kLayer, /*head_bias=*/true);
}

// Falcon (modeling_falcon.py; legacy modelling_RW.py for model_type RefinedWeb/RefinedWebModel):
// self_attention.query_key_value (h -> (heads + 2*kv_heads)*hd), self_attention.dense,
// mlp.dense_h_to_4h / dense_4h_to_h (ffn_hidden_size or 4h), biases when `bias`. Norms:
// new_decoder_architecture (RefinedWeb = Falcon-40B/180B): ln_attn + ln_mlp
// (num_ln_in_parallel_attn, default 2); otherwise input_layernorm, plus post_attention_layernorm
// when not parallel_attn. kv heads: num_kv_heads/n_head_kv (new arch), 1 when multi_query, else
// heads. lm_head has no bias and is tied (config default of PretrainedConfig).
void BuildFalcon(ConfigReader& r, ModelArch& arch) {
  const std::string& t = r.model_type();
  const Dims d = ReadDims(r, arch, {"hidden_size", "n_embed"}, {"num_hidden_layers", "n_layer"},
                          {"num_attention_heads", "n_head"}, {}, {"ffn_hidden_size"}, true,
                          {"max_position_embeddings"}, true);
  const int64_t h = d.h, heads = d.heads, f = d.f;
  bool new_arch = t == "RefinedWeb" || r.BoolOr({"new_decoder_architecture"}, false);
  bool multi_query = r.BoolOr({"multi_query"}, t == "falcon");
  bool parallel = r.BoolOr({"parallel_attn"}, true);
  bool bias = r.BoolOr({"bias"}, false);
  int64_t kv_heads = heads;
  if (new_arch) {
    kv_heads = r.IntOr({"num_kv_heads", "n_head_kv"}, heads);
  } else if (multi_query) {
    kv_heads = 1;
  }
  arch.num_kv_heads = kv_heads;
  arch.parallel_attn_mlp = new_arch || parallel;
  int64_t hd = arch.head_dim;
  BlockSpec b;
  b.linears.push_back(
      Linear("query_key_value", LinearRole::kQkv, h, (heads + 2 * kv_heads) * hd, bias));
  b.linears.push_back(Linear("dense", LinearRole::kO, h, h, bias));
  AddPlainMlp(b, h, f, bias, "dense_h_to_4h", "dense_4h_to_h");
  int64_t norms = new_arch ? r.IntOr({"num_ln_in_parallel_attn"}, 2) : (parallel ? 1 : 2);
  AddNorms(b, NormKind::kLayer, h, norms);
  SetUniformBlocks(arch, std::move(b));
  SetEmbeddingsAndHead(arch, NormKind::kLayer, false);
}

// modeling_starcoder2.py: q/k/v/o_proj with bias (use_bias), mlp c_fc/c_proj with bias, two
// LayerNorms, final norm, tied embeddings (Starcoder2Config default).
void BuildStarcoder2(ConfigReader& r, ModelArch& arch) {
  const Dims d = ReadDims(r, arch, {"hidden_size"}, {"num_hidden_layers"}, {"num_attention_heads"},
                          {"num_key_value_heads"}, {"intermediate_size"}, false,
                          {"max_position_embeddings"}, true);
  const int64_t h = d.h, heads = d.heads, kv_heads = d.kv_heads, f = d.f;
  bool bias = r.BoolOr({"use_bias"}, true);
  BlockSpec b;
  AddAttention(b, h, heads, kv_heads, arch.head_dim, bias, bias);
  AddPlainMlp(b, h, f, bias, "c_fc", "c_proj");
  AddNorms(b, NormKind::kLayer, h, 2);
  SetUniformBlocks(arch, std::move(b));
  SetEmbeddingsAndHead(arch, NormKind::kLayer, false);
}

}  // namespace fmte::model_internal
