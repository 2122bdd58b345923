// fmte-retrain: learn from the cluster's own accounting exports (sacct) and other measurements.
#include "cli.h"
#include "commands.h"

int main(int argc, char** argv) {
  using namespace fmte;
  static const std::vector<cli::Command> kCommands = {
      {"read", "summarise what a sacct export holds (rows, jobs, states, fmte records)",
       retrain::RunRead},
      {"train",
       "train any shipped model (--kind sacct|vtrain|operators|fm-csv), validate, install "
       "atomically",
       retrain::RunTrain},
      {"vtrain", "alias of 'train --kind vtrain': the step-time model from vTrain CSVs",
       retrain::RunVtrain},
  };
  return cli::RunCommandTable("fmte-retrain",
                              "Learns fmte's regressors from sacct exports and measured samples.",
                              kCommands, argc, argv);
}
