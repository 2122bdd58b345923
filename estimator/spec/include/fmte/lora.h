// Which linears carry LoRA adapters: one rule for the memory and the time model.
// Built from job.lora_targets (module names, roles q|k|v|qkv|o|gate|up|gate_up|down|router,
// the output head (lm_head), all-linear, dotted module paths or a PEFT regular expression: lora.cc
// says how they are read)
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
  // The output head (lm_head) carries an adapter too: PEFT target_modules naming lm_head, litgpt
  // lora_head, torchtune apply_lora_to_output. Not a block linear, so Matches() never sees it;
  // PEFT's all-linear leaves it out (peft/tuners/tuners_utils.py excludes the output layer). The
  // memory model counts it (memory_params.cc, memory_logits.cc); the time model leaves its
  // 6 r (h + vocab) FLOPs per token out (Gemma-2B at r 8: under 0.1% of the step's).
  bool head = false;
  // PEFT on transformers 5 converts the targets of a model whose per-expert linears transformers
  // stacks (ModelArch::transformers_stacks_experts, TrainingJob::PeftLoraOnTransformers): the
  // experts' gate and up adapted fused at rank 2r (LoraBRank), the other MLPs' projections of
  // the same names not at all (Matches).
  bool peft_converts_experts = false;
  bool Matches(const LinearShape& l) const;
};

// The output head's module names: transformers' and litgpt's lm_head, torchtune's output
// (TransformerDecoder.output; its attention's is output_proj), Megatron's output_layer, GPT-NeoX's
// embed_out.
bool IsHeadModuleName(std::string_view name);
// The token embeddings' module names: embed_tokens (Llama-style), wte (GPT-2, litgpt),
// tok_embeddings (torchtune), word_embeddings (Megatron, BLOOM), embed_in (GPT-NeoX), embedding.
bool IsEmbeddingModuleName(std::string_view name);

// PEFT modules_to_save into job->save_embedding / save_head: "embed_tokens,lm_head",
// "[embed_tokens, lm_head]", module paths (model.embed_tokens, by their last name), or none. An
// error names `shown` and what is expected.
Status ParseModulesToSave(std::string_view value, std::string_view shown, TrainingJob* job);

// Whether a --lora-targets value is one PEFT regular expression (a `target_modules` string, which
// PEFT matches with re.fullmatch against whole module paths) rather than a list of names.
bool IsLoraTargetPattern(std::string_view value);

LoraTargets ResolveLoraTargets(const ModelArch& m, const TrainingJob& j);

// The rank of the adapter B (out x rank) of the linear `l` of `block`, which `t` matches: j.lora_r,
// or twice it for the routed experts' gate and up projections under PEFT with transformers 5
// (LoraTargets::peft_converts_experts). transformers 5 stacks a mixture of experts' experts, gate
// and up fused into one gate_up_proj (E x 2f x h), and PEFT's conversion of a v4 config
// (peft/utils/transformers_weight_conversion.py _convert_peft_config_moe: rank_pattern r x 2 when
// both gate_proj and up_proj were targeted) adapts it at rank 2r: its A (2r x h) holds as many
// elements as the two r x h, its B (2f x 2r) twice the two f x r. A stays at j.lora_r.
int64_t LoraBRank(const BlockSpec& block, const LinearShape& l, const TrainingJob& j,
                  const LoraTargets& t);

// Whether bitsandbytes leaves `m`'s routed experts in 16 bits in the QLoRA job `j`: a job on
// transformers (TrainingJob::PeftLoraOnTransformers) where transformers stacks them
// (ModelArch::transformers_stacks_experts), unless j.quantize_experts says its stack quantises
// them (bitsandbytes issue #1849: "the experts stay full precision" under transformers 5;
// memory_params.cc Quantizable). MayKeepExpertsUnquantized: such a job whatever its stack, which
// its script does not say (memory.bound_bytes and low_bytes cover both readings).
bool MayKeepExpertsUnquantized(const ModelArch& m, const TrainingJob& j);
bool KeepsExpertsUnquantized(const ModelArch& m, const TrainingJob& j);

}  // namespace fmte

#endif  // FMTE_LORA_H_
