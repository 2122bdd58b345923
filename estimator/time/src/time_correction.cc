#include "time_correction.h"

#include <cmath>

#include "fmte/tree_model.h"

namespace fmte {
namespace {

class TreeCorrection : public StepTimeCorrection {
 public:
  explicit TreeCorrection(TreeModel model) : model_(std::move(model)) {}
  double PredictLogRatio(const std::vector<float>& features) const override {
    const double y = model_.Predict(features);
    return std::isfinite(y) ? y : 0.0;  // a row the model cannot read gets no correction
  }

 private:
  TreeModel model_;
};

}  // namespace

Result<std::shared_ptr<const StepTimeCorrection>> LoadTreeCorrection(std::string_view json_text,
                                                                     const std::string& origin,
                                                                     size_t num_features) {
  Result<TreeModel> m = TreeModel::FromJson(json_text);
  if (!m.ok()) return m.status().WithContext(origin);
  if (m->num_features() > static_cast<int64_t>(num_features)) {
    return Status::ParseError(
        origin + ": the correction expects " + std::to_string(m->num_features()) +
        " features, the step-time model provides " + std::to_string(num_features));
  }
  return std::shared_ptr<const StepTimeCorrection>(
      std::make_shared<TreeCorrection>(std::move(m).value()));
}

}  // namespace fmte
