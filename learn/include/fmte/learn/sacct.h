// SacctReader: a streaming reader of `sacct --parsable2` / `--parsable` exports
// (docs/formulas.md §7).
//
// Accepts what sysadmins really export: with or without a header line (then the field list must be
// given, as passed to `sacct --format`), any field order and any extra fields, allocation and step
// rows (.batch, .extern, .0, ...), arrays (123_7 with JobIDRaw), pasted transcripts (lines starting
// with "$ sacct ... --format=A,B" set the fields of the rows that follow; '#' lines are comments),
// several exports concatenated (a new header line switches the fields). Step rows are folded into
// their allocation as they are read, so memory grows with jobs, not rows.
// Malformed lines are counted with their line numbers and skipped (an error only with `strict`).
// Thread-safety: one reader per thread; distinct readers are independent.
#ifndef FMTE_LEARN_SACCT_H_
#define FMTE_LEARN_SACCT_H_

#include <cstdint>
#include <functional>
#include <istream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/learn/records.h"
#include "fmte/status.h"

namespace fmte::learn {

// How to read gres/gpumem of TRESUsageInMax: Slurm 24.05+ sums over the GPUs a task sees
// (docs/formulas.md §7), so the per-GPU peak is the value divided by the task's GPUs; older 23.x
// reports one device.
enum class GpuMemTresMode { kSumOverTaskGpus, kPerGpu };

struct SacctReadOptions {
  // Field names (as given to sacct --format) for exports without a header line. Case-insensitive.
  std::vector<std::string> fields;
  bool strict = false;  // the first malformed line is an error
  GpuMemTresMode gpumem_mode = GpuMemTresMode::kSumOverTaskGpus;
  // Called now and then with (bytes read, total bytes) of the current file (total 0 if unknown).
  std::function<void(uint64_t, uint64_t)> progress;
  size_t max_malformed_lines_kept = 10000;  // line numbers kept; the count is always exact
};

struct MalformedLine {
  int32_t file_index = 0;
  int64_t line = 0;    // 1-based
  std::string reason;  // "12 fields, expected 11", "JobID: expected ..."
};

struct ReadStats {
  std::vector<std::string> files;
  int64_t lines = 0;
  int64_t rows = 0;  // data rows understood (allocation + step rows)
  int64_t allocation_rows = 0;
  int64_t step_rows = 0;
  int64_t header_lines = 0;
  int64_t comment_lines = 0;  // '#' and "$ sacct" transcript lines, blank lines
  int64_t short_rows = 0;     // rows with fewer fields than the header (missing ones taken empty)
  int64_t malformed = 0;
  std::vector<MalformedLine> malformed_lines;
  int64_t record_errors = 0;  // AdminComment "fmte:" records that did not decode
  std::vector<MalformedLine> record_error_lines;
  int64_t jobstats_records = 0;  // JS1: blobs decoded
  int64_t jobstats_errors = 0;
};

class SacctReader {
 public:
  explicit SacctReader(SacctReadOptions options = {});
  ~SacctReader();
  SacctReader(SacctReader&&) noexcept;
  SacctReader& operator=(SacctReader&&) noexcept;

  // Reads one export file. Errors: cannot open; no header and no fields (says what to pass);
  // the first malformed line when strict.
  Status ReadFile(const std::string& path);
  // Reads an export from a stream; `name` is what errors and ReadStats::files call it.
  Status ReadStream(std::istream& in, const std::string& name, uint64_t total_bytes = 0);

  // Line-level interface (for benchmarks and streaming from memory): BeginSource, then Line for
  // each line without its '\n'.
  void BeginSource(const std::string& name);
  Status Line(std::string_view line);

  const ReadStats& stats() const;
  int64_t job_count() const;
  // The jobs read so far, finalised (state/elapsed from steps when no allocation row, per-GPU
  // memory), ordered by (file, first line). The reader is empty afterwards (stats kept).
  std::vector<JobRecord> TakeJobs();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Summary of a set of jobs: the contract of `fmte-retrain read --json` (jobs, steps,
// fmte_records, states) together with ReadStats.
struct JobsSummary {
  int64_t jobs = 0;
  int64_t steps = 0;
  int64_t fmte_records = 0;
  int64_t with_gpus = 0;
  int64_t with_gpu_memory = 0;
  int64_t arrays = 0;                     // jobs that are array tasks
  std::map<std::string, int64_t> states;  // "COMPLETED" -> jobs
  int64_t first_end_time = kUnknownValue;
  int64_t last_end_time = kUnknownValue;
};
JobsSummary Summarise(const std::vector<JobRecord>& jobs);

// Decodes a Princeton jobstats AdminComment "JS1:<base64(gzip(JSON))>" and returns the largest
// per-GPU gpu_used_memory (bytes) over all nodes and GPUs; kUnknownValue when the summary has no
// GPU data ("JS1:Short", "JS1:None", CPU jobs). Errors for bad base64/gzip/JSON.
Result<int64_t> JobstatsGpuPeakBytes(std::string_view admin_comment);

// Splits "JobID,JobIDRaw, State" into names (trimmed; empty entries dropped).
std::vector<std::string> SplitFieldList(std::string_view list);

}  // namespace fmte::learn

#endif  // FMTE_LEARN_SACCT_H_
