// Answer.AI's fsdp_qlora (github.com/AnswerDotAI/fsdp_qlora, train.py): LoRA/QLoRA/full
// fine-tuning with PyTorch FSDP, one process per GPU spawned by train.py itself. Its flags are the
// arguments of train.py's fsdp_qlora() (fastcore call_parse, given as --name value); defaults from
// there: train_type "qlora", batch_size 1 (per GPU), context_length 512, sharding_strategy
// "full_shard", use_gradient_checkpointing True, use_cpu_offload True (FSDP CPUOffload: parameters,
// gradients and the optimizer step on the host), use_activation_cpu_offload False, precision
// "bf16" (the whole model and optimizer in bf16, no fp32 copy), model_name
// "meta-llama/Llama-2-7b-hf", lora_rank 64.
#include "launcher.h"

namespace fmte::internal {
namespace {

// train_type values (train.py's argument choices) and the method each trains with: the HQQ and
// bitsandbytes 4-bit variants keep the frozen base in 4 bits like QLoRA (DoRA and LLaMA-Pro add
// trainable weights of LoRA size or one block per group: estimated as LoRA).
struct TrainType {
  std::string_view name, method;
};
constexpr TrainType kTrainTypes[] = {
    {"full", "full"},           {"lora", "lora"},          {"custom_lora", "lora"},
    {"qlora", "qlora"},         {"custom_qlora", "qlora"}, {"hqq_lora", "qlora"},
    {"hqq_dora", "qlora"},      {"bnb_dora", "qlora"},     {"bnb_llama_pro", "qlora"},
    {"hqq_llama_pro", "qlora"},
};

const TrainType* FindTrainType(const Flag* f) {
  if (f == nullptr || f->unresolved) return nullptr;
  const std::string v = Lower(f->value);
  for (const TrainType& t : kTrainTypes)
    if (v == t.name) return &t;
  return nullptr;
}

// A bool_arg flag: its value, or the default when absent or unknown.
bool BoolFlag(const LaunchLine& l, std::string_view name, bool fallback) {
  const Flag* f = KnownFlag(l, {name});
  return f != nullptr ? FlagTrue(f) : fallback;
}

}  // namespace

bool IsFsdpQloraScript(const LaunchLine& l) {
  // train.py with a --train_type fsdp_qlora knows and one of its own flags (many scripts are
  // called train.py; only this one takes --train_type custom_qlora with --context_length).
  if (FindTrainType(l.Find("train_type")) == nullptr) return false;
  return l.Find("context_length") != nullptr || l.Find("use_cpu_offload") != nullptr ||
         l.Find("use_gradient_checkpointing") != nullptr || l.Find("sharding_strategy") != nullptr;
}

void ReadFsdpQloraFlags(const LaunchLine& l, Sink* sink) {
  sink->Set("framework", "fsdp", "train.py");
  if (const Flag* m = sink->Find(l, "model_name"); m != nullptr && !m->unresolved)
    sink->SetFromFlag("model", m->value, "model_name");
  else
    sink->Set("model", "meta-llama/Llama-2-7b-hf", "train.py (default --model_name)");
  const TrainType* t = FindTrainType(sink->Find(l, "train_type"));
  sink->SetFromFlag("method", t->method, "train_type");
  if (t->method == "qlora") sink->SetFromFlag("quant", "nf4", "train_type");
  if (t->method != "full") {
    const Flag* r = sink->Find(l, "lora_rank");
    sink->Set("lora-r", r != nullptr && !r->unresolved ? r->value : "64",
              r != nullptr ? "--lora_rank" : "train.py (default --lora_rank)");
  }
  static constexpr FlagDefault kDirect[] = {{"batch_size", "micro-batch", "1"},
                                            {"context_length", "seq-len", "512"},
                                            {"gradient_accumulation_steps", "grad-accum", "1"},
                                            {"num_epochs", "epochs", ""}};
  SetFlagsWithDefaults(l, kDirect, "train.py", sink);
  const Flag* s = sink->Find(l, "sharding_strategy");
  const std::string strategy = s == nullptr || s->unresolved ? "full_shard" : Lower(s->value);
  if (strategy == "full_shard")
    sink->Set("sharding", "fsdp-full", "--sharding_strategy");
  else if (strategy == "shard_grad_op")
    sink->Set("sharding", "fsdp-grad-op", "--sharding_strategy");
  else if (strategy.starts_with("hybrid"))
    sink->Set("sharding", "fsdp-hybrid", "--sharding_strategy");
  else if (strategy == "no_shard")
    sink->Set("sharding", "fsdp-no-shard", "--sharding_strategy");
  else
    sink->Warn("--sharding_strategy",
               "expected full_shard|shard_grad_op|hybrid_full_shard|"
               "hybrid_shard_grad_op|no_shard, got '" +
                   Shown(strategy) + "'");
  sink->Set("activation-checkpointing",
            BoolFlag(l, "use_gradient_checkpointing", true) ? "full" : "none",
            "--use_gradient_checkpointing");
  if (BoolFlag(l, "use_cpu_offload", true)) {
    sink->Set("offload-params", "true", "--use_cpu_offload");
    sink->Set("offload-optimizer", "true", "--use_cpu_offload");
  }
  if (BoolFlag(l, "use_activation_cpu_offload", false))
    sink->Set("activation-offload", "true", "--use_activation_cpu_offload");
  const Flag* p = sink->Find(l, "precision");
  const std::string precision = p == nullptr || p->unresolved ? "bf16" : Lower(p->value);
  if (precision == "bf16")
    sink->Set("precision", "pure-bf16", "--precision");
  else if (precision == "fp32")
    sink->Set("precision", "fp32", "--precision");
  else if (precision == "fp16_autocast")
    sink->Set("precision", "amp-fp16", "--precision");
  else if (precision == "bf16_autocast" || precision == "bf16_buffers_autocast")
    sink->Set("precision", "amp-bf16", "--precision");
  else
    sink->Warn("--precision", "'" + Shown(precision) + "' not modelled");
}

}  // namespace fmte::internal
