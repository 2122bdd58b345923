#include "fmte/learn/correction_domain.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace fmte::learn {

std::vector<FeatureRange> MeasureCorrectionDomain(
    const std::vector<const std::vector<float>*>& rows) {
  std::vector<FeatureRange> domain;
  const std::vector<std::string>& names = StepTimeFeatureNames();
  for (const std::string& f : CorrectionDomainFeatures()) {
    const size_t k = static_cast<size_t>(std::find(names.begin(), names.end(), f) - names.begin());
    FeatureRange r{k, 0, 0};
    bool any = false;
    for (const std::vector<float>* row : rows) {
      if (k >= row->size() || std::isnan((*row)[k])) continue;
      const double v = static_cast<double>((*row)[k]);
      r.min = any ? std::min(r.min, v) : v;
      r.max = any ? std::max(r.max, v) : v;
      any = true;
    }
    if (any) domain.push_back(r);
  }
  return domain;
}

nlohmann::json CorrectionBlockJson(const std::vector<FeatureRange>* domain, double clamp_log) {
  nlohmann::json block = {{"file", "correction.json"}, {"clamp_log", clamp_log}};
  if (domain != nullptr) {
    nlohmann::json by_name = nlohmann::json::object();
    for (const FeatureRange& r : *domain) by_name[StepTimeFeatureNames()[r.index]] = {r.min, r.max};
    block["domain"] = by_name;
  }
  return block;
}

}  // namespace fmte::learn
