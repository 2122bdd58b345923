// PLACEHOLDER until its owner implements it: fmte-advise tokens.
#include <iostream>

#include "commands.h"

namespace fmte::advise {
int RunTokens(const std::vector<std::string>&) {
  std::cerr << "fmte-advise: error: 'tokens' is not implemented yet\n";
  return 1;
}
}  // namespace fmte::advise
