// Speed of the native XGBoost evaluator (one regressor call) and of a whole operator-level
// composition (the llemma example, ~60 regressor calls) with the shipped Perlmutter regressors.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "fmte/operator_time.h"
#include "fmte/tree_model.h"

namespace {

const std::string kRegressors = std::string(FMTE_SOURCE_DIR) + "/regressors/Perlmutter";

void BM_TreeModelPredict(benchmark::State& state) {
  fmte::Result<fmte::TreeModel> m =
      fmte::TreeModel::LoadFile(kRegressors + "/operator/linear1_fwd.json");
  if (!m.ok()) {
    state.SkipWithError(m.status().ToString().c_str());
    return;
  }
  float row[3] = {14.0f, 12.0f, 12.6f};
  for (auto _ : state) {
    row[0] += 1e-7f;  // defeat caching of the result
    benchmark::DoNotOptimize(m->Predict(row));
  }
  state.counters["trees"] = static_cast<double>(m->num_trees());
}
BENCHMARK(BM_TreeModelPredict);

void BM_ComposeLlemma(benchmark::State& state) {
  fmte::Result<fmte::OperatorModels> m = fmte::OperatorModels::Load(kRegressors);
  std::ifstream in(std::string(FMTE_SOURCE_DIR) + "/tests/data/operators/llemma_7b_4_2_2_P.yml");
  std::ostringstream ss;
  ss << in.rdbuf();
  fmte::Result<fmte::PipelineConfig> c = fmte::ParsePipelineConfig(ss.str());
  if (!m.ok() || !c.ok()) {
    state.SkipWithError("regressors or config missing");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(fmte::ComposeBatchTime(*c, *m));
}
BENCHMARK(BM_ComposeLlemma);

}  // namespace
