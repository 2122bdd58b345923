// Parsers for the values sacct prints (docs/formulas.md §7): durations, timestamps, TRES strings,
// job states, job ids and memory sizes. Pure functions over string_views, no allocation on the
// hot path except where a string is returned.
// Thread-safety: stateless functions and immutable tables.
#ifndef FMTE_LEARN_SACCT_FIELDS_H_
#define FMTE_LEARN_SACCT_FIELDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fmte/status.h"

namespace fmte::learn {

// Timelimit "UNLIMITED" / "Partition_Limit" (and TimelimitRaw "4294967295"/"4294967294").
inline constexpr int64_t kNoTimeLimit = -2;
// Empty or "Unknown"/"None" values.
inline constexpr int64_t kUnknownValue = -1;

// "[DD-[HH:]]MM:SS[.fff]" (Elapsed, Timelimit, TotalCPU) to whole seconds (fractions dropped).
// Empty/"Unknown" -> kUnknownValue; "UNLIMITED"/"Partition_Limit"/"INVALID" -> kNoTimeLimit.
Result<int64_t> ParseSlurmDuration(std::string_view s);
// TimelimitRaw: minutes, or the NO_VAL/INFINITE sentinels (4294967294/4294967295) -> kNoTimeLimit.
Result<int64_t> ParseTimelimitRawMinutes(std::string_view s);
// "YYYY-MM-DDTHH:MM:SS" (as printed, taken as UTC) -> Unix seconds; empty/"Unknown"/"None" ->
// kUnknownValue. Also accepts plain Unix seconds (sacct with SLURM_TIME_FORMAT=%s).
Result<int64_t> ParseSlurmTimestamp(std::string_view s);
// "12345", "1764224K", "36266M", "62.50G", "3000Mc"/"48000Mn" (ReqMem suffixes) -> bytes
// (1024-based, as Slurm prints). Empty -> kUnknownValue.
Result<int64_t> ParseSlurmBytes(std::string_view s);
// Plain non-negative integer; empty -> kUnknownValue.
Result<int64_t> ParseCount(std::string_view s);

// What a TRES string says about the resources we care for. Absent entries are kUnknownValue.
struct Tres {
  int64_t cpus = kUnknownValue;
  int64_t nodes = kUnknownValue;
  int64_t mem_bytes = kUnknownValue;
  int64_t gpus = kUnknownValue;  // gres/gpu=N, or the sum of typed gres/gpu:T=N when untyped absent
  std::string gpu_type;          // "a100" from gres/gpu:a100=N (first type seen)
  int64_t gpumem_bytes = kUnknownValue;  // gres/gpumem (TRESUsageIn*; Slurm 23.02+)
  double gpuutil = -1;                   // gres/gpuutil
};
// "billing=8,cpu=8,gres/gpu:a100=2,gres/gpu=2,mem=64G,node=1"; usage TRES "cpu=00:56:24,..." are
// accepted (cpu given as a duration is skipped). Unknown keys are ignored; a malformed entry (no
// '=' or a bad number for a key we read) is an error naming it.
Result<Tres> ParseTres(std::string_view s);

enum class JobState {
  kUnknown,
  kPending,
  kRunning,
  kSuspended,
  kCompleted,
  kCompleting,
  kFailed,
  kTimeout,
  kOutOfMemory,
  kCancelled,
  kNodeFail,
  kPreempted,
  kBootFail,
  kDeadline,
  kRequeued,
  kRevoked,
  kResizing,
  kOther,
};
// "COMPLETED", "CANCELLED" ... (the base name as sacct prints it).
std::string_view ToString(JobState s);
// "CANCELLED by 349394" -> kCancelled (by_uid 349394); "OUT_OF_MEMORY", "OUT_OF_ME+" (truncated
// in fixed-width output) and names not known to this version -> kOther (never an error).
struct ParsedState {
  JobState state = JobState::kUnknown;
  int64_t cancelled_by_uid = kUnknownValue;
};
ParsedState ParseJobState(std::string_view s);

// JobID / JobIDRaw as sacct prints them: "123", "123.batch", "123.0", "123_7", "123_7.extern",
// "123_[1-3]" (pending array), "123+1.0" (heterogeneous). The allocation part is what comes before
// the first '.', the step part what comes after it.
struct ParsedJobId {
  std::string_view allocation;  // "123_7"
  std::string_view step;        // "batch", "extern", "0", "" for the allocation row
  std::string_view array_job;   // "123" when allocation is "123_..." else empty
  std::string_view array_task;  // "7", "[1-3]", else empty
};
Result<ParsedJobId> ParseJobId(std::string_view s);

// "0:0" -> (0, 0); "1:0"; "0:15" -> signal 15.
struct ExitCode {
  int64_t code = kUnknownValue;
  int64_t signal = kUnknownValue;
};
Result<ExitCode> ParseExitCode(std::string_view s);

}  // namespace fmte::learn

#endif  // FMTE_LEARN_SACCT_FIELDS_H_
