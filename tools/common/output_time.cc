// The time part of an estimate's output (issue 4). A minimal rendering of JobEstimate's wall
// time; the time engineer replaces this file's bodies with the full EstimateTime output
// (step time breakdown, MFU, ...), keeping the two signatures in output.h.
#include <cstdio>

#include "output.h"

namespace fmte::tools {

void AddTimeJson(nlohmann::json& doc, const TrainingJob& /*job*/, const JobEstimate& estimate) {
  if (!estimate.has_time) return;
  doc["time"]["wall_time_s"] = estimate.wall_time_s;
  doc["time"]["wall_time_bound_s"] = estimate.wall_time_bound_s;
}

void PrintTime(std::ostream& os, const TrainingJob& /*job*/, const JobEstimate& estimate) {
  if (!estimate.has_time) return;
  char buf[128];
  std::snprintf(buf, sizeof buf, "wall time       %.2f h (upper bound %.2f h)\n",
                estimate.wall_time_s / 3600, estimate.wall_time_bound_s / 3600);
  os << buf;
}

}  // namespace fmte::tools
