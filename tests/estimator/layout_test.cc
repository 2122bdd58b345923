// ValidateLayout: impossible layouts name what is wrong and what would work; pipeline splits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fmte/memory.h"
#include "memory_test_util.h"

namespace fmte {
namespace {

using testing::BaseJob;
using testing::Gpu80;
using testing::Llama2_7b;
using testing::LlamaArch;

struct BadLayout {
  const char* name;
  int64_t gpus, tp, pp, vpp;
  Framework framework;
  Sharding sharding;
  std::vector<std::string> must_contain;
};

TEST(LayoutTest, ErrorsSayWhatIsWrongAndWhatWouldWork) {
  const ModelArch llama = Llama2_7b();  // 32 heads, 32 KV heads, 32 layers
  // clang-format off
  const BadLayout rows[] = {
      {"tp does not divide heads", 48, 3, 1, 1, Framework::kHf, Sharding::kNone,
       {"--tp 3 does not divide the 32 attention heads", "use --tp 1, 2, 4, 8 or 16"}},
      {"pp exceeds layers", 40, 1, 40, 1, Framework::kHf, Sharding::kNone,
       {"--pp 40 exceeds the 32 layers", "at most 32"}},
      {"tp*pp*dp != gpus", 12, 8, 1, 1, Framework::kHf, Sharding::kNone,
       {"tp*pp*dp must equal --gpus", "use --gpus 16"}},
      {"megatron uneven pp", 6, 1, 6, 1, Framework::kMegatron, Sharding::kNone,
       {"--pp 6 does not divide the 32 layers", "use --pp 1 or 2"}},
      {"vpp chunks", 4, 1, 4, 3, Framework::kMegatron, Sharding::kNone,
       {"--vpp 3", "use --vpp 1, 2, 4 or 8"}},
      {"zero3 with pp", 8, 1, 2, 1, Framework::kDeepspeed, Sharding::kZero3,
       {"cannot combine ZeRO-2/3 with pipeline parallelism", "--sharding zero1"}},
  };
  // clang-format on
  for (const BadLayout& r : rows) {
    TrainingJob j = BaseJob();
    j.gpus = r.gpus;
    j.tp = r.tp;
    j.pp = r.pp;
    j.vpp = r.vpp;
    j.framework = r.framework;
    j.sharding = r.sharding;
    Status s = ValidateLayout(llama, j);
    ASSERT_FALSE(s.ok()) << r.name;
    for (const std::string& want : r.must_contain)
      EXPECT_NE(s.message().find(want), std::string::npos) << r.name << ": " << s.message();
    EXPECT_FALSE(EstimateMemory(llama, j, Gpu80()).ok()) << r.name;
  }
}

TEST(LayoutTest, GroupedQueryHeadsLimitMegatronTp) {
  // Llama-3-8B shape: 32 heads, 8 KV heads. Megatron needs num_query_groups % tp == 0.
  const ModelArch m = LlamaArch(4096, 32, 8, 14336, 32, 128256);
  TrainingJob j = BaseJob();
  j.framework = Framework::kMegatron;
  j.gpus = 16;
  j.tp = 16;
  Status s = ValidateLayout(m, j);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("8 key/value heads"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("use --tp 1, 2, 4 or 8"), std::string::npos) << s.message();
  j.framework = Framework::kHf;  // replicating KV heads (t % g == 0) is allowed outside Megatron
  EXPECT_TRUE(ValidateLayout(m, j).ok());
}

TEST(LayoutTest, UnknownLoraTargetListsTheModules) {
  TrainingJob j = BaseJob();
  j.method = Method::kLora;
  j.lora_targets = {"query_key_value"};
  Status s = ValidateLayout(Llama2_7b(), j);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("q_proj"), std::string::npos) << s.message();
  j.lora_targets = {"q", "v"};  // roles
  EXPECT_TRUE(ValidateLayout(Llama2_7b(), j).ok());
}

TEST(LayoutTest, PipelineStageSplits) {
  // DeepSpeed partition_uniform: 32 layers over 5 stages -> 7,7,6,6,6; even when divisible.
  EXPECT_EQ(PipelineStageLayers(32, 5), (std::vector<int>{7, 7, 6, 6, 6}));
  EXPECT_EQ(PipelineStageLayers(32, 4), (std::vector<int>{8, 8, 8, 8}));
  EXPECT_EQ(PipelineStageLayers(80, 1), (std::vector<int>{80}));
  // Megatron with the embedding and the loss counted as layers (the NeMo / Megatron-Bridge
  // Llama-3.1-405B recipes: 126 layers, pp 8 x vpp 8, published in
  // tests/data/throughput-published): (126 + 2) / 64 = 2 per chunk, 16 per stage, one fewer on the
  // first and on the last.
  TrainingJob mega;
  mega.framework = Framework::kMegatron;
  mega.pp = 8;
  mega.vpp = 8;
  EXPECT_EQ(PipelineStageLayers(126, mega), (std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15}));
  mega.vpp = 1;
  EXPECT_EQ(PipelineStageLayers(32, mega), (std::vector<int>{4, 4, 4, 4, 4, 4, 4, 4}));
  mega.framework = Framework::kDeepspeed;  // partition_uniform
  mega.vpp = 8;
  EXPECT_EQ(PipelineStageLayers(126, mega), (std::vector<int>{16, 16, 16, 16, 16, 16, 15, 15}));
}

TEST(LayoutTest, HeaviestStageIsReported) {
  // 1F1B: stage 0 holds p in-flight micro-batches and the embedding; the last stage one
  // micro-batch plus the head and the logits. With a 32k vocabulary, short sequences and 4 stages
  // the first stage's in-flight activations dominate.
  const ModelArch m = Llama2_7b();
  TrainingJob j = BaseJob();
  j.framework = Framework::kMegatron;
  j.precision = Precision::kMixedBf16;
  j.gpus = 4;
  j.pp = 4;
  j.grad_accum = 8;
  j.seq_len = 4096;
  Result<MemoryEstimate> e = EstimateMemory(m, j, Gpu80());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->layers_per_stage, (std::vector<int>{8, 8, 8, 8}));
  EXPECT_EQ(e->heaviest_stage, 0);
}

}  // namespace
}  // namespace fmte
