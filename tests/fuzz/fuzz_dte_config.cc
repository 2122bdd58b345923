// The Distributed Training Estimator's target config (target_config/*.yml); one that parses is
// composed into a batch time with the shipped Perlmutter operator regressors.
#include "fmte/operator_time.h"
#include "fmte/text.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fmte;
  static const OperatorModels* models = [] {
    Result<OperatorModels> m = OperatorModels::Load(RegressorsDir() + "/Perlmutter");
    fuzz::Require(m.ok(), "regressors/Perlmutter loads");
    return new OperatorModels(std::move(m).value());
  }();
  Result<PipelineConfig> config = ParsePipelineConfig(fuzz::AsText(data, size));
  if (!config.ok()) return 0;
  (void)ComposeBatchTime(*config, *models);
  return 0;
}
