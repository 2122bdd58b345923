// Answer.AI fsdp_qlora launch lines (launcher_fsdp_qlora.cc): train.py's --train_type and the
// defaults of its fsdp_qlora() arguments (train_type "qlora", batch_size 1, context_length 512,
// sharding_strategy "full_shard", use_gradient_checkpointing True, use_cpu_offload True,
// precision "bf16", lora_rank 64), read through ParseJobRequest as the plugin does. The lines are
// written here in the form of the project's README and its Slurm example (srun python train.py
// --world_size ... --train_type custom_qlora ...).
#include <gtest/gtest.h>

#include <string>

#include "fmte/request.h"

namespace fmte {
namespace {

JobRequest Parse(std::string_view flags) {
  SlurmFacts f;
  f.tres_per_node = "gres:gpu:4";
  f.min_nodes = 1;
  return ParseJobRequest(
      "#!/bin/bash\nsrun python $HOME/fsdp_qlora/train.py " + std::string(flags) + "\n", {}, f);
}

TEST(FsdpQloraTest, ReadsTheSlurmExampleForm) {
  const JobRequest r = Parse(
      "--world_size=4 --model_name meta-llama/Llama-2-70b-hf --batch_size 8 --context_length 512 "
      "--gradient_accumulation_steps 2 --train_type custom_qlora --use_gradient_checkpointing True "
      "--use_activation_cpu_offload True --use_cpu_offload False --log_to stdout");
  EXPECT_TRUE(r.is_llm_job);
  EXPECT_EQ(r.launcher, "fsdp_qlora");
  EXPECT_EQ(r.job.model, "meta-llama/Llama-2-70b-hf");
  EXPECT_EQ(r.job.method, Method::kQlora);
  EXPECT_EQ(r.job.framework, Framework::kFsdp);
  EXPECT_EQ(r.job.sharding, Sharding::kFsdpFull);
  EXPECT_EQ(r.job.micro_batch, 8);
  EXPECT_EQ(r.job.seq_len, 512);
  EXPECT_EQ(r.job.grad_accum, 2);
  EXPECT_EQ(r.job.lora_r, 64);
  EXPECT_EQ(r.job.activation_checkpointing, Checkpointing::kFull);
  EXPECT_TRUE(r.job.activation_offload);
  EXPECT_FALSE(r.job.offload_params);  // --use_cpu_offload False
  EXPECT_EQ(r.job.precision, Precision::kPureBf16);
}

TEST(FsdpQloraTest, DefaultsApplyWhenFlagsAreAbsent) {
  const JobRequest r = Parse("--train_type qlora --context_length 2048");
  EXPECT_EQ(r.job.model, "meta-llama/Llama-2-7b-hf");
  EXPECT_EQ(r.job.micro_batch, 1);
  EXPECT_TRUE(r.job.offload_params);  // use_cpu_offload defaults to True
  EXPECT_TRUE(r.job.offload_optimizer);
  EXPECT_EQ(r.job.activation_checkpointing, Checkpointing::kFull);
}

TEST(FsdpQloraTest, TrainTypesStrategiesAndPrecisions) {
  struct Case {
    const char* flags;
    Method method;
    Sharding sharding;
    Precision precision;
  } cases[] = {
      {"--train_type full --context_length 512 --use_cpu_offload false", Method::kFull,
       Sharding::kFsdpFull, Precision::kPureBf16},
      {"--train_type lora --context_length 512 --precision bf16_autocast", Method::kLora,
       Sharding::kFsdpFull, Precision::kAmpBf16},
      {"--train_type hqq_dora --context_length 512 --sharding_strategy shard_grad_op",
       Method::kQlora, Sharding::kFsdpGradOp, Precision::kPureBf16},
      {"--train_type qlora --context_length 512 --sharding_strategy hybrid_full_shard "
       "--precision fp32",
       Method::kQlora, Sharding::kFsdpHybrid, Precision::kFp32},
  };
  for (const Case& c : cases) {
    const JobRequest r = Parse(c.flags);
    EXPECT_EQ(r.launcher, "fsdp_qlora") << c.flags;
    EXPECT_EQ(r.job.method, c.method) << c.flags;
    EXPECT_EQ(r.job.sharding, c.sharding) << c.flags;
    EXPECT_EQ(r.job.precision, c.precision) << c.flags;
  }
}

TEST(FsdpQloraTest, OtherTrainPyScriptsAreNotTakenForIt) {
  // A --train_type fsdp_qlora does not know, or none of its own flags: another train.py.
  EXPECT_NE(Parse("--train_type sft --context_length 512 --model_name gpt2").launcher,
            "fsdp_qlora");
  EXPECT_NE(Parse("--train_type lora --model_name gpt2").launcher, "fsdp_qlora");
}

}  // namespace
}  // namespace fmte
