#include "cli.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace fmte::cli {

namespace {
thread_local std::ostream* t_out = nullptr;
thread_local std::ostream* t_err = nullptr;
}  // namespace

std::ostream& Out() { return t_out != nullptr ? *t_out : std::cout; }
std::ostream& Err() { return t_err != nullptr ? *t_err : std::cerr; }

ScopedOutput::ScopedOutput(std::ostream& out, std::ostream& err)
    : saved_out_(t_out), saved_err_(t_err) {
  t_out = &out;
  t_err = &err;
}
ScopedOutput::~ScopedOutput() {
  t_out = saved_out_;
  t_err = saved_err_;
}

void DrawProgress(std::string_view name, uint64_t done, uint64_t total, std::string_view unit) {
  static const bool tty = isatty(STDERR_FILENO) != 0;
  if (!tty || total == 0) return;
  constexpr int kWidth = 30;
  const double frac = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
  const int fill = static_cast<int>(frac * kWidth);
  std::fprintf(stderr, "\r%.*s [%s%s] %3d%% %llu/%llu %.*s", static_cast<int>(name.size()),
               name.data(), std::string(fill, '#').c_str(), std::string(kWidth - fill, ' ').c_str(),
               static_cast<int>(frac * 100), static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(total), static_cast<int>(unit.size()), unit.data());
  if (done >= total) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

int ExitCodeFor(const Status& status) {
  if (status.ok()) return kExitOk;
  switch (status.code()) {
    case Status::Code::kInvalidArgument:
    case Status::Code::kNotFound:
      return kExitUsage;
    default:
      return kExitFailure;
  }
}

int ReportError(std::string_view tool, const Status& status) {
  Err() << tool << ": error: " << status.message() << "\n";
  return ExitCodeFor(status);
}

namespace {
void PrintUsage(std::ostream& os, std::string_view tool, std::string_view description,
                const std::vector<Command>& commands) {
  os << "usage: " << tool << " <command> [options]   (" << tool << " <command> --help)\n\n"
     << description << "\n\ncommands:\n";
  for (const auto& c : commands) {
    os << "  " << c.name << std::string(c.name.size() < 12 ? 12 - c.name.size() : 1, ' ')
       << c.summary << "\n";
  }
}
}  // namespace

int RunCommandTable(std::string_view tool, std::string_view description,
                    const std::vector<Command>& commands, int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(Err(), tool, description, commands);
    return kExitUsage;
  }
  const std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    PrintUsage(Out(), tool, description, commands);
    return kExitOk;
  }
  if (name == "--version") {
    Out() << tool << " " << FMTE_TOOLS_VERSION << "\n";
    return kExitOk;
  }
  for (const auto& c : commands) {
    if (c.name == name) {
      std::vector<std::string> args(argv + 1, argv + argc);
      try {
        return c.run(args);
      } catch (const std::exception& e) {
        Err() << tool << ": error: " << e.what() << "\n";
        return kExitFailure;
      }
    }
  }
  std::string msg = "unknown command '" + std::string(name) + "'";
  NearestName nearest(name, 3);
  for (const auto& c : commands) nearest.Offer(c.name);
  if (!nearest.best().empty()) msg += ", did you mean '" + nearest.best() + "'?";
  Err() << tool << ": error: " << msg << " (see " << tool << " --help)\n";
  return kExitUsage;
}

}  // namespace fmte::cli
