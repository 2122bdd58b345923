#include "job_tracker.h"

#include <dlfcn.h>

extern "C" {
#include <slurm/slurm.h>
}

namespace fmte::slurm {
namespace {

size_t SizeOf(const TrackedJob& job) {
  size_t n = job.script.size() + 256;
  for (const auto& [k, v] : job.spank_values) n += k.size() + v.size();
  return n;
}

}  // namespace

uint32_t JobTracker::PredictJobId(uint32_t requested_id) {
  if (requested_id != 0 && requested_id != NO_VAL) return requested_id;
  if (!looked_up_) {
    looked_up_ = true;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(22, 5, 0) && \
    SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(22, 6, 0)
    next_ = reinterpret_cast<NextJobIdFn>(dlsym(RTLD_DEFAULT, "get_next_job_id"));
    find_ = reinterpret_cast<FindJobFn>(dlsym(RTLD_DEFAULT, "find_job_record"));
#endif
  }
  // The previous submission became job last_predicted_ and the id after it is free: that is the
  // id get_next_job_id would return (it steps the sequence by one past jobs that exist).
  if (find_ != nullptr && last_predicted_ != 0 && last_predicted_ < UINT32_MAX - 1 &&
      find_(last_predicted_) != nullptr && find_(last_predicted_ + 1) == nullptr) {
    return ++last_predicted_;
  }
  if (next_ == nullptr) return 0;
  last_predicted_ = next_(/*test_only=*/true);
  return last_predicted_;
}

void JobTracker::Remember(uint32_t job_id, TrackedJob job) {
  if (job_id == 0) return;
  size_t n = SizeOf(job);
  if (n > kMaxEntryBytes) return;  // its job's updates pass untouched, as without fmte
  if (auto it = jobs_.find(job_id); it != jobs_.end()) {
    bytes_ -= SizeOf(it->second);
    it->second = std::move(job);
    bytes_ += n;
    return;
  }
  // Jobs that ended and were purged (MinJobAge) are never updated again: the oldest such entries
  // go first, a few per call so that the call stays short (each is one hash lookup in slurmctld's
  // table). An older job still pending stops the sweep; bounds below take care of the rest.
  for (int i = 0; i < 4 && !order_.empty(); ++i) {
    const uint32_t oldest = order_.front();
    if (jobs_.count(oldest) != 0 && (find_ == nullptr || find_(oldest) != nullptr)) break;
    DropOldest();  // its job is gone, or it was forgotten
  }
  while (!order_.empty() && (jobs_.size() >= kMaxJobs || bytes_ + n > kMaxBytes)) DropOldest();
  jobs_.emplace(job_id, std::move(job));
  order_.push_back(job_id);
  bytes_ += n;
}

void JobTracker::DropOldest() {
  auto it = jobs_.find(order_.front());
  order_.pop_front();
  if (it != jobs_.end()) {
    bytes_ -= SizeOf(it->second);
    jobs_.erase(it);
  }
}

void JobTracker::Forget(uint32_t job_id) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  bytes_ -= SizeOf(it->second);
  jobs_.erase(it);  // its id stays in order_ until evicted: eviction skips ids no longer kept
}

TrackedJob* JobTracker::Find(uint32_t job_id) {
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : &it->second;
}

uint32_t ParseJobIdStr(const char* job_id_str) {
  if (job_id_str == nullptr) return 0;
  uint64_t id = 0;
  for (const char* p = job_id_str; *p >= '0' && *p <= '9'; ++p) {
    id = id * 10 + static_cast<uint64_t>(*p - '0');
    if (id > UINT32_MAX) return 0;
  }
  return static_cast<uint32_t>(id);
}

}  // namespace fmte::slurm
