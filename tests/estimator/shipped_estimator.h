// The estimator over the repository's own etc/ (model and GPU catalogs, clusters) and the shipped
// regressors, loaded once per test binary; a load failure is a test failure (empty catalogs).
#ifndef FMTE_TESTS_ESTIMATOR_SHIPPED_ESTIMATOR_H_
#define FMTE_TESTS_ESTIMATOR_SHIPPED_ESTIMATOR_H_

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "fmte/estimator.h"

namespace fmte {

inline const Estimator& ShippedEstimator() {
  static const Estimator* est = [] {
    auto e = Estimator::Load(std::string(FMTE_SOURCE_DIR) + "/etc");
    if (!e.ok()) {
      ADD_FAILURE() << e.status().ToString();
      return new Estimator(Catalogs{});
    }
    return new Estimator(std::move(e).value());
  }();
  return *est;
}

}  // namespace fmte

#endif  // FMTE_TESTS_ESTIMATOR_SHIPPED_ESTIMATOR_H_
