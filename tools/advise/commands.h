// The subcommands of fmte-advise, one file each (advise_<name>.cc).
#ifndef FMTE_TOOLS_ADVISE_COMMANDS_H_
#define FMTE_TOOLS_ADVISE_COMMANDS_H_

#include <string>
#include <vector>

namespace fmte::advise {

int RunEstimate(const std::vector<std::string>& args);  // memory (+ time) of one job
int RunZero(const std::vector<std::string>& args);      // DeepSpeed's cold ZeRO estimator table
int RunTokens(
    const std::vector<std::string>& args);  // dataset tokens, padding/packing, TE2 contracts
int RunCheck(
    const std::vector<std::string>& args);  // offline admission decision for a batch script
int RunReplay(
    const std::vector<std::string>& args);  // shadow mode: enforce's decisions on past jobs
int RunRecommend(const std::vector<std::string>& args);  // layout search ranked by predicted time
int RunFit(
    const std::vector<std::string>& args);  // largest micro-batch/sequence, fewest GPUs, models
int RunModels(const std::vector<std::string>& args);  // list the model and GPU catalogs
int RunServe(const std::vector<std::string>& args);   // the web calculator and its JSON API
int RunDoctor(const std::vector<std::string>& args);  // is a site's Slurm + fmte setup consistent

}  // namespace fmte::advise

#endif  // FMTE_TOOLS_ADVISE_COMMANDS_H_
