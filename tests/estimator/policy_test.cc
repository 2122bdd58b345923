// Decide on real catalogs (etc/models, etc/gpus.csv). Reference points are first-principles bounds
// that hold for any sane memory model, so these tests check the policy, not the memory model:
//  - Llama-3.1-8B LoRA, micro-batch 1, seq 2048, activation checkpointing, on an 80 GB A100: the
//    frozen bf16 base is 8.03e9 x 2 B = 16 GB (docs/formulas.md §2), far below 72 GB usable ->
//    accept.
//  - Llama-3.1-70B full fine-tuning with AdamW under amp-bf16 keeps 16 B per parameter of model
//    state (4 fp32 weights + 4 grads + 8 Adam moments, docs/formulas.md §2): 70.6e9 x 16 B =
//    1.13 TB per GPU without sharding, 282 GB with full sharding over 4 GPUs -> too big on
//    4 x 80 GB, and with full sharding over 32 GPUs (35 GB of state) it can fit -> a GPU raise
//    exists within 64 GPUs.
// Every alternative a rejection offers is re-checked here with the estimator itself.
#include "fmte/policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "fmte/record.h"
#include "fmte/script_files.h"
#include "shipped_estimator.h"

namespace fmte {
namespace {

Config Conf(const std::string& text) {
  auto c = ParseConfig(text);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : Config{};
}

JobRequest Request(const std::string& script, const std::string& tres_per_node, int64_t nodes = 0,
                   int64_t time_limit_min = 0, const std::string& partition = "gpu") {
  SlurmFacts f;
  f.partition = partition;
  f.tres_per_node = tres_per_node;
  f.min_nodes = nodes;
  f.time_limit_min = time_limit_min;
  return ParseJobRequest(script, {}, f);
}

// `job` estimated again on `gpu` with the shipped estimator: the tests check the policy's figures
// and verdicts against it.
Result<JobEstimate> Reestimate(const TrainingJob& job, const std::string& gpu) {
  auto arch = ShippedEstimator().catalogs().models.Find(job.model);
  if (!arch.ok()) return arch.status();
  auto spec = ShippedEstimator().catalogs().gpus.Find(gpu);
  if (!spec.ok()) return spec.status();
  return ShippedEstimator().Estimate(**arch, job, **spec);
}

// The number the decision's message names after `after` for the job's `field`: in (0, below), and
// the largest that fits by the estimator itself (it fits; one more does not).
void ExpectLargestThatFits(const Decision& d, std::string_view after, int64_t TrainingJob::*field,
                           int64_t below) {
  const size_t at = d.user_message.find(after);
  ASSERT_NE(at, std::string::npos) << d.user_message;
  const int64_t largest = std::stoll(d.user_message.substr(at + after.size()));
  ASSERT_GT(largest, 0);
  ASSERT_LT(largest, below);
  TrainingJob job = d.job;
  job.*field = largest;
  auto fits = Reestimate(job, d.gpu);
  ASSERT_TRUE(fits.ok()) << fits.status().message();
  EXPECT_LE(fits->memory.per_gpu_bytes, d.usable_bytes);
  job.*field = largest + 1;
  auto over = Reestimate(job, d.gpu);
  ASSERT_TRUE(over.ok()) << over.status().message();
  EXPECT_GT(over->memory.per_gpu_bytes, d.usable_bytes);
}

const char kLora8b[] =
    "#FMTE model=meta-llama/Llama-3.1-8B method=lora micro-batch=1 seq-len=2048 "
    "activation-checkpointing=full\n";
const char kFull70bDdp[] =
    "#FMTE model=meta-llama/Llama-3.1-70B method=full micro-batch=1 seq-len=2048 "
    "precision=amp-bf16 sharding=ddp\n";
const char kFull70bFsdp[] =
    "#FMTE model=meta-llama/Llama-3.1-70B method=full micro-batch=1 seq-len=2048 "
    "precision=amp-bf16 "
    "sharding=fsdp-full activation-checkpointing=full\n";
const char kBaseConf[] = "PartitionName=gpu Default=YES Gpu=A100-SXM4-80GB MaxTime=2-00:00:00\n";

TEST(PolicyTest, FitsIsAccepted) {
  const Decision d =
      Decide(Request(kLora8b, "gres:gpu:a100:1"), Conf(kBaseConf), ShippedEstimator());
  EXPECT_TRUE(d.touched);
  EXPECT_EQ(d.kind, DecisionKind::kAccept) << d.user_message;
  ASSERT_TRUE(d.estimated) << d.user_message;
  EXPECT_EQ(d.gpu, "A100-SXM4-80GB");
  EXPECT_GT(d.estimate.memory.per_gpu_bytes,
            int64_t{16} * 1000 * 1000 * 1000);  // at least the bf16 base
  EXPECT_LE(d.estimate.memory.per_gpu_bytes, d.usable_bytes);
  EXPECT_EQ(d.usable_bytes, static_cast<int64_t>(static_cast<double>(d.capacity_bytes) * 0.90));
  EXPECT_TRUE(d.user_message.starts_with("fmte: ")) << d.user_message;
}

TEST(PolicyTest, TheMicroBatchOfferedIsTheLargestThatFits) {
  // Full fine-tuning of Llama-3.1-8B with ZeRO-3 on 8 A100 at micro-batch 16 x 2048 tokens does
  // not fit; the micro-batch offered is the largest divisor of 16 that does (the sequences per
  // step kept: accumulation raised by the same factor), and twice it does not.
  const std::string script =
      "#FMTE model=meta-llama/Llama-3.1-8B method=full micro-batch=16 seq-len=2048 "
      "grad-accum=1 precision=mixed-bf16 sharding=zero3 framework=deepspeed\n";
  const Decision d =
      Decide(Request(script, "gres:gpu:a100:8"), Conf(kBaseConf), ShippedEstimator());
  ASSERT_NE(d.kind, DecisionKind::kAccept) << d.user_message;
  const Alternative* mb = nullptr;
  for (const Alternative& a : d.alternatives)
    if (a.change.starts_with("--fmte-micro-batch=")) mb = &a;
  ASSERT_NE(mb, nullptr) << d.user_message;
  ASSERT_TRUE(mb->fits) << d.user_message;
  EXPECT_GT(mb->job.micro_batch, 1) << mb->change;
  EXPECT_EQ(mb->job.micro_batch * mb->job.grad_accum, 16);
  TrainingJob twice = mb->job;
  twice.micro_batch *= 2;
  twice.grad_accum /= 2;
  auto e = Reestimate(twice, mb->gpu);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_GT(e->memory.per_gpu_bytes, mb->usable_bytes);
}

TEST(PolicyTest, UnshardedAccumulationUnderFsdpIsNeverGroundsForRejection) {
  // The HF Trainer under FSDP with accumulation 4: Llama-3.1-70B's unsharded bf16 gradients
  // (141 GB) do not fit an A100 however many there are, as the trainer versions that accumulate
  // under no_sync run it. Versions that do not (transformers 4.46, FSDP2 before accelerate 1.11,
  // sync_each_batch honoured) fit on 32 GPUs, and the job does not say which it runs: accepted
  // with a notice, offering sync_each_batch.
  SlurmFacts f;
  f.partition = "gpu";
  f.tres_per_node = "gres:gpu:a100:8";
  f.min_nodes = 4;
  const JobRequest r = ParseJobRequest(
      "#FMTE model=meta-llama/Llama-3.1-70B method=full micro-batch=1 seq-len=2048 grad-accum=4 "
      "precision=amp-bf16 sharding=fsdp-full activation-checkpointing=full framework=hf\n",
      {}, f);
  const Decision d = Decide(r, Conf(kBaseConf), ShippedEstimator());
  EXPECT_EQ(d.kind, DecisionKind::kAccept) << d.user_message;
  EXPECT_GT(d.estimate.memory.per_gpu_bytes, d.usable_bytes);
  bool offered = false;
  for (const Alternative& a : d.alternatives)
    offered = offered || (a.job.sync_each_batch && a.fits);
  EXPECT_TRUE(offered) << d.user_message;
  // Told that every micro-batch is reduced, fmte checks it as such.
  const JobRequest synced = ParseJobRequest(
      "#FMTE model=meta-llama/Llama-3.1-70B method=full micro-batch=1 seq-len=2048 grad-accum=4 "
      "precision=amp-bf16 sharding=fsdp-full activation-checkpointing=full framework=hf "
      "sync-each-batch=true\n",
      {}, f);
  const Decision ds = Decide(synced, Conf(kBaseConf), ShippedEstimator());
  EXPECT_LE(ds.estimate.memory.per_gpu_bytes, ds.usable_bytes) << ds.user_message;
}

// A TRL GRPO job of Qwen2.5-7B under ZeRO-3 on 8 A100-80GB with `batch` completions of 512 + 1024
// tokens per GPU and its vLLM flags, decided with the shipped estimator.
Decision DecideTrlGrpo(int batch, const std::string& vllm) {
  const std::string script =
      "#!/bin/bash\naccelerate launch --num_processes 8 trl/scripts/grpo.py --model_name_or_path "
      "Qwen/Qwen2.5-7B --per_device_train_batch_size " +
      std::to_string(batch) +
      " --max_prompt_length 512 --max_completion_length 1024 --bf16 --gradient_checkpointing "
      "--deepspeed ds_z3.json " +
      vllm + "\n";
  return Decide(Request(script, "gres:gpu:a100:8"), Conf(kBaseConf), ShippedEstimator());
}

// TRL GRPO with vLLM colocated at 0.6 of each GPU (--vllm_gpu_memory_utilization 0.6, awake
// through the update): the engine's share is counted beside the update, and the advice offers its
// sleep mode, which holds the share only while it generates; that alternative re-estimated fits.
TEST(PolicyTest, AColocatedEngineIsCountedAndItsSleepModeOffered) {
  const Decision d =
      DecideTrlGrpo(16, "--use_vllm --vllm_mode colocate --vllm_gpu_memory_utilization 0.6");
  ASSERT_TRUE(d.estimated) << d.user_message;
  EXPECT_NEAR(static_cast<double>(d.estimate.memory.breakdown.generation), 0.6 * 85899345920.0,
              2);  // 0.6 of 80 GiB
  EXPECT_GT(d.estimate.memory.per_gpu_bytes, d.usable_bytes) << d.user_message;
  const Alternative* sleeping = nullptr;
  for (const Alternative& a : d.alternatives)
    if (a.job.generation_sleeps) sleeping = &a;
  ASSERT_NE(sleeping, nullptr) << d.user_message;
  EXPECT_TRUE(sleeping->fits) << d.user_message;
  auto e = Reestimate(sleeping->job, sleeping->gpu);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_LE(e->memory.per_gpu_bytes, sleeping->usable_bytes);
  EXPECT_EQ(e->memory.per_gpu_bytes, sleeping->per_gpu_bytes);
}

// vLLM asleep while the policy trains but holding 0.9 of each GPU while it generates, beside
// ZeRO-3's resident states: it cannot fit (and vLLM would not start: it asks for 0.9 of the GPU
// free). The advice gives the largest share, in steps of 0.05, that fits and still leaves the
// engine more than its 16-bit weights (Qwen2.5-7B: 7.6e9 x 2 bytes).
TEST(PolicyTest, ASmallerEngineShareIsOffered) {
  const Decision d = DecideTrlGrpo(8,
                                   "--use_vllm --vllm_mode colocate --vllm_gpu_memory_utilization "
                                   "0.9 --vllm_enable_sleep_mode");
  EXPECT_EQ(d.kind, DecisionKind::kReject) << d.user_message;
  EXPECT_EQ(d.estimate.memory.peak_phase, "generation");
  const Alternative* smaller = nullptr;
  for (const Alternative& a : d.alternatives)
    if (a.job.generation_memory > 0 && a.job.generation_memory < 0.9) smaller = &a;
  ASSERT_NE(smaller, nullptr) << d.user_message;
  EXPECT_TRUE(smaller->fits);
  auto fits = Reestimate(smaller->job, smaller->gpu);
  ASSERT_TRUE(fits.ok()) << fits.status().message();
  EXPECT_LE(fits->memory.per_gpu_bytes, smaller->usable_bytes);
  EXPECT_GT(smaller->job.generation_memory * 85899345920.0,
            2.0 * static_cast<double>(fits->memory.params.total));
  // 0.05 more does not fit.
  TrainingJob larger = smaller->job;
  larger.generation_memory += 0.05;
  auto over = Reestimate(larger, smaller->gpu);
  ASSERT_TRUE(over.ok());
  EXPECT_GT(over->memory.per_gpu_bytes, smaller->usable_bytes);
}

TEST(PolicyTest, TooBigIsRejectedWithAlternativesThatFit) {
  const Config conf = Conf(kBaseConf);
  const Decision d = Decide(Request(kFull70bDdp, "gres:gpu:a100:4"), conf, ShippedEstimator());
  EXPECT_EQ(d.kind, DecisionKind::kReject) << d.user_message;
  EXPECT_EQ(d.reject_reason, RejectReason::kMemory);
  EXPECT_GT(d.estimate.memory.per_gpu_bytes,
            int64_t{1130} * 1000 * 1000 * 1000);  // >= 16 B x 70.6e9
  EXPECT_TRUE(d.user_message.starts_with("fmte: rejected:")) << d.user_message;
  EXPECT_NE(d.user_message.find("GiB per GPU"), std::string::npos);
  EXPECT_NE(d.user_message.find("usable"), std::string::npos);
  ASSERT_FALSE(d.alternatives.empty());
  int fitting = 0;
  for (const Alternative& a : d.alternatives) {
    SCOPED_TRACE(a.change);
    EXPECT_NE(d.user_message.find(a.change), std::string::npos);  // each is explained
    auto e = Reestimate(a.job, a.gpu);  // the estimator confirms the number and the verdict
    ASSERT_TRUE(e.ok()) << e.status().message();
    EXPECT_EQ(e->memory.per_gpu_bytes, a.per_gpu_bytes);
    EXPECT_EQ(a.fits, e->memory.per_gpu_bytes <= a.usable_bytes);
    fitting += a.fits;
  }
  EXPECT_GE(fitting, 1) << d.user_message;
  // A partition with bigger GPUs is suggested when the config has one.
  const Config two = Conf(std::string(kBaseConf) + "PartitionName=h200 Gpu=H200-SXM-141GB\n");
  const Decision d2 = Decide(Request(kFull70bDdp, "gres:gpu:4"), two, ShippedEstimator());
  bool suggested = false;
  for (const Alternative& a : d2.alternatives) suggested = suggested || a.partition == "h200";
  EXPECT_TRUE(suggested) << d2.user_message;
}

// The same job as TooBigIsRejected..., but its model a checkpoint folder nobody here can read,
// named after Llama-3.1-70B: estimated as that model (the same figure), never rejected, raised or
// given a time limit on a guess; the message says which model was assumed.
TEST(PolicyTest, AModelTakenFromItsFolderNameIsNeverActedOn) {
  const Config conf = Conf(std::string(kBaseConf) + "RaiseGpus=yes\n");
  std::string script = kFull70bDdp;
  script.replace(script.find("meta-llama/Llama-3.1-70B"), 24, "/scratch/u/Llama-3.1-70B_sft-v2");
  const Decision by_id = Decide(Request(kFull70bDdp, "gres:gpu:a100:4"), conf, ShippedEstimator());
  ASSERT_EQ(by_id.kind, DecisionKind::kReject) << by_id.user_message;
  const Decision d = Decide(Request(script, "gres:gpu:a100:4", 0, 600), conf, ShippedEstimator());
  EXPECT_EQ(d.kind, DecisionKind::kAccept) << d.user_message;
  ASSERT_TRUE(d.estimated) << d.user_message;
  EXPECT_EQ(d.named_after, "meta-llama/Llama-3.1-70B");
  EXPECT_EQ(d.estimate.memory.per_gpu_bytes, by_id.estimate.memory.per_gpu_bytes);
  EXPECT_EQ(d.new_gpus, 0);
  EXPECT_EQ(d.new_time_limit_min, 0);
  EXPECT_NE(d.user_message.find("copy of meta-llama/Llama-3.1-70B"), std::string::npos)
      << d.user_message;
  EXPECT_NE(d.user_message.find("accepted unchecked"), std::string::npos) << d.user_message;
  // A name after no catalog model stays unknown.
  script.replace(script.find("/scratch/u/Llama-3.1-70B_sft-v2"), 31, "/scratch/u/my-model");
  const Decision unknown = Decide(Request(script, "gres:gpu:a100:4"), conf, ShippedEstimator());
  EXPECT_FALSE(unknown.estimated);
  EXPECT_TRUE(unknown.named_after.empty());
}

TEST(PolicyTest, RejectsOnlyWhenEvenTheLowEndDoesNotFit) {
  // The policy rejects on memory.low_bytes, the prediction times the lowest measured / predicted of
  // published runs (tests/data/memory-measured, memory_measured_eval), never on the prediction
  // alone. Full fine-tuning of Llama-3.1-8B (8.03e9 parameters, the model card) without
  // checkpointing on one GPU: >= 8 bytes per parameter of bf16 weights, gradients and AdamW states
  // (64 GB) plus activations at 4096 tokens. On an 80 GB A100 it is predicted not to fit but
  // its low end does: accepted with the numbers and what would fit. On a 24 GB A10 even the low
  // end cannot fit: rejected, saying so.
  const std::string script =
      "#FMTE model=meta-llama/Llama-3.1-8B method=full precision=pure-bf16 seq-len=4096 "
      "micro-batch=1\n";
  const Decision d =
      Decide(Request(script, "gres:gpu:a100:1"), Conf(kBaseConf), ShippedEstimator());
  ASSERT_TRUE(d.estimated) << d.user_message;
  const MemoryEstimate& m = d.estimate.memory;
  EXPECT_GT(m.per_gpu_bytes, d.usable_bytes) << d.user_message;
  EXPECT_LE(m.low_bytes, d.usable_bytes) << d.user_message;
  EXPECT_LT(m.low_bytes, m.allocated_peak_bytes);
  EXPECT_GT(m.bound_bytes, m.per_gpu_bytes);
  EXPECT_EQ(d.kind, DecisionKind::kAccept) << d.user_message;
  EXPECT_NE(d.user_message.find("may run out of GPU memory"), std::string::npos) << d.user_message;
  EXPECT_NE(d.user_message.find("would fit as predicted: "), std::string::npos) << d.user_message;

  const Decision small =
      Decide(Request(script, "gres:gpu:1"), Conf("PartitionName=gpu Default=YES Gpu=A10\n"),
             ShippedEstimator());
  ASSERT_TRUE(small.estimated) << small.user_message;
  EXPECT_GT(small.estimate.memory.low_bytes, small.usable_bytes);
  EXPECT_EQ(small.kind, DecisionKind::kReject) << small.user_message;
  EXPECT_NE(small.user_message.find("even the low end of the prediction"), std::string::npos)
      << small.user_message;
}

TEST(PolicyTest, ShardedJobGetsMoreGpusWhenAllowed) {
  const JobRequest r = Request(kFull70bFsdp, "gres:gpu:a100:4", 1);
  const Decision no = Decide(r, Conf(kBaseConf), ShippedEstimator());
  EXPECT_EQ(no.kind, DecisionKind::kReject) << no.user_message;

  const Decision d = Decide(r, Conf(std::string(kBaseConf) + "RaiseGpus=yes MaxGpusPerJob=64\n"),
                            ShippedEstimator());
  ASSERT_EQ(d.kind, DecisionKind::kRewrite) << d.user_message;
  EXPECT_GT(d.new_gpus, 4);
  EXPECT_LE(d.new_gpus, 64);
  EXPECT_EQ(d.new_gpus % 8, 0);  // beyond one node: whole 8-GPU nodes
  EXPECT_EQ(d.gpu_field, GpuTresField::kPerNode);
  EXPECT_EQ(d.new_gpu_tres, "gres:gpu:a100:8");
  EXPECT_EQ(d.new_min_nodes, d.new_gpus / 8);
  EXPECT_EQ(d.job.gpus, d.new_gpus);
  EXPECT_LE(d.estimate.memory.per_gpu_bytes, d.usable_bytes);
  // The smallest count: one step fewer does not fit.
  TrainingJob smaller = d.job;
  smaller.gpus = d.new_gpus - 8;
  smaller.gpus_per_node = 8;
  if (smaller.gpus > 8) {
    auto e = Reestimate(smaller, "A100-SXM4-80GB");
    ASSERT_TRUE(e.ok()) << e.status().message();
    EXPECT_GT(e->memory.per_gpu_bytes, d.usable_bytes);
  }
  // tres_per_job requests are rewritten in place.
  SlurmFacts f;
  f.partition = "gpu";
  f.tres_per_job = "gres:gpu:4";
  const Decision j = Decide(ParseJobRequest(kFull70bFsdp, {}, f),
                            Conf(std::string(kBaseConf) + "RaiseGpus=yes\n"), ShippedEstimator());
  ASSERT_EQ(j.kind, DecisionKind::kRewrite) << j.user_message;
  EXPECT_EQ(j.gpu_field, GpuTresField::kPerJob);
  EXPECT_EQ(j.new_gpu_tres, "gres:gpu:" + std::to_string(j.new_gpus));
}

TEST(PolicyTest, ModesAndNonLlmJobs) {
  const JobRequest big = Request(kFull70bDdp, "gres:gpu:a100:4");
  const Decision advise =
      Decide(big, Conf(std::string(kBaseConf) + "Mode=advise\n"), ShippedEstimator());
  EXPECT_EQ(advise.kind, DecisionKind::kAccept);
  EXPECT_EQ(advise.reject_reason, RejectReason::kNone);  // advice only: nothing is rejected
  EXPECT_TRUE(advise.advise_only);
  EXPECT_TRUE(advise.touched);
  EXPECT_EQ(advise.new_gpus, 0);
  EXPECT_NE(advise.user_message.find("advice only"), std::string::npos) << advise.user_message;
  EXPECT_NE(advise.user_message.find("GiB per GPU"), std::string::npos);

  const Decision off = Decide(big, Conf("PartitionName=gpu Mode=off\n"), ShippedEstimator());
  EXPECT_FALSE(off.touched);
  EXPECT_EQ(off.kind, DecisionKind::kAccept);
  EXPECT_TRUE(off.user_message.empty());

  const Decision plain = Decide(Request("#!/bin/bash\nsrun hostname\n", "gres:gpu:1"),
                                Conf(kBaseConf), ShippedEstimator());
  EXPECT_FALSE(plain.touched);
  EXPECT_EQ(plain.kind, DecisionKind::kAccept);
}

TEST(PolicyTest, ErrorsFollowOnError) {
  const JobRequest unknown = Request("#FMTE model=nobody/NoSuchModel-7B\n", "gres:gpu:a100:1");
  const Decision open = Decide(unknown, Conf(kBaseConf), ShippedEstimator());
  EXPECT_EQ(open.kind, DecisionKind::kAccept);
  EXPECT_EQ(open.reject_reason, RejectReason::kNone);
  EXPECT_TRUE(open.error);
  EXPECT_NE(open.user_message.find("NoSuchModel"), std::string::npos) << open.user_message;
  const Decision closed =
      Decide(unknown, Conf(std::string(kBaseConf) + "OnError=reject\n"), ShippedEstimator());
  EXPECT_EQ(closed.kind, DecisionKind::kReject);
  EXPECT_EQ(closed.reject_reason, RejectReason::kError);
  // No GPU type anywhere: untyped gres, no Gpu= for the partition.
  const Decision nogpu =
      Decide(Request(kLora8b, "gres:gpu:1", 0, 0, "other"), Conf(""), ShippedEstimator());
  EXPECT_TRUE(nogpu.error);
  EXPECT_NE(nogpu.user_message.find("GPU model is unknown"), std::string::npos)
      << nogpu.user_message;
  // No fmte.conf at all: gres types named after GPUs work.
  const Decision noconf = Decide(Request(kLora8b, "gres:gpu:h100:1"), Conf(""), ShippedEstimator());
  EXPECT_FALSE(noconf.error) << noconf.user_message;
  EXPECT_EQ(noconf.gpu.rfind("H100", 0), 0u) << noconf.gpu;
  // An impossible layout is an error naming it.
  const Decision layout = Decide(Request(std::string(kLora8b) + "#FMTE tp=3\n", "gres:gpu:a100:4"),
                                 Conf(kBaseConf), ShippedEstimator());
  EXPECT_TRUE(layout.error);
}

// A setting in a file fmte does not open (a DeepSpeed config whose name does not say its ZeRO
// stage) is read as favourably as it can be: a job is rejected only when even ZeRO-3 with the
// optimizer and parameters offloaded cannot hold it, and a job accepted that way says what was not
// read. An #FMTE line that gives the setting makes it known again.
TEST(PolicyTest, UnreadSettingsAreReadFavourably) {
  const std::string launch8b =
      "deepspeed --num_gpus 8 train.py --deepspeed ds.json --model_name_or_path "
      "meta-llama/Llama-3.1-8B --per_device_train_batch_size 2 --model_max_length 2048 --bf16 "
      "--gradient_checkpointing\n";
  struct Case {
    const char* name;
    std::string script;
    const char* tres;
    DecisionKind kind;
    RejectReason reason;
    const char* says;
  };
  const Case cases[] = {
      // As read (no sharding) 8B full fine-tuning needs ~150 GiB per GPU; ZeRO-3 fits easily.
      {"unread, fits favourably", launch8b, "gres:gpu:a100:8", DecisionKind::kAccept,
       RejectReason::kNone, "--deepspeed ds.json was not read"},
      {"given by #FMTE", "#FMTE sharding=none\n" + launch8b, "gres:gpu:a100:8",
       DecisionKind::kReject, RejectReason::kMemory, "rejected: "},
      // accelerate's config file may shard (FSDP/ZeRO) and checkpoint: 8B full at 4096 tokens x 2
      // needs ~215 GiB as read, ~25 GiB with FSDP, offload and checkpointing.
      {"accelerate config file, fits favourably",
       "accelerate launch --config_file cfg/cluster.yaml --num_processes 8 sft.py "
       "--model_name_or_path meta-llama/Llama-3.1-8B --per_device_train_batch_size 2 "
       "--max_seq_length 4096 --bf16\n",
       "gres:gpu:a100:8", DecisionKind::kAccept, RejectReason::kNone,
       "activation-checkpointing=full"},
      // The stage in the file's name is read from the name: zero3 known, checked as given.
      {"accelerate zero3 by name",
       "accelerate launch --config_file cfg/zero3.yaml --num_processes 8 sft.py "
       "--model_name_or_path meta-llama/Llama-3.1-8B --per_device_train_batch_size 1 "
       "--max_seq_length 2048 --bf16 --gradient_checkpointing\n",
       "gres:gpu:a100:8", DecisionKind::kAccept, RejectReason::kNone, "fits: predicted"},
      // The config file comes from a variable the script does not set: which one is unknown,
      // read favourably (70B full fine-tuning on 8 x 80 GB runs with ZeRO-3 and offload).
      {"deepspeed config from an unknown variable",
       "torchrun --nproc_per_node 8 train.py --model_name_or_path meta-llama/Llama-3.1-70B "
       "--deepspeed $DS --per_device_train_batch_size 1 --bf16 --gradient_checkpointing\n",
       "gres:gpu:a100:8", DecisionKind::kAccept, RejectReason::kNone,
       "--deepspeed (unknown value) was not read"},
      {"accelerate config from an unknown variable",
       "accelerate launch --config_file $CFG train.py --model_name_or_path "
       "meta-llama/Llama-3.1-70B --per_device_train_batch_size 1 --bf16\n",
       "gres:gpu:a100:8", DecisionKind::kAccept, RejectReason::kNone,
       "--config_file (unknown value) was not read"},
      // 8 x 131072 tokens without checkpointing: activations no sharding can hold.
      {"unread, too big anyway",
       "deepspeed --num_gpus 2 train.py --deepspeed ds.json --model_name_or_path "
       "meta-llama/Llama-3.1-8B --per_device_train_batch_size 8 --model_max_length 131072 "
       "--bf16\n",
       "gres:gpu:a100:2", DecisionKind::kReject, RejectReason::kMemory,
       "even under the most favourable reading"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const JobRequest r = Request(c.script, c.tres);
    const Decision d = Decide(r, Conf(kBaseConf), ShippedEstimator());
    EXPECT_EQ(d.kind, c.kind) << d.user_message;
    EXPECT_EQ(d.reject_reason, c.reason);
    EXPECT_NE(d.user_message.find(c.says), std::string::npos) << d.user_message;
  }
  // What the request keeps: the unread setting and its line, unless a higher source gave it.
  const JobRequest unread = Request(launch8b, "gres:gpu:a100:8");
  ASSERT_EQ(unread.unread.size(), 1u);
  EXPECT_EQ(unread.unread[0].key, "sharding");
  EXPECT_EQ(unread.unread[0].origin, "line 1: --deepspeed ds.json");
  EXPECT_TRUE(Request("#FMTE sharding=zero2\n" + launch8b, "gres:gpu:a100:8").unread.empty());
  // accelerate's config file leaves sharding and checkpointing unread, unless the line sets one.
  const std::string accelerate =
      "accelerate launch --config_file cfg/cluster.yaml sft.py --model_name_or_path "
      "meta-llama/Llama-3.1-8B";
  EXPECT_EQ(Request(accelerate + "\n", "gres:gpu:a100:8").unread.size(), 2u);
  const JobRequest checkpointed =
      Request(accelerate + " --gradient_checkpointing\n", "gres:gpu:a100:8");
  ASSERT_EQ(checkpointed.unread.size(), 1u);
  EXPECT_EQ(checkpointed.unread[0].key, "sharding");
  // A file name that says the stage is read from the name: nothing unread.
  const std::string named =
      "deepspeed --num_gpus 8 train.py --deepspeed ds_zero3.json "
      "--model_name_or_path meta-llama/Llama-3.1-8B\n";
  EXPECT_TRUE(Request(named, "gres:gpu:a100:8").unread.empty());
}

TEST(PolicyTest, TimeLimitFromTheTimeEstimate) {
  const std::string script = std::string(kLora8b) + "#FMTE steps=1000 grad-accum=4\n";
  const Decision d = Decide(Request(script, "gres:gpu:a100:1"),
                            Conf(kBaseConf + std::string("MinTime=1\n")), ShippedEstimator());
  if (!d.estimate.has_time) GTEST_SKIP() << "no time model loaded: the policy sets no limit";
  ASSERT_EQ(d.kind, DecisionKind::kRewrite) << d.user_message;
  const double want_s = std::max(d.estimate.wall_time_bound_s, d.estimate.wall_time_s * 1.5);
  EXPECT_EQ(d.new_time_limit_min, static_cast<int64_t>(std::ceil(want_s / 60.0)));
  EXPECT_NE(d.user_message.find("no time limit given"), std::string::npos) << d.user_message;
  // Capped by the partition's MaxTime.
  const Decision capped =
      Decide(Request(script, "gres:gpu:a100:1"),
             Conf("PartitionName=gpu Gpu=A100 MaxTime=1 MinTime=1\n"), ShippedEstimator());
  EXPECT_EQ(capped.new_time_limit_min, 1);
  // A user limit shorter than the prediction: warn (accept) or reject.
  const int64_t too_short = 1;
  if (d.estimate.wall_time_s > 60) {
    const Decision warn = Decide(Request(script, "gres:gpu:a100:1", 0, too_short), Conf(kBaseConf),
                                 ShippedEstimator());
    EXPECT_EQ(warn.kind, DecisionKind::kAccept);
    EXPECT_NE(warn.user_message.find("shorter than the predicted"), std::string::npos);
    const Decision rej =
        Decide(Request(script, "gres:gpu:a100:1", 0, too_short),
               Conf(std::string(kBaseConf) + "ShortLimit=reject\n"), ShippedEstimator());
    EXPECT_EQ(rej.kind, DecisionKind::kReject);
    EXPECT_EQ(rej.reject_reason, RejectReason::kTimeLimit);
  }
}

// OperatorSet= (docs/operators.md): the partition's operator regressors compose a step time for
// the job; a longer one lengthens the time bound by the difference over the job's steps at the
// bound's own factor, a shorter one changes nothing. Expected values from the composition itself
// (EstimateStepTimeFromOperators on the shipped Perlmutter set) and the estimate without the set.
TEST(PolicyTest, OperatorSetOnlyLengthensTheTimeLimit) {
  const std::string script = std::string(kLora8b) + "#FMTE steps=1000 grad-accum=4\n";
  const JobRequest r = Request(script, "gres:gpu:a100:1");
  const std::string part = "PartitionName=gpu Default=YES Gpu=A100-SXM4-80GB MaxTime=2-00:00:00";
  const Config plain = Conf(part + "\nMinTime=1\n");
  const Config with = Conf(part + " OperatorSet=perlmutter\nMinTime=1\n");
  auto catalogs = LoadCatalogs(std::string(FMTE_SOURCE_DIR) + "/etc");
  ASSERT_TRUE(catalogs.ok()) << catalogs.status().ToString();
  std::string problems;
  LoadOperatorSets(with, &catalogs.value(), &problems);
  EXPECT_EQ(problems, "");
  ASSERT_EQ(catalogs->operator_sets.count("perlmutter"), 1u);
  const Estimator estimator(std::move(catalogs).value());
  const Decision a = Decide(r, plain, estimator), b = Decide(r, with, estimator);
  if (!a.estimate.has_time) GTEST_SKIP() << "no time model loaded: the policy sets no limit";
  ASSERT_EQ(a.kind, DecisionKind::kRewrite) << a.user_message;
  ASSERT_EQ(b.kind, DecisionKind::kRewrite) << b.user_message;
  auto model = estimator.catalogs().models.Find("meta-llama/Llama-3.1-8B");
  ASSERT_TRUE(model.ok());
  auto op = EstimateStepTimeFromOperators(**model, b.job,
                                          estimator.catalogs().operator_sets.at("perlmutter"));
  ASSERT_TRUE(op.ok()) << op.status().ToString();
  const WallTimeEstimate& w = a.estimate.time;
  const double extra_s =
      std::max(0.0, (op->batch_us * 1e-6 - w.step.step_time_s) * static_cast<double>(w.steps));
  const double want_s = std::max(a.estimate.wall_time_bound_s + extra_s * w.upper_factor,
                                 a.estimate.wall_time_s * 1.5);
  EXPECT_EQ(b.new_time_limit_min, static_cast<int64_t>(std::ceil(want_s / 60.0)));
  EXPECT_GE(b.new_time_limit_min, a.new_time_limit_min);
  EXPECT_NE(b.user_message.find("perlmutter's operator regressors"), std::string::npos)
      << b.user_message;

  // A set that cannot be read is named once, and its partition decides without it.
  const Config missing = Conf(part + " OperatorSet=NoSuchCluster\nMinTime=1\n");
  auto more = LoadCatalogs(std::string(FMTE_SOURCE_DIR) + "/etc");
  ASSERT_TRUE(more.ok());
  std::string missing_problems;
  LoadOperatorSets(missing, &more.value(), &missing_problems);
  EXPECT_NE(missing_problems.find("OperatorSet=NoSuchCluster not used"), std::string::npos)
      << missing_problems;
  EXPECT_NE(missing_problems.find("NoSuchCluster/manifest.json"), std::string::npos)
      << missing_problems;
  const Decision m = Decide(r, missing, Estimator(std::move(more).value()));
  EXPECT_EQ(m.new_time_limit_min, a.new_time_limit_min);
}

TEST(PolicyTest, RaisedJobStillGetsItsTimeLimit) {
  // The GPU search judges layouts by memory alone; the chosen layout must still carry a time
  // estimate so that a job without a limit gets one (the raise and the limit are independent
  // rewrites).
  const std::string script = std::string(kFull70bFsdp) + "#FMTE steps=100\n";
  const Decision d =
      Decide(Request(script, "gres:gpu:a100:4", 1),
             Conf(std::string(kBaseConf) + "RaiseGpus=yes MaxGpusPerJob=64 MinTime=1\n"),
             ShippedEstimator());
  ASSERT_EQ(d.kind, DecisionKind::kRewrite) << d.user_message;
  EXPECT_GT(d.new_gpus, 4);
  if (!ShippedEstimator().catalogs().has_time_model)
    GTEST_SKIP() << "no time model loaded: the policy sets no limit";
  EXPECT_TRUE(d.estimate.has_time);
  EXPECT_GT(d.new_time_limit_min, 0) << d.user_message;
}

TEST(PolicyTest, NoTimeEstimateMeansNoTimeRewrite) {
  // Without any amount of work there is no wall time to predict.
  const Decision d =
      Decide(Request(kLora8b, "gres:gpu:a100:1"), Conf(kBaseConf), ShippedEstimator());
  EXPECT_FALSE(d.estimate.has_time);
  EXPECT_EQ(d.new_time_limit_min, 0);
  EXPECT_EQ(d.kind, DecisionKind::kAccept);
}

// Right-sizing notices (never decisions), table-driven. First-principles reference points: LoRA of
// Llama-3.1-8B keeps a frozen bf16 base of 16 GB, so it fits one 80 GB A100 (72 GB usable) and
// eight of them is far more than it needs; QLoRA keeps the base in 4 bits (8.03e9 x 0.5 B = 4 GB),
// so it fits a 40 GB A100 (36 GB usable) as well; 70B full fine-tuning is rejected on 4 GPUs (see
// the top) and a rejection carries no right-sizing.
TEST(PolicyTest, RightSizingNotices) {
  const std::string qlora8b =
      "#FMTE model=meta-llama/Llama-3.1-8B method=qlora micro-batch=1 seq-len=2048 "
      "activation-checkpointing=full\n";
  const std::string parts = std::string(kBaseConf) +
                            "PartitionName=small Gpu=A100-SXM4-40GB\n"
                            "PartitionName=h100 Gpu=H100-SXM5-80GB\n";
  struct Case {
    const char* what;
    std::string script, tres, conf;
    int64_t nodes;
    const char* expect;  // a notice containing this, or "" for no right-size line at all
  } cases[] = {
      {"LoRA on 8 GPUs of one node fits on 1", kLora8b, "gres:gpu:a100:8", kBaseConf, 1,
       "right-size: this job also fits on 1 GPU of the 8 it asks for"},
      {"two nodes ask for speed: no notice", kLora8b, "gres:gpu:a100:8", kBaseConf, 2, ""},
      {"one GPU: nothing fewer", kLora8b, "gres:gpu:a100:1", kBaseConf, 1, ""},
      {"switched off", kLora8b, "gres:gpu:a100:8", std::string(kBaseConf) + "RightSizing=no\n", 1,
       ""},
      {"rejected: no notice", kFull70bDdp, "gres:gpu:a100:4", kBaseConf, 1, ""},
      {"QLoRA fits the 40 GB partition", qlora8b, "gres:gpu:a100:1", parts, 1,
       "right-size: it also fits partition small's A100-SXM4-40GB"},
  };
  for (const Case& c : cases) {
    const Decision d = Decide(Request(c.script, c.tres, c.nodes), Conf(c.conf), ShippedEstimator());
    const size_t at = d.user_message.find("right-size:");
    if (std::string(c.expect).empty()) {
      EXPECT_EQ(at, std::string::npos) << c.what << ": " << d.user_message;
    } else {
      EXPECT_NE(d.user_message.find(c.expect), std::string::npos)
          << c.what << ": " << d.user_message;
      EXPECT_NE(d.kind, DecisionKind::kReject) << c.what;
    }
    // Never a faster GPU's partition: an 80 GB H100 is not a tier down from an 80 GB A100.
    EXPECT_EQ(d.user_message.find("partition h100"), std::string::npos) << c.what;
  }
}

TEST(PolicyTest, RightSizingTimeLimitFarAboveThePrediction) {
  const std::string script = std::string(kLora8b) + "#FMTE steps=1000 grad-accum=4\n";
  const Decision base = Decide(Request(script, "gres:gpu:a100:1"),
                               Conf(kBaseConf + std::string("MinTime=1\n")), ShippedEstimator());
  if (!base.estimate.has_time) GTEST_SKIP() << "no time model loaded";
  const double predicted_min = base.estimate.wall_time_s / 60.0;
  // 30 days is far above any prediction of 1000 LoRA steps; twice the prediction is not.
  const Decision far =
      Decide(Request(script, "gres:gpu:a100:1", 0, 30 * 24 * 60),
             Conf(std::string(kBaseConf) + "MaxTime=UNLIMITED\n"), ShippedEstimator());
  EXPECT_NE(far.user_message.find("right-size: the time limit 30-00:00:00 is"), std::string::npos)
      << far.user_message;
  EXPECT_EQ(far.new_time_limit_min, 0);  // a notice, never a rewrite
  const int64_t twice = static_cast<int64_t>(std::ceil(2 * predicted_min)) + 1;
  const Decision near =
      Decide(Request(script, "gres:gpu:a100:1", 0, twice), Conf(kBaseConf), ShippedEstimator());
  EXPECT_EQ(near.user_message.find("right-size:"), std::string::npos) << near.user_message;
}

TEST(PolicyTest, TorchtitanDefaultLlama8bConfigFits) {
  // torchtitan's llama3_8b.toml (seq 8192, local batch 1, FSDP over all GPUs, op-level selective
  // checkpointing) with --training.compile on 8 H100: 47.65 GiB reserved at peak, measured by
  // pytorch/ao (docs/source/workflows/training.md @36027d8, "e2e training benchmarks / NVIDIA
  // H100", bfloat16 row; ../shared/data/memory-measured/measured.csv). A job that ran must be
  // accepted, and the prediction must be near the measurement (allocator-reserved, so the
  // prediction may sit above it, never far).
  const std::string script =
      "#FMTE model=meta-llama/Llama-3.1-8B method=full framework=fsdp sharding=fsdp-full "
      "precision=mixed-bf16 seq-len=8192 micro-batch=1 activation-checkpointing=selective "
      "compile=true\n";
  const Decision d =
      Decide(Request(script, "gres:gpu:h100:8", 1),
             Conf("PartitionName=gpu Default=YES Gpu=H100-SXM5-80GB\n"), ShippedEstimator());
  EXPECT_EQ(d.kind, DecisionKind::kAccept) << d.user_message;
  ASSERT_TRUE(d.estimated) << d.user_message;
  const double gib = static_cast<double>(d.estimate.memory.per_gpu_bytes) / (1 << 30);
  EXPECT_GT(gib, 47.65 * 0.9);
  EXPECT_LT(gib, 47.65 * 1.25);
}

TEST(PolicyTest, WholeNodesWithoutGresAreEstimatedNeverActedOn) {
  // sbatch --exclusive --nodes=N without --gres on a partition whose GPU fmte.conf names: N x
  // GpusPerNode GPUs are assumed. The count is a guess, so the job is estimated but never rejected,
  // raised or given a time limit (70B full fine-tuning needs >= 1.13 TB of model state, see the
  // top: it cannot fit 4 GPUs unsharded, and still is not rejected here).
  const Config conf = Conf(
      "PartitionName=gpu Default=YES Gpu=A100-SXM4-80GB GpusPerNode=4 RaiseGpus=yes MinTime=1\n"
      "PartitionName=cpu\n");
  auto request = [](const std::string& script, const std::string& partition, bool exclusive,
                    int64_t ntasks_per_node = 0) {
    SlurmFacts f;
    f.partition = partition;
    f.min_nodes = 2;
    f.exclusive = exclusive;
    f.ntasks_per_node = ntasks_per_node;
    return ParseJobRequest(script, {}, f);
  };
  const std::string lora = std::string(kLora8b) + "#FMTE tokens=100M\n";
  const Decision d = Decide(request(lora, "gpu", true), conf, ShippedEstimator());
  EXPECT_EQ(d.kind, DecisionKind::kAccept) << d.user_message;
  ASSERT_TRUE(d.estimated) << d.user_message;
  EXPECT_EQ(d.job.gpus, 8);  // 2 nodes x GpusPerNode=4
  EXPECT_EQ(d.new_time_limit_min, 0);
  EXPECT_NE(d.user_message.find("assumed 2 x 4 GPUs"), std::string::npos) << d.user_message;
  const Decision big = Decide(request(kFull70bDdp, "gpu", true), conf, ShippedEstimator());
  EXPECT_EQ(big.kind, DecisionKind::kAccept) << big.user_message;
  EXPECT_EQ(big.new_gpus, 0);
  EXPECT_NE(big.user_message.find("accepted unchecked"), std::string::npos) << big.user_message;
  // A task per GPU (--ntasks-per-node=8, srun python ...) counts without --exclusive.
  const Decision tasks = Decide(request(kLora8b, "gpu", false, 8), conf, ShippedEstimator());
  EXPECT_TRUE(tasks.estimated) << tasks.user_message;
  EXPECT_EQ(tasks.job.gpus, 16);
  // Nothing to go on: a partition without a GPU, or no count at all.
  for (const auto& [partition, exclusive] : {std::pair{"cpu", true}, std::pair{"gpu", false}}) {
    const Decision none = Decide(request(kLora8b, partition, exclusive), conf, ShippedEstimator());
    EXPECT_FALSE(none.estimated) << partition;
    EXPECT_NE(none.user_message.find("requests no GPUs"), std::string::npos) << none.user_message;
  }
}

TEST(PolicyTest, VerlJobIsNeverRejectedOnWhatIsNotRead) {
  // verl's own example (examples/sapo_trainer/run_qwen30b_sapo.sh: Qwen3-30B-A3B on 8 GPUs, FSDP,
  // 10k-token sequences, a 30720-token budget per micro-batch) runs with sequence parallelism and
  // samples mostly shorter than the budget, which fmte does not read. As read (3 sequences per
  // micro-batch) it needs more than an 80 GB GPU; it must be accepted with a notice, not rejected.
  const std::string script =
      "python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=Qwen/Qwen3-30B-A3B "
      "data.max_prompt_length=2048 data.max_response_length=8192 "
      "actor_rollout_ref.model.enable_gradient_checkpointing=True "
      "actor_rollout_ref.actor.use_dynamic_bsz=True "
      "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=30720\n";
  const Decision d =
      Decide(Request(script, "gres:gpu:h100:8", 1),
             Conf("PartitionName=gpu Default=YES Gpu=H100-SXM5-80GB\n"), ShippedEstimator());
  EXPECT_NE(d.kind, DecisionKind::kReject) << d.user_message;
  EXPECT_NE(d.user_message.find("verl actor memory settings"), std::string::npos) << d.user_message;
}

// A Megatron-Bridge recipe names its model but keeps its parallel layout in Python: the most
// favourable reading spreads the model over the job's GPUs (TP within a node, PP across), so a
// 70B SFT recipe on 2 x 8 H100 (which Megatron runs with TP x PP > 1) is never rejected on the
// guess TP = PP = 1 (466 GiB per GPU). A layout the line gives is checked as given, and a model
// that no layout of these GPUs can hold (405B on 8: 810 GB of bf16 weights alone) is rejected.
TEST(PolicyTest, AnUnreadMegatronLayoutSpreadsTheModel) {
  auto table = LoadLauncherTable(FMTE_SOURCE_DIR "/etc");
  ASSERT_TRUE(table.ok()) << table.status().message();
  ScriptContext ctx;
  ctx.launchers = &table.value();
  auto decide = [&](const std::string& recipe, int64_t nodes) {
    SlurmFacts f;
    f.partition = "gpu";
    f.tres_per_node = "gres:gpu:h100:8";
    f.min_nodes = nodes;
    const JobRequest r = ParseJobRequest(
        "srun python /opt/Megatron-Bridge/scripts/training/run_recipe.py --recipe " + recipe + "\n",
        {}, f, ctx);
    return Decide(r, Conf("PartitionName=gpu Default=YES Gpu=H100-SXM5-80GB\n"),
                  ShippedEstimator());
  };
  const Decision spread = decide("llama31_70b_sft_config", 2);
  EXPECT_EQ(spread.kind, DecisionKind::kAccept) << spread.user_message;
  EXPECT_NE(spread.user_message.find("tp=8 pp=2"), std::string::npos) << spread.user_message;
  const Decision given = decide(
      "llama31_70b_sft_config model.tensor_model_parallel_size=1 "
      "model.pipeline_model_parallel_size=1",
      2);
  EXPECT_EQ(given.kind, DecisionKind::kReject) << given.user_message;
  // Megatron-LM's own flags with the layout from variables the script does not set: the same.
  SlurmFacts f;
  f.partition = "gpu";
  f.tres_per_node = "gres:gpu:h100:8";
  f.min_nodes = 2;
  const Decision flags = Decide(
      ParseJobRequest(
          "srun python pretrain_gpt.py --num-layers 80 --hidden-size 8192 "
          "--num-attention-heads 64 --group-query-attention --num-query-groups 8 "
          "--ffn-hidden-size 28672 --swiglu --normalization RMSNorm --padded-vocab-size 128256 "
          "--seq-length 4096 --micro-batch-size 1 --tensor-model-parallel-size $TP "
          "--pipeline-model-parallel-size $PP --bf16 --use-distributed-optimizer\n",
          {}, f),
      Conf("PartitionName=gpu Default=YES Gpu=H100-SXM5-80GB\n"), ShippedEstimator());
  EXPECT_EQ(flags.kind, DecisionKind::kAccept) << flags.user_message;
  EXPECT_NE(flags.user_message.find("--tensor-model-parallel-size (unknown value)"),
            std::string::npos)
      << flags.user_message;
  // A context-parallel size from an unset variable: the favourable reading splits the sequence.
  f.min_nodes = 8;
  const Decision cp = Decide(
      ParseJobRequest(
          "srun python pretrain_gpt.py --num-layers 80 --hidden-size 8192 "
          "--num-attention-heads 64 --group-query-attention --num-query-groups 8 "
          "--ffn-hidden-size 28672 --swiglu --normalization RMSNorm --padded-vocab-size 128256 "
          "--seq-length 98304 --micro-batch-size 1 --tensor-model-parallel-size 8 "
          "--pipeline-model-parallel-size 4 --sequence-parallel --context-parallel-size $CP "
          "--bf16 --use-distributed-optimizer\n",
          {}, f),
      Conf("PartitionName=gpu Default=YES Gpu=H100-SXM5-80GB\n"), ShippedEstimator());
  EXPECT_EQ(cp.kind, DecisionKind::kAccept) << cp.user_message;
  EXPECT_NE(cp.user_message.find("tp=8 pp=4 cp=2"), std::string::npos) << cp.user_message;
  const Decision too_big = decide("llama31_405b_sft_config", 1);
  EXPECT_EQ(too_big.kind, DecisionKind::kReject) << too_big.user_message;
  EXPECT_NE(too_big.user_message.find("even under the most favourable reading"), std::string::npos);
}

// A sequence length that is a truncation limit (cutoff_len, max_seq_length without packing) is
// the data's to reach: a job that does not fit at the limit but fits with shorter samples is
// accepted, naming the longest sample that fits, which the estimator itself confirms (it fits;
// one token more does not). Without the limit being a cap the same job is not silently accepted
// as fitting; and a job whose model state alone does not fit is still rejected.
TEST(PolicyTest, ATruncationLimitIsNeverGroundsForRejection) {
  const std::string lora =
      "#FMTE model=meta-llama/Llama-3.1-8B method=lora micro-batch=4 seq-len=32768 "
      "activation-checkpointing=none\n";
  const Decision exact =
      Decide(Request(lora, "gres:gpu:a100:1"), Conf(kBaseConf), ShippedEstimator());
  ASSERT_TRUE(exact.estimated) << exact.user_message;
  ASSERT_GT(exact.estimate.memory.per_gpu_bytes, exact.usable_bytes) << exact.user_message;
  EXPECT_EQ(exact.user_message.find("samples are cut to"), std::string::npos);

  const Decision d = Decide(Request(lora + "#FMTE seq-len-cap=true\n", "gres:gpu:a100:1"),
                            Conf(kBaseConf), ShippedEstimator());
  EXPECT_EQ(d.kind, DecisionKind::kAccept) << d.user_message;
  ExpectLargestThatFits(d, "at most ", &TrainingJob::seq_len, 32768);

  // 70B full fine-tuning unsharded on one GPU: no sequence length makes it fit.
  const Decision too_big =
      Decide(Request(std::string(kFull70bDdp) + "#FMTE seq-len-cap=true\n", "gres:gpu:a100:1"),
             Conf(kBaseConf), ShippedEstimator());
  EXPECT_EQ(too_big.kind, DecisionKind::kReject) << too_big.user_message;
}

// An evaluation batch larger than the training micro-batch (the HF Trainer's default of 8) can
// need more memory than the training steps; the evaluation set's lengths are the data's, so such a
// job is accepted, naming the largest evaluation batch that fits, which the estimator confirms
// (it fits; one more sequence does not). A job whose training steps do not fit is still judged
// on them.
TEST(PolicyTest, AnEvaluationBatchIsNeverGroundsForRejection) {
  const std::string lora =
      "#FMTE model=meta-llama/Llama-3.1-8B method=lora micro-batch=1 seq-len=8192 "
      "activation-checkpointing=full eval-batch=8\n";
  const Decision d = Decide(Request(lora, "gres:gpu:a100:1"), Conf(kBaseConf), ShippedEstimator());
  ASSERT_TRUE(d.estimated) << d.user_message;
  EXPECT_EQ(d.estimate.memory.peak_phase, "evaluation");
  ASSERT_GT(d.estimate.memory.per_gpu_bytes, d.usable_bytes) << d.user_message;
  EXPECT_EQ(d.kind, DecisionKind::kAccept) << d.user_message;
  ExpectLargestThatFits(d, "eval_batch_size) to ", &TrainingJob::eval_batch, 8);

  // 70B full fine-tuning unsharded on one GPU: its training steps do not fit; still rejected.
  const Decision too_big =
      Decide(Request(std::string(kFull70bDdp) + "#FMTE eval-batch=8\n", "gres:gpu:a100:1"),
             Conf(kBaseConf), ShippedEstimator());
  EXPECT_EQ(too_big.kind, DecisionKind::kReject) << too_big.user_message;
}

// Host memory: a job that asks for less memory per node than its checkpoint save gathers on rank
// 0's node (a full state dict: the memory estimate's checkpoint-save phase, host_bytes), or than
// the state it offloads, is told so; one byte more than that is not; it is never rejected for it.
TEST(PolicyTest, HostMemoryBelowWhatTheSaveGathersIsToldNeverRejected) {
  const auto decide = [](const std::string& lines, int64_t mem_mb) {
    SlurmFacts f;
    f.partition = "gpu";
    f.tres_per_node = "gres:gpu:a100:8";
    f.min_nodes = 4;
    f.mem_per_node_mb = mem_mb;
    return Decide(ParseJobRequest(lines, {}, f), Conf(kBaseConf), ShippedEstimator());
  };
  const auto need = [](const Decision& d) {
    int64_t save = 0;
    for (const MemoryPhase& p : d.estimate.memory.phases) save = std::max(save, p.host_bytes);
    return d.estimate.memory.cpu_bytes_per_node + save;
  };
  const std::string full =
      "#FMTE model=meta-llama/Llama-3.1-70B method=full micro-batch=1 seq-len=4096 "
      "sharding=fsdp-full activation-checkpointing=full framework=hf state-dict=full\n";
  const Decision probe = decide(full, 0);
  ASSERT_TRUE(probe.estimated) << probe.user_message;
  const int64_t gathered = need(probe);
  ASSERT_GT(gathered, 0);
  const int64_t mb = int64_t{1} << 20;
  const Decision below = decide(full, gathered / mb - 1);
  EXPECT_NE(below.kind, DecisionKind::kReject) << below.user_message;
  EXPECT_NE(below.user_message.find("host memory: the job asks for"), std::string::npos)
      << below.user_message;
  EXPECT_NE(below.user_message.find("save sharded"), std::string::npos) << below.user_message;
  const Decision above = decide(full, gathered / mb + 1);
  EXPECT_EQ(above.user_message.find("host memory"), std::string::npos) << above.user_message;
  // Saved sharded, nothing is gathered: the same request is enough.
  const Decision sharded = decide(
      "#FMTE model=meta-llama/Llama-3.1-70B method=full micro-batch=1 seq-len=4096 "
      "sharding=fsdp-full activation-checkpointing=full framework=hf state-dict=sharded\n",
      gathered / mb - 1);
  EXPECT_EQ(sharded.user_message.find("host memory"), std::string::npos) << sharded.user_message;
  // ZeRO-3 with the optimizer offloaded: its offloaded state alone.
  const std::string offload =
      "#FMTE model=meta-llama/Llama-3.1-8B method=full micro-batch=1 seq-len=4096 "
      "sharding=zero3 offload-optimizer=true framework=deepspeed\n";
  const Decision off = decide(offload, 0);
  ASSERT_GT(off.estimate.memory.cpu_bytes_per_node, 0) << off.user_message;
  const Decision short_off = decide(offload, need(off) / mb - 1);
  EXPECT_NE(short_off.user_message.find("offloads to each node's memory"), std::string::npos)
      << short_off.user_message;
}

// A multimodal model's time also goes to encoding its images, which the data decides: fmte sets
// no time limit on the language model's prediction alone (a limit that kills a job is the worst
// outcome), where it sets one for a text model of the same job; a fit says the images'
// activations are not counted.
TEST(PolicyTest, NoTimeLimitIsSetOnAMultimodalModelsLanguageModelAlone) {
  const auto decide = [](const std::string& model) {
    return Decide(
        Request("#FMTE model=" + model + " method=lora micro-batch=1 seq-len=2048 steps=1000\n",
                "gres:gpu:a100:1"),
        Conf(kBaseConf), ShippedEstimator());
  };
  const Decision text = decide("google/gemma-3-1b-it");  // Gemma3ForCausalLM: no vision tower
  ASSERT_TRUE(text.estimate.has_time) << text.user_message;
  EXPECT_EQ(text.kind, DecisionKind::kRewrite) << text.user_message;
  EXPECT_GT(text.new_time_limit_min, 0);
  const Decision vl = decide("google/gemma-3-4b-it");
  ASSERT_TRUE(vl.estimate.has_time) << vl.user_message;
  EXPECT_EQ(vl.kind, DecisionKind::kAccept) << vl.user_message;
  EXPECT_EQ(vl.new_time_limit_min, 0);
  EXPECT_NE(vl.user_message.find("depends on the data"), std::string::npos) << vl.user_message;
  EXPECT_NE(vl.user_message.find("is multimodal"), std::string::npos) << vl.user_message;
}

TEST(PolicyTest, RecordOfADecision) {
  const JobRequest r = Request(kLora8b, "gres:gpu:a100:1");
  const Decision d = Decide(r, Conf(kBaseConf), ShippedEstimator());
  const std::string text = EncodeRecord(MakeRecord(r, d));
  auto back = DecodeRecord(text);
  ASSERT_TRUE(back.ok()) << text;
  EXPECT_EQ(back->decision, "accept");
  EXPECT_EQ(back->pred_mem_bytes, d.estimate.memory.per_gpu_bytes);
  EXPECT_EQ(back->cap_bytes, d.capacity_bytes);
  EXPECT_EQ(back->job.model, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(back->job.gpu, "A100-SXM4-80GB");
  EXPECT_EQ(back->sources, "fmte-line");
  EXPECT_EQ(back->partition, "gpu");
}

}  // namespace
}  // namespace fmte
