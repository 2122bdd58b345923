// fmte-retrain train --kind fm-csv FILE... --into DIR: the FM Training Estimator's data.csv rows
// (learn/fm_csv.h) as what they measure:
//   memory     -> per-GPU peak samples of the site memory correction (key sacct_memory_correction,
//                 DIR/sacct_memory_correction.json), trained and compared like the sacct kind;
//   throughput -> measured step times for the step-time correction (DIR/vtrain/correction.json,
//                 the model `--kind vtrain` trains), over the installed efficiency constants.
// vTrain CSV files given among FILE... (recognised by their header) add their step times.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "fmte/estimator.h"
#include "fmte/learn/correction_domain.h"
#include "fmte/learn/fm_csv.h"
#include "fmte/learn/install.h"
#include "fmte/learn/sacct_train.h"
#include "fmte/learn/vtrain.h"
#include "fmte/text.h"
#include "retrain_kinds.h"

namespace fmte::retrain {
namespace {

namespace fs = std::filesystem;

Result<std::string> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path + ": cannot read");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Inputs {
  std::vector<learn::FmCsvData> fm;
  std::vector<learn::StepTimeSample> vtrain;
};

Result<Inputs> ReadInputs(const ReadFlags& flags, const Catalogs& catalogs) {
  Inputs in;
  for (const std::string& file : flags.files) {
    Result<std::string> text = ReadAll(file);
    if (!text.ok()) return text.status();
    if (text->starts_with("# GPUs,")) {  // vTrain's ground_truth CSV
      Result<std::vector<learn::VtrainRow>> rows = learn::ParseVtrainCsv(*text, file);
      if (!rows.ok()) return rows.status();
      Result<const GpuSpec*> gpu =
          catalogs.gpus.Find(flags.gpu.empty() ? "A100-SXM4-80GB" : flags.gpu);
      if (!gpu.ok()) return gpu.status().WithContext("--gpu");
      const std::vector<int64_t> groups =
          learn::VtrainGroups(*rows, learn::VtrainGrouping::kConfig);
      for (size_t i = 0; i < rows->size(); ++i) {
        const learn::VtrainRow& r = (*rows)[i];
        in.vtrain.push_back({file + ":" + std::to_string(i + 2), learn::VtrainGptArch(r),
                             learn::VtrainJob(r, (*gpu)->name), *gpu, learn::VtrainCluster(),
                             r.iteration_s, "vtrain|" + file + "|" + std::to_string(groups[i])});
      }
      continue;
    }
    learn::FmCsvReadOptions o;
    o.strict = flags.strict;
    Result<learn::FmCsvData> d = learn::ParseFmCsv(*text, file, o);
    if (!d.ok()) return d.status();
    in.fm.push_back(std::move(d).value());
  }
  return in;
}

// efficiency.json of `base_dir` pointing at the new correction, with its held-out residuals.
Result<std::string> EfficiencyWithCorrection(const std::string& base_dir,
                                             const learn::StepCorrectionOutcome& o, double clamp) {
  Result<std::string> text = ReadAll(base_dir + "/efficiency.json");
  if (!text.ok()) return text.status();
  nlohmann::json e = nlohmann::json::parse(*text, nullptr, false);
  if (!e.is_object()) return Status::ParseError(base_dir + "/efficiency.json: not a JSON object");
  // The correction's domain, re-measured on the new rows, when the installed one restricts it.
  const bool restricts = e.contains("correction") && e["correction"].is_object() &&
                         e["correction"].contains("domain") &&
                         e["correction"]["domain"].is_object();
  e["correction"] = learn::CorrectionBlockJson(restricts ? &o.domain : nullptr, clamp);
  e["heldout_log_residuals"] = o.heldout_log_residuals;
  return e.dump(1) + "\n";
}

}  // namespace

int TrainFmCsvKind(const ReadFlags& flags) {
  Result<Catalogs> catalogs = LoadCatalogs();
  if (!catalogs.ok()) return cli::ReportError("fmte-retrain", catalogs.status());
  Result<Inputs> in = ReadInputs(flags, *catalogs);
  if (!in.ok()) return cli::ReportError("fmte-retrain", in.status());
  learn::FmJobOptions jo;
  jo.gpu = flags.gpu;
  jo.vocab_size = flags.vocab;
  jo.tps_per_gpu = flags.tps_per_gpu;
  if (!flags.precision.empty()) {
    Result<Precision> p = ParsePrecision(flags.precision, "--precision");
    if (!p.ok()) return cli::ReportError("fmte-retrain", p.status());
    jo.precision = *p;
  }
  learn::FmSamples s = learn::BuildFmSamples(in->fm, *catalogs, jo);
  for (const learn::StepTimeSample& v : in->vtrain) s.steps.push_back(v);

  nlohmann::json out = {{"kind", "fm-csv"},
                        {"rows", s.rows},
                        {"mapped", s.mapped},
                        {"vtrain_rows", in->vtrain.size()},
                        {"skipped", s.skipped}};
  nlohmann::json files = nlohmann::json::array(), unmapped = nlohmann::json::array();
  for (const learn::FmCsvData& d : in->fm) {
    nlohmann::json lines = nlohmann::json::array(), details = nlohmann::json::array();
    for (const auto& m : d.malformed) {
      lines.push_back(m.line);
      details.push_back({{"line", m.line}, {"reason", m.reason}});
    }
    files.push_back({{"file", d.origin},
                     {"format", learn::ToString(d.format)},
                     {"rows", d.rows.size()},
                     {"malformed", d.malformed.size()},
                     {"malformed_lines", lines},
                     {"malformed_details", details}});
  }
  for (const learn::FmUnmapped& u : s.unmapped) {
    unmapped.push_back({{"file", u.origin}, {"line", u.line}, {"reason", u.reason}});
  }
  out["files"] = files;
  out["unmapped"] = unmapped;
  std::vector<std::string> refusals;
  const std::string into = flags.into;

  // Memory: the sacct kind's trainer on these samples (time target empty).
  learn::SacctTrainOptions mo;
  mo.folds = flags.folds;
  mo.seed = flags.seed;
  mo.installed_dir = flags.dry_run ? "" : into;
  Result<learn::SacctTrainOutcome> mem = learn::TrainSacct(s.memory, mo);
  if (!mem.ok()) return cli::ReportError("fmte-retrain", mem.status());
  const learn::TargetOutcome& mt = mem->targets[1];
  nlohmann::json mj = {
      {"key", mt.key}, {"trained", mt.trained}, {"rows", mt.rows}, {"groups", mt.groups}};
  if (!mt.trained) mj["skipped_reason"] = mt.skipped_reason;
  if (mt.trained) {
    mj["cv_mean_abs_rel_error"] = mt.cv.mean_abs_rel_error;
    mj["core_mean_abs_rel_error"] = mt.comparison.plugin;
    mj["installed_mean_abs_rel_error"] = mt.comparison.installed;
    const bool worse = learn::WorseThanInstalled(mt);
    if (worse) {
      refusals.push_back(mt.key + ": held-out error " + std::to_string(mt.comparison.new_model) +
                         " > installed " + std::to_string(mt.comparison.installed) +
                         " on the same rows");
    }
    if (!flags.dry_run && (!worse || flags.force)) {
      nlohmann::json entry = {
          {"features", learn::SacctFeatureNames()},
          {"target",
           "log(per-GPU peak bytes / core prediction), FM Training Estimator data.csv rows"},
          {"apply",
           "prediction x exp(model(features)); features: fmte::SiteFeatures(job, pred_time_s, "
           "pred_mem_bytes, cap_bytes) (site_correction.h)"},
          {"rows", mt.rows},
          {"groups", mt.groups},
          {"censored_rows", 0},
          {"cv_mean_abs_rel_error", mt.cv.mean_abs_rel_error},
          {"cv_p90_abs_rel_error", mt.cv.p90_abs_rel_error},
          {"plugin_mean_abs_rel_error", mt.comparison.plugin},
          {"log_residual_quantiles",
           {{"p50", mt.log_residual_quantiles[0]},
            {"p90", mt.log_residual_quantiles[1]},
            {"p95", mt.log_residual_quantiles[2]}}},
          {"data", {{"source", "fm-csv"}, {"files", flags.files}}}};
      nlohmann::json cmp = {{"new", mt.comparison.new_model},
                            {"installed", mt.comparison.installed},
                            {"rows", mt.comparison.rows},
                            {"basis", "same rows, new model out of fold"}};
      const Status st = learn::InstallModels(
          into, {{mt.key, mt.key + ".json", mt.model_json, entry.dump()}},
          nlohmann::json({{"retrain_fm_csv", RetrainBlock(flags, "fm-csv", cmp)}}).dump());
      if (!st.ok()) return cli::ReportError("fmte-retrain", st);
      mj["installed"] = into + "/" + mt.key + ".json";
    }
  }
  out["memory"] = mj;

  // Step time: the correction over the installed (else shipped) efficiency constants.
  const std::string vdir =
      flags.dry_run ? "" : KindDir(into, "vtrain", "efficiency.json");  // --exact-dir: n/a
  std::error_code ec;
  const bool have_installed = !vdir.empty() && fs::exists(vdir + "/efficiency.json", ec);
  const std::string base_dir = have_installed ? vdir : TimeModel::DefaultDir();
  Result<TimeModel> base = TimeModel::LoadDir(base_dir);
  if (!base.ok())
    return cli::ReportError("fmte-retrain", base.status().WithContext("efficiency constants"));
  learn::StepCorrectionOptions so;
  so.folds = flags.folds;
  so.seed = flags.seed;
  Result<learn::StepCorrectionOutcome> st =
      learn::TrainStepTimeCorrection(s.steps, *base, have_installed ? &*base : nullptr, so);
  if (!st.ok()) return cli::ReportError("fmte-retrain", st.status());
  nlohmann::json sj = {{"key", "step_time_correction"},
                       {"trained", st->trained},
                       {"rows", st->rows},
                       {"groups", st->groups},
                       {"efficiency_from", base_dir}};
  if (!st->trained) sj["skipped_reason"] = st->skipped_reason;
  if (st->trained) {
    sj["analytic_mape"] = st->analytic_mape;
    sj["cv_mape"] = st->new_mape;
    sj["cv_p90_ape"] = st->new_p90_ape;
    sj["installed_mape"] = st->installed_mape;
    const bool worse = st->installed_mape >= 0 && st->new_mape > st->installed_mape;
    if (worse) {
      refusals.push_back("step_time_correction: held-out MAPE " + std::to_string(st->new_mape) +
                         " > installed " + std::to_string(st->installed_mape) +
                         " on the same rows");
    }
    if (!flags.dry_run && (!worse || flags.force)) {
      Result<std::string> eff = EfficiencyWithCorrection(base_dir, *st, so.clamp_log);
      if (!eff.ok()) return cli::ReportError("fmte-retrain", eff.status());
      nlohmann::json entry = {{"features", StepTimeFeatureNames()},
                              {"label", "log(measured step time / analytic step time)"},
                              {"rows", st->rows},
                              {"groups", st->groups},
                              {"cv_mape", st->new_mape},
                              {"analytic_mape", st->analytic_mape},
                              {"efficiency_from", base_dir}};
      nlohmann::json cmp = {
          {"new", st->new_mape},
          {"installed", st->installed_mape},
          {"basis", "same rows; installed model scored with its own constants and correction"}};
      const Status is = learn::InstallModels(
          vdir,
          {{"step_time_correction", "correction.json", st->model_json, entry.dump()},
           {"step_time_efficiency", "efficiency.json", *eff,
            nlohmann::json({{"note",
                             "constants unchanged, "
                             "correction replaced"}})
                .dump()}},
          nlohmann::json({{"retrain_fm_csv", RetrainBlock(flags, "fm-csv", cmp)}}).dump());
      if (!is.ok()) return cli::ReportError("fmte-retrain", is);
      sj["installed"] = vdir + "/correction.json";
    }
  }
  out["step_time"] = sj;
  out["refusals"] = refusals;
  const bool nothing = !mt.trained && !st->trained;
  int rc = nothing || (!refusals.empty() && !flags.force) ? cli::kExitFailure : cli::kExitOk;
  if (flags.json) {
    std::cout << out.dump(1) << "\n";
  } else {
    std::cout << "rows:        " << s.rows << " (" << s.mapped << " mapped to jobs";
    if (!in->vtrain.empty()) std::cout << ", plus " << in->vtrain.size() << " vTrain step times";
    std::cout << ")\n";
    for (const auto& f : files) {
      std::cout << "  " << f["file"].get<std::string>() << ": format "
                << f["format"].get<std::string>() << ", " << f["rows"] << " rows, "
                << f["malformed"] << " malformed\n";
      for (const auto& d : f["malformed_details"]) {
        std::cout << "    line " << d["line"] << ": " << d["reason"].get<std::string>() << "\n";
      }
    }
    for (const learn::FmUnmapped& u : s.unmapped)
      std::cout << "  " << u.origin << ":" << u.line << ": " << u.reason << "\n";
    for (const auto& [reason, n] : s.skipped)
      std::cout << "skipped:     " << n << " " << reason << "\n";
    auto line = [](const char* what, const nlohmann::json& j, const char* err) {
      std::cout << what
                << (j["trained"].get<bool>()
                        ? "trained on " + j["rows"].dump() + " rows, held-out error " +
                              std::to_string(100 * j[err].get<double>()).substr(0, 5) + "%"
                        : "not trained: " + j["skipped_reason"].get<std::string>());
      if (j.contains("installed")) std::cout << " -> " << j["installed"].get<std::string>();
      std::cout << "\n";
    };
    line("memory:      ", mj, "cv_mean_abs_rel_error");
    line("step time:   ", sj, "cv_mape");
  }
  if (nothing) std::cerr << "fmte-retrain: error: nothing trained (see the counts above)\n";
  for (const std::string& r : refusals) PrintRefusal(r, flags.force);
  return rc;
}

}  // namespace fmte::retrain
