// etc/gpus.csv (a site adds its own GPUs); a catalog that parses answers lookups, and a fixed job
// (Llama 3.1 8B, LoRA) is estimated on each of its GPUs, so every figure it accepts reaches the
// memory and time models.
#include "fmte/gpu.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fmte;
  const fuzz::World& world = fuzz::TheWorld();
  Result<GpuCatalog> catalog = GpuCatalog::ParseCsv(fuzz::AsText(data, size), "gpus.csv");
  if (!catalog.ok()) return 0;
  static const ModelArch* model =
      *world.estimator.catalogs().models.Find("meta-llama/Llama-3.1-8B");
  TrainingJob job;
  job.method = Method::kLora;
  (void)catalog->Closest("a100");
  (void)catalog->Find("H100");
  int n = 0;
  for (const std::string& name : catalog->Names()) {
    Result<const GpuSpec*> gpu = catalog->Find(name);
    fuzz::Require(gpu.ok(), "every canonical name is found");
    if (++n <= 8) (void)world.estimator.Estimate(*model, job, **gpu);
  }
  return 0;
}
