// Private helpers of the policy: the resolved context of one decision and the alternative search.
// Thread-safety: pure functions.
#ifndef FMTE_SRC_POLICY_INTERNAL_H_
#define FMTE_SRC_POLICY_INTERNAL_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/config.h"
#include "fmte/estimator.h"
#include "fmte/policy.h"
#include "fmte/request.h"

namespace fmte::internal {

// Everything a decision needs, resolved once.
struct PolicyContext {
  const JobRequest* request = nullptr;
  const Config* config = nullptr;
  const PartitionConfig* partition = nullptr;
  const Estimator* estimator = nullptr;
  const ModelArch* model = nullptr;
  const GpuSpec* gpu = nullptr;
  std::string partition_name;
  int64_t usable_bytes = 0;
  // Every estimate of the decision (its own, the GPU-count search, the alternatives) goes through
  // this one prepared model.
  PreparedEstimate* prepared = nullptr;
};

// Usable bytes of a GPU under a partition's UsableMemoryFraction.
int64_t UsableBytes(const GpuSpec& gpu, const PartitionConfig& p);

// "61.2 GiB"
std::string Gib(int64_t bytes);

// Where the request could not read the job's objective (a trainer type from an unknown
// variable), or nullptr: it may be an online one, whose generation no prediction has.
const UnreadSetting* UnreadObjective(const JobRequest& r);

// The parts joined, built in one allocation (messages are concatenations of many pieces).
std::string Cat(std::initializer_list<std::string_view> parts);

// The smallest GPU count above the current one (node-aligned, tp*pp-divisible, keeping a Megatron
// global batch integral, at most MaxGpusPerJob) whose estimate fits. False when none does.
// `job` is the base; on success `out` holds the job as estimated and `estimate` its (memory-only)
// estimate (when none fits, `out` holds some candidate). `estimate` is default-constructed or was
// last written by PreparedEstimate::EstimateMemory.
bool FindMoreGpus(const PolicyContext& ctx, const TrainingJob& job, TrainingJob* out,
                  JobEstimate* estimate);

// Alternatives that would make `job` fit, each re-estimated (fitting ones first, at most
// kMaxAlternatives).
inline constexpr size_t kMaxAlternatives = 10;
std::vector<Alternative> FindAlternatives(const PolicyContext& ctx, const TrainingJob& job);

// Right-sizing notices (policy_rightsize.cc) for a job that fits as asked, appended to d->reasons:
// far fewer GPUs would do, a partition with a smaller GPU would do, the time limit is far above
// the predicted bound. Never changes the decision. Off with RightSizing=no.
void AddRightSizingNotices(const PolicyContext& ctx, const TrainingJob& job, Decision* d);

// The sharding that splits model state for the job's framework (zero3 for DeepSpeed, fsdp-full for
// HF/FSDP/torchtune, the distributed optimizer (zero1) for Megatron).
Sharding StateSharding(const TrainingJob& job);

// ParseModelConfig(json, id) through a process-wide cache (policy_arch_cache.cc: bounds and
// thread-safety there). Thread-safe.
inline constexpr size_t kArchCacheEntries = 64;
Result<std::shared_ptr<const ModelArch>> CachedModelConfig(std::string_view json,
                                                           const std::string& id);
void ClearArchCache();
size_t ArchCacheSize();
// Tests: off = every decision parses (and the cache is emptied); on by default.
void EnableArchCache(bool enabled);

}  // namespace fmte::internal

#endif  // FMTE_SRC_POLICY_INTERNAL_H_
