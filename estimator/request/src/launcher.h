// Private: the launch-line readers (launcher.cc finds and splits launch commands; launcher_hf.cc,
// launcher_megatron.cc and launcher_torchtune.cc translate each framework's flags into request
// keys). Thread-safety: pure functions.
#ifndef FMTE_SRC_LAUNCHER_H_
#define FMTE_SRC_LAUNCHER_H_

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "request_internal.h"

namespace fmte::internal {

// One `--flag [value]` of a launch command. `name` is lower-case with '-' turned into '_'
// (torchrun, HF and Megatron spell flags differently). Both views point into the command's words,
// the LaunchLine's own text or string literals: valid while the Command and the LaunchLine live.
struct Flag {
  std::string_view name;
  std::string_view value;  // "true" for a bare boolean flag
  bool unresolved = false;
  int index = 0;            // word index in the command; -1 for a flag read from a config file
  bool file_read = false;   // the config file this flag names was read (its keys are flags too)
  std::string_view origin;  // a flag from a config file: "ds.json: zero_optimization.stage"
  // An undotted `key=value` word after a script whose rule takes a dotlist (src/train.py): a flag
  // only if that rule turns out to apply (DetectLauncher drops it otherwise).
  bool script_dotlist = false;
};

// One split launch command. It refers to the Command it was split from (which must outlive it)
// and to its own `text_`, so it is neither copied nor moved.
struct LaunchLine {
  LaunchLine() = default;
  LaunchLine(const LaunchLine&) = delete;
  LaunchLine& operator=(const LaunchLine&) = delete;

  // The last flag called `name` (as in argparse, the last occurrence wins), or nullptr.
  const Flag* Find(std::string_view name) const;

  // Puts `flags` from a config file before the line's own flags (which win, as on the command
  // line of every trainer that reads a config file and flags); their text is kept by the line.
  void AddFileFlags(std::vector<std::pair<std::string, std::string>> name_values,
                    std::string_view origin_prefix, std::vector<std::string> origins);
  // Groups the flags by name length again (after AddFileFlags).
  void Index();

  int line = 0;
  std::string_view launcher;  // torchrun|accelerate|deepspeed|python|tune|trl|llamafactory|...
  std::string_view program;   // the launch command's own word, base name ("llamafactory-cli")
  std::vector<Flag> flags;
  std::vector<std::string_view>
      positionals;          // non-flag words after the launcher (script, overrides)
  std::string_view module;  // python -m <module>
  // The VAR=value words before the launcher (`NPROC_PER_NODE=8 swift sft ...`), as written.
  std::vector<std::string_view> env_prefix;
  // The variables the script exports (ScanOutput::exported); null when not known.
  const std::vector<std::string>* exported = nullptr;
  // An srun prefix's own counts (0: not given or unknown): --ntasks-per-node, --nodes, --ntasks.
  int64_t srun_tasks_per_node = 0, srun_nodes = 0, srun_tasks = 0;
  // Normalised flag names and joined list values; reserved once by Split so the views stay valid.
  std::string text_;
  // `flags` grouped by name length, each group in command order (built by Split for Find).
  LengthGroups<64> by_length_;
  std::deque<std::string> file_text_;  // names, values and origins of flags from config files
};

// Collects values in a LauncherFindings, with the origin text "line N: --flag".
class Sink {
 public:
  Sink(LauncherFindings* out, int line) : out_(out), line_(line) {}
  void Set(std::string_view key, std::string_view value, std::string_view flag);
  // Set with the origin "line N: --<flag_name>" (no "--name" string built by the caller).
  void SetFromFlag(std::string_view key, std::string_view value, std::string_view flag_name);
  // Set with an origin of its own ("ds.json: zero_optimization.stage").
  void SetWithOrigin(std::string_view key, std::string_view value, std::string origin);
  void Warn(std::string_view flag, std::string_view what);
  // `key` is set in the file `file` that `flag` names, which fmte does not read: an UnreadSetting
  // for the policy ("line N: <flag> <file>").
  void MarkUnread(std::string_view key, std::string_view flag, std::string_view file);
  // MarkUnread with a warning (`what`) about it.
  void Unread(std::string_view key, std::string_view flag, std::string_view file,
              std::string_view what);
  // `flag` sets `key` from a variable the script does not set: unread, so the policy reads it
  // favourably instead of taking a default ("line N: --flag (unknown value)").
  void UnreadUnknown(std::string_view key, std::string_view flag);
  const Flag* Find(const LaunchLine& l, std::string_view name) const { return l.Find(name); }
  // Whether this launch line already set `key`.
  bool Has(std::string_view key) const;
  // The value this launch line last set for `key`, or "" when it set none.
  std::string_view Get(std::string_view key) const;
  int line() const { return line_; }
  LauncherFindings* out() { return out_; }

 private:
  void Add(std::string_view key, std::string_view value, std::string_view prefix,
           std::string_view flag);
  const Assignment* Last(std::string_view key) const;  // this line's last value for `key`

  LauncherFindings* out_;
  int line_;
};

// A flag name as the launch-line readers compare it: lower case, '-' as '_' ("--Job.Config-File"
// and a config file's "job.config-file" both give "job.config_file").
std::string NormalizedFlagName(std::string_view name);

// A flag value to true/false (bare flag or literal); false for "False"/"0"/"no".
bool FlagTrue(const Flag* f);
// "2" -> 2, "1:4" -> 4 (elastic max), anything else (auto, gpu, $VAR) -> 0.
int64_t ProcCount(const Flag* f);
// The first of `names` the line sets with a known value (not from an unknown variable), or
// nullptr; `which` (optional) gets its name.
const Flag* KnownFlag(const LaunchLine& l, std::initializer_list<std::string_view> names,
                      std::string_view* which = nullptr);

// A flag that sets one request key, with the script's own default when the line leaves it out:
// a flag from an unknown variable is warned about and left unset; an absent flag gives
// `fallback` ("<program> (default --flag)" as origin), or nothing when `fallback` is empty.
struct FlagDefault {
  std::string_view flag, key, fallback;
};
void SetFlagsWithDefaults(const LaunchLine& l, std::span<const FlagDefault> flags,
                          std::string_view program, Sink* sink);

void ReadHfFlags(const LaunchLine& l, Sink* sink);     // HF Trainer / TRL / PEFT / accelerate / DS
void ReadSwiftFlags(const LaunchLine& l, Sink* sink);  // ms-swift `swift sft|pt|rlhf`, after it
void ReadMegatronFlags(const LaunchLine& l, Sink* sink);       // pretrain_gpt.py
void ReadMegatronSwiftFlags(const LaunchLine& l, Sink* sink);  // `megatron sft`, after it
void ReadTorchtune(const LaunchLine& l, Sink* sink);  // tune run <recipe> --config <cfg> k=v
// The objective a preference or RL trainer's launch names (LLaMA-Factory's stage and pref_loss,
// axolotl's rl, TRL's CLI and scripts, ms-swift's and Megatron-SWIFT's rlhf): `objective`, or a
// note where it is not modelled (launcher_hf.cc).
void ReadPreferenceStage(const LaunchLine& l, Sink* sink);
// ms-swift's online trainers (grpo, ppo, gkd): --max_length is the prompt's, the sequence adds
// --max_completion_length; a colocated vLLM's share of each GPU (launcher_hf.cc).
void ReadSwiftOnline(const LaunchLine& l, Sink* sink);
// A vLLM engine colocated with the trainer (in each training process, or beside it on the same
// GPUs) holds `share_flag` of each GPU's memory (generation-memory; the flag as the launch writes
// it: "--vllm_gpu_memory_utilization", or verl's dotted key), `fallback` where the launch leaves it
// to `program`'s default; unread from an unknown variable.
void SetColocatedEngineShare(const LaunchLine& l, Sink* sink, std::string_view share_flag,
                             std::string_view fallback, std::string_view program);
// An online trainer's KL coefficient --beta (TRL, ms-swift): above 0 a reference model is kept
// (kl-reference); `keeps_default`: whether the trainer's default is above 0, `origin` whose.
void ReadKlBeta(const LaunchLine& l, Sink* sink, bool keeps_default, std::string_view origin);
// The objective this line has read so far where it is an online one (GeneratesCompletions).
std::optional<Objective> OnlineObjective(const Sink& sink);
// The online objective of an RL trainer's advantage estimator (verl's algorithm.adv_estimator,
// OpenRLHF's --advantage_estimator): grpo (also OpenRLHF's group_norm), rloo, else ppo (gae, a
// critic, and the other critic-free estimators of the PPO trainer).
std::string_view OnlineObjectiveOfEstimator(std::string_view estimator);
// The note of an online objective (GeneratesCompletions), from `where` (launcher_hf.cc).
void WarnOnlineObjective(std::string_view where, Sink* sink);

// The config files `l` names under the launcher table's rules, read through the context's files
// (and the files the script itself wrote): their keys become flags of `l` (AddFileFlags) or request
// values in `sink`. Returns the first rule that applied to the launch's program (not a "*" rule),
// or nullptr. Without files (the controller), nothing is read.
struct FileContext {
  const ScriptContext* ctx = nullptr;
  const std::vector<std::pair<std::string, std::string>>* written = nullptr;
};
// REQUIRES: !NotTrainingLaunch(table, *l) (a rule's program on the line is its training launch).
const LauncherRule* ReadConfigFiles(const FileContext& files, LaunchLine* l, Sink* sink);
// Whether a table rule names `program` (a launch command's base name) as its own.
bool IsTableProgram(const LauncherTable* table, std::string_view program);
// Whether positional `pos` is `p`, a program of a rule: a name with a folder ("scripts/train.py")
// matches a script path that ends with it, a bare name a script of that base name.
bool IsProgramPath(std::string_view pos, std::string_view p);
// Whether the launch runs a trainer's subcommand that does not train (`llamafactory-cli chat
// cfg.yaml`, `swift infer --model ...`, also under a launcher: `torchrun ... swift infer`), or a
// program of a rule that lists its training subcommands with another (`swift build`): no
// training launch, whatever its files and flags name.
bool NotTrainingLaunch(const LauncherTable* table, const LaunchLine& l);

void ReadFmsFsdpFlags(const LaunchLine& l, Sink* sink);    // fms-fsdp main_training.py
bool IsFmsFsdpScript(const LaunchLine& l);                 // runs fms-fsdp's main_training.py
void ReadFsdpQloraFlags(const LaunchLine& l, Sink* sink);  // Answer.AI fsdp_qlora train.py
bool IsFsdpQloraScript(const LaunchLine& l);               // its --train_type and own flags
void ReadVerlOverrides(const LaunchLine& l, Sink* sink);   // verl.trainer.* Hydra overrides
bool IsVerlLaunch(const LaunchLine& l);                    // python -m verl.trainer.*
void ReadOpenRlhfFlags(const LaunchLine& l, Sink* sink);   // openrlhf.cli.train_*
bool IsOpenRlhfLaunch(const LaunchLine& l);                // -m / --module openrlhf.*

// One "key":value of a JSON object; `raw_value` is JSON text as is (a number, true, "quoted").
struct JsonField {
  std::string_view key;
  std::string_view raw_value;
};
// `{"key":value,...}` without spaces, in one allocation (config.json texts for ParseModelConfig).
std::string JsonObject(std::initializer_list<JsonField> fields);
// An integer's JSON text, without allocating; a temporary used as a JsonField's raw_value.
class JsonInt {
 public:
  explicit JsonInt(int64_t v);
  operator std::string_view() const {
    return std::string_view(buf_, static_cast<size_t>(end_ - buf_));
  }

 private:
  char buf_[24];
  char* end_;
};

// A config.json-style LLaMA architecture (RMSNorm, SwiGLU, no biases) for ParseModelConfig, for
// launchers that describe the model by its dimensions (Megatron flags, fms-fsdp variants).
std::string LlamaConfigJson(int64_t hidden, int64_t layers, int64_t heads, int64_t kv_heads,
                            int64_t ffn, int64_t vocab, int64_t positions, bool tied);

// An ad-hoc decoder given by its dimensions (Megatron's flags, a config file's arch.* keys). A 0
// field takes Megatron's default, which GPT-NeoX shares: kv_heads = heads; ffn = 4h, or for a
// gated (SwiGLU) MLP int(4h * 2/3) rounded down to a multiple of 64; positions 2048; vocab 50304
// (GPT-2's BPE padded to a multiple of 128: the caller says so when it applies).
struct AdHocArch {
  int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0, positions = 0;
  bool gated = false;  // SwiGLU + RMSNorm + rotary: a llama config; else GPT-2's shape (LayerNorm,
                       // GeLU MLP, learned absolute positions, biases)
  bool neox = false;   // not gated, rotary positions and a parallel residual (a gpt_neox config:
                       // litgpt's GptNeoxMLP default)
  bool tied = true;
  // config.json text for ParseModelConfig; `name` gets "<prefix>-<llama|gpt>-<L>l-<H>h".
  std::string Json(std::string_view prefix, std::string* name) const;
};

// An ad-hoc architecture described by a config file's keys (launcher-table rules whose key is
// "arch.<field>": arch.style llama|gpt2|neox, arch.hidden, arch.layers, arch.heads, arch.kv-heads,
// arch.ffn, arch.ffn-proj, arch.ffn-ratio, arch.vocab, arch.positions, arch.tied): when `f` names
// no model, they become its `arch_json` and a model "<launcher>-<llama|gpt>-<L>l-<H>h". The arch.*
// values are removed from `f` either way.
void ArchFromKeys(std::string_view launcher, LauncherFindings* f);

// torchtune config name -> Hugging Face id ("llama3_1/8B_lora" -> "meta-llama/Llama-3.1-8B").
std::string TorchtuneModelId(std::string_view config);

}  // namespace fmte::internal

#endif  // FMTE_SRC_LAUNCHER_H_
