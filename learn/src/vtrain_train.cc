// Fits the shipped step-time model on all vTrain rows and writes regressors/vtrain/.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "fmte/learn/vtrain.h"

namespace fmte::learn {
namespace vtrain_internal {
Result<std::vector<double>> FitPredict(const std::vector<VtrainRow>& rows, const GpuSpec& gpu,
                                       const VtrainTrainOptions& opt, const std::vector<int64_t>& train,
                                       const std::vector<int64_t>& test, std::vector<double>* analytic_log,
                                       TimeEfficiency* fitted, std::string* model_json);
}  // namespace vtrain_internal

namespace {

Status WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status::IoError(tmp + ": cannot write");
    out << text;
    out.flush();
    if (!out) return Status::IoError(tmp + ": write failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::IoError(path + ": rename failed: " + ec.message());
  return Status::Ok();
}

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

}  // namespace

Status TrainVtrainModel(const std::vector<VtrainRow>& rows, const GpuSpec& gpu,
                        const VtrainTrainOptions& options, const std::string& provenance,
                        const std::string& out_dir, VtrainCvReport* report) {
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
  Result<std::vector<double>> fit = vtrain_internal::FitPredict(rows, gpu, options, all, {}, &analytic_log,
                                                                &fitted, options.correction ? &model_json : nullptr);
  if (!fit.ok()) return fit.status();

  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  nlohmann::json eff = {{"format", "fmte-time-efficiency/1"},
                        {"efficiencies",
                         {{{"gpu", fitted.gpu},
                           {"gemm_efficiency", fitted.gemm_efficiency},
                           {"layer_overhead_s", fitted.layer_overhead_s},
                           {"memory_traffic", fitted.memory_traffic},
                           {"comm_efficiency", fitted.comm_efficiency},
                           {"comm_latency_s", fitted.comm_latency_s},
                           {"step_overhead_s", fitted.step_overhead_s}}}},
                        {"heldout_log_residuals", cv->heldout_log_residuals}};
  if (options.correction) {
    eff["correction"] = {{"file", "correction.json"}, {"clamp_log", 0.4}};
    FMTE_RETURN_IF_ERROR(WriteAtomically(out_dir + "/correction.json", model_json));
  }
  FMTE_RETURN_IF_ERROR(WriteAtomically(out_dir + "/efficiency.json", eff.dump(1) + "\n"));

  nlohmann::json manifest = {
      {"what", "fmte step-time model: analytic efficiency constants + boosted-tree correction"},
      {"trained_by", "fmte-retrain vtrain (learn/src/vtrain_fit.cc)"},
      {"gpu", gpu.name},
      {"data", provenance},
      {"rows", rows.size()},
      {"features", StepTimeFeatureNames()},
      {"label", "log(measured iteration time / analytic step time)"},
      {"xgboost", {{"rounds", options.xgb_rounds}, {"max_depth", options.xgb_depth}, {"eta", options.xgb_eta},
                   {"min_child_weight", 5}, {"objective", "reg:squarederror"}}},
      {"assumptions",
       "GPT-2 vocabulary 50257 padded to 128*tp; mixed fp16; full activation checkpointing; Megatron "
       "fused (non-flash) softmax; 1F1B; GPU variant not given by vTrain: fitted as " + gpu.name},
      {"cross_validation", {CvJson(*cv, "held-out (layers, tp, pp, dp) configurations"),
                            CvJson(*cv_layout, "held-out (tp, pp, dp) layouts")}},
      {"published_comparison", "vTrain (MICRO 2024) reports 8.37% mean absolute error on its single-node "
                               "validation set (its own simulator, not held-out fitting)"}};
  return WriteAtomically(out_dir + "/manifest.json", manifest.dump(1) + "\n");
}

}  // namespace fmte::learn
