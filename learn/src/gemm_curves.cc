// gemm.json: the fitted GEMM curves of each sampled cluster, what GPUs they apply to, their
// held-out errors and provenance (gemm_fit.h).
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fmte/learn/gemm_fit.h"
#include "fmte/text.h"

namespace fmte::learn {
namespace {

nlohmann::json CurveJson(const GemmCurve& c) {
  return {{"peak_fraction", c.peak_fraction},
          {"m_half", c.m_half},
          {"k_half", c.k_half},
          {"n_half", c.n_half}};
}

Result<GemmCurve> CurveFrom(const nlohmann::json& j, const std::string& where) {
  GemmCurve c;
  if (!j.is_object()) return Status::ParseError(where + ": expected an object");
  for (auto [key, out] : {std::pair{"peak_fraction", &c.peak_fraction},
                          {"m_half", &c.m_half},
                          {"k_half", &c.k_half},
                          {"n_half", &c.n_half}}) {
    if (!j.contains(key) || !j[key].is_number() || j[key].get<double>() < 0)
      return Status::ParseError(where + ": \"" + key + "\": expected a non-negative number");
    *out = j[key].get<double>();
  }
  if (!(c.peak_fraction > 0 && c.peak_fraction <= 1))
    return Status::ParseError(where + ": \"peak_fraction\": expected a number in (0, 1]");
  return c;
}

}  // namespace

Result<std::vector<GemmCurveEntry>> TrainGemmCurves(const std::vector<GemmCurveSource>& sources,
                                                    const std::string& path) {
  std::vector<GemmCurveEntry> out;
  nlohmann::json curves = nlohmann::json::array();
  for (const GemmCurveSource& src : sources) {
    if (!(src.peak_tflops > 0))
      return Status::InvalidArgument(src.cluster + ": peak_tflops must be positive");
    Result<std::vector<GemmSample>> samples = ReadGemmSamples(src.operator_dir);
    if (!samples.ok()) return samples.status();
    const double peak = src.peak_tflops * 1e12;
    GemmCurveEntry e;
    e.source = src;
    Result<GemmCurve> fwd = FitGemmCurve(*samples, false, peak);
    if (!fwd.ok()) return fwd.status();
    Result<GemmCurve> bwd = FitGemmCurve(*samples, true, peak);
    if (!bwd.ok()) return bwd.status();
    Result<GemmCvReport> cv = CrossValidateGemmCurve(*samples, peak);
    if (!cv.ok()) return cv.status();
    e.fwd = *fwd;
    e.bwd = *bwd;
    e.cv = *cv;
    curves.push_back(
        {{"cluster", src.cluster},
         {"sampled_gpu", src.sampled_gpu},
         {"peak_tflops", src.peak_tflops},
         {"applies_to", src.applies_to},
         {"gemm_fwd", CurveJson(e.fwd)},
         {"gemm_bwd", CurveJson(e.bwd)},
         {"data", src.provenance},
         {"rows", cv->rows},
         {"cross_validation",
          {{"grouping", "leave-one-hidden-size-out (whole widths held out)"},
           {"groups", cv->groups},
           {"fwd_mape", cv->fwd_mape},
           {"fwd_p90_ape", cv->fwd_p90_ape},
           {"bwd_mape", cv->bwd_mape},
           {"bwd_p90_ape", cv->bwd_p90_ape},
           {"flat_fwd_mape", cv->flat_fwd_mape},
           {"flat_bwd_mape", cv->flat_bwd_mape},
           {"wide_fwd_mape", cv->wide_fwd_mape},
           {"wide_bwd_mape", cv->wide_bwd_mape},
           {"wide_grouping", "fitted on hidden sizes <= 6144, predicting 6656..8192"}}}});
    out.push_back(std::move(e));
  }
  const nlohmann::json doc = {
      {"format", "fmte-gemm-curves/1"},
      {"what",
       "achieved fraction of dense peak of a (m x k) x (k x n) product = peak_fraction / "
       "(1 + m_half/m + k_half/k + n_half/n); forward 2mkn FLOPs, backward 4mkn"},
      {"trained_by", "learn/src/gemm_fit.cc (fmte::learn::TrainGemmCurves)"},
      {"curves", curves}};
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) return Status::IoError(tmp + ": cannot write");
    f << doc.dump(1) << "\n";
    if (!f) return Status::IoError(tmp + ": write failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::IoError(path + ": rename failed: " + ec.message());
  return out;
}

Result<std::vector<GemmCurveEntry>> LoadGemmCurves(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::IoError(path + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  std::vector<GemmCurveEntry> out;
  try {
    const nlohmann::json j = nlohmann::json::parse(ss.str());
    if (!j.contains("curves") || !j["curves"].is_array())
      return Status::ParseError(path + ": \"curves\": expected an array");
    for (const auto& c : j["curves"]) {
      GemmCurveEntry e;
      if (!c.contains("applies_to") || !c["applies_to"].is_array() || c["applies_to"].empty())
        return Status::ParseError(path +
                                  ": curves[].applies_to: expected a non-empty array of GPU names");
      e.source.applies_to = c["applies_to"].get<std::vector<std::string>>();
      if (c.contains("cluster") && c["cluster"].is_string())
        e.source.cluster = c["cluster"].get<std::string>();
      if (c.contains("sampled_gpu") && c["sampled_gpu"].is_string())
        e.source.sampled_gpu = c["sampled_gpu"].get<std::string>();
      if (c.contains("data") && c["data"].is_string())
        e.source.provenance = c["data"].get<std::string>();
      if (c.contains("peak_tflops") && c["peak_tflops"].is_number())
        e.source.peak_tflops = c["peak_tflops"].get<double>();
      if (!c.contains("gemm_fwd") || !c.contains("gemm_bwd"))
        return Status::ParseError(path + ": curves[]: expected \"gemm_fwd\" and \"gemm_bwd\"");
      Result<GemmCurve> fwd = CurveFrom(c["gemm_fwd"], path + ": gemm_fwd");
      if (!fwd.ok()) return fwd.status();
      Result<GemmCurve> bwd = CurveFrom(c["gemm_bwd"], path + ": gemm_bwd");
      if (!bwd.ok()) return bwd.status();
      e.fwd = *fwd;
      e.bwd = *bwd;
      out.push_back(std::move(e));
    }
  } catch (const std::exception& ex) {
    return Status::ParseError(path + ": " + ex.what());
  }
  return out;
}

const GemmCurveEntry* FindGemmCurve(const std::vector<GemmCurveEntry>& entries,
                                    std::string_view gpu_name) {
  const std::string name = Lower(gpu_name);
  for (const GemmCurveEntry& e : entries)
    for (const std::string& prefix : e.source.applies_to)
      if (!prefix.empty() && name.rfind(Lower(prefix), 0) == 0) return &e;
  return nullptr;
}

}  // namespace fmte::learn
