// Private to the model parser: a reader over one config.json that collects every missing or
// malformed key instead of stopping at the first, and the per-family builders that turn a config
// into a ModelArch. Thread-safety: a ConfigReader is used by one thread for one parse.
#ifndef FMTE_SRC_MODEL_CONFIG_H_
#define FMTE_SRC_MODEL_CONFIG_H_

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/model.h"
#include "fmte/status.h"

namespace fmte::model_internal {

using Keys = std::initializer_list<std::string_view>;

class ConfigReader {
 public:
  ConfigReader(const nlohmann::json& json, std::string model_type);

  // True when one of `keys` is present and not null.
  bool Has(Keys keys) const;
  // A positive integer from the first of `keys` present; records the keys as missing otherwise.
  int64_t Int(Keys keys);
  // The layer count: a positive integer up to 100,000 (layers are enumerated one by one).
  int64_t Layers(Keys keys);
  // A non-negative integer, or `fallback` when absent or null.
  int64_t IntOr(Keys keys, int64_t fallback);
  bool BoolOr(Keys keys, bool fallback);
  double DoubleOr(Keys keys, double fallback);
  std::string StringOr(Keys keys, std::string fallback);
  // A list of non-negative integers (absent or null: empty).
  std::vector<int64_t> IntList(std::string_view key);
  // A list of strings (absent or null: empty).
  std::vector<std::string> StringList(std::string_view key);

  // Records a problem the family found itself (e.g. "hidden_size must be divisible by heads").
  void Fail(std::string problem) { bad_.push_back(std::move(problem)); }
  // OK, or a ParseError naming the model_type and every missing or malformed key.
  Status status() const;
  const std::string& model_type() const { return model_type_; }

 private:
  const nlohmann::json* Find(Keys keys, std::string_view* found) const;
  static std::string Join(Keys keys);

  const nlohmann::json& json_;
  std::string model_type_;
  std::vector<std::string> missing_;
  std::vector<std::string> bad_;
};

inline int64_t NormParams(NormKind kind, int64_t width) {
  return kind == NormKind::kRms ? width : 2 * width;
}

inline LinearShape Linear(std::string name, LinearRole role, int64_t in, int64_t out, bool bias,
                          int64_t copies = 1, bool expert = false) {
  LinearShape l;
  l.name = std::move(name);
  l.role = role;
  l.in_features = in;
  l.out_features = out;
  l.has_bias = bias;
  l.copies = copies;
  l.expert = expert;
  return l;
}

// Adds `count` norms of `width` to a block.
inline void AddNorms(BlockSpec& block, NormKind kind, int64_t width, int64_t count) {
  block.norm_params += count * NormParams(kind, width);
  block.num_norms += count;
}

// Separate q/k/v/o projections (Llama style names q_proj, k_proj, v_proj, `o_name`).
void AddAttention(BlockSpec& block, int64_t h, int64_t heads, int64_t kv_heads, int64_t head_dim,
                  bool qkv_bias, bool o_bias, const char* o_name = "o_proj");
// Gated MLP gate/up/down (SwiGLU, GeGLU) of width f, optionally as `copies` routed experts.
void AddGatedMlp(BlockSpec& block, int64_t h, int64_t f, bool bias, int64_t copies = 1,
                 bool expert = false, const char* gate = "gate_proj", const char* up = "up_proj",
                 const char* down = "down_proj");

// Every layer uses `block`.
void SetUniformBlocks(ModelArch& arch, BlockSpec block);
// Embedding V*h, final norm, and lm_head (V*h [+V bias] unless tied).
void SetEmbeddingsAndHead(ModelArch& arch, NormKind final_norm, bool head_bias);

struct CommonDims {
  int64_t h, layers, heads, kv_heads, head_dim, vocab;
};
// Reads the attention/embedding dimensions every Llama-shaped config has (hidden_size,
// num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, vocab_size) and fills
// `arch` with them, RMSNorm, a gated MLP and the family's tie_word_embeddings default.
CommonDims ReadCommon(ConfigReader& r, ModelArch& arch);

// Family builders: read the keys the family needs from `r` and fill `arch` (which already holds
// id, model_type and torch_dtype). Problems are recorded in `r`; the caller checks r.status().
void BuildLlamaLike(ConfigReader& r,
                    ModelArch& arch);  // llama mistral qwen2 qwen3 gemma gemma2 gemma3_text granite
void BuildMoeLlamaLike(ConfigReader& r, ModelArch& arch);  // mixtral qwen2_moe qwen3_moe
void BuildPhi3(ConfigReader& r, ModelArch& arch);
void BuildOlmo2(ConfigReader& r, ModelArch& arch);  // olmo2 olmo3
// Llama-shaped families with their own biases, norms or MLP (model_families_variants.cc):
// smollm3 ministral seed_oss hunyuan_v1_dense arcee apertus glm4 cohere cohere2 stablelm internlm2.
void BuildLlamaVariant(ConfigReader& r, ModelArch& arch);
void BuildGpt2(ConfigReader& r, ModelArch& arch);
void BuildGptJ(ConfigReader& r, ModelArch& arch);
void BuildGptNeoX(ConfigReader& r, ModelArch& arch);
void BuildPhi(ConfigReader& r, ModelArch& arch);      // phi (PhiForCausalLM in transformers)
void BuildPhiMsft(ConfigReader& r, ModelArch& arch);  // phi-msft (legacy remote code)
void BuildFalcon(ConfigReader& r, ModelArch& arch);   // falcon, RefinedWeb, RefinedWebModel
void BuildStarcoder2(ConfigReader& r, ModelArch& arch);
void BuildDeepseek(ConfigReader& r,
                   ModelArch& arch);  // deepseek (deepseek-moe), deepseek_v2, deepseek_v3
void BuildGptOss(ConfigReader& r, ModelArch& arch);
void BuildLlama4(ConfigReader& r, ModelArch& arch);     // llama4_text
void BuildNemotronH(ConfigReader& r, ModelArch& arch);  // nemotron_h (Mamba-2 hybrid, MoE)

// Multimodal configs (model_families_multimodal.cc): gemma3, qwen2_vl, qwen2_5_vl, mistral3, llava,
// mllama, llama4, internvl_chat.
bool IsMultimodal(std::string_view model_type);
// Their model_types, comma-separated (for error messages).
std::string MultimodalTypes();
// The language model's config of the multimodal config `j` (whose model_type `top` reads):
// text_config (InternVL: llm_config) with its class defaults filled in and its model_type set, or
// the top-level keys (Qwen2-VL, Qwen2.5-VL). Problems are recorded in `top`.
nlohmann::json TextConfigOf(ConfigReader& top, const nlohmann::json& j);
// The vision encoder's and projector's parameters of `j`, whose language model is `text`; the
// vision_config's missing or malformed keys are appended to `problems` as one message.
int64_t VisionParams(ConfigReader& top, const nlohmann::json& j, const ModelArch& text,
                     std::vector<std::string>* problems);
// Llama-3.2-Vision (mllama): the cross-attention layers of `text` (its text config) as a second
// block kind of `arch`, and the 8 extra embedding rows; problems are appended.
void AddCrossAttentionLayers(const nlohmann::json& text, ModelArch* arch,
                             std::vector<std::string>* problems);

}  // namespace fmte::model_internal

#endif  // FMTE_SRC_MODEL_CONFIG_H_
