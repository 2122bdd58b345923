// HF Trainer / TRL / PEFT / LLaMA-Factory flags, plus what torchrun, accelerate and the deepspeed
// launcher say about precision and sharding. Flag names are those of transformers.TrainingArguments
// (per_device_train_batch_size, gradient_accumulation_steps, bf16, fp16, fsdp, deepspeed,
// gradient_checkpointing, optim, max_steps, num_train_epochs, torch_compile), TRL's ModelConfig /
// SFTConfig (model_name_or_path, use_peft, lora_r, lora_target_modules, load_in_4bit,
// max_seq_length / max_length), run_clm.py (block_size), LLaMA-Factory (cutoff_len,
// finetuning_type, lora_rank, quantization_bit) and accelerate launch (mixed_precision, use_fsdp,
// fsdp_sharding_strategy, use_deepspeed, zero_stage).
#include "launcher.h"

namespace fmte::internal {
namespace {

// DeepSpeed ZeRO stage from the config file's NAME only (no file I/O in the controller):
// "ds_z3_offload.json", "zero3.json", "zero_stage2.json", "ds_config_stage1.json".
int ZeroStageFromName(std::string_view path) {
  const std::string n =
      Lower(path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1));
  for (int stage = 3; stage >= 0; --stage) {
    const std::string d = std::to_string(stage);
    for (const std::string& pat :
         {"zero" + d, "zero_" + d, "zero-" + d, "stage" + d, "stage_" + d, "stage-" + d, "_z" + d,
          "-z" + d, "z" + d + "_", "z" + d + "-", "z" + d + "."})
      if (n.find(pat) != std::string::npos) return stage;
  }
  return -1;
}

// HF Trainer --optim names (transformers OptimizerNames) -> fmte optimizer names.
std::string OptimizerName(std::string_view optim) {
  const std::string o = Lower(optim);
  if (o.find("8bit") != std::string::npos)
    return "adamw-8bit";  // adamw_bnb_8bit, paged_adamw_8bit, adamw_8bit
  if (o == "adafactor") return "adafactor";
  if (o == "sgd") return "sgd";
  if (o.starts_with("adamw") || o.starts_with("paged_adamw") || o == "adam") return "adamw";
  return "";
}

// Evaluation during or after training, and its batch per GPU (the key eval-batch; unset: fmte
// counts no evaluation). The HF Trainer evaluates when eval_strategy (evaluation_strategy before
// transformers 4.41) is "steps" or "epoch", and the example scripts (run_clm.py) after training
// with --do_eval, with per_device_eval_batch_size sequences per GPU (TrainingArguments default 8);
// eval_strategy "no" without --do_eval is none. axolotl evaluates when val_set_size > 0 or
// test_datasets are given, with eval_batch_size sequences (its micro_batch_size unless set;
// axolotl utils/config normalize_config). LLaMA-Factory passes eval_strategy and
// per_device_eval_batch_size to the Trainer as they are.
// A TrainingArguments strategy (eval_strategy, save_strategy) as written, "steps" or
// "IntervalStrategy.STEPS": lower case without the enum's prefix ("no", "steps", "epoch", ...).
std::string StrategyValue(std::string_view value) {
  std::string v = Lower(value);
  constexpr std::string_view kEnum = "intervalstrategy.";
  if (std::string_view(v).starts_with(kEnum)) v.erase(0, kEnum.size());
  return v;
}

// The evaluation strategy the Trainer runs with, and its name: evaluation_strategy when the line
// gives it (transformers 4.41-4.45 copy it over eval_strategy in TrainingArguments.__post_init__;
// earlier versions know only it, later ones only eval_strategy), else eval_strategy; nullptr when
// neither. ReadEvaluation and ReadPeriodic read the same one.
const Flag* EvalStrategy(const LaunchLine& l, Sink* sink, std::string_view* name) {
  for (std::string_view n : {"evaluation_strategy", "eval_strategy"})
    if (const Flag* f = sink->Find(l, n); f != nullptr) {
      *name = n;
      return f;
    }
  return nullptr;
}

void ReadEvaluation(const LaunchLine& l, Sink* sink) {
  std::string_view strategy_name;
  const Flag* strategy = EvalStrategy(l, sink, &strategy_name);
  bool on = false, axolotl = false;
  if (strategy != nullptr) {
    if (strategy->unresolved) {
      sink->Warn("--" + std::string(strategy_name),
                 "value depends on the environment; evaluation not counted");
      return;
    }
    const std::string v = StrategyValue(strategy->value);
    if (v == "steps" || v == "epoch")
      on = true;
    else if (v != "no")
      sink->Warn("--" + std::string(strategy_name),
                 "unknown strategy '" + Shown(strategy->value) + "'; evaluation not counted");
  }
  if (FlagTrue(sink->Find(l, "do_eval"))) on = true;
  if (const Flag* f = sink->Find(l, "val_set_size"); f != nullptr && !f->unresolved) {
    const Result<double> size = ParseBoundedDouble(f->value, 0, 1e18, "val_set_size");
    if (size.ok() && *size > 0) on = axolotl = true;
  }
  if (const Flag* f = sink->Find(l, "test_datasets");
      f != nullptr && !f->value.empty() && f->value != "[]" && f->value != "null") {
    on = axolotl = true;
  }
  if (!on) return;
  for (std::string_view name :
       {"per_device_eval_batch_size", "per_gpu_eval_batch_size", "eval_batch_size"}) {
    const Flag* f = sink->Find(l, name);
    if (f == nullptr) continue;
    if (f->unresolved) {
      sink->Warn("--" + std::string(name),
                 "value depends on the environment; evaluation not counted");
      return;
    }
    sink->SetFromFlag("eval-batch", f->value, name);
    return;
  }
  if (axolotl) {
    if (sink->Has("micro-batch"))
      sink->Set("eval-batch", sink->Get("micro-batch"),
                "eval_batch_size (axolotl: micro_batch_size)");
    return;
  }
  sink->Set("eval-batch", "8",
            strategy != nullptr
                ? "--" + std::string(strategy_name) + " (per_device_eval_batch_size default 8)"
                : std::string("--do_eval (per_device_eval_batch_size default 8)"));
}

// How an FSDP job saves its checkpoints (the key state-dict): accelerate's fsdp_state_dict_type
// (its config's fsdp_config.fsdp_state_dict_type, axolotl's fsdp_config.state_dict_type:
// etc/launchers.json) as
// FULL_STATE_DICT -> full, SHARDED_STATE_DICT or LOCAL_STATE_DICT -> sharded; without it, FSDP2
// (fsdp_version 2) saves sharded by default (accelerate FullyShardedDataParallelPlugin:
// "FULL_STATE_DICT" if fsdp_version == 1 else "SHARDED_STATE_DICT"), FSDP1 full (the key's auto).
void ReadStateDict(const LaunchLine& l, Sink* sink) {
  if (const Flag* f = sink->Find(l, "fsdp_state_dict_type"); f != nullptr && !f->unresolved) {
    const std::string v = Lower(f->value);
    if (v.find("full") != std::string::npos)
      sink->SetFromFlag("state-dict", "full", "fsdp_state_dict_type");
    else if (v.find("sharded") != std::string::npos || v.find("local") != std::string::npos)
      sink->SetFromFlag("state-dict", "sharded", "fsdp_state_dict_type");
    else
      sink->Warn("--fsdp_state_dict_type", "unknown state dict type '" + Shown(f->value) + "'");
    return;
  }
  if (const Flag* f = sink->Find(l, "fsdp_version");
      f != nullptr && !f->unresolved && f->value == "2")
    sink->SetFromFlag("state-dict", "sharded", "fsdp_version");
}

// How often the job saves checkpoints and evaluates (the keys save-every, eval-every and
// eval-samples; unset: the framework's defaults, walltime.h PeriodicWorkOf). The HF Trainer saves
// per save_strategy ("steps": every save_steps, below 1 a share of the run; "epoch"; "no") and
// evaluates per eval_strategy every eval_steps, which defaults to logging_steps. axolotl adds
// saves_per_epoch / evals_per_epoch and an evaluation set of val_set_size (a share of the dataset
// below 1, else sequences); LLaMA-Factory's val_size is the same; the example scripts' (run_clm.py)
// max_eval_samples caps the set.
void ReadPeriodic(const LaunchLine& l, Sink* sink) {
  // A known value of the first of `names` the line sets, or nullptr (an unresolved one warns).
  const auto known = [&](std::initializer_list<std::string_view> names,
                         std::string_view* which) -> const Flag* {
    for (std::string_view name : names) {
      const Flag* f = sink->Find(l, name);
      if (f == nullptr) continue;
      if (f->unresolved) {
        sink->Warn("--" + std::string(name), "value depends on the environment; not counted");
        return nullptr;
      }
      *which = name;
      return f;
    }
    return nullptr;
  };
  std::string_view name;
  // Checkpoint saves.
  std::string save_strategy;
  if (const Flag* f = known({"save_strategy"}, &name)) save_strategy = StrategyValue(f->value);
  if (save_strategy == "no") {
    sink->SetFromFlag("save-every", "never", name);
  } else if (save_strategy == "epoch") {
    sink->SetFromFlag("save-every", "1/epoch", name);
  } else if (const Flag* f = known({"saves_per_epoch"}, &name)) {
    sink->SetFromFlag("save-every", std::string(f->value) + "/epoch", name);
  } else if (const Flag* f = known({"save_steps"}, &name);
             f != nullptr && save_strategy != "best") {
    sink->SetFromFlag("save-every", f->value, name);
  }
  // Evaluation passes: only for a job that evaluates (ReadEvaluation found an evaluation batch).
  if (!sink->Has("eval-batch")) return;
  if (const Flag* f = EvalStrategy(l, sink, &name); f != nullptr && !f->unresolved) {
    // (An unresolved strategy was reported by ReadEvaluation, which then counts no evaluation.)
    const std::string v = StrategyValue(f->value);
    if (v == "no") {
      sink->SetFromFlag("eval-every", "never", name);  // --do_eval: one pass after training
    } else if (v == "epoch") {
      sink->SetFromFlag("eval-every", "1/epoch", name);
    } else if (const Flag* steps = known({"eval_steps", "logging_steps"}, &name)) {
      sink->SetFromFlag("eval-every", steps->value, name);
    }
  } else if (const Flag* f = known({"evals_per_epoch"}, &name)) {  // axolotl
    sink->SetFromFlag("eval-every", std::string(f->value) + "/epoch", name);
  } else if (const Flag* steps = known({"eval_steps"}, &name)) {
    sink->SetFromFlag("eval-every", steps->value, name);
  } else if (sink->Find(l, "val_set_size") == nullptr &&
             sink->Find(l, "test_datasets") == nullptr) {
    // The HF Trainer's eval_strategy defaults to "no": --do_eval evaluates after training only.
    sink->Set("eval-every", "never", "--do_eval (eval_strategy default \"no\")");
  }
  if (const Flag* f = known({"max_eval_samples", "val_set_size", "val_size"}, &name))
    sink->SetFromFlag("eval-samples", f->value, name);
}

// --fsdp "full_shard auto_wrap offload" (TrainingArguments.fsdp).
void ReadFsdp(const Flag& f, Sink* sink) {
  const std::string v = Lower(f.value);
  const char* shard = nullptr;
  if (v == "fsdp2")  // ms-swift's built-in FSDP2 config (swift/llm/fsdp_config): full sharding
    shard = "fsdp-full";
  else if (v.find("hybrid_shard") != std::string::npos)
    shard = "fsdp-hybrid";
  else if (v.find("full_shard") != std::string::npos)
    shard = "fsdp-full";
  else if (v.find("shard_grad_op") != std::string::npos)
    shard = "fsdp-grad-op";
  else if (v.find("no_shard") != std::string::npos)
    shard = "fsdp-no-shard";
  if (shard == nullptr) {
    if (v != "false" && !v.empty() && v != "\"\"")
      sink->Warn("--fsdp", "unknown FSDP option '" + Shown(f.value) + "'");
    return;
  }
  sink->Set("sharding", shard, "--fsdp");
  if (v.find("offload") !=
      std::string::npos) {  // FSDP CPUOffload(offload_params=True): params+grads+optimizer
    sink->Set("offload-params", "true", "--fsdp");
    sink->Set("offload-optimizer", "true", "--fsdp");
  }
}

// Sets the sharding a ZeRO stage in a config file's name gives (stage 0: plain DDP) and returns
// the stage; -1 (nothing set) when the name gives none.
int ReadZeroStageFromName(const Flag& f, std::string_view flag, Sink* sink) {
  const int stage = ZeroStageFromName(f.value);
  if (stage >= 0) sink->Set("sharding", stage == 0 ? "ddp" : "zero" + std::to_string(stage), flag);
  return stage;
}

void ReadDeepspeedConfig(const Flag& f, std::string_view flag, Sink* sink) {
  const int stage = ReadZeroStageFromName(f, flag, sink);
  if (stage < 0) {
    sink->Unread("sharding", flag, f.value,
                 "ZeRO stage not in the file name '" + Shown(f.value) +
                     "' (its contents were not read); set #FMTE sharding=zeroN");
    return;
  }
  const std::string n = Lower(f.value);
  if (n.find("offload") != std::string::npos) {
    sink->Set("offload-optimizer", "true", flag);
    if (stage == 3) sink->Set("offload-params", "true", flag);
  }
}

// The dtype the weights are loaded in: --torch_dtype/--dtype bfloat16 (TRL's ModelConfig, the
// alignment-handbook and open-r1 recipes), LLaMA-Factory's and axolotl's bf16 (both load the
// model in their compute dtype; etc/launchers.json hf-args), or LLaMA-Factory's pure_bf16. Under
// the HF Trainer a bf16 model keeps bf16 weights and gradients, and torch's AdamW allocates its
// states like the parameter (torch/optim/adamw.py _init_group: zeros_like(p)); --bf16 autocast
// adds no fp32 copy: pure-bf16. Not under DeepSpeed (the engine keeps an fp32 master) nor FSDP
// (accelerate upcasts low-precision parameters to fp32 when mixed precision is on,
// accelerator.py prepare_model), nor LLaMA-Factory's full fine-tuning, which casts the trainable
// parameters to fp32 unless pure_bf16 (model/adapter.py _setup_full_tuning).
void ReadLoadDtype(const LaunchLine& l, bool deepspeed, Sink* sink) {
  const std::string_view shard = sink->Get("sharding");
  if (deepspeed || shard.starts_with("fsdp") || shard.starts_with("zero")) return;
  if (FlagTrue(sink->Find(l, "pure_bf16"))) {
    sink->Set("precision", "pure-bf16", "--pure_bf16");
    return;
  }
  std::string_view which;
  const Flag* dtype = KnownFlag(l, {"torch_dtype", "dtype"}, &which);
  if (dtype == nullptr) return;
  const std::string v = Lower(dtype->value);
  if (v != "bfloat16" && v != "bf16") return;
  // Only autocast bf16 (or no precision flag at all) trains the bf16 weights as they are.
  const std::string_view precision = sink->Get("precision");
  if (!precision.empty() && precision != "amp-bf16") return;
  const bool llamafactory = l.launcher == "llamafactory" || l.program.starts_with("llamafactory");
  if (llamafactory && sink->Get("method") == "full") return;
  sink->Set("precision", "pure-bf16", "--" + std::string(which));
  // LLaMA-Factory's PEFT methods cast what trains to fp32 too: the adapters are fp32 anyway, its
  // modules_to_save copies (additional_target) become fp32.
  if (llamafactory && sink->Find(l, "additional_target") != nullptr)
    sink->Set("trainable-fp32", "true", "llamafactory (cast_trainable_params_to_fp32)");
}

// Whether the sequence length read is a truncation limit rather than every batch's length.
// cutoff_len (LLaMA-Factory), max_seq_length / max_length (TRL, axolotl's sequence_len),
// model_max_length and max_seq_len cut each sample, and the trainers' collators pad a micro-batch
// to its longest sample (transformers DataCollatorForSeq2Seq, TRL's
// DataCollatorForLanguageModeling, padding="longest"), so batches are at most that long. The length
// is exact with packing (TRL/LLaMA-Factory packing, LLaMA-Factory neat_packing and its pre-training
// stage "pt", which packs by default; axolotl sample_packing), when axolotl pads every batch to the
// full length (pad_to_sequence_len), for run_clm.py's block_size and Megatron-style seq_length
// (texts grouped into blocks), and for litgpt pretrain (its data modules cut the token stream into
// blocks). Padding-free batching alone (TRL and ms-swift padding_free) drops the padding but packs
// nothing: each sample keeps its own length, so the length stays a cap.
void ReadSeqLenCap(const LaunchLine& l, Sink* sink) {
  std::string_view which;
  for (std::string_view name :
       {"max_seq_length", "max_length", "cutoff_len", "model_max_length", "max_seq_len"})
    if (const Flag* f = sink->Find(l, name); f != nullptr && !f->unresolved) which = name;
  bool cap = !which.empty();
  for (std::string_view name : {"block_size", "seq_length"})
    if (sink->Find(l, name) != nullptr) cap = false;
  for (std::string_view name : {"packing", "neat_packing", "sample_packing", "pad_to_sequence_len"})
    if (FlagTrue(sink->Find(l, name))) cap = false;
  if (const Flag* stage = sink->Find(l, "stage"); stage != nullptr && Lower(stage->value) == "pt")
    cap = false;
  if (l.launcher == "litgpt" && !l.positionals.empty() && l.positionals.front() == "pretrain")
    cap = false;
  if (cap) sink->Set("seq-len-cap", "true", "--" + std::string(which));
}

// TRL's own launches: its CLI (`trl sft|dpo|kto|...`, trl/cli.py) and the scripts of its
// repository (trl/scripts/, examples/scripts/ of a TRL checkout, run from its root as trl/scripts/
// dpo.py or examples/scripts/dpo.py).
bool IsTrlLaunch(const LaunchLine& l) {
  if (l.launcher == "trl") return true;
  for (std::string_view p : l.positionals)
    if (p.ends_with(".py") && (p.starts_with("trl/") || p.find("/trl/") != std::string_view::npos))
      return true;
  return false;
}

}  // namespace

std::optional<Objective> OnlineObjective(const Sink& sink) {
  const auto o = ParseObjective(sink.Get("objective"));
  if (!o.ok() || !GeneratesCompletions(*o)) return std::nullopt;
  return *o;
}

std::string_view OnlineObjectiveOfEstimator(std::string_view estimator) {
  if (estimator.find("grpo") != std::string_view::npos || estimator == "group_norm") return "grpo";
  if (estimator.find("rloo") != std::string_view::npos) return "rloo";
  return "ppo";
}

namespace {

// seq-len from an online trainer's prompt limit `prompt` (known) and its completion limit,
// max_completion_length (512 by default in TRL's GRPOConfig/RLOOConfig now and in ms-swift's
// rlhf_args.py): their sum, a cap. An unknown completion limit leaves it unread. `prompt_name`
// is the prompt limit's flag; `given` and `defaulted` the origins with and without the
// completion's flag.
void SetPromptPlusCompletion(const LaunchLine& l, Sink* sink, const Flag& prompt,
                             std::string_view prompt_name, std::string_view given,
                             std::string_view defaulted) {
  const Flag* completion = sink->Find(l, "max_completion_length");
  if (completion != nullptr && completion->unresolved) {
    sink->UnreadUnknown("seq-len", "--max_completion_length");
    return;
  }
  auto p = ParseBoundedInt(prompt.value, 1, 1 << 24, prompt_name);
  if (!p.ok()) {
    sink->Warn("--" + std::string(prompt_name), p.status().message());
    return;
  }
  auto c = completion != nullptr
               ? ParseBoundedInt(completion->value, 1, 1 << 24, "max_completion_length")
               : Result<int64_t>(int64_t{512});
  if (!c.ok()) {
    sink->Warn("--max_completion_length", c.status().message());
    return;
  }
  const std::string_view origin = completion != nullptr ? given : defaulted;
  sink->Set("seq-len", std::to_string(*p + *c), origin);
  sink->Set("seq-len-cap", "true", origin);
  sink->Set("completion-len", std::to_string(*c),
            completion != nullptr ? std::string_view("--max_completion_length") : defaulted);
}

// The sequences an online TRL trainer (GRPO, RLOO, GKD) puts through the policy: the prompt and
// its completion. The completion is at most max_completion_length (GRPOConfig/RLOOConfig default
// 256 until TRL 0.2x, 512 since); the prompt is truncated only where max_prompt_length is given
// (GRPOConfig had a default of 512 until TRL removed the option in 2026): with it the sum is a
// cap, without it the prompts' length is the data's, unread.
void ReadTrlOnlineLength(const LaunchLine& l, Sink* sink) {
  if (sink->Has("seq-len")) return;  // a config's, or a --max_length the script reads itself
  const Flag* prompt = sink->Find(l, "max_prompt_length");
  const Flag* completion = sink->Find(l, "max_completion_length");
  if (completion != nullptr && completion->unresolved) {
    sink->UnreadUnknown("seq-len", "--max_completion_length");
    return;
  }
  if (prompt == nullptr || prompt->unresolved) {
    // The completion's logits are known all the same (a cap: TRL's default 512).
    if (completion == nullptr)
      sink->Set("completion-len", "512", "trl (max_completion_length default 512)");
    else
      sink->Set("completion-len", completion->value, "--max_completion_length");
    sink->MarkUnread("seq-len", "trl",
                     "(the prompts' length is the data's: TRL truncates them only with "
                     "--max_prompt_length)");
    return;
  }
  SetPromptPlusCompletion(l, sink, *prompt, "max_prompt_length",
                          "max_prompt_length + max_completion_length",
                          "max_prompt_length + trl's max_completion_length (default 512)");
}

}  // namespace

// A share from an unknown variable is unread: read favourably, never a rejection on a guess.
void SetColocatedEngineShare(const LaunchLine& l, Sink* sink, std::string_view share_flag,
                             std::string_view fallback, std::string_view program) {
  const std::string shown(share_flag);
  if (share_flag.starts_with("--")) share_flag.remove_prefix(2);
  const Flag* share = sink->Find(l, share_flag);
  if (share != nullptr && share->unresolved)
    sink->UnreadUnknown("generation-memory", shown);
  else if (share != nullptr)
    sink->Set("generation-memory", share->value, shown);
  else
    sink->Set("generation-memory", fallback,
              std::string(program) + " (default " + shown + " " + std::string(fallback) + ")");
}

namespace {

// How a TRL online trainer generates its completions (GRPOTrainer._generate_and_score_completions):
// - without --use_vllm, with its own model (unwrapped_model.generate) over a generation batch of
//   per_device_train_batch_size x steps_per_generation (gradient_accumulation_steps by default)
//   sequences per GPU at once, under ZeRO-3 with the whole model gathered unless
//   --ds3_gather_for_generation false (trl/models/utils.py _unwrap_model_for_generation);
// - with vLLM in colocate mode (TRL's default mode since 1.0, "server" before, on GPUs of its own:
//   so only an explicit mode is counted) in every training process, holding
//   vllm_gpu_memory_utilization of each GPU (GRPOConfig default 0.3,
//   trl/generation/vllm_generation.py LLM(gpu_memory_utilization=...)); with
//   vllm_enable_sleep_mode it sleeps (level 2) after each generate, so it holds that share only
//   while it generates. A PEFT model's weights are synced into it gathered whole under ZeRO-3
//   (sync_weights: gather_params(list(model.parameters()))), a full model's one at a time.
void ReadTrlGeneration(const LaunchLine& l, Sink* sink) {
  const Flag* vllm = sink->Find(l, "use_vllm");
  if (vllm == nullptr || (!vllm->unresolved && !FlagTrue(vllm))) {
    const auto count = [&](std::string_view key, int64_t fallback) {
      auto v = ParseBoundedInt(sink->Get(key), 1, 1 << 20, key);
      return v.ok() ? *v : fallback;
    };
    const Flag* steps = sink->Find(l, "steps_per_generation");
    auto per_step = steps != nullptr && !steps->unresolved
                        ? ParseBoundedInt(steps->value, 1, 1 << 20, "steps_per_generation")
                        : Result<int64_t>(count("grad-accum", 1));
    const Flag* batch = sink->Find(l, "per_device_train_batch_size");
    const Flag* total = sink->Find(l, "generation_batch_size");
    // A batch from an unknown variable, or a generation batch over all processes (TRL divides
    // generation_batch_size by their number): unread, read favourably (no cache counted).
    if ((batch != nullptr && batch->unresolved) || (steps != nullptr && steps->unresolved))
      sink->UnreadUnknown("generation-batch", batch != nullptr && batch->unresolved
                                                  ? "--per_device_train_batch_size"
                                                  : "--steps_per_generation");
    else if (total != nullptr)
      sink->MarkUnread("generation-batch", "--generation_batch_size", "(over all processes)");
    // per_device_train_batch_size: the HF Trainer's default 8 where the launch gives none.
    else if (per_step.ok())
      sink->Set("generation-batch", std::to_string(count("micro-batch", 8) * *per_step),
                steps != nullptr ? "per_device_train_batch_size x --steps_per_generation"
                                 : "trl (per_device_train_batch_size x gradient accumulation)");
    const Flag* gather = sink->Find(l, "ds3_gather_for_generation");
    if (gather != nullptr && gather->unresolved)
      sink->UnreadUnknown("generation-gathers", "--ds3_gather_for_generation");
    else
      sink->Set("generation-gathers", gather == nullptr || FlagTrue(gather) ? "true" : "false",
                gather != nullptr ? "--ds3_gather_for_generation"
                                  : "trl (ds3_gather_for_generation default true)");
    return;
  }
  const Flag* mode = sink->Find(l, "vllm_mode");
  if (vllm->unresolved || mode == nullptr || mode->unresolved) {
    sink->Warn("--use_vllm",
               "vLLM's mode is " +
                   std::string(mode == nullptr ? "TRL's default (colocate since TRL 1.0, server "
                                                 "before)"
                                               : "unknown") +
                   ": colocated, it would hold --vllm_gpu_memory_utilization (0.3) of each GPU "
                   "beside the update, not counted; give --vllm_mode");
    return;
  }
  if (Lower(mode->value) != "colocate") return;
  SetColocatedEngineShare(l, sink, "--vllm_gpu_memory_utilization", "0.3", "trl");
  // A sleep mode from an unknown variable: unread (the policy reads it as asleep, the favourable
  // reading, and never rejects on it).
  const Flag* sleep = sink->Find(l, "vllm_enable_sleep_mode");
  if (sleep != nullptr && sleep->unresolved)
    sink->UnreadUnknown("generation-sleeps", "--vllm_enable_sleep_mode");
  else if (FlagTrue(sleep))
    sink->Set("generation-sleeps", "true", "--vllm_enable_sleep_mode");
  if (FlagTrue(sink->Find(l, "use_peft")))
    sink->Set("generation-gathers", "true", "trl (a PEFT model's sync into vLLM)");
}

}  // namespace

// An online trainer's KL coefficient --beta: above 0 a reference model is kept (kl-reference;
// full fine-tuning holds it beside the policy, TrainingJob::KeepsReferenceModel); `keeps_default`:
// whether the trainer's own default is above 0 (`origin` says whose).
void ReadKlBeta(const LaunchLine& l, Sink* sink, bool keeps_default, std::string_view origin) {
  const Flag* beta = sink->Find(l, "beta");
  if (beta != nullptr && beta->unresolved) {
    sink->UnreadUnknown("kl-reference", "--beta");
    return;
  }
  if (beta == nullptr) {
    if (keeps_default) sink->Set("kl-reference", "true", origin);
    return;
  }
  auto b = ParseBoundedDouble(beta->value, 0, 1e9, "--beta");
  if (!b.ok()) {
    sink->Warn("--beta", "expected a KL coefficient of 0 or more, got '" + Shown(beta->value) +
                             "': no reference model counted");
    return;
  }
  sink->Set("kl-reference", *b > 0 ? "true" : "false", "--beta");
}

namespace {

// TRL's online trainers' KL term: GRPO's beta is 0.0 by default since TRL 0.19 (#3516; 0.04
// before), RLOO's 0.05 (RLOOConfig: "If 0.0, the reference model is not loaded"); with beta above
// 0, full fine-tuning keeps a reference model built from the policy's own arguments
// (GRPOTrainer.__init__ create_model_from_path; PEFT disables the adapters instead). TRL's PPO
// always keeps one.
void ReadTrlOnlineReference(const LaunchLine& l, Sink* sink, Objective o) {
  if (o == Objective::kGrpo) ReadKlBeta(l, sink, false, "trl (GRPO beta default 0.0)");
  if (o == Objective::kRloo) ReadKlBeta(l, sink, true, "trl (RLOO beta default 0.05)");
  if (o == Objective::kPpo) sink->Set("kl-reference", "true", "trl (PPO's reference model)");
}

// TRL's own launches, or a script named for a TRL trainer (open-r1's src/open_r1/grpo.py, the
// alignment-handbook's scripts/run_dpo.py): TRL's configs and their defaults.
bool RunsTrlTrainer(const LaunchLine& l) {
  if (IsTrlLaunch(l)) return true;
  for (std::string_view p : l.positionals) {
    if (!p.ends_with(".py")) continue;
    std::string_view b = Basename(p);
    b.remove_suffix(3);
    if (b.starts_with("run_")) b.remove_prefix(4);
    for (std::string_view t : {"grpo", "rloo", "ppo", "gkd", "dpo", "kto", "orpo", "cpo"})
      if (b == t) return true;
  }
  return false;
}

// What TRL's configs default to where the launch says nothing: max_length 1024 (SFTConfig and
// DPOConfig since TRL 0.14, "Truncate by default" #2587; a truncation limit, so a cap) and, since
// TRL 0.22 (#3510, August 2025), gradient_checkpointing=True in every trainer's config; earlier
// versions do not checkpoint, and which one runs is not in the launch: unread, read favourably.
void ReadTrlDefaults(const LaunchLine& l, Sink* sink) {
  const auto online = OnlineObjective(*sink);  // prompt + completion (GKD: max_length)
  if ((!online || *online == Objective::kGkd) && !sink->Has("seq-len")) {
    sink->Set("seq-len", "1024", "trl (max_length default 1024)");
    sink->Set("seq-len-cap", "true", "trl (max_length default 1024)");
  }
  if (sink->Find(l, "gradient_checkpointing") == nullptr && !sink->Has("activation-checkpointing"))
    sink->MarkUnread("activation-checkpointing", "trl",
                     "(gradient_checkpointing: True by default since TRL 0.22, off before)");
}

}  // namespace

// Preference and RL objectives (TrainingJob::objective). DPO-style trainers put the chosen and the
// rejected sequence of each pair through the model (TRL's DPOTrainer concatenated_forward;
// LLaMA-Factory's stage dpo, whose pref_loss orpo and simpo are reference-free; ms-swift's `swift
// rlhf --rlhf_type` (dpo by default, swift/arguments/rlhf_args.py) and 2.x `swift
// dpo|orpo|simpo`; Megatron-SWIFT's `megatron rlhf`) and keep a frozen reference model for full
// fine-tuning: read as the objective. Reward models (LLaMA-Factory stage rm, rlhf_type rm, TRL's
// reward trainer) are estimated as supervised fine-tuning with a note. GRPO, RLOO, PPO and GKD
// are online objectives (completions generated in every step, several per prompt, and reference,
// reward, value or teacher models): their update is estimated, with a note, and no wall time. A
// trainer type the script leaves to a variable is unread (favourably: no time limit).
void ReadPreferenceStage(const LaunchLine& l, Sink* sink) {
  std::string where;      // what names the objective
  std::string_view what;  // dpo, kto, grpo, ... (empty: supervised)
  const auto take = [&](std::string_view w, std::string_view objective) {
    if (!what.empty()) return;
    for (std::string_view t : {"dpo", "ipo", "kto", "orpo", "simpo", "cpo", "grpo", "rloo", "ppo",
                               "gkd", "rm", "reward", "reward_modeling", "rlhf"})
      if (objective == t) {
        where = std::string(w);
        what = t;
      }
  };
  // LLaMA-Factory's stage; axolotl's `rl:` (its YAML keys are flags here).
  for (std::string_view name : {"stage", "rl"}) {
    const Flag* f = sink->Find(l, name);
    if (f == nullptr) continue;
    if (f->unresolved) {
      // Unknown at submission: read favourably (supervised memory, no time limit), never guessed.
      sink->UnreadUnknown("objective", "--" + std::string(name));
      return;
    }
    take("--" + std::string(name), Lower(f->value));
  }
  // TRL's CLI (`trl dpo`), scripts named for their trainer (TRL's examples/scripts/dpo.py, the
  // alignment-handbook's scripts/run_dpo.py, open-r1's grpo.py), ms-swift's subcommand (the
  // first word after `swift` or Megatron-SWIFT's `megatron`, also behind a launcher; 2.x `swift
  // dpo|orpo|simpo`). `rlhf` is ms-swift's subcommand only: a script called rlhf.py names no
  // objective.
  for (size_t i = 0; i < l.positionals.size(); ++i) {
    const std::string_view p = l.positionals[i];
    std::string_view b = Basename(p);
    const bool script = b.ends_with(".py");
    if (script) b.remove_suffix(3);
    if (b.starts_with("run_")) b.remove_prefix(4);
    const bool after_swift = i == 0 ? l.launcher == "swift" || l.launcher == "megatron"
                                    : Basename(l.positionals[i - 1]) == "swift";
    if (b == "rlhf" && !after_swift) continue;
    if (script || (i == 0 && l.launcher == "trl") || after_swift) take(p, b);
  }
  if (what.empty()) return;
  std::string objective(what);
  if (what == "rlhf") {  // swift rlhf: its --rlhf_type, dpo by default
    objective = "dpo";
    if (const Flag* t = sink->Find(l, "rlhf_type"); t != nullptr) {
      if (t->unresolved) {
        // Unknown at submission: read favourably (as supervised), never as a guess.
        sink->UnreadUnknown("objective", "--rlhf_type");
        return;
      }
      objective = Lower(t->value);
      where = "--rlhf_type";
    }
  } else if (what == "dpo") {  // LLaMA-Factory's pref_loss: sigmoid (DPO) unless orpo or simpo
    if (const Flag* f = sink->Find(l, "pref_loss"); f != nullptr && !f->unresolved) {
      const std::string loss = Lower(f->value);
      if (loss == "orpo" || loss == "simpo") {
        objective = loss;
        where = "--pref_loss";
      }
    }
  }
  if (objective == "ipo") objective = "dpo";  // a DPO loss: the same passes and reference
  if (objective == "rm" || objective == "reward" || objective == "reward_modeling") {
    // TRL's RewardTrainer, LLaMA-Factory's PairwiseTrainer and ms-swift's put the chosen and the
    // rejected sequence through the model as one batch and score them with a one-output head.
    sink->Warn(where,
               "a reward model, estimated as supervised fine-tuning: the rejected sequence of "
               "each pair (twice the activations per micro-batch) is not counted, the "
               "vocabulary logits its score head replaces are");
    return;
  }
  if (auto o = ParseObjective(objective); o.ok()) {
    sink->Set("objective", objective, where);
    if (GeneratesCompletions(*o)) {
      WarnOnlineObjective(where, sink);
      return;
    }
    // TRL's precompute_ref_log_probs (DPOConfig, KTOConfig; ms-swift and axolotl pass it on).
    if (UsesReference(*o) && FlagTrue(sink->Find(l, "precompute_ref_log_probs")))
      sink->Set("precompute-ref", "true", "--precompute_ref_log_probs");
    return;
  }
  sink->Warn(where, "'" + Shown(objective) +
                        "' is not an objective fmte models: estimated as supervised fine-tuning");
}

// ms-swift's and Megatron-SWIFT's online trainers: "In PPO, GRPO, GKD and inference scenarios,
// max_length refers to max_prompt_length" (docs Command-line-parameters.md); the sequence through
// the policy adds the completion, max_completion_length (512 by default, swift/arguments/
// rlhf_args.py). Called after the reader took --max_length as the sequence.
// Their vLLM in colocate mode (--use_vllm true --vllm_mode colocate; the mode is required with
// use_vllm, rlhf_args.py) holds --vllm_gpu_memory_utilization of each GPU (0.9 by default,
// swift/rlhf_trainers/args_mixin.py) and frees it while the policy trains with --sleep_level 1 or
// 2 (0 by default). --offload_model/--offload_optimizer move the policy's weights or optimizer
// states to the host while vLLM generates, which the generation phase does not know: with a
// sleeping engine that phase is told, not counted.
void ReadSwiftOnline(const LaunchLine& l, Sink* sink) {
  const auto online = OnlineObjective(*sink);
  if (!online) return;
  // Without vLLM its own model generates, gathered whole under ZeRO-3 unless
  // --ds3_gather_for_generation false (rollout_mixin.py unwrap_model_for_generation); the batch it
  // generates at once is its engine's, unread.
  if (!FlagTrue(sink->Find(l, "use_vllm"))) {
    const Flag* gather = sink->Find(l, "ds3_gather_for_generation");
    if (gather == nullptr || (!gather->unresolved && FlagTrue(gather)))
      sink->Set("generation-gathers", "true",
                gather != nullptr ? "--ds3_gather_for_generation"
                                  : "swift (ds3_gather_for_generation default true)");
  }
  // Its reference (rlhf_args.py _init_ref: full fine-tuning of grpo keeps one unless --beta 0,
  // whose default is 0.04 for grpo; ppo always keeps one; gkd has a teacher instead).
  if (*online == Objective::kGrpo) ReadKlBeta(l, sink, true, "swift (GRPO beta default 0.04)");
  if (*online == Objective::kPpo)
    sink->Set("kl-reference", "true", "swift (PPO's reference model)");
  if (const Flag* prompt = sink->Find(l, "max_length"); prompt != nullptr && !prompt->unresolved)
    SetPromptPlusCompletion(l, sink, *prompt, "max_length",
                            "--max_length (the prompt's) + --max_completion_length",
                            "--max_length (the prompt's) + swift's max_completion_length 512");
  // (an unknown or absent --max_length is the model's context length: unread)
  const Flag* mode = sink->Find(l, "vllm_mode");
  if (!FlagTrue(sink->Find(l, "use_vllm")) || mode == nullptr || mode->unresolved ||
      Lower(mode->value) != "colocate")
    return;
  // A sleep level from an unknown variable: unread (the policy reads it as asleep, the favourable
  // reading, and never rejects on it).
  const Flag* sleep = sink->Find(l, "sleep_level");
  const bool unknown_sleep = sleep != nullptr && sleep->unresolved;
  const bool sleeps = sleep != nullptr && !unknown_sleep && sleep->value != "0";
  if (unknown_sleep) sink->UnreadUnknown("generation-sleeps", "--sleep_level");
  if (sleeps &&
      (FlagTrue(sink->Find(l, "offload_model")) || FlagTrue(sink->Find(l, "offload_optimizer")))) {
    sink->Warn("--sleep_level",
               "vLLM's share of each GPU (--vllm_gpu_memory_utilization) while it generates, "
               "beside the states not offloaded: not counted");
    return;
  }
  SetColocatedEngineShare(l, sink, "--vllm_gpu_memory_utilization", "0.9", "swift");
  if (sleeps) sink->Set("generation-sleeps", "true", "--sleep_level");
  // Its weights go into vLLM in one batch under ZeRO-3 unless --move_model_batches splits them
  // (rollout_mixin.py: "If args.move_model_batches is None, all parameters are returned in a
  // single batch", gathered with gather_if_zero3).
  if (sink->Find(l, "move_model_batches") == nullptr)
    sink->Set("generation-gathers", "true", "swift (move_model_batches unset: one batch)");
}

void WarnOnlineObjective(std::string_view where, Sink* sink) {
  sink->Warn(where,
             "the policy's update step is estimated (with the memory of its generation and a KL "
             "reference where read); the time of generating the completions in every step and "
             "any reward, value or teacher model are not, so fmte sets no time limit");
}

namespace {

// litgpt's LoRA targets: one boolean per part, in its config file or on its command line
// (litgpt/finetune/lora.py setup(): lora_query True, lora_key False, lora_value True,
// lora_projection False, lora_mlp False, lora_head False). The mlp's linears are fc_1, fc_2 and
// proj (LLaMAMLP, GemmaMLP) or fc and proj (GptNeoxMLP): the MLP roles.
void ReadLitgptLoraTargets(const LaunchLine& l, Sink* sink) {
  struct Part {
    std::string_view flag;
    bool on;
    std::string_view targets;
  };
  Part parts[] = {{"lora_query", true, "q"},           {"lora_key", false, "k"},
                  {"lora_value", true, "v"},           {"lora_projection", false, "o"},
                  {"lora_mlp", false, "gate,up,down"}, {"lora_head", false, "lm_head"}};
  std::string_view given;
  for (Part& p : parts) {
    const Flag* f = sink->Find(l, p.flag);
    if (f == nullptr || f->unresolved) continue;
    auto on = ParseBool(f->value, "");
    if (!on.ok()) {
      sink->Warn("--" + std::string(p.flag), "expected true or false; litgpt's default assumed");
      continue;
    }
    p.on = *on;
    if (given.empty()) given = p.flag;
  }
  if (given.empty()) return;  // litgpt's defaults: the framework's (fmte/lora.h)
  std::string list;
  for (const Part& p : parts)
    if (p.on) list.append(list.empty() ? "" : ",").append(p.targets);
  if (list.empty()) {
    sink->Warn("--" + std::string(given), "every lora_* part is off: LoRA adapts nothing");
    return;
  }
  sink->SetFromFlag("lora-targets", list, given);
}

}  // namespace

void ReadHfFlags(const LaunchLine& l, Sink* sink) {
  bool deepspeed = l.launcher == "deepspeed";
  bool qlora = false, lora = false;
  // Model: the first of these names present.
  bool has_model = false;
  std::string_view unknown_model;  // a model flag whose value the script leaves to the environment
  for (std::string_view name :
       {"model_name_or_path", "model_name", "model_id", "pretrained_model_name_or_path",
        "base_model", "model", "model.name_or_path", "model.model_name_or_path", "model.path",
        "model.model_path", "model_id_or_path"}) {
    const Flag* f = sink->Find(l, name);
    if (f == nullptr) continue;
    if (f->unresolved) {
      if (unknown_model.empty()) unknown_model = name;
      continue;
    }
    if (f->value == "true") {  // a bare flag: its value was an empty variable (MODEL=$1, no $1)
      sink->Warn("--" + std::string(name), "no value (an empty variable?); no model named");
      continue;
    }
    sink->SetFromFlag("model", f->value, name);
    has_model = true;
    break;
  }
  // A model flag set from a variable the script does not set (`--model_name_or_path $BASE_CKPT`,
  // given at submission): training all the same, its model unread (accepted with a note).
  if (!has_model && !unknown_model.empty()) {
    sink->UnreadUnknown("model", "--" + std::string(unknown_model));
    has_model = true;
  }
  // ms-swift 2.x names its model by its own --model_type (qwen2-7b-instruct) alone: training,
  // the model unread, its other flags read.
  const auto swift = [&l] {
    if (l.launcher == "swift") return true;
    for (std::string_view p : l.positionals)
      if (Basename(p) == "swift") return true;  // torchrun ... /opt/venv/bin/swift sft
    return false;
  };
  if (const Flag* t = sink->Find(l, "model_type"); !has_model && t != nullptr && swift()) {
    sink->MarkUnread("model", "--model_type", "(ms-swift's model type, not a Hugging Face id)");
    has_model = true;
  }
  // DetectLauncher drops a launch that names no model (with its values and warnings): the rest
  // would be read for nothing (python preprocessing steps, evaluation scripts). litgpt names its
  // model by a positional or --checkpoint_dir (the launcher table's), and its options are flags.
  if (!has_model && l.launcher != "litgpt") return;
  struct Map {
    std::string_view flag;
    std::string_view key;
  };
  static constexpr Map kDirect[] = {
      {"per_device_train_batch_size", "micro-batch"},
      {"per_gpu_train_batch_size", "micro-batch"},
      {"micro_batch_size", "micro-batch"},
      {"gradient_accumulation_steps", "grad-accum"},
      {"max_seq_length", "seq-len"},
      {"model_max_length", "seq-len"},
      {"block_size", "seq-len"},
      {"max_length", "seq-len"},
      {"max_seq_len", "seq-len"},
      {"cutoff_len", "seq-len"},
      {"seq_length", "seq-len"},
      {"lora_r", "lora-r"},
      {"lora_rank", "lora-r"},
      {"lora_dropout", "lora-dropout"},
      {"lora_target_modules", "lora-targets"},
      {"lora_target", "lora-targets"},
      // PEFT modules_to_save: TRL's ModelConfig, axolotl's key; LLaMA-Factory's additional_target.
      {"lora_modules_to_save", "modules-to-save"},
      {"additional_target", "modules-to-save"},
      {"num_train_epochs", "epochs"},
  };
  for (const Map& m : kDirect) {
    const Flag* f = sink->Find(l, m.flag);
    if (f == nullptr) continue;
    if (f->unresolved) {
      sink->Warn("--" + std::string(m.flag), "value depends on the environment; ignored");
      continue;
    }
    sink->SetFromFlag(m.key, f->value, m.flag);
  }
  ReadSeqLenCap(l, sink);
  ReadPreferenceStage(l, sink);
  if (l.launcher == "litgpt") ReadLitgptLoraTargets(l, sink);
  // litgpt's finetune scripts wrap the model in FSDPStrategy(activation_checkpointing_policy=
  // {Block}) when they run on more than one device (litgpt/finetune/lora.py, full.py, adapter.py);
  // pretrain's strategy checkpoints nothing.
  if (l.launcher == "litgpt" && !l.positionals.empty() &&
      l.positionals.front().starts_with("finetune") && sink->Get("sharding") == "fsdp-full" &&
      !sink->Has("activation-checkpointing"))
    sink->Set("activation-checkpointing", "full", "litgpt finetune on several devices");
  if (const Flag* f = sink->Find(l, "max_steps");
      f != nullptr && !f->unresolved && f->value != "-1")
    sink->Set("steps", f->value, "--max_steps");
  if (const Flag* f = sink->Find(l, "optim"); f != nullptr && !f->unresolved) {
    const std::string o = OptimizerName(f->value);
    if (o.empty())
      sink->Warn("--optim", "optimizer '" + Shown(f->value) + "' not modelled; adamw assumed");
    else
      sink->Set("optimizer", o, "--optim");
    // adamw_torch is torch.optim.AdamW's foreach step, adamw_torch_fused its fused one
    // (transformers trainer_optimizer.py); the default with torch >= 2.8 since transformers PR
    // #37358 (July 2025) is adamw_torch_fused.
    const std::string name = Lower(f->value);
    if (name == "adamw_torch" || name == "sgd")
      sink->Set("optimizer-impl", "foreach", "--optim");
    else if (name == "adamw_torch_fused")
      sink->Set("optimizer-impl", "fused", "--optim");
  }
  // Sharding: --deepspeed cfg.json (HF) / --deepspeed_config (launcher scripts), --fsdp,
  // accelerate.
  for (std::string_view name : {"deepspeed", "deepspeed_config"}) {
    const Flag* f = sink->Find(l, name);
    if (f == nullptr || f->value == "true") continue;
    deepspeed = true;
    if (f->unresolved) {  // --deepspeed $DS_CONFIG: a DeepSpeed config, which one is unknown
      sink->UnreadUnknown("sharding", "--" + std::string(name));
      break;
    }
    if (!f->file_read) ReadDeepspeedConfig(*f, "--" + std::string(name), sink);
  }
  if (const Flag* f = sink->Find(l, "fsdp"); f != nullptr && !f->unresolved) ReadFsdp(*f, sink);
  if (FlagTrue(sink->Find(l, "use_fsdp"))) {
    std::string shard = "fsdp-full";
    if (const Flag* s = sink->Find(l, "fsdp_sharding_strategy"); s != nullptr) {
      const std::string v = Lower(s->value);
      if (v == "2" || v == "shard_grad_op")
        shard = "fsdp-grad-op";
      else if (v == "3" || v == "no_shard")
        shard = "fsdp-no-shard";
      else if (v == "4" || v == "5" || v.starts_with("hybrid"))
        shard = "fsdp-hybrid";
    }
    sink->Set("sharding", shard, "--use_fsdp");
    if (FlagTrue(sink->Find(l, "fsdp_offload_params"))) {
      sink->Set("offload-params", "true", "--fsdp_offload_params");
      sink->Set("offload-optimizer", "true", "--fsdp_offload_params");
    }
    if (FlagTrue(sink->Find(l, "fsdp_activation_checkpointing")))
      sink->Set("activation-checkpointing", "full", "--fsdp_activation_checkpointing");
  }
  // accelerate launch --config_file cfg.yaml: when the line itself does not say how the state is
  // sharded, the file does, and fmte does not open it at submit time (a ZeRO stage in its name is
  // read from the name).
  if (const Flag* f = sink->Find(l, "config_file");
      l.launcher == "accelerate" && f != nullptr && !f->file_read && !sink->Has("sharding") &&
      !FlagTrue(sink->Find(l, "use_fsdp")) && !FlagTrue(sink->Find(l, "use_deepspeed"))) {
    if (f->unresolved) {  // --config_file $CFG: an accelerate config, which one is unknown
      sink->UnreadUnknown("sharding", "--config_file");
      sink->MarkUnread("activation-checkpointing", "--config_file", "(unknown value)");
    } else if (ReadZeroStageFromName(*f, "--config_file", sink) >= 0) {
      deepspeed = true;
    } else {
      sink->Unread("sharding", "--config_file", f->value,
                   "sharding not in the file name '" + Shown(f->value) +
                       "' (its contents were not read); set #FMTE sharding=...");
      // An accelerate FSDP config may also turn on activation checkpointing
      // (fsdp_activation_checkpointing); ParseJobRequest drops it when the line asks for it.
      sink->MarkUnread("activation-checkpointing", "--config_file", f->value);
    }
  }
  if (FlagTrue(sink->Find(l, "use_deepspeed"))) {
    deepspeed = true;
    if (const Flag* z = sink->Find(l, "zero_stage"); z != nullptr && !z->unresolved)
      sink->Set("sharding", z->value == "0" ? "ddp" : "zero" + std::string(z->value),
                "--zero_stage");
    if (const Flag* o = sink->Find(l, "offload_optimizer_device");
        o != nullptr && Lower(o->value) != "none")
      sink->Set("offload-optimizer", "true", "--offload_optimizer_device");
    if (const Flag* o = sink->Find(l, "offload_param_device");
        o != nullptr && Lower(o->value) != "none")
      sink->Set("offload-params", "true", "--offload_param_device");
  }
  // Precision: --bf16/--fp16 (TrainingArguments: autocast over fp32 weights; under DeepSpeed the
  // engine keeps 16-bit weights and an fp32 master copy), accelerate --mixed_precision.
  const bool bf16 = FlagTrue(sink->Find(l, "bf16"));
  const bool fp16 = FlagTrue(sink->Find(l, "fp16"));
  const std::string mode = deepspeed ? "mixed-" : "amp-";
  if (bf16 && fp16) {
    sink->Warn(
        "--bf16/--fp16",
        "both set (transformers refuses this combination); precision not taken from the script");
  } else if (bf16 || fp16) {
    sink->Set("precision", mode + (bf16 ? "bf16" : "fp16"), bf16 ? "--bf16" : "--fp16");
  } else if (const Flag* m = sink->Find(l, "mixed_precision"); m != nullptr && !m->unresolved) {
    const std::string v = Lower(m->value);
    if (v == "bf16" || v == "fp16")
      sink->Set("precision", mode + v, "--mixed_precision");
    else if (v == "no")
      sink->Set("precision", "fp32", "--mixed_precision");
  }
  // InternVL's finetune scripts spell it --grad_checkpoint (their ModelArguments).
  if (FlagTrue(sink->Find(l, "gradient_checkpointing")))
    sink->Set("activation-checkpointing", "full", "--gradient_checkpointing");
  else if (FlagTrue(sink->Find(l, "grad_checkpoint")))
    sink->Set("activation-checkpointing", "full", "--grad_checkpoint");
  if (FlagTrue(sink->Find(l, "torch_compile"))) sink->Set("compile", "true", "--torch_compile");
  // A TRL online trainer's sequences (GRPO/RLOO, run by TRL's own scripts or by scripts named for
  // them, such as open-r1's grpo.py) are its prompts and completions, not TRL's max_length default;
  // GKD's config is an SFTConfig, whose max_length it keeps. ms-swift, LLaMA-Factory and axolotl
  // name the lengths their own way.
  if (const auto o = OnlineObjective(*sink); o && *o != Objective::kGkd && RunsTrlTrainer(l)) {
    ReadTrlOnlineLength(l, sink);
    ReadTrlGeneration(l, sink);
  }
  if (IsTrlLaunch(l)) ReadTrlDefaults(l, sink);
  // A multimodal model's vision encoder frozen: LLaMA-Factory's freeze_vision_tower (its YAML
  // keys are flags here), InternVL's --freeze_backbone.
  for (std::string_view name : {"freeze_vision_tower", "freeze_backbone"})
    if (const Flag* f = sink->Find(l, name); f != nullptr && !f->unresolved)
      sink->SetFromFlag("freeze-vision", FlagTrue(f) ? "true" : "false", name);
  // Its language model frozen: InternVL's --freeze_llm (stage 1.5 trains the vision encoder and
  // projector), LLaMA-Factory's freeze_language_model.
  for (std::string_view name : {"freeze_llm", "freeze_language_model"})
    if (const Flag* f = sink->Find(l, name); f != nullptr && !f->unresolved)
      sink->SetFromFlag("freeze-language", FlagTrue(f) ? "true" : "false", name);
  ReadEvaluation(l, sink);
  ReadPeriodic(l, sink);
  ReadStateDict(l, sink);
  if (FlagTrue(sink->Find(l, "sync_each_batch")))
    sink->Set("sync-each-batch", "true", "gradient_accumulation_kwargs.sync_each_batch");
  if (FlagTrue(sink->Find(l, "use_liger_kernel")) || FlagTrue(sink->Find(l, "use_liger")))
    sink->Set("chunked-loss", "true", "--use_liger_kernel");
  if (const Flag* a = sink->Find(l, "attn_implementation"); a != nullptr)
    sink->Set("attention", Lower(a->value) == "eager" ? "eager" : "fused", "--attn_implementation");
  // Method: PEFT / QLoRA (bitsandbytes 4-bit base) / LLaMA-Factory.
  std::string_view lora_flag = "--use_peft";  // what says LoRA, for the origin
  lora = FlagTrue(sink->Find(l, "use_peft")) || FlagTrue(sink->Find(l, "model.use_peft"));
  if (!lora && sink->Find(l, "lora_r") != nullptr) {
    lora = true;
    lora_flag = "--lora_r";
  }
  if (const Flag* t = sink->Find(l, "finetuning_type"); t != nullptr) {
    const std::string v = Lower(t->value);
    if (v == "lora") {
      lora = true;
      lora_flag = "--finetuning_type";
    } else if (v == "full") {
      sink->Set("method", "full", "--finetuning_type");
    } else {
      sink->Warn("--finetuning_type", "'" + Shown(t->value) + "' not modelled");
    }
  }
  // DoRA: TRL/PEFT use_dora, LLaMA-Factory use_dora, axolotl peft_use_dora.
  for (std::string_view name : {"use_dora", "peft_use_dora"})
    if (FlagTrue(sink->Find(l, name))) sink->SetFromFlag("dora", "true", name);
  std::string quant;
  if (FlagTrue(sink->Find(l, "load_in_4bit"))) {
    quant = "nf4";
    if (const Flag* q = sink->Find(l, "bnb_4bit_quant_type");
        q != nullptr && Lower(q->value) == "fp4")
      quant = "fp4";
  } else if (FlagTrue(sink->Find(l, "load_in_8bit"))) {
    quant = "int8";
  } else if (const Flag* q = sink->Find(l, "quantization_bit"); q != nullptr) {
    quant = q->value == "4" ? "nf4" : q->value == "8" ? "int8" : "";
  }
  if (FlagTrue(sink->Find(l, "load_in_4bit")) && FlagTrue(sink->Find(l, "load_in_8bit")))
    sink->Warn("--load_in_4bit/--load_in_8bit", "both set; 4-bit assumed");
  qlora = !quant.empty();
  if (qlora) {
    sink->Set("method", "qlora", "--load_in_4bit");
    sink->Set("quant", quant, "--load_in_4bit");
    if (FlagTrue(sink->Find(l, "bnb_4bit_use_double_quant")) ||
        FlagTrue(sink->Find(l, "use_bnb_nested_quant")))
      sink->Set("double-quant", "true", "--bnb_4bit_use_double_quant");
  } else if (lora) {
    sink->Set("method", "lora", lora_flag);
  }
  ReadLoadDtype(l, deepspeed, sink);
  if (deepspeed) {
    sink->Set("framework", "deepspeed", l.launcher == "deepspeed" ? "deepspeed" : "--deepspeed");
    // The HF Trainer still saves and evaluates (framework deepspeed has no defaults of its own:
    // walltime.h PeriodicWorkOf): its save_steps and eval_steps defaults.
    if (!sink->Has("save-every"))
      sink->Set("save-every", std::to_string(kHfTrainerSaveSteps),
                "--deepspeed (HF Trainer save_steps default " +
                    std::to_string(kHfTrainerSaveSteps) + ")");
    if (sink->Has("eval-batch") && !sink->Has("eval-every"))
      sink->Set("eval-every", std::to_string(kHfTrainerEvalSteps),
                "--deepspeed (HF Trainer eval_steps default " +
                    std::to_string(kHfTrainerEvalSteps) + ")");
  } else if (!sink->Has("framework"))  // a config format's own (litgpt) stays
    sink->Set("framework", "hf", l.launcher);
  if (const auto o = OnlineObjective(*sink); o && RunsTrlTrainer(l))
    ReadTrlOnlineReference(l, sink, *o);
}

// ms-swift (modelscope/ms-swift; `swift sft|pt|rlhf`, its own flags over the HF Trainer's, read
// by ReadHfFlags first). Defaults from its argument classes (v3.12.6 swift/llm/argument/,
// 4.x swift/arguments/; 2.x swift/llm/utils/argument.py): train_type (4.x tuner_type, 2.x
// sft_type) lora; target_modules all-linear (2.x: the model's registered q/k/v list, PEFT's
// per-family default here); gradient_checkpointing true (etc/launchers.json "set"); QLoRA is
// quant_method bnb with quant_bits 4 (2.x quantization_bit 4, read by ReadHfFlags); the model is
// loaded in torch_dtype (default its config's, bf16 for today's models) and trained under that
// dtype's autocast, its weights unconverted (pure-bf16) unless DeepSpeed keeps an fp32 master;
// max_length defaults to the model's context length (2.x: 2048). Without NPROC_PER_NODE (or
// NNODES) swift runs one process, which spreads the model over every visible GPU (device_map)
// when there are several (swift/utils/env.py): how the model is split then is not read.
void ReadSwiftFlags(const LaunchLine& l, Sink* sink) {
  // 2.x names its method sft_type and its model model_id_or_path or model_type alone (3.x and
  // 4.x also take --model_type, beside --model).
  const bool v2 = sink->Find(l, "sft_type") != nullptr ||
                  sink->Find(l, "model_id_or_path") != nullptr ||
                  (sink->Find(l, "model_type") != nullptr && sink->Find(l, "model") == nullptr);
  // Method.
  std::string_view which;
  const Flag* type = KnownFlag(l, {"tuner_type", "train_type", "sft_type"}, &which);
  if (type != nullptr) {
    const std::string v = Lower(type->value);
    if (v == "full") {
      sink->SetFromFlag("method", "full", which);
    } else if (v == "lora" || v == "longlora" || v == "lora_llm" || v == "qalora") {
      if (sink->Get("method") != "qlora") sink->SetFromFlag("method", "lora", which);
    } else {
      sink->Warn("--" + std::string(which), "'" + Shown(type->value) +
                                                "' not modelled; estimated as LoRA (set #FMTE "
                                                "method=... to override)");
      if (sink->Get("method") != "qlora") sink->SetFromFlag("method", "lora", which);
    }
  } else if (!sink->Has("method")) {
    sink->Set("method", "lora", "swift (train_type default lora)");
  }
  // QLoRA: quant_method bnb with quant_bits 4 (8: int8); quant_bits alone quantises nothing.
  if (const Flag* m = sink->Find(l, "quant_method"); m != nullptr && Lower(m->value) == "bnb") {
    const Flag* bits = sink->Find(l, "quant_bits");
    const std::string_view b = bits != nullptr ? bits->value : std::string_view();
    if ((b == "4" || b == "8") && sink->Get("method") == "full") {
      sink->Warn("--quant_bits",
                 "full fine-tuning of a bitsandbytes-quantised model: ms-swift "
                 "trains adapters on it; estimated as full fine-tuning unquantised");
    } else if (b == "4" || b == "8") {
      sink->Set("method", "qlora", "--quant_bits");
      sink->Set("quant", b == "4" ? "nf4" : "int8", "--quant_bits");
      // bnb_4bit_use_double_quant defaults to true (quant_args.py).
      if (b == "4" && !(sink->Find(l, "bnb_4bit_use_double_quant") != nullptr &&
                        !FlagTrue(sink->Find(l, "bnb_4bit_use_double_quant"))))
        sink->Set("double-quant", "true", "--quant_bits (swift's bnb_4bit_use_double_quant)");
    }
  }
  // LoRA targets: target_modules (lists spaced: `--target_modules q_proj v_proj`, joined by the
  // line's list reading); all-linear and 2.x's ALL are every linear but the head; 2.x's DEFAULT
  // the model's registered list.
  if (const Flag* t = KnownFlag(l, {"target_modules", "lora_target_modules"}, &which);
      t != nullptr && !t->unresolved) {
    const std::string v = Lower(t->value);
    if (v == "all-linear" || v == "all" || v == "all_linear")
      sink->SetFromFlag("lora-targets", "all-linear", which);
    else if (v != "default")
      sink->SetFromFlag("lora-targets", t->value, which);
  } else if (!v2) {
    sink->Set("lora-targets", "all-linear", "swift (target_modules default all-linear)");
  }
  // A multimodal model's vision tower: frozen unless freeze_vit false (default true since 3.0;
  // 2.x false, launchers.json sets true).
  if (const Flag* f = sink->Find(l, "freeze_vit"); f != nullptr && !f->unresolved)
    sink->SetFromFlag("freeze-vision", FlagTrue(f) ? "true" : "false", "freeze_vit");
  else if (v2)
    sink->Set("freeze-vision", "false", "swift 2.x (freeze_vit default false)");
  // Gradient checkpointing is on unless turned off.
  if (const Flag* g = sink->Find(l, "gradient_checkpointing"); g != nullptr && !FlagTrue(g))
    sink->Set("activation-checkpointing", "none", "--gradient_checkpointing");
  // Precision: the weights as loaded (torch_dtype; 2.x dtype AUTO or none: the model's, bf16
  // for today's models) under that dtype's autocast; --bf16/--fp16 only choose the autocast.
  // DeepSpeed keeps an fp32 master copy; under FSDP accelerate upcasts the loaded low-precision
  // parameters to fp32 (accelerator.py prepare_model), as ReadLoadDtype says.
  const Flag* dtype = KnownFlag(l, {"torch_dtype", "dtype"}, &which);
  std::string dt = dtype != nullptr && !dtype->unresolved ? Lower(dtype->value) : "auto";
  if (dt == "auto") dt = FlagTrue(sink->Find(l, "fp16")) ? "float16" : "bfloat16";
  const std::string_view shard = sink->Get("sharding");
  const std::string mode = sink->Get("framework") == "deepspeed" ? "mixed-"
                           : shard.starts_with("fsdp")           ? "amp-"
                                                                 : "";
  const std::string origin =
      dtype != nullptr ? "--" + std::string(which) : "swift (the model's dtype, bf16 assumed)";
  if (dt == "bfloat16" || dt == "bf16")
    sink->Set("precision", mode.empty() ? "pure-bf16" : mode + "bf16", origin);
  else if (dt == "float16" || dt == "fp16" || dt == "float32" || dt == "fp32")
    // A float16 model trains under fp16 autocast, a float32 one too (model_args.py).
    sink->Set("precision", mode.empty() ? "amp-fp16" : mode + "fp16", origin);
  // Sequence length: the model's context length unless max_length (2.x: 2048).
  if (sink->Find(l, "max_length") == nullptr && !sink->Has("seq-len")) {
    if (v2) {
      sink->Set("seq-len", "2048", "swift 2.x (max_length default 2048)");
      sink->Set("seq-len-cap", "true", "swift 2.x (max_length default 2048)");
    } else {
      sink->MarkUnread("seq-len", "swift", "(max_length: the model's context length)");
    }
  }
  ReadSwiftOnline(l, sink);
  // Processes: NPROC_PER_NODE / NNODES on the line (or in the 4.x config's ENV map) start
  // torchrun, as does running swift's own script under torchrun; else one process. DeepSpeed and
  // FSDP refuse the one-process mode (train_args.py).
  bool torchrun = l.launcher == "torchrun" || !sink->Get("sharding").empty() ||
                  sink->Find(l, "env.nproc_per_node") != nullptr ||
                  sink->Find(l, "env.nnodes") != nullptr;
  for (std::string_view w : l.env_prefix)
    if (w.starts_with("NPROC_PER_NODE=") || w.starts_with("NNODES=")) torchrun = true;
  for (size_t i = 0; l.exported != nullptr && i < l.exported->size(); ++i)
    if ((*l.exported)[i] == "NPROC_PER_NODE" || (*l.exported)[i] == "NNODES") torchrun = true;
  if (!torchrun) sink->MarkUnread("sharding", "swift", "(one process: no NPROC_PER_NODE set)");
}

}  // namespace fmte::internal
