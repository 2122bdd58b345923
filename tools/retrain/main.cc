// fmte-retrain: learn from the cluster's own accounting exports (sacct) and other measurements.
#include "cli.h"
#include "commands.h"

int main(int argc, char** argv) {
  using namespace fmte;
  static const std::vector<cli::Command> kCommands = {
      {"read", "summarise what a sacct export holds (rows, jobs, states, fmte records)", retrain::RunRead},
      {"train", "train regressors from exports and samples, validate, install atomically", retrain::RunTrain},
      {"vtrain", "learn the step-time model from measured iteration times (vTrain CSV)", retrain::RunVtrain},
  };
  return cli::RunCommandTable("fmte-retrain",
                              "Learns fmte's regressors from sacct exports and measured samples.",
                              kCommands, argc, argv);
}
