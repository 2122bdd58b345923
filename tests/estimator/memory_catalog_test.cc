// The memory model on the shipped catalog: PEFT's printed trainable counts, and properties every
// estimate must have (finite, positive, monotone in GPUs, checkpointing and sequence length).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fmte/lora.h"
#include "fmte/memory.h"
#include "fmte/model.h"
#include "memory_test_util.h"

namespace fmte {
namespace {

using testing::BaseJob;
using testing::Gpu80;

const ModelCatalog& Catalog() {
  static const ModelCatalog* catalog = [] {
    Result<ModelCatalog> c = ModelCatalog::LoadDir(std::string(FMTE_SOURCE_DIR) + "/etc/models");
    return c.ok() ? new ModelCatalog(std::move(c).value()) : new ModelCatalog();
  }();
  return *catalog;
}

struct PeftRow {
  const char* model;
  int64_t r;
  std::vector<std::string> targets;
  int64_t trainable;  // PEFT print_trainable_parameters()
  int64_t all;        // its "all params" (base + adapters)
};

TEST(MemoryCatalogTest, LoraTrainableMatchesPeftPrints) {
  const PeftRow rows[] = {
      // PEFT docs / model cards: Llama-2-7b, r=8, q_proj,v_proj:
      // "trainable params: 4,194,304 || all params: 6,742,609,920 || trainable%: 0.0622".
      {"meta-llama/Llama-2-7b-hf", 8, {}, 4194304, 6742609920},
      // Llama-2-7b, r=16, all seven projections: "trainable params: 39,976,960 || all params:
      // 6,778,392,576".
      {"meta-llama/Llama-2-7b-hf", 16, {"all-linear"}, 39976960, 6778392576},
      // Mistral-7B, r=8, q_proj,v_proj (GQA: v_proj 4096 -> 1024): "trainable params: 3,407,872
      // || all params: 7,245,139,968".
      {"mistralai/Mistral-7B-Instruct-v0.2", 8, {"q_proj", "v_proj"}, 3407872, 7245139968},
      // The same adapters written as PEFT also takes them (peft/tuners/tuners_utils.py,
      // check_target_module_exists: list entries match a module path's suffix, a string is a
      // regular expression over the whole path): module paths, and patterns as axolotl and
      // LLaMA-Factory configs give them.
      {"meta-llama/Llama-2-7b-hf",
       8,
       {"self_attn.q_proj", "self_attn.v_proj"},
       4194304,
       6742609920},
      {"meta-llama/Llama-2-7b-hf",
       16,
       {"model.layers.[\\d]+.(mlp|self_attn).(up|down|gate|q|k|v|o)_proj"},
       39976960,
       6778392576},
      {"meta-llama/Llama-2-7b-hf", 16, {".*_proj"}, 39976960, 6778392576},
      {"mistralai/Mistral-7B-Instruct-v0.2", 8, {"^.*\\.(q|v)_proj$"}, 3407872, 7245139968},
  };
  for (const PeftRow& r : rows) {
    Result<const ModelArch*> m = Catalog().Find(r.model);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    TrainingJob j = BaseJob();
    j.method = Method::kLora;
    j.lora_r = r.r;
    j.lora_targets = r.targets;
    EXPECT_EQ(TrainableParams(**m, j), r.trainable) << r.model;
    EXPECT_EQ((*m)->Counts().total + TrainableParams(**m, j), r.all) << r.model;
  }
}

// PEFT's own counts of this project's LoRA runs on an H100 (tests/data/memory-measured/
// measured-h100-hf.jsonl: "params" and "trainable" as the measuring script read them from the
// model after get_peft_model, transformers 5.17 and PEFT 0.21; one case per model, rank and
// targets). The two mixtures of experts show PEFT's conversion for transformers 5's stacked
// experts (fmte::LoraBRank): Qwen3-30B-A3B trains 996,507,648 parameters, gate_up_proj at rank
// 2r, where three adapters of rank r per expert would be 845,512,704, and the projections of
// the dense MLP and the shared experts, named like the experts', get none (PEFT's conversion
// moves those names to the stacked parameters). DeepSeek-V2-Lite's run built another attention:
// the catalog's copy of its config.json lacked the published "q_lora_rank": null, so
// transformers 5 took its default 1536 and built q_a_proj (2048 -> 1536) and q_b_proj
// (1536 -> 3072) where the model has q_proj (2048 -> 3072): 27 x (2048 x 1536 + 1536 +
// 1536 x 3072 - 2048 x 3072) = 42,508,800 parameters more, and 27 x 16 x (3584 + 4608 - 5120) =
// 1,327,104 more LoRA parameters. Every other count must be exact.
TEST(MemoryCatalogTest, LoraTrainableMatchesThisProjectsMeasuredRuns) {
  std::ifstream in(std::string(FMTE_SOURCE_DIR) +
                   "/tests/data/memory-measured/measured-h100-hf.jsonl");
  ASSERT_TRUE(in.good());
  int checked = 0;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json run = nlohmann::json::parse(line);
    const nlohmann::json& c = run.at("case");
    if (c.at(1) != "lora" || !run.value("trainable", nlohmann::json()).is_number_integer())
      continue;  // falcon-7b's run recorded no count
    Result<const ModelArch*> m = Catalog().Find(c.at(0).get<std::string>());
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    TrainingJob j = BaseJob();
    j.method = Method::kLora;
    j.precision = Precision::kPureBf16;
    if (c.size() > 7 && c.at(7).contains("r")) j.lora_r = c.at(7).at("r").get<int64_t>();
    const std::string targets = c.at(6).get<std::string>();
    for (size_t at = 0; at <= targets.size();) {
      const size_t comma = std::min(targets.find(',', at), targets.size());
      j.lora_targets.push_back(targets.substr(at, comma - at));
      at = comma + 1;
    }
    const bool q_lora = c.at(0) == "deepseek-ai/DeepSeek-V2-Lite";
    const int64_t total = (*m)->Counts().total + (q_lora ? 42508800 : 0);
    const int64_t trainable = TrainableParams(**m, j) + (q_lora ? 1327104 : 0);
    ++checked;
    EXPECT_EQ(total, run.at("params").get<int64_t>()) << line;
    EXPECT_EQ(trainable, run.at("trainable").get<int64_t>()) << line;
  }
  EXPECT_GE(checked, 40);
}

// QLoRA on a mixture of experts loaded by transformers 5: bitsandbytes replaces nn.Linear modules
// only, and transformers 5 stores the routed experts as stacked nn.Parameter (bitsandbytes issue
// #1849: Qwen3MoeExperts' gate_up_proj and down_proj "stay full precision"), which PEFT's
// prepare_model_for_kbit_training then upcasts to fp32 with the other 16-bit parameters.
// Derivation: Qwen3-30B-A3B's experts hold 48 layers x 128 x 3 x 2048 x 768 = 28,991,029,248
// parameters; as 4-bit weights they take 0.5 byte each (the absmax constants are counted apart),
// loaded in bf16 and kept so they take 2 bytes, upcast (or loaded in fp32 for amp) 4. So the
// weights differ by 3.5 or 1.5 bytes per expert parameter; litgpt's own MoE (nn.Linear experts) and
// --quantize-experts quantise them; the low end and the bound are the same for both readings (the
// job does not say which stack it runs).
TEST(MemoryCatalogTest, QloraOnTransformersKeepsStackedExpertsInSixteenBits) {
  Result<const ModelArch*> m = Catalog().Find("Qwen/Qwen3-30B-A3B");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  constexpr double kExpertParams = 48.0 * 128 * 3 * 2048 * 768;
  TrainingJob j = BaseJob();
  j.method = Method::kQlora;
  j.lora_targets = {"all-linear"};
  j.activation_checkpointing = Checkpointing::kFull;
  TrainingJob quantized = j;
  quantized.quantize_experts = true;
  TrainingJob kept = j;  // loaded in bf16, not upcast (--precision pure-bf16 --no-kbit-upcast)
  kept.precision = Precision::kPureBf16;
  kept.kbit_upcast = false;
  TrainingJob kept_quantized = kept;
  kept_quantized.quantize_experts = true;
  const auto weights = [&](const TrainingJob& job) {
    Result<MemoryEstimate> e = EstimateMemory(**m, job, Gpu80());
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? static_cast<double>(e->breakdown.weights) : 0.0;
  };
  EXPECT_NEAR(weights(j) - weights(quantized), 3.5 * kExpertParams, 1e-6 * kExpertParams);
  EXPECT_NEAR(weights(kept) - weights(kept_quantized), 1.5 * kExpertParams, 1e-6 * kExpertParams);
  TrainingJob litgpt = j;
  litgpt.framework = Framework::kLitgpt;
  TrainingJob litgpt_quantized = litgpt;
  litgpt_quantized.quantize_experts = true;
  EXPECT_EQ(weights(litgpt), weights(litgpt_quantized));
  Result<MemoryEstimate> a = EstimateMemory(**m, j, Gpu80());
  Result<MemoryEstimate> b = EstimateMemory(**m, quantized, Gpu80());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GT(a->per_gpu_bytes, b->per_gpu_bytes);
  EXPECT_EQ(a->low_bytes, b->low_bytes);
  EXPECT_EQ(a->bound_bytes, b->bound_bytes);
  EXPECT_LT(a->low_bytes, Gpu80().memory_bytes);  // not rejected on one reading
}

// Where a path or pattern puts adapters in an MoE model. Qwen3-30B-A3B (its config.json): 48
// layers, hidden 2048, attention q 32 x 128 = 4096 and k/v 4 x 128 = 512 wide, every layer's MLP
// 128 routed experts of 768 (modeling_qwen3_moe: model.layers.N.mlp.experts.M.gate_proj, the router
// mlp.gate, no dense MLP). LoRA of rank r on an n -> m linear trains r (n + m) parameters.
TEST(MemoryCatalogTest, LoraPathsAndPatternsFollowPeftInMoeModels) {
  Result<const ModelArch*> m = Catalog().Find("Qwen/Qwen3-30B-A3B");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  constexpr int64_t r = 8, layers = 48, experts = 128;
  const int64_t expert_gate = layers * experts * r * (2048 + 768);
  const int64_t attention = layers * r * ((2048 + 4096) + 2 * (2048 + 512) + (4096 + 2048));
  const struct {
    std::vector<std::string> targets;
    int64_t trainable;
  } rows[] = {
      {{"gate_proj"}, expert_gate},                     // a suffix: every expert's gate_proj
      {{"experts.gate_proj"}, 0},                       // PEFT: experts.M.gate_proj ends otherwise
      {{"mlp.experts.[\\d]+.gate_proj"}, expert_gate},  // a pattern through the expert's index
      {{"mlp.gate_proj"}, 0},                           // a dense MLP's, which this model has not
      {{"self_attn.(q|k|v|o)_proj"}, attention},
      {{"model.layers.[\\d]+.(mlp|self_attn).(up|down|gate|q|k|v|o)_proj"}, attention},
  };
  for (const auto& row : rows) {
    TrainingJob j = BaseJob();
    j.method = Method::kLora;
    j.lora_r = r;
    j.lora_targets = row.targets;
    EXPECT_EQ(TrainableParams(**m, j), row.trainable) << row.targets[0];
  }
}

// LoRA on the output head: PEFT target_modules naming lm_head (transformers' name; torchtune's
// output, Megatron's output_layer), litgpt lora_head. Derivation beside the test: lora_A is r x in
// and lora_B out x r (peft/tuners/lora/layer.py update_layer; litgpt/lora.py LoRALinear), so
// Llama-2-7b's head (4096 -> 32,000) at r 8 adds 8 x (4096 + 32,000) = 288,768 to PEFT's printed
// 4,194,304 for q_proj,v_proj. PEFT's all-linear leaves the head out
// (tuners_utils._maybe_include_all_linear_layers removes the output embedding's module): its
// printed 39,976,960 above, unchanged.
TEST(MemoryCatalogTest, LoraOnTheHeadAddsItsAdapter) {
  Result<const ModelArch*> m = Catalog().Find("meta-llama/Llama-2-7b-hf");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  for (const char* head : {"lm_head", "output", "output_layer"}) {
    TrainingJob j = BaseJob();
    j.method = Method::kLora;
    j.lora_r = 8;
    j.lora_targets = {"q_proj", "v_proj", head};
    EXPECT_EQ(TrainableParams(**m, j), 4194304 + 288768) << head;
    j.lora_targets = {head};  // the head alone is a valid target
    EXPECT_EQ(TrainableParams(**m, j), 288768) << head;
    EXPECT_TRUE(ValidateLayout(**m, j).ok()) << head;
  }
}

// PEFT modules_to_save trains a copy of each named module (ModulesToSaveWrapper,
// peft/utils/other.py), which print_trainable_parameters counts: Llama-2-7b's embeddings and head
// are 32,000 x 4096 = 131,072,000 each, so r 8 on q_proj,v_proj with both saved trains
// 4,194,304 + 2 x 131,072,000 = 266,338,304. Derivation beside the test.
TEST(MemoryCatalogTest, ModulesToSaveTrainCopiesOfTheirModules) {
  Result<const ModelArch*> m = Catalog().Find("meta-llama/Llama-2-7b-hf");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  TrainingJob j = BaseJob();
  j.method = Method::kLora;
  j.lora_r = 8;
  ASSERT_TRUE(ParseModulesToSave("[embed_tokens, lm_head]", "modules_to_save", &j).ok());
  EXPECT_EQ(TrainableParams(**m, j), 4194304 + 2 * 131072000);
  ASSERT_TRUE(ParseModulesToSave("model.embed_tokens", "modules_to_save", &j).ok());
  EXPECT_EQ(TrainableParams(**m, j), 4194304 + 131072000);
  ASSERT_TRUE(ParseModulesToSave("none", "modules_to_save", &j).ok());
  EXPECT_EQ(TrainableParams(**m, j), 4194304);
  ASSERT_TRUE(ParseModulesToSave("lm_head", "modules_to_save", &j).ok());
  // A value in error names the field, the names expected and the one that is neither, and leaves
  // the job as it was.
  const Status bad = ParseModulesToSave("embed_tokens,score", "--modules-to-save", &j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("--modules-to-save"), std::string::npos) << bad.message();
  EXPECT_NE(bad.message().find("embed_tokens and/or lm_head"), std::string::npos) << bad.message();
  EXPECT_NE(bad.message().find("'score' is neither"), std::string::npos) << bad.message();
  EXPECT_FALSE(j.save_embedding);
  EXPECT_TRUE(j.save_head);
  std::string many;
  for (int i = 0; i < 17; ++i) many += "lm_head,";
  EXPECT_FALSE(ParseModulesToSave(many, "--modules-to-save", &j).ok());
  // Not PEFT: a full fine-tuning, or a framework without modules_to_save.
  j.save_head = true;
  j.method = Method::kFull;
  EXPECT_FALSE(ValidateJob(j).ok());
  j.method = Method::kLora;
  j.framework = Framework::kTorchtune;
  EXPECT_FALSE(ValidateJob(j).ok());
}

TEST(MemoryCatalogTest, PromptAndPrefixTuningCounts) {
  // PEFT: prompt tuning trains num_virtual_tokens x hidden (20 x 4096 = 81,920 for Llama-2-7b);
  // prefix tuning num_virtual_tokens x num_layers x 2 x kv width (20 x 32 x 2 x 4096 = 5,242,880).
  Result<const ModelArch*> m = Catalog().Find("meta-llama/Llama-2-7b-hf");
  ASSERT_TRUE(m.ok());
  TrainingJob j = BaseJob();
  j.virtual_tokens = 20;
  j.method = Method::kPromptTuning;
  EXPECT_EQ(TrainableParams(**m, j), 81920);
  j.method = Method::kPrefixTuning;
  EXPECT_EQ(TrainableParams(**m, j), 5242880);
}

// A multimodal model's vision encoder and projector frozen in full fine-tuning (LLaMA-Factory's
// default): its 675,759,104 parameters (Qwen2-VL-7B-Instruct: 8,291,375,616 published, language
// model 7,615,616,512) lose their gradients and AdamW states, and keep their weights; a text model
// is unchanged.
// Full fine-tuning of a multimodal model in pure bf16, short sequences: the peak is at the end of
// backward, where all gradients are held.
TrainingJob VisionLanguageFullJob() {
  TrainingJob j = BaseJob();
  j.method = Method::kFull;
  j.precision = Precision::kPureBf16;
  j.seq_len = 512;
  return j;
}

TEST(MemoryCatalogTest, FrozenVisionTowerTrainsOnlyTheLanguageModel) {
  Result<const ModelArch*> m = Catalog().Find("Qwen/Qwen2-VL-7B-Instruct");
  ASSERT_TRUE(m.ok());
  TrainingJob j = VisionLanguageFullJob();
  const int64_t vision = (*m)->Counts().vision;
  EXPECT_EQ(vision, 675759104);
  EXPECT_EQ(TrainableParams(**m, j), (*m)->Counts().total);
  Result<MemoryEstimate> trained = EstimateMemory(**m, j, Gpu80());
  j.freeze_vision = true;
  EXPECT_EQ(TrainableParams(**m, j), (*m)->Counts().total - vision);
  Result<MemoryEstimate> frozen = EstimateMemory(**m, j, Gpu80());
  ASSERT_TRUE(trained.ok() && frozen.ok());
  EXPECT_EQ(frozen->breakdown.weights, trained->breakdown.weights);
  // pure bf16 AdamW: a 2-byte gradient and two 2-byte moments per trainable parameter.
  EXPECT_EQ(trained->breakdown.gradients - frozen->breakdown.gradients, 2 * vision);
  EXPECT_EQ(trained->breakdown.optimizer - frozen->breakdown.optimizer, 4 * vision);
  Result<const ModelArch*> text = Catalog().Find("meta-llama/Llama-3.1-8B");
  EXPECT_EQ(TrainableParams(**text, j), (*text)->Counts().total);
}

TEST(MemoryCatalogTest, FrozenLanguageModelTrainsOnlyTheVisionTower) {
  // InternVL's stage 1.5 (--freeze_llm True): the vision encoder and projector train, the language
  // model is frozen but backward runs through it to reach them.
  Result<const ModelArch*> m = Catalog().Find("Qwen/Qwen2-VL-7B-Instruct");
  ASSERT_TRUE(m.ok());
  TrainingJob j = VisionLanguageFullJob();
  const int64_t vision = (*m)->Counts().vision;
  Result<MemoryEstimate> trained = EstimateMemory(**m, j, Gpu80());
  j.freeze_language = true;
  EXPECT_EQ(TrainableParams(**m, j), vision);
  Result<MemoryEstimate> frozen = EstimateMemory(**m, j, Gpu80());
  ASSERT_TRUE(trained.ok() && frozen.ok()) << frozen.status().ToString();
  EXPECT_EQ(frozen->trainable_params, vision);
  EXPECT_EQ(frozen->breakdown.weights, trained->breakdown.weights);
  // pure bf16 AdamW: a 2-byte gradient and two 2-byte moments per trainable parameter, now the
  // vision tower's alone (the end of backward holds every gradient).
  EXPECT_EQ(frozen->breakdown.optimizer, 4 * vision);
  // The language model's frozen linears keep no inputs for weight gradients: fewer activations.
  TrainingJob long_job = j;
  long_job.seq_len = 8192;
  TrainingJob long_trained = long_job;
  long_trained.freeze_language = false;
  Result<MemoryEstimate> a = EstimateMemory(**m, long_job, Gpu80());
  Result<MemoryEstimate> b = EstimateMemory(**m, long_trained, Gpu80());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LT(a->breakdown.activations, b->breakdown.activations);
  // Nothing trains in a text model with its language model frozen, nor with both frozen.
  Result<const ModelArch*> text = Catalog().Find("meta-llama/Llama-3.1-8B");
  EXPECT_FALSE(EstimateMemory(**text, j, Gpu80()).ok());
  j.freeze_vision = true;
  EXPECT_FALSE(ValidateJob(j).ok());
}

TrainingJob Job(Method method, Sharding sharding, int64_t gpus) {
  TrainingJob j = BaseJob();
  j.method = method;
  j.sharding = sharding;
  j.gpus = gpus;
  j.seq_len = 1024;
  if (sharding == Sharding::kZero3 || sharding == Sharding::kFsdpFull)
    j.precision = Precision::kMixedBf16;
  return j;
}

TEST(MemoryCatalogTest, EveryModelEveryMethodIsFinitePositiveAndMonotone) {
  ASSERT_GT(Catalog().size(), 10u);
  const Method methods[] = {Method::kFull, Method::kLora, Method::kQlora, Method::kPromptTuning,
                            Method::kPrefixTuning};
  for (const std::string& id : Catalog().Ids()) {
    const ModelArch& m = **Catalog().Find(id);
    for (Method method : methods) {
      const std::string what = id + " " + std::string(ToString(method));
      Result<MemoryEstimate> one = EstimateMemory(m, Job(method, Sharding::kNone, 1), Gpu80());
      ASSERT_TRUE(one.ok()) << what << ": " << one.status().ToString();
      EXPECT_GT(one->per_gpu_bytes, one->allocator_peak_bytes) << what;
      EXPECT_GT(one->breakdown.weights, 0) << what;
      EXPECT_GT(LayerActivationBytes(m, Job(method, Sharding::kNone, 1), 0), 0) << what;
      EXPECT_GT(one->trainable_params, 0) << what;
      EXPECT_EQ(one->gpu_capacity_bytes, Gpu80().memory_bytes);
      EXPECT_EQ(one->fits, one->per_gpu_bytes <= Gpu80().memory_bytes);

      // More GPUs with sharding: less per GPU.
      for (Sharding sh : {Sharding::kZero3, Sharding::kFsdpFull}) {
        Result<MemoryEstimate> e8 = EstimateMemory(m, Job(method, sh, 8), Gpu80());
        Result<MemoryEstimate> e64 = EstimateMemory(m, Job(method, sh, 64), Gpu80());
        ASSERT_TRUE(e8.ok() && e64.ok()) << what;
        EXPECT_LE(e64->per_gpu_bytes, e8->per_gpu_bytes) << what << " " << ToString(sh);
      }
      // Checkpointing: fewer activation bytes per layer and no more memory. Longer sequences:
      // more. (The breakdown shows the peak phase, which may be the optimizer step.)
      // (Per layer on the first that attends: selective recompute is of the attention core, which
      // a hybrid model's Mamba and MoE layers do not have.)
      int64_t attends = 0;
      while (attends + 1 < m.num_layers && !m.Block(attends).HasAttention()) ++attends;
      TrainingJob j = Job(method, Sharding::kNone, 1);
      j.attention = Attention::kEager;
      int64_t prev_layer = LayerActivationBytes(m, j, attends), prev_total = one->per_gpu_bytes;
      for (Checkpointing c : {Checkpointing::kSelective, Checkpointing::kFull}) {
        j.activation_checkpointing = c;
        Result<MemoryEstimate> e = EstimateMemory(m, j, Gpu80());
        ASSERT_TRUE(e.ok());
        EXPECT_LT(LayerActivationBytes(m, j, attends), prev_layer) << what << " " << ToString(c);
        EXPECT_LE(e->per_gpu_bytes, prev_total) << what << " " << ToString(c);
        prev_layer = LayerActivationBytes(m, j, attends);
        prev_total = e->per_gpu_bytes;
      }
      j = Job(method, Sharding::kNone, 1);
      j.seq_len = 4096;
      Result<MemoryEstimate> longer = EstimateMemory(m, j, Gpu80());
      ASSERT_TRUE(longer.ok());
      EXPECT_GT(LayerActivationBytes(m, j, 0),
                LayerActivationBytes(m, Job(method, Sharding::kNone, 1), 0))
          << what;
      EXPECT_GE(longer->per_gpu_bytes, one->per_gpu_bytes) << what;
    }
  }
}

TEST(MemoryCatalogTest, AbsurdInputsSaturateInsteadOfOverflowing) {
  Result<const ModelArch*> m = Catalog().Find("meta-llama/Llama-3.1-405B");
  ASSERT_TRUE(m.ok());
  TrainingJob j = BaseJob();
  j.seq_len = int64_t{1} << 24;
  j.micro_batch = 1 << 20;
  j.attention = Attention::kEager;
  ASSERT_TRUE(ValidateJob(j).ok());
  Result<MemoryEstimate> e = EstimateMemory(**m, j, Gpu80());
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->per_gpu_bytes, INT64_MAX);
  EXPECT_FALSE(e->fits);
}

}  // namespace
}  // namespace fmte
