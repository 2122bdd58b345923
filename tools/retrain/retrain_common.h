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
  std::string into;         // --into DIR
  bool into_exact = false;  // --exact-dir: install into DIR itself (not DIR/vtrain, DIR/<cluster>)
  bool force = false;
  std::string kind = "sacct";  // --kind
  std::string svg_dir;         // --svg-dir
  std::string report_path;     // --report FILE (JSON report also written there)
  int folds = 5;
  bool folds_set = false;  // --folds given (kinds have their own default)
  uint64_t seed = 1234;
  // train --kind vtrain | operators | fm-csv (docs/retrain.md)
  std::string cluster;         // --cluster NAME (operators)
  std::string gpu;             // --gpu NAME (vtrain; fm-csv rows without gpu_model)
  std::string precision;       // --precision NAME (fm-csv; fmte's names)
  int64_t vocab = 0;           // --vocab N (fm-csv rows matching no catalog model)
  bool tps_per_gpu = false;    // --tps-per-gpu (fm-csv: tokens_per_second counts one GPU)
  std::string provenance;      // --provenance TEXT (manifest)
  bool no_correction = false;  // --no-correction (vtrain: analytic constants only)
  bool dry_run = false;        // --dry-run: cross-validate and report, install nothing
  int rounds = 0, depth = 0, threads = 0;  // --rounds/--depth/--threads (operators; 0 = default)
  double eta = 0;                          // --eta (operators; 0 = default)
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
