// Megatron-LM pretrain_gpt.py flags (megatron/training/arguments.py): layout, batch, precision,
// recompute, distributed optimizer, work, and the architecture flags, which become a
// config.json-style JSON for ParseModelConfig when the script names no Hugging Face model.

#include "launcher.h"

namespace fmte::internal {
namespace {

int64_t IntFlag(const LaunchLine& l, Sink* sink, std::string_view name) {
  const Flag* f = sink->Find(l, name);
  if (f == nullptr || f->unresolved) return 0;
  auto r = ParseBoundedInt(f->value, 1, int64_t{1} << 40, "");
  if (!r.ok()) {
    // Parsed again with the flag's name for the message (the name is built on this path only).
    const std::string shown = "--" + std::string(name);
    sink->Warn(shown, ParseBoundedInt(f->value, 1, int64_t{1} << 40, shown).status().message());
    return 0;
  }
  return *r;
}

// Ad-hoc architecture. SwiGLU + RMSNorm (Llama-style examples) -> a llama config; otherwise
// Megatron's GPT defaults (LayerNorm, GeLU MLP of 4h, learned absolute positions, tied embeddings,
// biases) -> a gpt2 config, which has exactly that shape.
void BuildArch(const LaunchLine& l, Sink* sink) {
  AdHocArch a;
  a.layers = IntFlag(l, sink, "num_layers");
  a.hidden = IntFlag(l, sink, "hidden_size");
  a.heads = IntFlag(l, sink, "num_attention_heads");
  if (a.layers == 0 || a.hidden == 0 || a.heads == 0) return;
  a.ffn = IntFlag(l, sink, "ffn_hidden_size");  // 0: Megatron's default (AdHocArch)
  a.vocab = IntFlag(l, sink, "padded_vocab_size");
  if (a.vocab == 0) a.vocab = IntFlag(l, sink, "vocab_size");
  // Megatron takes the vocabulary from the tokenizer; GPT-2's BPE (50257) padded to a multiple of
  // 128 (make-vocab-size-divisible-by default) is what its GPT examples use.
  if (a.vocab == 0)
    sink->Warn("--padded-vocab-size",
               "vocabulary comes from the tokenizer; GPT-2's 50304 (padded) assumed");
  a.positions = IntFlag(l, sink, "max_position_embeddings");
  if (a.positions == 0) a.positions = IntFlag(l, sink, "seq_length");
  a.gated = FlagTrue(sink->Find(l, "swiglu"));
  const Flag* norm = sink->Find(l, "normalization");
  if (a.gated && !(norm != nullptr && Lower(norm->value) == "rmsnorm"))
    sink->Warn("--normalization", "SwiGLU model without RMSNorm; RMSNorm assumed");
  a.tied = !FlagTrue(sink->Find(l, "untie_embeddings_and_output_weights"));
  if (FlagTrue(sink->Find(l, "group_query_attention")))
    a.kv_heads = IntFlag(l, sink, "num_query_groups");
  std::string name;
  sink->out()->arch_json = a.Json("megatron", &name);
  sink->Set("model", name, "--num-layers/--hidden-size");
}

// Checkpoint saves and evaluation passes (training.py): a save every --save-interval
// iterations and one at the end, only with --save (without it nothing is written); an evaluation
// every --eval-interval iterations (default 1000) of --eval-iters global batches (default 100; 0
// turns evaluation off).
void ReadMegatronPeriodic(const LaunchLine& l, Sink* sink) {
  if (sink->Find(l, "save") == nullptr)
    sink->Set("save-every", "never", "pretrain_gpt.py (no --save)");
  else if (const int64_t n = IntFlag(l, sink, "save_interval"); n > 0)
    sink->Set("save-every", std::to_string(n), "--save-interval");
  if (const int64_t n = IntFlag(l, sink, "eval_interval"); n > 0)
    sink->Set("eval-every", std::to_string(n), "--eval-interval");
  if (const Flag* f = sink->Find(l, "eval_iters"); f != nullptr && !f->unresolved) {
    auto iters = ParseBoundedInt(f->value, 0, int64_t{1} << 40, "--eval-iters");
    if (!iters.ok()) {
      sink->Warn("--eval-iters", iters.status().message());
    } else if (*iters == 0) {
      sink->Set("eval-every", "never", "--eval-iters 0");
    } else if (const int64_t gbs = IntFlag(l, sink, "global_batch_size"); gbs > 0) {
      sink->Set("eval-samples", std::to_string(*iters * gbs), "--eval-iters x --global-batch-size");
    } else {
      sink->Warn("--eval-iters",
                 "without --global-batch-size the evaluation is counted as Megatron's default "
                 "100 global batches");
    }
  }
}

}  // namespace

void ReadMegatronFlags(const LaunchLine& l, Sink* sink) {
  sink->Set("framework", "megatron", "pretrain_gpt.py");
  BuildArch(l, sink);
  // The flag as Megatron spells it (shown in origins and warnings), as Split normalises it, the
  // key.
  struct Map {
    std::string_view shown;
    std::string_view flag;
    std::string_view key;
  };
  static constexpr Map kDirect[] = {
      {"--tensor-model-parallel-size", "tensor_model_parallel_size", "tp"},
      {"--pipeline-model-parallel-size", "pipeline_model_parallel_size", "pp"},
      {"--expert-model-parallel-size", "expert_model_parallel_size", "ep"},
      {"--context-parallel-size", "context_parallel_size", "cp"},
      {"--expert-tensor-parallel-size", "expert_tensor_parallel_size", "etp"},
      {"--micro-batch-size", "micro_batch_size", "micro-batch"},
      {"--global-batch-size", "global_batch_size", "global-batch"},
      {"--seq-length", "seq_length", "seq-len"},
      {"--train-iters", "train_iters", "steps"},
      {"--train-samples", "train_samples", "samples"}};
  for (const Map& m : kDirect) {
    const Flag* f = sink->Find(l, m.flag);
    if (f == nullptr) continue;
    if (f->unresolved) {
      // A layout or micro-batch from a variable fmte cannot know: read favourably by the policy
      // (the model spread over the GPUs, one sequence per micro-batch), never rejected on it.
      if (m.key == "tp" || m.key == "pp" || m.key == "ep" || m.key == "cp" || m.key == "etp" ||
          m.key == "micro-batch")
        sink->UnreadUnknown(m.key, m.shown);
      else
        sink->Warn(m.shown, "value depends on the environment; ignored");
      continue;
    }
    sink->Set(m.key, f->value, m.shown);
  }
  // --num-layers-per-virtual-pipeline-stage K: vpp = layers / (pp * K).
  const int64_t per_stage = IntFlag(l, sink, "num_layers_per_virtual_pipeline_stage");
  const int64_t layers = IntFlag(l, sink, "num_layers");
  const int64_t pp = IntFlag(l, sink, "pipeline_model_parallel_size");
  if (per_stage > 0) {
    if (layers > 0 && pp > 0 && layers % (pp * per_stage) == 0)
      sink->Set("vpp", std::to_string(layers / (pp * per_stage)),
                "--num-layers-per-virtual-pipeline-stage");
    else
      sink->Warn("--num-layers-per-virtual-pipeline-stage",
                 "needs --num-layers divisible by pp x this value");
  }
  // Megatron turns sequence parallelism off without tensor parallelism (training/arguments.py
  // validate_args: "Disabling sequence parallelism because tensor model parallelism is disabled").
  if (FlagTrue(sink->Find(l, "sequence_parallel")) &&
      IntFlag(l, sink, "tensor_model_parallel_size") > 1)
    sink->Set("sp", "true", "--sequence-parallel");
  // Megatron keeps bf16/fp16 weights with fp32 main params in the optimizer: mixed precision.
  const bool bf16 = FlagTrue(sink->Find(l, "bf16"));
  const bool fp16 = FlagTrue(sink->Find(l, "fp16"));
  if (bf16 && fp16)
    sink->Warn("--bf16/--fp16", "both set (Megatron asserts on this); precision not taken");
  else if (bf16)
    sink->Set("precision", "mixed-bf16", "--bf16");
  else if (fp16)
    sink->Set("precision", "mixed-fp16", "--fp16");
  else
    sink->Set("precision", "fp32", "pretrain_gpt.py (no --bf16/--fp16)");
  // FP8 through Transformer Engine: --fp8-format e4m3|hybrid turns it on; --fp8-recipe says how
  // it scales (delayed, the default; tensorwise; mxfp8; blockwise, read as tensorwise).
  if (const Flag* f = sink->Find(l, "fp8_format"); f != nullptr && !f->unresolved) {
    std::string recipe = "delayed";
    if (const Flag* r = sink->Find(l, "fp8_recipe"); r != nullptr && !r->unresolved) {
      const std::string v = Lower(r->value);
      recipe = v == "mxfp8" ? "mxfp8" : v == "delayed" ? "delayed" : "tensorwise";
    }
    sink->Set("fp8", recipe, "--fp8-format");
  }
  if (FlagTrue(sink->Find(l, "fp8_param_gather")))
    sink->Set("fp8-param-gather", "true", "--fp8-param-gather");
  // How expert parallelism moves the tokens: --moe-token-dispatcher-type alltoall|allgather|flex,
  // allgather when not given (megatron/core/transformer/transformer_config.py
  // moe_token_dispatcher_type; alltoall_seq, removed later, ran as alltoall).
  if (const Flag* d = sink->Find(l, "moe_token_dispatcher_type"); d != nullptr) {
    const std::string v = Lower(d->value);
    if (d->unresolved)
      sink->Warn("--moe-token-dispatcher-type", "value depends on the environment; ignored");
    else if (v == "alltoall" || v == "alltoall_seq")
      sink->Set("moe-dispatcher", "alltoall", "--moe-token-dispatcher-type");
    else if (v == "allgather" || v == "flex")
      sink->Set("moe-dispatcher", v, "--moe-token-dispatcher-type");
    else
      sink->Warn("--moe-token-dispatcher-type",
                 "expected alltoall|allgather|flex, got '" + Shown(d->value) + "'");
  } else if (const Flag* ep = sink->Find(l, "expert_model_parallel_size");
             sink->Find(l, "num_experts") != nullptr ||
             (ep != nullptr && !ep->unresolved &&
              ParseBoundedInt(ep->value, 2, int64_t{1} << 40, "").ok())) {
    sink->Set("moe-dispatcher", "allgather", "pretrain_gpt.py (moe_token_dispatcher_type default)");
  }
  if (FlagTrue(sink->Find(l, "grad_reduce_in_bf16")))
    sink->Set("grad-reduce-in-bf16", "true", "--grad-reduce-in-bf16");
  // The precision-aware optimizer's moment dtypes (Megatron asserts it is on for any but fp32).
  const auto is_bf16 = [&](const char* name) {
    const Flag* f = sink->Find(l, name);
    return f != nullptr && !f->unresolved &&
           (EqualsIgnoreCase(f->value, "bf16") || EqualsIgnoreCase(f->value, "bfloat16"));
  };
  if (is_bf16("exp_avg_dtype") && is_bf16("exp_avg_sq_dtype"))
    sink->Set("optimizer-states-bf16", "true", "--exp-avg-dtype");
  if (const Flag* g = sink->Find(l, "recompute_granularity"); g != nullptr && !g->unresolved) {
    const std::string v = Lower(g->value);
    if (v == "full" || v == "selective")
      sink->Set("activation-checkpointing", v, "--recompute-granularity");
    else
      sink->Warn("--recompute-granularity",
                 "expected full|selective, got '" + Shown(g->value) + "'");
  } else if (FlagTrue(sink->Find(l, "recompute_activations"))) {
    sink->Set("activation-checkpointing", "selective", "--recompute-activations");
  }
  // Which layers full recompute reruns (megatron/core/transformer/transformer_block.py
  // _checkpointed_forward): uniform groups of N, or the first N of each stage (block).
  if (const Flag* m = sink->Find(l, "recompute_method"); m != nullptr && !m->unresolved) {
    const std::string v = Lower(m->value);
    if (v == "uniform" || v == "block")
      sink->Set("recompute-method", v, "--recompute-method");
    else
      sink->Warn("--recompute-method", "expected uniform|block, got '" + Shown(m->value) + "'");
  }
  if (const Flag* n = sink->Find(l, "recompute_num_layers"); n != nullptr && !n->unresolved)
    sink->Set("recompute-num-layers", n->value, "--recompute-num-layers");
  // What selective recompute reruns (nargs='*': the words after the flag).
  if (const Flag* m = sink->Find(l, "recompute_modules"); m != nullptr && !m->unresolved)
    sink->Set("recompute-modules", m->value, "--recompute-modules");
  // The distributed optimizer shards optimizer state (and fp32 main params) over data-parallel
  // ranks like ZeRO-1 (Megatron docs, "Distributed Optimizer").
  if (FlagTrue(sink->Find(l, "use_distributed_optimizer")))
    sink->Set("sharding", "zero1", "--use-distributed-optimizer");
  else
    sink->Set("sharding", "ddp", "pretrain_gpt.py");
  ReadMegatronPeriodic(l, sink);
}

}  // namespace fmte::internal

namespace fmte::internal {

// Megatron-SWIFT (ms-swift's `megatron sft|pt|rlhf`, swift/megatron/argument/megatron_args.py at
// v3.12.6, swift/megatron/arguments/ in 4.x), after ReadMegatronFlags: the Hugging Face model
// by --model (converted on the fly with --load_safetensors, or --load of a converted
// checkpoint, whose architecture fmte cannot see), train_type / tuner_type (default full; lora),
// precision from torch_dtype (default the model's: bf16 for today's models) as Megatron's mixed
// precision, the distributed optimizer on unless turned off, selective recompute of core_attn
// by default, max_length (default the model's context; packing makes it exact), and its epoch
// and save flags (3.x max_epochs / save_interval, 4.x num_train_epochs / save_steps).
void ReadMegatronSwiftFlags(const LaunchLine& l, Sink* sink) {
  if (const Flag* m = sink->Find(l, "model"); m != nullptr) {
    if (m->unresolved)
      sink->UnreadUnknown("model", "--model");
    else
      sink->Set("model", m->value, "--model");
  } else if (!sink->Has("model")) {
    sink->MarkUnread("model", "megatron",
                     "(--load names a converted checkpoint; give --model or #FMTE model=)");
  }
  std::string_view which;
  if (const Flag* t = KnownFlag(l, {"tuner_type", "train_type"}, &which); t != nullptr) {
    const std::string v = Lower(t->value);
    if (v == "lora" || v == "lora_llm")
      sink->SetFromFlag("method", "lora", which);
    else if (v == "full")
      sink->SetFromFlag("method", "full", which);
    else
      sink->Warn("--" + std::string(which), "'" + Shown(t->value) + "' not modelled");
  } else {
    sink->Set("method", "full", "megatron (train_type default full)");
  }
  if (const Flag* r = sink->Find(l, "lora_rank"); r != nullptr && !r->unresolved)
    sink->Set("lora-r", r->value, "--lora_rank");
  ReadPreferenceStage(l, sink);  // megatron rlhf --rlhf_type dpo|kto|grpo...
  if (const Flag* t = sink->Find(l, "target_modules"); t != nullptr && !t->unresolved)
    sink->Set("lora-targets", Lower(t->value) == "all-linear" ? "all-linear" : t->value,
              "--target_modules");
  if (!FlagTrue(sink->Find(l, "bf16")) && !FlagTrue(sink->Find(l, "fp16"))) {
    const Flag* dtype = KnownFlag(l, {"torch_dtype", "dtype"}, &which);
    const std::string dt = dtype != nullptr ? Lower(dtype->value) : "bfloat16";
    const std::string origin =
        dtype != nullptr ? "--" + std::string(which) : "megatron (the model's dtype, bf16 assumed)";
    if (dt == "float16" || dt == "fp16")
      sink->Set("precision", "mixed-fp16", origin);
    else if (dt == "float32" || dt == "fp32")
      sink->Set("precision", "fp32", origin);
    else
      sink->Set("precision", "mixed-bf16", origin);
  }
  if (const Flag* d = sink->Find(l, "use_distributed_optimizer"); d == nullptr || FlagTrue(d))
    sink->Set("sharding", "zero1",
              d == nullptr ? "megatron (use_distributed_optimizer default true)"
                           : "--use_distributed_optimizer");
  if (!sink->Has("activation-checkpointing") && sink->Find(l, "recompute_granularity") == nullptr)
    sink->Set("activation-checkpointing", "selective", "megatron (recompute_granularity default)");
  if (const Flag* f = sink->Find(l, "max_length"); f != nullptr && !f->unresolved) {
    sink->Set("seq-len", f->value, "--max_length");
    if (!FlagTrue(sink->Find(l, "packing"))) sink->Set("seq-len-cap", "true", "--max_length");
  } else if (!sink->Has("seq-len")) {
    sink->MarkUnread("seq-len", "megatron", "(max_length default: the model's context length)");
  }
  ReadSwiftOnline(l, sink);
  if (const Flag* e = KnownFlag(l, {"num_train_epochs", "max_epochs"}, &which);
      e != nullptr && !e->unresolved)
    sink->SetFromFlag("epochs", e->value, which);
  if (const Flag* s = sink->Find(l, "save_steps");
      s != nullptr && !s->unresolved && sink->Find(l, "save") != nullptr)
    sink->Set("save-every", s->value, "--save_steps");
}

}  // namespace fmte::internal
