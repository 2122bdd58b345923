// PLACEHOLDER until its owner implements it: fmte-advise estimate.
#include <iostream>

#include "commands.h"

namespace fmte::advise {
int RunEstimate(const std::vector<std::string>&) {
  std::cerr << "fmte-advise: error: 'estimate' is not implemented yet\n";
  return 1;
}
}  // namespace fmte::advise
