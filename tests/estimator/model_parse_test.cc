// ParseModelConfig: shapes (GQA/MQA, tied/untied, biases, norms, MoE layouts) against the HF
// modeling code named in each comment, and errors for unknown or incomplete configs.
#include <gtest/gtest.h>

#include <string>

#include "fmte/model.h"

namespace fmte {
namespace {

std::string ModelDir(const std::string& id) {
  return std::string(FMTE_SOURCE_DIR) + "/etc/models/" + id;
}

ModelArch Load(const std::string& id) {
  Result<ModelArch> a = LoadModelConfigFile(ModelDir(id));
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return a.ok() ? std::move(a).value() : ModelArch{};
}

const LinearShape* FindLinear(const BlockSpec& b, const std::string& name) {
  for (const LinearShape& l : b.linears) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

// GQA / MQA shapes: k_proj / fused qkv output widths.
TEST(ModelParseTest, AttentionShapes) {
  struct Row {
    const char* id;
    const char* linear;
    int64_t in, out;
  } rows[] = {
      {"meta-llama/Llama-3.1-8B", "k_proj", 4096, 8 * 128},                // GQA 32/8
      {"meta-llama/Llama-2-7b-hf", "k_proj", 4096, 4096},                  // MHA
      {"google/gemma-2b", "k_proj", 2048, 256},                            // MQA, head_dim 256
      {"google/gemma-2b", "q_proj", 2048, 8 * 256},                        // 8 heads x 256 = 2048
      {"tiiuae/falcon-7b", "query_key_value", 4544, 4544 + 2 * 64},        // multi_query
      {"tiiuae/falcon-40b", "query_key_value", 8192, (128 + 2 * 8) * 64},  // n_head_kv 8
      {"openai-community/gpt2", "c_attn", 768, 3 * 768},
      {"microsoft/phi-1_5", "Wqkv", 2048, 3 * 2048},
      {"deepseek-ai/DeepSeek-V3", "kv_a_proj_with_mqa", 7168, 512 + 64},
      {"deepseek-ai/DeepSeek-V3", "q_b_proj", 1536, 128 * (128 + 64)},
      {"deepseek-ai/DeepSeek-V2-Lite", "q_proj", 2048, 16 * 192},  // q_lora_rank null
  };
  for (const Row& r : rows) {
    ModelArch a = Load(r.id);
    const BlockSpec& b = a.Block(a.num_layers - 1);
    const LinearShape* l = FindLinear(b, r.linear);
    ASSERT_NE(l, nullptr) << r.id << " " << r.linear;
    EXPECT_EQ(l->in_features, r.in) << r.id << " " << r.linear;
    EXPECT_EQ(l->out_features, r.out) << r.id << " " << r.linear;
  }
}

// Tied vs untied heads (config key or the config class default), and head biases.
TEST(ModelParseTest, TiedAndUntiedHeads) {
  struct Row {
    const char* id;
    bool tied;
    int64_t lm_head;
  } rows[] = {
      {"meta-llama/Llama-3.2-1B-Instruct", true, 0},
      {"Qwen/Qwen2.5-0.5B", true, 0},
      {"google/gemma-2b", true, 0},        // GemmaConfig default tie_word_embeddings=True
      {"openai-community/gpt2", true, 0},  // GPT2Config default
      {"bigcode/starcoder2-7b", true, 0},  // Starcoder2Config default
      {"meta-llama/Llama-3.1-8B", false, 128256LL * 4096},
      {"EleutherAI/pythia-160m", false, 50304LL * 768},
      {"EleutherAI/gpt-j-6b", false, 50400LL * 4096 + 50400},  // lm_head has a bias
      {"microsoft/phi-2", false, 51200LL * 2560 + 51200},      // lm_head has a bias
      {"microsoft/phi-1_5", false, 51200LL * 2048 + 51200},
  };
  for (const Row& r : rows) {
    ModelArch a = Load(r.id);
    EXPECT_EQ(a.tie_word_embeddings, r.tied) << r.id;
    EXPECT_EQ(a.Counts().lm_head, r.lm_head) << r.id;
  }
}

TEST(ModelParseTest, FamilyDetails) {
  // Qwen2: q/k/v bias, o without (modeling_qwen2.py).
  ModelArch qwen2 = Load("Qwen/Qwen2.5-7B-Instruct");
  EXPECT_TRUE(FindLinear(qwen2.Block(0), "q_proj")->has_bias);
  EXPECT_FALSE(FindLinear(qwen2.Block(0), "o_proj")->has_bias);
  // Qwen3: q_norm and k_norm of head_dim on top of the two RMSNorms.
  ModelArch qwen3 = Load("Qwen/Qwen3-8B");
  EXPECT_EQ(qwen3.Block(0).num_norms, 4);
  EXPECT_EQ(qwen3.Block(0).norm_params, 2 * 4096 + 2 * 128);
  // Gemma2: four RMSNorms per layer.
  EXPECT_EQ(Load("google/gemma-2-9b").Block(0).num_norms, 4);
  // Falcon-40B (new decoder architecture): ln_attn + ln_mlp, LayerNorm with bias.
  ModelArch f40 = Load("tiiuae/falcon-40b");
  EXPECT_EQ(f40.Block(0).norm_params, 2 * 2 * 8192);
  EXPECT_EQ(f40.norm, NormKind::kLayer);
  EXPECT_FALSE(f40.gated_mlp);
  // Falcon-7B: one input_layernorm (parallel attention).
  EXPECT_EQ(Load("tiiuae/falcon-7b").Block(0).num_norms, 1);
  // GPT-2 learned positions.
  EXPECT_EQ(Load("openai-community/gpt2").position_embedding_params, 1024 * 768);
  // gpt-oss: sinks per head, router with bias, stacked experts are one module.
  ModelArch oss = Load("openai/gpt-oss-20b");
  EXPECT_EQ(oss.Block(0).other_params, 64);
  EXPECT_TRUE(FindLinear(oss.Block(0), "router")->has_bias);
  // 20b: the embedding (201088 x 2880) outweighs the stacked experts (32 x (2880 x 5760 + 5760));
  // 120b: the 128 stacked gate_up experts are the largest module.
  EXPECT_EQ(oss.Counts().largest_module, 201088LL * 2880);
  EXPECT_EQ(Load("openai/gpt-oss-120b").Counts().largest_module, 128LL * (2880 * 5760 + 5760));
  // DeepSeek-V3: 3 dense layers then MoE; router bias (e_score_correction_bias) per expert.
  ModelArch v3 = Load("deepseek-ai/DeepSeek-V3");
  EXPECT_EQ(v3.Block(2).experts_per_token, 0);
  EXPECT_EQ(v3.Block(3).experts_per_token, 8);
  EXPECT_EQ(v3.Block(3).other_params, 256);
  // LoRA matching by role.
  ModelArch mixtral = Load("mistralai/Mixtral-8x7B-v0.1");
  const LinearShape* w1 = FindLinear(mixtral.Block(0), "w1");
  ASSERT_NE(w1, nullptr);
  EXPECT_EQ(w1->role, LinearRole::kGate);
  EXPECT_TRUE(w1->expert);
  EXPECT_EQ(w1->copies, 8);
  EXPECT_EQ(FindLinear(mixtral.Block(0), "gate")->role, LinearRole::kRouter);
}

TEST(ModelParseTest, Qwen3MoeDenseLayers) {
  // mlp_only_layers and decoder_sparse_step select dense layers (modeling_qwen3_moe.py).
  const char* json = R"({"model_type":"qwen3_moe","hidden_size":64,"num_hidden_layers":4,
    "num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"vocab_size":100,
    "intermediate_size":128,"moe_intermediate_size":32,"num_experts":8,"num_experts_per_tok":2,
    "decoder_sparse_step":2,"mlp_only_layers":[3]})";
  Result<ModelArch> a = ParseModelConfig(json, "test");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  // Layer i sparse iff (i+1) % 2 == 0 and i not in [3]: only layer 1.
  EXPECT_EQ(a->Block(0).experts_per_token, 0);
  EXPECT_EQ(a->Block(1).experts_per_token, 2);
  EXPECT_EQ(a->Block(2).experts_per_token, 0);
  EXPECT_EQ(a->Block(3).experts_per_token, 0);
  // Dense layer by hand: q 64*64 + k,v 2*64*32 + o 64*64 + mlp 3*64*128 + norms 2*64 + 2*16.
  EXPECT_EQ(a->Block(0).Params(), 4096 + 4096 + 4096 + 24576 + 128 + 32);
}

TEST(ModelParseTest, UnknownArchitectureNamesTheModelType) {
  Result<ModelArch> a =
      ParseModelConfig(R"({"model_type":"mamba","architectures":["MambaForCausalLM"]})", "x");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Status::Code::kUnsupported);
  EXPECT_NE(a.status().message().find("'mamba'"), std::string::npos) << a.status().message();
  EXPECT_NE(a.status().message().find("MambaForCausalLM"), std::string::npos);

  Result<ModelArch> none = ParseModelConfig(R"({"hidden_size": 8})", "x");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("model_type"), std::string::npos);
}

TEST(ModelParseTest, MissingKeysAreNamed) {
  Result<ModelArch> a = ParseModelConfig(R"({"model_type":"llama","hidden_size":4096})", "x");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Status::Code::kParseError);
  for (const char* key :
       {"num_hidden_layers", "num_attention_heads", "vocab_size", "intermediate_size", "'llama'"}) {
    EXPECT_NE(a.status().message().find(key), std::string::npos)
        << key << ": " << a.status().message();
  }
  // Old and new Falcon key names are both accepted, and both are named when absent.
  Result<ModelArch> f = ParseModelConfig(R"({"model_type":"falcon","vocab_size":10})", "x");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("num_hidden_layers or n_layer"), std::string::npos)
      << f.status().message();
}

TEST(ModelParseTest, MalformedValuesAndJson) {
  Result<ModelArch> bad = ParseModelConfig(
      R"({"model_type":"mistral","hidden_size":"big","num_hidden_layers":2,
          "num_attention_heads":2,"vocab_size":10,"intermediate_size":8})",
      "x");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("hidden_size: expected a positive integer"),
            std::string::npos)
      << bad.status().message();

  Result<ModelArch> json =
      ParseModelConfig("{\"model_type\": \"llama\",\n  \"hidden_size\": }", "x");
  ASSERT_FALSE(json.ok());
  EXPECT_EQ(json.status().code(), Status::Code::kParseError);
  EXPECT_NE(json.status().message().find("byte"), std::string::npos) << json.status().message();

  Result<ModelArch> huge = ParseModelConfig(
      R"({"model_type":"mixtral","hidden_size":2000000000,"num_hidden_layers":2,
          "num_attention_heads":1,"vocab_size":2000000000,"intermediate_size":2000000000,
          "num_local_experts":2000000000,"num_experts_per_tok":2})",
      "x");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("10^15"), std::string::npos) << huge.status().message();
  Result<ModelArch> layers = ParseModelConfig(
      R"({"model_type":"llama","hidden_size":8,"num_hidden_layers":2000000000,
          "num_attention_heads":1,"vocab_size":2,"intermediate_size":2})",
      "x");
  ASSERT_FALSE(layers.ok());
  EXPECT_NE(layers.status().message().find("num_hidden_layers"), std::string::npos);
  Result<ModelArch> too_big = ParseModelConfig(R"({"model_type":"gpt2","n_embd":1e12})", "x");
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.status().message().find("n_embd"), std::string::npos);

  Result<ModelArch> array = ParseModelConfig("[1,2]", "x");
  EXPECT_FALSE(array.ok());

  Result<ModelArch> gqa = ParseModelConfig(
      R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":1,"num_attention_heads":4,
          "num_key_value_heads":3,"vocab_size":10,"intermediate_size":8})",
      "x");
  ASSERT_FALSE(gqa.ok());
  EXPECT_NE(gqa.status().message().find("num_key_value_heads"), std::string::npos);
}

TEST(ModelParseTest, MissingFileIsIoError) {
  Result<ModelArch> a = LoadModelConfigFile("/nonexistent/dir/config.json");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Status::Code::kIoError);
}

}  // namespace
}  // namespace fmte

namespace fmte {
namespace {

// transformers' current falcon configs rename the legacy RW keys (configuration_falcon.py):
// n_head -> num_attention_heads, n_layer -> num_hidden_layers, n_head_kv -> num_kv_heads, and
// RefinedWeb -> new_decoder_architecture. The same checkpoint must count the same.
TEST(ModelParseTest, FalconNewKeyNamesMatchLegacy) {
  struct Row {
    const char* legacy_id;
    const char* new_json;
  } rows[] = {
      {"tiiuae/falcon-40b",
       R"({"model_type":"falcon","hidden_size":8192,"num_hidden_layers":60,
           "num_attention_heads":128,"num_kv_heads":8,"new_decoder_architecture":true,
           "parallel_attn":true,"bias":false,"vocab_size":65024})"},
      {"tiiuae/falcon-7b",
       R"({"model_type":"falcon","hidden_size":4544,"num_hidden_layers":32,
           "num_attention_heads":71,"multi_query":true,"new_decoder_architecture":false,
           "parallel_attn":true,"bias":false,"vocab_size":65024})"},
  };
  for (const Row& r : rows) {
    Result<ModelArch> legacy = LoadModelConfigFile(ModelDir(r.legacy_id));
    Result<ModelArch> current = ParseModelConfig(r.new_json, "new");
    ASSERT_TRUE(legacy.ok() && current.ok()) << current.status().ToString();
    EXPECT_EQ(legacy->Counts().total, current->Counts().total) << r.legacy_id;
    EXPECT_EQ(legacy->num_kv_heads, current->num_kv_heads) << r.legacy_id;
  }
}

// Qwen2-MoE (modeling_qwen2_moe.py): qkv bias, router gate (h->E), routed experts of
// moe_intermediate_size, one shared_expert of shared_expert_intermediate_size and its
// shared_expert_gate (h->1). Tiny config counted by hand.
TEST(ModelParseTest, Qwen2MoeByHand) {
  const char* json = R"({"model_type":"qwen2_moe","hidden_size":16,"num_hidden_layers":2,
    "num_attention_heads":4,"num_key_value_heads":2,"vocab_size":10,"intermediate_size":64,
    "moe_intermediate_size":8,"shared_expert_intermediate_size":32,"num_experts":4,
    "num_experts_per_tok":2,"tie_word_embeddings":false})";
  Result<ModelArch> a = ParseModelConfig(json, "tiny");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  // head_dim 4. q 16*16+16 = 272, k,v 2*(16*8+8) = 272, o 16*16 = 256, norms 32,
  // gate 16*4 = 64, experts 4*3*16*8 = 1536, shared 3*16*32 = 1536, shared gate 16 -> 3,984.
  EXPECT_EQ(a->Block(0).Params(), 3984);
  // Per token: experts 2 of 4 -> 768 instead of 1536.
  EXPECT_EQ(a->Block(0).ActiveParams(), 3984 - 768);
  // 2 layers + embed 160 + head 160 + norm 16.
  EXPECT_EQ(a->Counts().total, 2 * 3984 + 160 + 160 + 16);
}

}  // namespace
}  // namespace fmte

namespace fmte {
namespace {

// Phi-3-mini-4k (config values h 3072, 32 layers, 32 heads, f 8192, vocab 32064, untied) has
// 3,821,079,552 parameters (Hub count, quoted with find_string "3,821,079,552"). By hand: per layer
// qkv_proj 3072*9216 + o_proj 3072^2 + gate_up_proj 3072*16384 + down_proj 8192*3072 + 2*3072
// = 113,252,352; x 32 = 3,624,075,264; + embed and head 2*32064*3072 + norm 3072.
TEST(ModelParseTest, Phi3FusedProjections) {
  const char* json = R"({"model_type":"phi3","hidden_size":3072,"num_hidden_layers":32,
    "num_attention_heads":32,"num_key_value_heads":32,"intermediate_size":8192,
    "vocab_size":32064,"tie_word_embeddings":false})";
  Result<ModelArch> a = ParseModelConfig(json, "phi3");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->Counts().total, 3821079552);
  EXPECT_EQ(a->Block(0).linears[0].role, LinearRole::kQkv);
}

}  // namespace
}  // namespace fmte

namespace fmte {
namespace {

// config.json's sliding_window as transformers applies it (the published configs in etc/models):
// Phi-3-mini-4k 2047, StarCoder2-7B 4096, Gemma-2 4096; Qwen2.5 publishes 131072 with
// use_sliding_window false: no window; Mistral-7B-Instruct-v0.3 publishes null: none.
TEST(ModelParse, SlidingWindowAsTransformersAppliesIt) {
  const std::pair<const char*, int64_t> cases[] = {{"microsoft/Phi-3-mini-4k-instruct", 2047},
                                                   {"bigcode/starcoder2-7b", 4096},
                                                   {"google/gemma-2-9b", 4096},
                                                   {"Qwen/Qwen2.5-7B-Instruct", 0},
                                                   {"mistralai/Mistral-7B-Instruct-v0.3", 0},
                                                   {"meta-llama/Llama-3.1-8B", 0}};
  for (const auto& [id, window] : cases) {
    Result<ModelArch> a = LoadModelConfigFile(FMTE_SOURCE_DIR "/etc/models/" + std::string(id));
    ASSERT_TRUE(a.ok()) << id << ": " << a.status().message();
    EXPECT_EQ(a->sliding_window, window) << id;
  }
}

}  // namespace
}  // namespace fmte
