// PLACEHOLDER until its owner implements it: fmte-retrain read.
#include <iostream>

#include "commands.h"

namespace fmte::retrain {
int RunRead(const std::vector<std::string>&) {
  std::cerr << "fmte-retrain: error: 'read' is not implemented yet\n";
  return 1;
}
}  // namespace fmte::retrain
