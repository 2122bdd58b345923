// Which linears carry LoRA adapters: one rule for the memory and the time model.
// Built from job.lora_targets (module names, roles q|k|v|qkv|o|gate|up|gate_up|down|router, or
// all-linear) or, when empty, the framework's default (PEFT: per model family; torchtune: attention
// and MLP; Megatron/NeMo: the fused qkv). Resolve once per estimate, then Matches() per linear.
// Thread-safety: plain value; `names` views the job's strings or static literals (outlive it).
#ifndef FMTE_LORA_H_
#define FMTE_LORA_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "fmte/job.h"
#include "fmte/model.h"

namespace fmte {

struct LoraTargets {
  bool all_linear = false;
  std::vector<std::string_view> names;  // views into the job's strings or static literals
  uint32_t roles = 0;                   // bit (1 << LinearRole)
  bool Matches(const LinearShape& l) const;
};

LoraTargets ResolveLoraTargets(const ModelArch& m, const TrainingJob& j);

}  // namespace fmte

#endif  // FMTE_LORA_H_
