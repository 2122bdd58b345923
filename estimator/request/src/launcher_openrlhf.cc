// OpenRLHF (github.com/OpenRLHF/OpenRLHF): SFT, reward-model, DPO and PPO training launched as
// `deepspeed --module openrlhf.cli.train_*` or `torchrun ... -m openrlhf.cli.train_*`, always on
// DeepSpeed. Its flags exist in two spellings: the flat ones of its older CLI (--pretrain,
// --zero_stage, --micro_train_batch_size, --max_len, --gradient_checkpointing, --adam_offload,
// --lora_rank, --load_in_4bit, --bf16) and the dotted ones of the current CLI (--model.
// model_name_or_path, --ds.zero_stage, --train.micro_batch_size, --data.max_len,
// --model.gradient_checkpointing_enable, --ds.param_dtype, ...). DPO, KTO and PPO also keep a
// reference (and critic/reward) model; only the trained policy is estimated, and a note says so.
#include "launcher.h"

namespace fmte::internal {
bool IsOpenRlhfLaunch(const LaunchLine& l) {
  if (l.module.starts_with("openrlhf.")) return true;
  // `deepspeed --module openrlhf.cli.train_sft ...`: the module is a positional after --module.
  const Flag* m = l.Find("module");
  return m != nullptr && m->value.starts_with("openrlhf.");
}

void ReadOpenRlhfFlags(const LaunchLine& l, Sink* sink) {
  std::string_view which;
  const Flag* model = KnownFlag(
      l, {"model.model_name_or_path", "actor.model_name_or_path", "pretrain", "model_name_or_path"},
      &which);
  if (model == nullptr) return;
  sink->SetFromFlag("model", model->value, which);
  sink->Set("framework", "deepspeed", "openrlhf");
  const Flag* stage = l.Find("ds.zero_stage");
  if (stage == nullptr) stage = l.Find("zero_stage");
  if (const Flag* z = KnownFlag(l, {"ds.zero_stage", "zero_stage"}, &which)) {
    const std::string_view v = z->value;
    if (v == "0" || v == "1" || v == "2" || v == "3")
      sink->SetFromFlag("sharding", v == "0" ? "ddp" : "zero" + std::string(v), which);
  } else if (stage != nullptr && stage->unresolved) {
    // --zero_stage $STAGE: the stage is unknown, not the default: read favourably.
    sink->UnreadUnknown("sharding", "--zero_stage");
  } else {
    sink->Set("sharding", "zero2", "openrlhf (default --zero_stage 2)");
  }
  if (const Flag* mb = KnownFlag(l, {"train.micro_batch_size", "micro_train_batch_size"}, &which))
    sink->SetFromFlag("micro-batch", mb->value, which);
  if (const Flag* len = KnownFlag(l, {"data.max_len", "max_len"}, &which))
    sink->SetFromFlag("seq-len", len->value, which);
  if (FlagTrue(KnownFlag(l,
                         {"model.gradient_checkpointing_enable",
                          "actor.gradient_checkpointing_enable", "gradient_checkpointing"},
                         &which)))
    sink->SetFromFlag("activation-checkpointing", "full", which);
  if (FlagTrue(KnownFlag(l, {"ds.adam_offload", "adam_offload"}, &which)))
    sink->SetFromFlag("offload-optimizer", "true", which);
  const Flag* dtype = KnownFlag(l, {"ds.param_dtype"}, &which);
  if (FlagTrue(sink->Find(l, "bf16")) || (dtype != nullptr && Lower(dtype->value) == "bf16"))
    sink->Set("precision", "mixed-bf16", dtype != nullptr ? "--ds.param_dtype" : "--bf16");
  const Flag* rank = KnownFlag(l, {"model.lora_rank", "lora_rank"}, &which);
  const bool lora = rank != nullptr && rank->value != "0";
  if (FlagTrue(KnownFlag(l, {"model.load_in_4bit", "load_in_4bit"}, &which)) && lora) {
    sink->SetFromFlag("method", "qlora", which);
    sink->Set("quant", "nf4", "--load_in_4bit");
  } else if (lora) {
    sink->Set("method", "lora", "--lora_rank");
  }
  if (lora) sink->Set("lora-r", rank->value, "--lora_rank");
  const Flag* module_flag = l.Find("module");
  const std::string_view cli = !l.module.empty()        ? l.module
                               : module_flag != nullptr ? module_flag->value
                                                        : "";
  // PPO with Ray (train_ppo_ray): the actor trains on actor.num_nodes x num_gpus_per_node of the
  // job's GPUs, beside the reference, critic, reward and vLLM engines, which fmte does not place:
  // its sharding degree is unknown, read favourably.
  if (cli.find("ppo_ray") != std::string_view::npos)
    sink->MarkUnread("layout", "--actor.num_gpus_per_node",
                     "(the actor's share of the job's GPUs under Ray)");
  // train_dpo (chosen and rejected concatenated, a reference Actor) and train_kto: their
  // objective. OpenRLHF builds the reference as a model of its own also for LoRA, unless
  // --ref_offload moves it to the host; fmte counts it for full fine-tuning only.
  const bool dpo = cli.find("train_dpo") != std::string_view::npos;
  const bool kto = cli.find("train_kto") != std::string_view::npos;
  if (dpo || kto) sink->Set("objective", dpo ? "dpo" : "kto", std::string(cli));
  const bool ref_offload = FlagTrue(KnownFlag(l, {"ref_offload"}, &which));
  if ((dpo || kto) && lora && !ref_offload)
    sink->Warn("openrlhf",
               "the reference model OpenRLHF keeps beside the LoRA policy is not "
               "counted (--ref_offload moves it to the host)");
  else if ((dpo || kto) && !lora && ref_offload)
    sink->Warn("--ref_offload",
               "the reference model is kept in host memory; fmte counts it on the GPUs: an "
               "upper estimate");
  else if (cli.find("train_ppo") != std::string_view::npos) {
    // PPO and its critic-free variants (--advantage_estimator gae by default; grpo, rloo,
    // reinforce, ...): online, their generation not modelled (TrainingJob::objective).
    const Flag* adv = KnownFlag(l, {"advantage_estimator"}, &which);
    sink->Set("objective", OnlineObjectiveOfEstimator(adv != nullptr ? Lower(adv->value) : "gae"),
              adv != nullptr ? "--advantage_estimator"
              : l.Find("advantage_estimator") != nullptr
                  ? "--advantage_estimator (unknown value: online whichever it is)"
                  : std::string(cli) + " (default advantage_estimator gae)");
    WarnOnlineObjective("openrlhf", sink);
  } else if (!dpo && !kto && cli.find("train_sft") == std::string_view::npos) {
    sink->Warn("openrlhf",
               "the trained policy is estimated; a reference, reward or critic model "
               "kept on the same GPUs is not");
  }
}

}  // namespace fmte::internal
