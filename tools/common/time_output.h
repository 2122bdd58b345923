// The time extras of `fmte-advise estimate`: the --timeline SVG and the --regressors override of
// the step-time model. Thread-safety: stateless functions.
#ifndef FMTE_TOOLS_TIME_OUTPUT_H_
#define FMTE_TOOLS_TIME_OUTPUT_H_

#include <string>

#include "fmte/estimator.h"
#include "fmte/status.h"

namespace fmte::tools {

// --regressors DIR: replaces catalogs->time_model with DIR/vtrain (or DIR itself when it holds
// efficiency.json). "" leaves the catalogs as loaded.
Status ApplyRegressorsDir(const std::string& dir, Catalogs* catalogs);

// --timeline FILE.svg: writes the step's schedule (time.h StepTimelineSvg). Errors name the file;
// an estimate without a step time is an error saying why.
Status WriteTimeline(const std::string& path, const ModelArch& model, const JobEstimate& estimate);

}  // namespace fmte::tools

#endif  // FMTE_TOOLS_TIME_OUTPUT_H_
