// fmte-retrain train FILE... [--fields LIST] --into DIR [--force] [--json]
//   [--kind sacct|vtrain|operators|fm-csv] [--svg-dir DIR] [--report FILE] [--folds N] [--seed N]
//   [--strict]
// Contract (docs/retrain.md): trains from sacct exports and installs into DIR (a regressors
// directory), refusing a model worse than the installed one unless --force. The other kinds build
// the other shipped models with the same install rules (retrain_kind_*.cc).
#include <algorithm>
#include <ctime>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "commands.h"
#include "fmte/learn/install.h"
#include "fmte/learn/report.h"
#include "fmte/learn/sacct_train.h"
#include "fmte/learn/training_set.h"
#include "fmte/learn/version.h"
#include "html_report.h"
#include "retrain_common.h"
#include "retrain_kinds.h"

namespace fmte::retrain {
namespace {

constexpr const char* kUsage =
    "usage: fmte-retrain train FILE... [--fields LIST] --into DIR [--force] [--json]\n"
    "         [--kind sacct|vtrain|operators|fm-csv] [--folds N] [--seed N] [--strict] "
    "[--dry-run]\n"
    "  sacct:     [--svg-dir DIR] [--report FILE] [--gpumem-per-gpu]      (FILE: sacct exports)\n"
    "  vtrain:    [--gpu NAME] [--provenance TEXT] [--no-correction] [--exact-dir]  (FILE: vTrain "
    "CSVs)\n"
    "  operators: --cluster NAME [--rounds N] [--depth D] [--eta E] [--threads T] [--exact-dir]\n"
    "             (FILE: one samples directory with operator/ and nccl/)\n"
    "  fm-csv:    [--gpu NAME] [--precision NAME] [--vocab N] [--tps-per-gpu]\n"
    "             (FILE: FM Training Estimator data.csv v1/v2/v3, and vTrain CSVs)";

std::string EntryJson(const learn::TargetOutcome& t, const learn::TrainingSets& sets) {
  nlohmann::json e;
  e["features"] = learn::SacctFeatureNames();
  e["target"] = t.what == "time"
                    ? "log(elapsed_s / record.pred_time_s), completed runs"
                    : "log(per-GPU peak bytes / record.pred_mem), runs with a measured peak";
  e["apply"] =
      "prediction x exp(model(features)); features: fmte::SiteFeatures(job, pred_time_s, "
      "pred_mem_bytes, cap_bytes) (site_correction.h)";
  e["rows"] = t.rows;
  e["groups"] = t.groups;
  e["censored_rows"] = t.censored;
  e["cv_mean_abs_rel_error"] = t.cv.mean_abs_rel_error;
  e["cv_p90_abs_rel_error"] = t.cv.p90_abs_rel_error;
  e["plugin_mean_abs_rel_error"] = t.comparison.plugin;
  e["log_residual_quantiles"] = {{"p50", t.log_residual_quantiles[0]},
                                 {"p90", t.log_residual_quantiles[1]},
                                 {"p95", t.log_residual_quantiles[2]}};
  e["data"] = {{"first_end", FormatTime(sets.first_end_time)},
               {"last_end", FormatTime(sets.last_end_time)},
               {"first_end_unix", sets.first_end_time},
               {"last_end_unix", sets.last_end_time}};
  return e.dump();
}

Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return Status::IoError(path + ": cannot write");
  return Status::Ok();
}

}  // namespace

int RunTrain(const std::vector<std::string>& args) {
  Result<ReadFlags> flags = ParseReadFlags(args, "train", kUsage);
  if (!flags.ok()) return cli::ReportError("fmte-retrain", flags.status());
  if (flags->help) return cli::kExitOk;
  if (flags->kind == "vtrain") return TrainVtrainKind(*flags);
  if (flags->kind == "operators") return TrainOperatorsKind(*flags);
  if (flags->kind == "fm-csv") return TrainFmCsvKind(*flags);
  if (flags->kind != "sacct") {
    return cli::ReportError("fmte-retrain",
                            Status::InvalidArgument("--kind: expected sacct, vtrain, operators or "
                                                    "fm-csv, got '" +
                                                    flags->kind + "'"));
  }
  if (flags->dry_run) {
    return cli::ReportError("fmte-retrain",
                            Status::InvalidArgument("--dry-run: not available for --kind sacct"));
  }
  Result<ReadResult> read = ReadExports(*flags);
  if (!read.ok()) return cli::ReportError("fmte-retrain", read.status());
  const learn::TrainingSets sets = learn::BuildSacctTrainingSets(read->jobs);
  learn::SacctTrainOptions options;
  options.folds = flags->folds;
  options.seed = flags->seed;
  options.installed_dir = flags->into;
  Result<learn::SacctTrainOutcome> outcome = learn::TrainSacct(sets, options);
  if (!outcome.ok()) return cli::ReportError("fmte-retrain", outcome.status());

  learn::RetrainReport report;
  report.files = flags->files;
  report.stats = &read->stats;
  report.summary = learn::Summarise(read->jobs);
  report.sets = &sets;
  report.outcome = &*outcome;
  report.into = flags->into;
  report.forced = flags->force;

  std::vector<learn::ModelToInstall> models;
  for (const learn::TargetOutcome& t : outcome->targets) {
    if (!t.trained) continue;
    if (learn::WorseThanInstalled(t)) {
      report.refusals.push_back(t.key + ": new model's mean |error| " +
                                std::to_string(t.comparison.new_model) + " > installed " +
                                std::to_string(t.comparison.installed) + " on the same " +
                                std::to_string(t.comparison.rows) + " jobs");
      if (!flags->force) continue;  // the installed one stays; better targets are still installed
    }
    models.push_back({t.key, t.key + ".json", t.model_json, EntryJson(t, sets)});
  }
  int rc = report.refusals.empty() || flags->force ? cli::kExitOk : cli::kExitFailure;
  const bool any_trained = std::any_of(outcome->targets.begin(), outcome->targets.end(),
                                       [](const learn::TargetOutcome& t) { return t.trained; });
  if (!any_trained) {
    report.refusals.push_back(
        "nothing trained: too few jobs with an fmte record and a measured outcome");
    rc = cli::kExitFailure;
  }
  if (!models.empty()) {
    nlohmann::json top;
    top["retrain"] = {
        {"installed_at", FormatTime(static_cast<int64_t>(std::time(nullptr)))},
        {"sources", flags->files},
        {"features", learn::SacctFeatureNames()},
        {"data",
         {{"first_end", FormatTime(sets.first_end_time)},
          {"last_end", FormatTime(sets.last_end_time)}}},
        {"rows",
         {{"read", read->stats.rows},
          {"jobs", sets.jobs},
          {"with_record", sets.with_record},
          {"time", sets.time.x.rows},
          {"time_censored", sets.time.x_censored.rows},
          {"memory", sets.memory.x.rows},
          {"memory_censored", sets.memory.x_censored.rows}}},
        {"errors",
         {{"malformed_lines", read->stats.malformed},
          {"fmte_record_errors", read->stats.record_errors},
          {"jobstats_errors", read->stats.jobstats_errors}}},
        {"skipped", sets.skipped},
        {"xgboost_version", learn::XgboostVersion()},
        {"params", nlohmann::json::parse(outcome->params.ToJson(), nullptr, false)},
        {"forced", flags->force && !report.refusals.empty()},
    };
    const Status s = learn::InstallModels(flags->into, models, top.dump());
    if (!s.ok()) return cli::ReportError("fmte-retrain", s);
    report.installed = true;
  }
  if (!flags->svg_dir.empty()) {
    for (const learn::TargetOutcome& t : outcome->targets) {
      if (!t.trained) continue;
      const std::string a = flags->svg_dir + "/" + t.key + "_predicted_vs_actual.svg";
      if (const Status s = WriteText(a, learn::SvgPredictedVsActual(t)); !s.ok()) {
        return cli::ReportError("fmte-retrain", s);
      }
      report.svg_files.push_back(a);
      if (t.what == "time") {
        const std::string b = flags->svg_dir + "/" + t.key + "_under_prediction.svg";
        if (const Status s = WriteText(b, learn::SvgUnderPrediction(t)); !s.ok()) {
          return cli::ReportError("fmte-retrain", s);
        }
        report.svg_files.push_back(b);
      }
    }
  }
  if (!flags->svg_dir.empty() && !report.svg_files.empty()) {
    // One page for the charts: the text report, then each SVG (linked, beside it).
    std::string body = "<h1>fmte-retrain train --kind " + tools::HtmlEscape(flags->kind) +
                       "</h1>\n<pre>" + tools::HtmlEscape(learn::ReportText(report)) + "</pre>\n";
    for (const std::string& f : report.svg_files) {
      const std::string name = f.substr(f.rfind('/') + 1);
      body += "<figure><a href=\"" + tools::HtmlEscape(name) + "\"><img src=\"" +
              tools::HtmlEscape(name) + "\" alt=\"" + tools::HtmlEscape(name) +
              "\"></a><figcaption>" + tools::HtmlEscape(name) + "</figcaption></figure>\n";
    }
    const std::string index = flags->svg_dir + "/index.html";
    if (const Status s = WriteText(index, tools::HtmlPage("fmte-retrain report", body)); !s.ok())
      return cli::ReportError("fmte-retrain", s);
  }
  const std::string json = learn::ReportJson(report);
  if (!flags->report_path.empty()) {
    if (const Status s = WriteText(flags->report_path, json + "\n"); !s.ok())
      return cli::ReportError("fmte-retrain", s);
  }
  std::cout << (flags->json ? json + "\n" : learn::ReportText(report));
  if (rc != cli::kExitOk && !report.refusals.empty()) {
    std::cerr << "fmte-retrain: error: not installed: " << report.refusals.front()
              << (any_trained ? " (use --force to install anyway)" : "") << "\n";
  }
  return rc;
}

}  // namespace fmte::retrain
