// Width-dependent GEMM efficiency learned from measured operator times: the linear1..4 samples of
// the AI4CI "Distributed Training Estimator" (its published regressors/<cluster>/operator/
// <GPU>_linear{1,2,3,4}_fp16.csv, copied in tests/data/gemm: Megatron's QKV, attention-output,
// MLP-up and MLP-down products, forward and backward, at hidden sizes 2048..8192, TP 1..16,
// micro-batch x sequence 2048..40960). Each row is turned into its GEMM shape (m, k, n) and FLOPs;
// a GemmCurve (time.h) per pass is fitted by Levenberg-Marquardt on log(predicted / measured time)
// and validated on held-out hidden sizes (whole widths, never random rows). The curves are written
// to gemm.json, which TrainVtrainModel (vtrain.h) reads to give the analytic step-time model its
// shape factor.
// Thread-safety: pure functions.
#ifndef FMTE_LEARN_GEMM_FIT_H_
#define FMTE_LEARN_GEMM_FIT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/status.h"
#include "fmte/time.h"

namespace fmte::learn {

struct GemmSample {
  std::string op;              // linear1 .. linear4
  double m = 0, k = 0, n = 0;  // per-GPU product (m x k) x (k x n)
  double fwd_s = 0,
         bwd_s = 0;   // measured forward (2mkn FLOPs), backward (4mkn: input + weight grads)
  int64_t width = 0;  // the sampled hidden size (the CV group)
};

// GEMM shape of one sampled row, as the seed's sampler builds its layers (hidden d, TP mp,
// micro-batch b, sequence l, MLP 4d, fused QKV 3d; its
// Estimator/layer_input_to_predictor_input.py):
//   linear1 (l*b, d, 3d/mp)  linear2 (l*b, d/mp, d)  linear3 (l*b, d, 4d/mp)  linear4 (l*b, 4d/mp,
//   d)
// Parses one operator CSV ("mp,b,l,dim,F_dur(us),B_dur(us)"; mp may be missing = 1). Errors name
// the origin, line and column.
Result<std::vector<GemmSample>> ParseGemmCsv(std::string_view text, std::string_view op,
                                             std::string_view origin);
// Reads every <prefix>_linear{1,2,3,4}_fp16.csv of an operator directory (all four required).
Result<std::vector<GemmSample>> ReadGemmSamples(const std::string& operator_dir);

// Fits the forward (bwd = false) or backward curve. `peak_flops` is the sampled GPU's dense 16-bit
// peak (etc/gpus.csv); peak_fraction is relative to it.
Result<GemmCurve> FitGemmCurve(const std::vector<GemmSample>& samples, bool bwd, double peak_flops);

struct GemmCvReport {
  int64_t rows = 0, groups = 0;
  // Leave-one-width-out: every width predicted by curves fitted on the other widths.
  double fwd_mape = 0, bwd_mape = 0, fwd_p90_ape = 0, bwd_p90_ape = 0;
  // The same held-out rows with one constant efficiency per pass (the flat baseline), fitted
  // on the same training widths: what the shape dependence buys.
  double flat_fwd_mape = 0, flat_bwd_mape = 0;
  // Extrapolation: fitted on widths <= 6144 only, predicting 6656..8192.
  double wide_fwd_mape = 0, wide_bwd_mape = 0;
};
Result<GemmCvReport> CrossValidateGemmCurve(const std::vector<GemmSample>& samples,
                                            double peak_flops);

// One sampled cluster and the GPU families its curve is used for.
struct GemmCurveSource {
  std::string operator_dir;             // .../<cluster>/operator
  std::string cluster;                  // "Perlmutter"
  std::string sampled_gpu;              // GPU catalog name of the sampled GPU (for its peak)
  double peak_tflops = 0;               // its dense 16-bit peak
  std::vector<std::string> applies_to;  // GPU name prefixes ("A100"; "H100", "H200", "GH200")
  std::string provenance;               // where the CSVs come from
};

struct GemmCurveEntry {
  GemmCurveSource source;
  GemmCurve fwd, bwd;
  GemmCvReport cv;
};

// Fits and cross-validates each source; writes `path` (gemm.json, format "fmte-gemm-curves/1")
// atomically.
Result<std::vector<GemmCurveEntry>> TrainGemmCurves(const std::vector<GemmCurveSource>& sources,
                                                    const std::string& path);

// Reads gemm.json (the curves and what they apply to; the CV numbers are not read back).
Result<std::vector<GemmCurveEntry>> LoadGemmCurves(const std::string& path);

// The entry whose applies_to has a prefix of `gpu_name` (case-insensitive), or null.
const GemmCurveEntry* FindGemmCurve(const std::vector<GemmCurveEntry>& entries,
                                    std::string_view gpu_name);

}  // namespace fmte::learn

#endif  // FMTE_LEARN_GEMM_FIT_H_
