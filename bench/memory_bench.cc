// Speed of one analytic memory estimate (target: < 5 us): Llama-3.1-70B on 64 GPUs,
// ZeRO-3, sequence 4096, with the catalog loaded once outside the timed loop.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "bench_jobs.h"
#include "fmte/memory.h"
#include "fmte/model.h"

namespace {

// The catalog model `id` (the catalog loaded once, outside every timed loop), or nullptr with the
// benchmark skipped and the reason given.
const fmte::ModelArch* CatalogModel(benchmark::State& state, const char* id) {
  static const fmte::Result<fmte::ModelCatalog> catalog =
      fmte::ModelCatalog::LoadDir(std::string(FMTE_SOURCE_DIR) + "/etc/models");
  if (!catalog.ok()) {
    state.SkipWithError(catalog.status().ToString().c_str());
    return nullptr;
  }
  fmte::Result<const fmte::ModelArch*> model = catalog->Find(id);
  if (!model.ok()) {
    state.SkipWithError(model.status().ToString().c_str());
    return nullptr;
  }
  return *model;
}

// Times EstimateMemory of `job` on an H100 80 GB (skipped, with the reason, when the job does not
// estimate: the loop would time the error path).
void TimeEstimates(benchmark::State& state, const fmte::ModelArch& model,
                   const fmte::TrainingJob& job) {
  fmte::GpuSpec gpu;
  gpu.name = "H100-SXM";
  gpu.memory_bytes = int64_t{85520809984};
  if (fmte::Status s = fmte::EstimateMemory(model, job, gpu).status(); !s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  for (auto _ : state) {
    fmte::Result<fmte::MemoryEstimate> e = fmte::EstimateMemory(model, job, gpu);
    benchmark::DoNotOptimize(e);
  }
}

void BM_EstimateMemoryLlama70bZero3(benchmark::State& state) {
  const fmte::ModelArch* model = CatalogModel(state, "meta-llama/Llama-3.1-70B");
  if (model == nullptr) return;
  fmte::TrainingJob job;
  job.model = "meta-llama/Llama-3.1-70B";
  job.gpus = 64;
  job.sharding = fmte::Sharding::kZero3;
  job.precision = fmte::Precision::kMixedBf16;
  job.framework = fmte::Framework::kDeepspeed;
  job.seq_len = 4096;
  job.activation_checkpointing = fmte::Checkpointing::kFull;
  TimeEstimates(state, *model, job);
}
BENCHMARK(BM_EstimateMemoryLlama70bZero3);

// The HF Trainer's FSDP job with every phase: an evaluation batch and a full-state-dict save.
void BM_EstimateMemoryLlama70bFsdpEvalSave(benchmark::State& state) {
  const fmte::ModelArch* model = CatalogModel(state, "meta-llama/Llama-3.1-70B");
  if (model == nullptr) return;
  fmte::TrainingJob job;
  job.model = "meta-llama/Llama-3.1-70B";
  job.gpus = 32;
  job.sharding = fmte::Sharding::kFsdpFull;
  job.framework = fmte::Framework::kHf;
  job.seq_len = 4096;
  job.eval_batch = 8;
  job.state_dict = fmte::StateDict::kFull;
  job.activation_checkpointing = fmte::Checkpointing::kFull;
  TimeEstimates(state, *model, job);
}
BENCHMARK(BM_EstimateMemoryLlama70bFsdpEvalSave);

// Megatron with 4 pipeline stages: every stage is estimated to find the heaviest.
void BM_EstimateMemoryLlama70bMegatronPp4(benchmark::State& state) {
  const fmte::ModelArch* model = CatalogModel(state, "meta-llama/Llama-3.1-70B");
  if (model == nullptr) return;
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
  TimeEstimates(state, *model, job);
}
BENCHMARK(BM_EstimateMemoryLlama70bMegatronPp4);

// The features of issues 13 and 14 together (bench_jobs.h).
void BM_EstimateMemoryNemotronEpCpFp8(benchmark::State& state) {
  const fmte::TrainingJob job = fmte::bench::NemotronEpCpFp8Job();
  const fmte::ModelArch* model = CatalogModel(state, job.model.c_str());
  if (model == nullptr) return;
  TimeEstimates(state, *model, job);
}
BENCHMARK(BM_EstimateMemoryNemotronEpCpFp8);

}  // namespace
