// Speed of `fmte-advise fit` (target: < 10 ms per answer): each --solve kind on a real catalog
// model, with the catalog loaded once outside the timed loop.
#include <benchmark/benchmark.h>

#include <string>

#include "fmte/fit.h"
#include "fmte/model.h"

namespace {

const fmte::ModelCatalog* Catalog() {
  static const fmte::Result<fmte::ModelCatalog> catalog =
      fmte::ModelCatalog::LoadDir(std::string(FMTE_SOURCE_DIR) + "/etc/models");
  return catalog.ok() ? &*catalog : nullptr;
}

fmte::GpuSpec H100() {
  fmte::GpuSpec gpu;
  gpu.name = "H100-SXM5-80GB";
  gpu.memory_bytes = int64_t{85520809984};
  return gpu;
}

void Solve(benchmark::State& state, const std::string& model_id, fmte::FitTarget target,
           fmte::TrainingJob job) {
  const fmte::ModelCatalog* catalog = Catalog();
  if (catalog == nullptr) {
    state.SkipWithError("catalog");
    return;
  }
  fmte::Result<const fmte::ModelArch*> model = catalog->Find(model_id);
  if (!model.ok()) {
    state.SkipWithError(model.status().ToString().c_str());
    return;
  }
  job.model = model_id;
  fmte::FitRequest r;
  r.job = job;
  r.target = target;
  const fmte::GpuSpec gpu = H100();
  for (auto _ : state) {
    fmte::Result<fmte::FitAnswer> a = fmte::SolveFit(**model, gpu, r, catalog);
    benchmark::DoNotOptimize(a);
  }
}

fmte::TrainingJob Lora8b() {
  fmte::TrainingJob j;
  j.method = fmte::Method::kLora;
  j.precision = fmte::Precision::kPureBf16;
  j.seq_len = 4096;
  j.activation_checkpointing = fmte::Checkpointing::kFull;
  return j;
}

void BM_FitMicroBatchLora8b(benchmark::State& state) {
  Solve(state, "meta-llama/Llama-3.1-8B", fmte::FitTarget::kMicroBatch, Lora8b());
}
BENCHMARK(BM_FitMicroBatchLora8b)->Unit(benchmark::kMillisecond);

void BM_FitSeqLenLora8b(benchmark::State& state) {
  Solve(state, "meta-llama/Llama-3.1-8B", fmte::FitTarget::kSeqLen, Lora8b());
}
BENCHMARK(BM_FitSeqLenLora8b)->Unit(benchmark::kMillisecond);

// Megatron: 24 tensor/pipeline splits, each bisected over up to 519 GPU counts.
void BM_FitGpusMegatron70b(benchmark::State& state) {
  fmte::TrainingJob j;
  j.framework = fmte::Framework::kMegatron;
  j.sharding = fmte::Sharding::kZero1;
  j.precision = fmte::Precision::kMixedBf16;
  j.seq_len = 4096;
  j.activation_checkpointing = fmte::Checkpointing::kFull;
  Solve(state, "meta-llama/Llama-3.1-70B", fmte::FitTarget::kGpus, j);
}
BENCHMARK(BM_FitGpusMegatron70b)->Unit(benchmark::kMillisecond);

void BM_FitModelQloraCatalog(benchmark::State& state) {
  fmte::TrainingJob j = Lora8b();
  j.method = fmte::Method::kQlora;
  Solve(state, "meta-llama/Llama-3.1-8B", fmte::FitTarget::kModel, j);
}
BENCHMARK(BM_FitModelQloraCatalog)->Unit(benchmark::kMillisecond);

}  // namespace
