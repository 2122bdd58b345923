// What an unknown model id costs the controller: ModelCatalog::Find on an id outside the catalog
// builds the "closest catalog ids" suggestion (edit distances to every catalog model). slurmctld
// pays this under its job write lock for every such submission, so it must stay far below a
// submission's own cost (~2 ms of controller CPU, scripts/ctld_cost.sh). Arg: the query's length
// (25 = a typical Hugging Face id outside the catalog; 512 = the longest model value
// the #FMTE reader accepts).
#include <benchmark/benchmark.h>

#include <string>

#include "fmte/model.h"

namespace {

void BM_FindUnknownModel(benchmark::State& state) {
  fmte::Result<fmte::ModelCatalog> catalog =
      fmte::ModelCatalog::LoadDir(std::string(FMTE_SOURCE_DIR) + "/etc/models");
  if (!catalog.ok()) {
    state.SkipWithError(catalog.status().ToString().c_str());
    return;
  }
  const size_t length = static_cast<size_t>(state.range(0));
  std::string id = "acme-research/Falcon-7B-v2";
  while (id.size() < length) id += "-instruct";
  id.resize(length);
  for (auto _ : state) {
    fmte::Result<const fmte::ModelArch*> model = catalog->Find(id);
    benchmark::DoNotOptimize(model);
  }
}
BENCHMARK(BM_FindUnknownModel)->Arg(25)->Arg(96)->Arg(512)->Unit(benchmark::kMicrosecond);

}  // namespace
