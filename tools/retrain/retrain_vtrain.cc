// fmte-retrain vtrain --data FILE [--out DIR] ...: the former entry point of the step-time trainer,
// kept as an alias of `fmte-retrain train --kind vtrain FILE --into DIR --exact-dir` (without
// --out: cross-validation only, `--dry-run`). Same flags and output as before.
#include <iostream>

#include "cli.h"
#include "commands.h"
#include "job_options.h"
#include "retrain_kinds.h"

namespace fmte::retrain {

int RunVtrain(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description desc("vtrain options (alias of: train --kind vtrain)");
  desc.add_options()("data", po::value<std::string>(), "vTrain ground_truth CSV (required)")(
      "out", po::value<std::string>(),
      "directory to write efficiency.json, correction.json, manifest.json")(
      "gpu", po::value<std::string>()->default_value("A100-SXM4-80GB"),
      "GPU the data was measured on")("provenance", po::value<std::string>()->default_value(""),
                                      "where the data comes from (for the manifest)")(
      "folds", po::value<std::string>()->default_value("6"), "cross-validation folds")(
      "no-correction", po::bool_switch(), "fit the analytic constants only")(
      "force", po::bool_switch(), "install even when worse than the installed model");
  tools::AddCommonOptions(&desc);
  po::variables_map vm;
  if (Status s = tools::ParseFlags(desc, args, &vm); !s.ok())
    return cli::ReportError("fmte-retrain", s);
  if (tools::FlagSet(vm, "help")) {
    std::cout << tools::HelpText(
        "vtrain", "learn the step-time model from measured iteration times", desc, "fmte-retrain");
    return 0;
  }
  ReadFlags f;
  f.kind = "vtrain";
  const std::string data = tools::FlagString(vm, "data");
  if (data.empty())
    return cli::ReportError("fmte-retrain", Status::InvalidArgument("--data: required"));
  f.files = {data};
  Result<int64_t> folds = tools::ParseInt(tools::FlagString(vm, "folds"), "--folds", 2, 100);
  if (!folds.ok()) return cli::ReportError("fmte-retrain", folds.status());
  f.folds = static_cast<int>(*folds);
  f.folds_set = true;
  f.into = tools::FlagString(vm, "out");
  f.into_exact = true;
  f.dry_run = f.into.empty();
  f.gpu = tools::FlagString(vm, "gpu");
  f.provenance = tools::FlagString(vm, "provenance");
  f.no_correction = tools::FlagSet(vm, "no-correction");
  f.force = tools::FlagSet(vm, "force");
  f.json = tools::FlagSet(vm, "json");
  return TrainVtrainKind(f);
}

}  // namespace fmte::retrain
