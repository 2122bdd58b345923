#include "fmte/job.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <utility>

#include "fmte/model.h"
#include "fmte/text.h"

namespace fmte {
namespace {

// One table per enum: the single source of the value names (a contract with the CLI, SPANK
// options and #FMTE lines).
template <typename E, size_t N>
using NameTable = std::array<std::pair<E, std::string_view>, N>;

constexpr NameTable<Method, 5> kMethodNames{{{Method::kFull, "full"},
                                             {Method::kLora, "lora"},
                                             {Method::kQlora, "qlora"},
                                             {Method::kPromptTuning, "prompt-tuning"},
                                             {Method::kPrefixTuning, "prefix-tuning"}}};
constexpr NameTable<Precision, 6> kPrecisionNames{{{Precision::kFp32, "fp32"},
                                                   {Precision::kAmpBf16, "amp-bf16"},
                                                   {Precision::kAmpFp16, "amp-fp16"},
                                                   {Precision::kMixedBf16, "mixed-bf16"},
                                                   {Precision::kMixedFp16, "mixed-fp16"},
                                                   {Precision::kPureBf16, "pure-bf16"}}};
constexpr NameTable<Optimizer, 4> kOptimizerNames{{{Optimizer::kAdamW, "adamw"},
                                                   {Optimizer::kAdamW8bit, "adamw-8bit"},
                                                   {Optimizer::kSgd, "sgd"},
                                                   {Optimizer::kAdafactor, "adafactor"}}};
constexpr NameTable<Sharding, 9> kShardingNames{{{Sharding::kNone, "none"},
                                                 {Sharding::kDdp, "ddp"},
                                                 {Sharding::kZero1, "zero1"},
                                                 {Sharding::kZero2, "zero2"},
                                                 {Sharding::kZero3, "zero3"},
                                                 {Sharding::kFsdpFull, "fsdp-full"},
                                                 {Sharding::kFsdpGradOp, "fsdp-grad-op"},
                                                 {Sharding::kFsdpHybrid, "fsdp-hybrid"},
                                                 {Sharding::kFsdpNoShard, "fsdp-no-shard"}}};
constexpr NameTable<Checkpointing, 3> kCheckpointingNames{{{Checkpointing::kNone, "none"},
                                                           {Checkpointing::kSelective, "selective"},
                                                           {Checkpointing::kFull, "full"}}};
constexpr NameTable<RecomputeModule, 7> kRecomputeModuleNames{
    {{RecomputeModule::kCoreAttn, "core_attn"},
     {RecomputeModule::kMoeAct, "moe_act"},
     {RecomputeModule::kLayernorm, "layernorm"},
     {RecomputeModule::kMlaUpProj, "mla_up_proj"},
     {RecomputeModule::kMlp, "mlp"},
     {RecomputeModule::kMoe, "moe"},
     {RecomputeModule::kSharedExperts, "shared_experts"}}};
constexpr NameTable<RecomputeMethod, 3> kRecomputeMethodNames{
    {{RecomputeMethod::kUniform, "uniform"},
     {RecomputeMethod::kBlock, "block"},
     {RecomputeMethod::kInterval, "interval"}}};
constexpr NameTable<Attention, 2> kAttentionNames{
    {{Attention::kFused, "fused"}, {Attention::kEager, "eager"}}};
constexpr NameTable<StateDict, 3> kStateDictNames{
    {{StateDict::kAuto, "auto"}, {StateDict::kFull, "full"}, {StateDict::kSharded, "sharded"}}};
constexpr NameTable<OptimizerImpl, 3> kOptimizerImplNames{{{OptimizerImpl::kAuto, "auto"},
                                                           {OptimizerImpl::kForeach, "foreach"},
                                                           {OptimizerImpl::kFused, "fused"}}};
constexpr NameTable<Fp8, 5> kFp8Names{{{Fp8::kNone, "none"},
                                       {Fp8::kTensorwise, "tensorwise"},
                                       {Fp8::kRowwise, "rowwise"},
                                       {Fp8::kDelayed, "delayed"},
                                       {Fp8::kMxfp8, "mxfp8"}}};
constexpr NameTable<MoeDispatcher, 4> kMoeDispatcherNames{{{MoeDispatcher::kAuto, "auto"},
                                                           {MoeDispatcher::kAlltoall, "alltoall"},
                                                           {MoeDispatcher::kAllgather, "allgather"},
                                                           {MoeDispatcher::kFlex, "flex"}}};
constexpr NameTable<Objective, 10> kObjectiveNames{{{Objective::kSft, "sft"},
                                                    {Objective::kDpo, "dpo"},
                                                    {Objective::kOrpo, "orpo"},
                                                    {Objective::kSimpo, "simpo"},
                                                    {Objective::kCpo, "cpo"},
                                                    {Objective::kKto, "kto"},
                                                    {Objective::kGrpo, "grpo"},
                                                    {Objective::kRloo, "rloo"},
                                                    {Objective::kPpo, "ppo"},
                                                    {Objective::kGkd, "gkd"}}};
constexpr NameTable<Quant, 4> kQuantNames{
    {{Quant::kNone, "none"}, {Quant::kNf4, "nf4"}, {Quant::kFp4, "fp4"}, {Quant::kInt8, "int8"}}};
constexpr NameTable<Framework, 6> kFrameworkNames{{{Framework::kHf, "hf"},
                                                   {Framework::kTorchtune, "torchtune"},
                                                   {Framework::kMegatron, "megatron"},
                                                   {Framework::kDeepspeed, "deepspeed"},
                                                   {Framework::kFsdp, "fsdp"},
                                                   {Framework::kLitgpt, "litgpt"}}};

template <typename E, size_t N>
std::string_view NameOf(const NameTable<E, N>& t, E v) {
  for (const auto& [e, name] : t)
    if (e == v) return name;
  return "?";
}

template <typename E, size_t N>
std::string Joined(const NameTable<E, N>& t) {
  std::string out;
  for (const auto& [e, name] : t) {
    if (!out.empty()) out += '|';
    out += name;
  }
  return out;
}

template <typename E, size_t N>
Result<E> ParseName(const NameTable<E, N>& t, std::string_view s, std::string_view field) {
  for (const auto& [e, name] : t)
    if (name == s) return e;
  std::string shown(s.substr(0, 64));
  return Status::InvalidArgument(std::string(field) + ": expected one of " + Joined(t) + ", got '" +
                                 shown + "'");
}

// The error for a size that must be positive. Callers test `v <= 0` first: a valid job (the policy
// validates a dozen candidate jobs per rejection) then builds and destroys no Status per field.
Status NotPositive(int64_t v, const char* field) {
  return Status::InvalidArgument(std::string(field) + ": expected a positive integer, got " +
                                 std::to_string(v));
}

}  // namespace

std::string_view ToString(Method v) { return NameOf(kMethodNames, v); }
std::string_view ToString(Precision v) { return NameOf(kPrecisionNames, v); }
std::string_view ToString(Optimizer v) { return NameOf(kOptimizerNames, v); }
std::string_view ToString(Sharding v) { return NameOf(kShardingNames, v); }
std::string_view ToString(Checkpointing v) { return NameOf(kCheckpointingNames, v); }
std::string_view ToString(RecomputeMethod v) { return NameOf(kRecomputeMethodNames, v); }
std::string_view ToString(RecomputeModule v) { return NameOf(kRecomputeModuleNames, v); }
std::string_view ToString(Attention v) { return NameOf(kAttentionNames, v); }
std::string_view ToString(StateDict v) { return NameOf(kStateDictNames, v); }
std::string_view ToString(OptimizerImpl v) { return NameOf(kOptimizerImplNames, v); }
std::string_view ToString(Quant v) { return NameOf(kQuantNames, v); }
std::string_view ToString(Fp8 v) { return NameOf(kFp8Names, v); }
std::string_view ToString(MoeDispatcher v) { return NameOf(kMoeDispatcherNames, v); }
std::string_view ToString(Objective v) { return NameOf(kObjectiveNames, v); }
std::string_view ToString(Framework v) { return NameOf(kFrameworkNames, v); }

Result<Method> ParseMethod(std::string_view s, std::string_view f) {
  return ParseName(kMethodNames, s, f);
}
Result<Precision> ParsePrecision(std::string_view s, std::string_view f) {
  return ParseName(kPrecisionNames, s, f);
}
Result<Optimizer> ParseOptimizer(std::string_view s, std::string_view f) {
  return ParseName(kOptimizerNames, s, f);
}
Result<Sharding> ParseSharding(std::string_view s, std::string_view f) {
  // What people call full sharding: "fsdp" (FSDP's default FULL_SHARD), "fsdp2" (fully_shard).
  if (s == "fsdp" || s == "fsdp2") return Sharding::kFsdpFull;
  return ParseName(kShardingNames, s, f);
}
Result<Checkpointing> ParseCheckpointing(std::string_view s, std::string_view f) {
  return ParseName(kCheckpointingNames, s, f);
}
Result<RecomputeMethod> ParseRecomputeMethod(std::string_view s, std::string_view f) {
  return ParseName(kRecomputeMethodNames, s, f);
}
Result<Attention> ParseAttention(std::string_view s, std::string_view f) {
  return ParseName(kAttentionNames, s, f);
}
Result<StateDict> ParseStateDict(std::string_view s, std::string_view f) {
  return ParseName(kStateDictNames, s, f);
}
Result<OptimizerImpl> ParseOptimizerImpl(std::string_view s, std::string_view f) {
  return ParseName(kOptimizerImplNames, s, f);
}
Result<Fp8> ParseFp8(std::string_view s, std::string_view f) { return ParseName(kFp8Names, s, f); }
Result<MoeDispatcher> ParseMoeDispatcher(std::string_view s, std::string_view f) {
  return ParseName(kMoeDispatcherNames, s, f);
}
Result<Objective> ParseObjective(std::string_view s, std::string_view f) {
  return ParseName(kObjectiveNames, s, f);
}
Result<Quant> ParseQuant(std::string_view s, std::string_view f) {
  return ParseName(kQuantNames, s, f);
}
Result<Framework> ParseFramework(std::string_view s, std::string_view f) {
  return ParseName(kFrameworkNames, s, f);
}

Result<Every> ParseEvery(std::string_view s, std::string_view field) {
  const std::string_view forms =
      "'default', 'never', N (optimizer steps), N/epoch, or a fraction of the run's steps "
      "between 0 and 1";
  Every e;
  if (s == "default") return e;
  if (s == "never" || s == "none" || s == "no") {
    e.unit = Every::Unit::kNever;
    return e;
  }
  std::string_view number = s;
  const size_t slash = s.find('/');
  if (slash != std::string_view::npos) {
    if (s.substr(slash) != "/epoch") return Expected(field, forms, s);
    number = s.substr(0, slash);
  }
  Result<double> v = ParseBoundedDouble(number, 0, 1e15, field);
  if (!v.ok() || !(*v > 0)) return Expected(field, forms, s);
  e.value = *v;
  if (slash != std::string_view::npos) {
    e.unit = Every::Unit::kPerEpoch;
  } else if (*v < 1) {
    e.unit = Every::Unit::kFraction;
  } else {
    if (*v != std::floor(*v)) return Expected(field, forms, s);
    e.unit = Every::Unit::kSteps;
  }
  return e;
}

std::string ToString(const Every& e) {
  char buf[48];
  switch (e.unit) {
    case Every::Unit::kUnset:
      return "default";
    case Every::Unit::kNever:
      return "never";
    case Every::Unit::kSteps:
      std::snprintf(buf, sizeof buf, "%.0f", e.value);
      return buf;
    case Every::Unit::kPerEpoch:
      std::snprintf(buf, sizeof buf, "%.15g/epoch", e.value);
      return buf;
    case Every::Unit::kFraction:
      std::snprintf(buf, sizeof buf, "%.15g", e.value);
      return buf;
  }
  return "default";
}

std::string AcceptedNames(Method) { return Joined(kMethodNames); }
std::string AcceptedNames(Precision) { return Joined(kPrecisionNames); }
std::string AcceptedNames(Optimizer) { return Joined(kOptimizerNames); }
std::string AcceptedNames(Sharding) { return Joined(kShardingNames); }
std::string AcceptedNames(Checkpointing) { return Joined(kCheckpointingNames); }
std::string AcceptedNames(RecomputeMethod) { return Joined(kRecomputeMethodNames); }
std::string AcceptedNames(RecomputeModule) { return Joined(kRecomputeModuleNames); }

Result<uint32_t> ParseRecomputeModules(std::string_view s, std::string_view field) {
  uint32_t out = 0;
  size_t i = 0;
  const auto separator = [](char c) {
    return c == ',' || c == ' ' || c == '\t' || c == '[' || c == ']' || c == '\'' || c == '"';
  };
  while (i < s.size()) {
    while (i < s.size() && separator(s[i])) ++i;
    size_t end = i;
    while (end < s.size() && !separator(s[end])) ++end;
    if (end > i) {
      Result<RecomputeModule> m = ParseName(kRecomputeModuleNames, s.substr(i, end - i), field);
      if (!m.ok()) return m.status();
      out |= RecomputeModuleBit(*m);
    }
    i = end;
  }
  return out;
}

std::string RecomputeModulesText(uint32_t modules) {
  std::string out;
  for (const auto& [module, name] : kRecomputeModuleNames) {
    if ((modules & RecomputeModuleBit(module)) == 0) continue;
    if (!out.empty()) out += ',';
    out += name;
  }
  return out;
}
std::string AcceptedNames(Attention) { return Joined(kAttentionNames); }
std::string AcceptedNames(StateDict) { return Joined(kStateDictNames); }
std::string AcceptedNames(OptimizerImpl) { return Joined(kOptimizerImplNames); }
std::string AcceptedNames(Quant) { return Joined(kQuantNames); }
std::string AcceptedNames(Fp8) { return Joined(kFp8Names); }
std::string AcceptedNames(MoeDispatcher) { return Joined(kMoeDispatcherNames); }
std::string AcceptedNames(Objective) { return Joined(kObjectiveNames); }
std::string AcceptedNames(Framework) { return Joined(kFrameworkNames); }

bool ShardsWeights(Sharding s) {
  return s == Sharding::kZero3 || s == Sharding::kFsdpFull || s == Sharding::kFsdpHybrid;
}
bool ShardsGradients(Sharding s) {
  return s == Sharding::kZero2 || s == Sharding::kFsdpGradOp || ShardsWeights(s);
}
bool ShardsOptimizer(Sharding s) { return s == Sharding::kZero1 || ShardsGradients(s); }
bool ShardsWithFsdp(Sharding s) {
  return s == Sharding::kFsdpFull || s == Sharding::kFsdpGradOp || s == Sharding::kFsdpHybrid;
}

int64_t TrainingJob::RecomputedLayers(int64_t layers, int64_t chunks) const {
  if (activation_checkpointing != Checkpointing::kFull || layers <= 0) return 0;
  const int64_t n = std::max<int64_t>(recompute_num_layers, 1);
  switch (recompute_method) {
    case RecomputeMethod::kBlock:  // the first n of each virtual chunk
      return std::min(layers, n * std::max<int64_t>(chunks, 1));
    case RecomputeMethod::kInterval:  // layers 0, n, 2n, ...
      return (layers + n - 1) / n;
    case RecomputeMethod::kUniform:
      break;
  }
  return layers;
}

bool TrainingJob::Recomputes(RecomputeModule m) const {
  if (activation_checkpointing != Checkpointing::kSelective) return false;
  if (recompute_modules == 0) return m == RecomputeModule::kCoreAttn;
  return (recompute_modules & RecomputeModuleBit(m)) != 0;
}

bool TrainingJob::OpLevelSac(const BlockSpec& block) const {
  return activation_checkpointing == Checkpointing::kSelective && framework == Framework::kFsdp &&
         block.experts_per_token == 0;
}

int64_t TrainingJob::RecomputeGroup() const {
  return recompute_method == RecomputeMethod::kUniform ? std::max<int64_t>(recompute_num_layers, 1)
                                                       : 1;
}

int64_t TrainingJob::EffectiveGpusPerNode() const {
  if (gpus_per_node > 0) return gpus_per_node;
  return std::min<int64_t>(gpus, 8);
}

int64_t TrainingJob::Nodes() const {
  const int64_t n = std::max<int64_t>(1, EffectiveGpusPerNode());
  return (gpus + n - 1) / n;
}

int64_t TrainingJob::ModelParallel() const { return tp * pp * std::max<int64_t>(1, cp); }

int64_t TrainingJob::DataParallel() const { return gpus / std::max<int64_t>(1, ModelParallel()); }

int64_t TrainingJob::DataContextParallel() const {
  return DataParallel() * std::max<int64_t>(1, cp);
}

bool TrainingJob::AccumulatesUnshardedGradients() const {
  // litgpt accumulates under fabric.no_backward_sync, the same unsharded accumulation.
  return (framework == Framework::kHf || framework == Framework::kLitgpt) && !sync_each_batch &&
         ShardsWithFsdp(sharding);
}

namespace {
// FSDP1 flattens a unit's parameters whatever it shards (NO_SHARD too).
bool FlattensUnits(Sharding s) { return ShardsWithFsdp(s) || s == Sharding::kFsdpNoShard; }
}  // namespace

bool TrainingJob::GradientsCoverFrozenWeights() const {
  return fsdp_frozen_grads && method != Method::kFull && FlattensUnits(sharding);
}

bool TrainingJob::PeftLoraOnTransformers() const {
  return (method == Method::kLora || method == Method::kQlora) &&
         (framework == Framework::kHf || framework == Framework::kDeepspeed ||
          framework == Framework::kFsdp);
}

bool TrainingJob::ForeachOptimizerStep() const {
  const bool torch_optim = optimizer == Optimizer::kAdamW || optimizer == Optimizer::kSgd;
  return torch_optim && (optimizer_impl == OptimizerImpl::kForeach ||
                         (optimizer_impl == OptimizerImpl::kAuto &&
                          (framework == Framework::kFsdp || framework == Framework::kLitgpt)));
}

bool TrainingJob::MayKeepLastStepQuantInputs() const {
  // QLoRA without a quant is nf4; int8 runs MatMul8bitLt, not this product.
  return framework == Framework::kLitgpt && method == Method::kQlora && quant != Quant::kInt8 &&
         activation_checkpointing == Checkpointing::kNone;
}

bool TrainingJob::KeepsLastStepQuantInputs() const {
  return bnb_ctx_inputs && MayKeepLastStepQuantInputs();
}

bool TrainingJob::MayCoverFrozenWeights() const {
  return framework == Framework::kLitgpt && method != Method::kFull && FlattensUnits(sharding);
}

int64_t TrainingJob::ExpertTensorParallel() const { return etp > 0 ? etp : tp; }

int64_t TrainingJob::ExpertDataParallel() const {
  return std::max<int64_t>(
      1, tp * DataContextParallel() /
             std::max<int64_t>(1, ExpertTensorParallel() * std::max<int64_t>(1, ep)));
}

bool TrainingJob::SavesFullStateDict() const {
  // ZeRO-3 consolidates its 16-bit weights on rank 0 only when asked
  // (stage3_gather_16bit_weights_on_model_save, false by default).
  if (sharding == Sharding::kZero3) return state_dict == StateDict::kFull;
  if (!ShardsWithFsdp(sharding)) return false;
  if (state_dict != StateDict::kAuto) return state_dict == StateDict::kFull;
  return framework == Framework::kHf || framework == Framework::kLitgpt;
}

int64_t TrainingJob::SequencesPerSample() const {
  switch (objective) {
    case Objective::kDpo:
    case Objective::kOrpo:
    case Objective::kSimpo:
    case Objective::kCpo:
      return 2;
    case Objective::kSft:
    case Objective::kKto:
    case Objective::kGrpo:  // per_device_train_batch_size counts completions, one sequence each
    case Objective::kRloo:
    case Objective::kPpo:
    case Objective::kGkd:
      break;
  }
  return 1;
}

int64_t TrainingJob::ExtraForwardPasses() const {
  if (objective == Objective::kDpo) return reference_precomputed ? 0 : 1;
  if (objective == Objective::kKto) return reference_precomputed ? 1 : 3;
  return 0;
}

bool TrainingJob::KeepsReferenceModel() const {
  return method == Method::kFull && ((UsesReference(objective) && !reference_precomputed) ||
                                     (GeneratesCompletions(objective) && kl_reference));
}

const TrainingJob& TrainingJob::ModelPass(std::optional<TrainingJob>* storage) const {
  const int64_t k = SequencesPerSample();
  if (k == 1) return *this;
  TrainingJob& pass = storage->emplace(*this);
  const auto times = [k](int64_t v) { return v > INT64_MAX / k ? INT64_MAX : v * k; };
  pass.micro_batch = times(micro_batch);
  pass.eval_batch = times(eval_batch);
  pass.global_batch = times(global_batch);
  return pass;
}

int64_t TrainingJob::LocalSeqLen() const {
  return std::max<int64_t>(1, seq_len / std::max<int64_t>(1, cp));
}

Status ValidateJob(const TrainingJob& job) {
  if (job.model.empty())
    return Status::InvalidArgument("--model: required (a catalog id or a config.json path)");
  if (job.micro_batch <= 0) return NotPositive(job.micro_batch, "--micro-batch");
  if (job.seq_len <= 0) return NotPositive(job.seq_len, "--seq-len");
  if (job.grad_accum <= 0) return NotPositive(job.grad_accum, "--grad-accum");
  if (job.eval_batch < 0)
    return Status::InvalidArgument(
        "--eval-batch: expected 0 (no evaluation) or a positive integer, got " +
        std::to_string(job.eval_batch));
  for (const auto& [every, name] :
       {std::pair{&job.save_every, "--save-every"}, std::pair{&job.eval_every, "--eval-every"}}) {
    const bool counted = every->unit != Every::Unit::kUnset && every->unit != Every::Unit::kNever;
    if (counted && !(std::isfinite(every->value) && every->value > 0 &&
                     (every->unit != Every::Unit::kFraction || every->value < 1)))
      return Status::InvalidArgument(std::string(name) + ": expected a positive interval, got " +
                                     ToString(*every));
  }
  if (!(job.eval_samples >= 0 && job.eval_samples < 1e15))
    return Status::InvalidArgument(
        "--eval-samples: expected 0 (unknown), a count of sequences or a share below 1");
  if (job.gpus <= 0) return NotPositive(job.gpus, "--gpus");
  if (job.tp <= 0) return NotPositive(job.tp, "--tp");
  if (job.pp <= 0) return NotPositive(job.pp, "--pp");
  if (job.vpp <= 0) return NotPositive(job.vpp, "--vpp");
  if (job.ep <= 0) return NotPositive(job.ep, "--ep");
  if (job.etp < 0) return NotPositive(job.etp, "--etp");
  if (job.cp <= 0) return NotPositive(job.cp, "--cp");
  if (job.recompute_num_layers <= 0)
    return NotPositive(job.recompute_num_layers, "--recompute-num-layers");
  if (job.gpus_per_node < 0)
    return Status::InvalidArgument("--gpus-per-node: expected a positive integer, got " +
                                   std::to_string(job.gpus_per_node));
  // Bounds that keep every product below 2^63 and reject absurd requests early.
  constexpr int64_t kMaxGpus = 1 << 20, kMaxSeq = int64_t{1} << 24, kMaxBatch = 1 << 20;
  if (job.gpus > kMaxGpus)
    return Status::InvalidArgument("--gpus: at most " + std::to_string(kMaxGpus));
  if (job.seq_len > kMaxSeq)
    return Status::InvalidArgument("--seq-len: at most " + std::to_string(kMaxSeq));
  if (job.micro_batch > kMaxBatch)
    return Status::InvalidArgument("--micro-batch: at most " + std::to_string(kMaxBatch));
  if (job.grad_accum > kMaxBatch)
    return Status::InvalidArgument("--grad-accum: at most " + std::to_string(kMaxBatch));
  if (job.eval_batch > kMaxBatch)
    return Status::InvalidArgument("--eval-batch: at most " + std::to_string(kMaxBatch));
  if (job.cp > kMaxGpus)
    return Status::InvalidArgument("--cp: at most " + std::to_string(kMaxGpus));
  const int64_t mp = job.ModelParallel();
  if (mp > job.gpus || job.gpus % mp != 0) {
    return Status::InvalidArgument(
        "--gpus: " + std::to_string(job.gpus) + " GPUs is not a multiple of " +
        (job.cp > 1 ? "tp*cp*pp" : "tp*pp") + " = " + std::to_string(mp) + " (" +
        (job.cp > 1 ? "tp*cp*pp*dp" : "tp*pp*dp") + " must equal the GPU count)");
  }
  if (job.cp > 1 && job.seq_len % job.cp != 0)
    return Status::InvalidArgument("--cp " + std::to_string(job.cp) +
                                   ": context parallelism splits each sequence over cp ranks; "
                                   "--seq-len " +
                                   std::to_string(job.seq_len) + " is not a multiple of it");
  if (job.vpp > 1 && job.pp == 1)
    return Status::InvalidArgument("--vpp: interleaved pipeline stages need --pp > 1");
  if (job.freeze_language && job.method != Method::kFull)
    return Status::InvalidArgument(
        "--freeze-language: freezes the language model in full fine-tuning of a multimodal "
        "model (--method full); with --method " +
        std::string(ToString(job.method)) + " the language model's own weights are frozen already");
  if (job.freeze_language && job.freeze_vision)
    return Status::InvalidArgument(
        "--freeze-language with --freeze-vision: only the projector would train, which fmte "
        "does not count apart from the vision encoder; give one of them");
  if (job.etp > 0 &&
      (job.etp > 1024 || (job.tp * job.DataContextParallel()) % (job.etp * job.ep) != 0))
    return Status::InvalidArgument(
        "--etp " + std::to_string(job.etp) + " x --ep " + std::to_string(job.ep) +
        ": the experts' tensor x expert parallel ranks must divide the " +
        std::to_string(job.tp * job.DataContextParallel()) + " ranks of a pipeline stage");
  if (job.etp == 0 && job.ep > 1 && job.DataContextParallel() % job.ep != 0)
    return Status::InvalidArgument(
        "--ep " + std::to_string(job.ep) + ": expert parallelism splits the data-parallel group (" +
        std::to_string(job.DataContextParallel()) + " ranks = gpus / (tp*pp)" +
        (job.cp > 1 ? ", with cp" : "") +
        "); use an --ep that divides it, or --etp (Megatron's expert tensor parallel size)");
  if (job.sequence_parallel && job.tp == 1)
    return Status::InvalidArgument("--sp: sequence parallelism needs --tp > 1");
  if ((job.method == Method::kLora || job.method == Method::kQlora) && job.lora_r <= 0)
    return NotPositive(job.lora_r, "--lora-r");
  if (job.generation_batch < 0 || job.generation_batch > kMaxBatch)
    return Status::InvalidArgument("--generation-batch: expected 0 (none) or a count up to " +
                                   std::to_string(kMaxBatch) + ", got " +
                                   std::to_string(job.generation_batch));
  if (job.completion_len < 0 || job.completion_len > kMaxSeq)
    return Status::InvalidArgument(
        "--completion-len: expected 0 (unknown) or a token count up to " + std::to_string(kMaxSeq) +
        ", got " + std::to_string(job.completion_len));
  if (!(job.generation_memory >= 0 && job.generation_memory <= 1))
    return Status::InvalidArgument(
        "--generation-memory: expected the share of each GPU's memory a colocated inference "
        "engine holds, from 0 to 1 (vLLM's gpu_memory_utilization; 0: none), got " +
        std::to_string(job.generation_memory));
  if (!(job.lora_dropout >= 0 && job.lora_dropout < 1))
    return Status::InvalidArgument("--lora-dropout: expected a probability in [0, 1), got " +
                                   std::to_string(job.lora_dropout));
  if (job.dora && (job.method == Method::kLora || job.method == Method::kQlora))
    return Status::Unsupported(
        "dora: DoRA is not modelled (per adapted module its forward computes the base output "
        "again and keeps it and the LoRA output for the magnitude's gradient, and some PEFT "
        "versions keep a cast copy of the weight): fmte cannot estimate its memory or time");
  if ((job.save_embedding || job.save_head) &&
      (job.method == Method::kFull || job.framework == Framework::kLitgpt ||
       job.framework == Framework::kTorchtune || job.framework == Framework::kMegatron))
    return Status::InvalidArgument(
        "--modules-to-save: PEFT's modules_to_save, for a PEFT method (lora, qlora, prompt- or "
        "prefix-tuning) under --framework hf, deepspeed or fsdp");
  if ((job.method == Method::kPromptTuning || job.method == Method::kPrefixTuning) &&
      job.virtual_tokens <= 0)
    return NotPositive(job.virtual_tokens, "--virtual-tokens");
  if (job.fp8_params && job.fp8 == Fp8::kNone)
    return Status::InvalidArgument(
        "--fp8-param-gather: FP8 primary weights need FP8 linears (--fp8 tensorwise|delayed|...)");
  if (job.optimizer_states_bf16 &&
      (job.framework != Framework::kMegatron || job.optimizer != Optimizer::kAdamW))
    return Status::InvalidArgument(
        "--optimizer-states-bf16: Megatron's precision-aware optimizer keeps Adam's moments in "
        "bf16 (--framework megatron --optimizer adamw)");
  if ((job.fp8_params || job.grad_reduce_bf16) && job.framework != Framework::kMegatron)
    return Status::InvalidArgument(
        std::string(job.fp8_params ? "--fp8-param-gather" : "--grad-reduce-in-bf16") +
        ": a Megatron option; needs --framework megatron");
  if (job.fp8 != Fp8::kNone && job.precision == Precision::kFp32)
    return Status::InvalidArgument("--fp8: FP8 linears need a 16-bit --precision, not fp32");
  if (job.quant != Quant::kNone && job.method != Method::kQlora)
    return Status::InvalidArgument("--quant: quantised base weights need --method qlora");
  if (job.double_quant && job.method != Method::kQlora)
    return Status::InvalidArgument("--double-quant: needs --method qlora");
  if ((job.offload_optimizer || job.offload_params) &&
      !(ShardsOptimizer(job.sharding) || job.sharding == Sharding::kNone)) {
    return Status::InvalidArgument(
        "--offload-optimizer/--offload-params: need --sharding zero1|zero2|zero3|fsdp-*");
  }
  if (job.offload_params && !ShardsWeights(job.sharding))
    return Status::InvalidArgument(
        "--offload-params: needs --sharding zero3, fsdp-full or fsdp-hybrid");
  if (job.tokens < 0 || job.samples < 0 || job.steps < 0 || job.global_batch < 0 || job.epochs < 0)
    return Status::InvalidArgument(
        "--tokens/--samples/--steps/--epochs/--global-batch: must not be negative");
  return Status::Ok();
}

Attention AttentionUsed(const ModelArch& model, const TrainingJob& job) {
  if (!job.attention_given && model.config_eager_attention && job.framework == Framework::kHf)
    return Attention::kEager;
  return job.attention;
}

bool LoadsVisionTower(const ModelArch& model, const TrainingJob& job) {
  return model.vision_params > 0 && job.framework != Framework::kLitgpt;
}

bool HfMasksAttention(const ModelArch& model, const TrainingJob& job, double context) {
  return AttentionUsed(model, job) == Attention::kFused && job.framework == Framework::kHf &&
         model.sliding_window > 0 && context >= static_cast<double>(model.sliding_window);
}

}  // namespace fmte
