// PLACEHOLDER until its owner implements it: fmte-advise zero.
#include <iostream>

#include "commands.h"

namespace fmte::advise {
int RunZero(const std::vector<std::string>&) {
  std::cerr << "fmte-advise: error: 'zero' is not implemented yet\n";
  return 1;
}
}  // namespace fmte::advise
