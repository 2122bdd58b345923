#include "cli.h"

#include <algorithm>
#include <iostream>

namespace fmte::cli {

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
  std::cerr << tool << ": error: " << status.message() << "\n";
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
    PrintUsage(std::cerr, tool, description, commands);
    return kExitUsage;
  }
  const std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    PrintUsage(std::cout, tool, description, commands);
    return kExitOk;
  }
  if (name == "--version") {
    std::cout << tool << " " << FMTE_TOOLS_VERSION << "\n";
    return kExitOk;
  }
  for (const auto& c : commands) {
    if (c.name == name) {
      std::vector<std::string> args(argv + 1, argv + argc);
      try {
        return c.run(args);
      } catch (const std::exception& e) {
        std::cerr << tool << ": error: " << e.what() << "\n";
        return kExitFailure;
      }
    }
  }
  std::string msg = "unknown command '" + std::string(name) + "'";
  NearestName nearest(name, 3);
  for (const auto& c : commands) nearest.Offer(c.name);
  if (!nearest.best().empty()) msg += ", did you mean '" + nearest.best() + "'?";
  std::cerr << tool << ": error: " << msg << " (see " << tool << " --help)\n";
  return kExitUsage;
}

}  // namespace fmte::cli
