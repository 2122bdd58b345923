// JobTracker: remembers, for the LLM jobs job_submit/fmte admitted, what it parsed (script, SPANK
// values, Slurm facts) under the job id Slurm is about to assign, so that job_modify (which
// in 22.05 only receives the changed fields and an opaque job_record_t) can re-decide a changed
// time limit or GPU count. Bounded: at most kMaxJobs entries and kMaxBytes of text, oldest dropped
// first; an entry over kMaxEntryBytes (a script padded to megabytes, 10k #FMTE lines) is not kept,
// and the oldest entries whose job slurmctld no longer has (ended and purged) are dropped as new
// ones come. What the tracker keeps lives for hours among the controller's short-lived blocks, so
// it is kept small: a stress run of 20000 submissions (scripts/stress.sh) ended with slurmctld at
// 130 MB and rising with 32 MiB / 4 MiB bounds and no sweep, 61 MB now (57 MB without fmte).
//
// The id: job_submit runs under slurmctld's job write lock right before the job is created, so
// slurmctld's exported get_next_job_id(test_only=true) (22.05 src/slurmctld/job_mgr.c) returns the
// id the job will get. That call tests the state directory for a leftover job.<id> (a stat() under
// slurmctld's config lock: 30-40 us of the controller's CPU per submission, measured in a real
// slurmctld), so the id is derived from the previous one when slurmctld's own job table
// (find_job_record, a hash lookup) shows that the previous prediction became a job and the id
// after it is free; anything else asks get_next_job_id. A derived id can only be too low (ids
// consumed by jobs already purged, or a leftover directory): the entry then sits under an id no
// later job gets, and the job's updates pass untouched, as without fmte. Looked up with dlsym, so
// outside slurmctld (tests) tracking is off. Thread-safety: not synchronised. REQUIRES: the caller
// holds the plugin's mutex.
#ifndef FMTE_SLURM_PLUGIN_JOB_TRACKER_H_
#define FMTE_SLURM_PLUGIN_JOB_TRACKER_H_

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fmte/request.h"

namespace fmte::slurm {

struct TrackedJob {
  std::string script;
  std::vector<std::pair<std::string, std::string>> spank_values;
  SlurmFacts facts;
};

class JobTracker {
 public:
  static constexpr size_t kMaxJobs = 4096;
  static constexpr size_t kMaxBytes = size_t{8} << 20;
  static constexpr size_t kMaxEntryBytes = size_t{64} << 10;

  // The id slurmctld will assign to the job being submitted; 0 when unknown. `requested_id` is
  // job_desc->job_id (set with sbatch --jobid).
  uint32_t PredictJobId(uint32_t requested_id);

  // slurmctld's functions, found with dlsym (nullptr outside slurmctld); replaceable in tests.
  using NextJobIdFn = uint32_t (*)(bool test_only);
  using FindJobFn = void* (*)(uint32_t job_id);
  void SetSlurmctldFunctions(NextJobIdFn next, FindJobFn find) {
    next_ = next;
    find_ = find;
    looked_up_ = true;
    last_predicted_ = 0;
  }

  // Keeps `job` under `job_id` (replacing what was there); first drops up to a few of the oldest
  // entries whose job slurmctld's table no longer holds (when that table can be asked).
  void Remember(uint32_t job_id, TrackedJob job);
  // Drops what is kept under `job_id`: a submission predicted the id, then failed after job_submit,
  // and the job now getting that id was not admitted by fmte (its updates must stay untouched).
  void Forget(uint32_t job_id);
  TrackedJob* Find(uint32_t job_id);
  size_t size() const { return jobs_.size(); }

 private:
  NextJobIdFn next_ = nullptr;
  FindJobFn find_ = nullptr;
  bool looked_up_ = false;
  uint32_t last_predicted_ = 0;
  std::unordered_map<uint32_t, TrackedJob> jobs_;
  std::deque<uint32_t> order_;
  size_t bytes_ = 0;

  void DropOldest();
};

// job_desc->job_id_str of an update ("123", "123_4", "123+1"): the leading job id; 0 if none.
uint32_t ParseJobIdStr(const char* job_id_str);

}  // namespace fmte::slurm

#endif  // FMTE_SLURM_PLUGIN_JOB_TRACKER_H_
