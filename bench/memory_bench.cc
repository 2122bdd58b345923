// Speed of one analytic memory estimate (target: < 5 us): Llama-3.1-70B on 64 GPUs,
// ZeRO-3, sequence 4096, with the catalog loaded once outside the timed loop.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "fmte/memory.h"
#include "fmte/model.h"

namespace {

void BM_EstimateMemoryLlama70bZero3(benchmark::State& state) {
  fmte::Result<fmte::ModelCatalog> catalog =
      fmte::ModelCatalog::LoadDir(std::string(FMTE_SOURCE_DIR) + "/etc/models");
  if (!catalog.ok()) {
    state.SkipWithError(catalog.status().ToString().c_str());
    return;
  }
  fmte::Result<const fmte::ModelArch*> model = catalog->Find("meta-llama/Llama-3.1-70B");
  if (!model.ok()) {
    state.SkipWithError(model.status().ToString().c_str());
    return;
  }
  fmte::TrainingJob job;
  job.model = "meta-llama/Llama-3.1-70B";
  job.gpus = 64;
  job.sharding = fmte::Sharding::kZero3;
  job.precision = fmte::Precision::kMixedBf16;
  job.framework = fmte::Framework::kDeepspeed;
  job.seq_len = 4096;
  job.activation_checkpointing = fmte::Checkpointing::kFull;
  fmte::GpuSpec gpu;
  gpu.name = "H100-SXM";
  gpu.memory_bytes = int64_t{85520809984};
  for (auto _ : state) {
    fmte::Result<fmte::MemoryEstimate> e = fmte::EstimateMemory(**model, job, gpu);
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_EstimateMemoryLlama70bZero3);

// Megatron with 4 pipeline stages: every stage is estimated to find the heaviest.
void BM_EstimateMemoryLlama70bMegatronPp4(benchmark::State& state) {
  fmte::Result<fmte::ModelCatalog> catalog =
      fmte::ModelCatalog::LoadDir(std::string(FMTE_SOURCE_DIR) + "/etc/models");
  if (!catalog.ok()) {
    state.SkipWithError(catalog.status().ToString().c_str());
    return;
  }
  fmte::Result<const fmte::ModelArch*> model = catalog->Find("meta-llama/Llama-3.1-70B");
  if (!model.ok()) {
    state.SkipWithError(model.status().ToString().c_str());
    return;
  }
  fmte::TrainingJob job;
  job.model = "meta-llama/Llama-3.1-70B";
  job.gpus = 64;
  job.tp = 8;
  job.pp = 4;
  job.sequence_parallel = true;
  job.grad_accum = 16;
  job.sharding = fmte::Sharding::kZero1;
  job.precision = fmte::Precision::kMixedBf16;
  job.framework = fmte::Framework::kMegatron;
  job.seq_len = 4096;
  fmte::GpuSpec gpu;
  gpu.memory_bytes = int64_t{85520809984};
  for (auto _ : state) {
    fmte::Result<fmte::MemoryEstimate> e = fmte::EstimateMemory(**model, job, gpu);
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_EstimateMemoryLlama70bMegatronPp4);

}  // namespace
