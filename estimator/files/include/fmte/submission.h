// A submission as sbatch sees it, read on the client (the SPANK plugin inside sbatch and
// `fmte-advise check`, with the same code): sbatch's command line (options, SCRIPT, the script's
// arguments), the script's #SBATCH lines (the command line wins, as in sbatch), the Slurm facts
// they give, the variables the script starts with, and the whole reading of the script and of the
// files it names (ReadSubmission).
// Thread-safety: free functions over value types.
#ifndef FMTE_SUBMISSION_H_
#define FMTE_SUBMISSION_H_

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fmte/launchers.h"
#include "fmte/model.h"
#include "fmte/request.h"
#include "fmte/status.h"

namespace fmte {

// The sbatch options fmte looks at, as text (validated by FactsFrom).
struct SbatchOptions {
  std::string partition, gres, gpus, gpus_per_node, gpus_per_task, time, nodes, ntasks;
  std::string ntasks_per_node, job_name, array, exports, chdir, wrap;
  std::string mem, mem_per_cpu, mem_per_gpu, cpus_per_task;  // host memory asked for
  std::vector<std::pair<std::string, std::string>> spank;    // --fmte-KEY=VALUE
  bool exclusive = false;  // --exclusive without a value (whole nodes; =user and =mcs share)
};

// Does this sbatch option (long name without dashes, or a short letter) take a value? sbatch
// 22.05's `--help`; a name it does not list is taken as a flag.
bool SbatchTakesValue(std::string_view name);

// One option into `o`: `name` is the long name without dashes or the short letter. Options fmte
// does not use are ignored.
void SetSbatchOption(std::string_view name, std::string value, SbatchOptions* o);

// Option words as on an sbatch command line or an #SBATCH line ("--nodes=2", "-N", "2", "-N2",
// "--exclusive") into `o`.
void ApplySbatchWords(std::span<const std::string> words, SbatchOptions* o);

// The #SBATCH lines of a script up to its first command, as sbatch reads them.
void ReadSbatchLines(std::string_view script, SbatchOptions* o);

// sbatch's command line split as sbatch does: the options, each with its value word when it takes
// one ({"--nodes", "2"}, {"--nodes=2"}, {"--exclusive"}), the script's path (empty: read from
// standard input, or --wrap) and the script's own arguments. `also_takes_value` names options of
// the caller (fmte-advise's --config) that take a value.
struct SbatchCommandLine {
  std::vector<std::vector<std::string>> options;
  std::string script;
  std::vector<std::string> script_args;
};
SbatchCommandLine SplitSbatchCommandLine(
    std::span<const std::string> args,
    const std::function<bool(std::string_view)>& also_takes_value = nullptr);

// `srun [OPTIONS] COMMAND [ARGS...]` that asks for a new job, as sbatch's words for the same job:
// the options, then --wrap with the command line (each word single-quoted): what a job_submit
// plugin sees of it is the same allocation with no batch script. Empty without a command.
std::vector<std::string> SrunAsSbatch(std::span<const std::string> srun_args);

// The Slurm facts of the options. Errors name the option ("--nodes: ...").
Result<SlurmFacts> FactsFrom(const SbatchOptions& o);

// A memory size as sbatch --mem reads it, in megabytes: "64000", "250G", "2T", "512k" (rounded
// up). Error: "<field>: expected a size in megabytes, or with a K, M, G or T suffix, got '...'".
Result<int64_t> ParseSlurmMemoryMb(std::string_view text, std::string_view field);

// Values in #SBATCH lines that sbatch would refuse (a template's "{{ nodes }}") are dropped; each
// gives a warning "#SBATCH --nodes: ...; ignored".
std::vector<std::string> DropInvalidSbatchValues(SbatchOptions* o);

// The variables the script starts with, as far as they are known at submission: the submitter's
// environment (`environ`, "NAME=value" entries) as --export passes it (ALL by default; NONE or a
// list of names) but only the names the script mentions, --export NAME=VALUE pairs, and the
// SLURM_* variables of the allocation asked for (SLURM_NNODES, SLURM_NTASKS, SLURM_GPUS_PER_NODE,
// SLURM_SUBMIT_DIR, SLURM_JOB_NAME, SLURM_ARRAY_TASK_ID of the array's first task).
std::vector<std::pair<std::string, std::string>> SubmissionEnv(
    const SbatchOptions& o, const SlurmFacts& f, const std::string& dir, std::string_view script,
    std::span<const char* const> environ_entries = {});

// This process's environment ("NAME=value" entries).
std::span<const char* const> ProcessEnviron();

// Everything the client reads for one submission. `command_line`: sbatch's words after the
// program name; `cwd`: where sbatch runs (the script's path is relative to it; the files the script
// names are relative to --chdir when given). `spank`: --fmte-* values given outside the command
// line (sbatch's own option parsing), appended after the script's. Errors: the script cannot be
// read. A script from standard input gives NotFound (nothing to read on the client).
struct Submission {
  std::string dir;     // the submission directory (--chdir, else cwd)
  std::string script;  // the batch script's text
  SbatchOptions options;
  SlurmFacts facts;
  JobRequest request;
  std::vector<std::string> warnings;  // #SBATCH values dropped
};
//
// A model the launch line or an #FMTE line names that `models` does not know is read here when it
// is a path (a config.json or a model directory, relative to the submission directory) or sits in
// the submitter's Hugging Face cache (`environ_entries`): its config.json becomes the request's
// arch_json (what the client forwards). Without `models`, only paths are read. A path that names
// nothing usable is a warning.
Result<Submission> ReadSubmission(std::span<const std::string> command_line, const std::string& cwd,
                                  const LauncherTable* launchers,
                                  std::span<const char* const> environ_entries = {},
                                  const ModelCatalog* models = nullptr);

// A job that already ran, read as its submission was (fmte-advise replay): `script` is the stored
// batch script (sacct --batch-script), `command_line` sbatch's words after the program name when
// known (sacct's SubmitLine; the script's path in it is not read again), `cwd` the submission
// directory (WorkDir; the files the script names are read there when they still exist), and
// `allocated` what Slurm gave the job (partition, time limit, nodes, GPUs), which wins over the
// script's options; any GPU field in it replaces all of the script's GPU requests. No environment:
// the submitter's variables are not known.
Result<Submission> ReadPastSubmission(std::string script, std::span<const std::string> command_line,
                                      const std::string& cwd, const SbatchOptions& allocated,
                                      const LauncherTable* launchers,
                                      const ModelCatalog* models = nullptr);

}  // namespace fmte

#endif  // FMTE_SUBMISSION_H_
