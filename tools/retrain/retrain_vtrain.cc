// fmte-retrain vtrain: learn the step-time model (efficiency constants + correction) from measured
// iteration times in vTrain's CSV format, report grouped cross-validation, write regressors/vtrain.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli.h"
#include "commands.h"
#include "fmte/gpu.h"
#include "fmte/learn/vtrain.h"
#include "job_options.h"

namespace fmte::retrain {

int RunVtrain(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description desc("vtrain options");
  desc.add_options()("data", po::value<std::string>(), "vTrain ground_truth CSV (required)")(
      "out", po::value<std::string>(), "directory to write efficiency.json, correction.json, manifest.json")(
      "gpu", po::value<std::string>()->default_value("A100-SXM4-80GB"), "GPU the data was measured on")(
      "provenance", po::value<std::string>()->default_value(""), "where the data comes from (for the manifest)")(
      "folds", po::value<std::string>()->default_value("6"), "cross-validation folds")(
      "no-correction", po::bool_switch(), "fit the analytic constants only");
  tools::AddCommonOptions(&desc);
  po::variables_map vm;
  if (Status s = tools::ParseFlags(desc, args, &vm); !s.ok()) return cli::ReportError("fmte-retrain", s);
  if (tools::FlagSet(vm, "help")) {
    std::cout << tools::HelpText("vtrain", "learn the step-time model from measured iteration times", desc);
    return 0;
  }
  const std::string data = tools::FlagString(vm, "data");
  if (data.empty()) return cli::ReportError("fmte-retrain", Status::InvalidArgument("--data: required"));
  Result<int64_t> folds = tools::ParseInt(tools::FlagString(vm, "folds"), "--folds", 2, 100);
  if (!folds.ok()) return cli::ReportError("fmte-retrain", folds.status());
  std::ifstream in(data);
  if (!in) return cli::ReportError("fmte-retrain", Status::IoError(data + ": cannot read"));
  std::stringstream ss;
  ss << in.rdbuf();
  Result<std::vector<learn::VtrainRow>> rows = learn::ParseVtrainCsv(ss.str(), data);
  if (!rows.ok()) return cli::ReportError("fmte-retrain", rows.status());
  Result<GpuCatalog> gpus = GpuCatalog::LoadCsv(GpuCatalog::DefaultPath());
  if (!gpus.ok()) return cli::ReportError("fmte-retrain", gpus.status());
  Result<const GpuSpec*> gpu = gpus->Find(tools::FlagString(vm, "gpu"));
  if (!gpu.ok()) return cli::ReportError("fmte-retrain", gpu.status());

  learn::VtrainTrainOptions opt;
  opt.folds = static_cast<int>(*folds);
  opt.correction = !tools::FlagSet(vm, "no-correction");
  learn::VtrainCvReport rep;
  Status s;
  const std::string out = tools::FlagString(vm, "out");
  if (out.empty()) {
    Result<learn::VtrainCvReport> cv = learn::CrossValidateVtrain(*rows, **gpu, opt);
    if (!cv.ok()) return cli::ReportError("fmte-retrain", cv.status());
    rep = *cv;
  } else {
    s = learn::TrainVtrainModel(*rows, **gpu, opt, tools::FlagString(vm, "provenance"), out, &rep);
    if (!s.ok()) return cli::ReportError("fmte-retrain", s);
  }
  nlohmann::json j = {{"rows", rep.rows},           {"groups", rep.groups},
                      {"folds", rep.folds},         {"analytic_mape", rep.analytic_mape},
                      {"corrected_mape", rep.corrected_mape}, {"analytic_p90_ape", rep.analytic_p90_ape},
                      {"corrected_p90_ape", rep.corrected_p90_ape}};
  if (tools::FlagSet(vm, "json")) {
    std::cout << j.dump(1) << "\n";
  } else {
    std::printf("rows %lld in %lld held-out configuration groups, %d folds\n", static_cast<long long>(rep.rows),
                static_cast<long long>(rep.groups), rep.folds);
    std::printf("held-out MAPE: analytic %.2f%%, analytic+correction %.2f%% (p90 %.2f%% / %.2f%%)\n",
                100 * rep.analytic_mape, 100 * rep.corrected_mape, 100 * rep.analytic_p90_ape,
                100 * rep.corrected_p90_ape);
    if (!out.empty()) std::printf("wrote %s/{efficiency,correction,manifest}.json\n", out.c_str());
  }
  return 0;
}

}  // namespace fmte::retrain
