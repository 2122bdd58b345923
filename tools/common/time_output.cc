#include "time_output.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "fmte/timeline.h"

namespace fmte::tools {
namespace {

nlohmann::json ModelJson(const SiteCorrectionModel& m) {
  nlohmann::json j = {{"file", m.path},
                      {"rows", m.rows},
                      {"groups", m.groups},
                      {"data", {{"first_end", m.first_end}, {"last_end", m.last_end}}}};
  if (m.cv_mean_abs_rel_error >= 0) j["cv_mean_abs_rel_error"] = m.cv_mean_abs_rel_error;
  if (m.has_quantiles) {
    j["log_residual_quantiles"] = {
        {"p50", m.log_residual_p50}, {"p90", m.log_residual_p90}, {"p95", m.log_residual_p95}};
  }
  return j;
}

nlohmann::json FactorJson(const AppliedCorrection& a) {
  return {{"applied", a.applied},
          {"model_factor", a.model_factor},
          {"factor", a.factor},
          {"clamped", a.clamped}};
}

std::string DataRange(const SiteCorrectionModel& m) {
  return std::to_string(m.rows) + " jobs" +
         (m.first_end.empty() ? "" : ", ended " + m.first_end + " .. " + m.last_end);
}

}  // namespace

Status ApplyRegressorsDir(const std::string& dir, Catalogs* catalogs) {
  if (dir.empty()) return Status::Ok();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return Status::NotFound("--regressors: " + dir + ": no such directory");
  return LoadRegressors(dir, catalogs).WithContext("--regressors");
}

void AddCorrectionJson(nlohmann::json& doc, const TrainingJob& job, const JobEstimate& e,
                       const SiteCorrections& c) {
  if (c.empty()) return;
  nlohmann::json& j = doc["correction"];
  j["regressors_dir"] = c.dir;
  j["applied"] = e.correction.any();
  if (c.memory) {
    nlohmann::json m = FactorJson(e.correction.memory);
    m["model"] = ModelJson(*c.memory);
    m["model_per_gpu_bytes"] = ModelPerGpuBytes(e);
    m["per_gpu_bytes"] = e.memory.per_gpu_bytes;
    j["memory"] = std::move(m);
  }
  if (c.time) {
    nlohmann::json t = FactorJson(e.correction.time);
    t["model"] = ModelJson(*c.time);
    if (e.has_time) {
      t["model_wall_time_s"] = ModelWallTimeS(e);
      t["wall_time_s"] = e.wall_time_s;
      t["wall_time_bound_s"] = e.wall_time_bound_s;
      t["bound"] = c.time->has_quantiles
                       ? "corrected wall time x exp(p95 of the held-out log residuals)"
                       : "the time model's bound x factor";
    } else if (GeneratesCompletions(job.objective)) {
      t["why_not"] = "no wall time: " + std::string(ToString(job.objective)) +
                     " generates its completions in every step, which fmte does not model";
    } else {
      t["why_not"] = "no wall time: give --tokens, --samples (with --epochs) or --steps";
    }
    j["time"] = std::move(t);
  }
}

void PrintCorrection(std::ostream& os, const JobEstimate& e, const SiteCorrections& c) {
  if (c.empty()) return;
  char buf[512];
  const auto line = [&](const char* what, const AppliedCorrection& a, const SiteCorrectionModel& m,
                        const std::string& before_after) {
    if (!a.applied) {
      std::snprintf(buf, sizeof buf, "site correction %s: not applied (%s)\n", what,
                    m.path.c_str());
    } else {
      std::snprintf(
          buf, sizeof buf, "site correction %s x%.3f%s  %s\n  from %s (%s)\n", what, a.factor,
          a.clamped
              ? (" (model said x" + std::to_string(a.model_factor).substr(0, 6) + ", guarded)")
                    .c_str()
              : "",
          before_after.c_str(), m.path.c_str(), DataRange(m).c_str());
    }
    os << buf;
  };
  if (c.memory) {
    const auto gib = [](int64_t b) {
      return std::to_string(static_cast<double>(b) / (1 << 30)).substr(0, 6) + " GiB";
    };
    line("memory", e.correction.memory, *c.memory,
         gib(ModelPerGpuBytes(e)) + " -> " + gib(e.memory.per_gpu_bytes));
  }
  if (c.time) {
    line("time  ", e.correction.time, *c.time,
         e.has_time ? std::to_string(static_cast<int64_t>(ModelWallTimeS(e))) + " s -> " +
                          std::to_string(static_cast<int64_t>(e.wall_time_s)) + " s (bound " +
                          std::to_string(static_cast<int64_t>(e.wall_time_bound_s)) + " s)"
                    : std::string("no wall time"));
  }
}

Status WriteTimeline(const std::string& path, const ModelArch& model, const JobEstimate& estimate) {
  if (path.empty()) return Status::Ok();
  if (!estimate.has_step_time)
    return Status::InvalidArgument(
        "--timeline: no step time for this job (is regressors/vtrain installed?)");
  std::ofstream out(path, std::ios::trunc);
  if (!out) return Status::IoError("--timeline: cannot write " + path);
  out << StepTimelineSvg(estimate.time.step, model.id);
  out.flush();
  if (!out) return Status::IoError("--timeline: write failed: " + path);
  return Status::Ok();
}

}  // namespace fmte::tools
