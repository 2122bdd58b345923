#include "time_output.h"

#include <filesystem>
#include <fstream>

namespace fmte::tools {

Status ApplyRegressorsDir(const std::string& dir, Catalogs* catalogs) {
  if (dir.empty()) return Status::Ok();
  std::error_code ec;
  const std::string sub = std::filesystem::exists(dir + "/efficiency.json", ec) ? dir : dir + "/vtrain";
  Result<TimeModel> m = TimeModel::LoadDir(sub);
  if (!m.ok()) return m.status().WithContext("--regressors");
  catalogs->time_model = std::move(m).value();
  catalogs->has_time_model = true;
  return Status::Ok();
}

Status WriteTimeline(const std::string& path, const ModelArch& model, const JobEstimate& estimate) {
  if (path.empty()) return Status::Ok();
  if (!estimate.has_step_time)
    return Status::InvalidArgument("--timeline: no step time for this job (is regressors/vtrain installed?)");
  std::ofstream out(path, std::ios::trunc);
  if (!out) return Status::IoError("--timeline: cannot write " + path);
  out << StepTimelineSvg(estimate.time.step, model.id);
  out.flush();
  if (!out) return Status::IoError("--timeline: write failed: " + path);
  return Status::Ok();
}

}  // namespace fmte::tools
