// What the client side of a submission can give the reading of a batch script and the controller
// cannot: the script's arguments, the variables set at submission, the files the script names, and
// the table of launchers and config-file formats (etc/launchers.json) that says how to read them.
//
// Launchers as data: which launch commands name a config file (a flag such as --deepspeed or
// --config_file, or the first positional file after `llamafactory-cli train`), the format of that
// file, and how each key of the file maps to a launch flag that the framework readers already
// understand (`zero_optimization.stage` -> --zero_stage) or directly to a request key
// (`parallelism.tensor_parallel_degree` -> tp). Supporting a new trainer's config file, or a site's
// in-house launcher, is an edit of that JSON file, not of C++.
//
// Thread-safety: the table is immutable once parsed; a FileSource is called from one thread.
#ifndef FMTE_LAUNCHERS_H_
#define FMTE_LAUNCHERS_H_

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fmte/status.h"

namespace fmte {

// One key of a config file and what it becomes.
struct ConfigKeyRule {
  // Dotted paths into the file's tree ("zero_optimization.stage"); several are joined with '/'
  // ("model.name" + "model.flavor" -> "llama3/8B") before `values` is applied. "*": every
  // top-level scalar or list key, as a flag of its own name (LLaMA-Factory, axolotl).
  std::vector<std::string> paths;
  std::string flag;  // the launch flag it becomes (normalised: lower case, '_' for '-'), or
  std::string key;   // the request key it sets directly
  // Value map, matched case-insensitively; a '*' in a pattern matches any run of characters
  // ("gpt_oss_20b_*"; "*" alone: any value), exact values first, then the most specific pattern; a
  // mapped value "=" keeps the value as is. Empty: the value as is. A value the map does not match
  // is skipped.
  std::vector<std::pair<std::string, std::string>> values;
};

struct ConfigFormat {
  std::string name;    // "deepspeed", "accelerate", "torchtitan", ...
  std::string syntax;  // json|yaml|toml (the FileSource parses any of them into a tree)
  std::vector<ConfigKeyRule> keys;     // in order: a later rule for the same flag or key wins
  std::vector<ConfigKeyRule> always;   // flags/keys set whenever a file of this format is read
  bool dashes_as_underscores = false;  // the file's keys are read with '-' as '_' (GPT-NeoX)
};

// A launch that names a config file.
struct LauncherRule {
  std::string name;  // reported as the request's launcher when this rule reads the model
  // Where it applies: the launch command's program (basename: "llamafactory-cli", "axolotl"),
  // its `python -m` module ("torchtitan.train"), or a script among its positionals
  // ("deepy.py"); "*": every launch line.
  std::vector<std::string> programs;
  std::vector<std::string> flags;  // flags naming the file (normalised: "config_file")
  bool positional = false;         // or: positionals ending in .json/.yaml/.yml/.toml are the files
  std::string directory_flag;      // positional files are relative to this flag's folder (NeoX -d)
  std::string format;              // a ConfigFormat's name
  // "hf": the HF/TRL/accelerate reader runs over the line with the file's flags before the
  // line's own; "megatron": the Megatron reader; "keys": the file sets request keys only.
  std::string reader = "hf";
  std::vector<std::pair<std::string, std::string>> set;  // request keys the launcher implies
  // Request keys its subcommands imply ("finetune_lora": method lora): the key is the launch's
  // first positionals joined by spaces ("finetune full"); the entry with the most words matching
  // applies, below everything the files and the line say.
  using SubcommandKeys = std::pair<std::string, std::vector<std::pair<std::string, std::string>>>;
  std::vector<SubcommandKeys> subcommand_set;
  // The request key the first positional after a matched subcommand sets, unless it names a
  // config file (litgpt's `litgpt finetune lora <checkpoint_dir>`: model); empty: none.
  std::string subcommand_positional;
  // Launch flags that set request keys (`paths` are flag names: Megatron-Bridge's --recipe NAME
  // names the model). A flag whose value the script leaves unknown marks its key unread.
  std::vector<ConfigKeyRule> flag_keys;
  // Request keys this launcher always leaves unread, with what they depend on ("the recipe's
  // parallel layout"): the policy reads them favourably and never rejects on a guess.
  std::vector<std::pair<std::string, std::string>> unread;
  // The program trains LLMs whatever its files say (LLaMA-Factory, axolotl, torchtitan, ...): a
  // launch whose files name no model fmte can read is still an LLM training job, with its model
  // unread (accepted with a notice naming the file), not a job fmte leaves untouched.
  bool trains_llms = false;
  // Its subcommands that do not train (`llamafactory-cli chat`, `litgpt serve`): a launch whose
  // first positional is one of them is not taken for training by trains_llms.
  std::vector<std::string> other_subcommands;
  // Its `key=value` words are overrides of the config's keys, undotted ones too (OmegaConf's
  // dotlist: `llamafactory-cli train cfg.yaml cutoff_len=2048`). Elsewhere only dotted ones are
  // (Hydra's undotted `model=llama` picks a config group, not a key).
  bool dotlist = false;
  // For a script name other projects use too (LLaMA-Factory's `src/train.py`): the rule applies
  // only to a launch whose line has one of these flags (`--stage sft`) or whose config file has
  // one of them as a top-level key (`stage: sft`); empty: always.
  std::vector<std::string> markers;
  // Values of its file flags that name a trainer's built-in config, not a file (ms-swift's
  // `--deepspeed zero2`): not read, no warning.
  std::vector<std::string> builtin_values;
  // The subcommands that train, where a program of that name may be something else (ms-swift's
  // `swift sft`, not the Swift language or the SWIFT astrophysics code): the rule applies only
  // to a launch whose subcommand (its first word, or the word after the script run by a
  // launcher) is one of them; empty: any.
  std::vector<std::string> subcommands;
};

struct LauncherTable {
  std::vector<ConfigFormat> formats;
  std::vector<LauncherRule> launchers;
  const ConfigFormat* Format(std::string_view name) const;
};

// Parses etc/launchers.json. Errors name the entry and field: "<origin>: launchers[3].format:
// expected the name of one of the formats, got 'yml'".
Result<LauncherTable> ParseLauncherTable(std::string_view json_text, std::string_view origin);

// The files a script names, read on the client (SPANK in sbatch, fmte-advise check): bounded,
// relative to the submission directory, never outside what the script names. Not used inside
// slurmctld, which reads no files per job.
class FileSource {
 public:
  virtual ~FileSource() = default;
  // The text of a file (`source env.sh`), its path as the script writes it.
  virtual Result<std::string> ReadText(std::string_view path) const = 0;
  // A config file's text as a tree; `syntax` json|yaml|toml (empty: by the path's extension).
  virtual Result<nlohmann::json> ParseConfig(std::string_view path, std::string_view text,
                                             std::string_view syntax) const = 0;
};

// Inputs of a reading beyond the script itself.
struct ScriptContext {
  std::vector<std::string> args;  // the script's arguments: $1, $2, ..., "$@"
  // Variables set when the script starts (sbatch --export=NAME=VALUE, SLURM_NNODES, ...).
  std::vector<std::pair<std::string, std::string>> env;
  const FileSource* files = nullptr;         // null: no file is read (the controller)
  const LauncherTable* launchers = nullptr;  // null: built-in reading only
  // The batch script's folder as `files` names it ("examples/scripts"; empty: the working
  // directory): a file it `source`s by a relative name that is not in the working directory is
  // looked for there (a script written to be submitted from its own folder), with a note.
  std::string script_dir;
};

}  // namespace fmte

#endif  // FMTE_LAUNCHERS_H_
