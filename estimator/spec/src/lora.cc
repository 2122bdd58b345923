// LoRA targets: module names, roles, all-linear, or the framework's default (fmte/lora.h).
#include "fmte/lora.h"

#include <string>

namespace fmte {
namespace {

constexpr uint32_t Bit(LinearRole r) { return 1u << static_cast<uint32_t>(r); }

// Role names users may give instead of module names.
uint32_t RoleBits(std::string_view name) {
  if (name == "q") return Bit(LinearRole::kQ) | Bit(LinearRole::kQkv);
  if (name == "k") return Bit(LinearRole::kK) | Bit(LinearRole::kQkv);
  if (name == "v") return Bit(LinearRole::kV) | Bit(LinearRole::kQkv);
  if (name == "qkv")
    return Bit(LinearRole::kQ) | Bit(LinearRole::kK) | Bit(LinearRole::kV) | Bit(LinearRole::kQkv);
  if (name == "o") return Bit(LinearRole::kO);
  if (name == "gate") return Bit(LinearRole::kGate) | Bit(LinearRole::kGateUp);
  if (name == "up") return Bit(LinearRole::kUp) | Bit(LinearRole::kGateUp);
  if (name == "gate_up")
    return Bit(LinearRole::kGate) | Bit(LinearRole::kUp) | Bit(LinearRole::kGateUp);
  if (name == "down") return Bit(LinearRole::kDown);
  if (name == "router") return Bit(LinearRole::kRouter);
  return 0;
}

bool HasModule(const ModelArch& m, std::string_view name) {
  for (const BlockSpec& b : m.block_kinds)
    for (const LinearShape& l : b.linears)
      if (l.name == name) return true;
  return false;
}

}  // namespace

bool LoraTargets::Matches(const LinearShape& l) const {
  if (all_linear) return true;
  if (roles & Bit(l.role)) return true;
  for (std::string_view n : names)
    if (n == l.name) return true;
  return false;
}

LoraTargets ResolveLoraTargets(const ModelArch& m, const TrainingJob& j) {
  LoraTargets t;
  if (!j.lora_targets.empty()) {
    // Several targets are usually module names: one allocation for all (a single one, often
    // all-linear or a role, may need none).
    if (j.lora_targets.size() > 1) t.names.reserve(j.lora_targets.size());
    for (const std::string& s : j.lora_targets) {
      if (s == "all-linear") {
        t.all_linear = true;
      } else if (HasModule(m, s)) {
        t.names.push_back(s);  // a module name wins over a role of the same spelling
      } else {
        t.roles |= RoleBits(s);
      }
    }
    return t;
  }
  const std::string& mt = m.model_type;
  switch (j.framework) {
    case Framework::kTorchtune:
      // torchtune's llama3_1/8B_lora.yaml: lora_attn_modules [q_proj, v_proj, output_proj],
      // apply_lora_to_mlp: True.
      t.roles = Bit(LinearRole::kQ) | Bit(LinearRole::kV) | Bit(LinearRole::kQkv) |
                Bit(LinearRole::kO) | Bit(LinearRole::kGate) | Bit(LinearRole::kUp) |
                Bit(LinearRole::kGateUp) | Bit(LinearRole::kDown);
      return t;
    case Framework::kMegatron:
      // NeMo's LoRA default target: the fused attention_qkv (linear_qkv).
      t.roles =
          Bit(LinearRole::kQ) | Bit(LinearRole::kK) | Bit(LinearRole::kV) | Bit(LinearRole::kQkv);
      return t;
    default:
      break;
  }
  // PEFT's TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING (peft/utils/constants.py):
  // llama-style families q_proj,v_proj; gpt2 c_attn; gpt_neox/falcon query_key_value;
  // phi q_proj,v_proj,fc1,fc2. Families it lacks fall back to the q/v (or fused qkv) roles.
  if (mt == "phi") {
    t.names = {"q_proj", "v_proj", "fc1", "fc2"};
  } else {
    t.roles = Bit(LinearRole::kQ) | Bit(LinearRole::kV) | Bit(LinearRole::kQkv);
  }
  return t;
}

}  // namespace fmte
