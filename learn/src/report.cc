// Text and JSON of the retraining report (report.h); the figures are in report_svg.cc.
#include "fmte/learn/report.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fmte/learn/version.h"

namespace fmte::learn {
namespace {

nlohmann::json Num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

std::string Pct(double v) {
  if (v < 0 || !std::isfinite(v)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", v * 100);
  return b;
}

}  // namespace

UnderPredictionCurve UnderPrediction(const TargetOutcome& t) {
  UnderPredictionCurve c;
  const double n = static_cast<double>(t.actual.size() + t.censored_lower.size());
  for (int i = 0; i <= 20; ++i) {
    const double f = 1.0 + 0.1 * i;
    double under_new = 0, under_plugin = 0;
    for (size_t r = 0; r < t.actual.size(); ++r) {
      under_new += t.actual[r] > f * t.predicted_oof[r];
      under_plugin += t.actual[r] > f * t.plugin[r];
    }
    for (size_t r = 0; r < t.censored_lower.size(); ++r) {
      under_new += t.censored_lower[r] > f * t.censored_predicted[r];
    }
    c.factors.push_back(f);
    c.new_model.push_back(n > 0 ? under_new / n : 0);
    c.plugin.push_back(t.actual.empty() ? 0 : under_plugin / static_cast<double>(t.actual.size()));
  }
  return c;
}

std::string ReportJson(const RetrainReport& r) {
  nlohmann::json j;
  j["files"] = r.files;
  if (r.stats) {
    j["read"] = {{"rows", r.stats->rows},
                 {"jobs", r.summary.jobs},
                 {"steps", r.stats->step_rows},
                 {"malformed", r.stats->malformed},
                 {"fmte_records", r.summary.fmte_records},
                 {"fmte_record_errors", r.stats->record_errors},
                 {"states", r.summary.states}};
  }
  if (r.sets) {
    j["training_set"] = {{"jobs", r.sets->jobs},
                         {"with_record", r.sets->with_record},
                         {"time_rows", r.sets->time.x.rows},
                         {"time_censored", r.sets->time.x_censored.rows},
                         {"memory_rows", r.sets->memory.x.rows},
                         {"memory_censored", r.sets->memory.x_censored.rows},
                         {"skipped", r.sets->skipped}};
  }
  nlohmann::json targets = nlohmann::json::array();
  if (r.outcome) {
    for (const TargetOutcome& t : r.outcome->targets) {
      nlohmann::json o = {{"key", t.key},   {"what", t.what},     {"trained", t.trained},
                          {"rows", t.rows}, {"groups", t.groups}, {"censored", t.censored}};
      if (!t.trained) {
        o["skipped_reason"] = t.skipped_reason;
      } else {
        o["cv"] = {{"folds", t.cv.folds.size()},
                   {"mean_abs_rel_error", Num(t.cv.mean_abs_rel_error)},
                   {"median_abs_rel_error", Num(t.cv.median_abs_rel_error)},
                   {"p90_abs_rel_error", Num(t.cv.p90_abs_rel_error)}};
        o["comparison"] = {{"rows", t.comparison.rows},
                           {"only_unseen_jobs", t.comparison.only_unseen},
                           {"plugin_mean_abs_rel_error", Num(t.comparison.plugin)},
                           {"new_mean_abs_rel_error", Num(t.comparison.new_model)},
                           {"installed_mean_abs_rel_error",
                            t.comparison.installed >= 0 ? Num(t.comparison.installed) : nullptr}};
        o["censored_violations"] = t.censored_violations;
        o["log_residual_quantiles"] = {{"p50", Num(t.log_residual_quantiles[0])},
                                       {"p90", Num(t.log_residual_quantiles[1])},
                                       {"p95", Num(t.log_residual_quantiles[2])}};
        const UnderPredictionCurve c = UnderPrediction(t);
        o["under_prediction"] = {{"factor", c.factors}, {"new", c.new_model}, {"plugin", c.plugin}};
      }
      targets.push_back(o);
    }
  }
  j["targets"] = targets;
  j["into"] = r.into;
  j["installed"] = r.installed;
  j["forced"] = r.forced;
  j["refusals"] = r.refusals;
  j["svg"] = r.svg_files;
  j["xgboost_version"] = XgboostVersion();
  return j.dump(2);
}

std::string ReportText(const RetrainReport& r) {
  std::ostringstream os;
  if (r.stats) {
    os << "read:      " << r.stats->rows << " rows, " << r.summary.jobs << " jobs, "
       << r.summary.fmte_records << " with an fmte record, " << r.stats->malformed
       << " malformed lines\n";
  }
  if (r.sets) {
    os << "time:      " << r.sets->time.x.rows << " completed runs, "
       << r.sets->time.x_censored.rows << " timed out (censored: ran at least their limit)\n"
       << "memory:    " << r.sets->memory.x.rows << " runs with a measured GPU peak, "
       << r.sets->memory.x_censored.rows << " out of memory (lower bounds)\n";
    for (const auto& [why, n] : r.sets->skipped) os << "  not used: " << n << " x " << why << "\n";
  }
  if (r.outcome) {
    for (const TargetOutcome& t : r.outcome->targets) {
      os << t.key << ": ";
      if (!t.trained) {
        os << "not trained (" << t.skipped_reason << ")\n";
        continue;
      }
      os << t.rows << " rows in " << t.groups << " groups, " << t.cv.folds.size()
         << "-fold grouped CV\n"
         << "  mean |error| on " << t.comparison.rows << (t.comparison.only_unseen ? " unseen" : "")
         << " jobs: plugin " << Pct(t.comparison.plugin) << ", new " << Pct(t.comparison.new_model)
         << ", installed " << Pct(t.comparison.installed) << "\n"
         << "  median " << Pct(t.cv.median_abs_rel_error) << ", p90 " << Pct(t.cv.p90_abs_rel_error)
         << "\n";
      if (t.censored > 0) {
        os << "  censored runs predicted below their known lower bound: " << t.censored_violations
           << " of " << t.censored << "\n";
      }
      if (t.what == "time") {
        const UnderPredictionCurve c = UnderPrediction(t);
        os << "  under-predicted at limit factor 1.0/1.5/2.0: new " << Pct(c.new_model[0]) << "/"
           << Pct(c.new_model[5]) << "/" << Pct(c.new_model[10]) << ", plugin " << Pct(c.plugin[0])
           << "/" << Pct(c.plugin[5]) << "/" << Pct(c.plugin[10]) << "\n";
      }
    }
  }
  for (const std::string& why : r.refusals) os << "refused:   " << why << "\n";
  if (!r.into.empty()) {
    os << (r.installed ? "installed: " : "not installed: ") << r.into
       << (r.forced ? " (--force)" : "") << "\n";
  }
  for (const std::string& f : r.svg_files) os << "figure:    " << f << "\n";
  return os.str();
}

}  // namespace fmte::learn
