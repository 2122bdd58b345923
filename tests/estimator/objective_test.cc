// Preference objectives (TrainingJob::objective, docs/memory.md "Preference objectives"): what the
// trainers' code runs per sample, checked as relations between estimates that follow from it:
//  - TRL's DPOTrainer, CPOTrainer/ORPOTrainer and LLaMA-Factory's CustomDPOTrainer
//    (concatenated_forward) put the chosen and the rejected sequence of a pair through the policy
//    as one batch of twice the micro-batch: activations and logits are the supervised job's at
//    twice the micro-batch;
//  - dpo and kto keep a frozen reference model built from the policy's own model arguments and
//    placed as its weights (TRL prepare_deepspeed: ZeRO-3 shards it, ZeRO-1/2 give every GPU a
//    copy), except for PEFT methods (the base with adapters disabled) and with
//    precompute_ref_log_probs;
// (Their step time: time_test.cc StepTime.PairsAndReferenceForwards.)
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "fmte/estimator.h"
#include "fmte/job.h"
#include "fmte/memory.h"
#include "fmte/record.h"
#include "fmte/request.h"
#include "memory_test_util.h"

namespace fmte {
namespace {

using testing::BaseJob;
using testing::Gpu80;
using testing::Llama2_7b;

TrainingJob Full(Framework fw, Sharding sharding, int64_t gpus) {
  TrainingJob j = BaseJob();
  j.method = Method::kFull;
  j.precision = Precision::kMixedBf16;
  j.framework = fw;
  j.sharding = sharding;
  j.gpus = gpus;
  j.micro_batch = 2;
  j.seq_len = 2048;
  j.activation_checkpointing = Checkpointing::kFull;
  return j;
}

MemoryEstimate Mem(const TrainingJob& j) {
  auto e = EstimateMemory(Llama2_7b(), j, Gpu80());
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? *e : MemoryEstimate{};
}

int64_t Phase(const MemoryEstimate& e, std::string_view name) {
  for (const MemoryPhase& p : e.phases)
    if (p.name == name) return p.allocated_bytes;
  ADD_FAILURE() << "no phase " << name;
  return 0;
}

TEST(ObjectiveTest, NamesAndRecord) {
  for (std::string_view name :
       {"sft", "dpo", "orpo", "simpo", "cpo", "kto", "grpo", "rloo", "ppo", "gkd"}) {
    auto o = ParseObjective(name);
    ASSERT_TRUE(o.ok()) << name;
    EXPECT_EQ(ToString(*o), name);
  }
  const auto bad = ParseObjective("dapo");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("objective"), std::string::npos);
  EXPECT_NE(bad.status().message().find("sft|dpo|orpo|simpo|cpo|kto|grpo|rloo|ppo|gkd"),
            std::string::npos);

  // The accounting record keeps the objective, so that retraining does not read a DPO job's
  // peak as a supervised one's.
  TrainingJob j = Full(Framework::kHf, Sharding::kZero2, 8);
  j.model = "meta-llama/Llama-2-7b-hf";
  j.objective = Objective::kDpo;
  j.reference_precomputed = true;
  AccountingRecord f;
  f.job = j;
  f.decision = "accept";
  const std::string text = EncodeRecord(f);
  auto back = DecodeRecord(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString() << " " << text;
  EXPECT_EQ(back->job.objective, Objective::kDpo);
  EXPECT_TRUE(back->job.reference_precomputed);
}

TEST(ObjectiveTest, PairsRunTwiceTheSequencesAndDpoKeepsAReference) {
  struct Row {
    Framework fw;
    Sharding sharding;
    int64_t gpus;
  };
  const Row rows[] = {{Framework::kHf, Sharding::kZero2, 8},
                      {Framework::kDeepspeed, Sharding::kZero3, 8},
                      {Framework::kFsdp, Sharding::kFsdpFull, 4},
                      {Framework::kHf, Sharding::kNone, 1},
                      {Framework::kMegatron, Sharding::kZero1, 8}};
  for (const Row& r : rows) {
    SCOPED_TRACE(std::string(ToString(r.fw)) + " " + std::string(ToString(r.sharding)));
    TrainingJob sft = Full(r.fw, r.sharding, r.gpus);
    TrainingJob twice = sft;
    twice.micro_batch = 2 * sft.micro_batch;
    TrainingJob dpo = sft;
    dpo.objective = Objective::kDpo;
    const MemoryEstimate s = Mem(sft), t = Mem(twice), d = Mem(dpo);
    // Each phase holds the supervised job's at twice the micro-batch, and the reference, which
    // holds what the policy's weights hold on a GPU: sharded where they are.
    EXPECT_EQ(d.breakdown.reference, d.breakdown.weights);
    EXPECT_EQ(s.breakdown.reference, 0);
    ASSERT_EQ(d.phases.size(), t.phases.size());
    for (size_t i = 0; i < d.phases.size(); ++i)
      EXPECT_NEAR(static_cast<double>(d.phases[i].allocated_bytes - d.breakdown.reference),
                  static_cast<double>(t.phases[i].allocated_bytes), 1.0)
          << d.phases[i].name;
    EXPECT_GT(Phase(d, "forward-backward"), Phase(s, "forward-backward") + d.breakdown.reference);

    // Reference-free pairs: the same passes, no reference.
    for (Objective o : {Objective::kOrpo, Objective::kSimpo, Objective::kCpo}) {
      TrainingJob free = sft;
      free.objective = o;
      const MemoryEstimate f = Mem(free);
      EXPECT_EQ(f.breakdown.reference, 0) << ToString(o);
      EXPECT_EQ(f.per_gpu_bytes, t.per_gpu_bytes) << ToString(o);
      EXPECT_EQ(f.breakdown.activations, t.breakdown.activations) << ToString(o);
      EXPECT_EQ(f.breakdown.logits, t.breakdown.logits) << ToString(o);
    }
    // Precomputed reference log-probabilities: no reference model during training.
    TrainingJob pre = dpo;
    pre.reference_precomputed = true;
    EXPECT_EQ(Mem(pre).per_gpu_bytes, t.per_gpu_bytes);
    // KTO: unpaired completions (the KL set's forward runs under no_grad), with a reference.
    TrainingJob kto = sft;
    kto.objective = Objective::kKto;
    const MemoryEstimate k = Mem(kto);
    EXPECT_EQ(k.breakdown.reference, k.breakdown.weights);
    EXPECT_NEAR(static_cast<double>(Phase(k, "forward-backward") - k.breakdown.reference),
                static_cast<double>(Phase(s, "forward-backward")), 1.0);
  }
  // ZeRO-3 shards the reference as the policy; ZeRO-2 keeps a whole copy on every GPU.
  TrainingJob z2 = Full(Framework::kDeepspeed, Sharding::kZero2, 8);
  TrainingJob z3 = Full(Framework::kDeepspeed, Sharding::kZero3, 8);
  z2.objective = z3.objective = Objective::kDpo;
  EXPECT_NEAR(static_cast<double>(Mem(z2).breakdown.reference) /
                  static_cast<double>(Mem(z3).breakdown.reference),
              8.0, 0.05);
}

// ZeRO-3 with the parameters offloaded: TRL's prepare_deepspeed copies the config, offload_param
// included, so the reference's shard sits in host memory beside the policy's, not on the GPU.
TEST(ObjectiveTest, OffloadedParametersTakeTheReferenceToTheHost) {
  TrainingJob sft = Full(Framework::kDeepspeed, Sharding::kZero3, 8);
  sft.offload_params = sft.offload_optimizer = true;
  TrainingJob dpo = sft;
  dpo.objective = Objective::kDpo;
  TrainingJob on_gpu = Full(Framework::kDeepspeed, Sharding::kZero3, 8);
  on_gpu.objective = Objective::kDpo;
  const MemoryEstimate s = Mem(sft), d = Mem(dpo), g = Mem(on_gpu);
  EXPECT_EQ(d.breakdown.reference, 0);
  // Per node (8 GPUs): each rank's reference shard, the 16-bit weights the GPU holds without
  // offload.
  EXPECT_NEAR(static_cast<double>(d.cpu_bytes_per_node - s.cpu_bytes_per_node),
              8.0 * static_cast<double>(g.breakdown.reference), 8.0);
}

TEST(ObjectiveTest, PeftTakesTheReferenceFromTheBase) {
  TrainingJob lora = BaseJob();
  lora.method = Method::kLora;
  lora.precision = Precision::kPureBf16;
  lora.micro_batch = 1;
  lora.seq_len = 2048;
  TrainingJob twice = lora;
  twice.micro_batch = 2;
  TrainingJob dpo = lora;
  dpo.objective = Objective::kDpo;
  const MemoryEstimate d = Mem(dpo), t = Mem(twice);
  EXPECT_FALSE(dpo.KeepsReferenceModel());
  EXPECT_EQ(d.breakdown.reference, 0);
  EXPECT_EQ(d.per_gpu_bytes, t.per_gpu_bytes);
}

TEST(ObjectiveTest, FmteLineAndErrors) {
  const JobRequest r = ParseJobRequest(
      "#!/bin/bash\n#SBATCH --gres=gpu:8\n#FMTE model=meta-llama/Llama-3.1-8B\n"
      "#FMTE objective=dpo\n#FMTE precompute-ref=true\npython train.py\n",
      {}, SlurmFacts{});
  EXPECT_EQ(r.job.objective, Objective::kDpo);
  EXPECT_TRUE(r.job.reference_precomputed);
  const JobRequest bad = ParseJobRequest(
      "#!/bin/bash\n#FMTE model=meta-llama/Llama-3.1-8B\n#FMTE objective=dapo\npython t.py\n", {},
      SlurmFacts{});
  bool named = false;
  for (const std::string& w : bad.warnings)
    named = named || (w.find("objective") != std::string::npos &&
                      w.find("sft|dpo|orpo|simpo|cpo|kto|grpo|rloo|ppo|gkd") != std::string::npos);
  EXPECT_TRUE(named);
  EXPECT_EQ(bad.job.objective, Objective::kSft);
}

// The online objectives (GRPO, RLOO, PPO, GKD) generate their training completions in every step
// (TRL GRPOTrainer._generate_and_score_completions, verl's rollout, OpenRLHF's vLLM engines): one
// sequence per completion through the policy (per_device_train_batch_size counts completions), no
// reference fmte counts, and no wall time, since the generation that fills most of such a step is
// not modelled: a time limit from the update alone would end the job (the worst outcome).
TEST(ObjectiveTest, OnlineObjectivesHaveNoWallTime) {
  for (Objective o : {Objective::kGrpo, Objective::kRloo, Objective::kPpo, Objective::kGkd}) {
    TrainingJob j = Full(Framework::kDeepspeed, Sharding::kZero3, 8);
    j.objective = o;
    EXPECT_TRUE(GeneratesCompletions(o)) << ToString(o);
    EXPECT_EQ(j.SequencesPerSample(), 1) << ToString(o);
    EXPECT_EQ(j.ExtraForwardPasses(), 0) << ToString(o);
    EXPECT_FALSE(j.KeepsReferenceModel()) << ToString(o);
    TrainingJob sft = j;
    sft.objective = Objective::kSft;
    EXPECT_EQ(Mem(j).per_gpu_bytes, Mem(sft).per_gpu_bytes) << ToString(o);
  }
  for (Objective o : {Objective::kSft, Objective::kDpo, Objective::kKto, Objective::kOrpo})
    EXPECT_FALSE(GeneratesCompletions(o)) << ToString(o);

  // Through the estimator: the update's step time, no wall time even with --steps, so the policy
  // sets no limit on a job that gives none (and a supervised job's twin gets one).
  const JobRequest r = ParseJobRequest(
      "#!/bin/bash\n#SBATCH --gres=gpu:a100:8\n"
      "accelerate launch --num_processes 8 trl/scripts/grpo.py --model_name_or_path "
      "meta-llama/Llama-2-7b-hf --per_device_train_batch_size 4 --max_prompt_length 512 "
      "--max_completion_length 1024 --max_steps 200 --bf16 --gradient_checkpointing\n",
      {}, SlurmFacts{});
  EXPECT_EQ(r.job.objective, Objective::kGrpo);
  EXPECT_EQ(r.job.seq_len, 512 + 1024);
  EXPECT_EQ(r.job.steps, 200);
  auto est = Estimator::Load();
  ASSERT_TRUE(est.ok()) << est.status().ToString();
  auto gpu = est->catalogs().gpus.Find("A100-SXM4-80GB");
  ASSERT_TRUE(gpu.ok());
  TrainingJob job = r.job;
  job.gpus = 8;
  auto arch = ResolveModel(est->catalogs().models, job.model);
  ASSERT_TRUE(arch.ok());
  auto e = est->Estimate(*arch, job, **gpu);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_TRUE(e->has_step_time);
  EXPECT_FALSE(e->has_time);
  job.objective = Objective::kSft;
  auto twin = est->Estimate(*arch, job, **gpu);
  ASSERT_TRUE(twin.ok());
  EXPECT_TRUE(twin->has_time);
  EXPECT_NEAR(e->time.step.step_time_s, twin->time.step.step_time_s,
              1e-9 * twin->time.step.step_time_s);
}

// A colocated inference engine (TrainingJob::generation_memory): vLLM V1 takes
// gpu_memory_utilization x the GPU's total memory for its weights, graphs and KV cache (it refuses
// to start with less free: vllm/v1/worker/gpu_worker.py). Awake through the update (TRL without
// vllm_enable_sleep_mode), every phase holds it beside the trainer's: the estimate, each phase and
// the range move by exactly that share. Asleep while the policy trains (TRL's sleep mode, verl's
// free_cache_engine), it is held only in the generation phase, beside the states that live between
// steps: under ZeRO-3 on 8 GPUs the bf16 weights and the fp32 master weights and Adam moments,
// 2 + 12 bytes per parameter over 8 GPUs (Rajbhandari et al. 2020, ZeRO, K = 12), the gradients
// freed by zero_grad, with DeepSpeed's reduce bucket.
TEST(ObjectiveTest, AColocatedEngineHoldsItsShare) {
  TrainingJob j = Full(Framework::kDeepspeed, Sharding::kZero3, 8);
  j.objective = Objective::kGrpo;
  const MemoryEstimate plain = Mem(j);
  const auto share_of_gpu = [](double share) {
    return share * static_cast<double>(Gpu80().memory_bytes);
  };
  j.generation_memory = 0.3;
  const MemoryEstimate awake = Mem(j);
  const double engine = share_of_gpu(0.3);
  EXPECT_NEAR(static_cast<double>(awake.per_gpu_bytes - plain.per_gpu_bytes), engine, 4);
  EXPECT_NEAR(static_cast<double>(awake.breakdown.generation), engine, 2);
  EXPECT_EQ(awake.peak_phase, plain.peak_phase);
  ASSERT_EQ(awake.phases.size(), plain.phases.size());
  for (size_t i = 0; i < plain.phases.size(); ++i)
    EXPECT_NEAR(static_cast<double>(awake.phases[i].per_gpu_bytes - plain.phases[i].per_gpu_bytes),
                engine, 4)
        << plain.phases[i].name;
  // The share is the setting's, not an estimate: the range does not widen it.
  EXPECT_NEAR(static_cast<double>(awake.low_bytes - plain.low_bytes), engine, 4);
  EXPECT_NEAR(static_cast<double>(awake.bound_bytes - plain.bound_bytes), engine, 4);

  j.generation_memory = 0.6;
  j.generation_sleeps = true;
  const MemoryEstimate asleep = Mem(j);
  for (const MemoryPhase& p : plain.phases)
    EXPECT_EQ(Phase(asleep, p.name), p.allocated_bytes) << p.name;  // the update's, unchanged
  // ... and DeepSpeed's reduce bucket, reduce_bucket_size 5e8 elements in 16 bits (its default).
  const double params = static_cast<double>(Llama2_7b().Counts().total);
  const double resident = (2 + 12) * params / 8 + 5e8 * 2;
  EXPECT_NEAR(static_cast<double>(Phase(asleep, "generation")) - share_of_gpu(0.6), resident,
              0.02 * resident);
  EXPECT_EQ(asleep.peak_phase, "generation");  // 48 GiB beside the states: more than the update
  EXPECT_EQ(asleep.breakdown.activations, 0);
  EXPECT_NEAR(static_cast<double>(asleep.breakdown.generation), share_of_gpu(0.6), 2);
  EXPECT_GT(asleep.low_bytes, static_cast<int64_t>(share_of_gpu(0.6)));

  // A sleeping engine never lowers the estimate or its range, whichever phase is the peak, and the
  // peak is the largest phase as the device holds it (fragmentation included).
  for (int64_t seq : {512, 2048, 4096, 8192, 16384}) {
    for (Checkpointing ac : {Checkpointing::kNone, Checkpointing::kFull}) {
      TrainingJob update = Full(Framework::kDeepspeed, Sharding::kZero3, 8);
      update.objective = Objective::kGrpo;
      update.seq_len = seq;
      update.activation_checkpointing = ac;
      TrainingJob sleeping = update;
      sleeping.generation_memory = 0.5;
      sleeping.generation_sleeps = true;
      const MemoryEstimate without = Mem(update), with = Mem(sleeping);
      EXPECT_GE(with.per_gpu_bytes, without.per_gpu_bytes) << seq;
      EXPECT_GE(with.bound_bytes, without.bound_bytes - 2) << seq;  // rounding
      for (const MemoryPhase& p : with.phases)
        EXPECT_LE(p.per_gpu_bytes, with.per_gpu_bytes) << seq << " " << p.name;
    }
  }
}

// TRL's and ms-swift's GRPO/RLOO ask the model for the completion's logits only (logits_to_keep)
// and take selective_log_softmax row by row (trl/trainer/utils.py): each row's log_softmax output
// is saved (fp32 under autocast, else 16-bit) and backward accumulates the 16-bit logits gradient,
// 2 + 4 or 2 + 2 bytes per completion token and vocabulary entry, plus one row's fp32 transients
// (8 bytes per entry of one sequence); the prompt's length does not enter. The supervised twin's
// transformers loss holds 12 bytes per entry of the whole sequence.
TEST(ObjectiveTest, OnlineTrainersTakeTheCompletionsLogitsOnly) {
  const double vocab = static_cast<double>(Llama2_7b().vocab_size);
  const auto logits = [](int64_t seq, int64_t completion) {
    TrainingJob j = Full(Framework::kDeepspeed, Sharding::kZero3, 8);  // micro-batch 2
    j.activation_checkpointing = Checkpointing::kNone;
    j.objective = Objective::kGrpo;
    j.seq_len = seq;
    j.completion_len = completion;
    return static_cast<double>(Mem(j).breakdown.logits);
  };
  const double c = 1024, b = 2;
  const double per_entry = (logits(2048, 1024) - c * vocab * 8) / (c * b * vocab);
  EXPECT_TRUE(std::abs(per_entry - 4) < 1e-6 || std::abs(per_entry - 6) < 1e-6) << per_entry;
  EXPECT_NEAR(logits(4096, 1024), logits(2048, 1024), 2);  // the prompt's length does not enter
  EXPECT_NEAR(logits(2048, 512) - 512 * vocab * 8, (logits(2048, 1024) - c * vocab * 8) / 2, 2);
  // Unknown completion (0): the whole sequence, as the supervised twin.
  TrainingJob sft = Full(Framework::kDeepspeed, Sharding::kZero3, 8);
  sft.activation_checkpointing = Checkpointing::kNone;
  EXPECT_NEAR(logits(2048, 0), static_cast<double>(Mem(sft).breakdown.logits), 2);
  EXPECT_NEAR(logits(2048, 0), 2048 * b * vocab * 12, 2);
}

// Generating with the trainer's own model (TRL GRPO without vLLM: unwrapped_model.generate over
// per_device_train_batch_size x steps_per_generation sequences per GPU): under ZeRO-3 the whole
// model gathered in 16 bits (deepspeed.zero.GatheredParameters(model.parameters()), TRL's
// ds3_gather_for_generation, true by default), and the KV cache of every sequence at its full
// length: 2 (K, V) x 32 layers x 32 heads x 128 x 2 bytes = 0.5 MiB per token for Llama-2-7B.
// Syncing a gathered model into a sleeping vLLM wakes its weights only (at most the 16-bit model).
TEST(ObjectiveTest, GenerationGathersTheModelAndHoldsItsCache) {
  const double params = static_cast<double>(Llama2_7b().Counts().total);
  const auto phase = [](int64_t batch, bool gathers, std::string_view name) {
    TrainingJob j = Full(Framework::kDeepspeed, Sharding::kZero3, 8);  // seq 2048
    j.objective = Objective::kGrpo;
    j.generation_batch = batch;
    j.generation_gathers = gathers;
    return static_cast<double>(Phase(Mem(j), name));
  };
  EXPECT_NEAR(phase(8, true, "generation") - phase(8, false, "generation"), 2 * params, 1);
  EXPECT_NEAR(phase(8, false, "generation") - phase(4, false, "generation"), 4 * 2048 * 524288.0,
              1);
  // Layers attending through a window cache at most the window: all 32 at 1024 of 2048 tokens,
  // half the cache.
  ModelArch windowed = Llama2_7b();
  windowed.sliding_window = 1024;
  windowed.sliding_window_layers = windowed.num_layers;
  const auto windowed_phase = [&](int64_t batch) {
    TrainingJob j = Full(Framework::kDeepspeed, Sharding::kZero3, 8);
    j.objective = Objective::kGrpo;
    j.generation_batch = batch;
    auto e = EstimateMemory(windowed, j, Gpu80());
    EXPECT_TRUE(e.ok());
    return e.ok() ? static_cast<double>(Phase(*e, "generation")) : 0.0;
  };
  EXPECT_NEAR(windowed_phase(8) - windowed_phase(4), 4 * 2048 * 524288.0 / 2, 1);
  TrainingJob zero2 = Full(Framework::kDeepspeed, Sharding::kZero2, 8);
  zero2.objective = Objective::kGrpo;
  zero2.generation_batch = 8;
  zero2.generation_gathers = true;  // nothing to gather: the weights are whole
  TrainingJob zero2_none = zero2;
  zero2_none.generation_gathers = false;
  EXPECT_EQ(Phase(Mem(zero2), "generation"), Phase(Mem(zero2_none), "generation"));

  TrainingJob synced = Full(Framework::kDeepspeed, Sharding::kZero3, 8);
  synced.objective = Objective::kGrpo;
  synced.generation_memory = 0.6;
  synced.generation_sleeps = true;
  TrainingJob one_at_a_time = synced;
  synced.generation_gathers = true;
  const MemoryEstimate gathered = Mem(synced);
  // The generation phase (the whole share) is unchanged; the sync holds the gathered model and
  // the engine's 16-bit weights beside the same resident states.
  EXPECT_EQ(Phase(gathered, "generation"), Phase(Mem(one_at_a_time), "generation"));
  const double share = 0.6 * static_cast<double>(Gpu80().memory_bytes);
  EXPECT_NEAR(Phase(gathered, "weight-sync") - (Phase(gathered, "generation") - share),
              2 * params + 2 * params, 2);
}

// An online job's value model (TrainingJob::critic: verl's critic for PPO with GAE, by default the
// actor's model): a second copy of the policy's weights and optimizer states as this GPU holds
// them, resident while the policy trains; nothing for a supervised job.
TEST(ObjectiveTest, ACriticHoldsASecondCopyOfThePolicysStates) {
  TrainingJob ppo = Full(Framework::kFsdp, Sharding::kFsdpFull, 8);
  ppo.objective = Objective::kPpo;
  const MemoryEstimate alone = Mem(ppo);
  ppo.critic = true;
  const MemoryEstimate with = Mem(ppo);
  EXPECT_GT(with.breakdown.critic, 0);
  EXPECT_EQ(with.breakdown.critic, alone.breakdown.weights + alone.breakdown.optimizer);
  for (const MemoryPhase& p : alone.phases)
    EXPECT_EQ(Phase(with, p.name) - p.allocated_bytes, with.breakdown.critic) << p.name;
  TrainingJob sft = Full(Framework::kFsdp, Sharding::kFsdpFull, 8);
  sft.critic = true;  // only online objectives train a value model
  EXPECT_EQ(Mem(sft).breakdown.critic, 0);
}

// An online objective's KL reference (TrainingJob::kl_reference) is held as dpo's: under ZeRO-3
// the policy's weights sharded again (TRL prepare_deepspeed), none for PEFT.
TEST(ObjectiveTest, AnOnlineKlReferenceIsHeldAsDposIs) {
  TrainingJob grpo = Full(Framework::kDeepspeed, Sharding::kZero3, 8);
  grpo.objective = Objective::kGrpo;
  grpo.kl_reference = true;
  const MemoryEstimate with = Mem(grpo);
  EXPECT_GT(with.breakdown.reference, 0);
  EXPECT_EQ(with.breakdown.reference, with.breakdown.weights);
  grpo.kl_reference = false;
  EXPECT_EQ(Mem(grpo).breakdown.reference, 0);
  TrainingJob dpo = Full(Framework::kDeepspeed, Sharding::kZero3, 8);
  dpo.objective = Objective::kDpo;
  EXPECT_EQ(Mem(dpo).breakdown.reference, with.breakdown.reference);
  grpo.kl_reference = true;
  grpo.method = Method::kLora;
  grpo.lora_r = 16;
  EXPECT_EQ(Mem(grpo).breakdown.reference, 0);
}

}  // namespace
}  // namespace fmte
