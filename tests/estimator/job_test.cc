#include "fmte/job.h"

#include <gtest/gtest.h>

namespace fmte {
namespace {

// The value names are a contract with fmte-advise flags, SPANK options and #FMTE lines
// (docs/advise.md, docs/slurm.md §3):
// every name must round-trip and unknown names must be refused with the field and the choices.
TEST(JobNames, RoundTripEveryPrecision) {
  for (const char* name :
       {"fp32", "amp-bf16", "amp-fp16", "mixed-bf16", "mixed-fp16", "pure-bf16"}) {
    auto p = ParsePrecision(name);
    ASSERT_TRUE(p.ok()) << name;
    EXPECT_EQ(ToString(*p), name);
  }
}

TEST(JobNames, RoundTripEverySharding) {
  for (const char* name :
       {"none", "ddp", "zero1", "zero2", "zero3", "fsdp-full", "fsdp-grad-op", "fsdp-hybrid"}) {
    auto s = ParseSharding(name);
    ASSERT_TRUE(s.ok()) << name;
    EXPECT_EQ(ToString(*s), name);
  }
}

// "fsdp" (FSDP's default sharding_strategy FULL_SHARD) and "fsdp2" (fully_shard, which always
// shards parameters, gradients and optimizer state) name full sharding.
TEST(JobNames, FsdpAndFsdp2AreFullSharding) {
  for (const char* name : {"fsdp", "fsdp2"}) {
    auto s = ParseSharding(name);
    ASSERT_TRUE(s.ok()) << name;
    EXPECT_EQ(*s, Sharding::kFsdpFull) << name;
  }
  EXPECT_FALSE(ParseSharding("FSDP").ok());
}

TEST(JobNames, UnknownNameNamesFieldAndChoices) {
  auto m = ParseMethod("loRA", "--method");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("--method"), std::string::npos);
  EXPECT_NE(m.status().message().find("full|lora|qlora|prompt-tuning|prefix-tuning"),
            std::string::npos);
}

// The intervals people write in trainers' settings: HF save_steps 500 or 0.25 (a share of the
// run), axolotl saves_per_epoch 2 ("2/epoch"), save_strategy "no"; anything else is an error
// that names the field and the forms.
TEST(JobNames, EveryReadsStepsEpochsFractionsAndNever) {
  struct Case {
    const char* text;
    Every::Unit unit;
    double value;
  } cases[] = {{"500", Every::Unit::kSteps, 500},      {"2/epoch", Every::Unit::kPerEpoch, 2},
               {"0.25", Every::Unit::kFraction, 0.25}, {"never", Every::Unit::kNever, 0},
               {"default", Every::Unit::kUnset, 0},    {"0.5/epoch", Every::Unit::kPerEpoch, 0.5}};
  for (const Case& c : cases) {
    auto e = ParseEvery(c.text, "--save-every");
    ASSERT_TRUE(e.ok()) << c.text << ": " << e.status().ToString();
    EXPECT_EQ(e->unit, c.unit) << c.text;
    EXPECT_EQ(e->value, c.value) << c.text;
    auto back = ParseEvery(ToString(*e), "--save-every");
    ASSERT_TRUE(back.ok()) << ToString(*e);
    EXPECT_EQ(*back, *e) << c.text;
  }
  for (const char* bad : {"0", "-5", "1.5", "2/week", "steps", "", "1e99", "0/epoch"}) {
    auto e = ParseEvery(bad, "--save-every");
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_NE(e.status().message().find("--save-every"), std::string::npos) << bad;
    EXPECT_NE(e.status().message().find("N/epoch"), std::string::npos) << bad;
  }
  TrainingJob job;
  job.model = "x";
  job.save_every = {Every::Unit::kFraction, 2};  // a fraction must be below 1
  EXPECT_FALSE(ValidateJob(job).ok());
  job.save_every = {};
  job.eval_samples = -1;
  EXPECT_FALSE(ValidateJob(job).ok());
}

TEST(ValidateJob, RejectsLayoutThatDoesNotDivideGpus) {
  TrainingJob job;
  job.model = "x";
  job.gpus = 6;
  job.tp = 4;
  Status s = ValidateJob(job);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--gpus"), std::string::npos);
}

TEST(ValidateJob, OffloadParamsNeedsWeightSharding) {
  TrainingJob job;
  job.model = "x";
  job.gpus = 8;
  job.sharding = Sharding::kZero2;
  job.offload_params = true;
  EXPECT_FALSE(ValidateJob(job).ok());
  job.sharding = Sharding::kZero3;
  EXPECT_TRUE(ValidateJob(job).ok());
}

}  // namespace
}  // namespace fmte
