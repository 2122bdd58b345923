// Builders for DeepSeek (MoE, MLA), gpt-oss, Llama 4 and Nemotron-H. Shapes follow the published
// modeling code: deepseek-ai's modeling_deepseek.py (DeepSeek-MoE, -V2, -V3 remote code) and
// transformers' modeling_deepseek_v2/v3.py, modeling_gpt_oss.py, modeling_llama4.py and
// modeling_nemotron_h.py.
#include <algorithm>
#include <string>

#include "model_config.h"

namespace fmte::model_internal {

// DeepSeek. Layer i has a MoE MLP when n_routed_experts is set, i >= first_k_dense_replace and
// i % moe_layer_freq == 0; otherwise a dense gate/up/down MLP of intermediate_size.
// MoE: mlp.gate.weight (E x h, no bias; V3 with topk_method noaux_tc adds e_score_correction_bias
// of E), routed experts of moe_intermediate_size, shared_experts = one MLP of moe_intermediate_size
// * n_shared_experts. Attention: deepseek (MoE-16B): plain MHA q/k/v/o. deepseek_v2/v3 (MLA):
// q_proj (h -> heads*(nope+rope)) when q_lora_rank is null, else q_a_proj (h -> q_lora_rank) +
// q_a_layernorm + q_b_proj; kv_a_proj_with_mqa (h -> kv_lora_rank + rope) + kv_a_layernorm +
// kv_b_proj (kv_lora_rank -> heads*(nope + v_head_dim)); o_proj (heads*v_head_dim -> h);
// attention_bias on q_a_proj, kv_a_proj_with_mqa and o_proj. DeepSeek-V3's checkpoint also holds
// num_nextn_predict_layers multi-token-prediction layers (model.layers.61: one MoE block, enorm,
// hnorm, eh_proj 2h->h, shared_head.norm, and its own copies of embed_tokens and shared_head.head).
// DeepseekV3ForCausalLM does not load them, so they are not in Counts(); they are reported in
// unloaded_checkpoint_params.
void BuildDeepseek(ConfigReader& r, ModelArch& arch) {
  const std::string& t = r.model_type();
  bool mla = t != "deepseek";
  int64_t h = r.Int({"hidden_size"});
  int64_t layers = r.Layers({"num_hidden_layers"});
  int64_t heads = r.Int({"num_attention_heads"});
  int64_t vocab = r.Int({"vocab_size"});
  int64_t dense_f = r.Int({"intermediate_size"});
  int64_t experts = r.IntOr({"n_routed_experts"}, 0);
  bool bias = r.BoolOr({"attention_bias"}, false);
  int64_t first_dense = r.IntOr({"first_k_dense_replace"}, 0);
  int64_t freq = r.IntOr({"moe_layer_freq"}, 1);
  int64_t top_k = experts > 0 ? r.Int({"num_experts_per_tok"}) : 0;
  int64_t expert_f = experts > 0 ? r.Int({"moe_intermediate_size"}) : 0;
  int64_t shared = r.IntOr({"n_shared_experts"}, 0);
  if (freq <= 0) r.Fail("moe_layer_freq: expected a positive integer");

  arch.hidden_size = h;
  arch.num_layers = layers;
  arch.num_heads = heads;
  arch.vocab_size = vocab;
  arch.intermediate_size = dense_f;
  arch.max_position_embeddings = r.IntOr({"max_position_embeddings"}, 0);
  arch.norm = NormKind::kRms;
  arch.gated_mlp = true;
  arch.tie_word_embeddings = r.BoolOr({"tie_word_embeddings"}, false);

  BlockSpec attn;
  if (!mla) {
    int64_t kv_heads = r.IntOr({"num_key_value_heads"}, heads);
    if (heads > 0 && h % heads != 0) r.Fail("hidden_size is not divisible by num_attention_heads");
    arch.num_kv_heads = kv_heads;
    arch.head_dim = heads > 0 ? h / heads : 0;
    AddAttention(attn, h, heads, kv_heads, arch.head_dim, bias, bias);
  } else {
    int64_t q_rank = r.IntOr({"q_lora_rank"}, 0);
    int64_t kv_rank = r.Int({"kv_lora_rank"});
    int64_t nope = r.Int({"qk_nope_head_dim"});
    int64_t rope = r.Int({"qk_rope_head_dim"});
    int64_t v_dim = r.Int({"v_head_dim"});
    arch.num_kv_heads = heads;
    arch.head_dim = nope + rope;
    if (q_rank == 0) {
      attn.linears.push_back(Linear("q_proj", LinearRole::kQ, h, heads * (nope + rope), false));
    } else {
      attn.linears.push_back(Linear("q_a_proj", LinearRole::kOther, h, q_rank, bias));
      AddNorms(attn, NormKind::kRms, q_rank, 1);
      attn.linears.push_back(
          Linear("q_b_proj", LinearRole::kQ, q_rank, heads * (nope + rope), false));
    }
    attn.linears.push_back(
        Linear("kv_a_proj_with_mqa", LinearRole::kOther, h, kv_rank + rope, bias));
    AddNorms(attn, NormKind::kRms, kv_rank, 1);
    attn.linears.push_back(
        Linear("kv_b_proj", LinearRole::kOther, kv_rank, heads * (nope + v_dim), false));
    attn.linears.push_back(Linear("o_proj", LinearRole::kO, heads * v_dim, h, bias));
  }
  AddNorms(attn, NormKind::kRms, h, 2);  // input_layernorm, post_attention_layernorm

  BlockSpec dense = attn;
  AddGatedMlp(dense, h, dense_f, false);
  BlockSpec moe = attn;
  if (experts > 0) {
    moe.linears.push_back(Linear("gate", LinearRole::kRouter, h, experts, false));
    if (r.StringOr({"topk_method"}, "") == "noaux_tc") moe.other_params += experts;
    AddGatedMlp(moe, h, expert_f, false, experts, true);
    if (shared > 0) AddGatedMlp(moe, h, expert_f * shared, false);  // mlp.shared_experts
    moe.experts_per_token = top_k;
    arch.num_experts = experts;
    arch.experts_per_token = top_k;
    arch.expert_intermediate_size = expert_f;
    arch.num_shared_experts = shared;
    // deepseek_v2/v3 are transformers' own (converted to stacked experts); MoE-16B's "deepseek" is
    // remote code with an nn.Linear per expert.
    arch.transformers_stacks_experts = t != "deepseek";
  }
  arch.block_kinds = {dense, moe};
  arch.block_kind_of_layer.assign(static_cast<size_t>(layers > 0 ? layers : 0), 0);
  for (int64_t i = 0; i < layers && freq > 0; ++i) {
    if (experts > 0 && i >= first_dense && i % freq == 0) arch.block_kind_of_layer[i] = 1;
  }
  SetEmbeddingsAndHead(arch, NormKind::kRms, false);

  int64_t mtp_layers = r.IntOr({"num_nextn_predict_layers"}, 0);
  const BlockSpec& block = experts > 0 ? arch.block_kinds[1] : arch.block_kinds[0];
  long double block_approx = 0;  // int64 products below are safe only for plausible shapes
  for (const LinearShape& l : block.linears) {
    block_approx += static_cast<long double>(l.copies) * l.in_features * (l.out_features + 1);
  }
  if (mtp_layers > 0 && mtp_layers < 1000 && block_approx < 1e15L) {
    int64_t per_mtp = block.Params() + 3 * h /* enorm, hnorm, shared_head.norm */ +
                      2 * h * h /* eh_proj */ + 2 * vocab * h /* embed_tokens, shared_head.head */;
    arch.unloaded_checkpoint_params = mtp_layers * per_mtp;
  }
}

// modeling_gpt_oss.py: q/k/v/o_proj with bias (attention_bias), self_attn.sinks (one per head),
// mlp.router Linear(h, E) with bias, mlp.experts as stacked tensors gate_up_proj (E x h x 2f) +
// gate_up_proj_bias (E x 2f) and down_proj (E x f x h) + down_proj_bias (E x h), two RMSNorms,
// final norm, untied lm_head. The published checkpoint stores the expert weights in MXFP4 (blocks
// + scales); the counts here are the logical (bf16) parameters, as in the model card.
void BuildGptOss(ConfigReader& r, ModelArch& arch) {
  int64_t h = r.Int({"hidden_size"});
  int64_t layers = r.Layers({"num_hidden_layers"});
  int64_t heads = r.Int({"num_attention_heads"});
  int64_t kv_heads = r.IntOr({"num_key_value_heads"}, heads);
  int64_t hd = r.Int({"head_dim"});
  int64_t vocab = r.Int({"vocab_size"});
  int64_t f = r.Int({"intermediate_size"});
  int64_t experts = r.Int({"num_local_experts"});
  int64_t top_k = r.Int({"num_experts_per_tok", "experts_per_token"});
  bool bias = r.BoolOr({"attention_bias"}, true);
  arch.hidden_size = h;
  arch.num_layers = layers;
  arch.num_heads = heads;
  arch.num_kv_heads = kv_heads;
  arch.head_dim = hd;
  arch.vocab_size = vocab;
  arch.intermediate_size = f;
  arch.max_position_embeddings = r.IntOr({"max_position_embeddings"}, 0);
  arch.norm = NormKind::kRms;
  arch.gated_mlp = true;
  arch.tie_word_embeddings = r.BoolOr({"tie_word_embeddings"}, false);
  arch.num_experts = experts;
  arch.experts_per_token = top_k;
  arch.expert_intermediate_size = f;
  arch.transformers_stacks_experts = true;

  BlockSpec b;
  AddAttention(b, h, heads, kv_heads, hd, bias, bias);
  b.other_params += heads;  // attention sinks
  b.linears.push_back(Linear("router", LinearRole::kRouter, h, experts, true));
  LinearShape gate_up = Linear("gate_up_proj", LinearRole::kGateUp, h, 2 * f, true, experts, true);
  gate_up.stacked = true;
  LinearShape down = Linear("down_proj", LinearRole::kDown, f, h, true, experts, true);
  down.stacked = true;
  b.linears.push_back(gate_up);
  b.linears.push_back(down);
  AddNorms(b, NormKind::kRms, h, 2);
  b.experts_per_token = top_k;
  SetUniformBlocks(arch, std::move(b));
  SetEmbeddingsAndHead(arch, NormKind::kRms, false);
}

// Llama 4's language model (transformers modeling_llama4.py, Llama4TextConfig): MoE layers
// (moe_layers, else every interleave_moe_layer_step-th) hold a router (no bias), the routed experts
// as two stacked tensors gate_up_proj [E, h, 2f] and down_proj [E, f, h], and a shared expert of
// width f; the other layers a dense gated MLP of intermediate_size_mlp; q/k/v/o biased by
// attention_bias; the qk norm is a parameter-free L2 norm.
void BuildLlama4(ConfigReader& r, ModelArch& arch) {
  CommonDims d = ReadCommon(r, arch);
  const int64_t experts = r.Int({"num_local_experts"});
  const int64_t top_k = r.Int({"num_experts_per_tok"});
  const int64_t f = r.Int({"intermediate_size"});
  const int64_t step = r.IntOr({"interleave_moe_layer_step"}, 1);
  std::vector<int64_t> moe_layers = r.IntList("moe_layers");
  const bool bias = r.BoolOr({"attention_bias"}, false);
  if (step <= 0) r.Fail("interleave_moe_layer_step: expected a positive integer");
  if (top_k > experts) r.Fail("num_experts_per_tok is larger than the number of experts");
  if (moe_layers.empty())
    for (int64_t i = step - 1; step > 0 && i < d.layers; i += step) moe_layers.push_back(i);

  BlockSpec moe;
  AddAttention(moe, d.h, d.heads, d.kv_heads, d.head_dim, bias, bias);
  AddNorms(moe, NormKind::kRms, d.h, 2);
  moe.linears.push_back(Linear("router", LinearRole::kRouter, d.h, experts, false));
  LinearShape gate_up =
      Linear("gate_up_proj", LinearRole::kGateUp, d.h, 2 * f, false, experts, true);
  gate_up.stacked = true;
  LinearShape down = Linear("down_proj", LinearRole::kDown, f, d.h, false, experts, true);
  down.stacked = true;
  moe.linears.push_back(gate_up);
  moe.linears.push_back(down);
  AddGatedMlp(moe, d.h, f, false);  // shared_expert
  moe.experts_per_token = top_k;

  arch.num_experts = experts;
  arch.experts_per_token = top_k;
  arch.expert_intermediate_size = f;
  arch.transformers_stacks_experts = true;
  arch.num_shared_experts = 1;
  arch.intermediate_size = f;
  arch.block_kinds.assign(1, std::move(moe));
  arch.block_kind_of_layer.assign(static_cast<size_t>(std::max<int64_t>(d.layers, 0)), 1);
  for (int64_t i : moe_layers) {
    if (i >= d.layers) {
      r.Fail("moe_layers: layer " + std::to_string(i) + " is beyond num_hidden_layers");
      continue;
    }
    arch.block_kind_of_layer[static_cast<size_t>(i)] = 0;
  }
  if (std::find(arch.block_kind_of_layer.begin(), arch.block_kind_of_layer.end(), 1) !=
      arch.block_kind_of_layer.end()) {
    const int64_t dense_f = r.Int({"intermediate_size_mlp"});
    BlockSpec dense;
    AddAttention(dense, d.h, d.heads, d.kv_heads, d.head_dim, bias, bias);
    AddNorms(dense, NormKind::kRms, d.h, 2);
    AddGatedMlp(dense, d.h, dense_f, false);
    arch.block_kinds.push_back(std::move(dense));
    arch.intermediate_size = dense_f;
  }
  SetEmbeddingsAndHead(arch, NormKind::kRms, /*head_bias=*/false);
}

// Nemotron-H (transformers modeling_nemotron_h.py: NVIDIA Nemotron-H, Nemotron 3): every layer is
// one mixer behind one RMSNorm, its kind read from hybrid_override_pattern ("M" Mamba-2, "*"
// attention, "-" MLP, "E" MoE; one character per layer) or layers_block_type ("mamba",
// "attention", "mlp", "moe"). Mamba-2 (NemotronHMamba2Mixer): d_inner = mamba_num_heads x
// mamba_head_dim; in_proj h -> 2 d_inner + 2 n_groups ssm_state_size + heads (bias use_bias);
// conv1d depthwise over conv_dim = d_inner + 2 n_groups ssm_state_size channels, conv_kernel taps
// (bias use_conv_bias); dt_bias, A_log and D per head; a gated RMSNorm over d_inner; out_proj
// d_inner -> h (bias use_bias). Attention: q/k/v/o (bias attention_bias), head_dim or h / heads.
// MLP: up_proj/down_proj of intermediate_size with relu2 (bias mlp_bias), no gate. MoE
// (NemotronHMoE): the router's weight (E x h) and its e_score_correction_bias (E, a buffer the
// checkpoint holds), routed experts up/down of moe_intermediate_size, a shared expert up/down of
// moe_shared_expert_intermediate_size. Final norm_f, untied lm_head by default.
void BuildNemotronH(ConfigReader& r, ModelArch& arch) {
  const int64_t h = r.Int({"hidden_size"});
  const int64_t layers = r.Layers({"num_hidden_layers"});
  const int64_t vocab = r.Int({"vocab_size"});
  std::string pattern = r.StringOr({"hybrid_override_pattern"}, "");
  if (pattern.empty() && r.Has({"layers_block_type"})) {
    // The list form: one name per layer.
    const std::string names[] = {"mamba", "attention", "mlp", "moe"};
    const char codes[] = {'M', '*', '-', 'E'};
    for (const std::string& name : r.StringList("layers_block_type")) {
      char code = 0;
      for (size_t i = 0; i < 4; ++i)
        if (name == names[i]) code = codes[i];
      if (code == 0) {
        r.Fail("layers_block_type: unknown layer type '" + name +
               "' (expected mamba, attention, mlp or moe)");
        break;
      }
      pattern += code;
    }
  }
  if (pattern.empty()) {
    r.Fail("hybrid_override_pattern or layers_block_type: expected the kind of every layer");
  } else if (layers > 0 && static_cast<int64_t>(pattern.size()) != layers) {
    r.Fail("hybrid_override_pattern: " + std::to_string(pattern.size()) +
           " layer kinds for num_hidden_layers " + std::to_string(layers));
  }
  const auto uses = [&](char c) { return pattern.find(c) != std::string::npos; };
  for (char c : pattern) {
    if (c != 'M' && c != '*' && c != '-' && c != 'E') {
      r.Fail(std::string("hybrid_override_pattern: unknown layer kind '") + c +
             "' (expected M, *, - or E)");
      break;
    }
  }

  arch.hidden_size = h;
  arch.num_layers = layers;
  arch.vocab_size = vocab;
  arch.max_position_embeddings = r.IntOr({"max_position_embeddings"}, 0);
  arch.norm = NormKind::kRms;
  arch.gated_mlp = false;  // relu2 MLPs and experts: up, activation, down
  arch.tie_word_embeddings = r.BoolOr({"tie_word_embeddings"}, false);

  // Block kinds in the order their layer kind first appears.
  std::string kinds;
  const auto kind_of = [&](char c) {
    const size_t at = kinds.find(c);
    if (at != std::string::npos) return static_cast<int>(at);
    kinds += c;
    return static_cast<int>(kinds.size() - 1);
  };
  if (uses('*')) {
    const int64_t heads = r.Int({"num_attention_heads"});
    const int64_t kv_heads = r.IntOr({"num_key_value_heads"}, heads);
    const int64_t hd = r.Has({"head_dim"}) ? r.Int({"head_dim"}) : (heads > 0 ? h / heads : 0);
    if (kv_heads > 0 && heads % kv_heads != 0)
      r.Fail("num_attention_heads is not a multiple of num_key_value_heads");
    arch.num_heads = heads;
    arch.num_kv_heads = kv_heads;
    arch.head_dim = hd;
  }
  for (char c : pattern) {
    if (kind_of(c) < static_cast<int>(arch.block_kinds.size())) continue;
    BlockSpec b;
    AddNorms(b, NormKind::kRms, h, 1);
    if (c == 'M') {
      BlockSpec::Ssm& m = b.ssm;
      m.heads = r.Int({"mamba_num_heads"});
      m.head_dim = r.Int({"mamba_head_dim"});
      m.state = r.Int({"ssm_state_size"});
      m.groups = r.Int({"n_groups"});
      m.conv_kernel = r.Int({"conv_kernel"});
      m.chunk = r.IntOr({"chunk_size"}, 128);
      const bool bias = r.BoolOr({"use_bias"}, false);
      const int64_t inner = m.Inner(), conv_dim = inner + 2 * m.groups * m.state;
      b.linears.push_back(
          Linear("in_proj", LinearRole::kSsmIn, h, inner + conv_dim + m.heads, bias));
      b.linears.push_back(Linear("out_proj", LinearRole::kSsmOut, inner, h, bias));
      b.other_params += conv_dim * m.conv_kernel +
                        (r.BoolOr({"use_conv_bias"}, true) ? conv_dim : 0) + 3 * m.heads;
      b.norm_params += inner;  // the gated RMSNorm (its input is saved by the fused scan)
    } else if (c == '*') {
      const bool bias = r.BoolOr({"attention_bias"}, false);
      AddAttention(b, h, arch.num_heads, arch.num_kv_heads, arch.head_dim, bias, bias);
    } else if (c == '-') {
      const int64_t f = r.Int({"intermediate_size"});
      const bool bias = r.BoolOr({"mlp_bias"}, false);
      b.linears.push_back(Linear("up_proj", LinearRole::kUp, h, f, bias));
      b.linears.push_back(Linear("down_proj", LinearRole::kDown, f, h, bias));
      arch.intermediate_size = f;
    } else {
      const int64_t experts = r.Int({"n_routed_experts"});
      const int64_t top_k = r.Int({"num_experts_per_tok"});
      const int64_t f = r.Int({"moe_intermediate_size"});
      const int64_t shared = r.IntOr({"n_shared_experts"}, 1);
      const int64_t shared_f = shared > 0 ? r.Int({"moe_shared_expert_intermediate_size"}) : 0;
      const bool bias = r.BoolOr({"mlp_bias"}, false);
      if (top_k > experts) r.Fail("num_experts_per_tok is larger than n_routed_experts");
      b.linears.push_back(Linear("gate", LinearRole::kRouter, h, experts, false));
      b.other_params += experts;  // e_score_correction_bias
      b.linears.push_back(Linear("up_proj", LinearRole::kUp, h, f, bias, experts, true));
      b.linears.push_back(Linear("down_proj", LinearRole::kDown, f, h, bias, experts, true));
      if (shared > 0) {
        b.linears.push_back(Linear("up_proj", LinearRole::kUp, h, shared_f * shared, bias));
        b.linears.push_back(Linear("down_proj", LinearRole::kDown, shared_f * shared, h, bias));
      }
      b.experts_per_token = top_k;
      arch.num_experts = experts;
      arch.experts_per_token = top_k;
      arch.expert_intermediate_size = f;
      arch.num_shared_experts = shared;
      if (arch.intermediate_size == 0) arch.intermediate_size = f;
    }
    arch.block_kinds.push_back(std::move(b));
  }
  arch.block_kind_of_layer.clear();
  for (char c : pattern) arch.block_kind_of_layer.push_back(kind_of(c));
  if (static_cast<int64_t>(arch.block_kind_of_layer.size()) != layers) {
    arch.block_kinds.clear();
    arch.block_kind_of_layer.clear();
  }
  SetEmbeddingsAndHead(arch, NormKind::kRms, false);
}

}  // namespace fmte::model_internal
