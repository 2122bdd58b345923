// The admission policy: a pure function of (JobRequest, Config, Estimator) to a Decision with its
// reasons and alternatives. The job_submit plugin and `fmte-advise check` call the same Decide, so
// both make the identical decision.
//
// Outline (docs/policy.md has the full rules):
//  - not an LLM job, or the partition's Mode=off        -> accept, untouched, no record
//  - model/GPU unknown or estimate impossible           -> OnError (accept with notice | reject)
//  - predicted per-GPU memory <= usable capacity        -> accept (time limit set/checked below)
//  - too big, sharded, RaiseGpus=yes, a GPU count <= MaxGpusPerJob fits -> rewrite the GPU count
//  - too big otherwise                                   -> reject with alternatives, each
//  re-estimated
//  - Mode=advise: the decision is computed but downgraded to accept; its text becomes a notice
//  - time: with a time estimate, no limit -> limit = max(calibrated bound, prediction x
//    DefaultTimeFactor), capped by MaxTime, at least MinTime; a user limit below the predicted wall
//    time -> ShortLimit=warn|reject.
// Messages for the user start with "fmte:" (contract).
// Thread-safety: pure; safe to call concurrently with shared const arguments.
#ifndef FMTE_POLICY_H_
#define FMTE_POLICY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "fmte/config.h"
#include "fmte/estimator.h"
#include "fmte/job.h"
#include "fmte/request.h"

namespace fmte {

enum class DecisionKind : uint8_t { kAccept, kRewrite, kReject };
std::string_view ToString(DecisionKind k);  // accept|rewrite|reject

// Why a job is rejected: the adapter answers Slurm with the matching error code.
enum class RejectReason : uint8_t {
  kNone,       // not rejected
  kError,      // the estimate failed and OnError=reject
  kMemory,     // it does not fit the GPUs (and no raise was possible)
  kTimeLimit,  // it fits, but its time limit is below the prediction and ShortLimit=reject
};

// A change that would make a rejected (or rewritten) job fit, re-estimated.
struct Alternative {
  std::string change;     // what to do, in the user's terms: "--gpus=8 with --fmte-sharding=zero3"
  TrainingJob job;        // the changed job, as estimated
  std::string partition;  // the partition to use (differs only for "bigger GPUs")
  std::string gpu;        // GPU catalog name it was estimated on
  int64_t per_gpu_bytes = 0;  // predicted
  int64_t usable_bytes = 0;   // capacity x UsableMemoryFraction on that GPU
  bool fits = false;
};

struct Decision {
  DecisionKind kind = DecisionKind::kAccept;
  RejectReason reject_reason = RejectReason::kNone;  // set exactly when kind == kReject
  bool touched = false;      // false: not an LLM job / Mode=off: the adapter writes nothing
  bool advise_only = false;  // Mode=advise: kind was downgraded to accept
  bool error = false;        // the estimate could not be made (OnError applied)

  // Rewrites (kRewrite only; 0/empty = unchanged).
  int64_t new_time_limit_min = 0;
  int64_t new_gpus = 0;                          // total GPUs
  GpuTresField gpu_field = GpuTresField::kNone;  // the job_desc field to replace
  std::string new_gpu_tres;                      // its new text (ReplaceGpuCount of the old)
  int64_t new_min_nodes = 0;                     // when raising GPUs needs more nodes

  // For the user: "fmte: ..." (may be empty on a silent accept). One line per point, '\n'-joined.
  std::string user_message;
  std::vector<std::string> reasons;  // each one sentence, without the "fmte:" prefix
  std::vector<Alternative> alternatives;

  // What was predicted (for the record and the tools). Valid when `estimated`.
  bool estimated = false;
  TrainingJob job;        // the job as estimated (after a GPU rewrite: the new layout)
  std::string partition;  // resolved partition name
  std::string gpu;        // GPU catalog name used
  // The catalog model whose architecture was assumed for a model named after it (a checkpoint
  // folder nobody here can read, ModelCatalog::NamedAfter); empty when the model was read.
  std::string named_after;
  JobEstimate estimate;
  int64_t capacity_bytes = 0;  // device memory of that GPU
  int64_t usable_bytes = 0;    // capacity x UsableMemoryFraction
  int64_t time_limit_min = 0;  // limit after the decision (0: none)
};

// REQUIRES nothing; never fails: internal trouble becomes Decision::error with OnError applied.
Decision Decide(const JobRequest& request, const Config& config, const Estimator& estimator);

// Decide keeps one thing between calls: the architectures parsed from forwarded or derived
// config.json text (JobRequest::arch_json), keyed by that text (bounded; see policy_arch_cache.cc).
// Entries cannot go stale (the parse depends on nothing else); the plugin drops them anyway when it
// reloads its files. Thread-safe.
void ClearPolicyCaches();

}  // namespace fmte

#endif  // FMTE_POLICY_H_
