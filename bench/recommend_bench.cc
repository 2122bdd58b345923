// Speed target (docs/time.md): `fmte-advise recommend` for a 70B model on 1,024 GPUs answers in
// under 100 ms. Uses the shipped catalogs and step-time model, like the tool.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "fmte/estimator.h"
#include "fmte/recommend.h"

namespace {

void BM_Recommend70BOn1024Gpus(benchmark::State& state) {
  auto catalogs = fmte::LoadCatalogs(std::string(FMTE_SOURCE_DIR) + "/etc");
  auto tm = fmte::TimeModel::LoadDir(std::string(FMTE_SOURCE_DIR) + "/regressors/vtrain");
  if (!catalogs.ok() || !tm.ok()) {
    state.SkipWithError("cannot load catalogs or regressors/vtrain");
    return;
  }
  auto model = catalogs->models.Find("meta-llama/Llama-3.1-70B");
  auto gpu = catalogs->gpus.Find("A100-80GB");
  if (!model.ok() || !gpu.ok()) {
    state.SkipWithError("model or GPU missing from the catalogs");
    return;
  }
  fmte::RecommendRequest req;
  req.base.model = (*model)->id;
  req.base.precision = fmte::Precision::kMixedBf16;
  req.base.framework = static_cast<fmte::Framework>(state.range(0));
  req.base.seq_len = 4096;
  req.min_gpus = req.max_gpus = 1024;
  req.global_batch = 1024;
  const fmte::ClusterSpec cluster = fmte::DefaultCluster(**gpu);
  int64_t evaluated = 0;
  for (auto _ : state) {
    auto rec = fmte::Recommend(**model, **gpu, cluster, *tm, req);
    if (!rec.ok()) {
      state.SkipWithError(rec.status().ToString().c_str());
      return;
    }
    evaluated = rec->evaluated;
    benchmark::DoNotOptimize(rec->feasible.data());
  }
  state.counters["layouts"] = static_cast<double>(evaluated);
}
// DeepSpeed (ZeRO stages and offload searched) and Megatron (distributed optimizer).
BENCHMARK(BM_Recommend70BOn1024Gpus)
    ->Arg(static_cast<int>(fmte::Framework::kDeepspeed))
    ->Arg(static_cast<int>(fmte::Framework::kMegatron))
    ->Unit(benchmark::kMillisecond);

}  // namespace
