// fmte-retrain train --kind vtrain FILE... --into DIR: the step-time model (efficiency constants +
// correction, learn/vtrain.h) from measured iteration times in vTrain's CSV format, staged,
// compared with the installed model, installed into DIR/vtrain (or DIR itself when it is one).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "fmte/gpu.h"
#include "fmte/learn/vtrain.h"
#include "fmte/time.h"
#include "retrain_kinds.h"

namespace fmte::retrain {
namespace {

namespace fs = std::filesystem;

// The default of the former `fmte-retrain vtrain --gpu` (vTrain ran on 8x A100 SXM4 80GB).
constexpr const char* kDefaultGpu = "A100-SXM4-80GB";

Result<std::vector<learn::VtrainRow>> ReadRows(const std::vector<std::string>& files) {
  std::vector<learn::VtrainRow> rows;
  for (const std::string& file : files) {
    std::ifstream in(file);
    if (!in) return Status::IoError(file + ": cannot read");
    std::stringstream ss;
    ss << in.rdbuf();
    Result<std::vector<learn::VtrainRow>> r = learn::ParseVtrainCsv(ss.str(), file);
    if (!r.ok()) return r.status();
    rows.insert(rows.end(), r->begin(), r->end());
  }
  return rows;
}

// Mean |pred - measured| / measured of an installed model on `rows`.
Result<double> InstalledMape(const TimeModel& model, const std::vector<learn::VtrainRow>& rows,
                             const GpuSpec& gpu) {
  double sum = 0;
  for (const learn::VtrainRow& r : rows) {
    Result<TimeEstimate> e = EstimateStepTime(
        learn::VtrainGptArch(r), learn::VtrainJob(r, gpu.name), gpu, learn::VtrainCluster(), model);
    if (!e.ok()) return e.status();
    sum += std::fabs(e->step_time_s - r.iteration_s) / r.iteration_s;
  }
  return sum / static_cast<double>(rows.size());
}

// The comparison with the installed model on the same held-out groups: when the installed manifest
// was cross-validated on as many rows with as many folds, its held-out error is on the same groups
// (the fold assignment is seeded and deterministic); otherwise the installed model is scored on the
// new rows, which it has not seen.
nlohmann::json Compare(const std::string& dir, const learn::VtrainCvReport& rep,
                       const std::vector<learn::VtrainRow>& rows, const GpuSpec& gpu) {
  nlohmann::json c = {{"new_mape", rep.corrected_mape}, {"installed_mape", nullptr}};
  std::error_code ec;
  if (!fs::exists(dir + "/efficiency.json", ec)) {
    c["basis"] = "no installed model";
    return c;
  }
  std::ifstream in(dir + "/manifest.json");
  const nlohmann::json m = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  if (m.is_object() && m.contains("cross_validation") && m["cross_validation"].is_array() &&
      !m["cross_validation"].empty() && m["cross_validation"][0].is_object()) {
    const nlohmann::json& cv = m["cross_validation"][0];
    if (cv.value("rows", -1) == rep.rows && cv.value("folds", -1) == rep.folds &&
        cv.value("groups", -1) == rep.groups && cv.contains("corrected_mape")) {
      c["installed_mape"] = cv["corrected_mape"];
      c["basis"] = "same rows, groups and folds: the installed manifest's held-out error";
      return c;
    }
  }
  Result<TimeModel> installed = TimeModel::LoadDir(dir);
  if (!installed.ok()) {
    c["basis"] = "installed model unreadable (" + installed.status().message() + "): not compared";
    return c;
  }
  Result<double> mape = InstalledMape(*installed, rows, gpu);
  if (!mape.ok()) {
    c["basis"] = "installed model cannot estimate these rows (" + mape.status().message() +
                 "): not compared";
    return c;
  }
  c["installed_mape"] = *mape;
  c["basis"] = "installed model scored on the new rows (different data from its own)";
  return c;
}

}  // namespace

int TrainVtrainKind(const ReadFlags& flags) {
  Result<std::vector<learn::VtrainRow>> rows = ReadRows(flags.files);
  if (!rows.ok()) return cli::ReportError("fmte-retrain", rows.status());
  Result<GpuCatalog> gpus = GpuCatalog::LoadCsv(GpuCatalog::DefaultPath());
  if (!gpus.ok()) return cli::ReportError("fmte-retrain", gpus.status());
  Result<const GpuSpec*> gpu = gpus->Find(flags.gpu.empty() ? kDefaultGpu : flags.gpu);
  if (!gpu.ok()) return cli::ReportError("fmte-retrain", gpu.status().WithContext("--gpu"));

  learn::VtrainTrainOptions opt;
  opt.folds = flags.folds_set ? flags.folds : 6;
  opt.seed = flags.seed;
  opt.correction = !flags.no_correction;
  learn::VtrainCvReport rep;
  nlohmann::json out = {{"kind", "vtrain"}};
  int rc = cli::kExitOk;
  std::string dir;
  if (flags.dry_run) {
    Result<learn::VtrainCvReport> cv = learn::CrossValidateVtrain(*rows, **gpu, opt);
    if (!cv.ok()) return cli::ReportError("fmte-retrain", cv.status());
    rep = *cv;
  } else {
    dir = flags.into_exact ? flags.into : KindDir(flags.into, "vtrain", "efficiency.json");
    Staging staging(dir);
    if (!staging.status().ok()) return cli::ReportError("fmte-retrain", staging.status());
    // The trainer picks up GEMM curves beside its output (gemm.json): give it the installed ones.
    std::error_code ec;
    if (fs::exists(dir + "/gemm.json", ec))
      fs::copy_file(dir + "/gemm.json", staging.path() + "/gemm.json", ec);
    const Status s =
        learn::TrainVtrainModel(*rows, **gpu, opt, flags.provenance, staging.path(), &rep);
    if (!s.ok()) return cli::ReportError("fmte-retrain", s);
    const nlohmann::json cmp = Compare(dir, rep, *rows, **gpu);
    const bool worse = cmp["installed_mape"].is_number() &&
                       rep.corrected_mape > cmp["installed_mape"].get<double>() + 1e-12;
    out["comparison"] = cmp;
    if (worse) {
      PrintRefusal("new model's held-out MAPE " + std::to_string(rep.corrected_mape) +
                       " > installed " + std::to_string(cmp["installed_mape"].get<double>()),
                   flags.force);
    }
    if (!worse || flags.force) {
      std::vector<std::string> installed;
      const Status is =
          InstallStaged(staging.path(), dir, RetrainBlock(flags, "vtrain", cmp), &installed);
      if (!is.ok()) return cli::ReportError("fmte-retrain", is);
      out["installed"] = installed;
    } else {
      rc = cli::kExitFailure;
    }
  }
  out["into"] = dir;
  out["rows"] = rep.rows;
  out["groups"] = rep.groups;
  out["folds"] = rep.folds;
  out["analytic_mape"] = rep.analytic_mape;
  out["corrected_mape"] = rep.corrected_mape;
  out["analytic_p90_ape"] = rep.analytic_p90_ape;
  out["corrected_p90_ape"] = rep.corrected_p90_ape;
  if (flags.json) {
    std::cout << out.dump(1) << "\n";
    return rc;
  }
  std::printf("rows %lld in %lld held-out configuration groups, %d folds\n",
              static_cast<long long>(rep.rows), static_cast<long long>(rep.groups), rep.folds);
  std::printf("held-out MAPE: analytic %.2f%%, analytic+correction %.2f%% (p90 %.2f%% / %.2f%%)\n",
              100 * rep.analytic_mape, 100 * rep.corrected_mape, 100 * rep.analytic_p90_ape,
              100 * rep.corrected_p90_ape);
  if (out.contains("installed")) {
    if (flags.into_exact) {  // the former `fmte-retrain vtrain --out DIR` line
      std::printf("wrote %s/{efficiency,correction,manifest}.json\n", dir.c_str());
    } else {
      std::printf("installed into %s (%s)\n", dir.c_str(),
                  out["comparison"].value("basis", "").c_str());
    }
  }
  return rc;
}

}  // namespace fmte::retrain
