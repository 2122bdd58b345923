// The policy's searches estimate many variants of one job with the stage parameters (and in the
// GPU-count search the activations) counted once (memory::CountPipelineParams,
// CountPipelineActivations) and one reused MemoryEstimate. Reusing must change
// nothing: every variant that SameParamCounts accepts gets, field for field, the estimate the
// public EstimateMemory computes from scratch.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "../../estimator/memory/src/memory_internal.h"  // white-box: the reuse entry points
#include "fmte/cluster.h"
#include "fmte/memory.h"
#include "fmte/walltime.h"
#include "memory_test_util.h"

namespace fmte {
namespace {

using testing::BaseJob;
using testing::Gpu80;
using testing::LlamaArch;

void ExpectSame(const MemoryEstimate& a, const MemoryEstimate& b) {
  EXPECT_EQ(a.per_gpu_bytes, b.per_gpu_bytes);
  EXPECT_EQ(a.allocator_peak_bytes, b.allocator_peak_bytes);
  EXPECT_EQ(a.cuda_context_bytes, b.cuda_context_bytes);
  EXPECT_EQ(a.cpu_bytes_per_node, b.cpu_bytes_per_node);
  EXPECT_EQ(a.trainable_params, b.trainable_params);
  EXPECT_EQ(a.params.total, b.params.total);
  EXPECT_EQ(a.breakdown.weights, b.breakdown.weights);
  EXPECT_EQ(a.breakdown.gradients, b.breakdown.gradients);
  EXPECT_EQ(a.breakdown.optimizer, b.breakdown.optimizer);
  EXPECT_EQ(a.breakdown.activations, b.breakdown.activations);
  EXPECT_EQ(a.breakdown.logits, b.breakdown.logits);
  EXPECT_EQ(a.breakdown.other, b.breakdown.other);
  EXPECT_EQ(a.layers_per_stage, b.layers_per_stage);
  EXPECT_EQ(a.heaviest_stage, b.heaviest_stage);
  EXPECT_EQ(a.peak_phase, b.peak_phase);
  EXPECT_EQ(a.fits, b.fits);
}

struct Base {
  const char* name;
  Method method;
  int64_t tp, pp;
};

// The base job of a row: tp x pp GPUs.
TrainingJob JobOf(const Base& base) {
  TrainingJob job = BaseJob();
  job.method = base.method;
  job.tp = base.tp;
  job.pp = base.pp;
  job.gpus = base.tp * base.pp;
  return job;
}

TEST(MemoryReuseTest, VariantsOfOneShapeMatchAFreshEstimate) {
  const ModelArch m = LlamaArch(4096, 32, 8, 14336, 32, 128256);  // Llama-3-8B shaped
  const memory::PreparedModel prepared(m);
  const Base bases[] = {{"full", Method::kFull, 1, 1},
                        {"lora tp2 pp2", Method::kLora, 2, 2},
                        {"qlora", Method::kQlora, 1, 1},
                        {"full pp4", Method::kFull, 1, 4}};
  for (const Base& base : bases) {
    const TrainingJob job = JobOf(base);
    const std::vector<memory::StageParams> params = memory::CountPipelineParams(prepared, job);
    // What the policy's candidates change: GPU count, sharding, batch, checkpointing.
    std::vector<TrainingJob> variants(5, job);
    variants[1].gpus = job.gpus * 8;
    variants[1].sharding = Sharding::kZero1;
    variants[2].gpus = job.gpus * 4;
    variants[2].gpus_per_node = 2;
    variants[2].grad_accum = 8;
    variants[3].activation_checkpointing = Checkpointing::kFull;
    variants[4].micro_batch = 4;
    variants[4].seq_len = 8192;
    MemoryEstimate reused;  // one estimate written again and again, as the searches do
    for (const TrainingJob& v : variants) {
      SCOPED_TRACE(base.name);
      ASSERT_TRUE(memory::SameParamCounts(v, job));
      ASSERT_TRUE(memory::EstimateMemory(prepared, v, Gpu80(), &reused, &params).ok());
      const auto fresh = EstimateMemory(m, v, Gpu80());
      ASSERT_TRUE(fresh.ok()) << fresh.status().message();
      ExpectSame(reused, *fresh);
    }
  }
}

// The GPU-count search also reuses the activations: its counts change the GPUs, the GPUs per node
// and the sharding (the accumulation too, but only with one pipeline stage).
TEST(MemoryReuseTest, GpuCountsShareTheActivations) {
  const ModelArch m = LlamaArch(4096, 32, 8, 14336, 32, 128256);
  const memory::PreparedModel prepared(m);
  const Base bases[] = {{"full", Method::kFull, 1, 1},
                        {"lora tp2 pp2", Method::kLora, 2, 2},
                        {"full pp4", Method::kFull, 1, 4}};
  for (const Base& base : bases) {
    TrainingJob job = JobOf(base);
    job.grad_accum = 4;  // with 4 stages the first holds 4 micro-batches' activations
    const auto params = memory::CountPipelineParams(prepared, job);
    const auto activations = memory::CountPipelineActivations(prepared, job);
    std::vector<TrainingJob> variants(3, job);
    variants[1].gpus = job.gpus * 8;
    variants[1].sharding = Sharding::kFsdpFull;
    variants[2].gpus = job.gpus * 16;
    variants[2].gpus_per_node = 4;
    if (job.pp == 1) variants[2].grad_accum = 1;
    MemoryEstimate reused;
    for (const TrainingJob& v : variants) {
      SCOPED_TRACE(base.name);
      ASSERT_TRUE(
          memory::EstimateMemory(prepared, v, Gpu80(), &reused, &params, &activations).ok());
      const auto fresh = EstimateMemory(m, v, Gpu80());
      ASSERT_TRUE(fresh.ok()) << fresh.status().message();
      ExpectSame(reused, *fresh);
    }
  }
}

// A decision's wall time (WallTimeFromOwnStep, estimator.cc) reads the model's total and trainable
// parameters from its memory estimate instead of counting them again: they must be
// ModelArch::Counts().total and TrainableParams for every method and split, with the stage
// parameters counted there or shared, and the wall time must be the one WallTimeFromStep gives.
TEST(MemoryReuseTest, TheWallTimeReadsTheEstimatesCounts) {
  const ModelArch m = LlamaArch(4096, 32, 8, 14336, 32, 128256);
  // Meta-Llama-3-8B: 8,030,261,248 parameters (the model card; the safetensors index's total size
  // is 16,060,522,496 bytes in bf16).
  ASSERT_EQ(m.Counts().total, 8030261248);
  const memory::PreparedModel prepared(m);
  const Base bases[] = {{"full", Method::kFull, 1, 1},
                        {"lora", Method::kLora, 1, 1},
                        {"lora tp2 pp2", Method::kLora, 2, 2},
                        {"qlora", Method::kQlora, 1, 1},
                        {"full pp4", Method::kFull, 1, 4}};
  for (const Base& base : bases) {
    SCOPED_TRACE(base.name);
    TrainingJob job = JobOf(base);
    job.steps = 1000;
    const std::vector<memory::StageParams> params = memory::CountPipelineParams(prepared, job);
    for (const auto* shared :
         {static_cast<const std::vector<memory::StageParams>*>(nullptr), &params}) {
      MemoryEstimate est;
      ASSERT_TRUE(memory::EstimateMemory(prepared, job, Gpu80(), &est, shared).ok());
      EXPECT_EQ(est.params.total, m.Counts().total);
      EXPECT_EQ(est.trainable_params, TrainableParams(m, job));
      TimeEstimate step;
      step.step_time_s = 2.5;
      step.global_batch = 16;
      const ClusterSpec cluster = DefaultCluster(Gpu80());
      const auto counted =
          WallTimeFromStep(job, cluster, TimeModel(), step,
                           TrainedParams{m.Counts().total, TrainableParams(m, job)});
      ASSERT_TRUE(counted.ok()) << counted.status().message();
      WallTimeEstimate in_place;
      in_place.step = step;
      ASSERT_TRUE(WallTimeFromOwnStep(job, cluster, TimeModel(),
                                      TrainedParams{est.params.total, est.trainable_params},
                                      WallTimeOptions{}, &in_place)
                      .ok());
      EXPECT_EQ(in_place.load_s, counted->load_s);
      EXPECT_EQ(in_place.checkpoint_bytes, counted->checkpoint_bytes);
      EXPECT_EQ(in_place.wall_time_s, counted->wall_time_s);
      EXPECT_EQ(in_place.time_limit_s, counted->time_limit_s);
    }
  }
}

TEST(MemoryReuseTest, OtherShapesAreNotTheSame) {
  const TrainingJob job = BaseJob();
  std::vector<TrainingJob> others(6, job);
  others[0].method = Method::kLora;
  others[1].tp = 2;
  others[2].pp = 2;
  others[3].framework = Framework::kMegatron;
  others[4].lora_r = 64;
  others[5].lora_targets = {"all-linear"};
  for (const TrainingJob& o : others) EXPECT_FALSE(memory::SameParamCounts(o, job));
}

}  // namespace
}  // namespace fmte
