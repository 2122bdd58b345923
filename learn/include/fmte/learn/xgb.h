// XgbModel: a gradient-boosted tree regressor trained through the XGBoost C API, plus grouped
// k-fold cross-validation. The trained model is saved as XGBoost JSON, which the core evaluates
// without libxgboost (fmte/tree_model.h); the JSON is the only interchange format.
//
// Every XGBoost call's return code is checked and turned into a Status carrying
// XGBGetLastError() (the pattern of dmlc/xgboost demo/c-api). The BoosterHandle has one RAII owner.
// Thread-safety: an XgbModel may be read (Predict, ToJson) from one thread at a time; distinct
// models are independent. Training uses `XgbParams::nthread` threads inside libxgboost.
#ifndef FMTE_LEARN_XGB_H_
#define FMTE_LEARN_XGB_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fmte/status.h"

namespace fmte::learn {

// Row-major dense feature matrix; NaN marks a missing value.
struct DenseMatrix {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<float> values;  // size rows * cols

  DenseMatrix() = default;
  DenseMatrix(int64_t r, int64_t c) : rows(r), cols(c), values(static_cast<size_t>(r * c), 0.0f) {}
  float& at(int64_t r, int64_t c) { return values[static_cast<size_t>(r * cols + c)]; }
  float at(int64_t r, int64_t c) const { return values[static_cast<size_t>(r * cols + c)]; }
  std::span<const float> Row(int64_t r) const {
    return {values.data() + r * cols, static_cast<size_t>(cols)};
  }
  // Appends one row; REQUIRES: row.size() == cols (or rows == 0, which sets cols).
  void AddRow(std::span<const float> row);
  // The rows listed in `index`, in that order.
  DenseMatrix Select(std::span<const int64_t> index) const;
};

// Booster hyperparameters (XGBoost parameter names). Defaults suit small tabular regressions.
struct XgbParams {
  int num_rounds = 100;
  int max_depth = 5;
  double eta = 0.1;
  double subsample = 1.0;
  double colsample_bytree = 1.0;
  double min_child_weight = 1.0;
  double lambda = 1.0;  // L2 on leaf weights
  double alpha = 0.0;   // L1 on leaf weights
  std::string objective = "reg:squarederror";
  std::string tree_method = "exact";  // deterministic, exact splits (small data sets)
  int nthread = 2;
  uint64_t seed = 0;
  // Any further parameters, passed verbatim to XGBoosterSetParam.
  std::vector<std::pair<std::string, std::string>> extra;

  // All parameters as (name, value) strings, in the order they are set.
  std::vector<std::pair<std::string, std::string>> AsPairs() const;
  // The same as a JSON object text (for manifests).
  std::string ToJson() const;
};

class XgbModel {
 public:
  XgbModel();
  ~XgbModel();
  XgbModel(XgbModel&&) noexcept;
  XgbModel& operator=(XgbModel&&) noexcept;
  XgbModel(const XgbModel&) = delete;
  XgbModel& operator=(const XgbModel&) = delete;

  // Trains on `x` (rows x cols) and `labels` (size rows); `weights` empty or size rows.
  // Errors: shape mismatches, non-finite labels, or XGBoost's own message.
  static Result<XgbModel> Train(const DenseMatrix& x, std::span<const float> labels,
                                const XgbParams& params, std::span<const float> weights = {});
  // Loads an XGBoost JSON model text (what ToJson/SaveJson write).
  static Result<XgbModel> FromJson(const std::string& json_text);
  static Result<XgbModel> LoadJson(const std::string& path);

  // XGBoost's own prediction (output space of the objective), one value per row.
  Result<std::vector<float>> Predict(const DenseMatrix& x) const;
  // The model as XGBoost JSON text.
  Result<std::string> ToJson() const;
  // Writes ToJson() to `path` atomically (temporary file, fsync, rename).
  Status SaveJson(const std::string& path) const;

  int64_t num_features() const { return num_features_; }
  bool valid() const { return handle_ != nullptr; }

 private:
  struct HandleDeleter {
    void operator()(void* h) const;
  };
  std::unique_ptr<void, HandleDeleter> handle_;
  int64_t num_features_ = 0;
};

// Grouped k-fold cross-validation: rows sharing a group id are always in the same fold, so a
// whole shape family (e.g. one hidden size) is held out at once, never near-duplicate rows.
struct CvOptions {
  int folds = 5;         // capped at the number of distinct groups
  uint64_t seed = 1234;  // shuffles the groups before dealing them to folds
  // Maps a row's label (or prediction, same space) to the quantity whose relative error is
  // reported, e.g. exp(label) * baseline[row] when training on log(time / baseline).
  // Empty: the label itself.
  std::function<double(int64_t row, double label)> to_value;
};

struct CvFold {
  int64_t train_rows = 0;
  int64_t test_rows = 0;
  int64_t test_groups = 0;
  double mean_abs_rel_error = 0;  // mean |pred - y| / |y| over the fold's held-out rows
  double max_abs_rel_error = 0;
};

struct CvResult {
  double mean_abs_rel_error = 0;  // over all held-out rows (each row predicted once)
  double median_abs_rel_error = 0;
  double p90_abs_rel_error = 0;
  std::vector<CvFold> folds;
  std::vector<double> out_of_fold;  // per row, in value space (to_value applied)
};

Result<CvResult> GroupedKFold(const DenseMatrix& x, std::span<const float> labels,
                              std::span<const int64_t> groups, const XgbParams& params,
                              const CvOptions& options = {}, std::span<const float> weights = {});

}  // namespace fmte::learn

#endif  // FMTE_LEARN_XGB_H_
