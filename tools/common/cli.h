// Shared plumbing of the fmte command-line tools (ninja style): subcommands as a table, errors as
// "<tool>: error: ..." on stderr, results only on stdout, exit codes by kind of failure.
#ifndef FMTE_TOOLS_CLI_H_
#define FMTE_TOOLS_CLI_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/status.h"
#include "fmte/text.h"

namespace fmte::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,  // the request was understood but could not be done (I/O, unsupported, ...)
  kExitUsage = 2,    // the request was wrong (unknown flag, bad value, unknown model, bad layout)
};

// argv[0] is the subcommand's name ("estimate"); the rest are its flags.
using CommandFn = int (*)(const std::vector<std::string>& args);

struct Command {
  std::string_view name;
  std::string_view summary;
  CommandFn run;
};

// Dispatches argv to the command table; handles --help/-h/--version and unknown commands
// ("did you mean ...?").
int RunCommandTable(std::string_view tool, std::string_view description,
                    const std::vector<Command>& commands, int argc, char** argv);

// Where commands write their results and their errors: std::cout and std::cerr, or, on the
// calling thread while a ScopedOutput lives, its streams (fmte-advise serve runs the commands for
// its API this way, so the API answers exactly what --json prints).
std::ostream& Out();
std::ostream& Err();
class ScopedOutput {
 public:
  ScopedOutput(std::ostream& out, std::ostream& err);
  ~ScopedOutput();
  ScopedOutput(const ScopedOutput&) = delete;
  ScopedOutput& operator=(const ScopedOutput&) = delete;

 private:
  std::ostream* saved_out_;
  std::ostream* saved_err_;
};

// A one-line progress bar on stderr ("NAME [#####     ]  42% 1234/2900 UNIT"), redrawn in place
// and ended with a newline when done >= total; drawn only when stderr is a terminal (never in
// logs, pipes or the web API).
void DrawProgress(std::string_view name, uint64_t done, uint64_t total, std::string_view unit);

// Prints "<tool>: error: <message>" to Err() and returns the exit code for `status`.
int ReportError(std::string_view tool, const Status& status);
// Usage errors (kInvalidArgument, kNotFound) -> kExitUsage; everything else -> kExitFailure.
int ExitCodeFor(const Status& status);

}  // namespace fmte::cli

#endif  // FMTE_TOOLS_CLI_H_
