// The key table: SPANK options, #FMTE keys and the launcher's extra keys, each with one setter that
// validates and applies a value to a TrainingJob. ValidateOption (the SPANK plugin's client-side
// check) and ParseJobRequest (the controller) go through the same setters, so a value the client
// accepts is one the controller understands.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "fmte/lora.h"
#include "fmte/text.h"
#include "request_internal.h"

namespace fmte {
namespace internal {

namespace {

constexpr int64_t kMaxBatch = 1 << 20;
constexpr int64_t kMaxSeq = int64_t{1} << 24;
constexpr int64_t kMaxParallel = 1 << 16;
constexpr int64_t kMaxWork = int64_t{1} << 52;  // tokens/samples/steps: far beyond any real job

using Setter = Status (*)(std::string_view v, std::string_view shown, TrainingJob* job);

template <typename T, typename F>
Status SetEnum(std::string_view v, std::string_view shown, T* out, F parse) {
  auto r = parse(Trim(v), shown);
  if (!r.ok()) return r.status();
  *out = *r;
  return Status::Ok();
}

Status SetInt(std::string_view v, std::string_view shown, int64_t* out, int64_t min, int64_t max,
              bool suffixes = false) {
  auto r = ParseBoundedInt(v, min, max, shown, suffixes);
  if (!r.ok()) return r.status();
  *out = *r;
  return Status::Ok();
}

Status SetBool(std::string_view v, std::string_view shown, bool* out) {
  auto r = ParseBool(v, shown);
  if (!r.ok()) return r.status();
  *out = *r;
  return Status::Ok();
}

Status SetEvery(std::string_view v, std::string_view shown, Every* out) {
  auto r = ParseEvery(v, shown);
  if (!r.ok()) return r.status();
  *out = *r;
  return Status::Ok();
}

Status SetModel(std::string_view v, std::string_view shown, TrainingJob* job) {
  const std::string_view t = Trim(v);
  if (t.empty() || t.size() > 512)
    return Expected(shown, "a model id or config.json path (1-512 bytes)", v);
  for (char c : t) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x21 || u == 0x7f)
      return Expected(shown, "a model id or path without spaces or control bytes", v);
  }
  job->model = std::string(t);
  return Status::Ok();
}

Status SetLoraTargets(std::string_view v, std::string_view shown, TrainingJob* job) {
  std::vector<std::string> out;
  std::string_view rest = Trim(v);
  // A PEFT target_modules string: one regular expression over module paths (fmte/lora.h).
  if (rest.size() >= 2 && (rest.front() == '\'' || rest.front() == '"') &&
      rest.back() == rest.front())
    rest = Trim(rest.substr(1, rest.size() - 2));
  if (IsLoraTargetPattern(rest)) {
    if (rest.size() > 256)
      return Expected(shown, "a PEFT target_modules pattern of at most 256 characters", v);
    for (char c : rest)
      if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e)
        return Expected(shown, "a PEFT target_modules pattern without spaces or control bytes", v);
    job->lora_targets = {std::string(rest)};
    return Status::Ok();
  }
  // Accept "q_proj,v_proj", "q_proj v_proj", "[q_proj, v_proj]" and 'all-linear'.
  while (!rest.empty() && out.size() < 64) {
    const size_t cut = rest.find_first_of(", []'\"");
    std::string_view item = rest.substr(0, cut);
    if (!item.empty()) {
      for (char c : item)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
          return Expected(shown, "module names such as q_proj,v_proj or all-linear", v);
      out.emplace_back(item == "all_linear" ? "all-linear" : std::string(item));
    }
    if (cut == std::string_view::npos) break;
    rest.remove_prefix(cut + 1);
  }
  if (out.empty()) return Expected(shown, "module names such as q_proj,v_proj or all-linear", v);
  job->lora_targets = std::move(out);
  return Status::Ok();
}

struct KeySpec {
  OptionSpec spec;
  bool spank;  // one of the 17 contract options
  Setter set;
};

#define FMTE_SETTER(body) \
  [](std::string_view v, std::string_view s, TrainingJob* j) -> Status { body }

const std::array<KeySpec, 72> kKeys{{
    {{"model", "ID|PATH", "model: Hugging Face id, local model directory or config.json"},
     true,
     FMTE_SETTER(return SetModel(v, s, j);)},
    {{"method", "full|lora|qlora|prompt-tuning|prefix-tuning", "training method"},
     true,
     FMTE_SETTER(return SetEnum(v, s, &j->method, ParseMethod);)},
    {{"seq-len", "N", "sequence length in tokens"},
     true,
     FMTE_SETTER(return SetInt(v, s, &j->seq_len, 1, kMaxSeq);)},
    {{"micro-batch", "N", "sequences per GPU per step (micro-batch)"},
     true,
     FMTE_SETTER(return SetInt(v, s, &j->micro_batch, 1, kMaxBatch);)},
    {{"grad-accum", "N", "gradient accumulation steps"},
     true,
     FMTE_SETTER(return SetInt(v, s, &j->grad_accum, 1, kMaxBatch);)},
    {{"eval-batch", "N", "sequences per GPU in an evaluation batch (0: no evaluation)"},
     false,
     FMTE_SETTER(return SetInt(v, s, &j->eval_batch, 0, kMaxBatch);)},
    {{"precision", "fp32|amp-bf16|amp-fp16|mixed-bf16|mixed-fp16|pure-bf16", "numeric precision"},
     true,
     FMTE_SETTER(return SetEnum(v, s, &j->precision, ParsePrecision);)},
    {{"sharding", "none|ddp|zero1|zero2|zero3|fsdp-full|fsdp-grad-op|fsdp-hybrid|fsdp-no-shard",
      "data-parallel sharding"},
     true,
     FMTE_SETTER(return SetEnum(v, s, &j->sharding, ParseSharding);)},
    {{"tp", "N", "tensor-parallel degree"},
     true,
     FMTE_SETTER(return SetInt(v, s, &j->tp, 1, kMaxParallel);)},
    {{"pp", "N", "pipeline-parallel degree"},
     true,
     FMTE_SETTER(return SetInt(v, s, &j->pp, 1, kMaxParallel);)},
    {{"activation-checkpointing", "none|selective|full", "activation checkpointing"},
     true,
     FMTE_SETTER(return SetEnum(v, s, &j->activation_checkpointing, ParseCheckpointing);)},
    {{"lora-r", "N", "LoRA rank"}, true, FMTE_SETTER(return SetInt(v, s, &j->lora_r, 1, 1 << 16);)},
    {{"quant", "none|nf4|fp4|int8", "quantisation of the frozen base weights (qlora)"},
     true,
     FMTE_SETTER(return SetEnum(v, s, &j->quant, ParseQuant);)},
    {{"tokens", "N", "tokens to train on (K/M/B/T suffixes)"},
     true,
     FMTE_SETTER(return SetInt(v, s, &j->tokens, 1, kMaxWork, true);)},
    {{"samples", "N", "training samples per epoch (K/M/B/T suffixes)"},
     true,
     FMTE_SETTER(return SetInt(v, s, &j->samples, 1, kMaxWork, true);)},
    {{"epochs", "E", "epochs"}, true, FMTE_SETTER({
       auto r = ParseBoundedDouble(v, 1e-6, 1e6, s);
       if (!r.ok()) return r.status();
       j->epochs = *r;
       return Status::Ok();
     })},
    {{"steps", "N", "optimizer steps (K/M suffixes)"},
     true,
     FMTE_SETTER(return SetInt(v, s, &j->steps, 1, kMaxWork, true);)},
    {{"save-every", "N|N/epoch|never", "optimizer steps between checkpoint saves"},
     false,
     FMTE_SETTER(return SetEvery(v, s, &j->save_every);)},
    {{"eval-every", "N|N/epoch|never", "optimizer steps between evaluation passes"},
     false,
     FMTE_SETTER(return SetEvery(v, s, &j->eval_every);)},
    {{"eval-samples", "N", "sequences of one evaluation pass (below 1: that share of samples)"},
     false,
     FMTE_SETTER({
       auto r = ParseBoundedDouble(v, 0, static_cast<double>(kMaxWork), s);
       if (!r.ok()) return r.status();
       if (*r >= 1 && *r != std::floor(*r))
         return Expected(s, "a count of sequences or a share between 0 and 1", v);
       j->eval_samples = *r;
       return Status::Ok();
     })},
    {{"framework", "hf|torchtune|megatron|deepspeed|fsdp|litgpt", "training framework"},
     true,
     FMTE_SETTER(return SetEnum(v, s, &j->framework, ParseFramework);)},
    // Extra keys: #FMTE lines and launcher detection (not SPANK options).
    {{"optimizer", "adamw|adamw-8bit|sgd|adafactor", ""},
     false,
     FMTE_SETTER(return SetEnum(v, s, &j->optimizer, ParseOptimizer);)},
    {{"vpp", "N", ""}, false, FMTE_SETTER(return SetInt(v, s, &j->vpp, 1, 1024);)},
    {{"ep", "N", ""}, false, FMTE_SETTER(return SetInt(v, s, &j->ep, 1, 1024);)},
    {{"etp", "N", ""}, false, FMTE_SETTER(return SetInt(v, s, &j->etp, 1, 1024);)},
    {{"moe-dispatcher", "auto|alltoall|allgather|flex", ""},
     false,
     FMTE_SETTER(return SetEnum(v, s, &j->moe_dispatcher, ParseMoeDispatcher);)},
    {{"cp", "N", ""}, false, FMTE_SETTER(return SetInt(v, s, &j->cp, 1, 1024);)},
    {{"fp8", "none|tensorwise|rowwise|delayed|mxfp8", ""},
     false,
     FMTE_SETTER(return SetEnum(v, s, &j->fp8, ParseFp8);)},
    {{"sp", "true|false", ""}, false, FMTE_SETTER(return SetBool(v, s, &j->sequence_parallel);)},
    {{"objective", "sft|dpo|orpo|simpo|cpo|kto|grpo|rloo|ppo|gkd",
      "what the job optimises: pairwise objectives run two sequences per sample, dpo and kto a "
      "reference model; grpo, rloo, ppo and gkd generate completions (not modelled: no wall "
      "time)"},
     false,
     FMTE_SETTER(return SetEnum(v, s, &j->objective, ParseObjective);)},
    {{"precompute-ref", "true|false",
      "dpo/kto: the reference log-probabilities computed before training (TRL "
      "precompute_ref_log_probs)"},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->reference_precomputed);)},
    {{"kl-reference", "true|false",
      "online objectives: a KL term against a frozen reference model, which full fine-tuning "
      "keeps beside the policy (TRL/ms-swift --beta above 0, verl use_kl_loss)"},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->kl_reference);)},
    {{"critic", "true|false",
      "online objectives: a value model trained on the same GPUs (PPO with GAE), counted as the "
      "policy's weights and optimizer states"},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->critic);)},
    {{"completion-len", "N",
      "online objectives: the completion's tokens per sequence, whose logits the policy "
      "computes (TRL max_completion_length)"},
     false,
     FMTE_SETTER(return SetInt(v, s, &j->completion_len, 0, int64_t{1} << 24, true);)},
    {{"generation-batch", "N",
      "online objectives: sequences one GPU generates at once with the trainer's own model "
      "(model.generate), whose KV cache it holds"},
     false,
     FMTE_SETTER(return SetInt(v, s, &j->generation_batch, 0, 1 << 20);)},
    {{"generation-gathers", "true|false",
      "under ZeRO-3 the whole 16-bit model is gathered to generate or to sync it into the engine "
      "(TRL ds3_gather_for_generation)"},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->generation_gathers);)},
    {{"generation-memory", "F",
      "online objectives: the share of each GPU's memory an inference engine in the training "
      "processes holds (vLLM gpu_memory_utilization with TRL's vllm_mode colocate, verl's "
      "rollout); "
      "0: none on these GPUs"},
     false,
     FMTE_SETTER({
       auto r = ParseBoundedDouble(v, 0, 1, s);
       if (!r.ok()) return r.status();
       j->generation_memory = *r;
       return Status::Ok();
     })},
    {{"generation-sleeps", "true|false",
      "the engine frees its share while the policy trains (vLLM sleep mode)"},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->generation_sleeps);)},
    {{"seq-len-cap", "true|false", ""},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->seq_len_is_cap);)},
    {{"fp8-param-gather", "true|false", ""},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->fp8_params);)},
    {{"sync-each-batch", "true|false", ""},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->sync_each_batch);)},
    {{"freeze-vision", "true|false", ""},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->freeze_vision);)},
    {{"freeze-language", "true|false", ""},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->freeze_language);)},
    {{"kbit-upcast", "true|false", ""}, false, FMTE_SETTER(return SetBool(v, s, &j->kbit_upcast);)},
    {{"fsdp-frozen-grads", "true|false", ""},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->fsdp_frozen_grads);)},
    {{"bnb-ctx-inputs", "true|false", ""},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->bnb_ctx_inputs);)},
    {{"quantize-experts", "true|false", ""},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->quantize_experts);)},
    {{"grad-reduce-in-bf16", "true|false", ""},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->grad_reduce_bf16);)},
    {{"optimizer-states-bf16", "true|false", ""},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->optimizer_states_bf16);)},
    {{"offload-optimizer", "true|false", ""},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->offload_optimizer);)},
    {{"offload-params", "true|false", ""},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->offload_params);)},
    {{"global-batch", "N", ""},
     false,
     FMTE_SETTER(return SetInt(v, s, &j->global_batch, 1, int64_t{1} << 40);)},
    {{"lora-targets", "LIST|all-linear", ""}, false, FMTE_SETTER(return SetLoraTargets(v, s, j);)},
    {{"dora", "true|false", ""}, false, FMTE_SETTER(return SetBool(v, s, &j->dora);)},
    {{"trainable-fp32", "true|false", ""},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->trainable_fp32);)},
    {{"modules-to-save", "embed_tokens,lm_head|none", ""},
     false,
     FMTE_SETTER(return ParseModulesToSave(v, s, j);)},
    {{"state-dict", "auto|full|sharded", ""},
     false,
     FMTE_SETTER(return SetEnum(v, s, &j->state_dict, ParseStateDict);)},
    {{"attention", "fused|eager", ""},
     false,
     FMTE_SETTER(j->attention_given = true; return SetEnum(v, s, &j->attention, ParseAttention);)},
    {{"optimizer-impl", "auto|foreach|fused", ""},
     false,
     FMTE_SETTER(return SetEnum(v, s, &j->optimizer_impl, ParseOptimizerImpl);)},
    {{"lora-dropout", "P", ""}, false, FMTE_SETTER({
       auto r = ParseBoundedDouble(v, 0, 0.999, s);
       if (!r.ok()) return r.status();
       j->lora_dropout = *r;
       return Status::Ok();
     })},
    {{"compile", "true|false", ""}, false, FMTE_SETTER(return SetBool(v, s, &j->compile);)},
    {{"chunked-loss", "true|false", ""},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->chunked_loss);)},
    {{"double-quant", "true|false", ""},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->double_quant);)},
    {{"activation-offload", "true|false", ""},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->activation_offload);)},
    {{"optimizer-in-backward", "true|false", ""},
     false,
     FMTE_SETTER(return SetBool(v, s, &j->optimizer_in_backward);)},
    {{"virtual-tokens", "N", ""},
     false,
     FMTE_SETTER(return SetInt(v, s, &j->virtual_tokens, 1, 1 << 16);)},
    {{"gpus-per-node", "N", ""},
     false,
     FMTE_SETTER(return SetInt(v, s, &j->gpus_per_node, 1, 1024);)},
    {{"gpu", "NAME", ""}, false, FMTE_SETTER({
       const std::string_view t = Trim(v);
       if (t.empty() || t.size() > 64) return Expected(s, "a GPU name", v);
       j->gpu = std::string(t);
       return Status::Ok();
     })},
    {{"recompute-method", "uniform|block|interval",
      "which layers full checkpointing recomputes (Megatron --recompute-method; interval: every "
      "Nth, torchtitan selective_ac_option N)"},
     false,
     FMTE_SETTER(return SetEnum(v, s, &j->recompute_method, ParseRecomputeMethod);)},
    {{"recompute-num-layers", "N", "the N of --recompute-method"},
     false,
     FMTE_SETTER(return SetInt(v, s, &j->recompute_num_layers, 1, 1 << 16);)},
    {{"recompute-modules", "LIST",
      "what selective checkpointing reruns (Megatron --recompute-modules: core_attn, moe_act, "
      "layernorm, mla_up_proj, mlp, moe, shared_experts; default core_attn)"},
     false,
     FMTE_SETTER(return SetEnum(v, s, &j->recompute_modules, ParseRecomputeModules);)},
    // torchtitan's activation_checkpoint.selective_ac_option N: under mode "selective", every Nth
    // block is checkpointed whole and the others not at all (torchtitan/distributed/
    // activation_checkpoint.py _apply_ac_to_transformer_block); other modes ignore it.
    {{"recompute-every", "N",
      "with selective checkpointing: every Nth layer checkpointed whole (torchtitan "
      "selective_ac_option N)"},
     false,
     FMTE_SETTER({
       int64_t n = 0;
       FMTE_RETURN_IF_ERROR(SetInt(v, s, &n, 1, 1 << 16));
       if (j->activation_checkpointing == Checkpointing::kSelective) {
         j->activation_checkpointing = Checkpointing::kFull;
         j->recompute_method = RecomputeMethod::kInterval;
         j->recompute_num_layers = n;
       }
       return Status::Ok();
     })},
}};
#undef FMTE_SETTER

const KeySpec* FindKey(std::string_view key) {
  static const LengthGroups<32> kByLength = [] {
    LengthGroups<32> g;
    g.Build(kKeys.size(), [](size_t i) { return kKeys[i].spec.key; });
    return g;
  }();
  for (const uint32_t i : kByLength.Candidates(key))
    if (kKeys[i].spec.key == key) return &kKeys[i];
  return nullptr;
}

std::array<OptionSpec, 17> MakeOptionSpecs() {
  std::array<OptionSpec, 17> out{};
  size_t n = 0;
  for (const KeySpec& k : kKeys)
    if (k.spank && n < out.size()) out[n++] = k.spec;
  return out;
}

}  // namespace

Status ApplyKey(std::string_view key, std::string_view value, std::string_view shown,
                TrainingJob* job) {
  const KeySpec* k = FindKey(key);
  if (k == nullptr) return Status::InvalidArgument(std::string(shown) + ": unknown key");
  if (value.size() > kMaxValueBytes)
    return Status::InvalidArgument(std::string(shown) + ": value longer than " +
                                   std::to_string(kMaxValueBytes) + " bytes");
  return k->set(value, shown, job);
}

bool IsKnownKey(std::string_view key) { return FindKey(key) != nullptr; }

}  // namespace internal

std::span<const OptionSpec> FmteOptions() {
  static const std::array<OptionSpec, 17> kOptions = internal::MakeOptionSpecs();
  return kOptions;
}

Status ValidateOption(std::string_view key, std::string_view value, bool as_fmte_line) {
  const std::string shown =
      as_fmte_line ? "#FMTE " + std::string(key) : "--fmte-" + std::string(key);
  bool known = false;
  for (const OptionSpec& o : FmteOptions()) known = known || o.key == key;
  if (!known && !(as_fmte_line && internal::IsKnownKey(key))) {
    std::string names;
    for (const OptionSpec& o : FmteOptions())
      names += (names.empty() ? "" : " ") + std::string(o.key);
    return Status::InvalidArgument(Shown(shown) + ": unknown option; known: " + names);
  }
  TrainingJob scratch;
  return internal::ApplyKey(key, value, shown, &scratch);
}

std::string SpankEnvKey(std::string_view key) {
  std::string out = "_SLURM_SPANK_OPTION_fmte_fmte_";
  for (char c : key) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

namespace {

// Whether `name` is SpankEnvKey(key) without its prefix (no string built: job_submit reads the
// forwarded values on a cold RPC thread of slurmctld).
bool SpankEnvKeyIs(std::string_view key, std::string_view name) {
  if (key.size() != name.size()) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    const char c = std::isalnum(static_cast<unsigned char>(key[i])) ? key[i] : '_';
    if (c != name[i]) return false;
  }
  return true;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> SpankValuesFromEnv(
    std::span<const char* const> env) {
  std::vector<std::pair<std::string, std::string>> out;
  static constexpr std::string_view kPrefix = "_SLURM_SPANK_OPTION_fmte_fmte_";
  for (const char* entry : env) {
    if (entry == nullptr) continue;
    // Bounded: SPANK values are short; the forwarded JSON at most kMaxReadJsonBytes.
    const std::string_view e(entry, strnlen(entry, kMaxReadJsonBytes + 64));
    if (const char* v = EnvValue(entry, kReadEnvName); v != nullptr) {
      out.emplace_back(std::string(kReadKey), std::string(e.substr(v - entry)));
      continue;
    }
    if (const char* v = EnvValue(entry, kArchEnvName); v != nullptr) {
      out.emplace_back(std::string(kArchKey), std::string(e.substr(v - entry)));
      continue;
    }
    if (!e.starts_with(kPrefix)) continue;
    const size_t eq = e.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = e.substr(kPrefix.size(), eq - kPrefix.size());
    for (const OptionSpec& o : FmteOptions()) {
      if (SpankEnvKeyIs(o.key, name)) {
        out.emplace_back(std::string(o.key), std::string(e.substr(eq + 1, kMaxValueBytes + 1)));
        break;
      }
    }
  }
  // In key order (a key given twice keeps its order): the same values read from environments in
  // different orders are the same list, as the decision made in sbatch is bound to
  // (slurm_plugin/client_decision.h).
  if (out.size() > 1)
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::string_view ToString(Source s) {
  switch (s) {
    case Source::kDefault:
      return "default";
    case Source::kSlurm:
      return "slurm";
    case Source::kLauncher:
      return "launcher";
    case Source::kFmteLine:
      return "fmte-line";
    case Source::kSpank:
      return "spank";
  }
  return "?";
}

}  // namespace fmte
