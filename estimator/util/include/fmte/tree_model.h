// TreeModel: a native evaluator of XGBoost JSON models (gbtree, numerical splits, one output),
// so the core predicts in microseconds without libxgboost (it runs inside slurmctld).
//
// Reads learner.gradient_booster.model.trees[*] (split_indices, split_conditions, left_children,
// right_children, default_left; a leaf's value is its split_conditions entry),
// learner.learner_model_param.base_score and learner.objective.name, and evaluates exactly as
// XGBoost does (dmlc/xgboost src/predictor/cpu_predictor.cc): go left when value < condition,
// missing (NaN) follows default_left, margin = base_margin + sum of leaves accumulated in float,
// then the objective's inverse link (identity for reg:squarederror and friends, exp for
// reg:gamma / reg:tweedie / count:poisson, sigmoid for binary:logistic / reg:logistic).
// Categorical splits, multi-output models and dart boosters are refused with kUnsupported.
// Thread-safety: immutable after loading; Predict is const, allocation-free and may run from many
// threads at once.
#ifndef FMTE_TREE_MODEL_H_
#define FMTE_TREE_MODEL_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/status.h"

namespace fmte {

class TreeModel {
 public:
  enum class Link { kIdentity, kExp, kSigmoid };

  TreeModel() = default;

  // Parses an XGBoost JSON model text. Errors name the JSON path that is missing or malformed.
  static Result<TreeModel> FromJson(std::string_view json_text);
  // Reads and parses a .json model file; errors are prefixed with the path.
  static Result<TreeModel> LoadFile(const std::string& path);

  // Prediction for one dense row (num_features() values, NaN = missing), in the objective's output
  // space. REQUIRES: row.size() >= num_features() (shorter rows would be read out of bounds, so
  // they return NaN instead).
  double Predict(std::span<const float> row) const;
  // The raw margin (before the inverse link).
  float PredictMargin(std::span<const float> row) const;

  int64_t num_features() const { return num_features_; }
  int64_t num_trees() const { return static_cast<int64_t>(roots_.size()); }
  int64_t num_nodes() const { return static_cast<int64_t>(nodes_.size()); }
  const std::string& objective() const { return objective_; }
  bool empty() const { return roots_.empty() && num_features_ == 0; }

 private:
  // One node, 16 bytes. Leaves have left == -1 and keep their value in `value`.
  struct Node {
    int32_t left = -1;  // absolute index into nodes_
    int32_t right = -1;
    uint32_t feature = 0;
    float value = 0;  // split condition, or leaf value
  };
  static constexpr uint32_t kDefaultLeftBit = 0x80000000u;

  std::vector<Node> nodes_;
  std::vector<int32_t> roots_;
  float base_margin_ = 0;
  Link link_ = Link::kIdentity;
  int64_t num_features_ = 0;
  std::string objective_;
};

}  // namespace fmte

#endif  // FMTE_TREE_MODEL_H_
