// Fits the shipped step-time model on all vTrain rows and writes regressors/vtrain/.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>

#include "fmte/learn/correction_domain.h"
#include "fmte/learn/gemm_fit.h"
#include "fmte/learn/install.h"
#include "fmte/learn/vtrain.h"
#include "vtrain_internal.h"

namespace fmte::learn {

namespace {

nlohmann::json CvJson(const VtrainCvReport& r, const char* grouping) {
  return {{"grouping", grouping},
          {"folds", r.folds},
          {"rows", r.rows},
          {"groups", r.groups},
          {"analytic_mape", r.analytic_mape},
          {"analytic_p90_ape", r.analytic_p90_ape},
          {"analytic_max_ape", r.analytic_max_ape},
          {"corrected_mape", r.corrected_mape},
          {"corrected_p90_ape", r.corrected_p90_ape},
          {"corrected_max_ape", r.corrected_max_ape}};
}

nlohmann::json CurveJson(const GemmCurve& c) {
  return {{"peak_fraction", c.peak_fraction},
          {"m_half", c.m_half},
          {"k_half", c.k_half},
          {"n_half", c.n_half}};
}

nlohmann::json EfficiencyJson(const TimeEfficiency& e) {
  nlohmann::json j = {{"gpu", e.gpu},
                      {"gemm_efficiency", e.gemm_efficiency},
                      {"layer_overhead_s", e.layer_overhead_s},
                      {"memory_traffic", e.memory_traffic},
                      {"comm_efficiency", e.comm_efficiency},
                      {"comm_latency_s", e.comm_latency_s},
                      {"step_overhead_s", e.step_overhead_s}};
  if (e.gemm_fwd.valid() && e.gemm_bwd.valid()) {
    j["gemm_fwd"] = CurveJson(e.gemm_fwd);
    j["gemm_bwd"] = CurveJson(e.gemm_bwd);
  }
  if (!e.source.empty()) j["source"] = e.source;
  return j;
}

// Entries for the GPU families of the other sampled clusters (gemm.json): their own GEMM curve; the
// large-matrix efficiency scaled by what the measured framework reached relative to the operator
// samples on the fitted GPU (fitted gemm_efficiency / its curve's peak_fraction); the launch,
// memory-traffic, link and per-step constants of the fitted GPU (no step times measured there).
std::vector<TimeEfficiency> OtherGpuEntries(const TimeEfficiency& fitted, const GemmCurveEntry* own,
                                            const std::vector<GemmCurveEntry>& curves) {
  std::vector<TimeEfficiency> out;
  const double framework_ratio =
      own != nullptr ? fitted.gemm_efficiency / own->fwd.peak_fraction : 1.0;
  for (const GemmCurveEntry& c : curves) {
    if (&c == own) continue;
    for (const std::string& prefix : c.source.applies_to) {
      TimeEfficiency e = fitted;
      e.gpu = prefix;
      e.gemm_fwd = c.fwd;
      e.gemm_bwd = c.bwd;
      e.gemm_efficiency = std::min(1.0, c.fwd.peak_fraction * framework_ratio);
      e.source = "GEMM curve from " + c.source.cluster + " " + c.source.sampled_gpu +
                 " operator samples; large-matrix efficiency = its peak fraction x the " +
                 fitted.gpu + " framework ratio (vTrain-fitted / operator) " +
                 std::to_string(framework_ratio).substr(0, 5) +
                 "; launch, memory-traffic, link and per-step constants from the " + fitted.gpu +
                 " vTrain fit";
      out.push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace

Status TrainVtrainModel(const std::vector<VtrainRow>& rows, const GpuSpec& gpu,
                        const VtrainTrainOptions& options_in, const std::string& provenance,
                        const std::string& out_dir, VtrainCvReport* report_out) {
  VtrainTrainOptions options = options_in;
  std::error_code exists_ec;
  if (options.gemm_curves.empty() && std::filesystem::exists(out_dir + "/gemm.json", exists_ec))
    options.gemm_curves = out_dir + "/gemm.json";
  Result<std::vector<GemmCurveEntry>> curves = vtrain_internal::ResolveGemmCurves(options, out_dir);
  if (!curves.ok()) return curves.status();
  const GemmCurveEntry* own = FindGemmCurve(*curves, gpu.name);
  VtrainCvReport* report = report_out;
  // Held-out errors first (by configuration, then the stricter by layout).
  Result<VtrainCvReport> cv = CrossValidateVtrain(rows, gpu, options);
  if (!cv.ok()) return cv.status();
  VtrainTrainOptions by_layout = options;
  by_layout.grouping = VtrainGrouping::kLayout;
  Result<VtrainCvReport> cv_layout = CrossValidateVtrain(rows, gpu, by_layout);
  if (!cv_layout.ok()) return cv_layout.status();
  if (report != nullptr) *report = *cv;

  std::vector<int64_t> all(rows.size());
  std::iota(all.begin(), all.end(), 0);
  std::vector<double> analytic_log;
  TimeEfficiency fitted;
  std::string model_json;
  std::vector<FeatureRange> domain;
  Result<std::vector<double>> fit =
      vtrain_internal::FitPredict(rows, gpu, options, all, {}, &analytic_log, &fitted,
                                  options.correction ? &model_json : nullptr, &domain);
  if (!fit.ok()) return fit.status();

  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (own != nullptr) {
    fitted.source = "GEMM curve from " + own->source.cluster + " " + own->source.sampled_gpu +
                    " operator samples (gemm.json); " +
                    (options.fit_gemm_efficiency ? "large-matrix efficiency and " : "") +
                    "other constants fitted on " + std::to_string(rows.size()) +
                    " measured iterations (" + gpu.name + ")";
  } else {
    fitted.source = "one GEMM efficiency fitted on " + std::to_string(rows.size()) +
                    " measured iterations (" + gpu.name + "), no GEMM curve";
  }
  nlohmann::json entries = nlohmann::json::array({EfficiencyJson(fitted)});
  for (const TimeEfficiency& e : OtherGpuEntries(fitted, own, *curves))
    entries.push_back(EfficiencyJson(e));
  nlohmann::json eff = {{"format", "fmte-time-efficiency/1"},
                        {"efficiencies", entries},
                        {"heldout_log_residuals", cv->heldout_log_residuals}};
  if (options.correction) {
    eff["correction"] = CorrectionBlockJson(&domain, 0.4);
    FMTE_RETURN_IF_ERROR(WriteFileAtomic(out_dir + "/correction.json", model_json));
  }
  FMTE_RETURN_IF_ERROR(WriteFileAtomic(out_dir + "/efficiency.json", eff.dump(1) + "\n"));

  nlohmann::json manifest = {
      {"what", "fmte step-time model: analytic efficiency constants + boosted-tree correction"},
      {"trained_by", "fmte-retrain vtrain (learn/src/vtrain_fit.cc)"},
      {"gpu", gpu.name},
      {"data", provenance},
      {"rows", rows.size()},
      {"features", StepTimeFeatureNames()},
      {"label", "log(measured iteration time / analytic step time)"},
      {"xgboost",
       {{"rounds", options.xgb_rounds},
        {"max_depth", options.xgb_depth},
        {"eta", options.xgb_eta},
        {"min_child_weight", 5},
        {"objective", "reg:squarederror"}}},
      {"assumptions",
       "GPT-2 vocabulary 50257 padded to 128*tp; mixed fp16; full activation checkpointing; "
       "Megatron "
       "fused (non-flash) softmax; 1F1B; GPU variant not given by vTrain: fitted as " +
           gpu.name},
      {"cross_validation",
       {CvJson(*cv, "held-out (layers, tp, pp, dp) configurations"),
        CvJson(*cv_layout, "held-out (tp, pp, dp) layouts")}},
      {"gemm_curve", own != nullptr ? nlohmann::json{{"file", "gemm.json"},
                                                     {"cluster", own->source.cluster},
                                                     {"sampled_gpu", own->source.sampled_gpu},
                                                     {"large_matrix_efficiency_fitted_here",
                                                      options.fit_gemm_efficiency}}
                                    : nlohmann::json("none: one flat GEMM efficiency")},
      {"published_comparison",
       "vTrain (MICRO 2024) reports 8.37% mean absolute error on its single-node "
       "validation set (its own simulator, not held-out fitting)"}};
  return WriteFileAtomic(out_dir + "/manifest.json", manifest.dump(1) + "\n");
}

}  // namespace fmte::learn
