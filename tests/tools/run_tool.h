// Runs a real tool binary for end-to-end tests (ninja style): arguments are passed without a
// shell's interpretation (single-quoted), stdout and stderr are captured separately.
#ifndef FMTE_TESTS_TOOLS_RUN_TOOL_H_
#define FMTE_TESTS_TOOLS_RUN_TOOL_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fmte::testing {

struct ToolRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string AdviseBinary() { return FMTE_BINARY_DIR "/tools/fmte-advise"; }

// Runs `binary args...` with stdin from /dev/null.
inline ToolRun RunTool(const std::string& binary, const std::vector<std::string>& args) {
  char err_path[] = "/tmp/fmte_tool_stderr_XXXXXX";
  const int fd = mkstemp(err_path);
  if (fd >= 0) close(fd);
  std::string cmd = ShellQuote(binary);
  for (const auto& a : args) cmd += " " + ShellQuote(a);
  cmd += " </dev/null 2>" + ShellQuote(err_path);
  ToolRun run;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) run.out.append(buf, n);
    const int status = pclose(p);
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::ifstream in(err_path);
  std::ostringstream ss;
  ss << in.rdbuf();
  run.err = ss.str();
  std::remove(err_path);
  return run;
}

inline ToolRun RunAdvise(const std::vector<std::string>& args) {
  return RunTool(AdviseBinary(), args);
}

}  // namespace fmte::testing

#endif  // FMTE_TESTS_TOOLS_RUN_TOOL_H_
