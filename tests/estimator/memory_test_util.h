// Hand-built architectures for the memory tests (no config parsing involved):
//  - GptArch: Megatron/Korthikanti GPT (LayerNorm, plain 4h GeLU MLP, multi-head attention, biases,
//    tied embeddings, learned positions), HF GPT-2 module names.
//  - LlamaArch: Llama style (RMSNorm, gated SwiGLU MLP, grouped-query attention, untied head).
#ifndef FMTE_TESTS_ESTIMATOR_MEMORY_TEST_UTIL_H_
#define FMTE_TESTS_ESTIMATOR_MEMORY_TEST_UTIL_H_

#include <cstdint>
#include <string>

#include "fmte/gpu.h"
#include "fmte/job.h"
#include "fmte/model.h"

namespace fmte::testing {

inline LinearShape MakeLinear(std::string name, LinearRole role, int64_t in, int64_t out,
                              bool bias) {
  LinearShape l;
  l.name = std::move(name);
  l.role = role;
  l.in_features = in;
  l.out_features = out;
  l.has_bias = bias;
  return l;
}

inline void Finish(ModelArch& m, BlockSpec block) {
  m.block_kinds = {std::move(block)};
  m.block_kind_of_layer.assign(static_cast<size_t>(m.num_layers), 0);
}

// Exactly 7.5e9 parameters (the ZeRO paper's Figure 1 model): 29 blocks of one 5000 x 50000 linear
// (2.5e8 each) plus a tied 50000 x 5000 embedding (2.5e8).
inline ModelArch Psi7_5B() {
  ModelArch m;
  m.id = "test/7.5b";
  m.model_type = "test";
  m.hidden_size = 5000;
  m.num_layers = 29;
  m.num_heads = 40;
  m.num_kv_heads = 40;
  m.head_dim = 125;
  m.vocab_size = 50000;
  m.tie_word_embeddings = true;
  m.embedding_params = 50000LL * 5000;
  BlockSpec b;
  b.linears = {MakeLinear("w", LinearRole::kOther, 5000, 50000, false)};
  m.block_kinds = {b};
  m.block_kind_of_layer.assign(29, 0);
  return m;
}

inline ModelArch GptArch(int64_t h, int64_t heads, int64_t layers, int64_t vocab,
                         int64_t positions = 2048) {
  ModelArch m;
  m.id = "test/gpt";
  m.model_type = "gpt2";
  m.hidden_size = h;
  m.num_layers = layers;
  m.num_heads = heads;
  m.num_kv_heads = heads;
  m.head_dim = h / heads;
  m.intermediate_size = 4 * h;
  m.vocab_size = vocab;
  m.max_position_embeddings = positions;
  m.norm = NormKind::kLayer;
  m.gated_mlp = false;
  m.tie_word_embeddings = true;
  m.embedding_params = vocab * h;
  m.position_embedding_params = positions * h;
  m.final_norm_params = 2 * h;
  BlockSpec b;
  b.linears = {MakeLinear("c_attn", LinearRole::kQkv, h, 3 * h, true),
               MakeLinear("c_proj", LinearRole::kO, h, h, true),
               MakeLinear("c_fc", LinearRole::kUp, h, 4 * h, true),
               MakeLinear("mlp.c_proj", LinearRole::kDown, 4 * h, h, true)};
  b.norm_params = 4 * h;
  b.num_norms = 2;
  Finish(m, std::move(b));
  return m;
}

inline ModelArch LlamaArch(int64_t h, int64_t heads, int64_t kv_heads, int64_t f, int64_t layers,
                           int64_t vocab) {
  ModelArch m;
  m.id = "test/llama";
  m.model_type = "llama";
  m.hidden_size = h;
  m.num_layers = layers;
  m.num_heads = heads;
  m.num_kv_heads = kv_heads;
  m.head_dim = h / heads;
  m.intermediate_size = f;
  m.vocab_size = vocab;
  m.norm = NormKind::kRms;
  m.gated_mlp = true;
  m.embedding_params = vocab * h;
  m.lm_head_params = vocab * h;
  m.final_norm_params = h;
  const int64_t kv = kv_heads * (h / heads);
  BlockSpec b;
  b.linears = {MakeLinear("q_proj", LinearRole::kQ, h, h, false),
               MakeLinear("k_proj", LinearRole::kK, h, kv, false),
               MakeLinear("v_proj", LinearRole::kV, h, kv, false),
               MakeLinear("o_proj", LinearRole::kO, h, h, false),
               MakeLinear("gate_proj", LinearRole::kGate, h, f, false),
               MakeLinear("up_proj", LinearRole::kUp, h, f, false),
               MakeLinear("down_proj", LinearRole::kDown, f, h, false)};
  b.norm_params = 2 * h;
  b.num_norms = 2;
  Finish(m, std::move(b));
  return m;
}

// Llama-2-7b's shape (config.json of meta-llama/Llama-2-7b-hf): 6,738,415,616 parameters.
inline ModelArch Llama2_7b() { return LlamaArch(4096, 32, 32, 11008, 32, 32000); }

inline GpuSpec Gpu80() {
  GpuSpec g;
  g.name = "A100-SXM4-80GB";
  g.memory_bytes = int64_t{85899345920};  // 80 GiB
  return g;
}

inline TrainingJob BaseJob() {
  TrainingJob j;
  j.model = "test";
  return j;
}

}  // namespace fmte::testing

#endif  // FMTE_TESTS_ESTIMATOR_MEMORY_TEST_UTIL_H_
