// Summaries of read jobs (the contract of `fmte-retrain read --json`) and small helpers.
#include "fmte/learn/sacct.h"

namespace fmte::learn {

std::string_view ToString(GpuMemSource s) {
  switch (s) {
    case GpuMemSource::kTresUsage:
      return "tres";
    case GpuMemSource::kJobstats:
      return "jobstats";
    case GpuMemSource::kNone:
      break;
  }
  return "none";
}

JobsSummary Summarise(const std::vector<JobRecord>& jobs) {
  JobsSummary s;
  s.jobs = static_cast<int64_t>(jobs.size());
  for (const JobRecord& j : jobs) {
    s.steps += j.steps;
    if (j.record) ++s.fmte_records;
    if (j.gpus > 0) ++s.with_gpus;
    if (j.gpu_peak_bytes > 0) ++s.with_gpu_memory;
    if (!j.array_job.empty()) ++s.arrays;
    ++s.states[std::string(ToString(j.state))];
    if (j.end_time > 0) {
      if (s.first_end_time == kUnknownValue || j.end_time < s.first_end_time)
        s.first_end_time = j.end_time;
      if (j.end_time > s.last_end_time) s.last_end_time = j.end_time;
    }
  }
  return s;
}

std::vector<std::string> SplitFieldList(std::string_view list) {
  std::vector<std::string> out;
  while (true) {
    const size_t comma = list.find(',');
    std::string_view f = list.substr(0, comma);
    while (!f.empty() && (f.front() == ' ' || f.front() == '\t')) f.remove_prefix(1);
    while (!f.empty() && (f.back() == ' ' || f.back() == '\t')) f.remove_suffix(1);
    if (!f.empty()) out.emplace_back(f);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace fmte::learn
