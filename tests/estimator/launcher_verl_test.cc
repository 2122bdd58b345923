// verl launch lines (launcher_verl.cc): `python3 -m verl.trainer.main_ppo` with Hydra overrides of
// ppo_trainer.yaml, as verl's example scripts write them (arrays of key=value words, values from
// shell variables and arithmetic). The actor's training step is what fmte reads.
#include <gtest/gtest.h>

#include <string>

#include "fmte/request.h"

namespace fmte {
namespace {

JobRequest Parse(std::string_view script) {
  SlurmFacts f;
  f.tres_per_node = "gres:gpu:8";
  f.min_nodes = 1;
  return ParseJobRequest(script, {}, f);
}

TEST(VerlTest, ActorOverridesFromTheScript) {
  const JobRequest r = Parse(
      "#!/bin/bash\n"
      "MODEL_PATH=Qwen/Qwen3-8B\noffload=false\nmax_prompt_length=$((1024 * 2))\n"
      "offload=true\n"
      "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo \\\n"
      "    data.max_prompt_length=${max_prompt_length} data.max_response_length=4096 \\\n"
      "    actor_rollout_ref.model.path=\"${MODEL_PATH}\" \\\n"
      "    actor_rollout_ref.model.enable_gradient_checkpointing=True \\\n"
      "    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \\\n"
      "    actor_rollout_ref.actor.fsdp_config.param_offload=${offload} \\\n"
      "    actor_rollout_ref.rollout.gpu_memory_utilization=0.6 trainer.n_gpus_per_node=8\n");
  ASSERT_TRUE(r.is_llm_job);
  EXPECT_EQ(r.launcher, "verl");
  EXPECT_EQ(r.job.model, "Qwen/Qwen3-8B");
  EXPECT_EQ(r.job.sharding, Sharding::kFsdpFull);  // the actor's default strategy
  EXPECT_TRUE(r.job.offload_params);               // the later offload=true wins
  EXPECT_FALSE(r.job.offload_optimizer);
  EXPECT_EQ(r.job.micro_batch, 4);
  EXPECT_EQ(r.job.seq_len, 2048 + 4096);  // prompt + response
  EXPECT_EQ(r.job.activation_checkpointing, Checkpointing::kFull);
  EXPECT_EQ(r.job.method, Method::kFull);
  bool warned = false;
  for (const std::string& w : r.warnings) warned = warned || w.find("rollout") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(VerlTest, LoraAndAStrategyItDoesNotModel) {
  const JobRequest lora = Parse(
      "python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=Qwen/Qwen3-8B "
      "actor_rollout_ref.model.lora_rank=32\n");
  EXPECT_EQ(lora.job.method, Method::kLora);
  EXPECT_EQ(lora.job.lora_r, 32);
  const JobRequest mega = Parse(
      "python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=Qwen/Qwen3-8B "
      "actor_rollout_ref.actor.strategy=megatron\n");
  ASSERT_FALSE(mega.unread.empty());  // read favourably by the policy, never rejected on a guess
  EXPECT_EQ(mega.unread[0].key, "sharding");
}

}  // namespace
}  // namespace fmte
