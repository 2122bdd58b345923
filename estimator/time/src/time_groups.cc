// Measured / predicted step time of groups of jobs from runs the time model was not fitted on:
// scripts/eval-time.py --calibrate over the step times of tests/data/memory-measured (2026-11-27:
// 82 runs from 4 sources; litgpt on A100-40GB, 9; the HF Trainer on one H100, 60, measured by this
// project, and torchtitan on 8 H100, 3 (pytorch/ao); torchtitan on B200, 5, and on MI300X, 4, with
// DeepSpeed on MI300X, 1). fmte's step time was short on every one of them, more so on newer GPUs:
// the Hopper and Blackwell constants are operator samples times the A100 framework ratio
// (docs/time.md "Measured step times"). Megatron on A100 is the vTrain fit itself, whose residuals
// TimeModel::UpperFactor holds.
//
// (Those 82 missed one HF Trainer run that eval-time.py's de-duplication dropped; with it the
// Hopper median is 1.897, the rest unchanged; docs/time.md.)
//
// Only Hopper with the PyTorch frameworks has two sources: the HF Trainer's median 1.92 and
// torchtitan's 1.80 predict each other within 7%, so that group's median (1.901) enters the
// prediction; elsewhere one source (or one run) cannot check its median and the prediction keeps
// the model's own, while the time limit's bound uses the group's factors all the same. Left out
// one source at a time, the bound covered 48 of the 82 runs (torchtitan's H100 factor covers 32 of
// the HF Trainer's 60; an unseen generation's widest covers 3 of B200's 5): not yet the 90% of
// issue 13.
#include "time_groups.h"

#include <initializer_list>
#include <string>

#include "fmte/text.h"

namespace fmte::time_groups {
namespace {

struct Row {
  const char* generation;
  bool megatron;
  MeasuredGroup group;
};
constexpr Row kRows[] = {
    {"ampere", true, {1.0, 1.0, 1.0}},          // the vTrain fit
    {"ampere", false, {1.196, 1.822, 1.0}},     // litgpt, 9 runs, 1 source
    {"hopper", false, {1.901, 3.071, 1.901}},   // HF Trainer 60 + torchtitan 3
    {"blackwell", false, {2.911, 3.380, 1.0}},  // torchtitan, 5 runs, 1 source
    {"cdna3", false, {2.753, 3.124, 1.0}},      // torchtitan 4 + DeepSpeed 1
};
constexpr MeasuredGroup kWidest = {2.911, 3.380, 1.0};

// The GPU generation of a catalog name or alias (eval-time.py generation()).
std::string_view Generation(std::string_view gpu) {
  const std::string g = Lower(gpu);
  const auto has = [&](std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (g.find(n) != std::string::npos) return true;
    return false;
  };
  if (has({"gb200", "gb300", "b200", "b300"})) return "blackwell";
  if (has({"gh200", "h100", "h200", "h800"})) return "hopper";
  if (has({"a100", "a800"})) return "ampere";
  if (has({"mi300", "mi325"})) return "cdna3";
  return "other";
}

}  // namespace

const MeasuredGroup& MeasuredGroupOf(std::string_view gpu, Framework framework) {
  const std::string_view gen = Generation(gpu);
  const bool megatron = framework == Framework::kMegatron;
  for (const Row& r : kRows)
    if (gen == r.generation && r.megatron == megatron) return r.group;
  return kWidest;
}

}  // namespace fmte::time_groups
