// fms-fsdp launch lines (launcher_fms.cc): model variants, defaults of fms_fsdp/config/training.py,
// sharding strategies and checkpointing, read through ParseJobRequest as the plugin does.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "fmte/model.h"
#include "fmte/request.h"

namespace fmte {
namespace {

JobRequest Parse(std::string_view script) {
  SlurmFacts f;
  f.tres_per_node = "gres:gpu:a100:8";
  f.min_nodes = 16;
  return ParseJobRequest(script, {}, f);
}

std::string Line(std::string_view flags) {
  return "torchrun --nproc_per_node=8 main_training.py " + std::string(flags) + "\n";
}

TEST(FmsFsdpTest, ReadsTheProjectsScriptWithItsMultiLineArguments) {
  std::ifstream in(std::string(FMTE_SOURCE_DIR) + "/tests/data/scripts/fms_fsdp_hsdp_7b.sh");
  std::stringstream ss;
  ss << in.rdbuf();
  const JobRequest r = Parse(ss.str());
  EXPECT_TRUE(r.is_llm_job);
  EXPECT_EQ(r.launcher, "fms-fsdp");
  EXPECT_EQ(r.job.model, "meta-llama/Llama-2-7b-hf");
  EXPECT_EQ(r.job.framework, Framework::kFsdp);
  EXPECT_EQ(r.job.method, Method::kFull);
  EXPECT_EQ(r.job.sharding, Sharding::kFsdpHybrid);  // --sharding_strategy=hsdp
  EXPECT_EQ(r.job.activation_checkpointing, Checkpointing::kNone);
  EXPECT_EQ(r.job.precision, Precision::kMixedBf16);  // mixed_precision defaults to True
  EXPECT_EQ(r.job.micro_batch, 2);
  EXPECT_EQ(r.job.seq_len, 4096);  // seq_length default
  EXPECT_EQ(r.job.steps, 100000);
  // --nnodes=$SLURM_NTASKS is unknown at submit time: no "launcher starts 8 processes" warning
  // against the 16 x 8 GPUs of the allocation.
  for (const std::string& w : r.warnings) EXPECT_EQ(w.find("processes"), std::string::npos) << w;
}

TEST(FmsFsdpTest, DefaultsOfTrainConfigApplyWhenFlagsAreAbsent) {
  const JobRequest r = Parse(Line(""));
  EXPECT_EQ(r.job.model, "meta-llama/Llama-2-7b-hf");  // model_variant default "7b"
  EXPECT_EQ(r.job.sharding, Sharding::kFsdpHybrid);    // sharding_strategy default "hsdp"
  EXPECT_EQ(r.job.micro_batch, 2);                     // batch_size default 2
  EXPECT_EQ(r.job.steps, 1000000);                     // num_steps default
  // A strategy from a variable the script does not set is unknown, not the default.
  const JobRequest unknown = Parse(Line("--sharding_strategy=$STRATEGY"));
  EXPECT_EQ(unknown.SourceOf("sharding"), nullptr);
  ASSERT_FALSE(unknown.unread.empty());
  EXPECT_EQ(unknown.unread[0].key, "sharding");
}

TEST(FmsFsdpTest, StrategiesPrecisionAndCheckpointing) {
  struct Case {
    const char* flags;
    Sharding sharding;
    Checkpointing ac;
    Precision precision;
  };
  const Case kCases[] = {
      {"--sharding_strategy=fsdp --fsdp_activation_checkpointing=True", Sharding::kFsdpFull,
       Checkpointing::kFull, Precision::kMixedBf16},
      {"--sharding_strategy=ddp --mixed_precision=False", Sharding::kDdp, Checkpointing::kNone,
       Precision::kFp32},
      // A third of the blocks checkpointed: estimated without checkpointing (memory upper bound).
      {"--sharding_strategy=hsdp --fsdp_activation_checkpointing=True "
       "--selective_checkpointing=1/3",
       Sharding::kFsdpHybrid, Checkpointing::kNone, Precision::kMixedBf16},
      {"--fsdp_activation_checkpointing=True --selective_checkpointing=1", Sharding::kFsdpHybrid,
       Checkpointing::kFull, Precision::kMixedBf16},
  };
  for (const Case& c : kCases) {
    const JobRequest r = Parse(Line(c.flags));
    EXPECT_EQ(r.job.sharding, c.sharding) << c.flags;
    EXPECT_EQ(r.job.activation_checkpointing, c.ac) << c.flags;
    EXPECT_EQ(r.job.precision, c.precision) << c.flags;
  }
}

// Variants without a catalog model get fms's own LLaMA shapes (fms_fsdp/utils/config_utils.py).
// Llama-2-13B has 13,015,864,320 parameters (meta-llama/Llama-2-13b-hf: safetensors index
// total_size 26,031,728,640 bytes in fp16 / 2); fms's llama2_13b is the same network.
TEST(FmsFsdpTest, VariantsWithoutCatalogModelCarryTheirArchitecture) {
  const JobRequest r = Parse(Line("--model_variant=llama2_13b --batch_size=1"));
  EXPECT_EQ(r.job.model, "fms-llama2_13b");
  ASSERT_FALSE(r.arch_json.empty());
  auto arch = ParseModelConfig(r.arch_json, r.job.model);
  ASSERT_TRUE(arch.ok()) << arch.status().ToString();
  EXPECT_EQ(arch->Counts().total, 13015864320);
  EXPECT_EQ(r.job.micro_batch, 1);
}

// An unknown variant is not guessed: without a model the launch is not read as a training job.
TEST(FmsFsdpTest, UnknownVariantIsNotGuessed) {
  const JobRequest r = Parse(Line("--model_variant=llama9_1t"));
  EXPECT_TRUE(r.job.model.empty());
  EXPECT_FALSE(r.is_llm_job);
}

}  // namespace
}  // namespace fmte
