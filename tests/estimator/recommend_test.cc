// The recommender finds what a brute force over the same space finds (recommend.h).
#include "fmte/recommend.h"

#include <gtest/gtest.h>

#include "fmte/memory.h"
#include "memory_test_util.h"

namespace fmte {
namespace {

TEST(Recommend, FindsTheBruteForceOptimum) {
  const ModelArch m = testing::GptArch(2048, /*heads=*/16, /*layers=*/16, 50304, 4096);
  GpuSpec g;
  g.name = "A100-SXM4-40GB";
  g.memory_bytes = int64_t{40} << 30;
  g.peak_bf16_tflops = g.peak_fp16_tflops = 312;
  g.hbm_gbps = 1555;
  g.interconnect_gbps = 300;
  ClusterSpec c = DefaultCluster(g);
  TimeModel tm;
  TimeEfficiency e;
  e.gpu = "A100";
  e.layer_overhead_s = 5e-4;
  e.step_overhead_s = 3e-3;
  e.comm_latency_s = 2e-5;
  tm.AddEfficiency(e);

  RecommendRequest req;
  req.base.model = m.id;
  req.base.precision = Precision::kMixedBf16;
  req.base.framework = Framework::kMegatron;
  req.base.seq_len = 2048;
  req.base.sharding = Sharding::kNone;
  req.min_gpus = req.max_gpus = 8;
  req.global_batch = 32;
  req.search_sharding = false;
  req.search_offload = false;
  auto rec = Recommend(m, g, c, tm, req);
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  ASSERT_FALSE(rec->feasible.empty());

  // Brute force: every tp, pp, micro-batch and checkpointing, no pruning.
  double best = 1e300;
  TrainingJob best_job;
  for (int64_t tp : {1, 2, 4, 8})
    for (int64_t pp : {1, 2, 4, 8})
      for (int64_t b : {1, 2, 4, 8, 16, 32})
        for (Checkpointing ck :
             {Checkpointing::kNone, Checkpointing::kSelective, Checkpointing::kFull}) {
          TrainingJob j = req.base;
          j.gpus = 8;
          j.gpus_per_node = 8;
          j.tp = tp;
          j.pp = pp;
          j.sequence_parallel = tp > 1;
          j.micro_batch = b;
          j.global_batch = 32;
          if (tp * pp > 8) continue;
          const int64_t dp = 8 / (tp * pp);
          if (32 % (dp * b) != 0) continue;
          j.grad_accum = 32 / (dp * b);
          j.activation_checkpointing = ck;
          if (!ValidateJob(j).ok()) continue;
          auto mem = EstimateMemory(m, j, g);
          if (!mem.ok() || !mem->fits) continue;
          auto t = EstimateStepTime(m, j, g, c, tm);
          if (!t.ok()) continue;
          if (t->step_time_s < best) {
            best = t->step_time_s;
            best_job = j;
          }
        }
  ASSERT_LT(best, 1e300);
  const LayoutCandidate& top = rec->feasible.front();
  EXPECT_DOUBLE_EQ(top.step_time_s, best);
  EXPECT_EQ(top.job.tp, best_job.tp);
  EXPECT_EQ(top.job.pp, best_job.pp);
  EXPECT_EQ(top.job.micro_batch, best_job.micro_batch);
  EXPECT_LE(top.per_gpu_bytes, g.memory_bytes);
  for (size_t k = 1; k < rec->feasible.size(); ++k)
    EXPECT_LE(rec->feasible[k - 1].step_time_s, rec->feasible[k].step_time_s);
  for (const LayoutCandidate& bad : rec->infeasible) {
    EXPECT_FALSE(bad.fits);
    EXPECT_NE(bad.why_not.find("GiB"), std::string::npos);
  }
}

TEST(Recommend, RejectsBadRequests) {
  const ModelArch m = testing::GptArch(512, /*heads=*/8, /*layers=*/2, 1000, 4096);
  GpuSpec g;
  g.name = "x";
  TimeModel tm;
  RecommendRequest req;
  req.min_gpus = 8;
  req.max_gpus = 4;
  req.global_batch = 8;
  auto r = Recommend(m, g, DefaultCluster(g), tm, req);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--gpus"), std::string::npos);
  req.max_gpus = 8;
  req.global_batch = 0;
  r = Recommend(m, g, DefaultCluster(g), tm, req);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--global-batch"), std::string::npos);
}

}  // namespace
}  // namespace fmte
