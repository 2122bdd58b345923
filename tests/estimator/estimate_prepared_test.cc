// PreparedEstimate is the one way a decision estimates: its own estimate, the GPU-count search and
// the alternatives. Whatever it shares between estimates (the per-stage parameters of
// ShareParamsOf, the activations of ShareActivationsOf), each estimate must equal the one the plain
// Estimate computes from scratch for the same job, on the shipped catalogs (Llama-3.1-8B and -70B
// configs).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "fmte/estimator.h"
#include "shipped_estimator.h"

namespace fmte {
namespace {

struct Shape {
  const char* name;
  const char* model;
  Method method;
  int64_t tp, pp;
  Sharding sharding;
};

TrainingJob JobOf(const Shape& s, int64_t gpus) {
  TrainingJob j;
  j.model = s.model;
  j.method = s.method;
  if (s.method == Method::kQlora) j.quant = Quant::kNf4;
  j.tp = s.tp;
  j.pp = s.pp;
  j.sharding = s.sharding;
  j.gpus = gpus;
  j.gpus_per_node = std::min<int64_t>(gpus, 8);
  j.micro_batch = 2;
  j.seq_len = 4096;
  j.grad_accum = 4;
  j.steps = 1000;
  j.precision = Precision::kMixedBf16;
  j.gpu = "A100-SXM4-80GB";
  return j;
}

TEST(PreparedEstimateTest, SharedCountsGiveTheFreshEstimate) {
  const Catalogs& catalogs = ShippedEstimator().catalogs();
  auto gpu = catalogs.gpus.Find("A100-SXM4-80GB");
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  const Shape shapes[] = {
      {"8B full fsdp", "meta-llama/Llama-3.1-8B", Method::kFull, 1, 1, Sharding::kFsdpFull},
      {"8B lora ddp", "meta-llama/Llama-3.1-8B", Method::kLora, 1, 1, Sharding::kDdp},
      {"70B full tp4 pp2 zero1", "meta-llama/Llama-3.1-70B", Method::kFull, 4, 2, Sharding::kZero1},
      {"70B qlora fsdp", "meta-llama/Llama-3.1-70B", Method::kQlora, 1, 1, Sharding::kFsdpFull}};
  for (const Shape& s : shapes) {
    SCOPED_TRACE(s.name);
    auto model = catalogs.models.Find(s.model);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    const TrainingJob base = JobOf(s, s.tp * s.pp * 2);
    PreparedEstimate prepared(catalogs, **model);
    JobEstimate first;
    ASSERT_TRUE(prepared.Estimate(base, **gpu, &first).ok());
    prepared.ShareParamsOf(base);
    prepared.ShareActivationsOf(base);
    JobEstimate reused;  // one estimate reused across the search, as the policy does
    for (int64_t gpus : {s.tp * s.pp * 2, s.tp * s.pp * 4, s.tp * s.pp * 8}) {
      SCOPED_TRACE(gpus);
      const TrainingJob job = JobOf(s, gpus);
      auto fresh = Estimate(catalogs, **model, job, **gpu);
      ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
      ASSERT_TRUE(prepared.EstimateMemory(job, **gpu, &reused).ok());
      EXPECT_EQ(reused.memory.per_gpu_bytes, fresh->memory.per_gpu_bytes);
      EXPECT_EQ(reused.memory.breakdown.activations, fresh->memory.breakdown.activations);
      EXPECT_EQ(reused.memory.breakdown.optimizer, fresh->memory.breakdown.optimizer);
      EXPECT_EQ(reused.memory.trainable_params, fresh->memory.trainable_params);
      JobEstimate full;
      ASSERT_TRUE(prepared.Estimate(job, **gpu, &full).ok());
      EXPECT_EQ(full.memory.per_gpu_bytes, fresh->memory.per_gpu_bytes);
      EXPECT_EQ(full.has_time, fresh->has_time);
      EXPECT_EQ(full.wall_time_s, fresh->wall_time_s);
      EXPECT_EQ(full.wall_time_bound_s, fresh->wall_time_bound_s);
    }
    prepared.ForgetActivations();
    // Another method reads other parameter counts: the shared ones must not be used for it.
    TrainingJob other = base;
    other.method = s.method == Method::kFull ? Method::kLora : Method::kFull;
    other.quant = Quant::kNone;
    auto fresh = Estimate(catalogs, **model, other, **gpu);
    JobEstimate e;
    ASSERT_EQ(prepared.EstimateMemory(other, **gpu, &e).ok(), fresh.ok());
    if (fresh.ok()) {
      EXPECT_EQ(e.memory.per_gpu_bytes, fresh->memory.per_gpu_bytes);
    }
  }
}

TEST(PreparedEstimateTest, AnInvalidJobIsAnErrorWithNoBytes) {
  const Catalogs& catalogs = ShippedEstimator().catalogs();
  auto model = catalogs.models.Find("meta-llama/Llama-3.1-8B");
  auto gpu = catalogs.gpus.Find("A100-SXM4-80GB");
  ASSERT_TRUE(model.ok() && gpu.ok());
  PreparedEstimate prepared(catalogs, **model);
  TrainingJob job = JobOf({"", "meta-llama/Llama-3.1-8B", Method::kFull, 1, 1, Sharding::kDdp}, 2);
  JobEstimate e;
  e.memory.per_gpu_bytes = 123;
  job.micro_batch = 0;  // ValidateJob refuses it
  EXPECT_FALSE(prepared.EstimateMemory(job, **gpu, &e).ok());
  EXPECT_EQ(e.memory.per_gpu_bytes, 0);
  job.micro_batch = 1;
  job.tp = 3;  // does not divide Llama-3.1-8B's 32 heads: the memory model refuses the layout
  job.gpus = 3;
  e.memory.per_gpu_bytes = 123;
  EXPECT_FALSE(prepared.EstimateMemory(job, **gpu, &e).ok());
  EXPECT_EQ(e.memory.per_gpu_bytes, 0);
}

}  // namespace
}  // namespace fmte
