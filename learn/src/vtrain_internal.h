// Private to the vTrain fit: the pieces vtrain_fit.cc defines and vtrain_train.cc (the shipped
// model's writer) calls. Thread-safety: pure functions.
#ifndef FMTE_LEARN_SRC_VTRAIN_INTERNAL_H_
#define FMTE_LEARN_SRC_VTRAIN_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "fmte/learn/gemm_fit.h"
#include "fmte/learn/vtrain.h"

namespace fmte::learn::vtrain_internal {

// Fits constants + correction on `train`, returns log(corrected predictions) for `test`
// (and log(analytic) in *analytic_log). `model_json` receives the correction when non-null;
// `domain_out` the correction's training range of the size features.
Result<std::vector<double>> FitPredict(const std::vector<VtrainRow>& rows, const GpuSpec& gpu,
                                       const VtrainTrainOptions& opt,
                                       const std::vector<int64_t>& train,
                                       const std::vector<int64_t>& test,
                                       std::vector<double>* analytic_log, TimeEfficiency* fitted,
                                       std::string* model_json,
                                       std::vector<FeatureRange>* domain_out);

// The GEMM curves a fit uses: opt.gemm_curves ("none": the flat model), else `out_dir`/gemm.json,
// else the installed one.
Result<std::vector<GemmCurveEntry>> ResolveGemmCurves(const VtrainTrainOptions& opt,
                                                      const std::string& out_dir);

}  // namespace fmte::learn::vtrain_internal

#endif  // FMTE_LEARN_SRC_VTRAIN_INTERNAL_H_
