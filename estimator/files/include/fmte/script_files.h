// Reading the files a batch script names, on the client side only (the SPANK plugin inside sbatch,
// fmte-advise check): the FileSource of fmte/launchers.h over a submission directory, with real
// parsers for JSON (nlohmann_json), YAML (yaml-cpp) and TOML (toml++), and the launcher table
// (etc/launchers.json). slurmctld never links this component: it reads no files per job.
//
// Bounds: a file over kMaxScriptFileBytes, a non-regular file (a FIFO, a device), more than
// kMaxScriptFiles files or kMaxScriptFilesBytes bytes in all, and config trees nested deeper than
// kMaxConfigDepth are refused with an error naming the file; nothing is executed.
// Thread-safety: one DiskFiles per reading (it counts what it has read).
#ifndef FMTE_SCRIPT_FILES_H_
#define FMTE_SCRIPT_FILES_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "fmte/launchers.h"
#include "fmte/status.h"

namespace fmte {

inline constexpr size_t kMaxScriptFileBytes = size_t{1} << 20;   // one file
inline constexpr size_t kMaxScriptFiles = 32;                    // files read for one script
inline constexpr size_t kMaxScriptFilesBytes = size_t{8} << 20;  // all of them together
inline constexpr int kMaxConfigDepth = 64;                       // nesting of a config tree

class DiskFiles final : public FileSource {
 public:
  // Relative paths are read from `dir` (the submission directory); "~/" from $HOME.
  explicit DiskFiles(std::string dir) : dir_(std::move(dir)) {}
  Result<std::string> ReadText(std::string_view path) const override;
  Result<nlohmann::json> ParseConfig(std::string_view path, std::string_view text,
                                     std::string_view syntax) const override;
  // The path a script's path names on disk.
  std::string Resolve(std::string_view path) const;

 private:
  std::string dir_;
  mutable size_t files_ = 0;
  mutable size_t bytes_ = 0;
};

// A config file's text as a tree: `syntax` json|yaml|toml, or empty for the extension of `path`
// (.json, .yaml/.yml, .toml; anything else: YAML, which JSON is a subset of). Errors name the path
// and, where the parser gives one, the line: "train.yaml:3: ...".
Result<nlohmann::json> ParseConfigText(std::string_view path, std::string_view text,
                                       std::string_view syntax);

// etc/launchers.json of `etc_dir` (empty: EtcDir()).
Result<LauncherTable> LoadLauncherTable(const std::string& etc_dir = "");

}  // namespace fmte

#endif  // FMTE_SCRIPT_FILES_H_
