// fmte-advise: ask fmte's estimator and admission policy by hand.
#include "cli.h"
#include "commands.h"

int main(int argc, char** argv) {
  using namespace fmte;
  static const std::vector<cli::Command> kCommands = {
      {"estimate", "per-GPU memory, step and wall time of one training job", advise::RunEstimate},
      {"recommend", "search parallel layouts for a model and GPU budget, ranked by time",
       advise::RunRecommend},
      {"fit", "what fits: largest micro-batch or sequence, fewest GPUs, catalog models",
       advise::RunFit},
      {"check", "the admission decision for a batch script, as the Slurm plugin would make it",
       advise::RunCheck},
      {"replay", "what enforce mode would have done to past jobs (batch scripts + sacct)",
       advise::RunReplay},
      {"zero", "DeepSpeed's ZeRO-2/3 model-state estimator table (cold)", advise::RunZero},
      {"tokens", "count a dataset's tokens and simulate batching (padding/packing)",
       advise::RunTokens},
      {"models", "list the model and GPU catalogs", advise::RunModels},
      {"serve", "the web calculator on this machine (estimate, guide, check, compare)",
       advise::RunServe},
      {"doctor", "check a site's slurm.conf, gres.conf, plugstack.conf and fmte.conf",
       advise::RunDoctor},
  };
  return cli::RunCommandTable(
      "fmte-advise", "Predicts GPU memory and time of LLM training jobs and says what would fit.",
      kCommands, argc, argv);
}
