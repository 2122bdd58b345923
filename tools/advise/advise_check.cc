// PLACEHOLDER until its owner implements it: fmte-advise check.
#include <iostream>

#include "commands.h"

namespace fmte::advise {
int RunCheck(const std::vector<std::string>&) {
  std::cerr << "fmte-advise: error: 'check' is not implemented yet\n";
  return 1;
}
}  // namespace fmte::advise
