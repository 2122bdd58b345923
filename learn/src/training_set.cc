// Building the sacct training sets (see training_set.h for targets and censoring).
#include "fmte/learn/training_set.h"

#include <algorithm>
#include <cmath>

#include "fmte/site_correction.h"

namespace fmte::learn {
namespace {

uint64_t Fnv1a(std::string_view s, uint64_t h = 1469598103934665603ull) {
  for (const char c : s) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return h;
}

void Skip(TrainingSets& sets, const std::string& reason) { ++sets.skipped[reason]; }

}  // namespace

// The features live in the core (fmte/site_correction.h) so that the plugin, which applies the
// installed models, computes exactly the row this trains on.
const std::vector<std::string>& SacctFeatureNames() { return SiteFeatureNames(); }

std::vector<float> SacctFeatures(const AccountingRecord& r) {
  const SiteFeatureRow row = SiteFeatures(r.job, r.pred_time_s, r.pred_mem_bytes, r.cap_bytes);
  return std::vector<float>(row.begin(), row.end());
}

int64_t SacctGroup(const JobRecord& job) {
  uint64_t h = Fnv1a(job.user);
  if (job.record) {
    const TrainingJob& j = job.record->job;
    h = Fnv1a(j.model, h);
    h = Fnv1a(std::to_string(j.gpus) + "/" + std::to_string(j.tp) + "/" + std::to_string(j.pp) +
                  "/" + std::to_string(j.micro_batch) + "/" + std::to_string(j.seq_len) + "/" +
                  std::string(ToString(j.method)),
              h);
  }
  return static_cast<int64_t>(h & 0x7fffffffffffffffull);
}

TrainingSets BuildSacctTrainingSets(const std::vector<JobRecord>& jobs) {
  TrainingSets sets;
  sets.jobs = static_cast<int64_t>(jobs.size());
  const size_t nf = SacctFeatureNames().size();
  sets.time.x.cols = sets.time.x_censored.cols = static_cast<int64_t>(nf);
  sets.memory.x.cols = sets.memory.x_censored.cols = static_cast<int64_t>(nf);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobRecord& job = jobs[i];
    if (!job.record) {
      Skip(sets, "no fmte record");
      continue;
    }
    ++sets.with_record;
    const AccountingRecord& rec = *job.record;
    const std::vector<float> features = SacctFeatures(rec);
    const int64_t group = SacctGroup(job);
    bool used = false;

    // Time.
    if (rec.pred_time_s <= 0) {
      Skip(sets, "time: no pred_time_s in the record");
    } else if (job.state == JobState::kCompleted && job.elapsed_s > 0) {
      TargetSet& t = sets.time;
      t.x.AddRow(features);
      t.y.push_back(
          static_cast<float>(std::log(static_cast<double>(job.elapsed_s) / rec.pred_time_s)));
      t.groups.push_back(group);
      t.base.push_back(rec.pred_time_s);
      t.actual.push_back(static_cast<double>(job.elapsed_s));
      t.job_index.push_back(static_cast<int64_t>(i));
      t.limit_factor.push_back(job.time_limit_s > 0
                                   ? static_cast<double>(job.time_limit_s) / rec.pred_time_s
                                   : std::nan(""));
      t.end_time.push_back(job.end_time);
      used = true;
    } else if (TimeCensored(job) && job.elapsed_s > 0) {
      TargetSet& t = sets.time;
      t.x_censored.AddRow(features);
      t.base_censored.push_back(rec.pred_time_s);
      // It ran at least its limit (and at least what accounting measured).
      t.lower_censored.push_back(static_cast<double>(std::max(job.elapsed_s, job.time_limit_s)));
      t.job_index_censored.push_back(static_cast<int64_t>(i));
      used = true;
    } else if (job.elapsed_s <= 0) {
      Skip(sets, "time: no elapsed time");
    } else {
      Skip(sets, "time: state " + std::string(ToString(job.state)) +
                     " (neither completed nor timed out)");
    }

    // Memory. An online objective's measured peak holds its generation engine (a colocated vLLM,
    // rollout and reference models), which its prediction leaves out: not a residual to learn.
    if (rec.pred_mem_bytes <= 0) {
      Skip(sets, "memory: no pred_mem in the record");
    } else if (GeneratesCompletions(rec.job.objective)) {
      Skip(sets, "memory: online objective (" + std::string(ToString(rec.job.objective)) +
                     "), its generation not predicted");
    } else if (job.gpu_peak_bytes <= 0) {
      Skip(sets, "memory: no measured GPU peak (gres/gpumem or JS1)");
    } else if (MemoryCensored(job)) {
      TargetSet& m = sets.memory;
      m.x_censored.AddRow(features);
      m.base_censored.push_back(static_cast<double>(rec.pred_mem_bytes));
      m.lower_censored.push_back(static_cast<double>(job.gpu_peak_bytes));
      m.job_index_censored.push_back(static_cast<int64_t>(i));
      used = true;
    } else {
      TargetSet& m = sets.memory;
      m.x.AddRow(features);
      m.y.push_back(static_cast<float>(std::log(static_cast<double>(job.gpu_peak_bytes) /
                                                static_cast<double>(rec.pred_mem_bytes))));
      m.groups.push_back(group);
      m.base.push_back(static_cast<double>(rec.pred_mem_bytes));
      m.actual.push_back(static_cast<double>(job.gpu_peak_bytes));
      m.job_index.push_back(static_cast<int64_t>(i));
      m.limit_factor.push_back(std::nan(""));
      m.end_time.push_back(job.end_time);
      used = true;
    }
    if (used && job.end_time > 0) {
      if (sets.first_end_time == kUnknownValue || job.end_time < sets.first_end_time) {
        sets.first_end_time = job.end_time;
      }
      sets.last_end_time = std::max(sets.last_end_time, job.end_time);
    }
  }
  return sets;
}

}  // namespace fmte::learn
