// JobRequest: everything fmte knows about one Slurm submission, merged from four sources in this
// order of precedence (highest first):
//   1. SPANK option values (`sbatch --fmte-model=...`, also as `#SBATCH --fmte-...` lines), which
//      reach the controller in `spank_job_env` as `_SLURM_SPANK_OPTION_fmte_fmte_<opt>=<value>`;
//   2. `#FMTE key=value ...` lines in the batch script (same keys as the SPANK options without
//      `--fmte-`: `#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=4096 micro-batch=2`);
//   3. the script's launch lines (torchrun / accelerate / deepspeed / python running HF Trainer or
//   TRL
//      scripts, `tune run`, Megatron `pretrain_gpt.py`): see launcher.h;
//   4. what Slurm already knows (SlurmFacts: GPUs from tres_per_*, nodes, partition, time limit).
// A request with none of 1-3 naming a model is not an LLM training job (is_llm_job == false) and
// the policy leaves it untouched.
//
// Parsing is pure, bounded and exception-free: no file or network I/O, at most kMaxScriptBytes of
// the script are read, lines and tokens are capped, numbers are range-checked (no overflow), and
// every ignored or invalid entry becomes a warning naming the key. It is shared by the job_submit
// plugin (inside slurmctld) and `fmte-advise check`, so both see the identical request.
// Thread-safety: free functions over value types; the option table is immutable.
#ifndef FMTE_REQUEST_H_
#define FMTE_REQUEST_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fmte/job.h"
#include "fmte/launchers.h"
#include "fmte/status.h"

namespace fmte {

// Bounds of the parse (documented in docs/policy.md). Input past them is ignored with a warning.
inline constexpr size_t kMaxScriptBytes = size_t{1} << 20;    // 1 MiB of script are parsed
inline constexpr size_t kMaxLineBytes = 64 * 1024;            // a (joined) logical line
inline constexpr size_t kMaxTokensPerCommand = 4096;          // words of one launch command
inline constexpr size_t kMaxShellVars = 256;                  // VAR=value assignments remembered
inline constexpr size_t kMaxExpandedBytes = size_t{1} << 20;  // $VAR/${ARR[@]} output, whole script
inline constexpr size_t kMaxValueBytes = 1024;                // one option value
inline constexpr size_t kMaxArchJsonBytes = 64 * 1024;        // forwarded architecture JSON
inline constexpr size_t kMaxWarnings = 32;                    // further warnings are counted only

// Where a value came from, lowest precedence first. Names: default|slurm|launcher|fmte-line|spank.
enum class Source : uint8_t { kDefault, kSlurm, kLauncher, kFmteLine, kSpank };
std::string_view ToString(Source s);

// ---------------------------------------------------------------------------------------------
// The SPANK options / #FMTE keys (a contract with users, docs/slurm.md §3). One table serves the
// SPANK plugin (option registration and client-side validation), #FMTE lines and SPANK values in
// job_submit.
// ---------------------------------------------------------------------------------------------
struct OptionSpec {
  std::string_view key;  // "model", "seq-len", ...: the #FMTE key; the SPANK option is "fmte-"+key
  std::string_view arginfo;  // for --help: "ID|PATH", "full|lora|qlora|...", "N"
  std::string_view usage;    // one-line help text
};
// The 17 options in contract order: model method seq-len micro-batch grad-accum precision sharding
// tp pp activation-checkpointing lora-r quant tokens samples epochs steps framework.
std::span<const OptionSpec> FmteOptions();

// Checks one value the way the controller will read it. The error names the option as the user
// typed it, `--fmte-<key>` (or `#FMTE <key>` when `as_fmte_line`), and lists the accepted values:
//   "--fmte-method: expected one of full|lora|qlora|prompt-tuning|prefix-tuning, got 'lorra'".
// Unknown keys are an error listing the known ones. Integers: positive decimal with an optional
// K/M/B/T (x1e3..x1e12) suffix for tokens/samples/steps; epochs: a positive decimal number.
Status ValidateOption(std::string_view key, std::string_view value, bool as_fmte_line = false);

// "_SLURM_SPANK_OPTION_fmte_fmte_model" for "model": the name Slurm gives a SPANK option value in
// spank_job_env (plugin "fmte", option "fmte-<key>", non-alphanumerics turned into '_').
std::string SpankEnvKey(std::string_view key);

// Name (in spank_job_env without prefix, or from sbatch in the job's environment as
// SLURM_SPANK_<name>: slurm_plugin/job_desc_adapter.h) under which the SPANK plugin forwards the
// architecture it resolved on the client: compact JSON with config.json keys, accepted by
// ParseModelConfig. Key inside the spank_values given to ParseJobRequest: "arch".
inline constexpr std::string_view kArchEnvName = "FMTE_ARCH";
inline constexpr std::string_view kArchKey = "arch";

// Name (as kArchEnvName's) under which the SPANK plugin forwards what it read on the client from
// the launch line and the files it names (EncodeClientReading); key "read" in the spank_values
// given to ParseJobRequest, which then uses it in place of its own reading of the launch line.
inline constexpr std::string_view kReadEnvName = "FMTE_READ";
inline constexpr std::string_view kReadKey = "read";
inline constexpr size_t kMaxReadJsonBytes = kMaxArchJsonBytes + 32 * 1024;

// Picks fmte's entries out of a spank_job_env array ("NAME=value" strings; null entries and
// foreign names skipped) and returns them as (key, value): ("model", "..."), ("seq-len", "4096"),
// ("arch", "{...}"), ("read", "{...}"), in key order (stable: of duplicate entries, the later
// one still comes later and wins in ParseJobRequest), so that the same values make the same list
// whatever order the environment holds them in.
std::vector<std::pair<std::string, std::string>> SpankValuesFromEnv(
    std::span<const char* const> spank_job_env);

// ---------------------------------------------------------------------------------------------
// What Slurm already knows about the submission (the adapter fills it from job_desc_msg_t; the
// tools from sbatch-like flags). Unset means 0 / empty: the adapter maps NO_VAL sentinels to 0.
// ---------------------------------------------------------------------------------------------
struct SlurmFacts {
  std::string partition;       // empty: not given (Config's default partition applies)
  int64_t time_limit_min = 0;  // minutes; 0: none given (INFINITE is mapped to 0 too)
  int64_t min_nodes = 0;
  int64_t num_tasks = 0;
  int64_t ntasks_per_node = 0;  // --ntasks-per-node (one task per GPU in srun-launched jobs)
  bool exclusive = false;       // --exclusive: whole nodes (job_desc shared == JOB_SHARED_NONE)
  // GPU requests as Slurm stores them: "gres:gpu:2", "gres:gpu:a100:2", "gres/gpu:a100=2"-style
  // and comma-joined lists with other gres ("gres:gpu:4,gres:nvme:1") are understood.
  std::string tres_per_node;  // --gres=gpu:..., --gpus-per-node
  std::string tres_per_job;   // --gpus
  std::string tres_per_task;  // --gpus-per-task (times num_tasks)
  std::string
      tres_per_socket;  // --gpus-per-socket (needs the socket count: warned, per-node guess)
  std::string job_name;
  std::string user;
  // Host memory asked for, in megabytes (0: not given: the site's default applies): --mem per
  // node, --mem-per-cpu (with --cpus-per-task, default 1), --mem-per-gpu.
  int64_t mem_per_node_mb = 0;
  int64_t mem_per_cpu_mb = 0;
  int64_t mem_per_gpu_mb = 0;
  int64_t cpus_per_task = 0;
};

// Which job_desc field carried the GPU request (the one a GPU-count rewrite must change).
enum class GpuTresField : uint8_t { kNone, kPerNode, kPerJob, kPerTask, kPerSocket };
std::string_view ToString(
    GpuTresField f);  // none|tres_per_node|tres_per_job|tres_per_task|tres_per_socket

// One GPU entry of a tres string.
struct GpuTres {
  int64_t count = 0;  // 0: no gpu entry
  std::string type;   // gres type ("a100"), empty when untyped
};
// Parses a tres_per_* string. Non-gpu entries are skipped; a malformed gpu entry or a count beyond
// 2^20 is an error naming the field text.
Result<GpuTres> ParseGpuTres(std::string_view tres);
// Returns `tres` with the gpu entry's count set to `count` (type and other entries kept); a string
// without a gpu entry gets "gres:gpu:<count>" appended. Always in the 22.05 "gres:gpu[:type]:N"
// form.
std::string ReplaceGpuCount(std::string_view tres, int64_t count);

// Per-key provenance, for explanations (`fmte-advise check`) and the record.
struct FieldSource {
  std::string
      key;  // #FMTE key or launcher-derived field ("optimizer", "gpus", "offload-optimizer")
  Source source = Source::kDefault;
  std::string value;   // as given (truncated to 128 bytes)
  std::string origin;  // "line 12: --per_device_train_batch_size" / "spank" / "tres_per_node"
};

// A setting the job has but fmte could not read: a config file that holds it, which fmte does not
// open at submit time. The policy rejects only when the job cannot fit under the setting's most
// favourable value.
struct UnreadSetting {
  std::string key;     // the request key it would set ("sharding")
  std::string origin;  // where it is: "line 16: --deepspeed ds_config.json"
};

struct JobRequest {
  bool is_llm_job = false;  // a model was named by SPANK, an #FMTE line or a launcher
  TrainingJob job;          // merged; job.gpus/gpus_per_node/gpu from Slurm when it requested GPUs
  std::vector<FieldSource> sources;

  // Slurm side, as requested (before any rewrite).
  std::string partition;            // as given (may be empty)
  int64_t time_limit_min = 0;       // 0: none
  int64_t nodes = 0;                // min_nodes, 0 when not given
  bool exclusive = false;           // whole nodes asked for (sbatch --exclusive)
  int64_t slurm_gpus = 0;           // total GPUs requested through tres_per_*; 0: none
  int64_t slurm_gpus_per_node = 0;  // per node when known (tres_per_node), else 0
  std::string gres_gpu_type;        // gres type ("a100"), empty when untyped
  GpuTresField gpu_field = GpuTresField::kNone;
  std::string gpu_tres;  // the text of that field (for ReplaceGpuCount)
  // Host memory the job asks for on each node (0: not given), and how it was asked ("--mem",
  // "--mem-per-gpu x 8 GPUs per node", "--mem-per-cpu x 16 CPUs per node").
  int64_t host_memory_per_node_bytes = 0;
  std::string host_memory_origin;

  // What the launcher told (0: not seen): GPUs it starts per node and nodes.
  int64_t launcher_procs_per_node = 0;
  int64_t launcher_nodes = 0;
  // Where that count comes from when it is not the launcher's own flag ("line 30: srun
  // --ntasks-per-node x --nodes"); empty: the launcher.
  std::string launcher_procs_origin;
  std::string launcher;  // "torchrun", "accelerate", "deepspeed", "python", "tune", "megatron"

  // Architecture forwarded by the SPANK plugin (compact config.json JSON; empty: none), or derived
  // from Megatron's --num-layers/--hidden-size/... flags for an ad-hoc model.
  std::string arch_json;

  // Settings the launch line names but fmte could not read, none of which a higher-precedence
  // source (#FMTE line, SPANK option) gave.
  std::vector<UnreadSetting> unread;

  // Files read on the client for this request (sourced scripts, config files), paths as written.
  std::vector<std::string> files_read;

  std::vector<std::string> warnings;  // each names the key or line; at most kMaxWarnings
  size_t dropped_warnings = 0;

  // The client's scan of the script (ParseJobRequest with a ScriptContext; empty otherwise): its
  // #FMTE lines (line, text after "#FMTE") and the scan's own warnings, which FMTE_READ forwards so
  // that slurmctld does not scan the script a second time.
  bool client_scan = false;  // read with a ScriptContext: the two fields below are its scan's
  std::vector<std::pair<int, std::string>> script_fmte_lines;
  std::vector<std::string> script_warnings;
  // The controller's side: the scan came from the forwarded reading (FMTE_READ), so the script's
  // text was not read at all and the request depends only on the SPANK values and the facts.
  bool forwarded_scan = false;

  const FieldSource* SourceOf(std::string_view key) const;
};

// Parses and merges. Never fails: any script, however broken, is a request. A bad value is a
// warning naming its key or line, and the lower-precedence value stays; binary bytes, NUL,
// unterminated quotes and absurd numbers give warnings.
JobRequest ParseJobRequest(std::string_view script,
                           const std::vector<std::pair<std::string, std::string>>& spank_values,
                           const SlurmFacts& facts);
// The same with what only the client side knows (the script's arguments, the variables set at
// submission, its files and the launcher table): config files the launch line names are read,
// files the script `source`s too, and the request lists them in `files_read`.
JobRequest ParseJobRequest(std::string_view script,
                           const std::vector<std::pair<std::string, std::string>>& spank_values,
                           const SlurmFacts& facts, const ScriptContext& context);

// What a client-side request (one read with a ScriptContext) took from the launch line and its
// files, as compact JSON for FMTE_READ: the launcher's values with where each came from, the
// settings it could not read, the launcher, its process and node counts, the files read, and
// `arch_json` (the architecture of the model that won on the client when the controller cannot
// read it: one the launch line or an #FMTE line named by path or from the Hugging Face cache, or
// Megatron's flags), and the script's #FMTE lines and scan warnings (script_fmte_lines,
// script_warnings), with which the controller skips its own scan of the script. Empty for a
// request that was not read with a ScriptContext and has nothing to forward. Bounded by
// kMaxReadJsonBytes: the #FMTE lines are dropped first (the controller then scans the script
// itself), then the architecture and files (the controller then knows less, never something
// else).
std::string EncodeClientReading(const JobRequest& client_request, std::string_view arch_json = "");

}  // namespace fmte

#endif  // FMTE_REQUEST_H_
