// fmte-retrain train --kind operators SAMPLES_DIR --cluster NAME --into DIR: one cluster's operator
// and NCCL regressors (learn/operator_data.h) from its sampling CSVs, staged, compared with the
// installed set, installed into DIR/NAME (or DIR itself when it is that cluster's directory).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>

#include "cli.h"
#include "fmte/learn/operator_data.h"
#include "retrain_kinds.h"

namespace fmte::retrain {
namespace {

// The comparison on the same held-out groups: a regressor is comparable when the installed
// manifest's entry was trained on the same sample files (names and sizes), rows, groups and folds
// (the fold assignment is seeded and deterministic); then its recorded grouped-CV error is the
// installed model's error on the same held-out groups. Refused when the mean over the comparable
// regressors is worse.
nlohmann::json Compare(const std::string& dir, const std::string& staging, int folds) {
  nlohmann::json c = {
      {"comparable", 0}, {"new_mean_cv_error", nullptr}, {"installed_mean_cv_error", nullptr}};
  std::ifstream old_in(dir + "/manifest.json"), new_in(staging + "/manifest.json");
  const nlohmann::json old_m =
      old_in ? nlohmann::json::parse(old_in, nullptr, false) : nlohmann::json();
  const nlohmann::json new_m =
      new_in ? nlohmann::json::parse(new_in, nullptr, false) : nlohmann::json();
  if (!old_m.is_object() || !old_m.contains("regressors") || !old_m["regressors"].is_array()) {
    c["basis"] = "no installed regressors";
    return c;
  }
  const int old_folds =
      old_m.contains("cv") && old_m["cv"].is_object() ? old_m["cv"].value("folds", -1) : -1;
  std::map<std::string, nlohmann::json> installed;
  for (const auto& r : old_m["regressors"]) {
    if (r.is_object() && r.contains("key")) installed[r.value("key", "")] = r;
  }
  double sum_new = 0, sum_old = 0;
  int n = 0;
  if (new_m.is_object() && new_m.contains("regressors") && old_folds == folds) {
    for (const auto& r : new_m["regressors"]) {
      auto it = installed.find(r.value("key", ""));
      if (it == installed.end()) continue;
      const nlohmann::json& o = it->second;
      if (o.value("rows", -1) != r.value("rows", -2) ||
          o.value("cv_groups", -1) != r.value("cv_groups", -2) ||
          o.value("sources", nlohmann::json()) != r.value("sources", nlohmann::json()) ||
          !o.contains("cv_mean_abs_rel_error")) {
        continue;
      }
      sum_new += r.value("cv_mean_abs_rel_error", 0.0);
      sum_old += o.value("cv_mean_abs_rel_error", 0.0);
      ++n;
    }
  }
  c["comparable"] = n;
  if (n == 0) {
    c["basis"] = "installed regressors were trained on other samples or folds: not compared";
    return c;
  }
  c["new_mean_cv_error"] = sum_new / n;
  c["installed_mean_cv_error"] = sum_old / n;
  c["basis"] = "same sample files, rows, groups and folds: grouped-CV errors of the manifests";
  return c;
}

}  // namespace

int TrainOperatorsKind(const ReadFlags& flags) {
  if (flags.files.size() != 1) {
    return cli::ReportError(
        "fmte-retrain",
        Status::InvalidArgument("--kind operators: expected one samples directory (holding "
                                "operator/ and nccl/), got " +
                                std::to_string(flags.files.size())));
  }
  if (flags.cluster.empty()) {
    return cli::ReportError(
        "fmte-retrain", Status::InvalidArgument("--cluster NAME: required for --kind operators"));
  }
  learn::TrainClusterOptions o;
  o.samples_dir = flags.files[0];
  o.cluster = flags.cluster;
  o.folds = flags.folds_set ? flags.folds : 5;
  o.dry_run = flags.dry_run;
  if (flags.rounds > 0) o.params.num_rounds = flags.rounds;
  if (flags.depth > 0) o.params.max_depth = flags.depth;
  if (flags.eta > 0) o.params.eta = flags.eta;
  if (flags.threads > 0) o.params.nthread = flags.threads;
  if (!flags.json)
    o.progress = [](const std::string& line) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    };
  const std::string dir = flags.dry_run      ? ""
                          : flags.into_exact ? flags.into
                                             : KindDir(flags.into, flags.cluster, "manifest.json");
  std::unique_ptr<Staging> staging;
  if (!flags.dry_run) {
    staging = std::make_unique<Staging>(dir);
    if (!staging->status().ok()) return cli::ReportError("fmte-retrain", staging->status());
    o.out_dir = staging->path();
  }
  Result<std::vector<learn::RegressorReport>> r = learn::TrainClusterRegressors(o);
  if (!r.ok()) return cli::ReportError("fmte-retrain", r.status());
  double sum = 0;
  for (const auto& rep : *r) sum += rep.cv.mean_abs_rel_error;
  const double mean = r->empty() ? 0 : sum / static_cast<double>(r->size());
  nlohmann::json out = {{"kind", "operators"},
                        {"cluster", flags.cluster},
                        {"into", dir},
                        {"regressors", r->size()},
                        {"mean_cv_mean_abs_rel_error", mean}};
  int rc = cli::kExitOk;
  if (!flags.dry_run) {
    const nlohmann::json cmp = Compare(dir, staging->path(), o.folds);
    out["comparison"] = cmp;
    const bool worse = cmp["installed_mean_cv_error"].is_number() &&
                       cmp["new_mean_cv_error"].get<double>() >
                           cmp["installed_mean_cv_error"].get<double>() + 1e-12;
    if (worse) {
      PrintRefusal("new regressors' mean grouped-CV error " +
                       std::to_string(cmp["new_mean_cv_error"].get<double>()) + " > installed " +
                       std::to_string(cmp["installed_mean_cv_error"].get<double>()),
                   flags.force);
    }
    if (!worse || flags.force) {
      std::vector<std::string> installed;
      const Status s =
          InstallStaged(staging->path(), dir, RetrainBlock(flags, "operators", cmp), &installed);
      if (!s.ok()) return cli::ReportError("fmte-retrain", s);
      out["installed_files"] = installed.size();
    } else {
      rc = cli::kExitFailure;
    }
  }
  if (flags.json) {
    std::cout << out.dump(1) << "\n";
  } else {
    std::printf("%zu regressors, mean of grouped-CV mean errors %.2f%%\n", r->size(), 100 * mean);
  }
  return rc;
}

}  // namespace fmte::retrain
