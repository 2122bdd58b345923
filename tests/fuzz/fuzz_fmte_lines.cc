// #FMTE key=value lines: each input line becomes "#FMTE <line>" in an otherwise plain batch script
// on 4 GPUs, which is then read and decided on as slurmctld does.
#include <string>

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fmte;
  const fuzz::World& world = fuzz::TheWorld();
  std::string script = "#!/bin/bash\n#SBATCH --gres=gpu:4\n";
  std::string_view rest = fuzz::AsText(data, size);
  while (!rest.empty()) {
    auto [line, tail] = fuzz::SplitAt(rest, '\n');
    rest = tail;
    script += "#FMTE ";
    script += line;
    script += '\n';
  }
  script += "torchrun --nproc_per_node 4 train.py\n";
  SlurmFacts facts;
  facts.tres_per_node = "gres:gpu:4";
  const JobRequest request = ParseJobRequest(script, {}, facts);
  const Decision decision = Decide(request, world.config, world.estimator);
  fuzz::RequireRecordRoundTrip(request, decision);
  return 0;
}
