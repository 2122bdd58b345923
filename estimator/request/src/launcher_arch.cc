// Ad-hoc architectures from launch flags, as config.json text for ParseModelConfig (launcher.h).
#include <charconv>

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

}  // namespace fmte::internal
