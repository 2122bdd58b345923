// Ad-hoc architectures from launch flags, as config.json text for ParseModelConfig (launcher.h).
#include <cstdio>

#include "launcher.h"

namespace fmte::internal {

// transformers' LlamaConfig keys; rms_norm_eps and hidden_act as Llama's (they do not change the
// parameter count or memory, only ParseModelConfig's view of the family).
std::string LlamaConfigJson(int64_t hidden, int64_t layers, int64_t heads, int64_t kv_heads, int64_t ffn,
                            int64_t vocab, int64_t positions, bool tied) {
  char buf[640];
  std::snprintf(buf, sizeof(buf),
                "{\"model_type\":\"llama\",\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":%lld,"
                "\"num_hidden_layers\":%lld,\"num_attention_heads\":%lld,\"num_key_value_heads\":%lld,"
                "\"intermediate_size\":%lld,\"vocab_size\":%lld,\"max_position_embeddings\":%lld,"
                "\"tie_word_embeddings\":%s,\"rms_norm_eps\":1e-05,\"hidden_act\":\"silu\","
                "\"attention_bias\":false,\"torch_dtype\":\"bfloat16\"}",
                static_cast<long long>(hidden), static_cast<long long>(layers), static_cast<long long>(heads),
                static_cast<long long>(kv_heads), static_cast<long long>(ffn), static_cast<long long>(vocab),
                static_cast<long long>(positions), tied ? "true" : "false");
  return buf;
}

}  // namespace fmte::internal
