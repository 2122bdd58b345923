// The subcommands of fmte-retrain, one file each (retrain_<name>.cc).
#ifndef FMTE_TOOLS_RETRAIN_COMMANDS_H_
#define FMTE_TOOLS_RETRAIN_COMMANDS_H_

#include <string>
#include <vector>

namespace fmte::retrain {

int RunRead(const std::vector<std::string>& args);    // summarise what a sacct export holds
int RunTrain(const std::vector<std::string>& args);   // train, validate and install regressors
int RunVtrain(const std::vector<std::string>& args);  // step-time model from measured iterations

}  // namespace fmte::retrain

#endif  // FMTE_TOOLS_RETRAIN_COMMANDS_H_
