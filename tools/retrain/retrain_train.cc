// PLACEHOLDER until its owner implements it: fmte-retrain train.
#include <iostream>

#include "commands.h"

namespace fmte::retrain {
int RunTrain(const std::vector<std::string>&) {
  std::cerr << "fmte-retrain: error: 'train' is not implemented yet\n";
  return 1;
}
}  // namespace fmte::retrain
