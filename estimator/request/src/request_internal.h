// Private pieces of request parsing shared by request*.cc and launcher*.cc: one key table that
// applies a (key, value) to a TrainingJob (the same for SPANK values, #FMTE lines and launcher
// flags), bounded number parsing, and the shell-ish tokenizer of batch scripts.
// Thread-safety: pure functions; the tables are immutable.
#ifndef FMTE_SRC_REQUEST_INTERNAL_H_
#define FMTE_SRC_REQUEST_INTERNAL_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/job.h"
#include "fmte/launchers.h"
#include "fmte/request.h"
#include "fmte/status.h"
#include "fmte/text.h"

namespace fmte::internal {

// The last component of a path ("/usr/bin/torchrun" -> "torchrun").
inline std::string_view Basename(std::string_view w) {
  const size_t slash = w.rfind('/');
  return slash == std::string_view::npos ? w : w.substr(slash + 1);
}

// One value from one source, before merging.
struct Assignment {
  std::string key;  // table key: "model", "seq-len", ..., or an extra key ("optimizer", "vpp")
  std::string value;
  std::string origin;  // "line 12: --per_device_train_batch_size", "#FMTE line 3", "spank"
};

// Applies `value` of `key` to `job`. The error names the key as `shown` ("--fmte-seq-len",
// "#FMTE seq-len", "line 12: --max_seq_length") and says what was expected.
Status ApplyKey(std::string_view key, std::string_view value, std::string_view shown,
                TrainingJob* job);
bool IsKnownKey(std::string_view key);  // contract keys and the extra keys

// Names grouped by length with a counting sort, each group in the names' own order, so that a
// lookup compares only the names of its length (the request keys, the boolean flags, a launch
// line's flags). Names of kGroups - 1 bytes or more share the last group.
template <size_t kGroups>
class LengthGroups {
 public:
  // Groups the names name_of(0) .. name_of(count - 1).
  template <typename NameOf>
  void Build(size_t count, NameOf name_of) {
    start_.fill(0);
    for (size_t i = 0; i < count; ++i) ++start_[GroupOf(name_of(i)) + 1];
    for (size_t g = 1; g < start_.size(); ++g) start_[g] += start_[g - 1];
    order_.resize(count);
    std::array<uint32_t, kGroups> next;
    std::copy(start_.begin(), start_.end() - 1, next.begin());
    for (size_t i = 0; i < count; ++i)
      order_[next[GroupOf(name_of(i))]++] = static_cast<uint32_t>(i);
  }
  // The indices of the names as long as `name` (in the last group: at least as long), in order.
  std::span<const uint32_t> Candidates(std::string_view name) const {
    const size_t g = GroupOf(name);
    return std::span<const uint32_t>(order_).subspan(start_[g], start_[g + 1] - start_[g]);
  }

 private:
  static size_t GroupOf(std::string_view name) { return std::min(name.size(), kGroups - 1); }
  std::array<uint32_t, kGroups + 1> start_{};  // group g: order_[start_[g] .. start_[g + 1])
  std::vector<uint32_t> order_;
};

// ---- Script scanning (launcher_shell.cc) ----------------------------------------------------

// Bytes that stay where they are: the views Store returns are valid while the arena lives, also
// after it is moved (each block is allocated once and never grows). Words of a script go here: a
// word is copied into a block and has no allocation of its own.
class TextArena {
 public:
  std::string_view Store(std::string_view text) {
    if (text.empty()) return {};
    if (text.size() > left_) NewBlock(text.size());
    const std::string_view stored(next_, text.size());
    text.copy(next_, text.size());
    next_ += text.size();
    left_ -= text.size();
    return stored;
  }

 private:
  static constexpr size_t kBlockBytes = 4096;
  // Starts a block of kBlockBytes, or of `bytes` for a text longer than that.
  void NewBlock(size_t bytes);
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* next_ = nullptr;  // free space of the last block
  size_t left_ = 0;
};

// One word of a command after expansion.
struct Word {
  std::string_view text;    // a view into the ScanOutput's `text`
  bool unresolved = false;  // held a $(...), `...` or an unknown variable
};

// One simple command of the script after joining continuations, expanding variables and
// splitting at ; && || | &. `line` is the 1-based physical line where it starts.
struct Command {
  int line = 0;
  std::vector<Word> words;
};

struct ScanOutput {
  TextArena text;                                       // the bytes of every command's words
  std::vector<Command> commands;                        // commands in order (assignments excluded)
  std::vector<std::pair<int, std::string>> fmte_lines;  // (#FMTE line number, text after "#FMTE")
  std::vector<std::string> warnings;
  // Files the script writes with heredocs (`cat > ds.json <<EOF`): (path as written, body).
  std::vector<std::pair<std::string, std::string>> written_files;
  std::vector<std::string> files_read;  // files `source`d (paths as written)
  // The variables the script exports (`export NAME=value`), as they stand at its end: what the
  // programs it launches see of them beyond the submission's environment.
  std::vector<std::string> exported;
};

// Scans at most kMaxScriptBytes of `script`: #FMTE lines, VAR=value and VAR=( ... ) assignments
// (remembered for $VAR, ${VAR}, ${VAR:-x}, ${ARR[@]} expansion), heredoc bodies (kept when they
// write a file or fill a variable), comments dropped. With a context: the script's arguments and
// the submission's variables are known, files it `source`s are read through ctx->files, and
// strings run with `bash -c` are read as scripts. Never fails; oddities become warnings.
ScanOutput ScanScript(std::string_view script, const ScriptContext* ctx = nullptr);

// A file the script names by a relative `path` that is not in the submission directory, read
// where a script written to run from its own folder finds it (ctx.script_dir, REQUIRES: ctx.files):
// beside the script, and with `folders_above` (a relative path not starting with "../", a script
// below the submission directory) in each folder above it up to that directory, nearest first.
// `found_at` gets the path read. NotFound when it is in none of them or `path` is absolute.
Result<std::string> ReadNearScript(const ScriptContext& ctx, std::string_view path,
                                   bool folders_above, std::string* found_at);

// ---- Launch lines (launcher.cc) ---------------------------------------------------------------

struct LauncherFindings {
  std::string
      launcher;  // torchrun|accelerate|deepspeed|python|tune|megatron|trl|llamafactory; empty: none
  std::vector<Assignment> values;
  int64_t procs_per_node = 0;
  int64_t nodes = 0;
  std::string procs_origin;           // JobRequest::launcher_procs_origin
  std::string arch_json;              // Megatron ad-hoc architecture
  std::vector<UnreadSetting> unread;  // settings in files the launch line names (not read)
  std::vector<std::string> warnings;
  std::vector<std::string> files_read;  // config files read for this launch (paths as written)
  // Only in a client's reading (FMTE_READ with "fmte"): the client scanned the whole script, and
  // these are its #FMTE lines (line, text after "#FMTE") and the scan's warnings, so the controller
  // does not scan it again.
  bool scanned = false;
  std::vector<std::pair<int, std::string>> fmte_lines;
  std::vector<std::string> scan_warnings;
};

// Looks at every command for a training launch; the launch with the most recognised settings
// wins (setup and conversion steps name fewer). With a context, the config files a launch names
// are read under its launcher table (also those the script wrote itself, `written`).
LauncherFindings DetectLauncher(
    const std::vector<Command>& commands, const ScriptContext* ctx = nullptr,
    const std::vector<std::pair<std::string, std::string>>* written = nullptr,
    const std::vector<std::string>* exported = nullptr);

// FMTE_READ's JSON (EncodeClientReading) back into findings. Errors name FMTE_READ and the field.
Result<LauncherFindings> DecodeClientReading(std::string_view text);

}  // namespace fmte::internal

#endif  // FMTE_SRC_REQUEST_INTERNAL_H_
