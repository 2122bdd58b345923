// Ad-hoc architectures from launch flags and config-file keys, as config.json text for
// ParseModelConfig (launcher.h).
#include <charconv>
#include <map>

#include "launcher.h"

namespace fmte::internal {

std::string JsonObject(std::initializer_list<JsonField> fields) {
  size_t bytes = 2;
  for (const JsonField& f : fields) bytes += f.key.size() + f.raw_value.size() + 4;
  std::string out;
  out.reserve(bytes);
  out += '{';
  for (const JsonField& f : fields) {
    if (out.size() > 1) out += ',';
    out.append("\"").append(f.key).append("\":").append(f.raw_value);
  }
  out += '}';
  return out;
}

JsonInt::JsonInt(int64_t v) : end_(std::to_chars(buf_, buf_ + sizeof(buf_), v).ptr) {}

// transformers' LlamaConfig keys; rms_norm_eps and hidden_act as Llama's (they do not change the
// parameter count or memory, only ParseModelConfig's view of the family).
std::string LlamaConfigJson(int64_t hidden, int64_t layers, int64_t heads, int64_t kv_heads,
                            int64_t ffn, int64_t vocab, int64_t positions, bool tied) {
  return JsonObject({{"model_type", "\"llama\""},
                     {"architectures", "[\"LlamaForCausalLM\"]"},
                     {"hidden_size", JsonInt(hidden)},
                     {"num_hidden_layers", JsonInt(layers)},
                     {"num_attention_heads", JsonInt(heads)},
                     {"num_key_value_heads", JsonInt(kv_heads)},
                     {"intermediate_size", JsonInt(ffn)},
                     {"vocab_size", JsonInt(vocab)},
                     {"max_position_embeddings", JsonInt(positions)},
                     {"tie_word_embeddings", tied ? "true" : "false"},
                     {"rms_norm_eps", "1e-05"},
                     {"hidden_act", "\"silu\""},
                     {"attention_bias", "false"},
                     {"torch_dtype", "\"bfloat16\""}});
}

std::string Gpt2ConfigJson(int64_t hidden, int64_t layers, int64_t heads, int64_t ffn,
                           int64_t vocab, int64_t positions, bool tied) {
  return JsonObject({{"model_type", "\"gpt2\""},
                     {"architectures", "[\"GPT2LMHeadModel\"]"},
                     {"n_embd", JsonInt(hidden)},
                     {"n_layer", JsonInt(layers)},
                     {"n_head", JsonInt(heads)},
                     {"n_inner", JsonInt(ffn)},
                     {"vocab_size", JsonInt(vocab)},
                     {"n_positions", JsonInt(positions)},
                     {"tie_word_embeddings", tied ? "true" : "false"},
                     {"torch_dtype", "\"bfloat16\""}});
}

void ArchFromKeys(std::string_view launcher, LauncherFindings* f) {
  // The last value of each arch.* key (a later rule or file wins), and where it came from.
  std::map<std::string, const Assignment*, std::less<>> arch;
  bool has_model = false;
  for (const Assignment& a : f->values) {
    if (a.key.starts_with("arch."))
      arch[a.key.substr(5)] = &a;
    else
      has_model = has_model || a.key == "model";
  }
  if (arch.empty()) return;
  auto integer = [&](std::string_view field) -> int64_t {
    const auto it = arch.find(field);
    if (it == arch.end()) return 0;
    auto r = ParseBoundedInt(it->second->value, 1, int64_t{1} << 40, "");
    if (!r.ok()) {
      f->warnings.push_back(it->second->origin + ": expected a positive integer, got '" +
                            Shown(it->second->value) + "'; not used");
      return 0;
    }
    return *r;
  };
  const int64_t hidden = integer("hidden");
  const int64_t layers = integer("layers");
  const int64_t heads = integer("heads");
  std::string json, name, origin;
  if (!has_model && hidden > 0 && layers > 0 && heads > 0) {
    const auto style = arch.find("style");
    const bool gated = style == arch.end() || Lower(style->second->value) != "gpt2";
    int64_t kv_heads = integer("kv-heads");
    if (kv_heads == 0) kv_heads = heads;
    // The MLP width: given, or the input projection's (both halves of a gated MLP: OLMo's
    // mlp_hidden_size), or a ratio of the hidden size; else Megatron's defaults (4h; 2/3 of 4h
    // rounded down to 64 for SwiGLU), which GPT-NeoX shares.
    int64_t ffn = integer("ffn");
    int64_t proj = integer("ffn-proj");
    // Absurd sizes go on to ParseModelConfig, which refuses them by name; never an overflow here.
    if (proj == 0 && __builtin_mul_overflow(integer("ffn-ratio"), hidden, &proj)) proj = 0;
    if (ffn == 0 && proj > 0) ffn = gated ? proj / 2 : proj;
    if (ffn == 0) ffn = gated ? (4 * hidden * 2 / 3) / 64 * 64 : 4 * hidden;
    int64_t vocab = integer("vocab");
    if (vocab == 0) {
      vocab = 50304;
      f->warnings.push_back(std::string(launcher) +
                            ": the vocabulary comes from the tokenizer; GPT-2's 50304 (padded) "
                            "assumed");
    }
    int64_t positions = integer("positions");
    if (positions == 0) positions = 2048;
    const auto tied_it = arch.find("tied");
    const bool tied = tied_it == arch.end() || Lower(tied_it->second->value) == "true";
    json = gated ? LlamaConfigJson(hidden, layers, heads, kv_heads, ffn, vocab, positions, tied)
                 : Gpt2ConfigJson(hidden, layers, heads, ffn, vocab, positions, tied);
    name = std::string(launcher) + (gated ? "-llama-" : "-gpt-") + std::to_string(layers) + "l-" +
           std::to_string(hidden) + "h";
    origin = arch.find("hidden")->second->origin;
  }
  std::erase_if(f->values, [](const Assignment& a) { return a.key.starts_with("arch."); });
  if (json.empty()) return;
  f->arch_json = std::move(json);
  f->values.push_back(Assignment{"model", std::move(name), std::move(origin)});
}

}  // namespace fmte::internal
