// RL/post-training launchers: verl (launcher_verl.cc: `python3 -m verl.trainer.main_ppo` with
// Hydra overrides of ppo_trainer.yaml, as verl's example scripts write them, values from shell
// variables and arithmetic; the actor's training step is what fmte reads) and OpenRLHF
// (launcher_openrlhf.cc: `deepspeed --module openrlhf.cli.train_*` with its flat flags, and
// `torchrun -m openrlhf.cli.*` with the dotted flags of its current CLI).
#include <gtest/gtest.h>

#include <string>

#include "fmte/request.h"

namespace fmte {
namespace {

// Whether the request left `key` unread (read favourably by the policy).
bool LeftUnread(const JobRequest& r, std::string_view key) {
  for (const UnreadSetting& u : r.unread)
    if (u.key == key) return true;
  return false;
}

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
  EXPECT_EQ(r.job.objective, Objective::kGrpo);  // algorithm.adv_estimator=grpo: no wall time
  // The actor's weights are on the host while the rollout generates: its share is told, not
  // counted beside states the generation phase would count on the GPU.
  EXPECT_EQ(r.job.generation_memory, 0);
  bool warned = false;
  for (const std::string& w : r.warnings)
    warned = warned || w.find("(up to 0.6 of each GPU while it generates") != std::string::npos;
  EXPECT_TRUE(warned);
  // verl's token budgets and sequence parallelism are not read: never rejected on a guess.
  ASSERT_FALSE(r.unread.empty());
  EXPECT_EQ(r.unread[0].key, "offload");
}

// verl's rollout shares the actor's GPUs (the hybrid engine) with gpu_memory_utilization of each
// (0.5 by default, verl/trainer/config/rollout/rollout.yaml) and sleeps while the actor trains
// (free_cache_engine, true by default).
TEST(VerlTest, TheRolloutsShareOfEachGpuIsCounted) {
  const auto read = [](const std::string& overrides) {
    return Parse("python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=Qwen/Qwen3-8B " +
                 overrides + " trainer.n_gpus_per_node=8\n")
        .job;
  };
  const TrainingJob plain = read("");
  EXPECT_DOUBLE_EQ(plain.generation_memory, 0.5);
  EXPECT_TRUE(plain.generation_sleeps);
  const TrainingJob given = read("actor_rollout_ref.rollout.gpu_memory_utilization=0.7");
  EXPECT_DOUBLE_EQ(given.generation_memory, 0.7);
  const TrainingJob awake = read("actor_rollout_ref.rollout.free_cache_engine=False");
  EXPECT_DOUBLE_EQ(awake.generation_memory, 0.5);
  EXPECT_FALSE(awake.generation_sleeps);  // held through the actor's update too
  // An optimizer on the host while the rollout generates: not counted (told).
  EXPECT_EQ(read("actor_rollout_ref.actor.fsdp_config.optimizer_offload=True").generation_memory,
            0);
  // A share out of range or from an unknown variable is not counted, and the note says so.
  for (const std::string share : {"1.5", "${GMU}"}) {
    const JobRequest r = Parse(
        "python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=Qwen/Qwen3-8B "
        "actor_rollout_ref.rollout.gpu_memory_utilization=" +
        share + " trainer.n_gpus_per_node=8\n");
    EXPECT_EQ(r.job.generation_memory, 0) << share;
    bool claimed = false;
    for (const std::string& w : r.warnings)
      claimed = claimed || w.find("share of each GPU (") != std::string::npos;
    EXPECT_FALSE(claimed) << share;
  }
  // A critic (need_critic: critic.enable, else adv_estimator gae, verl's default) of the actor's
  // model trains on the same GPUs; one of another model, or offloaded, is told, not counted.
  EXPECT_TRUE(plain.critic);  // gae by default
  EXPECT_FALSE(read("algorithm.adv_estimator=grpo").critic);
  EXPECT_TRUE(read("algorithm.adv_estimator=grpo critic.enable=True").critic);
  EXPECT_TRUE(read("critic.model.path=Qwen/Qwen3-8B").critic);
  EXPECT_FALSE(read("critic.model.path=Qwen/Qwen3-0.6B").critic);
  EXPECT_FALSE(read("critic.model.fsdp_config.param_offload=True "
                    "critic.model.fsdp_config.optimizer_offload=True")
                   .critic);
  // A reference policy (use_kl_loss or use_kl_in_reward) on the actor's GPUs, unless its weights
  // wait on the host (ref.fsdp_config.param_offload).
  EXPECT_FALSE(plain.kl_reference);
  EXPECT_TRUE(read("actor_rollout_ref.actor.use_kl_loss=True").kl_reference);
  EXPECT_TRUE(read("algorithm.use_kl_in_reward=true").kl_reference);
  EXPECT_FALSE(read("actor_rollout_ref.actor.use_kl_loss=True "
                    "actor_rollout_ref.ref.fsdp_config.param_offload=True")
                   .kl_reference);
}

// With use_dynamic_bsz, verl cuts the mini-batch into micro-batches of at most
// ppo_max_token_len_per_gpu tokens and ignores ppo_micro_batch_size_per_gpu (dp_actor.py); its own
// gspo example sets the budget to twice prompt + response (examples/gspo_trainer).
TEST(VerlTest, TokenBudgetSetsTheMicroBatch) {
  const std::string head =
      "max_prompt_length=2048\nmax_response_length=8192\n"
      "budget=$(((max_prompt_length + max_response_length) * 2))\n"
      "python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=Qwen/Qwen3-8B "
      "data.max_prompt_length=${max_prompt_length} data.max_response_length=${max_response_length} "
      "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 ";
  const JobRequest budget = Parse(head +
                                  "actor_rollout_ref.actor.use_dynamic_bsz=true "
                                  "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=${budget}\n");
  EXPECT_EQ(budget.job.micro_batch, 2);  // 20480 tokens of 10240-token sequences
  // verl's default budget (ppo_trainer.yaml: 16384 tokens) holds one such sequence, never zero.
  const JobRequest fallback = Parse(head + "actor_rollout_ref.actor.use_dynamic_bsz=True\n");
  EXPECT_EQ(fallback.job.micro_batch, 1);
  const JobRequest fixed = Parse(head + "actor_rollout_ref.actor.use_dynamic_bsz=false\n");
  EXPECT_EQ(fixed.job.micro_batch, 8);
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

TEST(OpenRlhfTest, FlatAndDottedFlags) {
  // The older CLI (examples/scripts/train_sft_llama.sh of 2024) and the current one.
  const JobRequest flat = Parse(
      "deepspeed --module openrlhf.cli.train_sft --max_len 4096 --pretrain "
      "meta-llama/Meta-Llama-3-8B --micro_train_batch_size 2 --zero_stage 2 --bf16 "
      "--gradient_checkpointing --adam_offload --lora_rank 16\n");
  ASSERT_TRUE(flat.is_llm_job);
  EXPECT_EQ(flat.launcher, "openrlhf");
  EXPECT_EQ(flat.job.model, "meta-llama/Meta-Llama-3-8B");
  EXPECT_EQ(flat.job.framework, Framework::kDeepspeed);
  EXPECT_EQ(flat.job.sharding, Sharding::kZero2);
  EXPECT_EQ(flat.job.micro_batch, 2);
  EXPECT_EQ(flat.job.seq_len, 4096);
  EXPECT_TRUE(flat.job.offload_optimizer);
  EXPECT_EQ(flat.job.method, Method::kLora);
  EXPECT_EQ(flat.job.activation_checkpointing, Checkpointing::kFull);
  for (const std::string& w : flat.warnings) EXPECT_EQ(w.find("reference"), std::string::npos);
  const JobRequest dotted = Parse(
      "torchrun --nproc_per_node 8 -m openrlhf.cli.train_dpo --train.micro_batch_size 1 "
      "--model.model_name_or_path meta-llama/Llama-3.1-8B --ds.zero_stage 3 --data.max_len 8192 "
      "--ds.param_dtype bf16 --model.gradient_checkpointing_enable\n");
  EXPECT_EQ(dotted.job.model, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(dotted.job.sharding, Sharding::kZero3);
  EXPECT_EQ(dotted.job.seq_len, 8192);
  EXPECT_EQ(dotted.job.precision, Precision::kMixedBf16);
  // DPO (openrlhf/cli/train_dpo.py: a reference Actor beside the policy): the objective, whose
  // reference model fmte counts for full fine-tuning; none left to a note.
  EXPECT_EQ(dotted.job.objective, Objective::kDpo);
  EXPECT_TRUE(dotted.job.KeepsReferenceModel());
  for (const std::string& w : dotted.warnings) EXPECT_EQ(w.find("reference"), std::string::npos);
  // With LoRA OpenRLHF still builds the reference as a model of its own, which fmte does not
  // count: a note says so, unless --ref_offload keeps it on the host.
  const auto reference_noted = [](const JobRequest& r) {
    for (const std::string& w : r.warnings)
      if (w.find("reference model OpenRLHF keeps") != std::string::npos) return true;
    return false;
  };
  const std::string lora =
      "deepspeed --module openrlhf.cli.train_dpo --pretrain meta-llama/Llama-3.1-8B "
      "--zero_stage 2 --lora_rank 16";
  EXPECT_TRUE(reference_noted(Parse(lora + "\n")));
  EXPECT_FALSE(reference_noted(Parse(lora + " --ref_offload\n")));
  EXPECT_EQ(Parse(lora + "\n").job.objective, Objective::kDpo);
}

// PPO under Ray, as OpenRLHF's train_ppo_ray_slurm.sh submits it: `ray job submit [OPTIONS] --
// python3 -m openrlhf.cli.train_ppo_ray --actor.*` inside `bash -c` after a pip install. The
// actor's share of the job's GPUs is not placed by fmte: unread, read favourably.
// A ZeRO stage from a variable the script does not set is unknown, not OpenRLHF's default 2.
TEST(OpenRlhfTest, AnUnknownStageIsUnreadNotTheDefault) {
  const JobRequest r = Parse(
      "deepspeed --module openrlhf.cli.train_sft --pretrain meta-llama/Llama-3.1-8B "
      "--zero_stage $STAGE --bf16\n");
  ASSERT_TRUE(r.is_llm_job);
  ASSERT_FALSE(r.unread.empty());
  EXPECT_EQ(r.unread[0].key, "sharding");
  EXPECT_EQ(r.SourceOf("sharding"), nullptr);
}

TEST(OpenRlhfTest, PpoUnderRayJobSubmit) {
  const JobRequest r = Parse(
      "srun --overlap --nodes=1 bash -c \\\n"
      "\"pip install ray[default] \\\n"
      "&& /root/.local/bin/ray job submit --address=http://localhost:8265 \\\n"
      "    -- python3 -m openrlhf.cli.train_ppo_ray --actor.num_gpus_per_node 4 \\\n"
      "    --actor.model_name_or_path meta-llama/Llama-3.1-8B --train.micro_batch_size 8 \\\n"
      "    --ds.zero_stage 3 --actor.gradient_checkpointing_enable\" &>> log\n");
  ASSERT_TRUE(r.is_llm_job);
  EXPECT_EQ(r.launcher, "openrlhf");
  EXPECT_EQ(r.job.model, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(r.job.sharding, Sharding::kZero3);
  EXPECT_EQ(r.job.micro_batch, 8);
  EXPECT_EQ(r.job.activation_checkpointing, Checkpointing::kFull);
  EXPECT_EQ(r.job.objective, Objective::kPpo);  // --advantage_estimator gae by default
  ASSERT_FALSE(r.unread.empty());
  EXPECT_EQ(r.unread[0].key, "layout");
}

// The algorithm names the online objective (each generates its completions in every step, which
// fmte does not model: no wall time, no time limit): verl's algorithm.adv_estimator (gae, PPO
// with a critic, by default: verl/trainer/config/ppo_trainer.yaml), OpenRLHF's
// --advantage_estimator (gae by default: openrlhf/cli/train_ppo_ray.py), TRL's trainers by their
// script or CLI command.
TEST(OnlineObjectiveTest, TheAlgorithmNamesTheObjective) {
  const auto objective = [](const std::string& script) {
    return std::string(ToString(Parse("#!/bin/bash\n" + script + "\n").job.objective));
  };
  const std::string verl =
      "python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=Qwen/Qwen2.5-7B "
      "data.max_prompt_length=512 data.max_response_length=1024";
  EXPECT_EQ(objective(verl), "ppo");
  EXPECT_EQ(objective(verl + " algorithm.adv_estimator=rloo"), "rloo");
  EXPECT_EQ(objective(verl + " algorithm.adv_estimator=reinforce_plus_plus"), "ppo");
  const std::string orlhf =
      "python3 -m openrlhf.cli.train_ppo_ray --pretrain meta-llama/Llama-3.1-8B "
      "--micro_train_batch_size 4";
  EXPECT_EQ(objective(orlhf + " --advantage_estimator group_norm"), "grpo");
  EXPECT_EQ(objective(orlhf + " --advantage_estimator rloo"), "rloo");
  EXPECT_EQ(objective("trl grpo --model_name_or_path Qwen/Qwen2.5-7B"), "grpo");
  EXPECT_EQ(objective("accelerate launch trl/scripts/rloo.py --model_name_or_path Qwen/Qwen2.5-7B"),
            "rloo");
  EXPECT_EQ(objective("accelerate launch examples/scripts/gkd.py --model_name_or_path "
                      "Qwen/Qwen2-0.5B-Instruct"),
            "gkd");
}

// The sequences an online TRL trainer puts through the policy are its prompts and completions
// (GRPOConfig: max_completion_length, 512 by default now; the prompt truncated only with
// max_prompt_length), not TRL's max_length 1024 of SFT and DPO. Also for scripts outside TRL that
// name the trainer (open-r1's grpo.py).
TEST(OnlineObjectiveTest, PromptAndCompletionMakeTheSequence) {
  const JobRequest both = Parse(
      "#!/bin/bash\naccelerate launch trl/scripts/grpo.py --model_name_or_path Qwen/Qwen2.5-7B "
      "--max_prompt_length 256 --max_completion_length 2048\n");
  EXPECT_EQ(both.job.seq_len, 256 + 2048);
  EXPECT_TRUE(both.job.seq_len_is_cap);
  const JobRequest default_completion = Parse(
      "#!/bin/bash\naccelerate launch src/open_r1/grpo.py --model_name_or_path Qwen/Qwen2.5-7B "
      "--max_prompt_length 512\n");
  EXPECT_EQ(default_completion.job.objective, Objective::kGrpo);
  EXPECT_EQ(default_completion.job.seq_len, 512 + 512);
  // No prompt limit: the prompts' length is the data's, unread (never TRL's 1024).
  const JobRequest open = Parse(
      "#!/bin/bash\naccelerate launch trl/scripts/grpo.py --model_name_or_path Qwen/Qwen2.5-7B "
      "--max_completion_length 2048\n");
  bool unread = false;
  for (const UnreadSetting& u : open.unread) unread = unread || u.key == "seq-len";
  EXPECT_TRUE(unread);
  for (const FieldSource& src : open.sources) EXPECT_NE(src.key, "seq-len") << src.origin;
  // GKD's config is an SFTConfig: TRL's max_length (1024 by default) is its sequence.
  const JobRequest gkd = Parse(
      "#!/bin/bash\ntrl gkd --model_name_or_path Qwen/Qwen2-0.5B-Instruct "
      "--teacher_model_name_or_path Qwen/Qwen2-1.5B-Instruct\n");
  EXPECT_EQ(gkd.job.objective, Objective::kGkd);
  EXPECT_EQ(gkd.job.seq_len, 1024);
  EXPECT_TRUE(gkd.job.seq_len_is_cap);
}

// The warning of a TRL GRPO launch with `flags` that contains `needle`, or "".
std::string TrlGrpoWarning(const std::string& flags, std::string_view needle) {
  const JobRequest r = Parse(
      "#!/bin/bash\naccelerate launch trl/scripts/grpo.py --model_name_or_path Qwen/Qwen2.5-7B "
      "--max_prompt_length 512 " +
      flags + "\n");
  for (const std::string& w : r.warnings)
    if (w.find(needle) != std::string::npos) return w;
  return std::string();
}

// TRL's colocated vLLM takes vllm_gpu_memory_utilization of each GPU (GRPOConfig: 0.3 by
// default); with its sleep mode it holds that only while it generates. In server mode it runs on
// GPUs of its own; without --use_vllm, model.generate. The mode by default is TRL's version's
// (colocate since 1.0, server before): told, not counted.
TEST(OnlineObjectiveTest, ColocatedVllmIsCounted) {
  const auto job = [](const std::string& flags) {
    return Parse(
               "#!/bin/bash\naccelerate launch trl/scripts/grpo.py --model_name_or_path "
               "Qwen/Qwen2.5-7B --max_prompt_length 512 " +
               flags + "\n")
        .job;
  };
  const TrainingJob colocated = job("--use_vllm --vllm_mode colocate");
  EXPECT_DOUBLE_EQ(colocated.generation_memory, 0.3);
  EXPECT_FALSE(colocated.generation_sleeps);
  EXPECT_DOUBLE_EQ(
      job("--use_vllm --vllm_mode colocate --vllm_gpu_memory_utilization 0.45").generation_memory,
      0.45);
  const TrainingJob sleeping = job("--use_vllm --vllm_mode colocate --vllm_enable_sleep_mode");
  EXPECT_DOUBLE_EQ(sleeping.generation_memory, 0.3);
  EXPECT_TRUE(sleeping.generation_sleeps);
  EXPECT_EQ(job("--use_vllm --vllm_mode server").generation_memory, 0);
  EXPECT_EQ(job("--vllm_mode colocate").generation_memory, 0);  // no vLLM: model.generate
  EXPECT_EQ(job("--use_vllm").generation_memory, 0);
  // A PEFT model's weights are synced into vLLM gathered whole under ZeRO-3 (sync_weights).
  EXPECT_FALSE(colocated.generation_gathers);
  EXPECT_TRUE(job("--use_vllm --vllm_mode colocate --use_peft").generation_gathers);
  // Without vLLM the trainer's own model generates per_device_train_batch_size x
  // steps_per_generation (gradient_accumulation_steps by default) sequences per GPU at once,
  // gathered under ZeRO-3 unless --ds3_gather_for_generation false.
  const TrainingJob own = job("--per_device_train_batch_size 8 --gradient_accumulation_steps 4");
  EXPECT_EQ(own.generation_batch, 32);
  EXPECT_TRUE(own.generation_gathers);
  EXPECT_EQ(job("--per_device_train_batch_size 8 --gradient_accumulation_steps 4 "
                "--steps_per_generation 2")
                .generation_batch,
            16);
  EXPECT_FALSE(job("--ds3_gather_for_generation false").generation_gathers);
  // A batch from an unknown variable, or a generation batch over all processes: unread (the
  // policy counts no cache on it), never TRL's default 8 on a guess.
  const auto unread_batch = [](const std::string& flags) {
    const JobRequest r = Parse(
        "#!/bin/bash\naccelerate launch trl/scripts/grpo.py --model_name_or_path Qwen/Qwen2.5-7B "
        "--max_prompt_length 512 " +
        flags + "\n");
    return r.job.generation_batch == 0 && LeftUnread(r, "generation-batch");
  };
  EXPECT_TRUE(unread_batch("--per_device_train_batch_size $BS"));
  EXPECT_TRUE(unread_batch("--per_device_train_batch_size 4 --generation_batch_size 256"));
  EXPECT_EQ(colocated.generation_batch, 0);  // vLLM generates
  EXPECT_NE(TrlGrpoWarning("--use_vllm", "give --vllm_mode"), "");
}

// The KL term of TRL's online trainers: with --beta above 0 (GRPO's default 0.0 since TRL 0.19,
// RLOO's 0.05: "If 0.0, the reference model is not loaded") full fine-tuning keeps a reference
// model (GRPOTrainer.__init__ create_model_from_path); PEFT disables the adapters instead.
TEST(OnlineObjectiveTest, AReferenceForBetaIsCounted) {
  const auto job = [](const std::string& script, const std::string& flags) {
    return Parse("#!/bin/bash\naccelerate launch trl/scripts/" + script +
                 " --model_name_or_path Qwen/Qwen2.5-7B --max_prompt_length 512 " + flags + "\n")
        .job;
  };
  EXPECT_TRUE(job("grpo.py", "--beta 0.04").kl_reference);
  EXPECT_TRUE(job("grpo.py", "--beta 0.04").KeepsReferenceModel());
  EXPECT_FALSE(job("grpo.py", "--beta 0.0").kl_reference);
  EXPECT_FALSE(job("grpo.py", "").kl_reference);
  EXPECT_TRUE(job("rloo.py", "").kl_reference);  // RLOOConfig beta 0.05
  EXPECT_FALSE(job("rloo.py", "--beta 0").kl_reference);
  const TrainingJob peft = job("grpo.py", "--beta 0.04 --use_peft --lora_r 16");
  EXPECT_TRUE(peft.kl_reference);
  EXPECT_FALSE(peft.KeepsReferenceModel());  // the base with the adapters disabled
  // A beta from an unknown variable: unread, read favourably (no reference).
  const JobRequest unknown = Parse(
      "#!/bin/bash\naccelerate launch trl/scripts/rloo.py --model_name_or_path Qwen/Qwen2.5-7B "
      "--max_prompt_length 512 --beta $BETA\n");
  EXPECT_FALSE(unknown.job.kl_reference);
  EXPECT_TRUE(LeftUnread(unknown, "kl-reference"));
}

// A sleep mode from an unknown variable is left unread: the policy reads it favourably (asleep: the
// share only while the engine generates) and never rejects on it.
TEST(OnlineObjectiveTest, AnUnknownSleepModeIsReadAsAsleep) {
  const JobRequest r = Parse(
      "#!/bin/bash\naccelerate launch trl/scripts/grpo.py --model_name_or_path Qwen/Qwen2.5-7B "
      "--max_prompt_length 512 --use_vllm --vllm_mode colocate --vllm_enable_sleep_mode $SLEEP\n");
  EXPECT_DOUBLE_EQ(r.job.generation_memory, 0.3);
  EXPECT_TRUE(LeftUnread(r, "generation-sleeps"));
}

// A script with a local launch and a Slurm launch of the same trainer (OpenRLHF's
// train_dpo_llama.sh: `deepspeed --module ...` unless run with "slurm"; the Slurm wrapper's
// `torchrun --nproc_per_node 8 -m ...`): equal readings, and the one that counts its processes is
// taken.
TEST(OpenRlhfTest, TheLaunchThatCountsItsProcessesWinsATie) {
  SlurmFacts f;
  f.exclusive = true;  // whole nodes: the GPU count comes from the launcher
  f.min_nodes = 1;
  const std::string cmd =
      "openrlhf.cli.train_dpo --pretrain meta-llama/Llama-3.1-8B --zero_stage 3 --bf16";
  const JobRequest r = ParseJobRequest(
      "#!/bin/bash\ndeepspeed --module " + cmd + "\ntorchrun --nproc_per_node 8 -m " + cmd + "\n",
      {}, f);
  ASSERT_TRUE(r.is_llm_job);
  EXPECT_EQ(r.job.gpus, 8);
}

}  // namespace
}  // namespace fmte
