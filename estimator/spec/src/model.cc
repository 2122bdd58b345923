// Parameter counting over ModelArch, and config.json parsing: JSON -> model_type dispatch -> the
// family builder (model_families*.cc).
#include "fmte/model.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "fmte/file.h"
#include "model_config.h"

namespace fmte {

int64_t BlockSpec::Params() const {
  int64_t n = norm_params + other_params;
  for (const LinearShape& l : linears) n += l.Params();
  return n;
}

bool BlockSpec::HasAttention() const {
  for (const LinearShape& l : linears) {
    if (l.role == LinearRole::kQ || l.role == LinearRole::kK || l.role == LinearRole::kV ||
        l.role == LinearRole::kQkv)
      return true;
  }
  return false;
}

int64_t BlockSpec::ActiveParams() const {
  int64_t n = norm_params + other_params;
  for (const LinearShape& l : linears) {
    if (l.expert && l.copies > 0 && experts_per_token > 0) {
      n += l.Params() / l.copies * std::min(experts_per_token, l.copies);
    } else {
      n += l.Params();
    }
  }
  return n;
}

namespace {

// Counts() with `layers_of_kind(k)`: how many layers use block_kinds[k]. Each block kind is counted
// once and multiplied by its layers.
template <typename LayersOfKind>
ParamCounts CountParams(const ModelArch& a, LayersOfKind layers_of_kind) {
  ParamCounts c;
  c.embedding = a.embedding_params + a.position_embedding_params;
  c.lm_head = a.lm_head_params;
  c.final_norm = a.final_norm_params;
  int64_t active_blocks = 0;
  c.largest_module = std::max({a.embedding_params, a.position_embedding_params, a.lm_head_params});
  for (size_t k = 0; k < a.block_kinds.size(); ++k) {
    const int64_t uses = layers_of_kind(k);
    if (uses == 0) continue;
    c.blocks += uses * a.block_kinds[k].Params();
    active_blocks += uses * a.block_kinds[k].ActiveParams();
    for (const LinearShape& l : a.block_kinds[k].linears) {
      c.largest_module = std::max(c.largest_module, l.ModuleParams());
    }
  }
  c.vision = a.vision_params;
  c.total = c.embedding + c.lm_head + c.blocks + c.final_norm + c.vision;
  c.active = c.embedding + c.lm_head + active_blocks + c.final_norm + c.vision;
  return c;
}

}  // namespace

ParamCounts ModelArch::Counts() const {
  // One pass over the layers per kind (models have one or two kinds); nothing is allocated.
  return CountParams(*this, [this](size_t k) -> int64_t {
    return std::count(block_kind_of_layer.begin(), block_kind_of_layer.end(), static_cast<int>(k));
  });
}

ParamCounts ModelArch::CountsWithLayers(std::span<const int> layers_of_kind) const {
  return CountParams(*this, [layers_of_kind](size_t k) -> int64_t {
    return k < layers_of_kind.size() ? layers_of_kind[k] : 0;
  });
}

namespace {

using model_internal::ConfigReader;
using Builder = void (*)(ConfigReader&, ModelArch&);

struct Family {
  const char* model_type;
  Builder build;
};

// Every model_type fmte can count exactly. Anything else is Unsupported.
constexpr Family kFamilies[] = {
    {"llama", model_internal::BuildLlamaLike},
    {"mistral", model_internal::BuildLlamaLike},
    {"qwen2", model_internal::BuildLlamaLike},
    {"qwen3", model_internal::BuildLlamaLike},
    {"gemma", model_internal::BuildLlamaLike},
    {"gemma2", model_internal::BuildLlamaLike},
    {"gemma3_text", model_internal::BuildLlamaLike},
    {"granite", model_internal::BuildLlamaLike},
    {"phi3", model_internal::BuildPhi3},
    {"olmo2", model_internal::BuildOlmo2},
    {"olmo3", model_internal::BuildOlmo2},
    {"smollm3", model_internal::BuildLlamaVariant},
    {"ministral", model_internal::BuildLlamaVariant},
    {"seed_oss", model_internal::BuildLlamaVariant},
    {"hunyuan_v1_dense", model_internal::BuildLlamaVariant},
    {"arcee", model_internal::BuildLlamaVariant},
    {"apertus", model_internal::BuildLlamaVariant},
    {"glm4", model_internal::BuildLlamaVariant},
    {"cohere", model_internal::BuildLlamaVariant},
    {"cohere2", model_internal::BuildLlamaVariant},
    {"stablelm", model_internal::BuildLlamaVariant},
    {"internlm2", model_internal::BuildLlamaVariant},
    {"mixtral", model_internal::BuildMoeLlamaLike},
    {"qwen2_moe", model_internal::BuildMoeLlamaLike},
    {"qwen3_moe", model_internal::BuildMoeLlamaLike},
    {"gpt2", model_internal::BuildGpt2},
    {"gptj", model_internal::BuildGptJ},
    {"gpt_neox", model_internal::BuildGptNeoX},
    {"phi", model_internal::BuildPhi},
    {"phi-msft", model_internal::BuildPhiMsft},
    {"falcon", model_internal::BuildFalcon},
    {"RefinedWeb", model_internal::BuildFalcon},
    {"RefinedWebModel", model_internal::BuildFalcon},
    {"starcoder2", model_internal::BuildStarcoder2},
    {"deepseek", model_internal::BuildDeepseek},
    {"deepseek_v2", model_internal::BuildDeepseek},
    {"deepseek_v3", model_internal::BuildDeepseek},
    {"gpt_oss", model_internal::BuildGptOss},
    {"nemotron_h", model_internal::BuildNemotronH},
    {"llama4_text", model_internal::BuildLlama4},
};

std::string SupportedList() {
  std::string out;
  for (const Family& f : kFamilies) out += (out.empty() ? "" : ", ") + std::string(f.model_type);
  return out + ", and the multimodal " + model_internal::MultimodalTypes();
}

std::string ArchitecturesOf(const nlohmann::json& j) {
  auto it = j.find("architectures");
  if (it == j.end() || !it->is_array() || it->empty()) return "";
  std::string out;
  for (const auto& a : *it) {
    if (a.is_string()) out += (out.empty() ? "" : ",") + a.get<std::string>();
  }
  return out;
}

// The parameter count in floating point, so that absurd configs are refused before any int64
// product can overflow (each dimension is at most 2^31, so each factor pair fits in long double).
// The layers that attend through the sliding window (ModelArch::sliding_window_layers).
int64_t SlidingWindowLayers(const nlohmann::json& j, const ModelArch& arch) {
  const int64_t n = arch.num_layers;
  if (const auto t = j.find("layer_types"); t != j.end() && t->is_array()) {
    int64_t sliding = 0;
    for (const auto& v : *t)
      sliding += v.is_string() && v.get<std::string>() == "sliding_attention";
    return std::min(sliding, n);
  }
  // All but every sliding_window_pattern-th layer (`pattern` when the config does not say).
  const auto all_but_every = [&](int64_t pattern) {
    if (const auto p = j.find("sliding_window_pattern"); p != j.end() && p->is_number_integer())
      pattern = std::max<int64_t>(1, p->get<int64_t>());
    return n - n / pattern;
  };
  if (arch.model_type == "gemma2") return (n + 1) / 2;  // layers 0, 2, 4, ...
  if (arch.model_type == "olmo3") return n - n / 4;     // Olmo3Config: all but every 4th layer
  if (arch.model_type == "cohere2") return all_but_every(4);  // Cohere2Config's default
  if (arch.model_type == "gemma3" || arch.model_type == "gemma3_text")
    return all_but_every(6);  // Gemma3TextConfig's default
  return n;
}

long double ApproxTotal(const ModelArch& a) {
  long double total = static_cast<long double>(a.vocab_size) * a.hidden_size * 2 +
                      static_cast<long double>(a.position_embedding_params);
  for (size_t layer = 0; layer < a.block_kind_of_layer.size(); ++layer) {
    const BlockSpec& b = a.block_kinds[a.block_kind_of_layer[layer]];
    total += static_cast<long double>(b.norm_params) + b.other_params;
    for (const LinearShape& l : b.linears) {
      total += static_cast<long double>(l.copies) * l.in_features * (l.out_features + 1);
    }
  }
  return total;
}

Result<ModelArch> ParseMultimodal(const nlohmann::json& j, std::string id, const std::string& seen);

Result<ModelArch> ParseJson(const nlohmann::json& j, std::string id) {
  if (!j.is_object()) return Status::ParseError("config.json must be a JSON object");
  std::string archs = ArchitecturesOf(j);
  std::string seen = archs.empty() ? "" : " (architectures: " + archs + ")";
  auto mt = j.find("model_type");
  if (mt == j.end() || !mt->is_string()) {
    return Status::ParseError("config is missing the required key model_type" + seen +
                              "; known model types: " + SupportedList());
  }
  std::string model_type = mt->get<std::string>();
  if (model_internal::IsMultimodal(model_type)) return ParseMultimodal(j, std::move(id), seen);
  const Family* family = nullptr;
  for (const Family& f : kFamilies) {
    if (model_type == f.model_type) family = &f;
  }
  if (family == nullptr) {
    return Status::Unsupported("unknown model_type '" + model_type + "'" + seen +
                               ": fmte counts parameters only for known families (" +
                               SupportedList() + ") and does not guess");
  }
  ModelArch arch;
  arch.id = std::move(id);
  arch.model_type = model_type;
  ConfigReader r(j, model_type);
  arch.torch_dtype = r.StringOr({"torch_dtype", "dtype"}, "");
  family->build(r, arch);
  // Read leniently: a window that is not a positive integer (null, false) is no window.
  if (const auto w = j.find("sliding_window"); w != j.end() && w->is_number_integer()) {
    const auto use = j.find("use_sliding_window");
    if ((use == j.end() || !use->is_boolean() || use->get<bool>()) && w->get<int64_t>() > 0)
      arch.sliding_window = w->get<int64_t>();
  }
  if (arch.sliding_window > 0) arch.sliding_window_layers = SlidingWindowLayers(j, arch);
  // Read leniently too: null (Gemma-3) or a non-positive cap is no softcapping.
  if (const auto c = j.find("attn_logit_softcapping"); c != j.end() && c->is_number()) {
    if (c->get<double>() > 0) arch.attn_logit_softcapping = c->get<double>();
  }
  for (const char* key : {"_attn_implementation", "attn_implementation"}) {
    if (const auto a = j.find(key); a != j.end() && a->is_string())
      arch.config_eager_attention = a->get<std::string>() == "eager";
  }
  if (const auto c = j.find("final_logit_softcapping"); c != j.end() && c->is_number()) {
    if (c->get<double>() > 0) arch.final_logit_softcapping = c->get<double>();
  }
  Status st = r.status();
  if (!st.ok()) return Status(st).WithContext(seen.empty() ? "config" : "config" + seen);
  if (arch.num_layers <= 0 ||
      arch.block_kind_of_layer.size() != static_cast<size_t>(arch.num_layers) ||
      arch.block_kinds.empty()) {
    return Status::Internal("model_type '" + model_type + "': builder produced no layers");
  }
  if (ApproxTotal(arch) > 1e15L) {
    return Status::ParseError("config with model_type '" + model_type +
                              "' describes more than 10^15 parameters: not a real model");
  }
  return arch;
}

// A multimodal model: its language model through ParseJson from the text config (which must name
// a language model), then the vision encoder and projector.
Result<ModelArch> ParseMultimodal(const nlohmann::json& j, std::string id,
                                  const std::string& seen) {
  const std::string model_type = j["model_type"].get<std::string>();
  ConfigReader top(j, model_type);
  const nlohmann::json text = model_internal::TextConfigOf(top, j);
  if (Status st = top.status(); !st.ok()) return Status(st).WithContext("config" + seen);
  const std::string text_type = text["model_type"].get<std::string>();
  if (model_internal::IsMultimodal(text_type))
    return Status::ParseError("config" + seen + ": text_config: model_type '" + text_type +
                              "' is not a language model");
  Result<ModelArch> arch = ParseJson(text, std::move(id));
  if (!arch.ok()) return arch.status().WithContext("config" + seen + ": text_config");
  std::vector<std::string> problems;
  if (model_type == "mllama")
    model_internal::AddCrossAttentionLayers(text, &arch.value(), &problems);
  arch->vision_params = model_internal::VisionParams(top, j, *arch, &problems);
  if (Status st = top.status(); !st.ok()) return Status(st).WithContext("config" + seen);
  if (!problems.empty()) return Status::ParseError(problems.front()).WithContext("config" + seen);
  arch->multimodal_type = model_type;
  if (arch->torch_dtype.empty()) arch->torch_dtype = top.StringOr({"torch_dtype", "dtype"}, "");
  return arch;
}

}  // namespace

Result<ModelArch> ParseModelConfig(std::string_view json_text, std::string id) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text.begin(), json_text.end());
  } catch (const nlohmann::json::parse_error& e) {
    return Status::ParseError("invalid JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  } catch (const std::exception& e) {
    return Status::ParseError(std::string("invalid JSON: ") + e.what());
  }
  try {
    return ParseJson(j, std::move(id));
  } catch (
      const std::exception& e) {  // nlohmann type errors should not happen; never let one escape
    return Status::ParseError(std::string("malformed config: ") + e.what());
  }
}

Result<ModelArch> LoadModelConfigFile(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string file = path;
  if (fs::is_directory(path, ec)) file = (fs::path(path) / "config.json").string();
  Result<std::string> text = ReadFile(file, "the model config");
  if (!text.ok()) return text.status();
  Result<ModelArch> arch = ParseModelConfig(*text, path);
  if (!arch.ok()) return arch.status().WithContext(file);
  return arch;
}

}  // namespace fmte
