// Training and validating the sacct corrections (sacct_train.h).
#include "fmte/learn/sacct_train.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "fmte/learn/install.h"
#include "fmte/tree_model.h"

namespace fmte::learn {
namespace {

double MeanAbsRel(const std::vector<double>& pred, const std::vector<double>& actual,
                  const std::vector<int64_t>& rows) {
  double s = 0;
  for (const int64_t r : rows) s += std::abs(pred[r] - actual[r]) / std::max(actual[r], 1e-30);
  return rows.empty() ? 0 : s / static_cast<double>(rows.size());
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

// The installed model's manifest entry and data range, if any.
struct Installed {
  bool present = false;
  TreeModel model;
  int64_t last_end_time = kUnknownValue;
};

Installed LoadInstalled(const std::string& dir, const std::string& key) {
  Installed in;
  if (dir.empty()) return in;
  Result<std::string> text = ReadManifest(dir);
  if (!text.ok()) return in;
  const nlohmann::json m = nlohmann::json::parse(*text, nullptr, false);
  if (!m.is_object() || !m.contains("regressors") || !m["regressors"].is_array()) return in;
  for (const auto& r : m["regressors"]) {
    if (!r.is_object() || r.value("key", "") != key || !r.contains("model") ||
        !r["model"].is_string())
      continue;
    Result<TreeModel> t = TreeModel::LoadFile(dir + "/" + r["model"].get<std::string>());
    if (!t.ok() || t->num_features() > static_cast<int64_t>(SacctFeatureNames().size())) return in;
    in.model = std::move(t).value();
    in.present = true;
    if (r.contains("data") && r["data"].is_object())
      in.last_end_time = r["data"].value("last_end_unix", kUnknownValue);
  }
  return in;
}

Result<TargetOutcome> TrainTarget(const TargetSet& set, const std::string& key,
                                  const std::string& what, const XgbParams& params,
                                  const SacctTrainOptions& options) {
  const std::vector<int64_t>& end_times = set.end_time;
  TargetOutcome t;
  t.key = key;
  t.what = what;
  t.rows = set.x.rows;
  t.censored = set.x_censored.rows;
  t.groups = static_cast<int64_t>(std::set<int64_t>(set.groups.begin(), set.groups.end()).size());
  if (t.rows < options.min_rows || t.groups < options.min_groups) {
    t.skipped_reason = std::to_string(t.rows) + " exact samples in " + std::to_string(t.groups) +
                       " groups (need at least " + std::to_string(options.min_rows) + " in " +
                       std::to_string(options.min_groups) + ")";
    return t;
  }
  CvOptions cv;
  cv.folds = options.folds;
  cv.seed = options.seed;
  cv.to_value = [&set](int64_t row, double label) { return std::exp(label) * set.base[row]; };
  Result<CvResult> res = GroupedKFold(set.x, set.y, set.groups, params, cv);
  if (!res.ok()) return res.status().WithContext(what + " cross-validation");
  t.cv = std::move(res).value();
  t.actual = set.actual;
  t.predicted_oof = t.cv.out_of_fold;
  t.plugin = set.base;
  t.limit_factor = set.limit_factor;
  std::vector<double> log_res;
  for (int64_t r = 0; r < t.rows; ++r)
    log_res.push_back(std::log(t.actual[r] / t.predicted_oof[r]));
  t.log_residual_quantiles = {Quantile(log_res, 0.5), Quantile(log_res, 0.9),
                              Quantile(log_res, 0.95)};

  // The final model also learns from the censored runs, as lower bounds: their label starts at
  // log(lower bound / prediction) and is raised to the model's own prediction when that is higher
  // (Buckley-James-style imputation, a few rounds), so the model is pushed above what censored
  // runs proved without pretending they ended there.
  DenseMatrix x_all = set.x;
  std::vector<float> y_all = set.y;
  std::vector<float> lower_c;
  for (int64_t r = 0; r < set.x_censored.rows; ++r) {
    x_all.AddRow(set.x_censored.Row(r));
    lower_c.push_back(static_cast<float>(std::log(set.lower_censored[r] / set.base_censored[r])));
    y_all.push_back(lower_c.back());
  }
  Result<XgbModel> final_model = XgbModel::Train(x_all, y_all, params);
  for (int round = 0; round < 3 && final_model.ok() && !lower_c.empty(); ++round) {
    Result<std::vector<float>> p = final_model->Predict(set.x_censored);
    if (!p.ok()) return p.status();
    for (size_t r = 0; r < lower_c.size(); ++r)
      y_all[set.x.rows + r] = std::max(lower_c[r], (*p)[r]);
    final_model = XgbModel::Train(x_all, y_all, params);
  }
  if (!final_model.ok()) return final_model.status().WithContext(what + " final model");
  Result<std::string> json = final_model->ToJson();
  if (!json.ok()) return json.status();
  t.model_json = std::move(json).value();
  if (set.x_censored.rows > 0) {
    Result<std::vector<float>> p = final_model->Predict(set.x_censored);
    if (!p.ok()) return p.status();
    for (int64_t r = 0; r < set.x_censored.rows; ++r) {
      const double v = std::exp((*p)[r]) * set.base_censored[r];
      t.censored_predicted.push_back(v);
      t.censored_lower.push_back(set.lower_censored[r]);
      if (v < set.lower_censored[r]) ++t.censored_violations;
    }
  }

  // Comparison on the same rows: only jobs the installed model cannot have seen when there are
  // enough of them, else all rows.
  const Installed installed = LoadInstalled(options.installed_dir, key);
  std::vector<int64_t> rows;
  if (installed.present && installed.last_end_time > 0) {
    for (int64_t r = 0; r < t.rows; ++r) {
      if (end_times[r] > installed.last_end_time) rows.push_back(r);
    }
    t.comparison.only_unseen = static_cast<int64_t>(rows.size()) >= options.min_rows;
  }
  if (!t.comparison.only_unseen) {
    rows.clear();
    for (int64_t r = 0; r < t.rows; ++r) rows.push_back(r);
  }
  t.comparison.rows = static_cast<int64_t>(rows.size());
  t.comparison.plugin = MeanAbsRel(t.plugin, t.actual, rows);
  t.comparison.new_model = MeanAbsRel(t.predicted_oof, t.actual, rows);
  if (installed.present) {
    std::vector<double> pred(static_cast<size_t>(t.rows));
    for (int64_t r = 0; r < t.rows; ++r) {
      pred[r] = std::exp(installed.model.Predict(set.x.Row(r))) * set.base[r];
    }
    t.comparison.installed = MeanAbsRel(pred, t.actual, rows);
  }
  t.trained = true;
  return t;
}

}  // namespace

bool WorseThanInstalled(const TargetOutcome& t) {
  return t.trained && t.comparison.installed >= 0 &&
         t.comparison.new_model > t.comparison.installed;
}

Result<SacctTrainOutcome> TrainSacct(const TrainingSets& sets, const SacctTrainOptions& options) {
  SacctTrainOutcome out;
  // Small tabular sets: shallow trees, shrinkage, and a minimum leaf weight against overfitting.
  out.params.num_rounds = 200;
  out.params.max_depth = 3;
  out.params.eta = 0.05;
  out.params.min_child_weight = 2;
  out.params.seed = options.seed;
  const struct {
    const TargetSet* set;
    const char* key;
    const char* what;
  } targets[] = {{&sets.time, "sacct_time_correction", "time"},
                 {&sets.memory, "sacct_memory_correction", "memory"}};
  for (const auto& tg : targets) {
    Result<TargetOutcome> t = TrainTarget(*tg.set, tg.key, tg.what, out.params, options);
    if (!t.ok()) return t.status();
    out.targets.push_back(std::move(t).value());
  }
  return out;
}

}  // namespace fmte::learn
