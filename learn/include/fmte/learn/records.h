// JobRecord: one Slurm allocation as understood from a sacct export, with its steps folded in
// (elapsed of the main step, peak GPU memory, RSS) and the plugin's `fmte:` record decoded.
// This is what the reader keeps per job, so memory grows with jobs, never with rows.
// Thread-safety: value types.
#ifndef FMTE_LEARN_RECORDS_H_
#define FMTE_LEARN_RECORDS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "fmte/learn/sacct_fields.h"
#include "fmte/record.h"

namespace fmte::learn {

// Where a job's per-GPU peak memory came from.
enum class GpuMemSource { kNone, kTresUsage, kJobstats };
std::string_view ToString(GpuMemSource s);  // "none" | "tres" | "jobstats"

struct JobRecord {
  std::string job_id;      // allocation id as printed: "123", "123_7", "123_[1-3]"
  std::string job_id_raw;  // JobIDRaw of the allocation ("130"), empty when not exported
  std::string array_job;   // "123" for array tasks, else empty
  std::string name, user, account, partition;
  std::string work_dir;     // WorkDir: where sbatch ran (-D), empty when not exported
  std::string submit_line;  // SubmitLine (Slurm 23.02+): sbatch's words joined by spaces

  JobState state = JobState::kUnknown;  // of the allocation row (else of the last step seen)
  int64_t cancelled_by_uid = kUnknownValue;
  int64_t exit_code = kUnknownValue;

  // Times in seconds; kUnknownValue when not exported, time_limit_s may be kNoTimeLimit.
  int64_t elapsed_s = kUnknownValue;
  int64_t time_limit_s = kUnknownValue;
  int64_t submit_time = kUnknownValue;  // Unix seconds (sacct prints local time; taken as UTC)
  int64_t start_time = kUnknownValue;
  int64_t end_time = kUnknownValue;

  // Allocation (AllocTRES, else ReqTRES, else NNodes/AllocCPUS).
  int64_t gpus = kUnknownValue;
  std::string gpu_type;
  int64_t nodes = kUnknownValue;
  int64_t cpus = kUnknownValue;
  int64_t ntasks = kUnknownValue;

  // Steps folded in.
  int64_t steps = 0;                            // step rows seen (.batch, .extern, .0, ...)
  int64_t main_step_elapsed_s = kUnknownValue;  // longest numbered step, else .batch
  int64_t max_rss_bytes = kUnknownValue;        // max over steps (per task)
  int64_t gpumem_tres_bytes = kUnknownValue;    // max gres/gpumem over steps' TRESUsageInMax
  int64_t step_gpus = kUnknownValue;            // GPUs of the step that had that maximum

  // Per-GPU peak memory: max over GPUs (jobstats) or the TRES value per GPU (see SacctReadOptions).
  int64_t gpu_peak_bytes = kUnknownValue;
  GpuMemSource gpu_peak_source = GpuMemSource::kNone;

  bool has_allocation_row = false;
  int64_t first_line = 0;  // line of the first row seen for this job (1-based, in its file)
  int32_t file_index = 0;  // index into ReadStats::files

  // The plugin's record (AdminComment "fmte:v1;..."), when present and decodable.
  std::optional<AccountingRecord> record;
};

// True when the job's time is censored: it was stopped at its limit, so it ran at least that long.
inline bool TimeCensored(const JobRecord& j) { return j.state == JobState::kTimeout; }
// True when the job's memory is a lower bound: it ran out of memory, so it needed more.
inline bool MemoryCensored(const JobRecord& j) { return j.state == JobState::kOutOfMemory; }

}  // namespace fmte::learn

#endif  // FMTE_LEARN_RECORDS_H_
