// torchtune: `tune run [torchrun flags] <recipe> --config <config> [key=value ...]`. The recipe
// gives the method and sharding (lora_finetune_single_device, full_finetune_distributed (FSDP2 full
// shard), lora_finetune_distributed, qlora via *_qlora configs); the config name gives the model
// (recipes/configs/<family>/<size>_<method>...yaml and the checkpoint each one downloads);
// overrides use the config's keys (batch_size, gradient_accumulation_steps,
// enable_activation_checkpointing, enable_activation_offloading, compile, tokenizer.max_seq_len,
// model.lora_rank, epochs, max_steps_per_epoch, dtype, optimizer_in_bwd, optimizer._component_).
#include "launcher.h"

namespace fmte::internal {
namespace {

struct TuneModel {
  std::string_view prefix;
  std::string_view hf_id;
};
// recipes/configs/<dir>/<size>: the checkpoint the config downloads (its `tune download` line).
constexpr TuneModel kTuneModels[] = {
    {"llama3_1/8b", "meta-llama/Llama-3.1-8B"},
    {"llama3_1/70b", "meta-llama/Llama-3.1-70B"},
    {"llama3_1/405b", "meta-llama/Llama-3.1-405B"},
    {"llama3_2/1b", "meta-llama/Llama-3.2-1B-Instruct"},
    {"llama3_2/3b", "meta-llama/Llama-3.2-3B-Instruct"},
    {"llama3_3/70b", "meta-llama/Llama-3.3-70B-Instruct"},
    {"llama3/8b", "meta-llama/Meta-Llama-3-8B-Instruct"},
    {"llama3/70b", "meta-llama/Meta-Llama-3-70B-Instruct"},
    {"llama2/7b", "meta-llama/Llama-2-7b-hf"},
    {"llama2/13b", "meta-llama/Llama-2-13b-hf"},
    {"llama2/70b", "meta-llama/Llama-2-70b-hf"},
    {"mistral/7b", "mistralai/Mistral-7B-v0.1"},
    {"qwen2_5/0.5b", "Qwen/Qwen2.5-0.5B-Instruct"},
    {"qwen2_5/1.5b", "Qwen/Qwen2.5-1.5B-Instruct"},
    {"qwen2_5/3b", "Qwen/Qwen2.5-3B-Instruct"},
    {"qwen2_5/7b", "Qwen/Qwen2.5-7B-Instruct"},
    {"qwen2_5/14b", "Qwen/Qwen2.5-14B-Instruct"},
    {"qwen2_5/32b", "Qwen/Qwen2.5-32B-Instruct"},
    {"qwen2_5/72b", "Qwen/Qwen2.5-72B-Instruct"},
    {"qwen3/0.6b", "Qwen/Qwen3-0.6B"},
    {"qwen3/1.7b", "Qwen/Qwen3-1.7B"},
    {"qwen3/8b", "Qwen/Qwen3-8B"},
    {"qwen3/32b", "Qwen/Qwen3-32B"},
    {"gemma/2b", "google/gemma-2b"},
    {"gemma/7b", "google/gemma-7b"},
    {"phi3/mini", "microsoft/Phi-3-mini-4k-instruct"},
};

const char* kOverrideKeys[][2] = {
    {"batch_size", "micro-batch"},
    {"gradient_accumulation_steps", "grad-accum"},
    {"tokenizer.max_seq_len", "seq-len"},
    {"model.lora_rank", "lora-r"},
    {"epochs", "epochs"},
};

}  // namespace

std::string TorchtuneModelId(std::string_view config) {
  std::string c = Lower(config);
  const size_t slash = c.find("configs/");
  if (slash != std::string::npos) c = c.substr(slash + 8);
  for (const TuneModel& m : kTuneModels) {
    if (!c.starts_with(m.prefix)) continue;
    const char after = c.size() > m.prefix.size() ? c[m.prefix.size()] : '_';
    if (after == '_' || after == '.' || after == '-') return std::string(m.hf_id);
  }
  return "";
}

void ReadTorchtune(const LaunchLine& l, Sink* sink) {
  // positionals: "run", "<recipe>", then key=value overrides.
  size_t k = 0;
  if (l.positionals.empty() || l.positionals[0] != "run") return;  // tune download/ls/cp/validate
  ++k;
  if (k >= l.positionals.size()) return;
  const std::string recipe = Lower(l.positionals[k]);
  ++k;
  sink->Set("framework", "torchtune", "tune run");
  const Flag* cfg = sink->Find(l, "config");
  const std::string config = cfg == nullptr ? "" : Lower(cfg->value);
  if (recipe.find("lora") != std::string::npos) {
    const bool q =
        recipe.find("qlora") != std::string::npos || config.find("qlora") != std::string::npos;
    sink->Set("method", q ? "qlora" : "lora", "tune run " + recipe);
    if (q) sink->Set("quant", "nf4", "tune run " + recipe);
  } else if (recipe.find("full_finetune") != std::string::npos ||
             recipe.find("full_dpo") != std::string::npos) {
    sink->Set("method", "full", "tune run " + recipe);
  } else {
    sink->Warn("tune run", "recipe '" + Shown(recipe) + "' not modelled");
  }
  // The DPO recipes (lora_dpo_single_device, lora_dpo_distributed, full_dpo_distributed): chosen
  // and rejected concatenated (recipes' concatenated_forward); full_dpo_distributed loads a
  // reference model sharded as the policy, the LoRA ones disable the adapters for it.
  if (recipe.find("_dpo") != std::string::npos) sink->Set("objective", "dpo", "tune run " + recipe);
  // Distributed recipes wrap the model in FSDP2 fully_shard; torchtune trains in bf16 end to end
  // (dtype: bf16 in every shipped config).
  if (recipe.find("distributed") != std::string::npos)
    sink->Set("sharding", "fsdp-full", "tune run " + recipe);
  sink->Set("precision", "pure-bf16", "tune run (dtype bf16)");
  if (cfg != nullptr) {
    const std::string id = TorchtuneModelId(cfg->value);
    if (!id.empty())
      sink->Set("model", id, "--config " + Shown(cfg->value));
    else
      sink->Warn("--config",
                 "config '" + Shown(cfg->value) + "' names no known model; set #FMTE model=...");
  }
  int64_t steps_per_epoch = 0;
  double epochs = 0;
  // tokenizer.max_seq_len truncates each sample and torchtune's padded_collate_sft pads a batch to
  // its longest sample: a limit, unless dataset.packed=True packs samples to exactly that length.
  bool seq_cap = false, packed = false;
  // The LoRA targets (model.lora_attn_modules, apply_lora_to_mlp, apply_lora_to_output): every
  // shipped LoRA config (torchtune bd2a0fc, recipes/configs/*/*lora*.yaml and *dora*.yaml of the
  // models above) adapts [q_proj, v_proj, output_proj] and the MLP; the output layer too in
  // llama2/13B_lora and mistral/7B_lora(_single_device) (their QLoRA configs do not).
  std::string_view lora_attn;
  bool lora_mlp = true, lora_output = false;
  std::string lora_shown;
  // The shipped config's name (<dir>/<name>, as `tune run` takes it, or a path into
  // recipes/configs/), without .yaml; a config file of the user's own names none of them.
  std::string_view name = config;
  if (const size_t at = name.rfind("configs/"); at != std::string_view::npos)
    name.remove_prefix(at + 8);
  if (name.ends_with(".yaml")) name.remove_suffix(5);
  if (name.starts_with("llama2/13b_lora") || name.starts_with("mistral/7b_lora")) {
    lora_output = true;
    lora_shown = "--config " + Shown(cfg->value);
  }
  // The DoRA configs (llama3/8B_dora, 8B_dora_single_device, 8B_qdora_single_device: use_dora
  // True): not estimated (TrainingJob::dora).
  if (name.starts_with("llama3/8b_dora") || name.starts_with("llama3/8b_qdora"))
    sink->Set("dora", "true", "--config " + Shown(cfg->value));
  for (; k < l.positionals.size(); ++k) {
    const std::string_view o = l.positionals[k];
    const size_t eq = o.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string key = Lower(o.substr(0, eq));
    const std::string_view value = o.substr(eq + 1);
    const std::string shown = "override " + Shown(key);
    for (const auto& m : kOverrideKeys)
      if (key == m[0]) sink->Set(m[1], value, shown);
    if (key == "tokenizer.max_seq_len") seq_cap = true;
    if (key == "dataset.packed") packed = Lower(value) == "true";
    if (key == "epochs") {
      auto e = ParseBoundedDouble(value, 1e-6, 1e6, shown);
      if (e.ok()) epochs = *e;
    } else if (key == "max_steps_per_epoch") {
      auto s = ParseBoundedInt(value, 1, int64_t{1} << 40, shown);
      if (s.ok()) steps_per_epoch = *s;
    } else if (key == "enable_activation_checkpointing") {
      auto b = ParseBool(value, shown);
      if (b.ok()) sink->Set("activation-checkpointing", *b ? "full" : "none", shown);
    } else if (key == "enable_activation_offloading") {
      sink->Set("activation-offload", value, shown);
    } else if (key == "compile") {
      sink->Set("compile", value, shown);
    } else if (key == "optimizer_in_bwd") {
      sink->Set("optimizer-in-backward", value, shown);
    } else if (key == "dtype") {
      const std::string v = Lower(value);
      sink->Set("precision", v == "fp32" ? "fp32" : "pure-bf16", shown);
    } else if (key == "optimizer._component_") {
      sink->Set("optimizer",
                Lower(value).find("8bit") != std::string::npos ? "adamw-8bit" : "adamw", shown);
    } else if (key == "model.use_dora") {
      sink->Set("dora", value, shown);
    } else if (key == "model.lora_attn_modules") {
      lora_attn = value;
      lora_shown = shown;
    } else if (key == "model.apply_lora_to_mlp" || key == "model.apply_lora_to_output") {
      auto b = ParseBool(value, shown);
      if (!b.ok()) {
        sink->Warn(shown, "expected True or False; the config's own assumed");
        continue;
      }
      (key == "model.apply_lora_to_mlp" ? lora_mlp : lora_output) = *b;
      lora_shown = shown;
    }
  }
  if (!lora_shown.empty()) {
    // The adapted linears: the attention's named ones, the MLP's (w1, w2, w3) and the output
    // layer, with the config's values (above) where not overridden.
    std::string list = lora_attn.empty() ? "q_proj,v_proj,output_proj" : std::string(lora_attn);
    if (lora_mlp) list += ",gate,up,down";
    if (lora_output) list += ",output";
    sink->Set("lora-targets", list, lora_shown);
  }
  if (seq_cap && !packed) sink->Set("seq-len-cap", "true", "override tokenizer.max_seq_len");
  if (steps_per_epoch > 0)
    sink->Set(
        "steps",
        std::to_string(steps_per_epoch * static_cast<int64_t>(epochs > 0 ? epochs + 0.999 : 1)),
        "override max_steps_per_epoch");
}

}  // namespace fmte::internal
