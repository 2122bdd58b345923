// Shared by the fmte-retrain subcommands: flags common to read/train, reading exports with a
// progress bar on a terminal, and the JSON summary of what was read.
#ifndef FMTE_TOOLS_RETRAIN_COMMON_H_
#define FMTE_TOOLS_RETRAIN_COMMON_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fmte/learn/sacct.h"
#include "fmte/status.h"

namespace fmte::retrain {

struct ReadFlags {
  std::vector<std::string> files;
  std::vector<std::string> fields;  // --fields
  bool json = false;
  bool strict = false;
  bool gpumem_per_gpu = false;  // --gpumem-per-gpu: gres/gpumem is per GPU (Slurm 23.x)
  bool help = false;
  // train only
  std::string into;             // --into DIR
  bool force = false;
  std::string kind = "sacct";   // --kind
  std::string svg_dir;          // --svg-dir
  std::string report_path;      // --report FILE (JSON report also written there)
  int folds = 5;
  uint64_t seed = 1234;
};

// Parses read/train flags. `command` is "read" or "train"; train-only flags are refused for read.
// --help prints `usage` and sets help.
Result<ReadFlags> ParseReadFlags(const std::vector<std::string>& args, const std::string& command,
                                 const std::string& usage);

struct ReadResult {
  learn::ReadStats stats;
  std::vector<learn::JobRecord> jobs;
};
// Reads every file (a progress bar on stderr for files over 16 MB when stderr is a terminal).
Result<ReadResult> ReadExports(const ReadFlags& flags);

// The `read --json` object (contract names first).
nlohmann::json ReadJson(const learn::ReadStats& stats, const learn::JobsSummary& summary);

// Unix seconds -> "2015-07-01T02:55:50" (UTC), "-" when unknown.
std::string FormatTime(int64_t t);

}  // namespace fmte::retrain

#endif  // FMTE_TOOLS_RETRAIN_COMMON_H_
