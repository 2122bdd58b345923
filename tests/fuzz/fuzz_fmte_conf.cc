// fmte.conf as a sysadmin writes it; a config that parses then decides a fixed LLM job (Llama 3.1
// 8B LoRA on 4 GPUs of the default partition), so every value it accepts reaches the policy.
#include "fmte/config.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fmte;
  const fuzz::World& world = fuzz::TheWorld();
  static const JobRequest* request = [] {
    SlurmFacts facts;
    facts.tres_per_node = "gres:gpu:4";
    facts.time_limit_min = 600;
    return new JobRequest(ParseJobRequest(
        "#!/bin/bash\n#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=4096 micro-batch=2\n"
        "torchrun --nproc_per_node 4 train.py\n",
        {}, facts));
  }();
  Result<Config> config = ParseConfig(fuzz::AsText(data, size));
  if (!config.ok()) return 0;
  const Decision decision = Decide(*request, *config, world.estimator);
  fuzz::RequireRecordRoundTrip(*request, decision);
  return 0;
}
