// Multimodal models (an image encoder feeding a decoder-only language model): Gemma-3
// (gemma3), Qwen2-VL (qwen2_vl), Qwen2.5-VL (qwen2_5_vl), Mistral-3 / Mistral-Small-3.1
// (mistral3), LLaVA (llava), Llama-3.2-Vision (mllama: cross-attention layers in the language
// model) and Llama 4 (llama4: a mixture-of-experts language model, model_families_moe.cc). The
// language model is read by its own family builder from text_config (Qwen2-VL and Qwen2.5-VL before
// transformers 5 put its keys at the top level); the vision encoder and the projector are counted
// from vision_config as ModelArch::vision_params.
//
// Composite configs are saved with only the keys that differ from the sub-config classes'
// defaults (transformers PretrainedConfig.to_diff_dict recurses into text_config and
// vision_config), so published files are sparse: Gemma-3-4B's text_config names neither its
// vocabulary nor its head size. The defaults below are the config classes' (transformers
// configuration_<family>.py), filled in for keys a sub-config omits, as transformers does when it
// builds the config; a key the class has no default for stays required.
//
// Vision modules and biases (transformers modeling_<family>.py):
//   siglip_vision_model (Gemma-3): patch Conv2d with bias, position embedding per patch; per layer
//     two LayerNorms, q/k/v/out_proj and fc1/fc2 with biases; post_layernorm; the pooling head
//     unless vision_use_head is false; Gemma-3's projector
//     mm_input_projection_weight (vision h x text h) and mm_soft_emb_norm (RMSNorm over vision h).
//   clip_vision_model (LLaVA): class embedding, patch Conv2d without bias, position embedding per
//     patch plus the class token, pre_layrnorm, layers as SigLIP's, post_layernorm; projector
//     linear_1 (vision h x the feature layers read -> text h) and linear_2 (text h -> text h),
//     with biases unless multimodal_projector_bias is false.
//   qwen2_vl: Conv3d patch embedding without bias; per block LayerNorms norm1/norm2, fused qkv and
//     proj with biases, fc1/fc2 (mlp_ratio) with biases; PatchMerger: LayerNorm ln_q over the
//     encoder width, Linear(w m^2 -> w m^2) and Linear(w m^2 -> hidden_size) with biases.
//   qwen2_5_vl: as qwen2_vl with RMSNorms and a gated MLP gate/up/down_proj (with biases) of
//     intermediate_size; the merger's ln_q an RMSNorm, its output out_hidden_size.
//   pixtral (Mistral-3): patch Conv2d without bias, ln_pre RMSNorm; per layer attention_norm and
//     ffn_norm RMSNorms, q/k/v/o_proj and gate/up/down_proj without biases; projector: norm
//     (RMSNorm over vision h), patch_merger.merging_layer Linear(h m^2 -> h) without bias,
//     linear_1 (vision h x the feature layers read -> text h) and linear_2 (text h -> text h),
//     biases per multimodal_projector_bias.
//   intern_vit_6b (InternVL's internvl_chat, remote code modeling_intern_vit.py and
//     modeling_internvl_chat.py; InternViT-300M and -6B both report this type): class embedding,
//     patch Conv2d with bias, position embedding per patch plus the class token; per layer
//     norm1/norm2 (RMSNorm or LayerNorm per norm_type), fused qkv (bias per qkv_bias), proj with
//     bias, q_norm/k_norm RMSNorms over the width when qk_normalization, layer scales ls1/ls2, and
//     fc1/fc2 with biases; no final norm. Projector mlp1: LayerNorm over the pixel-shuffled width
//     (vision h / downsample_ratio^2), Linear(that -> text h) and Linear(text h -> text h), biased.
//     The language model is llm_config (Qwen2, Llama or InternLM2).
#include <cmath>
#include <string>

#include "model_config.h"

namespace fmte::model_internal {
namespace {

struct Multimodal {
  const char* model_type;
  const char* text_type;  // text_config's model_type when it names none (the class default)
  // What vision_config holds when it names no model_type (the composite's default vision class).
  const char* vision_type;
};

constexpr Multimodal kMultimodal[] = {
    {"gemma3", "gemma3_text", "siglip_vision_model"},
    {"qwen2_vl", "qwen2", "qwen2_vl"},
    {"qwen2_5_vl", "qwen2", "qwen2_5_vl"},
    {"mistral3", "mistral", "pixtral"},
    {"llava", "llama", "clip_vision_model"},
    {"mllama", "mllama_text_model", "mllama_vision_model"},
    {"llama4", "llama4_text", "llama4_vision_model"},
    {"internvl_chat", "qwen2", "intern_vit_6b"},
};

// The family builder that reads a language model of `text_type`: transformers 5 names Qwen2-VL's
// qwen2_vl_text / qwen2_5_vl_text (Qwen2's decoder layers, q, k, v with biases); Llama-3.2-Vision's
// mllama_text_model is Llama's self-attention layers, with its cross-attention layers added after
// parsing (AddCrossAttentionLayers).
std::string LanguageFamily(std::string_view text_type) {
  if (text_type == "qwen2_vl_text" || text_type == "qwen2_5_vl_text") return "qwen2";
  if (text_type == "mllama_text_model") return "llama";
  return std::string(text_type);
}

const Multimodal* Find(std::string_view model_type) {
  for (const Multimodal& m : kMultimodal)
    if (model_type == m.model_type) return &m;
  return nullptr;
}

// Config-class defaults of the sub-configs (transformers configuration_<family>.py).
const nlohmann::json& Defaults(std::string_view type) {
  static const nlohmann::json kDefaults = nlohmann::json::parse(R"({
    "gemma3_text": {"vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216,
      "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
      "head_dim": 256, "max_position_embeddings": 131072, "sliding_window": 4096,
      "sliding_window_pattern": 6, "tie_word_embeddings": true},
    "llama": {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
      "num_hidden_layers": 32, "num_attention_heads": 32, "max_position_embeddings": 2048,
      "tie_word_embeddings": false},
    "mistral": {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
      "max_position_embeddings": 131072, "sliding_window": 4096, "tie_word_embeddings": false},
    "siglip_vision_model": {"hidden_size": 768, "intermediate_size": 3072,
      "num_hidden_layers": 12, "num_attention_heads": 12, "num_channels": 3, "image_size": 224,
      "patch_size": 16},
    "clip_vision_model": {"hidden_size": 768, "intermediate_size": 3072,
      "num_hidden_layers": 12, "num_attention_heads": 12, "num_channels": 3, "image_size": 224,
      "patch_size": 32},
    "qwen2_vl": {"depth": 32, "embed_dim": 1280, "hidden_size": 3584, "mlp_ratio": 4,
      "num_heads": 16, "in_channels": 3, "patch_size": 14, "spatial_merge_size": 2,
      "temporal_patch_size": 2},
    "qwen2_5_vl": {"depth": 32, "hidden_size": 3584, "intermediate_size": 3420,
      "num_heads": 16, "in_channels": 3, "patch_size": 14, "spatial_merge_size": 2,
      "temporal_patch_size": 2, "out_hidden_size": 3584},
    "mllama_text_model": {"vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8,
      "cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38], "tie_word_embeddings": false},
    "mllama_vision_model": {"hidden_size": 1280, "intermediate_size": 5120,
      "num_hidden_layers": 32, "num_global_layers": 8, "num_channels": 3, "image_size": 448,
      "patch_size": 14, "max_num_tiles": 4, "vision_output_dim": 7680,
      "supported_aspect_ratios": [[1, 1], [1, 2], [1, 3], [1, 4], [2, 1], [2, 2], [3, 1], [4, 1]]},
    "llama4_text": {"vocab_size": 202048, "hidden_size": 5120, "intermediate_size": 8192,
      "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40,
      "num_key_value_heads": 8, "head_dim": 128, "num_local_experts": 16,
      "num_experts_per_tok": 1, "interleave_moe_layer_step": 1, "tie_word_embeddings": false},
    "llama4_vision_model": {"hidden_size": 768, "intermediate_size": 5632,
      "num_hidden_layers": 34, "num_channels": 3, "image_size": 448, "patch_size": 14,
      "projector_input_dim": 4096, "projector_output_dim": 4096, "vision_output_dim": 7680},
    "intern_vit_6b": {"hidden_size": 3200, "intermediate_size": 12800,
      "num_hidden_layers": 48, "num_attention_heads": 25, "num_channels": 3, "image_size": 224,
      "patch_size": 14, "qkv_bias": false, "qk_normalization": true, "norm_type": "rms_norm"},
    "pixtral": {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24,
      "num_attention_heads": 16, "num_channels": 3, "image_size": 1024, "patch_size": 16}
  })");
  static const nlohmann::json kNone = nlohmann::json::object();
  const auto it = kDefaults.find(std::string(type));
  return it == kDefaults.end() ? kNone : *it;
}

// `given` over the defaults of `type`: what transformers' config class holds after reading it.
nlohmann::json WithDefaults(std::string_view type, const nlohmann::json& given) {
  nlohmann::json out = Defaults(type);
  for (const auto& [key, value] : given.items()) out[key] = value;
  return out;
}

// Vision parameters are counted in long double: every key is at most 2^31 (ConfigReader), so a
// product of several cannot overflow before VisionParams refuses a total beyond any real model.
using Count = long double;

Count LayerNorms(bool rms, Count width, Count count) { return count * (rms ? width : 2 * width); }

Count Dense(Count in, Count out, bool bias) { return in * out + (bias ? out : 0); }

// SigLIP's and CLIP's vision transformer: patch embedding, positions, layers, final norm.
Count VitParams(ConfigReader& v, bool clip) {
  const Count h = v.Int({"hidden_size"}), f = v.Int({"intermediate_size"});
  const Count layers = v.Layers({"num_hidden_layers"});
  const Count c = v.Int({"num_channels"}), p = v.Int({"patch_size"});
  const Count image = v.Int({"image_size"});
  const Count patches = p > 0 ? std::floor(image / p) * std::floor(image / p) : 0;
  Count n = c * p * p * h + (clip ? 0 : h);  // patch Conv2d (CLIP: bias=False)
  n += (patches + (clip ? 1 : 0)) * h;       // position embedding (CLIP: + class token)
  if (clip) n += h + 2 * h;                  // class_embedding, pre_layrnorm
  const Count layer =
      LayerNorms(false, h, 2) + 4 * Dense(h, h, true) + Dense(h, f, true) + Dense(f, h, true);
  n += layers * layer + LayerNorms(false, h, 1);  // post_layernorm
  // SigLIP's attention-pooling head, built unless vision_use_head is false (Gemma-3 sets it false):
  // probe, nn.MultiheadAttention (in_proj 3h x h, out_proj, with biases), LayerNorm, MLP.
  if (!clip && v.BoolOr({"vision_use_head"}, true))
    n += h + Dense(h, 3 * h, true) + Dense(h, h, true) + LayerNorms(false, h, 1) +
         Dense(h, f, true) + Dense(f, h, true);
  return n;
}

Count QwenVisionParams(ConfigReader& v, bool qwen25) {
  const Count w = v.Int({qwen25 ? "hidden_size" : "embed_dim"});
  const Count depth = v.Layers({"depth"});
  const Count c = v.Int({"in_channels", "in_chans"}), p = v.Int({"patch_size"});
  const Count tp = v.Int({"temporal_patch_size"}), m = v.Int({"spatial_merge_size"});
  Count n = c * tp * p * p * w;  // Conv3d, bias=False
  Count block = LayerNorms(qwen25, w, 2) + Dense(w, 3 * w, true) + Dense(w, w, true);
  if (qwen25) {
    const Count f = v.Int({"intermediate_size"});
    block += 2 * Dense(w, f, true) + Dense(f, w, true);
  } else {
    const Count f = w * v.Int({"mlp_ratio"});
    block += Dense(w, f, true) + Dense(f, w, true);
  }
  n += depth * block;
  // The merger's output width: vision_config's out_hidden_size (Qwen2.5-VL) or hidden_size
  // (Qwen2-VL), the language model's hidden size in every published checkpoint.
  const Count merged = w * m * m;
  const Count out = v.Int({qwen25 ? "out_hidden_size" : "hidden_size"});
  return n + LayerNorms(qwen25, w, 1) + Dense(merged, merged, true) + Dense(merged, out, true);
}

// How many vision layers the projector reads (vision_feature_layer: one index or a list).
Count FeatureLayers(const nlohmann::json& j) {
  const auto f = j.find("vision_feature_layer");
  return f != j.end() && f->is_array() && !f->empty() ? static_cast<Count>(f->size()) : 1;
}

Count PixtralParams(ConfigReader& v, ConfigReader& top, Count text_hidden, Count features) {
  const Count h = v.Int({"hidden_size"}), f = v.Int({"intermediate_size"});
  const Count layers = v.Layers({"num_hidden_layers"});
  const Count c = v.Int({"num_channels"}), p = v.Int({"patch_size"});
  Count n = c * p * p * h + LayerNorms(true, h, 1);  // patch_conv (no bias), ln_pre
  n += layers * (LayerNorms(true, h, 2) + 4 * h * h + 3 * h * f);
  const Count m = top.IntOr({"spatial_merge_size"}, 2);
  const bool bias = top.BoolOr({"multimodal_projector_bias"}, false);
  return n + LayerNorms(true, h, 1) + Dense(h * m * m, h, false) +
         Dense(h * features, text_hidden, bias) + Dense(text_hidden, text_hidden, bias);
}

// Llama-3.2-Vision's encoder (transformers modeling_mllama.py): patch Conv2d without bias, class
// embedding, a gated position embedding (gate, per patch, and per aspect ratio x tile x patch),
// gated pre- and post-tile embeddings (per aspect ratio x tile), LayerNorms before and after, the
// local layers and the gated global layers (q/k/v/o without biases, fc1/fc2 and LayerNorms with
// them; two gates each global layer), and multi_modal_projector Linear(vision_output_dim -> text
// h).
Count MllamaVisionParams(ConfigReader& v, const nlohmann::json& vision, Count text_hidden) {
  const Count h = v.Int({"hidden_size"}), f = v.Int({"intermediate_size"});
  const Count layers = v.Layers({"num_hidden_layers"}), global = v.Layers({"num_global_layers"});
  const Count c = v.Int({"num_channels"}), p = v.Int({"patch_size"});
  const Count image = v.Int({"image_size"}), tiles = v.Int({"max_num_tiles"});
  const Count out = v.Int({"vision_output_dim"});
  const auto ratios = vision.find("supported_aspect_ratios");
  const Count aspect_ids =
      ratios != vision.end() && ratios->is_array() ? static_cast<Count>(ratios->size()) + 1 : 1;
  const Count patches = (p > 0 ? std::floor(image / p) * std::floor(image / p) : 0) + 1;
  const Count layer = 4 * h * h + Dense(h, f, true) + Dense(f, h, true) + LayerNorms(false, h, 2);
  return c * p * p * h + h + (1 + patches * h + aspect_ids * tiles * patches * h) +
         2 * (aspect_ids * tiles * h + 1) + LayerNorms(false, h, 2) + layers * layer +
         global * (layer + 2) + Dense(out, text_hidden, true);
}

// Llama 4's encoder (modeling_llama4.py): patches unfolded into Linear(C p^2 -> h) without bias,
// class and position embeddings (one per patch plus the class token), LayerNorms before and
// after, layers with biased q/k/v/o, fc1/fc2 and LayerNorms, the pixel-shuffle adapter's
// fc1 (intermediate -> projector_input_dim) and fc2 (projector_output_dim^2) without biases, and
// multi_modal_projector Linear(vision_output_dim -> text h) without bias.
Count Llama4VisionParams(ConfigReader& v, Count text_hidden) {
  const Count h = v.Int({"hidden_size"}), f = v.Int({"intermediate_size"});
  const Count layers = v.Layers({"num_hidden_layers"});
  const Count c = v.Int({"num_channels"}), p = v.Int({"patch_size"});
  const Count image = v.Int({"image_size"});
  const Count in = v.Int({"projector_input_dim"}), out = v.Int({"projector_output_dim"});
  const Count vision_out = v.Int({"vision_output_dim"});
  const Count patches = (p > 0 ? std::floor(image / p) * std::floor(image / p) : 0) + 1;
  const Count layer =
      4 * Dense(h, h, true) + Dense(h, f, true) + Dense(f, h, true) + LayerNorms(false, h, 2);
  return c * p * p * h + h + patches * h + LayerNorms(false, h, 2) + layers * layer + f * in +
         out * out + vision_out * text_hidden;
}

Count InternVitParams(ConfigReader& v, ConfigReader& top, Count text_hidden) {
  const Count h = v.Int({"hidden_size"}), f = v.Int({"intermediate_size"});
  const Count layers = v.Layers({"num_hidden_layers"});
  const Count c = v.Int({"num_channels"}), p = v.Int({"patch_size"});
  const Count image = v.Int({"image_size"});
  const Count patches = p > 0 ? std::floor(image / p) * std::floor(image / p) : 0;
  const bool rms = v.StringOr({"norm_type"}, "rms_norm") == "rms_norm";
  const bool qk_norm = v.BoolOr({"qk_normalization"}, true);
  Count n = h + (c * p * p * h + h) + (patches + 1) * h;  // class, patch Conv2d, positions
  const Count layer = LayerNorms(rms, h, 2) + Dense(h, 3 * h, v.BoolOr({"qkv_bias"}, false)) +
                      Dense(h, h, true) + (qk_norm ? 2 * h : 0) + 2 * h + Dense(h, f, true) +
                      Dense(f, h, true);
  n += layers * layer;
  // mlp1 over the pixel-shuffled features: 1 / downsample_ratio^2 patches merged into one.
  const double ratio = top.DoubleOr({"downsample_ratio"}, 0.5);
  if (!(ratio > 0 && ratio <= 1)) {
    top.Fail("downsample_ratio: expected a number in (0, 1], got " + std::to_string(ratio));
    return 0;
  }
  const Count merged = std::round(h / (static_cast<Count>(ratio) * ratio));
  return n + LayerNorms(false, merged, 1) + Dense(merged, text_hidden, true) +
         Dense(text_hidden, text_hidden, true);
}

}  // namespace

void AddCrossAttentionLayers(const nlohmann::json& text, ModelArch* arch,
                             std::vector<std::string>* problems) {
  // MllamaTextModel: embed_tokens has vocab_size + 8 rows; the layers named by
  // cross_attention_layers attend to the image instead of the text, with the same q/k/v/o shapes,
  // plus q_norm and k_norm (RMSNorm over head_dim) and two scalar gates.
  arch->embedding_params += 8 * arch->hidden_size;
  BlockSpec cross = arch->block_kinds.front();
  cross.norm_params += 2 * arch->head_dim;
  cross.num_norms += 2;
  cross.other_params += 2;
  arch->block_kinds.push_back(std::move(cross));
  const auto layers = text.find("cross_attention_layers");
  if (layers == text.end() || !layers->is_array()) {
    problems->push_back("text_config: cross_attention_layers: expected a list of layer indices");
    return;
  }
  for (const auto& l : *layers) {
    if (!l.is_number_integer() || l.get<int64_t>() < 0 || l.get<int64_t>() >= arch->num_layers) {
      problems->push_back("text_config: cross_attention_layers: expected layer indices below " +
                          std::to_string(arch->num_layers) + ", got " + l.dump());
      return;
    }
    arch->block_kind_of_layer[static_cast<size_t>(l.get<int64_t>())] = 1;
  }
}

bool IsMultimodal(std::string_view model_type) { return Find(model_type) != nullptr; }

std::string MultimodalTypes() {
  std::string out;
  for (const Multimodal& m : kMultimodal)
    out += (out.empty() ? "" : ", ") + std::string(m.model_type);
  return out;
}

nlohmann::json TextConfigOf(ConfigReader& top, const nlohmann::json& j) {
  const Multimodal* mm = Find(top.model_type());
  // InternVL's remote-code config names its language model llm_config.
  const char* key = top.model_type() == "internvl_chat" ? "llm_config" : "text_config";
  const auto t = j.find(key);
  nlohmann::json text;
  if (t != j.end() && t->is_object()) {
    const auto type = t->find("model_type");
    const std::string text_type = type != t->end() && type->is_string()
                                      ? type->get<std::string>()
                                      : std::string(mm->text_type);
    text = WithDefaults(text_type, *t);
    text["model_type"] = LanguageFamily(text_type);
  } else if (t != j.end() && !t->is_null()) {
    top.Fail(std::string(key) + ": expected an object");
  } else if (top.model_type() == "qwen2_vl" || top.model_type() == "qwen2_5_vl") {
    text = j;  // the language model's keys at the top level
    text.erase("vision_config");
    text["model_type"] = LanguageFamily(mm->text_type);
  } else {
    text = WithDefaults(mm->text_type, nlohmann::json::object());  // the class's default model
    text["model_type"] = LanguageFamily(mm->text_type);
  }
  return text;
}

int64_t VisionParams(ConfigReader& top, const nlohmann::json& j, const ModelArch& text,
                     std::vector<std::string>* problems) {
  const Multimodal* mm = Find(top.model_type());
  const auto vc = j.find("vision_config");
  if (vc != j.end() && !vc->is_null() && !vc->is_object()) {
    top.Fail("vision_config: expected an object");
    return 0;
  }
  const nlohmann::json given = vc != j.end() && vc->is_object() ? *vc : nlohmann::json::object();
  const auto type = given.find("model_type");
  std::string vision_type = type != given.end() && type->is_string() ? type->get<std::string>()
                                                                     : std::string(mm->vision_type);
  const nlohmann::json merged = WithDefaults(vision_type, given);
  ConfigReader v(merged, top.model_type() + " vision_config");
  Count n = 0;
  if (vision_type == "siglip_vision_model" || vision_type == "clip_vision_model") {
    const bool clip = vision_type == "clip_vision_model";
    n = VitParams(v, clip);
    const Count vh = v.Int({"hidden_size"});
    if (top.model_type() == "gemma3") {
      n += vh * text.hidden_size + vh;  // mm_input_projection_weight, mm_soft_emb_norm
    } else if (top.model_type() == "llava") {
      const bool bias = top.BoolOr({"multimodal_projector_bias"}, true);
      n += Dense(vh * FeatureLayers(j), text.hidden_size, bias) +
           Dense(text.hidden_size, text.hidden_size, bias);
    } else {
      v.Fail("a " + vision_type + " encoder in a " + top.model_type() + " model is not known");
    }
  } else if (vision_type == "qwen2_vl" || vision_type == "qwen2_5_vl") {
    n = QwenVisionParams(v, vision_type == "qwen2_5_vl");
  } else if (vision_type == "llama4_vision_model") {
    n = Llama4VisionParams(v, text.hidden_size);
  } else if (vision_type == "mllama_vision_model") {
    n = MllamaVisionParams(v, merged, text.hidden_size);
  } else if (vision_type == "intern_vit_6b") {
    n = InternVitParams(v, top, text.hidden_size);
  } else if (vision_type == "pixtral") {
    n = PixtralParams(v, top, text.hidden_size, FeatureLayers(j));
  } else {
    v.Fail("vision_config model_type '" + vision_type + "' is not known");
  }
  if (n > 1e15L) v.Fail("describes more than 10^15 parameters: not a real model");
  if (Status st = v.status(); !st.ok()) {
    problems->push_back(st.message());
    return 0;
  }
  return static_cast<int64_t>(n);
}

}  // namespace fmte::model_internal
