// Training sets from sacct jobs that carry the plugin's `fmte:` record: the features the plugin
// recorded at submit time, and as targets the site's correction of the plugin's own prediction:
//   time:   log(elapsed_s / pred_time_s)        (completed runs; elapsed of the whole allocation)
//   memory: log(gpu_peak_bytes / pred_mem_bytes) (jobs with a measured per-GPU peak)
// The prediction already holds the work the record names (tokens/steps/epochs, layout), so the
// ratio is the time normalised by that work. Censored jobs are not ordinary samples: TIMEOUT runs
// ran at least their limit (time lower bound) and OUT_OF_MEMORY runs needed more than what was
// measured (memory lower bound); they are kept apart and used to check that predictions respect
// those bounds (docs/formulas.md §7).
// Thread-safety: value types and pure functions.
#ifndef FMTE_LEARN_TRAINING_SET_H_
#define FMTE_LEARN_TRAINING_SET_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fmte/learn/records.h"
#include "fmte/learn/xgb.h"

namespace fmte::learn {

// Feature names of SacctFeatures, in order (manifest.json lists them). Both forward to the core's
// fmte::SiteFeatureNames / SiteFeatures (fmte/site_correction.h), which the plugin applies with.
const std::vector<std::string>& SacctFeatureNames();
// One row of features from a record (NaN for what the record does not say). Only what exists at
// submit time, so the plugin can compute the same row for a new job.
std::vector<float> SacctFeatures(const AccountingRecord& record);
// The CV group of a record: jobs of one user, model and layout land in one fold, so near-identical
// resubmissions do not leak between training and validation.
int64_t SacctGroup(const JobRecord& job);

struct TargetSet {
  DenseMatrix x;
  std::vector<float> y;  // log ratio (exact samples)
  std::vector<int64_t> groups;
  std::vector<double> base;          // the plugin's prediction (seconds or bytes), per row
  std::vector<double> actual;        // measured (seconds or bytes), per row
  std::vector<int64_t> job_index;    // into the jobs vector
  std::vector<double> limit_factor;  // time only: limit_s / pred_time_s (NaN when unknown)
  std::vector<int64_t> end_time;     // the job's end (Unix seconds, kUnknownValue)
  // Censored: lower bounds only (TIMEOUT time, OUT_OF_MEMORY memory).
  DenseMatrix x_censored;
  std::vector<double> base_censored;
  std::vector<double> lower_censored;  // measured lower bound
  std::vector<int64_t> job_index_censored;
};

struct TrainingSets {
  TargetSet time;
  TargetSet memory;
  int64_t jobs = 0;
  int64_t with_record = 0;
  std::map<std::string, int64_t> skipped;  // reason -> jobs not used for a target
  int64_t first_end_time = kUnknownValue;  // of the jobs used
  int64_t last_end_time = kUnknownValue;
};

TrainingSets BuildSacctTrainingSets(const std::vector<JobRecord>& jobs);

}  // namespace fmte::learn

#endif  // FMTE_LEARN_TRAINING_SET_H_
