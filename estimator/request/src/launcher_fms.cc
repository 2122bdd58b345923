// fms-fsdp (github.com/foundation-model-stack/fms-fsdp, main_training.py): pretraining FMS's LLaMA
// with PyTorch FSDP. Its flags are the fields of fms_fsdp/config/training.py `train_config`, given
// fire-style as --name=value; defaults from that file: model_variant "7b"... (see kVariants),
// seq_length 4096, batch_size 2 (per GPU), num_steps 1,000,000, sharding_strategy "hsdp",
// fsdp_activation_checkpointing False, selective_checkpointing 1 (fraction of blocks checkpointed),
// mixed_precision True (bf16 compute over fp32 sharded parameters: fms_fsdp/policies/
// mixed_precision.py).
#include <cstdio>

#include "launcher.h"

namespace fmte::internal {
namespace {

// fms_fsdp/utils/config_utils.py get_model_config, on fms.models.llama.LLaMAConfig (defaults:
// vocab 32000, emb_dim 4096, nheads 32, kvheads 0 = nheads, nlayers 32, hidden_grow_factor 8/3
// rounded up to multiple_of 256, max_expected_seq_len 4096, no biases, tie_heads False). The
// scripts/7b.sh..70b.sh of the README's throughput table use the older names "7b".."70b".
struct Variant {
  const char* names[2];
  const char* catalog_id;  // a catalog model with exactly these tensors, or nullptr
  int64_t hidden, heads, kv_heads, layers, ffn, vocab, positions;
};
constexpr Variant kVariants[] = {
    {{"llama2_7b", "7b"}, "meta-llama/Llama-2-7b-hf", 4096, 32, 32, 32, 11008, 32000, 4096},
    {{"llama2_13b", "13b"}, nullptr, 5120, 40, 40, 40, 13824, 32000, 4096},
    {{"llama2_34b", "34b"}, nullptr, 8192, 64, 8, 48, 22016, 32000, 4096},
    {{"llama2_70b", "70b"}, "meta-llama/Llama-2-70b-chat-hf", 8192, 64, 8, 80, 28672, 32000, 4096},
    {{"llama2_1.4b", "1.4b"}, nullptr, 2048, 16, 4, 24, 6144, 32000, 4096},
    {{"llama3_8b", "llama3_8b_4k"},
     "meta-llama/Llama-3.1-8B",
     4096,
     32,
     8,
     32,
     14336,
     128256,
     8192},
    {{"llama3_1.8b", "llama3_1.8b_4k"}, nullptr, 2048, 16, 8, 24, 7168, 128256, 8192},
    {{"llama3_3.2b", "llama3_3.2b_4k"}, nullptr, 3072, 24, 8, 24, 8192, 128256, 8192},
    {{"llama3_70b", "llama3_70b_4k"},
     "meta-llama/Llama-3.1-70B",
     8192,
     64,
     8,
     80,
     28672,
     128256,
     8192},
};

const Variant* FindVariant(std::string_view name) {
  for (const Variant& v : kVariants)
    if (name == v.names[0] || name == v.names[1]) return &v;
  return nullptr;
}

// The model: a catalog id when one has the same tensors, else the variant's LLaMA architecture.
void SetModel(const Flag* f, Sink* sink) {
  const std::string name = f == nullptr ? "7b" : Lower(f->value);
  const std::string shown =
      f == nullptr ? "main_training.py (default model_variant 7b)" : "--model_variant";
  if (f != nullptr && f->unresolved) {
    sink->Warn(shown, "value depends on the environment; set #FMTE model=...");
    return;
  }
  const Variant* v = FindVariant(name);
  if (v == nullptr) {
    std::string known;
    for (const Variant& k : kVariants)
      known += (known.empty() ? "" : "|") + std::string(k.names[0]);
    sink->Warn(shown, "unknown fms-fsdp model variant '" + Shown(name) + "' (expected " + known +
                          "); set #FMTE model=...");
    return;
  }
  if (v->catalog_id != nullptr) {
    sink->Set("model", v->catalog_id, shown);
    return;
  }
  sink->out()->arch_json = LlamaConfigJson(v->hidden, v->layers, v->heads, v->kv_heads, v->ffn,
                                           v->vocab, v->positions, /*tied=*/false);
  sink->Set("model", "fms-" + std::string(v->names[0]), shown);
}

// fms_fsdp/policies/ac_handler.py: with fsdp_activation_checkpointing, a fraction p of the blocks
// (selective_checkpointing: a number or "a/b") is wrapped in full checkpointing.
void SetCheckpointing(const LaunchLine& l, Sink* sink) {
  if (!FlagTrue(sink->Find(l, "fsdp_activation_checkpointing"))) {
    sink->Set("activation-checkpointing", "none", "--fsdp_activation_checkpointing");
    return;
  }
  double p = 1;
  if (const Flag* s = sink->Find(l, "selective_checkpointing"); s != nullptr && !s->unresolved) {
    double num = 0, den = 1;
    char slash = 0;
    const int n = std::sscanf(std::string(s->value).c_str(), "%lf%c%lf", &num, &slash, &den);
    if (n == 1 || (n == 3 && slash == '/' && den > 0)) {
      p = n == 1 ? num : num / den;
    } else {
      sink->Warn("--selective_checkpointing", "expected a fraction, got '" + Shown(s->value) + "'");
    }
  }
  if (p >= 1) {
    sink->Set("activation-checkpointing", "full", "--fsdp_activation_checkpointing");
  } else {
    // Only some blocks recompute: estimating as if none did keeps the memory an upper bound.
    sink->Set("activation-checkpointing", "none", "--selective_checkpointing");
    sink->Warn("--selective_checkpointing",
               "checkpointing a fraction of the blocks is estimated as no checkpointing (memory "
               "upper bound)");
  }
}

}  // namespace

bool IsFmsFsdpScript(const LaunchLine& l) {
  for (std::string_view p : l.positionals) {
    const size_t slash = p.rfind('/');
    const std::string_view b = p.substr(slash == std::string_view::npos ? 0 : slash + 1);
    if (b == "main_training.py" || b == "main_training_llama.py") return true;
  }
  return false;
}

void ReadFmsFsdpFlags(const LaunchLine& l, Sink* sink) {
  sink->Set("framework", "fsdp", "main_training.py");
  sink->Set("method", "full", "main_training.py");
  SetModel(sink->Find(l, "model_variant"), sink);
  // train_config defaults stand unless a flag overrides them (fire keeps the dataclass defaults).
  static constexpr FlagDefault kDirect[] = {{"batch_size", "micro-batch", "2"},
                                            {"seq_length", "seq-len", "4096"},
                                            {"num_steps", "steps", "1000000"}};
  SetFlagsWithDefaults(l, kDirect, "main_training.py", sink);
  const Flag* s = sink->Find(l, "sharding_strategy");
  const std::string strategy = s == nullptr ? "hsdp" : s->unresolved ? "" : Lower(s->value);
  if (strategy.empty())  // --sharding_strategy=$STRATEGY: unknown, not the default: favourably
    sink->UnreadUnknown("sharding", "--sharding_strategy");
  else if (strategy == "fsdp")
    sink->Set("sharding", "fsdp-full", "--sharding_strategy");
  else if (strategy == "hsdp")
    sink->Set("sharding", "fsdp-hybrid", "--sharding_strategy");
  else if (strategy == "ddp")
    sink->Set("sharding", "ddp", "--sharding_strategy");
  else
    sink->Warn("--sharding_strategy", "expected fsdp|hsdp|ddp, got '" + Shown(strategy) + "'");
  const Flag* mp = sink->Find(l, "mixed_precision");
  const bool bf16 = mp == nullptr || mp->unresolved || FlagTrue(mp);
  sink->Set("precision", bf16 ? "mixed-bf16" : "fp32", "--mixed_precision");
  SetCheckpointing(l, sink);
}

}  // namespace fmte::internal
