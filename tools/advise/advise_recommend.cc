// PLACEHOLDER until its owner implements it: fmte-advise recommend.
#include <iostream>

#include "commands.h"

namespace fmte::advise {
int RunRecommend(const std::vector<std::string>&) {
  std::cerr << "fmte-advise: error: 'recommend' is not implemented yet\n";
  return 1;
}
}  // namespace fmte::advise
