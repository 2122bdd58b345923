// ConfigReader and the shape helpers shared by the family builders.
#include "model_config.h"

#include <cmath>
#include <utility>

namespace fmte::model_internal {

ConfigReader::ConfigReader(const nlohmann::json& json, std::string model_type)
    : json_(json), model_type_(std::move(model_type)) {}

const nlohmann::json* ConfigReader::Find(Keys keys, std::string_view* found) const {
  for (std::string_view key : keys) {
    auto it = json_.find(std::string(key));
    if (it != json_.end() && !it->is_null()) {
      if (found != nullptr) *found = key;
      return &*it;
    }
  }
  return nullptr;
}

std::string ConfigReader::Join(Keys keys) {
  std::string out;
  for (std::string_view key : keys) {
    if (!out.empty()) out += " or ";
    out += key;
  }
  return out;
}

bool ConfigReader::Has(Keys keys) const { return Find(keys, nullptr) != nullptr; }

namespace {
// Larger values are not a model dimension; the bound keeps every shape product within int64.
constexpr int64_t kMaxValue = int64_t{1} << 31;

// An integral JSON number (1e6 written as 1000000.0 is accepted when exact).
bool AsInt(const nlohmann::json& v, int64_t* out) {
  if (v.is_number_integer()) {
    *out = v.get<int64_t>();
    return true;
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) {
      *out = static_cast<int64_t>(d);
      return true;
    }
  }
  return false;
}
}  // namespace

int64_t ConfigReader::Int(Keys keys) {
  std::string_view key;
  const nlohmann::json* v = Find(keys, &key);
  if (v == nullptr) {
    missing_.push_back(Join(keys));
    return 0;
  }
  int64_t n = 0;
  if (!AsInt(*v, &n) || n <= 0 || n > kMaxValue) {
    bad_.push_back(std::string(key) + ": expected a positive integer up to 2^31, got " + v->dump());
    return 0;
  }
  return n;
}

int64_t ConfigReader::Layers(Keys keys) {
  int64_t n = Int(keys);
  if (n > 100000) {
    bad_.push_back(Join(keys) + ": expected at most 100000 layers, got " + std::to_string(n));
    return 0;
  }
  return n;
}

int64_t ConfigReader::IntOr(Keys keys, int64_t fallback) {
  std::string_view key;
  const nlohmann::json* v = Find(keys, &key);
  if (v == nullptr) return fallback;
  int64_t n = 0;
  if (!AsInt(*v, &n) || n < 0 || n > kMaxValue) {
    bad_.push_back(std::string(key) + ": expected a non-negative integer up to 2^31, got " +
                   v->dump());
    return fallback;
  }
  return n;
}

bool ConfigReader::BoolOr(Keys keys, bool fallback) {
  std::string_view key;
  const nlohmann::json* v = Find(keys, &key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) {
    bad_.push_back(std::string(key) + ": expected true or false, got " + v->dump());
    return fallback;
  }
  return v->get<bool>();
}

double ConfigReader::DoubleOr(Keys keys, double fallback) {
  std::string_view key;
  const nlohmann::json* v = Find(keys, &key);
  if (v == nullptr) return fallback;
  if (!v->is_number()) {
    bad_.push_back(std::string(key) + ": expected a number, got " + v->dump());
    return fallback;
  }
  return v->get<double>();
}

std::string ConfigReader::StringOr(Keys keys, std::string fallback) {
  std::string_view key;
  const nlohmann::json* v = Find(keys, &key);
  if (v == nullptr) return fallback;
  if (!v->is_string()) {
    bad_.push_back(std::string(key) + ": expected a string, got " + v->dump());
    return fallback;
  }
  return v->get<std::string>();
}

std::vector<int64_t> ConfigReader::IntList(std::string_view key) {
  std::vector<int64_t> out;
  const nlohmann::json* v = Find({key}, nullptr);
  if (v == nullptr) return out;
  bool ok = v->is_array();
  if (ok) {
    for (const auto& e : *v) {
      int64_t n = 0;
      if (!AsInt(e, &n) || n < 0 || n > kMaxValue) {
        ok = false;
        break;
      }
      out.push_back(n);
    }
  }
  if (!ok) {
    bad_.push_back(std::string(key) + ": expected a list of non-negative integers, got " +
                   v->dump());
    out.clear();
  }
  return out;
}

std::vector<std::string> ConfigReader::StringList(std::string_view key) {
  std::vector<std::string> out;
  const nlohmann::json* v = Find({key}, nullptr);
  if (v == nullptr) return out;
  bool ok = v->is_array();
  if (ok) {
    for (const auto& e : *v) {
      if (!e.is_string()) {
        ok = false;
        break;
      }
      out.push_back(e.get<std::string>());
    }
  }
  if (!ok) {
    bad_.push_back(std::string(key) + ": expected a list of strings, got " + v->dump());
    out.clear();
  }
  return out;
}

Status ConfigReader::status() const {
  if (missing_.empty() && bad_.empty()) return Status::Ok();
  std::string msg = "config with model_type '" + model_type_ + "'";
  if (!missing_.empty()) {
    msg += " is missing required keys: ";
    for (size_t i = 0; i < missing_.size(); ++i) msg += (i ? ", " : "") + missing_[i];
  }
  if (!bad_.empty()) {
    msg += missing_.empty() ? " has malformed values: " : "; malformed values: ";
    for (size_t i = 0; i < bad_.size(); ++i) msg += (i ? "; " : "") + bad_[i];
  }
  return Status::ParseError(msg);
}

void AddAttention(BlockSpec& block, int64_t h, int64_t heads, int64_t kv_heads, int64_t head_dim,
                  bool qkv_bias, bool o_bias, const char* o_name) {
  block.linears.push_back(Linear("q_proj", LinearRole::kQ, h, heads * head_dim, qkv_bias));
  block.linears.push_back(Linear("k_proj", LinearRole::kK, h, kv_heads * head_dim, qkv_bias));
  block.linears.push_back(Linear("v_proj", LinearRole::kV, h, kv_heads * head_dim, qkv_bias));
  block.linears.push_back(Linear(o_name, LinearRole::kO, heads * head_dim, h, o_bias));
}

void AddGatedMlp(BlockSpec& block, int64_t h, int64_t f, bool bias, int64_t copies, bool expert,
                 const char* gate, const char* up, const char* down) {
  block.linears.push_back(Linear(gate, LinearRole::kGate, h, f, bias, copies, expert));
  block.linears.push_back(Linear(up, LinearRole::kUp, h, f, bias, copies, expert));
  block.linears.push_back(Linear(down, LinearRole::kDown, f, h, bias, copies, expert));
}

void SetUniformBlocks(ModelArch& arch, BlockSpec block) {
  arch.block_kinds.assign(1, std::move(block));
  arch.block_kind_of_layer.assign(static_cast<size_t>(arch.num_layers), 0);
}

void SetEmbeddingsAndHead(ModelArch& arch, NormKind final_norm, bool head_bias) {
  arch.embedding_params = arch.vocab_size * arch.hidden_size;
  arch.final_norm_params = NormParams(final_norm, arch.hidden_size);
  arch.lm_head_params = arch.tie_word_embeddings ? 0
                                                 : arch.vocab_size * arch.hidden_size +
                                                       (head_bias ? arch.vocab_size : 0);
}

}  // namespace fmte::model_internal
