// PLACEHOLDER until its owner implements it: fmte-advise models.
#include <iostream>

#include "commands.h"

namespace fmte::advise {
int RunModels(const std::vector<std::string>&) {
  std::cerr << "fmte-advise: error: 'models' is not implemented yet\n";
  return 1;
}
}  // namespace fmte::advise
