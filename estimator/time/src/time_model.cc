// TimeModel: the learned constants of the step-time model, loaded from regressors/vtrain/.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fmte/file.h"
#include "fmte/json_fields.h"
#include "fmte/text.h"
#include "fmte/time.h"
#include "time_correction.h"

namespace fmte {
namespace {

// Whether `s` starts with `prefix`, both lowered with std::tolower: compared in place, without
// copying either name (no allocation; every estimate looks its GPU up here).
bool StartsWithLowered(std::string_view s, std::string_view prefix) {
  if (prefix.size() > s.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  }
  return true;
}

// Optional "gemm_fwd"/"gemm_bwd" objects of an efficiency entry (GemmCurve).
Status ReadCurve(const nlohmann::json& e, const char* key, GemmCurve* out,
                 const std::string& where) {
  if (!e.contains(key)) return Status::Ok();
  const nlohmann::json& c = e[key];
  const std::string at = where + ": " + key;
  if (!c.is_object()) return Status::ParseError(at + ": expected an object");
  FMTE_RETURN_IF_ERROR(ReadJsonNumber(c, "peak_fraction", Presence::kRequired, Sign::kPositive, at,
                                      &out->peak_fraction));
  FMTE_RETURN_IF_ERROR(
      ReadJsonNumber(c, "m_half", Presence::kRequired, Sign::kNonNegative, at, &out->m_half));
  FMTE_RETURN_IF_ERROR(
      ReadJsonNumber(c, "k_half", Presence::kRequired, Sign::kNonNegative, at, &out->k_half));
  FMTE_RETURN_IF_ERROR(
      ReadJsonNumber(c, "n_half", Presence::kRequired, Sign::kNonNegative, at, &out->n_half));
  if (out->peak_fraction > 1)
    return Status::ParseError(at + ": \"peak_fraction\": expected a number in (0, 1]");
  return Status::Ok();
}

}  // namespace

Result<TimeModel> TimeModel::LoadDir(const std::string& dir) {
  const std::string path = dir + "/efficiency.json";
  Result<std::string> text = ReadFile(path, "the step-time model");
  if (!text.ok()) return text.status();
  TimeModel model;
  try {
    const nlohmann::json j = nlohmann::json::parse(*text);
    if (!j.contains("efficiencies") || !j["efficiencies"].is_array() || j["efficiencies"].empty())
      return Status::ParseError(path + ": \"efficiencies\": expected a non-empty array");
    for (const auto& e : j["efficiencies"]) {
      TimeEfficiency t;
      if (!e.contains("gpu") || !e["gpu"].is_string())
        return Status::ParseError(path + ": efficiencies[].gpu: expected a string");
      t.gpu = e["gpu"].get<std::string>();
      FMTE_RETURN_IF_ERROR(ReadJsonNumber(e, "gemm_efficiency", Presence::kRequired,
                                          Sign::kPositive, path, &t.gemm_efficiency));
      FMTE_RETURN_IF_ERROR(ReadJsonNumber(e, "layer_overhead_s", Presence::kRequired,
                                          Sign::kNonNegative, path, &t.layer_overhead_s));
      FMTE_RETURN_IF_ERROR(ReadJsonNumber(e, "memory_traffic", Presence::kRequired,
                                          Sign::kNonNegative, path, &t.memory_traffic));
      FMTE_RETURN_IF_ERROR(ReadJsonNumber(e, "comm_efficiency", Presence::kRequired,
                                          Sign::kPositive, path, &t.comm_efficiency));
      FMTE_RETURN_IF_ERROR(ReadJsonNumber(e, "comm_latency_s", Presence::kRequired,
                                          Sign::kNonNegative, path, &t.comm_latency_s));
      FMTE_RETURN_IF_ERROR(ReadJsonNumber(e, "step_overhead_s", Presence::kRequired,
                                          Sign::kNonNegative, path, &t.step_overhead_s));
      FMTE_RETURN_IF_ERROR(ReadCurve(e, "gemm_fwd", &t.gemm_fwd, path));
      FMTE_RETURN_IF_ERROR(ReadCurve(e, "gemm_bwd", &t.gemm_bwd, path));
      if (t.gemm_fwd.valid() != t.gemm_bwd.valid())
        return Status::ParseError(
            path + ": efficiencies[].gemm_fwd/gemm_bwd: give both curves or neither");
      if (e.contains("source")) {
        if (!e["source"].is_string())
          return Status::ParseError(path + ": efficiencies[].source: expected a string");
        t.source = e["source"].get<std::string>();
      }
      model.AddEfficiency(std::move(t));
    }
    if (j.contains("heldout_log_residuals")) {
      if (!j["heldout_log_residuals"].is_array())
        return Status::ParseError(path +
                                  ": \"heldout_log_residuals\": expected an array of numbers");
      model.SetResiduals(j["heldout_log_residuals"].get<std::vector<double>>());
    }
    if (j.contains("correction") && j["correction"].is_object()) {
      const auto& c = j["correction"];
      if (!c.contains("file") || !c["file"].is_string())
        return Status::ParseError(path + ": correction.file: expected a file name");
      double clamp = 0.4;
      if (c.contains("clamp_log"))
        FMTE_RETURN_IF_ERROR(
            ReadJsonNumber(c, "clamp_log", Presence::kRequired, Sign::kPositive, path, &clamp));
      Result<std::string> ctext =
          ReadFile(dir + "/" + c["file"].get<std::string>(), "the step-time correction");
      if (!ctext.ok()) return ctext.status();
      Result<std::shared_ptr<const StepTimeCorrection>> corr = LoadTreeCorrection(
          *ctext, dir + "/" + c["file"].get<std::string>(), StepTimeFeatureNames().size());
      if (!corr.ok()) return corr.status();
      model.SetCorrection(*corr, clamp);
      if (c.contains("domain")) {
        // {"feature name": [min, max], ...}: the training range of the size features.
        const auto& d = c["domain"];
        if (!d.is_object())
          return Status::ParseError(path + ": correction.domain: expected an object");
        std::vector<FeatureRange> domain;
        const std::vector<std::string>& names = StepTimeFeatureNames();
        for (const auto& [name, range] : d.items()) {
          const auto it = std::find(names.begin(), names.end(), name);
          if (it == names.end())
            return Status::ParseError(path + ": correction.domain: '" + name +
                                      "' is not a correction feature");
          if (!range.is_array() || range.size() != 2 || !range[0].is_number() ||
              !range[1].is_number() || range[0].get<double>() > range[1].get<double>())
            return Status::ParseError(path + ": correction.domain." + name +
                                      ": expected [min, max]");
          domain.push_back({static_cast<size_t>(it - names.begin()), range[0].get<double>(),
                            range[1].get<double>()});
        }
        model.SetCorrectionDomain(std::move(domain));
      }
    }
  } catch (const std::exception& e) {
    return Status::ParseError(path + ": " + e.what());
  }
  return model;
}

std::string TimeModel::DefaultDir() { return RegressorsDir() + "/vtrain"; }

const TimeEfficiency& TimeModel::For(const GpuSpec& gpu, bool* exact) const {
  static const TimeEfficiency kUnfitted{};
  if (efficiencies_.empty()) {
    if (exact != nullptr) *exact = false;
    return kUnfitted;
  }
  for (const TimeEfficiency& e : efficiencies_) {
    if (!e.gpu.empty() && StartsWithLowered(gpu.name, e.gpu)) {
      if (exact != nullptr) *exact = true;
      return e;
    }
  }
  if (exact != nullptr) *exact = false;
  return efficiencies_.front();
}

TimeEfficiency& TimeModel::MutableFor(const GpuSpec& gpu) {
  if (efficiencies_.empty()) efficiencies_.emplace_back();
  const TimeEfficiency& found = For(gpu);
  return efficiencies_[static_cast<size_t>(&found - efficiencies_.data())];
}

void TimeModel::SetResiduals(std::vector<double> log_residuals) {
  log_residuals.erase(std::remove_if(log_residuals.begin(), log_residuals.end(),
                                     [](double x) { return !std::isfinite(x); }),
                      log_residuals.end());
  std::sort(log_residuals.begin(), log_residuals.end());
  log_residuals_ = std::move(log_residuals);
}

double TimeModel::UpperFactor(double quantile) const {
  if (log_residuals_.empty()) return 1.0;
  const double q = std::clamp(quantile, 0.0, 1.0);
  // Linear interpolation between order statistics (type 7, as numpy's default).
  const double pos = q * static_cast<double>(log_residuals_.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, log_residuals_.size() - 1);
  const double x = log_residuals_[lo] +
                   (pos - static_cast<double>(lo)) * (log_residuals_[hi] - log_residuals_[lo]);
  return std::max(1.0, std::exp(x));
}

}  // namespace fmte
