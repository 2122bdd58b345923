// Command-line flags of the fmte tools (Boost.Program_options): generic parsing with uniform
// error messages, and the job flags of `fmte-advise estimate` (reused by `check` and
// `recommend`) that fill a fmte::TrainingJob.
//
// Every value is taken as a string and converted here, so errors always read
// "--flag: expected ..., got '...'" and enum values go through job.h's Parse* name tables.
// Thread-safety: stateless functions.
#ifndef FMTE_TOOLS_JOB_OPTIONS_H_
#define FMTE_TOOLS_JOB_OPTIONS_H_

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/job.h"
#include "fmte/status.h"

namespace fmte::tools {

namespace po = boost::program_options;

// Parses `args` (args[0] is the subcommand's name, skipped) against `desc` into `vm`.
// No abbreviations, no positional arguments. Unknown flags get "did you mean '--x'?".
// Errors are kInvalidArgument (exit code 2).
Status ParseFlags(const po::options_description& desc, const std::vector<std::string>& args,
                  po::variables_map* vm);

// "usage: <tool> <command> [options]" + summary + the options table, for --help.
std::string HelpText(std::string_view command, std::string_view summary,
                     const po::options_description& desc, std::string_view tool = "fmte-advise");

// Strict number parsing: the whole text must be the number, within [min, max].
Result<int64_t> ParseInt(std::string_view text, std::string_view flag, int64_t min, int64_t max);
Result<double> ParseDouble(std::string_view text, std::string_view flag, double min, double max);

// The value of a string flag, or "" when absent.
std::string FlagString(const po::variables_map& vm, const char* name);
bool FlagSet(const po::variables_map& vm, const char* name);  // bool_switch or given value

// --help and --json.
void AddCommonOptions(po::options_description* desc);

// The flags describing one training job: --model, --method, ..., --optimizer-in-backward
// (a contract: docs/advise.md), with their defaults as in TrainingJob (--gpu A100-80GB).
void AddJobOptions(po::options_description* desc);
// The amount-of-work and time flags: --tokens, --samples, --epochs, --steps,
// --global-batch, --cluster, --inter-node-gbps, --timeline FILE.svg, --regressors DIR.
void AddWorkOptions(po::options_description* desc);

// Builds the job from flags added by AddJobOptions (and AddWorkOptions when present), then runs
// ValidateJob. --model is required.
Result<TrainingJob> JobFromFlags(const po::variables_map& vm);

// Outputs of the time estimate that are not part of the job.
struct WorkOutputs {
  std::string timeline_svg;    // --timeline: write the step timeline here ("" = no)
  std::string regressors_dir;  // --regressors: regressor set to use ("" = the configured one)
};
WorkOutputs WorkOutputsFromFlags(const po::variables_map& vm);

inline constexpr std::string_view kDefaultGpu = "A100-80GB";

}  // namespace fmte::tools

#endif  // FMTE_TOOLS_JOB_OPTIONS_H_
