// Grouped k-fold cross-validation over XgbModel (groups never straddle folds).
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "fmte/learn/xgb.h"

namespace fmte::learn {

Result<CvResult> GroupedKFold(const DenseMatrix& x, std::span<const float> labels,
                              std::span<const int64_t> groups, const XgbParams& params,
                              const CvOptions& options, std::span<const float> weights) {
  if (static_cast<int64_t>(groups.size()) != x.rows ||
      static_cast<int64_t>(labels.size()) != x.rows) {
    return Status::InvalidArgument("cross-validation: labels and groups need one value per row");
  }
  if (options.folds < 2) {
    return Status::InvalidArgument("folds: expected at least 2, got " +
                                   std::to_string(options.folds));
  }
  std::vector<int64_t> distinct(groups.begin(), groups.end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  if (distinct.size() < 2) {
    return Status::InvalidArgument("cross-validation: need at least 2 distinct groups, got " +
                                   std::to_string(distinct.size()));
  }
  const int k = std::min<int>(options.folds, static_cast<int>(distinct.size()));
  std::mt19937_64 rng(options.seed);
  std::shuffle(distinct.begin(), distinct.end(), rng);
  std::map<int64_t, int> fold_of_group;
  for (size_t i = 0; i < distinct.size(); ++i) fold_of_group[distinct[i]] = static_cast<int>(i % k);

  auto value = [&](int64_t row, double label) {
    return options.to_value ? options.to_value(row, label) : label;
  };

  CvResult result;
  result.out_of_fold.assign(static_cast<size_t>(x.rows), std::nan(""));
  std::vector<double> errors(static_cast<size_t>(x.rows), 0.0);
  for (int fold = 0; fold < k; ++fold) {
    std::vector<int64_t> train, test;
    int64_t test_groups = 0;
    for (const auto& [g, f] : fold_of_group) test_groups += (f == fold);
    for (int64_t r = 0; r < x.rows; ++r) {
      (fold_of_group[groups[r]] == fold ? test : train).push_back(r);
    }
    std::vector<float> y_train, w_train;
    for (int64_t r : train) {
      y_train.push_back(labels[r]);
      if (!weights.empty()) w_train.push_back(weights[r]);
    }
    Result<XgbModel> model = XgbModel::Train(x.Select(train), y_train, params, w_train);
    if (!model.ok()) return model.status().WithContext("fold " + std::to_string(fold));
    Result<std::vector<float>> pred = model->Predict(x.Select(test));
    if (!pred.ok()) return pred.status().WithContext("fold " + std::to_string(fold));
    CvFold cf;
    cf.train_rows = static_cast<int64_t>(train.size());
    cf.test_rows = static_cast<int64_t>(test.size());
    cf.test_groups = test_groups;
    for (size_t i = 0; i < test.size(); ++i) {
      const int64_t r = test[i];
      const double y = value(r, labels[r]);
      const double p = value(r, (*pred)[i]);
      const double e = std::abs(p - y) / std::max(std::abs(y), 1e-30);
      result.out_of_fold[r] = p;
      errors[r] = e;
      cf.mean_abs_rel_error += e;
      cf.max_abs_rel_error = std::max(cf.max_abs_rel_error, e);
    }
    if (cf.test_rows > 0) cf.mean_abs_rel_error /= static_cast<double>(cf.test_rows);
    result.folds.push_back(cf);
  }
  result.mean_abs_rel_error =
      std::accumulate(errors.begin(), errors.end(), 0.0) / static_cast<double>(errors.size());
  std::vector<double> sorted = errors;
  std::sort(sorted.begin(), sorted.end());
  result.median_abs_rel_error = sorted[sorted.size() / 2];
  result.p90_abs_rel_error = sorted[std::min(sorted.size() - 1, sorted.size() * 9 / 10)];
  return result;
}

}  // namespace fmte::learn
