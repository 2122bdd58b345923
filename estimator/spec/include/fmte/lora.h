// Which linears carry LoRA adapters: one rule for the memory and the time model.
// Built from job.lora_targets (module names, roles q|k|v|qkv|o|gate|up|gate_up|down|router,
// all-linear, dotted module paths or a PEFT regular expression: lora.cc says how they are read)
// or, when empty, the framework's default (PEFT: per model family; torchtune: attention and MLP;
// Megatron/NeMo: the fused qkv). Resolve once per estimate, then Matches() per linear.
// Thread-safety: plain value.
#ifndef FMTE_LORA_H_
#define FMTE_LORA_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/job.h"
#include "fmte/model.h"

namespace fmte {

struct LoraTargets {
  // Where a named linear must sit: anywhere, among the routed experts, or outside them.
  enum class Where : uint8_t { kAny, kExpert, kNotExpert };
  struct Name {
    std::string name;  // the linear's own name (q_proj): short, kept inline by std::string
    Where where = Where::kAny;
  };
  bool all_linear = false;
  std::vector<Name> names;
  uint32_t roles = 0;  // bit (1 << LinearRole)
  bool Matches(const LinearShape& l) const;
};

// Whether a --lora-targets value is one PEFT regular expression (a `target_modules` string, which
// PEFT matches with re.fullmatch against whole module paths) rather than a list of names.
bool IsLoraTargetPattern(std::string_view value);

LoraTargets ResolveLoraTargets(const ModelArch& m, const TrainingJob& j);

}  // namespace fmte

#endif  // FMTE_LORA_H_
