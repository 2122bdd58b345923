// fmte-retrain read FILE... [--fields LIST] [--json] [--strict]: what a sacct export holds.
// Contract (docs/retrain.md): --json has rows, jobs, steps, malformed, malformed_lines,
// fmte_records, states.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "commands.h"
#include "retrain_common.h"

namespace fmte::retrain {

int RunRead(const std::vector<std::string>& args) {
  Result<ReadFlags> flags =
      ParseReadFlags(args, "read",
                     "usage: fmte-retrain read FILE... [--fields LIST] [--json] "
                     "[--strict] [--gpumem-per-gpu]");
  if (!flags.ok()) return cli::ReportError("fmte-retrain", flags.status());
  if (flags->help) return cli::kExitOk;
  Result<ReadResult> read = ReadExports(*flags);
  if (!read.ok()) return cli::ReportError("fmte-retrain", read.status());
  const learn::JobsSummary summary = learn::Summarise(read->jobs);
  const learn::ReadStats& st = read->stats;
  if (flags->json) {
    std::cout << ReadJson(st, summary).dump(2) << "\n";
    return cli::kExitOk;
  }
  std::cout << "files:          " << st.files.size() << " (" << st.lines << " lines, "
            << st.header_lines << " header lines)\n"
            << "rows:           " << st.rows << " (" << st.allocation_rows << " allocations, "
            << st.step_rows << " steps)\n"
            << "jobs:           " << summary.jobs << " (" << summary.arrays << " array tasks, "
            << summary.with_gpus << " with GPUs, " << summary.with_gpu_memory
            << " with GPU memory)\n"
            << "fmte records:   " << summary.fmte_records;
  if (st.record_errors > 0) std::cout << " (" << st.record_errors << " did not decode)";
  std::cout << "\njobstats:       " << st.jobstats_records << " JS1 records";
  if (st.jobstats_errors > 0) std::cout << " (" << st.jobstats_errors << " did not decode)";
  std::cout << "\nend times:      " << FormatTime(summary.first_end_time) << " .. "
            << FormatTime(summary.last_end_time) << "\nstates:        ";
  for (const auto& [state, n] : summary.states) std::cout << " " << state << "=" << n;
  std::cout << "\nmalformed:      " << st.malformed << "\n";
  for (size_t i = 0; i < st.malformed_lines.size() && i < 20; ++i) {
    const auto& m = st.malformed_lines[i];
    std::cout << "  " << st.files[m.file_index] << ":" << m.line << ": " << m.reason << "\n";
  }
  if (st.malformed_lines.size() > 20) std::cout << "  ... (--json lists all)\n";
  if (st.short_rows > 0) {
    std::cout << "short rows:     " << st.short_rows
              << " (fewer fields than the header; missing taken empty)\n";
  }
  return cli::kExitOk;
}

}  // namespace fmte::retrain
