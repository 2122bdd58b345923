// A model's config.json (a path the launch line names, the Hugging Face cache, FMTE_ARCH); one that
// parses is estimated as full fine-tuning with FSDP on 8 GPUs and as LoRA on 1, on an H100.
#include "fmte/model.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fmte;
  const fuzz::World& world = fuzz::TheWorld();
  Result<ModelArch> model = ParseModelConfig(fuzz::AsText(data, size), "fuzz/model");
  if (!model.ok()) return 0;
  static const GpuSpec* gpu = *world.estimator.catalogs().gpus.Find("H100-SXM5-80GB");
  TrainingJob full;
  full.method = Method::kFull;
  full.gpus = 8;
  full.gpus_per_node = 8;
  full.sharding = Sharding::kFsdpFull;
  full.seq_len = 2048;
  (void)world.estimator.Estimate(*model, full, *gpu);
  TrainingJob lora;
  lora.method = Method::kLora;
  (void)world.estimator.Estimate(*model, lora, *gpu);
  return 0;
}
