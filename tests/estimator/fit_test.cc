// fmte-advise fit's searches (fmte/fit.h): each answer is checked against the estimator itself
// (the answer fits, the next value does not), and one against a published run that ran.
#include "fmte/fit.h"

#include <gtest/gtest.h>

#include <string>

#include "fmte/memory.h"
#include "fmte/model.h"

namespace fmte {
namespace {

const ModelCatalog& Catalog() {
  static const Result<ModelCatalog> catalog =
      ModelCatalog::LoadDir(std::string(FMTE_SOURCE_DIR) + "/etc/models");
  EXPECT_TRUE(catalog.ok()) << catalog.status().ToString();
  return *catalog;
}

GpuSpec H100() {
  GpuSpec gpu;
  gpu.name = "H100-SXM5-80GB";
  gpu.memory_bytes = int64_t{85520809984};  // etc/gpus.csv memory_mib 81559
  return gpu;
}

const ModelArch& Model(const std::string& id) {
  Result<const ModelArch*> m = Catalog().Find(id);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return **m;
}

int64_t PerGpu(const ModelArch& m, const TrainingJob& j) {
  Result<MemoryEstimate> e = EstimateMemory(m, j, H100());
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? e->per_gpu_bytes : 0;
}

TrainingJob Lora8b() {
  TrainingJob j;
  j.model = "meta-llama/Llama-3.1-8B";
  j.method = Method::kLora;
  j.precision = Precision::kPureBf16;
  j.seq_len = 4096;
  j.activation_checkpointing = Checkpointing::kFull;
  return j;
}

TEST(FitTest, LargestMicroBatchFitsAndTheNextDoesNot) {
  const ModelArch& m = Model("meta-llama/Llama-3.1-8B");
  FitRequest r;
  r.job = Lora8b();
  auto a = SolveFit(m, H100(), r);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_GT(a->predicted, 1);
  EXPECT_EQ(a->usable_bytes, static_cast<int64_t>(85520809984 * 0.9));
  TrainingJob j = r.job;
  j.micro_batch = a->predicted;
  EXPECT_LE(PerGpu(m, j), a->usable_bytes);
  EXPECT_EQ(a->predicted_point.per_gpu_bytes, PerGpu(m, j));
  j.micro_batch = a->predicted + 1;
  EXPECT_GT(PerGpu(m, j), a->usable_bytes);
  EXPECT_EQ(a->next, a->predicted + 1);
  // At the bound (a higher number for the same job) the answer can only be smaller.
  EXPECT_LE(a->at_bound, a->predicted);
  if (a->at_bound > 0) {
    EXPECT_LE(a->bound_point.bound_bytes, a->usable_bytes);
  }
}

TEST(FitTest, LongestSequenceFitsAndTheNextDoesNot) {
  const ModelArch& m = Model("meta-llama/Llama-3.1-8B");
  FitRequest r;
  r.job = Lora8b();
  r.target = FitTarget::kSeqLen;
  auto a = SolveFit(m, H100(), r);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_GT(a->predicted, 4096);  // mb 1 with full recompute fits far beyond 4096 tokens
  TrainingJob j = r.job;
  j.seq_len = a->predicted;
  EXPECT_LE(PerGpu(m, j), a->usable_bytes);
  j.seq_len = a->predicted + 1;
  EXPECT_GT(PerGpu(m, j), a->usable_bytes);
}

TEST(FitTest, FewestGpusForFsdpFullFineTuning) {
  // Llama-3.1-70B full fine-tuning under FSDP needs >= 16 bytes per parameter of sharded state
  // (70.6e9 x 16 = 1.13 TB, ZeRO paper section 3.1): never fewer than 1.13 TB / 77 GB = 15 GPUs.
  const ModelArch& m = Model("meta-llama/Llama-3.1-70B");
  FitRequest r;
  r.job.model = m.id;
  r.job.framework = Framework::kFsdp;
  r.job.sharding = Sharding::kFsdpFull;
  r.job.precision = Precision::kMixedBf16;
  r.job.seq_len = 4096;
  r.job.activation_checkpointing = Checkpointing::kFull;
  r.target = FitTarget::kGpus;
  auto a = SolveFit(m, H100(), r);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_GE(a->predicted, 15);
  ASSERT_FALSE(a->layouts.empty());
  TrainingJob j = r.job;
  j.gpus = a->predicted;
  EXPECT_LE(PerGpu(m, j), a->usable_bytes);
  // The count tried before it (whole 8-GPU nodes above 8) does not fit.
  j.gpus = a->predicted > 8 ? a->predicted - 8 : a->predicted - 1;
  EXPECT_GT(PerGpu(m, j), a->usable_bytes);
  EXPECT_GE(a->at_bound, a->predicted);
}

TEST(FitTest, CatalogModelsThatFit) {
  FitRequest r;
  r.job = Lora8b();
  r.job.method = Method::kQlora;
  r.target = FitTarget::kModel;
  auto a = SolveFit(Model("meta-llama/Llama-3.1-8B"), H100(), r, &Catalog());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_GT(a->models.size(), 20u);
  bool seen_not_fitting = false;
  for (const FitPoint& p : a->models) {
    SCOPED_TRACE(p.job.model);
    EXPECT_EQ(p.fits, PerGpu(Model(p.job.model), p.job) <= a->usable_bytes);
    if (!p.fits) seen_not_fitting = true;
    EXPECT_FALSE(p.fits && seen_not_fitting);  // the ones that fit come first
  }
  EXPECT_FALSE(SolveFit(Model("meta-llama/Llama-3.1-8B"), H100(), r).ok());  // needs the catalog
}

TEST(FitTest, APublishedRunThatRanFits) {
  // torchtitan's llama3_8b.toml on 8 H100 (FSDP, seq 8192, local batch 1, op-level selective
  // checkpointing, compiled) ran at 47.65 GiB reserved (pytorch/ao docs/source/workflows/
  // training.md @36027d8; tests/data/memory-measured/measured.csv): micro-batch 1 must fit.
  const ModelArch& m = Model("meta-llama/Llama-3.1-8B");
  FitRequest r;
  r.job.model = m.id;
  r.job.gpus = 8;
  r.job.framework = Framework::kFsdp;
  r.job.sharding = Sharding::kFsdpFull;
  r.job.precision = Precision::kMixedBf16;
  r.job.seq_len = 8192;
  r.job.activation_checkpointing = Checkpointing::kSelective;
  r.job.compile = true;
  auto a = SolveFit(m, H100(), r);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_GE(a->predicted, 1);
}

TEST(FitTest, BadTargetsAndFractionsNameTheFlag) {
  auto t = ParseFitTarget("batch");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("--solve"), std::string::npos);
  EXPECT_EQ(*ParseFitTarget("seq-len"), FitTarget::kSeqLen);
  FitRequest r;
  r.job = Lora8b();
  r.usable_fraction = 1.5;
  EXPECT_FALSE(SolveFit(Model("meta-llama/Llama-3.1-8B"), H100(), r).ok());
}

}  // namespace
}  // namespace fmte
