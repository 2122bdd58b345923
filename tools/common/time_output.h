// The time and regressor extras of `fmte-advise estimate` (and recommend, check): the --timeline
// SVG, the --regressors directory (step-time model and the site's corrections), and how the site
// correction is shown. Thread-safety: stateless functions.
#ifndef FMTE_TOOLS_TIME_OUTPUT_H_
#define FMTE_TOOLS_TIME_OUTPUT_H_

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "fmte/estimator.h"
#include "fmte/status.h"

namespace fmte::tools {

// --regressors DIR: loads DIR as the plugin's RegressorsDir does (LoadRegressors in estimator.h):
// the step-time model from DIR (efficiency.json) or DIR/vtrain, else the shipped one, and the
// site corrections of DIR/manifest.json. "" leaves the catalogs as loaded; a DIR that does not
// exist is an error (a typo must not silently mean "no correction").
Status ApplyRegressorsDir(const std::string& dir, Catalogs* catalogs);

// doc["correction"] when the catalogs hold site corrections: per target the model's factor, the
// factor applied after the guards, the values before and after, and the model's file, rows and
// data range, so users see why a number moved. Nothing when no correction is installed.
void AddCorrectionJson(nlohmann::json& doc, const TrainingJob& job, const JobEstimate& estimate,
                       const SiteCorrections& corrections);
// The same as text lines ("site correction ...").
void PrintCorrection(std::ostream& os, const JobEstimate& estimate,
                     const SiteCorrections& corrections);

// --timeline FILE.svg: writes the step's schedule (time.h StepTimelineSvg). Errors name the file;
// an estimate without a step time is an error saying why.
Status WriteTimeline(const std::string& path, const ModelArch& model, const JobEstimate& estimate);

}  // namespace fmte::tools

#endif  // FMTE_TOOLS_TIME_OUTPUT_H_
