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

std::string AdHocArch::Json(std::string_view prefix, std::string* name) const {
  const int64_t kv = kv_heads > 0 ? kv_heads : heads;
  const int64_t width = ffn > 0 ? ffn : gated ? (4 * hidden * 2 / 3) / 64 * 64 : 4 * hidden;
  const int64_t vocab_size = vocab > 0 ? vocab : 50304;
  const int64_t max_positions = positions > 0 ? positions : 2048;
  *name = std::string(prefix) + (gated ? "-llama-" : "-gpt-") + std::to_string(layers) + "l-" +
          std::to_string(hidden) + "h";
  if (gated)
    return LlamaConfigJson(hidden, layers, heads, kv, width, vocab_size, max_positions, tied);
  // transformers' GPTNeoXConfig keys (litgpt's defaults: rotary_percentage 0.25, parallel
  // residual, biases); no key-value groups in that family, so the heads are the query heads.
  if (neox)
    return JsonObject({{"model_type", "\"gpt_neox\""},
                       {"architectures", "[\"GPTNeoXForCausalLM\"]"},
                       {"hidden_size", JsonInt(hidden)},
                       {"num_hidden_layers", JsonInt(layers)},
                       {"num_attention_heads", JsonInt(heads)},
                       {"intermediate_size", JsonInt(width)},
                       {"vocab_size", JsonInt(vocab_size)},
                       {"max_position_embeddings", JsonInt(max_positions)},
                       {"rotary_pct", "0.25"},
                       {"use_parallel_residual", "true"},
                       {"tie_word_embeddings", tied ? "true" : "false"},
                       {"torch_dtype", "\"bfloat16\""}});
  return JsonObject({{"model_type", "\"gpt2\""},
                     {"architectures", "[\"GPT2LMHeadModel\"]"},
                     {"n_embd", JsonInt(hidden)},
                     {"n_layer", JsonInt(layers)},
                     {"n_head", JsonInt(heads)},
                     {"n_inner", JsonInt(width)},
                     {"vocab_size", JsonInt(vocab_size)},
                     {"n_positions", JsonInt(max_positions)},
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
  AdHocArch a;
  a.hidden = integer("hidden");
  a.layers = integer("layers");
  a.heads = integer("heads");
  std::string json, name, origin;
  if (!has_model && a.hidden > 0 && a.layers > 0 && a.heads > 0) {
    const auto style = arch.find("style");
    const std::string shape = style == arch.end() ? "llama" : Lower(style->second->value);
    a.gated = shape == "llama";
    a.neox = shape == "neox";
    if (!a.gated && !a.neox && shape != "gpt2") {
      // A shape fmte cannot build from dimensions (litgpt's LLaMAMoE): the model stays unread
      // rather than counted as a dense one.
      f->warnings.push_back(style->second->origin + ": a " + Shown(style->second->value) +
                            " model cannot be built from its dimensions; its size is not known");
      std::erase_if(f->values, [](const Assignment& v) { return v.key.starts_with("arch."); });
      return;
    }
    a.kv_heads = integer("kv-heads");
    // The MLP width: given, or the input projection's (both halves of a gated MLP: OLMo's
    // mlp_hidden_size), or a ratio of the hidden size; else AdHocArch's default.
    a.ffn = integer("ffn");
    int64_t proj = integer("ffn-proj");
    // Absurd sizes go on to ParseModelConfig, which refuses them by name; never an overflow here.
    if (proj == 0 && __builtin_mul_overflow(integer("ffn-ratio"), a.hidden, &proj)) proj = 0;
    if (a.ffn == 0 && proj > 0) a.ffn = a.gated ? proj / 2 : proj;
    a.vocab = integer("vocab");
    if (a.vocab == 0)
      f->warnings.push_back(std::string(launcher) +
                            ": the vocabulary comes from the tokenizer; GPT-2's 50304 (padded) "
                            "assumed");
    a.positions = integer("positions");
    const auto tied_it = arch.find("tied");
    a.tied = tied_it == arch.end() || Lower(tied_it->second->value) == "true";
    json = a.Json(launcher, &name);
    origin = arch.find("hidden")->second->origin;
  }
  std::erase_if(f->values, [](const Assignment& a) { return a.key.starts_with("arch."); });
  if (json.empty()) return;
  f->arch_json = std::move(json);
  f->values.push_back(Assignment{"model", std::move(name), std::move(origin)});
}

}  // namespace fmte::internal
