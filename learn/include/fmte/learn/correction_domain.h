// The step-time correction's domain, one piece for both trainers (fmte-retrain --kind vtrain and
// --kind fm-csv): the training range of CorrectionDomainFeatures() (fmte/time.h: the correction
// fades outside it), and efficiency.json's "correction" block that records it. Thread-safety: pure
// functions.
#ifndef FMTE_LEARN_CORRECTION_DOMAIN_H_
#define FMTE_LEARN_CORRECTION_DOMAIN_H_

#include <nlohmann/json.hpp>
#include <vector>

#include "fmte/time.h"

namespace fmte::learn {

// Range of each CorrectionDomainFeatures() feature over the feature rows (TimeEstimate::features) a
// correction is trained on. NaN values are skipped; a feature with no value gets no range.
std::vector<FeatureRange> MeasureCorrectionDomain(
    const std::vector<const std::vector<float>*>& rows);

// {"file": "correction.json", "clamp_log": clamp, "domain": {feature: [min, max], ...}}; without
// "domain" when `domain` is null.
nlohmann::json CorrectionBlockJson(const std::vector<FeatureRange>* domain, double clamp_log);

}  // namespace fmte::learn

#endif  // FMTE_LEARN_CORRECTION_DOMAIN_H_
