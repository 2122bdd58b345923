// TrainingJob: the normalised description of one LLM training job that the estimator needs
// (method, precision, optimizer, layout, batch, sequence, amount of work, hardware).
//
// Built from fmte-advise flags, from a Slurm submission (JobRequest) or from a recorded `fmte:`
// accounting record; validated once by ValidateJob, whose errors name the field.
//
// The value names below ("lora", "amp-bf16", "zero3", ...) are a contract shared by
// `fmte-advise estimate` flags, the SPANK options (`--fmte-*`) and `#FMTE key=value` lines.
// Every enum has exactly one name table (job.cc); Parse*/ToString go through it.
// Thread-safety: value types and immutable tables.
#ifndef FMTE_JOB_H_
#define FMTE_JOB_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/status.h"

namespace fmte {

struct BlockSpec;  // model.h

enum class Method { kFull, kLora, kQlora, kPromptTuning, kPrefixTuning };
// full | lora | qlora | prompt-tuning | prefix-tuning

enum class Precision { kFp32, kAmpBf16, kAmpFp16, kMixedBf16, kMixedFp16, kPureBf16 };
// fp32 | amp-bf16 | amp-fp16 | mixed-bf16 | mixed-fp16 | pure-bf16
//  amp-*:   fp32 weights, 16-bit autocast (HF Trainer --bf16/--fp16)
//  mixed-*: 16-bit weights + fp32 master copy (Megatron, DeepSpeed, FSDP MixedPrecision)
//  pure-*:  everything in bf16, optimizer states included

enum class Optimizer { kAdamW, kAdamW8bit, kSgd, kAdafactor };
// adamw | adamw-8bit | sgd | adafactor

enum class Sharding {
  kNone,
  kDdp,
  kZero1,
  kZero2,
  kZero3,
  kFsdpFull,
  kFsdpGradOp,
  kFsdpHybrid,
  kFsdpNoShard
};
// none | ddp | zero1 | zero2 | zero3 | fsdp-full | fsdp-grad-op | fsdp-hybrid | fsdp-no-shard

enum class Checkpointing { kNone, kSelective, kFull };  // none | selective | full
// Which layers full checkpointing recomputes (TrainingJob::recompute_method).
enum class RecomputeMethod { kUniform, kBlock, kInterval };  // uniform | block | interval
// What Megatron's selective recompute reruns (--recompute-modules, transformer_config.py
// recompute_modules; the default is core_attn alone): core_attn | moe_act | layernorm |
// mla_up_proj | mlp | moe | shared_experts.
enum class RecomputeModule {
  kCoreAttn,
  kMoeAct,
  kLayernorm,
  kMlaUpProj,
  kMlp,
  kMoe,
  kSharedExperts
};
enum class Attention { kFused, kEager };  // fused | eager
// How a sharded job saves its checkpoints: auto (the framework's default: full under the HF
// Trainer's FSDP, accelerate's FULL_STATE_DICT for FSDP1, and litgpt's FSDPStrategy
// state_dict_type="full"; sharded under torchtitan's and Megatron's distributed checkpoints and
// DeepSpeed's ZeRO checkpoints) | full (rank 0 gathers the whole model and optimizer state in its
// host memory; under ZeRO-3 the 16-bit weights, stage3_gather_16bit_weights_on_model_save) |
// sharded (each rank writes its own shard).
enum class StateDict { kAuto, kFull, kSharded };
// How torch.optim's AdamW/SGD steps: auto (the framework's default: HF Trainer's
// adamw_torch_fused with torch >= 2.8 since transformers PR #37358 (July 2025), torchtitan's
// "fused"; torch.optim itself foreach) | foreach (one state-sized temporary list) | fused (in
// place, no temporary).
enum class OptimizerImpl { kAuto, kForeach, kFused };  // auto | foreach | fused
enum class Quant { kNone, kNf4, kFp4, kInt8 };         // none | nf4 | fp4 | int8
// litgpt: Lightning's litgpt (its own model code, LoRA and loops; Fabric strategies).
enum class Framework { kHf, kTorchtune, kMegatron, kDeepspeed, kFsdp, kLitgpt };
// hf | torchtune | megatron | deepspeed | fsdp | litgpt
// FP8 linears: none | tensorwise | rowwise | delayed | mxfp8 (torchao's recipes; Transformer
// Engine's current/delayed scaling and MXFP8 under Megatron).
enum class Fp8 { kNone, kTensorwise, kRowwise, kDelayed, kMxfp8 };
// How expert parallelism moves a MoE layer's tokens (Megatron's moe_token_dispatcher_type,
// megatron/core/transformer/moe/token_dispatcher.py): alltoall (each token's k copies to their
// experts' ranks and back), allgather (every token to every rank of the expert TP x EP group,
// reduce-scattered back; Megatron-Core's default), flex (DeepEP / HybridEP: each token once per
// destination rank); auto: not said, counted as alltoall (time.cc).
enum class MoeDispatcher { kAuto, kAlltoall, kAllgather, kFlex };
// What the job optimises (docs/memory.md "Preference objectives"): sft (supervised or
// pre-training: one sequence per sample) | dpo (a chosen and a rejected completion per sample
// against a frozen reference; IPO and the other DPO losses run the same) | orpo | simpo | cpo
// (pairs without a reference) | kto (unpaired completions against a reference, with a KL set) |
// grpo | rloo | ppo | gkd (online: the policy generates completions, several per prompt, in every
// step; GKD's on-policy share of them). For the online objectives fmte estimates the policy's
// update step only (one sequence per completion); the generation, and any reference, reward,
// value or teacher model, are not modelled.
enum class Objective { kSft, kDpo, kOrpo, kSimpo, kCpo, kKto, kGrpo, kRloo, kPpo, kGkd };
// Whether the objective compares the policy with a reference model's log-probabilities: dpo and
// kto (held as a model, taken from the base with the adapters off, or precomputed).
constexpr bool UsesReference(Objective o) { return o == Objective::kDpo || o == Objective::kKto; }
// Whether the policy generates its own training completions in every step (grpo, rloo, ppo, gkd):
// their generation (an inference engine's or model.generate's time, for hundreds of tokens per
// completion) is not modelled, so such a job has no wall time and fmte sets no time limit on it.
constexpr bool GeneratesCompletions(Objective o) {
  return o == Objective::kGrpo || o == Objective::kRloo || o == Objective::kPpo ||
         o == Objective::kGkd;
}

// Name tables. Parse* accept exactly the names above (case-sensitive, as the CLI documents);
// the error names `field` and lists the accepted values.
std::string_view ToString(Method v);
std::string_view ToString(Precision v);
std::string_view ToString(Optimizer v);
std::string_view ToString(Sharding v);
std::string_view ToString(Checkpointing v);
std::string_view ToString(RecomputeMethod v);
std::string_view ToString(RecomputeModule v);
std::string_view ToString(Attention v);
std::string_view ToString(StateDict v);
std::string_view ToString(OptimizerImpl v);
std::string_view ToString(Quant v);
std::string_view ToString(Framework v);
std::string_view ToString(Fp8 v);
std::string_view ToString(MoeDispatcher v);
std::string_view ToString(Objective v);

Result<Method> ParseMethod(std::string_view s, std::string_view field = "method");
Result<Precision> ParsePrecision(std::string_view s, std::string_view field = "precision");
Result<Optimizer> ParseOptimizer(std::string_view s, std::string_view field = "optimizer");
Result<Sharding> ParseSharding(std::string_view s, std::string_view field = "sharding");
Result<Checkpointing> ParseCheckpointing(std::string_view s,
                                         std::string_view field = "activation-checkpointing");
Result<RecomputeMethod> ParseRecomputeMethod(std::string_view s,
                                             std::string_view field = "recompute-method");
// A RecomputeModule's bit in TrainingJob::recompute_modules.
constexpr uint32_t RecomputeModuleBit(RecomputeModule m) { return 1u << static_cast<uint32_t>(m); }
// A list of RecomputeModule names separated by commas or blanks, in Python's list syntax too
// ("[moe, layernorm]", "['moe']"), as a bit set (1 << module); an empty list is 0.
Result<uint32_t> ParseRecomputeModules(std::string_view s,
                                       std::string_view field = "recompute-modules");
// The names of a bit set, comma-separated in enum order ("" for 0).
std::string RecomputeModulesText(uint32_t modules);
Result<Attention> ParseAttention(std::string_view s, std::string_view field = "attention");
Result<StateDict> ParseStateDict(std::string_view s, std::string_view field = "state-dict");
Result<OptimizerImpl> ParseOptimizerImpl(std::string_view s,
                                         std::string_view field = "optimizer-impl");
Result<Quant> ParseQuant(std::string_view s, std::string_view field = "quant");
Result<Framework> ParseFramework(std::string_view s, std::string_view field = "framework");
Result<Fp8> ParseFp8(std::string_view s, std::string_view field = "fp8");
Result<MoeDispatcher> ParseMoeDispatcher(std::string_view s,
                                         std::string_view field = "moe-dispatcher");
Result<Objective> ParseObjective(std::string_view s, std::string_view field = "objective");

// "full|lora|qlora|prompt-tuning|prefix-tuning" etc., for help texts and error messages.
std::string AcceptedNames(Method);
std::string AcceptedNames(Precision);
std::string AcceptedNames(Optimizer);
std::string AcceptedNames(Sharding);
std::string AcceptedNames(Checkpointing);
std::string AcceptedNames(RecomputeMethod);
std::string AcceptedNames(RecomputeModule);
std::string AcceptedNames(Attention);
std::string AcceptedNames(StateDict);
std::string AcceptedNames(OptimizerImpl);
std::string AcceptedNames(Quant);
std::string AcceptedNames(Framework);
std::string AcceptedNames(Fp8);
std::string AcceptedNames(MoeDispatcher);
std::string AcceptedNames(Objective);

// How often a job does something periodic during training (checkpoint saves, evaluations), as
// the frameworks let people say it: every N optimizer steps, N times per epoch, a fraction of the
// run's steps (the HF Trainer's save_steps/eval_steps below 1), never, or unset (the framework's
// default: walltime.h).
struct Every {
  enum class Unit : uint8_t { kUnset, kNever, kSteps, kPerEpoch, kFraction };
  Unit unit = Unit::kUnset;
  double value = 0;  // steps (>= 1), times per epoch (> 0) or fraction of the run (0 < f < 1)
  bool operator==(const Every& o) const { return unit == o.unit && value == o.value; }
};
// "default" | "never" | "N" (steps) | "N/epoch" | "0.F" (a fraction of the run's steps); the error
// names `field` and lists the forms.
Result<Every> ParseEvery(std::string_view s, std::string_view field);
// The form ParseEvery reads back ("500", "2/epoch", "0.25", "never", "default").
std::string ToString(const Every& e);
// The HF Trainer's default save_steps and eval_steps (transformers TrainingArguments: save_steps
// 500; eval_steps None, then logging_steps, 500): what a job under it that says nothing does,
// also under --deepspeed (walltime.h PeriodicWorkOf, the HF reader).
inline constexpr int64_t kHfTrainerSaveSteps = 500;
inline constexpr int64_t kHfTrainerEvalSteps = 500;

// Is the model state sharded across data-parallel ranks (ZeRO-3 / FSDP full or hybrid)?
bool ShardsWeights(Sharding s);
bool ShardsGradients(Sharding s);  // ZeRO-2/3, FSDP full/grad-op/hybrid
bool ShardsOptimizer(Sharding s);  // ZeRO-1/2/3, FSDP full/grad-op/hybrid
bool ShardsWithFsdp(Sharding s);   // FSDP full/grad-op/hybrid (not NO_SHARD)

// Bytes per element that replace the ones the precision, framework and method imply (custom
// figures: fmte-advise estimate --overrides, section "memory"); a negative value keeps the
// model's own (memory.h ElementBytesUsed says which it chose).
struct ElementBytes {
  double param = -1;            // trainable parameters' persistent copy on the GPU
  double grad = -1;             // their gradients
  double master = -1;           // fp32 master copy kept by the optimizer (0: none)
  double optimizer_state = -1;  // one optimizer state element (Adam keeps two per parameter)
  double activation = -1;       // saved activations
  double frozen_weight = -1;    // frozen (PEFT base) weights that are not quantised
};

struct TrainingJob {
  // What is trained. The architecture itself lives in ModelArch (model.h); this is its id/path.
  std::string model;
  Method method = Method::kFull;
  Precision precision = Precision::kAmpBf16;
  Optimizer optimizer = Optimizer::kAdamW;
  OptimizerImpl optimizer_impl = OptimizerImpl::kAuto;
  Framework framework = Framework::kHf;

  // Batch and sequence, per GPU (per data-parallel rank).
  int64_t micro_batch = 1;
  int64_t seq_len = 2048;
  // seq_len is a truncation limit, not the length of every batch: the trainer cuts samples to it
  // and pads each micro-batch to its longest sample (LLaMA-Factory cutoff_len, TRL max_length,
  // axolotl sequence_len, torchtune max_seq_len, without packing). Estimates take it (the peak of
  // a micro-batch that reaches it); the policy does not reject on it, since the real length is
  // the data's.
  bool seq_len_is_cap = false;
  int64_t grad_accum = 1;
  // Sequences per GPU in an evaluation batch when the job evaluates during (or after) training:
  // the forward pass under no_grad with the model and optimizer states still on the GPU
  // (memory phase "evaluation"). 0: the job does not evaluate, or fmte was not told. The HF
  // Trainer evaluates with per_device_eval_batch_size (8 unless set) when eval_strategy is steps
  // or epoch; axolotl with eval_batch_size (its micro_batch_size unless set) when val_set_size
  // or test_datasets give it an evaluation set.
  int64_t eval_batch = 0;

  // Layout. gpus = tp * cp * pp * dp. gpus_per_node <= 0 means min(gpus, 8).
  int64_t gpus = 1;
  int64_t gpus_per_node = 0;
  std::string gpu;  // catalog name or alias ("A100-80GB", "H100-SXM", ...)
  Sharding sharding = Sharding::kNone;
  bool offload_optimizer = false;
  bool offload_params = false;
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t vpp = 1;  // virtual pipeline stages per GPU (interleaved 1F1B when > 1)
  // Expert parallelism: each MoE layer's routed experts are split over ep ranks of the
  // data-parallel group (Megatron --expert-model-parallel-size, torchtitan expert_parallel_degree);
  // With the default expert tensor parallelism (etp 0: the experts split by tp like every linear)
  // ep divides dp * cp. Megatron's MoE parallel folding sets the experts' own tensor-parallel
  // size (--expert-tensor-parallel-size, usually 1) and lays etp x ep x edp over the tp x cp x dp
  // ranks of a stage: etp * ep divides tp * cp * dp.
  int64_t ep = 1;
  int64_t etp = 0;
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAuto;  // with ep > 1
  // Context parallelism: each sequence is split over cp ranks, which hold the same weights and
  // reduce their gradients together with the data-parallel ranks (Megatron
  // --context-parallel-size, torchtitan context_parallel_degree, DeepSpeed-Ulysses sequence
  // parallel size): a rank computes and keeps activations for seq_len / cp tokens, and sharded
  // states are split over dp * cp ranks (Megatron's data-parallel group with context parallel,
  // torchtitan's dp_shard_cp mesh).
  int64_t cp = 1;
  bool sequence_parallel = false;
  Fp8 fp8 = Fp8::kNone;  // FP8 compute of the linears (docs/memory.md "FP8")
  // Megatron precision options (docs/memory.md "Megatron's precision options"), both set by
  // Megatron-Bridge's performance recipes: gradients accumulated and reduced in bf16 instead of
  // fp32 main_grad buffers (--grad-reduce-in-bf16, Bridge ddp.grad_reduce_in_fp32=false), and FP8
  // primary weights of the transformer layers' linears (--fp8-param-gather, Bridge
  // mixed_precision.fp8_param_gather).
  bool grad_reduce_bf16 = false;
  bool fp8_params = false;
  // Megatron's precision-aware optimizer with Adam's moments in bf16 (--use-precision-aware-
  // optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16; Bridge optimizer.exp_avg_dtype and
  // exp_avg_sq_dtype torch.bfloat16, set by its MoE recipes): 2 bytes per moment, the fp32 main
  // params kept.
  bool optimizer_states_bf16 = false;

  // The objective (Objective) and, for dpo and kto, whether the reference model's
  // log-probabilities were computed once before training (TRL precompute_ref_log_probs: the
  // trainer then holds no reference model and runs no reference forward in its steps).
  Objective objective = Objective::kSft;
  bool reference_precomputed = false;
  // An online objective's KL term against a frozen reference model (TRL GRPO/RLOO with beta above
  // 0: GRPO's default is 0.0 since TRL 0.19, RLOO's 0.05; ms-swift GRPO unless --beta 0, its
  // default 0.04, and PPO; verl's use_kl_loss or use_kl_in_reward): full fine-tuning keeps one
  // beside the policy, placed as its weights are (KeepsReferenceModel); PEFT disables the
  // adapters instead.
  bool kl_reference = false;
  // An online objective's value model (PPO with GAE: verl's critic, TRL's and ms-swift's PPO value
  // model) trained on the same GPUs: counted as a second copy of the policy (same model, method
  // and sharding; a value head in place of the vocabulary), whose weights and optimizer states stay
  // resident while the policy trains (its own update runs apart, with the policy's states
  // resident in the same way).
  bool critic = false;
  // The completion's tokens in each sequence of an online objective (TRL's and ms-swift's
  // max_completion_length, a cap): their GRPO/RLOO trainers ask the model for the logits of the
  // completion only (logits_to_keep) and take its log-probabilities with selective_log_softmax,
  // row by row (trl/trainer/utils.py). 0: unknown, the whole sequence's logits are counted.
  int64_t completion_len = 0;
  // An inference engine inside the training processes that generates the completions of an
  // online objective (TRL's vLLM with vllm_mode colocate, verl's rollout, ms-swift's and
  // OpenRLHF's colocated vLLM): the share of each GPU's memory it holds (vLLM's
  // gpu_memory_utilization: V1 sizes its KV cache so that its weights, activations, graphs and
  // cache take that fraction of the GPU's total memory, vllm/v1/worker/gpu_worker.py
  // determine_available_memory), 0 where it runs elsewhere or there is none; and whether it
  // sleeps while the policy trains (vLLM sleep mode: TRL vllm_enable_sleep_mode puts it to sleep
  // level 2 after each generate, verl frees its weights and cache after each rollout), so that its
  // share is held only while it generates, beside the trainer's resident states
  // (docs/memory.md "Generation engine").
  double generation_memory = 0;
  bool generation_sleeps = false;
  // Sequences one GPU generates at once with the trainer's own model (model.generate: TRL's
  // GRPO/RLOO without vLLM generate per_device_train_batch_size x steps_per_generation completions
  // per GPU in one call): their KV cache; 0 where an engine (or another process) generates.
  int64_t generation_batch = 0;
  // Whether, under ZeRO-3, each GPU gathers the whole model's 16-bit weights at once to generate
  // or to sync them into the engine (TRL ds3_gather_for_generation, true by default, around
  // model.generate; TRL's sync of a PEFT model into vLLM; ms-swift's sync in one batch,
  // move_model_batches unset) instead of one module at a time.
  bool generation_gathers = false;

  // Memory savers.
  Checkpointing activation_checkpointing = Checkpointing::kNone;
  // Which layers full checkpointing recomputes, with recompute_num_layers = N (Megatron
  // --recompute-method/--recompute-num-layers, megatron/core/transformer/transformer_block.py
  // _checkpointed_forward; torchtitan activation_checkpoint.selective_ac_option = "N",
  // torchtitan/distributed/activation_checkpoint.py): kUniform, groups of N layers, each group's
  // input kept and the whole group rebuilt in its backward (N = 1: every layer, the usual full
  // checkpointing); kBlock, the first N layers of each pipeline stage (of each virtual chunk),
  // the others keep all their activations; kInterval, every Nth layer (torchtitan), the others
  // keep all their activations.
  RecomputeMethod recompute_method = RecomputeMethod::kUniform;
  int64_t recompute_num_layers = 1;
  // What selective checkpointing reruns: a bit set of RecomputeModule (Megatron
  // --recompute-modules, Megatron-Bridge model.recompute_modules); 0 = Megatron's default,
  // core_attn. Read only with activation_checkpointing kSelective (Recomputes).
  uint32_t recompute_modules = 0;
  Attention attention = Attention::kFused;
  StateDict state_dict = StateDict::kAuto;
  // Whether a checkpoint save gathers the full state on rank 0: state_dict full, or auto where the
  // framework's default is full (FSDP under the HF Trainer and litgpt). Only FSDP and ZeRO-3 jobs
  // gather.
  bool SavesFullStateDict() const;
  // Whether the job names its attention (--attention, #FMTE attention=); when it does not, a model
  // whose config.json pins transformers to eager attention runs eager under HF (AttentionUsed).
  bool attention_given = false;
  bool chunked_loss = false;
  bool compile = false;
  bool activation_offload = false;
  bool optimizer_in_backward = false;
  // HF Trainer / accelerate under FSDP: gradients reduced every micro-batch (accelerate's
  // GradientAccumulationPlugin sync_each_batch) instead of accumulated unsharded under no_sync
  // (docs/memory.md "Gradient accumulation under FSDP").
  bool sync_each_batch = false;
  // QLoRA / 8-bit under PEFT: prepare_model_for_kbit_training (peft/utils/other.py) casts the
  // weights it does not quantise (embeddings, norms, head) to fp32 (true, the HF default). false:
  // they stay in the model's dtype, as axolotl leaves them for adapters (its model loader converts
  // norms and embedding modules back to cfg.torch_dtype after the cast, or skips the cast under
  // FSDP and ZeRO-3).
  bool kbit_upcast = true;
  // Full fine-tuning of a multimodal model with its vision encoder and projector frozen (no
  // gradients or optimizer states for them): LLaMA-Factory's default (freeze_vision_tower and
  // freeze_multi_modal_projector true), InternVL's --freeze_backbone. No effect on text models.
  bool freeze_vision = false;
  // Full fine-tuning of a multimodal model with its language model frozen (embeddings, blocks,
  // final norm, head: no gradients or optimizer states, no weight-gradient products): only the
  // vision encoder and projector train, as in InternVL's stage 1.5 (--freeze_llm) and
  // LLaMA-Factory's freeze_language_model. Backward still runs through the language model to
  // reach them, so its activations stay (less the inputs its frozen linears no longer keep).
  bool freeze_language = false;
  // Whether the language model's own weights train: full fine-tuning without freeze_language.
  bool TrainsLanguageModel() const { return method == Method::kFull && !freeze_language; }
  // Whether a multimodal model's vision encoder and projector train: full fine-tuning without
  // freeze_vision (no effect on a text model, or where the framework does not load them).
  bool TrainsVisionTower() const { return method == Method::kFull && !freeze_vision; }
  // FSDP1 units that hold frozen weights beside trainable ones (use_orig_params=True with a wrap
  // policy by whole blocks: litgpt up to v0.5.8, FSDPStrategy(auto_wrap_policy={Block})): the
  // unit's flat parameter requires grad as a whole, so every weight in it gets a gradient that is
  // kept, accumulated and reduced as in full fine-tuning. The HF Trainer wraps PEFT's trainable
  // modules on their own (transformers update_fsdp_plugin_peft), litgpt 0.5.9 wraps each Linear
  // alone and 0.5.10 moved to FSDP2, where frozen parameters get no gradient.
  bool fsdp_frozen_grads = false;
  // QLoRA under bitsandbytes 0.41-0.43.1, whose 4-bit product (MatMul4Bit) keeps each quantised
  // linear's input on its graph node (ctx.tensors = (A, B), an attribute, not save_for_backward;
  // (None, B) from 0.43.2, bitsandbytes PR #1270): the input lives as long as the step's graph.
  // litgpt's loops keep the last step's logits, and so its graph, until the next forward returns
  // (litgpt pinned bitsandbytes 0.42.0 in 2024; >= 0.45.2 on Linux since).
  bool bnb_ctx_inputs = false;
  // QLoRA (or LoRA on an 8-bit base) whose routed experts are quantised too: axolotl's
  // quantize_moe_experts, unsloth's 4-bit experts, transformers 4.x (each expert an nn.Linear).
  // Without it, a job on transformers (PeftLoraOnTransformers) keeps them in 16 bits: transformers
  // 5 stores them as stacked nn.Parameter, which bitsandbytes' nn.Linear replacement skips
  // (fmte::KeepsExpertsUnquantized, lora.h).
  bool quantize_experts = false;

  // Parameter-efficient methods.
  int64_t lora_r = 16;
  // PEFT LoraConfig.lora_dropout (its default 0: nn.Identity; above 0 nn.Dropout saves a mask of
  // every adapted module's input).
  double lora_dropout = 0;
  // Module names (q_proj,v_proj,... or roles q,k,v,o,gate,up,down) or the single entry
  // "all-linear". Empty: the framework's default (PEFT: the model family's default targets).
  std::vector<std::string> lora_targets;
  // PEFT modules_to_save (TRL --lora_modules_to_save, axolotl lora_modules_to_save, LLaMA-Factory
  // additional_target): the embeddings (embed_tokens) and/or the output head (lm_head) trained in
  // full beside the adapters, each as a copy of its own (ModulesToSaveWrapper). Empty: none.
  bool save_embedding = false, save_head = false;
  // The trainer casts every trainable parameter to fp32 after PEFT has wrapped the model
  // (LLaMA-Factory's cast_trainable_params_to_fp32, model/adapter.py, unless pure_bf16): the
  // modules_to_save copies train in fp32, not in the loaded dtype.
  bool trainable_fp32 = false;
  // DoRA (PEFT use_dora, axolotl peft_use_dora, torchtune use_dora): LoRA with a trained magnitude
  // per output feature. Not modelled (ValidateJob refuses it for LoRA methods as Unsupported, so
  // the job is accepted unestimated, or rejected where fmte.conf says OnError=reject):
  // its forward recomputes the base output and keeps it and the LoRA output for the magnitude's
  // gradient, and depending on the PEFT version a cast copy of every adapted weight.
  bool dora = false;
  Quant quant = Quant::kNone;  // qlora with kNone means nf4
  bool double_quant = false;
  int64_t virtual_tokens = 20;  // prompt/prefix tuning

  // Amount of work (the time estimate). 0 means "not given".
  int64_t tokens = 0;
  int64_t samples = 0;
  double epochs = 0;
  int64_t steps = 0;
  // Periodic work beside the steps (the wall time's checkpoint writes and evaluation passes):
  // how often the job saves its training state and evaluates, and the sequences of one
  // evaluation pass over all ranks (0: unknown; between 0 and 1: that share of `samples`, as
  // axolotl's val_set_size). Unset: the framework's defaults (walltime.h).
  Every save_every;
  Every eval_every;
  double eval_samples = 0;
  int64_t global_batch = 0;  // sequences per optimizer step; default micro_batch * grad_accum * dp
  std::string cluster;       // cluster/regressor set name, e.g. "Perlmutter"
  double inter_node_gbps = 0;  // network bandwidth per node between nodes, Gb/s; 0 = from config
  ElementBytes element_bytes;  // custom figures (all unset unless a user overrides them)

  // Derived helpers.
  int64_t EffectiveGpusPerNode() const;  // gpus_per_node, or min(gpus, 8)
  int64_t Nodes() const;                 // ceil(gpus / gpus_per_node)
  int64_t ModelParallel() const;         // tp * cp * pp: the GPUs of one data-parallel replica
  int64_t DataParallel() const;          // gpus / (tp * cp * pp); REQUIRES: ValidateJob ok
  // dp * cp: the ranks that hold the same weights, reduce their gradients together and shard
  // ZeRO/FSDP states among them.
  int64_t DataContextParallel() const;
  // Tokens of each sequence one rank computes: seq_len / cp.
  int64_t LocalSeqLen() const;
  // Whether gradients of later micro-batches accumulate unsharded on every rank: the HF Trainer
  // under a sharding FSDP without sync_each_batch (docs/memory.md "Gradient accumulation under
  // FSDP").
  bool AccumulatesUnshardedGradients() const;
  // Whether the frozen weights of a PEFT job carry gradients: fsdp_frozen_grads under an FSDP
  // sharding (docs/memory.md "Frozen weights inside FSDP units").
  bool GradientsCoverFrozenWeights() const;
  // Whether they may, although the job does not say so: litgpt's PEFT jobs under FSDP, which
  // litgpt up to v0.5.8 wraps by whole blocks (memory.bound_bytes covers that reading).
  bool MayCoverFrozenWeights() const;
  // Whether the previous step's 4-bit linear inputs are still allocated at the end of a forward:
  // bnb_ctx_inputs in a litgpt QLoRA job without checkpointing (docs/memory.md "litgpt QLoRA
  // under bitsandbytes before 0.43.2"). MayKeepLastStepQuantInputs: such a job whatever its
  // bitsandbytes (memory.bound_bytes covers that reading).
  bool KeepsLastStepQuantInputs() const;
  bool MayKeepLastStepQuantInputs() const;
  // Whether the optimizer steps with torch's foreach implementation (one op at a time over every
  // tensor, torch/optim/adamw.py _multi_tensor_adamw): optimizer_impl foreach, or auto where the
  // framework builds torch.optim's AdamW or SGD with its defaults (fms-fsdp and other plain FSDP
  // loops, litgpt); the HF Trainer's default adamw_torch_fused, torchtitan's fused and
  // Megatron/DeepSpeed/torchtune's own kernels are not.
  bool ForeachOptimizerStep() const;
  // Whether the job's LoRA is PEFT's on a transformers model (the HF Trainer and the frameworks
  // on it: hf, deepspeed, fsdp). transformers 5 stores a mixture of experts' routed experts as
  // stacked 3-D parameters (gate_up_proj, down_proj), which PEFT adapts with its ParamWrapper
  // (peft/tuners/lora/layer.py; transformers_weight_conversion.py maps all-linear and
  // gate/up/down_proj to them): every forward materialises every expert's delta weight
  // (docs/time.md "LoRA on a mixture of experts").
  bool PeftLoraOnTransformers() const;
  // The experts' tensor-parallel size: etp, or tp when not set.
  int64_t ExpertTensorParallel() const;
  // Of a pipeline stage's `layers` (in `chunks` virtual chunks), how many full checkpointing
  // recomputes (recompute_method); 0 without full checkpointing.
  int64_t RecomputedLayers(int64_t layers, int64_t chunks) const;
  // How many layers share one kept input: recompute_num_layers for kUniform, else 1.
  int64_t RecomputeGroup() const;
  // Whether selective checkpointing reruns `m` (recompute_modules, or core_attn by default).
  // Megatron's modules; a block under OpLevelSac runs torchtitan's policy instead.
  bool Recomputes(RecomputeModule m) const;
  // Whether `block` runs under torchtitan's op-level selective activation checkpointing:
  // "selective" with the PyTorch-native FSDP framework (torchtitan's activation_checkpoint.mode;
  // Megatron's "selective" drops the attention core instead), on a dense block (MoE experts run as
  // grouped mm, not aten.mm: estimated as Megatron-style selective, which keeps more). The policy
  // (torchtitan/distributed/activation_checkpoint.py, _apply_op_sac) saves the outputs of SDPA and
  // of every other aten.mm in forward order (the 1st, 3rd, ...) and recomputes the rest from them
  // while the block's backward runs.
  bool OpLevelSac(const BlockSpec& block) const;
  // Ranks that hold the same routed experts and shard their states (Megatron's expert data
  // parallel): tp * cp * dp / (etp * ep).
  int64_t ExpertDataParallel() const;
  // Sequences the model runs per sample: 2 for the pairwise objectives (dpo, orpo, simpo, cpo),
  // whose trainers put the chosen and the rejected completion of each pair through the model as
  // one batch of twice the micro-batch (TRL's DPOTrainer and CPOTrainer/ORPOTrainer
  // concatenated_forward, LLaMA-Factory's CustomDPOTrainer, ms-swift's, OpenRLHF's
  // DPOTrainer concatenated_forward), else 1.
  int64_t SequencesPerSample() const;
  // Forward passes under no_grad that each micro-batch runs beside the policy's own, each over
  // the same number of sequences: dpo, the reference's over the pair (TRL compute_loss after the
  // policy's forward); kto, the reference's over the completions and over the KL set's
  // mismatched completions, and the policy's over the KL set (TRL KTOTrainer forward,
  // calculate_KL); with precomputed reference log-probabilities only kto's policy KL pass.
  int64_t ExtraForwardPasses() const;
  // Whether a frozen reference model stays on the GPUs during training: dpo and kto full
  // fine-tuning without precomputed reference log-probabilities. PEFT methods take the
  // reference from the base model with the adapters disabled (TRL use_adapter /
  // disable_adapter, LLaMA-Factory and ms-swift ref_model None for LoRA).
  bool KeepsReferenceModel() const;
  // The job as the model's passes see it: micro_batch, eval_batch and global_batch counted in
  // sequences (SequencesPerSample() per sample), for the memory and step-time models. This job
  // itself where they are the same (one sequence per sample); else the pass, built in `storage`.
  const TrainingJob& ModelPass(std::optional<TrainingJob>* storage) const;
};

// Checks ranges and combinations that do not need the architecture (positive sizes, tp*pp
// dividing gpus, offload only with sharding that supports it, quant only with qlora, ...).
// Errors name the field as the CLI spells it ("--tp").
Status ValidateJob(const TrainingJob& job);

struct ModelArch;
// The attention kernel the job runs: its own --attention when given, else eager where the model's
// config.json pins transformers to it (ModelArch::config_eager_attention, the HF framework), else
// fused. Every mechanism that depends on the kernel asks this.
Attention AttentionUsed(const ModelArch& model, const TrainingJob& job);
// Whether the job loads the model's vision encoder (ModelArch::vision_params): a multimodal model
// under any framework but litgpt, which builds the language model alone. Its weights are then on
// the first stage, and its images add activations and time that depend on the data.
bool LoadsVisionTower(const ModelArch& model, const TrainingJob& job);
// Whether transformers hands SDPA an explicit mask in the layers with a sliding window
// (ModelArch::sliding_window_layers): the HF framework, fused attention and a context that reaches
// the window. The flash kernel is then ruled out: the memory-efficient kernel computes every score
// (not half) and saves the mask, converted to the query's dtype, for backward.
bool HfMasksAttention(const ModelArch& model, const TrainingJob& job, double context);

}  // namespace fmte

#endif  // FMTE_JOB_H_
