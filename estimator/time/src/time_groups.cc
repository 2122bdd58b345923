// Measured / predicted step time of groups of jobs from runs the time model was not fitted on:
// scripts/eval-time.py --calibrate over the step times of tests/data/memory-measured (2026-11-27:
// 103 runs from 4 sources; litgpt on A100-40GB, 9; the HF Trainer on one H100, 81, measured by
// this project, and torchtitan on 8 H100, 3 (pytorch/ao); torchtitan on B200, 5, and on MI300X, 4,
// with DeepSpeed on MI300X, 1).
//
// Since the kernel-level profiles of tests/data/time-profiled (time_parts.h: eager memory-bound
// traffic, FlashAttention's and masked SDPA's rates on Hopper, rank-r adapter products, the
// optimizer step with gradient clipping) the HF Trainer's median on Hopper is 1.121 (it was 1.92)
// and torchtitan's 1.620 (compiled runs, whose fused traffic keeps the A100 vTrain constant); they
// no longer agree within 10%, so no group's median enters the prediction: every group's factors
// only widen the time limit's bound. Left out one source at a time, the bound covers 89 of the 103
// runs (was 54 of 90): the HF Trainer's 78 of 81 under torchtitan's Hopper factor, litgpt 9 of 9,
// DeepSpeed 1 of 1, torchtitan's H100 1 of 3, and none of torchtitan's 9 compiled B200 and MI300X
// runs (fmte is 2.7-2.9x too fast there: the compiled path and those GPUs are not yet modelled
// from measurements).
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
    {"ampere", false, {0.866, 1.317, 1.0}},     // litgpt, 9 runs, 1 source
    {"hopper", false, {1.128, 1.783, 1.0}},     // HF Trainer 81 + torchtitan 3 (disagree)
    {"blackwell", false, {2.889, 3.353, 1.0}},  // torchtitan, 5 runs, 1 source
    {"cdna3", false, {2.734, 3.102, 1.0}},      // torchtitan 4 + DeepSpeed 1
};
constexpr MeasuredGroup kWidest = {2.889, 3.353, 1.0};

}  // namespace

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

const MeasuredGroup& MeasuredGroupOf(std::string_view gpu, Framework framework) {
  const std::string_view gen = Generation(gpu);
  const bool megatron = framework == Framework::kMegatron;
  for (const Row& r : kRows)
    if (gen == r.generation && r.megatron == megatron) return r.group;
  return kWidest;
}

}  // namespace fmte::time_groups
