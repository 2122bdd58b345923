// The retraining report a sysadmin reads: what was read, what was used and why not, cross-validated
// errors against the plugin's own prediction and the installed model, censored runs, the decision
// (installed / refused), as text, as JSON, and as SVG figures (predicted vs actual;
// under-prediction rate against the time-limit factor). Thread-safety: pure functions.
#ifndef FMTE_LEARN_REPORT_H_
#define FMTE_LEARN_REPORT_H_

#include <string>
#include <vector>

#include "fmte/learn/sacct.h"
#include "fmte/learn/sacct_train.h"
#include "fmte/learn/training_set.h"

namespace fmte::learn {

struct RetrainReport {
  std::vector<std::string> files;
  const ReadStats* stats = nullptr;
  JobsSummary summary;
  const TrainingSets* sets = nullptr;
  const SacctTrainOutcome* outcome = nullptr;
  std::string into;
  bool installed = false;
  bool forced = false;
  std::vector<std::string> refusals;  // why a model was not installed
  std::vector<std::string> svg_files;
};

std::string ReportJson(const RetrainReport& r);
std::string ReportText(const RetrainReport& r);

// Fraction of runs whose actual value exceeds factor x predicted (censored runs count when their
// lower bound already does), for factor = 1.0, 1.1, ... 3.0.
struct UnderPredictionCurve {
  std::vector<double> factors;
  std::vector<double> new_model;
  std::vector<double> plugin;
};
UnderPredictionCurve UnderPrediction(const TargetOutcome& t);

// SVG documents (self-contained, no scripts).
std::string SvgPredictedVsActual(const TargetOutcome& t);
std::string SvgUnderPrediction(const TargetOutcome& t);

}  // namespace fmte::learn

#endif  // FMTE_LEARN_REPORT_H_
