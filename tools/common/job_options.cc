#include "job_options.h"

#include <charconv>
#include <cmath>
#include <sstream>

#include "cli.h"
#include "fmte/lora.h"
#include "fmte/zero.h"

namespace fmte::tools {
namespace {

// The closest long option name to `name`, or "" when none is close.
std::string ClosestOption(const po::options_description& desc, std::string_view name) {
  NearestName nearest(name, 4);
  for (const auto& opt : desc.options()) nearest.Offer(opt->long_name());
  return nearest.best();
}

template <typename E>
Status ParseEnumFlag(const po::variables_map& vm, const char* flag,
                     Result<E> (*parse)(std::string_view, std::string_view), E* out) {
  if (!vm.count(flag)) return Status::Ok();
  auto v = parse(vm[flag].as<std::string>(), std::string("--") + flag);
  if (!v.ok()) return v.status();
  *out = *v;
  return Status::Ok();
}

Status IntFlag(const po::variables_map& vm, const char* flag, int64_t min, int64_t max,
               int64_t* out) {
  if (!vm.count(flag)) return Status::Ok();
  auto v = ParseInt(vm[flag].as<std::string>(), std::string("--") + flag, min, max);
  if (!v.ok()) return v.status();
  *out = *v;
  return Status::Ok();
}

// Counts people write with suffixes or exponents: --tokens 2B, --samples 1.2e6.
Status CountFlag(const po::variables_map& vm, const char* flag, int64_t* out) {
  if (!vm.count(flag)) return Status::Ok();
  const std::string text = vm[flag].as<std::string>();
  const std::string name = std::string("--") + flag;
  auto v = ParseParamCount(text, name);
  if (!v.ok() || *v != std::floor(*v) || *v > 9e15)
    return Status::InvalidArgument(name +
                                   ": expected a positive whole count such as 1200000, "
                                   "1.2e6 or 2B, got '" +
                                   Shown(text) + "'");
  *out = static_cast<int64_t>(*v);
  return Status::Ok();
}

Result<std::vector<std::string>> SplitList(std::string_view text, std::string_view flag) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string item(text.substr(start, comma - start));
    const size_t b = item.find_first_not_of(" \t");
    const size_t e = item.find_last_not_of(" \t");
    item = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    if (item.empty())
      return Status::InvalidArgument(
          std::string(flag) +
          ": expected a comma-separated list of module names "
          "(q_proj,v_proj or q,k,v,o,gate,up,down) or all-linear, got '" +
          Shown(text) + "'");
    out.push_back(std::move(item));
    start = comma + 1;
  }
  return out;
}

}  // namespace

Status ParseFlags(const po::options_description& desc, const std::vector<std::string>& args,
                  po::variables_map* vm) {
  const std::vector<std::string> rest(args.empty() ? args.begin() : args.begin() + 1, args.end());
  const int style = po::command_line_style::unix_style & ~po::command_line_style::allow_guessing;
  try {
    po::store(po::command_line_parser(rest).options(desc).style(style).run(), *vm);
    po::notify(*vm);
  } catch (const po::unknown_option& e) {
    std::string name = e.get_option_name();
    std::string msg = "unknown option '" + name + "'";
    while (!name.empty() && name.front() == '-') name.erase(0, 1);
    const std::string best = ClosestOption(desc, name);
    if (!best.empty()) msg += ", did you mean '--" + best + "'?";
    return Status::InvalidArgument(msg);
  } catch (const po::error& e) {
    return Status::InvalidArgument(e.what());
  } catch (const std::exception& e) {
    return Status::InvalidArgument(e.what());
  }
  return Status::Ok();
}

std::string HelpText(std::string_view command, std::string_view summary,
                     const po::options_description& desc, std::string_view tool) {
  std::ostringstream os;
  os << "usage: " << tool << " " << command << " [options]\n\n" << summary << "\n\n" << desc;
  return os.str();
}

Result<int64_t> ParseInt(std::string_view text, std::string_view flag, int64_t min, int64_t max) {
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty() || v < min || v > max) {
    return Status::InvalidArgument(std::string(flag) + ": expected an integer in " +
                                   std::to_string(min) + ".." + std::to_string(max) + ", got '" +
                                   Shown(text) + "'");
  }
  return v;
}

Result<double> ParseDouble(std::string_view text, std::string_view flag, double min, double max) {
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty() || !std::isfinite(v) ||
      v < min || v > max) {
    std::ostringstream range;
    range << min << ".." << max;
    return Status::InvalidArgument(std::string(flag) + ": expected a number in " + range.str() +
                                   ", got '" + Shown(text) + "'");
  }
  return v;
}

std::string FlagString(const po::variables_map& vm, const char* name) {
  return vm.count(name) ? vm[name].as<std::string>() : std::string();
}

bool FlagSet(const po::variables_map& vm, const char* name) {
  if (!vm.count(name)) return false;
  const auto& v = vm[name].value();
  if (const bool* b = boost::any_cast<bool>(&v)) return *b;
  return true;
}

void AddCommonOptions(po::options_description* desc) {
  desc->add_options()("help,h", "show this help and exit")("json", po::bool_switch(),
                                                           "print the result as one JSON document");
}

void AddJobOptions(po::options_description* desc) {
  const TrainingJob d;  // the defaults live in TrainingJob; the help shows them
  const auto str = [](auto v) {
    return po::value<std::string>()->default_value(std::to_string(v));
  };
  const auto name = [](std::string_view v) {
    return po::value<std::string>()->default_value(std::string(v));
  };
  po::options_description job("job");
  job.add_options()(
      "model", po::value<std::string>()->value_name("ID|PATH"),
      "catalog id (fmte-advise models) or a config.json file or model directory (required)")(
      "method", name(ToString(d.method)), ("training method: " + AcceptedNames(d.method)).c_str())(
      "gpus", str(d.gpus), "GPUs in total (tp * cp * pp * dp)")(
      "gpus-per-node", po::value<std::string>(), "GPUs per node (default: min(gpus, 8))")(
      "gpu", name(kDefaultGpu), "GPU type: catalog name or alias (A100-80GB, H100-SXM, ...)")(
      "micro-batch", str(d.micro_batch), "sequences per GPU per micro-step")(
      "seq-len", str(d.seq_len), "tokens per sequence")(
      "grad-accum", str(d.grad_accum), "gradient accumulation steps (pipeline micro-batches)")(
      "eval-batch", str(d.eval_batch),
      "sequences per GPU in an evaluation batch when the job evaluates (0: no evaluation)")(
      "precision", name(ToString(d.precision)),
      ("precision: " + AcceptedNames(d.precision)).c_str())(
      "optimizer", name(ToString(d.optimizer)),
      ("optimizer: " + AcceptedNames(d.optimizer)).c_str())(
      "sharding", name(ToString(d.sharding)),
      ("data-parallel sharding: " + AcceptedNames(d.sharding)).c_str())(
      "offload-optimizer", po::bool_switch(), "optimizer state in host memory (ZeRO/FSDP offload)")(
      "offload-params", po::bool_switch(), "parameters in host memory (ZeRO-3/FSDP offload)")(
      "tp", str(d.tp), "tensor-parallel degree")("pp", str(d.pp), "pipeline-parallel stages")(
      "vpp", str(d.vpp), "virtual pipeline stages per GPU (interleaved 1F1B when > 1)")(
      "ep", str(d.ep),
      "expert-parallel degree: MoE routed experts split over ep data-parallel ranks")(
      "cp", str(d.cp), "context-parallel degree: each sequence split over cp ranks")(
      "etp", str(d.etp), "experts' tensor-parallel size (Megatron MoE parallel folding; 0: tp)")(
      "moe-dispatcher", po::value<std::string>()->value_name(AcceptedNames(MoeDispatcher::kAuto)),
      "how expert parallelism moves the tokens (Megatron's --moe-token-dispatcher-type): alltoall, "
      "allgather (Megatron-Core's default), flex (DeepEP/HybridEP: once per destination rank); "
      "auto: counted as alltoall")("sp", po::bool_switch(), "sequence parallelism (with --tp > 1)")(
      "activation-checkpointing", name(ToString(d.activation_checkpointing)),
      ("activation recomputation: " + AcceptedNames(d.activation_checkpointing)).c_str())(
      "recompute-method", name(ToString(d.recompute_method)),
      ("which layers full checkpointing recomputes, with --recompute-num-layers N: " +
       AcceptedNames(d.recompute_method) +
       " (uniform: groups of N layers, Megatron's; block: the first N layers of each pipeline "
       "stage, Megatron's; interval: every Nth layer, torchtitan's selective_ac_option N)")
          .c_str())("recompute-num-layers", str(d.recompute_num_layers),
                    "the N of --recompute-method")(
      "recompute-modules", po::value<std::string>(),
      ("with --activation-checkpointing selective, what it reruns (Megatron --recompute-modules; "
       "default core_attn): a comma-separated list of " +
       AcceptedNames(RecomputeModule{}))
          .c_str())("optimizer-impl", name(ToString(d.optimizer_impl)),
                    ("AdamW/SGD step of torch.optim: " + AcceptedNames(d.optimizer_impl) +
                     " (auto: the framework's default)")
                        .c_str())("attention", name(ToString(d.attention)),
                                  ("attention kernel: " + AcceptedNames(d.attention)).c_str())(
      "state-dict", name(ToString(d.state_dict)),
      ("how a sharded job saves checkpoints: " + AcceptedNames(d.state_dict) +
       " (auto: the framework's default; full: rank 0 gathers the whole state)")
          .c_str())("lora-r", str(d.lora_r), "LoRA rank")(
      "lora-dropout", po::value<std::string>()->value_name("P"),
      "PEFT lora_dropout (default 0, PEFT's: no dropout mask saved)")(
      "lora-targets", po::value<std::string>()->value_name("LIST|all-linear"),
      "LoRA target modules, comma-separated (default: the framework's default for the family)")(
      "dora", po::bool_switch(), "DoRA (PEFT use_dora): not modelled, the estimate is refused")(
      "trainable-fp32", po::bool_switch(),
      "the trainer casts every trainable parameter to fp32 (LLaMA-Factory unless pure_bf16)")(
      "modules-to-save", po::value<std::string>()->value_name("embed_tokens,lm_head"),
      "PEFT modules_to_save: the embeddings and/or the output head trained in full beside the "
      "adapters, each a copy of its own (default: none)")(
      "quant", po::value<std::string>()->value_name("nf4|fp4|int8"),
      "QLoRA base weight quantisation (default with --method qlora: nf4)")(
      "double-quant", po::bool_switch(), "QLoRA double quantisation of the constants")(
      "freeze-vision", po::bool_switch(),
      "full fine-tuning of a multimodal model with its vision encoder and projector frozen "
      "(LLaMA-Factory's default, InternVL's --freeze_backbone)")(
      "freeze-language", po::bool_switch(),
      "full fine-tuning of a multimodal model with its language model frozen: the vision encoder "
      "and projector train (InternVL's --freeze_llm, LLaMA-Factory's freeze_language_model)")(
      "no-kbit-upcast", po::bool_switch(),
      "QLoRA/8-bit: the weights left unquantised stay in the model's dtype (axolotl), not fp32 "
      "(PEFT's prepare_model_for_kbit_training)")(
      "fp8", po::value<std::string>()->value_name(AcceptedNames(Fp8::kNone)),
      "FP8 linears (torchao recipes; Transformer Engine under --framework megatron)")(
      "fp8-param-gather", po::bool_switch(),
      "Megatron: FP8 primary weights of the layers' linears (with --fp8)")(
      "objective", po::value<std::string>()->value_name(AcceptedNames(Objective::kSft)),
      "what the job optimises: sft (default); dpo, orpo, simpo, cpo run a chosen and a rejected "
      "sequence per sample; dpo and kto a frozen reference model (full fine-tuning) and its "
      "forward; grpo, rloo, ppo, gkd generate their completions every step (not modelled: the "
      "update step only, no wall time)")(
      "precompute-ref", po::bool_switch(),
      "dpo/kto: reference log-probabilities computed before training (TRL "
      "precompute_ref_log_probs): no reference model or forward in the steps")(
      "kl-reference", po::bool_switch(),
      "online objectives: a KL term against a frozen reference model (TRL/ms-swift --beta above "
      "0, verl use_kl_loss): full fine-tuning keeps one beside the policy")(
      "critic", po::bool_switch(),
      "online objectives: a value model trained on the same GPUs (PPO with GAE: verl's critic), "
      "counted as the policy's weights and optimizer states")(
      "completion-len", po::value<int64_t>()->value_name("N"),
      "online objectives: the completion's tokens per sequence (TRL max_completion_length), "
      "whose logits alone the policy computes")(
      "generation-batch", po::value<int64_t>()->value_name("N"),
      "online objectives: sequences one GPU generates at once with the trainer's own model "
      "(model.generate), whose KV cache it holds")(
      "generation-gathers", po::bool_switch(),
      "under ZeRO-3 the whole 16-bit model is gathered to generate or to sync it into the engine "
      "(TRL ds3_gather_for_generation, ms-swift's weight sync)")(
      "generation-memory", po::value<std::string>()->value_name("F"),
      "online objectives: the share of each GPU's memory an inference engine in the training "
      "processes holds (vLLM gpu_memory_utilization: TRL --vllm_mode colocate, verl's rollout)")(
      "generation-sleeps", po::bool_switch(),
      "the engine frees its share while the policy trains (vLLM sleep mode): held only while "
      "it generates, beside the resident states")(
      "grad-reduce-in-bf16", po::bool_switch(),
      "Megatron: gradients accumulated and reduced in bf16, not fp32 main grads")(
      "optimizer-states-bf16", po::bool_switch(),
      "Megatron: Adam's moments in bf16 (precision-aware optimizer)")(
      "virtual-tokens", str(d.virtual_tokens), "prompt/prefix tuning virtual tokens")(
      "framework", name(ToString(d.framework)),
      ("framework running the job: " + AcceptedNames(d.framework)).c_str())(
      "chunked-loss", po::bool_switch(), "chunked cross-entropy (torchtune, Liger)")(
      "compile", po::bool_switch(), "torch.compile")("activation-offload", po::bool_switch(),
                                                     "saved activations offloaded to host memory")(
      "optimizer-in-backward", po::bool_switch(), "optimizer step fused into backward")(
      "sync-each-batch", po::bool_switch(),
      "HF/accelerate FSDP: gradients reduced every micro-batch (sync_each_batch), not "
      "accumulated unsharded")(
      "fsdp-frozen-grads", po::bool_switch(),
      "PEFT under FSDP1 units that hold frozen weights beside adapters (litgpt <= 0.5.8): every "
      "weight in them gets a gradient")(
      "bnb-ctx-inputs", po::bool_switch(),
      "QLoRA under bitsandbytes 0.41-0.43.1 (4-bit inputs kept on the graph): in litgpt the last "
      "step's are still allocated at the end of the next forward")(
      "quantize-experts", po::bool_switch(),
      "QLoRA whose routed experts are quantised too (axolotl quantize_moe_experts, unsloth, "
      "transformers 4.x); under transformers 5 bitsandbytes leaves them in 16 bits");
  desc->add(job);
}

void AddWorkOptions(po::options_description* desc) {
  po::options_description work("amount of work and time");
  work.add_options()("tokens", po::value<std::string>(), "training tokens in total (e.g. 2B)")(
      "samples", po::value<std::string>(), "training samples (sequences) per epoch")(
      "epochs", po::value<std::string>(), "epochs over --samples")(
      "steps", po::value<std::string>(), "optimizer steps")(
      "save-every", po::value<std::string>()->value_name("N|N/epoch|never"),
      "optimizer steps between checkpoint saves (default: the framework's: the HF Trainer's "
      "save_steps 500, litgpt's save_interval 1000, otherwise one save at the end)")(
      "eval-every", po::value<std::string>()->value_name("N|N/epoch|never"),
      "optimizer steps between evaluation passes (default: the framework's: the HF Trainer's "
      "eval_steps 500 when it evaluates, Megatron's --eval-interval 1000)")(
      "eval-samples", po::value<std::string>()->value_name("N"),
      "sequences of one evaluation pass over all GPUs (below 1: that share of --samples)")(
      "global-batch", po::value<std::string>(),
      "sequences per optimizer step (default: micro-batch * grad-accum * dp)")(
      "cluster", po::value<std::string>(), "cluster / regressor set name (e.g. Perlmutter)")(
      "inter-node-gbps", po::value<std::string>(), "network bandwidth per node, Gb/s")(
      "timeline", po::value<std::string>()->value_name("FILE.svg"),
      "write the step timeline as SVG")("regressors", po::value<std::string>()->value_name("DIR"),
                                        "regressor directory to use");
  desc->add(work);
}

Result<TrainingJob> JobFromFlags(const po::variables_map& vm) {
  TrainingJob job;
  job.model = FlagString(vm, "model");
  if (job.model.empty())
    return Status::InvalidArgument(
        "--model: required (a catalog id such as meta-llama/Llama-3.1-8B, see `fmte-advise "
        "models`, or a config.json path)");
  FMTE_RETURN_IF_ERROR(ParseEnumFlag(vm, "method", &ParseMethod, &job.method));
  FMTE_RETURN_IF_ERROR(ParseEnumFlag(vm, "precision", &ParsePrecision, &job.precision));
  FMTE_RETURN_IF_ERROR(ParseEnumFlag(vm, "optimizer", &ParseOptimizer, &job.optimizer));
  FMTE_RETURN_IF_ERROR(ParseEnumFlag(vm, "sharding", &ParseSharding, &job.sharding));
  FMTE_RETURN_IF_ERROR(ParseEnumFlag(vm, "activation-checkpointing", &ParseCheckpointing,
                                     &job.activation_checkpointing));
  FMTE_RETURN_IF_ERROR(
      ParseEnumFlag(vm, "recompute-method", &ParseRecomputeMethod, &job.recompute_method));
  FMTE_RETURN_IF_ERROR(
      ParseEnumFlag(vm, "recompute-modules", &ParseRecomputeModules, &job.recompute_modules));
  FMTE_RETURN_IF_ERROR(ParseEnumFlag(vm, "attention", &ParseAttention, &job.attention));
  FMTE_RETURN_IF_ERROR(ParseEnumFlag(vm, "state-dict", &ParseStateDict, &job.state_dict));
  job.attention_given = vm.count("attention") != 0 && !vm["attention"].defaulted();
  FMTE_RETURN_IF_ERROR(
      ParseEnumFlag(vm, "optimizer-impl", &ParseOptimizerImpl, &job.optimizer_impl));
  FMTE_RETURN_IF_ERROR(ParseEnumFlag(vm, "quant", &ParseQuant, &job.quant));
  FMTE_RETURN_IF_ERROR(ParseEnumFlag(vm, "fp8", &ParseFp8, &job.fp8));
  FMTE_RETURN_IF_ERROR(
      ParseEnumFlag(vm, "moe-dispatcher", &ParseMoeDispatcher, &job.moe_dispatcher));
  FMTE_RETURN_IF_ERROR(ParseEnumFlag(vm, "objective", &ParseObjective, &job.objective));
  FMTE_RETURN_IF_ERROR(ParseEnumFlag(vm, "framework", &ParseFramework, &job.framework));

  constexpr int64_t kMaxGpus = 1 << 20;
  FMTE_RETURN_IF_ERROR(IntFlag(vm, "gpus", 1, kMaxGpus, &job.gpus));
  FMTE_RETURN_IF_ERROR(IntFlag(vm, "gpus-per-node", 1, 1024, &job.gpus_per_node));
  FMTE_RETURN_IF_ERROR(IntFlag(vm, "micro-batch", 1, 1 << 20, &job.micro_batch));
  FMTE_RETURN_IF_ERROR(IntFlag(vm, "seq-len", 1, int64_t{1} << 24, &job.seq_len));
  FMTE_RETURN_IF_ERROR(IntFlag(vm, "grad-accum", 1, 1 << 20, &job.grad_accum));
  FMTE_RETURN_IF_ERROR(IntFlag(vm, "eval-batch", 0, 1 << 20, &job.eval_batch));
  FMTE_RETURN_IF_ERROR(IntFlag(vm, "tp", 1, 1024, &job.tp));
  FMTE_RETURN_IF_ERROR(IntFlag(vm, "recompute-num-layers", 1, 1 << 16, &job.recompute_num_layers));
  FMTE_RETURN_IF_ERROR(IntFlag(vm, "pp", 1, 1024, &job.pp));
  FMTE_RETURN_IF_ERROR(IntFlag(vm, "vpp", 1, 1024, &job.vpp));
  FMTE_RETURN_IF_ERROR(IntFlag(vm, "ep", 1, 1024, &job.ep));
  FMTE_RETURN_IF_ERROR(IntFlag(vm, "etp", 0, 1024, &job.etp));
  FMTE_RETURN_IF_ERROR(IntFlag(vm, "cp", 1, 1024, &job.cp));
  FMTE_RETURN_IF_ERROR(IntFlag(vm, "lora-r", 1, 1 << 16, &job.lora_r));
  FMTE_RETURN_IF_ERROR(IntFlag(vm, "virtual-tokens", 1, 1 << 20, &job.virtual_tokens));
  if (vm.count("lora-dropout")) {
    auto p = ParseDouble(vm["lora-dropout"].as<std::string>(), "--lora-dropout", 0, 0.999);
    if (!p.ok()) return p.status();
    job.lora_dropout = *p;
  }
  if (vm.count("generation-memory")) {
    auto p = ParseDouble(vm["generation-memory"].as<std::string>(), "--generation-memory", 0, 1);
    if (!p.ok()) return p.status();
    job.generation_memory = *p;
  }
  job.generation_sleeps = FlagSet(vm, "generation-sleeps");
  job.kl_reference = FlagSet(vm, "kl-reference");
  job.critic = FlagSet(vm, "critic");
  job.generation_gathers = FlagSet(vm, "generation-gathers");
  if (vm.count("generation-batch")) job.generation_batch = vm["generation-batch"].as<int64_t>();
  if (vm.count("completion-len")) job.completion_len = vm["completion-len"].as<int64_t>();
  job.gpu = vm.count("gpu") ? vm["gpu"].as<std::string>() : std::string(kDefaultGpu);
  if (vm.count("lora-targets")) {
    auto targets = SplitList(vm["lora-targets"].as<std::string>(), "--lora-targets");
    if (!targets.ok()) return targets.status();
    job.lora_targets = *targets;
  }
  if (vm.count("modules-to-save"))
    FMTE_RETURN_IF_ERROR(
        ParseModulesToSave(vm["modules-to-save"].as<std::string>(), "--modules-to-save", &job));
  job.dora = FlagSet(vm, "dora");
  job.trainable_fp32 = FlagSet(vm, "trainable-fp32");
  job.offload_optimizer = FlagSet(vm, "offload-optimizer");
  job.offload_params = FlagSet(vm, "offload-params");
  job.sequence_parallel = FlagSet(vm, "sp");
  job.fp8_params = FlagSet(vm, "fp8-param-gather");
  job.reference_precomputed = FlagSet(vm, "precompute-ref");
  job.grad_reduce_bf16 = FlagSet(vm, "grad-reduce-in-bf16");
  job.optimizer_states_bf16 = FlagSet(vm, "optimizer-states-bf16");
  job.sync_each_batch = FlagSet(vm, "sync-each-batch");
  job.fsdp_frozen_grads = FlagSet(vm, "fsdp-frozen-grads");
  job.bnb_ctx_inputs = FlagSet(vm, "bnb-ctx-inputs");
  job.quantize_experts = FlagSet(vm, "quantize-experts");
  job.double_quant = FlagSet(vm, "double-quant");
  job.kbit_upcast = !FlagSet(vm, "no-kbit-upcast");
  job.freeze_vision = FlagSet(vm, "freeze-vision");
  job.freeze_language = FlagSet(vm, "freeze-language");
  job.chunked_loss = FlagSet(vm, "chunked-loss");
  job.compile = FlagSet(vm, "compile");
  job.activation_offload = FlagSet(vm, "activation-offload");
  job.optimizer_in_backward = FlagSet(vm, "optimizer-in-backward");

  // Work; absent when the command did not add AddWorkOptions.
  FMTE_RETURN_IF_ERROR(CountFlag(vm, "tokens", &job.tokens));
  FMTE_RETURN_IF_ERROR(CountFlag(vm, "samples", &job.samples));
  FMTE_RETURN_IF_ERROR(IntFlag(vm, "steps", 1, int64_t{1} << 40, &job.steps));
  FMTE_RETURN_IF_ERROR(IntFlag(vm, "global-batch", 1, int64_t{1} << 30, &job.global_batch));
  if (vm.count("epochs")) {
    auto e = ParseDouble(vm["epochs"].as<std::string>(), "--epochs", 1e-6, 1e6);
    if (!e.ok()) return e.status();
    job.epochs = *e;
  }
  for (const auto& [name, every] :
       {std::pair{"save-every", &job.save_every}, std::pair{"eval-every", &job.eval_every}}) {
    if (vm.count(name) == 0) continue;
    auto e = ParseEvery(vm[name].as<std::string>(), std::string("--") + name);
    if (!e.ok()) return e.status();
    *every = *e;
  }
  if (vm.count("eval-samples")) {
    auto e = ParseDouble(vm["eval-samples"].as<std::string>(), "--eval-samples", 0, 1e15);
    if (!e.ok()) return e.status();
    job.eval_samples = *e;
  }
  if (vm.count("inter-node-gbps")) {
    auto g = ParseDouble(vm["inter-node-gbps"].as<std::string>(), "--inter-node-gbps", 1e-3, 1e6);
    if (!g.ok()) return g.status();
    job.inter_node_gbps = *g;
  }
  job.cluster = FlagString(vm, "cluster");

  FMTE_RETURN_IF_ERROR(ValidateJob(job));
  return job;
}

WorkOutputs WorkOutputsFromFlags(const po::variables_map& vm) {
  return {FlagString(vm, "timeline"), FlagString(vm, "regressors")};
}

}  // namespace fmte::tools
