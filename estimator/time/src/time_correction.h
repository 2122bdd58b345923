// The learned step-time correction: an adapter from StepTimeCorrection to the native XGBoost
// evaluator (fmte/tree_model.h). Thread-safety: immutable after loading.
#ifndef FMTE_ESTIMATOR_SRC_TIME_CORRECTION_H_
#define FMTE_ESTIMATOR_SRC_TIME_CORRECTION_H_

#include <memory>
#include <string>
#include <string_view>

#include "fmte/status.h"
#include "fmte/time.h"

namespace fmte {

// Parses an XGBoost JSON model trained on StepTimeFeatures (label: log(measured / analytic)).
// `num_features` is the feature count the caller will pass; a model expecting more is an error.
Result<std::shared_ptr<const StepTimeCorrection>> LoadTreeCorrection(std::string_view json_text,
                                                                     const std::string& origin,
                                                                     size_t num_features);

}  // namespace fmte

#endif  // FMTE_ESTIMATOR_SRC_TIME_CORRECTION_H_
