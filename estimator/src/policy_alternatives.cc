// What would make a job fit: the changes a rejection message offers, each re-estimated with the same
// estimator (more GPUs with sharding, sharding on the same GPUs, more tensor parallelism, activation
// checkpointing, a smaller micro-batch, LoRA, QLoRA, a partition with bigger GPUs).
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "policy_internal.h"

namespace fmte::internal {
namespace {

constexpr size_t kMaxAlternatives = 10;

std::string Flag(std::string_view key, std::string_view value) {
  return "--fmte-" + std::string(key) + "=" + std::string(value);
}

// Node-aligned GPU counts above job.gpus, ascending, at most `max`.
std::vector<int64_t> LargerCounts(const TrainingJob& job, GpuTresField field, int64_t node, int64_t max) {
  std::vector<int64_t> out;
  const int64_t cur = job.gpus;
  node = std::max<int64_t>(1, node);
  if (field == GpuTresField::kPerNode) {
    const int64_t p = job.EffectiveGpusPerNode(), k = job.Nodes();
    for (int64_t q = p + 1; q <= node; ++q) out.push_back(q * k);
    for (int64_t kk = k + 1; kk * node <= max && out.size() < 64; ++kk) out.push_back(kk * node);
  } else {
    for (int64_t n = cur + 1; n <= node; ++n) out.push_back(n);
    for (int64_t kk = std::max<int64_t>(2, cur / node + 1); kk * node <= max && out.size() < 64; ++kk)
      out.push_back(kk * node);
  }
  std::erase_if(out, [&](int64_t n) { return n <= cur || n > max; });
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Applies a GPU count: layout per node and, for a Megatron global batch, the accumulation.
bool WithGpus(const TrainingJob& base, int64_t n, GpuTresField field, int64_t node, TrainingJob* out) {
  *out = base;
  const int64_t mp = base.tp * base.pp;
  if (mp <= 0 || n % mp != 0) return false;
  out->gpus = n;
  if (field == GpuTresField::kPerNode && n > base.EffectiveGpusPerNode() * base.Nodes() &&
      n % base.Nodes() == 0 && n / base.Nodes() <= node)
    out->gpus_per_node = n / base.Nodes();
  else
    out->gpus_per_node = std::min(n, node);
  if (base.global_batch > 0) {
    const int64_t per_step = base.micro_batch * (n / mp);
    if (per_step <= 0 || base.global_batch % per_step != 0) return false;
    out->grad_accum = base.global_batch / per_step;
  }
  return true;
}

// Alternatives are judged and shown by memory alone, so only the memory model (and the site's
// memory correction) runs here: the time estimate would double the cost of the reject path inside
// slurmctld.
bool Fits(const PolicyContext& ctx, const GpuSpec& gpu, const PartitionConfig& p, const TrainingJob& job,
          JobEstimate* estimate) {
  if (!ValidateJob(job).ok()) return false;
  auto m = EstimateMemory(*ctx.model, job, gpu);
  if (!m.ok()) return false;
  *estimate = JobEstimate{};
  estimate->memory = std::move(m).value();
  // The site's memory correction, as the decision's own estimate gets it (the row has no time:
  // time features are missing, which the trees route by their default branch).
  ApplySiteCorrections(ctx.estimator->catalogs().corrections, job, gpu, estimate);
  return estimate->memory.per_gpu_bytes <= UsableBytes(gpu, p);
}

}  // namespace

int64_t UsableBytes(const GpuSpec& gpu, const PartitionConfig& p) {
  return static_cast<int64_t>(static_cast<double>(gpu.memory_bytes) * p.usable_memory_fraction);
}

std::string Gib(int64_t bytes) {
  // Exactly printf("%.1f GiB", bytes / 2^30) (round half to even on the exact quotient), in integer
  // arithmetic: a decision prints this 3 to 20 times and snprintf's float path costs ~2k instructions.
  constexpr int64_t kGib = int64_t{1} << 30;
  if (bytes >= 0 && bytes <= INT64_MAX / 10) {
    const int64_t scaled = bytes * 10;
    int64_t tenths = scaled / kGib;
    const int64_t rest = scaled % kGib;
    if (rest > kGib / 2 || (rest == kGib / 2 && tenths % 2 == 1)) ++tenths;
    return std::to_string(tenths / 10) + "." + static_cast<char>('0' + tenths % 10) + " GiB";
  }
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(kGib));
  return buf;
}

Sharding StateSharding(const TrainingJob& job) {
  switch (job.framework) {
    case Framework::kDeepspeed: return Sharding::kZero3;
    case Framework::kMegatron: return Sharding::kZero1;
    default: return Sharding::kFsdpFull;
  }
}

bool FindMoreGpus(const PolicyContext& ctx, const TrainingJob& job, TrainingJob* out, JobEstimate* estimate) {
  const int64_t node = ctx.partition->gpus_per_node;
  std::vector<TrainingJob> candidates;  // valid layouts, ascending GPU count
  for (int64_t n : LargerCounts(job, ctx.request->gpu_field, node, ctx.partition->max_gpus_per_job)) {
    TrainingJob candidate;
    if (WithGpus(job, n, ctx.request->gpu_field, node, &candidate)) candidates.push_back(std::move(candidate));
  }
  // Per-GPU memory of a sharded job does not grow with the GPU count (memory_combos_test checks the
  // monotonicity over the catalog), so the smallest count that fits is found by bisection: about
  // log2(64) estimates instead of up to 64 on the reject path, which runs inside slurmctld.
  if (candidates.empty() || !Fits(ctx, *ctx.gpu, *ctx.partition, candidates.back(), estimate)) return false;
  size_t lo = 0, hi = candidates.size() - 1;  // invariant: candidates[hi] fits
  JobEstimate best = *estimate;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    JobEstimate e;
    if (Fits(ctx, *ctx.gpu, *ctx.partition, candidates[mid], &e)) {
      hi = mid;
      best = std::move(e);
    } else {
      lo = mid + 1;
    }
  }
  *out = std::move(candidates[hi]);
  *estimate = std::move(best);
  return true;
}

std::vector<Alternative> FindAlternatives(const PolicyContext& ctx, const TrainingJob& job) {
  std::vector<Alternative> out;
  const auto add = [&](std::string change, const TrainingJob& j, const GpuSpec& gpu, const PartitionConfig& p,
                       const std::string& partition) {
    JobEstimate e;
    const bool fits = Fits(ctx, gpu, p, j, &e);
    if (e.memory.per_gpu_bytes == 0) return;  // the estimate failed: not a valid alternative
    out.push_back(Alternative{std::move(change), j, partition, gpu.name, e.memory.per_gpu_bytes,
                              UsableBytes(gpu, p), fits});
  };
  const GpuSpec& gpu = *ctx.gpu;
  const PartitionConfig& part = *ctx.partition;

  // 1. Shard model state (same GPUs), then more GPUs with it.
  if (!ShardsWeights(job.sharding) && job.gpus > 1 && job.framework != Framework::kMegatron) {
    TrainingJob j = job;
    j.sharding = StateSharding(job);
    add(Flag("sharding", ToString(j.sharding)) + " (same " + std::to_string(job.gpus) + " GPUs)", j, gpu, part,
        ctx.partition_name);
  }
  {
    TrainingJob sharded = job;
    if (!ShardsWeights(sharded.sharding) && sharded.framework != Framework::kMegatron)
      sharded.sharding = StateSharding(job);
    if (sharded.framework == Framework::kMegatron && sharded.sharding != Sharding::kZero1)
      sharded.sharding = Sharding::kZero1;
    TrainingJob more;
    JobEstimate e;
    bool found = FindMoreGpus(ctx, sharded, &more, &e);
    const bool add_ac = !found && sharded.activation_checkpointing != Checkpointing::kFull;
    if (add_ac) {  // sharding alone cannot hold the activations: checkpoint them too
      sharded.activation_checkpointing = Checkpointing::kFull;
      found = FindMoreGpus(ctx, sharded, &more, &e);
    }
    if (found) {
      std::string change = "--gpus=" + std::to_string(more.gpus);
      if (sharded.sharding != job.sharding) change += " with " + Flag("sharding", ToString(sharded.sharding));
      if (add_ac) change += " " + Flag("activation-checkpointing", "full");
      out.push_back(Alternative{change, more, ctx.partition_name, gpu.name, e.memory.per_gpu_bytes,
                                UsableBytes(gpu, part), true});
    }
  }
  // 2. More tensor parallelism on the same GPUs (Megatron and others that support it).
  if (job.framework == Framework::kMegatron) {
    for (int64_t tp = job.tp * 2; tp <= std::min<int64_t>(job.gpus, part.gpus_per_node); tp *= 2) {
      TrainingJob j = job;
      j.tp = tp;
      if (job.gpus % (tp * job.pp) != 0) continue;
      if (j.global_batch > 0 && j.global_batch % (j.micro_batch * (j.gpus / (tp * j.pp))) != 0) continue;
      if (j.global_batch > 0) j.grad_accum = j.global_batch / (j.micro_batch * (j.gpus / (tp * j.pp)));
      add(Flag("tp", std::to_string(tp)), j, gpu, part, ctx.partition_name);
      break;
    }
  }
  // 3. Activation checkpointing, a smaller micro-batch.
  if (job.activation_checkpointing != Checkpointing::kFull) {
    TrainingJob j = job;
    j.activation_checkpointing = Checkpointing::kFull;
    add(Flag("activation-checkpointing", "full"), j, gpu, part, ctx.partition_name);
  }
  if (job.micro_batch > 1) {
    TrainingJob j = job;
    j.micro_batch = 1;
    if (j.global_batch == 0) j.grad_accum = job.grad_accum * job.micro_batch;  // same sequences per step
    add(Flag("micro-batch", "1") + " " + Flag("grad-accum", std::to_string(j.grad_accum)), j, gpu, part,
        ctx.partition_name);
  }
  // 4. Parameter-efficient methods (alone, and with checkpointing).
  for (Method m : {Method::kLora, Method::kQlora}) {
    if (job.method == m || job.method == Method::kQlora) continue;
    if (job.method != Method::kFull && m == Method::kLora) continue;
    TrainingJob j = job;
    j.method = m;
    if (m == Method::kQlora) j.quant = Quant::kNf4;
    add(Flag("method", ToString(m)), j, gpu, part, ctx.partition_name);
    if (job.activation_checkpointing != Checkpointing::kFull) {
      j.activation_checkpointing = Checkpointing::kFull;
      add(Flag("method", ToString(m)) + " " + Flag("activation-checkpointing", "full"), j, gpu, part,
          ctx.partition_name);
    }
  }
  // 5. Partitions with bigger GPUs.
  if (ctx.config->suggest_partitions) {
    for (const PartitionConfig& p : ctx.config->partitions) {
      if (p.name == ctx.partition_name || p.mode == Mode::kOff) continue;
      const std::string name = ctx.config->GpuNameFor(p.name, "");
      if (name.empty()) continue;
      auto other = ctx.estimator->catalogs().gpus.Find(name);
      if (!other.ok() || (*other)->memory_bytes <= gpu.memory_bytes) continue;
      TrainingJob j = job;
      j.gpu = (*other)->name;
      j.gpus_per_node = std::min(j.gpus, p.gpus_per_node);
      add("--partition=" + p.name + " (" + (*other)->name + ")", j, **other, p, p.name);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Alternative& a, const Alternative& b) { return a.fits > b.fits; });
  if (out.size() > kMaxAlternatives) out.resize(kMaxAlternatives);
  return out;
}

}  // namespace fmte::internal
