// Layout checks against the architecture (what is wrong and what would work) and the split of
// transformer layers over pipeline stages.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "fmte/memory.h"
#include "memory_internal.h"

namespace fmte {
namespace {

// "1, 2, 4 or 8"
std::string OrList(const std::vector<int64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += (i + 1 == v.size()) ? " or " : ", ";
    out += std::to_string(v[i]);
  }
  return out;
}

std::vector<int64_t> Divisors(int64_t n, int64_t at_most) {
  std::vector<int64_t> out;
  for (int64_t k = 1; k <= n && k <= at_most; ++k)
    if (n % k == 0) out.push_back(k);
  return out;
}

bool KvCompatible(int64_t kv, int64_t tp) { return kv <= 0 || kv % tp == 0 || tp % kv == 0; }

// Megatron's --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split
// (the NeMo / Megatron-Bridge recipes of Llama-3.1-405B: 126 layers on pp 8 x vpp 8): where pp x
// vpp chunks do not divide the layers but do the layers + 2, the embedding and the loss each take a
// layer's place, so the first stage holds one decoder layer fewer, and so does the last.
bool EmbeddingAndLossSplit(int64_t num_layers, int64_t pp, int64_t vpp) {
  const int64_t chunks = pp * vpp;
  return pp > 1 && num_layers % chunks != 0 && (num_layers + 2) % chunks == 0;
}

}  // namespace

std::vector<int> PipelineStageLayers(int64_t num_layers, int64_t pp) {
  std::vector<int> out;
  memory::PipelineStageLayers(num_layers, pp, &out);
  return out;
}

std::vector<int> PipelineStageLayers(int64_t num_layers, const TrainingJob& job) {
  std::vector<int> out;
  memory::PipelineStageLayers(num_layers, job.pp, &out, job.framework == Framework::kMegatron,
                              job.vpp);
  return out;
}

void memory::PipelineStageLayers(int64_t num_layers, int64_t pp, std::vector<int>* out,
                                 bool megatron, int64_t vpp) {
  // DeepSpeed runtime/utils.py partition_uniform: chunk = L // p and the first L % p stages take
  // one more (also where Megatron's --decoder-first/last-pipeline-num-layers are not known).
  pp = std::max<int64_t>(1, pp);
  vpp = std::max<int64_t>(1, vpp);
  num_layers = std::max<int64_t>(0, num_layers);
  out->resize(static_cast<size_t>(std::min<int64_t>(pp, 1 << 20)));
  if (megatron && EmbeddingAndLossSplit(num_layers, pp, vpp)) {
    const int64_t per_stage = (num_layers + 2) / (pp * vpp) * vpp;
    for (size_t i = 0; i < out->size(); ++i)
      (*out)[i] = static_cast<int>(per_stage - (i == 0 ? 1 : 0) - (i + 1 == out->size() ? 1 : 0));
    return;
  }
  const int64_t chunk = num_layers / pp, extra = num_layers % pp;
  for (size_t i = 0; i < out->size(); ++i)
    (*out)[i] = static_cast<int>(chunk + (static_cast<int64_t>(i) < extra ? 1 : 0));
}

Status ValidateLayout(const ModelArch& model, const TrainingJob& job) {
  return memory::ValidateLayout(model, job, memory::KindUses(model, 0, memory::LayerCount(model)),
                                memory::ResolveLoraTargets(model, job));
}

Status memory::ValidateLayout(const ModelArch& model, const TrainingJob& job,
                              const KindUses& all_layers, const LoraTargets& targets) {
  // Built only for an error message (a valid layout allocates nothing here).
  const auto name = [&model] { return model.id.empty() ? std::string("the model") : model.id; };
  if (model.num_layers <= 0 || model.hidden_size <= 0 || model.num_heads <= 0 ||
      model.vocab_size <= 0 || model.block_kinds.empty() ||
      static_cast<int64_t>(model.block_kind_of_layer.size()) != model.num_layers) {
    return Status::InvalidArgument(
        "--model: " + name() +
        " has no usable architecture (layers, hidden size, heads, vocabulary "
        "and per-layer blocks are required)");
  }
  if (all_layers.counted() != model.num_layers)
    return Status::InvalidArgument("--model: " + name() +
                                   " has a layer with an unknown block kind");
  if (job.freeze_language && !LoadsVisionTower(model, job))
    return Status::InvalidArgument("--freeze-language: " + name() +
                                   (model.vision_params > 0
                                        ? " is trained without its vision encoder by this framework"
                                        : " has no vision encoder") +
                                   ", so nothing would train with the language model frozen");
  const int64_t tp = job.tp, pp = job.pp, gpus = job.gpus;
  if (tp <= 0 || pp <= 0 || gpus <= 0 || job.vpp <= 0)
    return Status::InvalidArgument("--tp, --pp, --vpp and --gpus must be positive");
  if (gpus % (tp * pp) != 0 || tp * pp > gpus) {
    std::vector<int64_t> ok_gpus;
    for (int64_t k = 1; ok_gpus.size() < 3 && k <= 4096; ++k) {
      if (k * tp * pp >= gpus) ok_gpus.push_back(k * tp * pp);
    }
    std::vector<int64_t> ok_tp;
    for (int64_t d : Divisors(gpus / std::max<int64_t>(1, std::min(pp, gpus)), 64))
      if (gpus % (d * pp) == 0 && model.num_heads % d == 0) ok_tp.push_back(d);
    std::string msg = "tp*pp*dp must equal --gpus: --tp " + std::to_string(tp) + " x --pp " +
                      std::to_string(pp) + " = " + std::to_string(tp * pp) + " does not divide " +
                      std::to_string(gpus) + " GPUs; use --gpus " + OrList(ok_gpus);
    if (!ok_tp.empty() && gpus % pp == 0)
      msg += ", or --tp " + OrList(ok_tp) + " with --pp " + std::to_string(pp);
    return Status::InvalidArgument(msg);
  }
  if (model.num_heads % tp != 0 || !KvCompatible(model.num_kv_heads, tp) ||
      (job.framework == Framework::kMegatron && model.num_kv_heads > 0 &&
       model.num_kv_heads % tp != 0)) {
    std::vector<int64_t> ok;
    for (int64_t d : Divisors(model.num_heads, gpus)) {
      const bool kv = job.framework == Framework::kMegatron
                          ? (model.num_kv_heads <= 0 || model.num_kv_heads % d == 0)
                          : KvCompatible(model.num_kv_heads, d);
      if (kv && gpus % (d * pp) == 0) ok.push_back(d);
    }
    std::string what =
        model.num_heads % tp != 0
            ? "does not divide the " + std::to_string(model.num_heads) + " attention heads"
            : "does not fit the " + std::to_string(model.num_kv_heads) + " key/value heads";
    return Status::InvalidArgument("--tp " + std::to_string(tp) + " " + what + " of " + name() +
                                   "; use --tp " + OrList(ok));
  }
  if (pp > model.num_layers) {
    return Status::InvalidArgument(
        "--pp " + std::to_string(pp) + " exceeds the " + std::to_string(model.num_layers) +
        " layers of " + name() + "; use --pp at most " + std::to_string(model.num_layers) +
        " (even splits: " + OrList(Divisors(model.num_layers, 64)) + ")");
  }
  // Megatron needs equal stages, or the embedding and the loss counted as a layer each
  // (EmbeddingAndLossSplit, which PipelineStageLayers applies). Explicit first/last stage sizes
  // (--decoder-first/last-pipeline-num-layers) are not read yet.
  const bool embedding_and_loss =
      job.framework == Framework::kMegatron &&
      EmbeddingAndLossSplit(model.num_layers, pp, std::max<int64_t>(1, job.vpp));
  if (job.framework == Framework::kMegatron && model.num_layers % pp != 0 && !embedding_and_loss) {
    std::vector<int64_t> ok;
    for (int64_t d : Divisors(model.num_layers, gpus / tp))
      if ((gpus / tp) % d == 0) ok.push_back(d);
    return Status::InvalidArgument(
        "--pp " + std::to_string(pp) + " does not divide the " + std::to_string(model.num_layers) +
        " layers of " + name() +
        " (Megatron needs equal stages, or the embedding and loss counted as layers: layers + 2 "
        "divisible by pp x vpp); use --pp " +
        OrList(ok));
  }
  if (job.vpp > 1) {
    if (pp == 1) return Status::InvalidArgument("--vpp: interleaved pipeline stages need --pp > 1");
    if (model.num_layers % (pp * job.vpp) != 0 && !embedding_and_loss) {
      std::vector<int64_t> ok;
      for (int64_t v = 1; v <= model.num_layers / pp; ++v)
        if (model.num_layers % (pp * v) == 0) ok.push_back(v);
      return Status::InvalidArgument(
          "--vpp " + std::to_string(job.vpp) + ": the " + std::to_string(model.num_layers) +
          " layers do not split into --pp " + std::to_string(pp) + " x --vpp " +
          std::to_string(job.vpp) + " equal chunks; use --vpp " +
          (ok.empty() ? std::string("1") : OrList(ok)));
    }
  }
  if (job.ep > 1) {
    // Every MoE block's routed experts must split evenly over the ep ranks (Megatron asserts
    // num_moe_experts % expert_model_parallel_size == 0).
    bool experts = false;
    for (const BlockSpec& b : model.block_kinds)
      for (const LinearShape& l : b.linears)
        if (l.expert) {
          experts = true;
          if (l.copies % job.ep != 0)
            return Status::InvalidArgument("--ep " + std::to_string(job.ep) +
                                           " does not divide the " + std::to_string(l.copies) +
                                           " routed experts of " + name() + "; use --ep " +
                                           OrList(Divisors(l.copies, gpus / (tp * pp))));
        }
    if (!experts)
      return Status::InvalidArgument("--ep " + std::to_string(job.ep) + ": " + name() +
                                     " has no routed experts; use --ep 1");
  }
  if (job.sequence_parallel && tp == 1)
    return Status::InvalidArgument(
        "--sp: sequence parallelism needs --tp > 1; drop --sp or use --tp " +
        OrList(Divisors(model.num_heads, std::min<int64_t>(gpus, 16))));
  if (pp > 1 && job.framework != Framework::kMegatron &&
      (job.sharding == Sharding::kZero2 || job.sharding == Sharding::kZero3)) {
    // DeepSpeed's PipelineEngine asserts ZeRO stage < 2 (runtime/pipe/engine.py).
    return Status::InvalidArgument(
        "--sharding " + std::string(ToString(job.sharding)) +
        ": DeepSpeed cannot combine ZeRO-2/3 with pipeline parallelism; use "
        "--sharding zero1 with --pp " +
        std::to_string(pp) + ", or --pp 1");
  }
  if (job.method == Method::kLora || job.method == Method::kQlora) {
    bool any = targets.head;
    for (const BlockSpec& b : model.block_kinds)
      for (const LinearShape& l : b.linears) any = any || targets.Matches(l);
    if (!any) {
      std::set<std::string> names;
      for (const BlockSpec& b : model.block_kinds)
        for (const LinearShape& l : b.linears) names.insert(l.name);
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ",") + n;
      return Status::InvalidArgument("--lora-targets: no linear of " + name() +
                                     " matches; its linears are " + list +
                                     " (or roles q,k,v,o,gate,up,down, or all-linear)");
    }
  }
  return Status::Ok();
}

}  // namespace fmte
