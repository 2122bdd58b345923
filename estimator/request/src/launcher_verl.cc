// verl (github.com/volcengine/verl): RL post-training (PPO, GRPO, GSPO, ...) launched as
// `python3 -m verl.trainer.main_ppo key=value ...` with Hydra overrides of
// verl/trainer/config/ppo_trainer.yaml. What fmte estimates is the actor's training step: the
// actor is a Hugging Face model under PyTorch FSDP (actor_rollout_ref.actor.strategy: fsdp, the
// default; fsdp2 alike), with the micro-batch per GPU, the prompt + response length as the
// sequence, gradient checkpointing, parameter/optimizer offload and LoRA from the overrides. The
// rollout engine (vLLM/SGLang, which verl puts to sleep while the actor trains) and the reference
// model are not modelled: a warning says so.
#include <algorithm>

#include "launcher.h"

namespace fmte::internal {
bool IsVerlLaunch(const LaunchLine& l) { return l.module.starts_with("verl."); }

void ReadVerlOverrides(const LaunchLine& l, Sink* sink) {
  sink->Set("framework", "hf", "verl");
  const Flag* model = KnownFlag(l, {"actor_rollout_ref.model.path"});
  if (model == nullptr) return;
  sink->SetFromFlag("model", model->value, "actor_rollout_ref.model.path");
  const Flag* strategy = KnownFlag(l, {"actor_rollout_ref.actor.strategy"});
  const std::string s = strategy != nullptr ? Lower(strategy->value) : "fsdp";
  if (s == "fsdp" || s == "fsdp2") {
    sink->Set("sharding", "fsdp-full",
              strategy != nullptr ? "actor_rollout_ref.actor.strategy" : "verl (default fsdp)");
  } else {
    sink->Warn("actor_rollout_ref.actor.strategy",
               "'" + Shown(s) + "' not modelled for verl; the actor's sharding is unknown");
    sink->MarkUnread("sharding", "actor_rollout_ref.actor.strategy", s);
  }
  if (FlagTrue(KnownFlag(l, {"actor_rollout_ref.actor.fsdp_config.param_offload"})))
    sink->Set("offload-params", "true", "actor_rollout_ref.actor.fsdp_config.param_offload");
  if (FlagTrue(KnownFlag(l, {"actor_rollout_ref.actor.fsdp_config.optimizer_offload"})))
    sink->Set("offload-optimizer", "true", "actor_rollout_ref.actor.fsdp_config.optimizer_offload");
  const Flag* prompt = KnownFlag(l, {"data.max_prompt_length"});
  const Flag* response = KnownFlag(l, {"data.max_response_length"});
  int64_t seq = 0;
  if (prompt != nullptr && response != nullptr) {
    auto p = ParseBoundedInt(prompt->value, 1, 1 << 24, "data.max_prompt_length");
    auto r = ParseBoundedInt(response->value, 1, 1 << 24, "data.max_response_length");
    if (p.ok() && r.ok()) {
      seq = *p + *r;
      sink->Set("seq-len", std::to_string(seq), "data.max_prompt_length + max_response_length");
    }
  }
  if (FlagTrue(KnownFlag(l, {"actor_rollout_ref.actor.use_dynamic_bsz"}))) {
    // Dynamic batch size (verl's dp_actor.update_policy): the mini-batch is cut into micro-batches
    // of at most ppo_max_token_len_per_gpu tokens (default 16384 in ppo_trainer.yaml), and
    // ppo_micro_batch_size_per_gpu is not used. The activations are those of that many tokens:
    // as many full-length sequences as fit in the budget, at least one.
    const Flag* budget = KnownFlag(l, {"actor_rollout_ref.actor.ppo_max_token_len_per_gpu"});
    auto b = budget != nullptr
                 ? ParseBoundedInt(budget->value, 1, int64_t{1} << 30,
                                   "actor_rollout_ref.actor.ppo_max_token_len_per_gpu")
                 : Result<int64_t>(int64_t{16384});
    if (!b.ok())
      sink->Warn("actor_rollout_ref.actor.ppo_max_token_len_per_gpu", b.status().message());
    else if (seq > 0)
      sink->Set("micro-batch", std::to_string(std::max<int64_t>(1, *b / seq)),
                budget != nullptr ? "actor_rollout_ref.actor.ppo_max_token_len_per_gpu / seq-len"
                                  : "verl (use_dynamic_bsz, default 16384 tokens) / seq-len");
  } else if (const Flag* mb =
                 KnownFlag(l, {"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"})) {
    sink->Set("micro-batch", mb->value, "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu");
  }
  if (FlagTrue(KnownFlag(l, {"actor_rollout_ref.model.enable_gradient_checkpointing"})))
    sink->Set("activation-checkpointing", "full",
              "actor_rollout_ref.model.enable_gradient_checkpointing");
  if (const Flag* r = KnownFlag(l, {"actor_rollout_ref.model.lora_rank"});
      r != nullptr && r->value != "0") {
    sink->Set("method", "lora", "actor_rollout_ref.model.lora_rank");
    sink->Set("lora-r", r->value, "actor_rollout_ref.model.lora_rank");
  }
  // The algorithm (algorithm.adv_estimator, gae by default: PPO with a critic; grpo, rloo and
  // the others are critic-free): an online objective either way, whose rollouts are not
  // modelled (TrainingJob::objective): no wall time, no time limit.
  const Flag* adv = KnownFlag(l, {"algorithm.adv_estimator"});
  sink->Set("objective", OnlineObjectiveOfEstimator(adv != nullptr ? Lower(adv->value) : "gae"),
            adv != nullptr ? "algorithm.adv_estimator"
            : l.Find("algorithm.adv_estimator") != nullptr
                ? "algorithm.adv_estimator (unknown value: online whichever it is)"
                : "verl (default adv_estimator gae)");
  // A reference policy (verl/trainer/ppo/utils.py need_reference_policy: algorithm.use_kl_in_reward
  // or actor.use_kl_loss, both false by default) is a module of its own on the actor's GPUs for
  // full fine-tuning (LoRA takes the base with the adapters off, main_ppo.py ref_in_actor); with
  // ref.fsdp_config.param_offload its weights wait on the host: told, not counted.
  const bool kl_loss = FlagTrue(KnownFlag(l, {"actor_rollout_ref.actor.use_kl_loss"}));
  if (kl_loss || FlagTrue(KnownFlag(l, {"algorithm.use_kl_in_reward"}))) {
    if (FlagTrue(KnownFlag(l, {"actor_rollout_ref.ref.fsdp_config.param_offload"})))
      sink->Warn("actor_rollout_ref.ref.fsdp_config.param_offload",
                 "the reference policy's weights are on the host between its forwards: not "
                 "counted");
    else
      sink->Set("kl-reference", "true",
                kl_loss ? "actor_rollout_ref.actor.use_kl_loss" : "algorithm.use_kl_in_reward");
  }
  // A critic (verl/trainer/ppo/utils.py need_critic: critic.enable where given, else
  // adv_estimator gae, verl's default) trains on the same GPUs; counted as a second copy of the
  // actor's states when it is the actor's model (critic.model.path, unset or the actor's path),
  // told otherwise, and told when its weights and optimizer both wait on the host.
  const Flag* critic_enable = KnownFlag(l, {"critic.enable"});
  const bool needs_critic = critic_enable != nullptr ? FlagTrue(critic_enable)
                            : adv == nullptr         ? l.Find("algorithm.adv_estimator") == nullptr
                                                     : Lower(adv->value) == "gae";
  if (needs_critic) {
    const Flag* critic_path = l.Find("critic.model.path");
    const Flag* actor_path = l.Find("actor_rollout_ref.model.path");
    const bool same_model = critic_path == nullptr ||
                            (actor_path != nullptr && critic_path->value == actor_path->value);
    const bool critic_offloaded =
        FlagTrue(KnownFlag(l, {"critic.model.fsdp_config.param_offload"})) &&
        FlagTrue(KnownFlag(l, {"critic.model.fsdp_config.optimizer_offload"}));
    if (!same_model)
      sink->Warn("critic.model.path",
                 "a critic of another model (" + Shown(critic_path->value) +
                     ") trains on the same GPUs: its weights and optimizer are not counted");
    else if (critic_offloaded)
      sink->Warn("critic.model.fsdp_config",
                 "the critic's weights and optimizer wait on the host: not counted");
    else
      sink->Set("critic", "true",
                critic_enable != nullptr ? "critic.enable"
                : adv != nullptr         ? "algorithm.adv_estimator (gae: a critic)"
                                         : "verl (default adv_estimator gae: a critic)");
  }
  // The rollout engine shares the actor's GPUs (the hybrid engine) and takes
  // actor_rollout_ref.rollout.gpu_memory_utilization of each (0.5 by default,
  // verl/trainer/config/rollout/rollout.yaml; vLLM's, SGLang's mem_fraction_static); with
  // free_cache_engine (true by default) it sleeps while the actor trains (vllm_async_server.py
  // sleep(): level 1 or 2), so it holds that share while it generates, beside the actor's
  // resident states. Where the actor's weights or optimizer are offloaded (fsdp_config
  // param_offload/optimizer_offload) they are on the host then: told, not counted.
  // (TensorRT-LLM's free_gpu_memory_fraction is a share of the memory free when it starts: not
  // counted.)
  const Flag* engine = KnownFlag(l, {"actor_rollout_ref.rollout.name"});
  const bool share_of_total =
      engine == nullptr || Lower(engine->value) == "vllm" || Lower(engine->value) == "sglang";
  const bool actor_offloads =
      FlagTrue(KnownFlag(l, {"actor_rollout_ref.actor.fsdp_config.param_offload"})) ||
      FlagTrue(KnownFlag(l, {"actor_rollout_ref.actor.fsdp_config.optimizer_offload"}));
  const Flag* frees = l.Find("actor_rollout_ref.rollout.free_cache_engine");
  const bool sleeps = frees == nullptr || frees->unresolved || FlagTrue(frees);
  if (share_of_total && !(actor_offloads && sleeps)) {
    SetColocatedEngineShare(l, sink, "actor_rollout_ref.rollout.gpu_memory_utilization", "0.5",
                            "verl");
    if (sleeps)
      sink->Set("generation-sleeps", "true",
                frees != nullptr ? "actor_rollout_ref.rollout.free_cache_engine"
                                 : "verl (default free_cache_engine true)");
  }
  // What was counted (a share from an unknown variable or out of range is not).
  const std::string_view set = sink->Get("generation-memory");
  const auto share_set = ParseBoundedDouble(set, 0, 1, "");
  const bool counted = !set.empty() && share_set.ok() && *share_set > 0;
  const Flag* given = l.Find("actor_rollout_ref.rollout.gpu_memory_utilization");
  const std::string shown = counted             ? std::string(set)
                            : given == nullptr  ? std::string("0.5")
                            : given->unresolved ? std::string("an unknown share")
                                                : Shown(given->value);
  sink->Warn("verl", counted
                         ? "the actor's update step and the rollout engine's share of each GPU (" +
                               shown +
                               ") are estimated; the rollout's time is not, so fmte sets no "
                               "time limit"
                         : "the actor's update step is estimated; the rollout engine's memory "
                           "(up to " +
                               shown +
                               " of each GPU while it generates, beside the actor's states "
                               "not offloaded) and the rollout's time are not, so fmte sets "
                               "no time limit");
  // What bounds the actor's memory beyond these keys (dynamic batch sizes by token budget, Ulysses
  // sequence parallelism, remove-padding, entropy checkpointing, offload of the reference and the
  // rollout) is not read: the policy reads it favourably and never rejects a verl job on a guess.
  sink->MarkUnread("offload", "verl", "actor memory settings (token budgets, sequence parallel)");
}

}  // namespace fmte::internal
