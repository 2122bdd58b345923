// What would make a job fit: the changes a rejection message offers, each re-estimated with the
// same estimator (more GPUs with sharding, sharding on the same GPUs, more tensor parallelism,
// activation checkpointing, a smaller micro-batch, LoRA, QLoRA, a partition with bigger GPUs).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "policy_internal.h"

namespace fmte::internal {
namespace {

std::string Flag(std::string_view key, std::string_view value) {
  return Cat({"--fmte-", key, "=", value});
}

constexpr std::string_view kFullCheckpointingFlag = "--fmte-activation-checkpointing=full";

// Node-aligned GPU counts above job.gpus, ascending, at most `max`.
std::vector<int64_t> LargerCounts(const TrainingJob& job, GpuTresField field, int64_t node,
                                  int64_t max) {
  std::vector<int64_t> out;
  out.reserve(64);
  const int64_t cur = job.gpus;
  node = std::max<int64_t>(1, node);
  if (field == GpuTresField::kPerNode) {
    const int64_t p = job.EffectiveGpusPerNode(), k = job.Nodes();
    for (int64_t q = p + 1; q <= node; ++q) out.push_back(q * k);
    for (int64_t kk = k + 1; kk * node <= max && out.size() < 64; ++kk) out.push_back(kk * node);
  } else {
    for (int64_t n = cur + 1; n <= node; ++n) out.push_back(n);
    for (int64_t kk = std::max<int64_t>(2, cur / node + 1); kk * node <= max && out.size() < 64;
         ++kk)
      out.push_back(kk * node);
  }
  std::erase_if(out, [&](int64_t n) { return n <= cur || n > max; });
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Whether `n` GPUs suit the layout of `base`: tp * cp * pp divides n and, with a Megatron global
// batch, micro-batch x data-parallel ranks divides the global batch.
bool SuitsLayout(const TrainingJob& base, int64_t n) {
  const int64_t mp = base.ModelParallel();
  if (mp <= 0 || n % mp != 0) return false;
  if (base.global_batch > 0) {
    const int64_t per_step = base.micro_batch * (n / mp);
    if (per_step <= 0 || base.global_batch % per_step != 0) return false;
  }
  return true;
}

// Gives `out`, a copy of `base`, `n` GPUs (REQUIRES SuitsLayout(base, n)): the layout per node and,
// for a Megatron global batch, the accumulation. Only these fields differ between the GPU counts
// tried, so a search copies the job (and its strings) once.
void SetGpus(const TrainingJob& base, int64_t n, GpuTresField field, int64_t node,
             TrainingJob* out) {
  const int64_t mp = base.ModelParallel();
  out->gpus = n;
  if (field == GpuTresField::kPerNode && n > base.EffectiveGpusPerNode() * base.Nodes() &&
      n % base.Nodes() == 0 && n / base.Nodes() <= node)
    out->gpus_per_node = n / base.Nodes();
  else
    out->gpus_per_node = std::min(n, node);
  if (base.global_batch > 0) out->grad_accum = base.global_batch / (base.micro_batch * (n / mp));
}

// Whether `job` fits `gpu` under partition `p`, judged by memory alone
// (PreparedEstimate::EstimateMemory into `estimate`; a job the memory model refuses does not fit
// and its per-GPU bytes are 0).
bool Fits(const PolicyContext& ctx, const GpuSpec& gpu, const PartitionConfig& p,
          const TrainingJob& job, JobEstimate* estimate) {
  return ctx.prepared->EstimateMemory(job, gpu, estimate).ok() &&
         estimate->memory.per_gpu_bytes <= UsableBytes(gpu, p);
}

}  // namespace

int64_t UsableBytes(const GpuSpec& gpu, const PartitionConfig& p) {
  return static_cast<int64_t>(static_cast<double>(gpu.memory_bytes) * p.usable_memory_fraction);
}

std::string Gib(int64_t bytes) {
  // Exactly printf("%.1f GiB", bytes / 2^30) (round half to even on the exact quotient), in integer
  // arithmetic: a decision prints this 3 to 20 times and snprintf's float path costs ~2k
  // instructions.
  constexpr int64_t kGib = int64_t{1} << 30;
  if (bytes >= 0 && bytes <= INT64_MAX / 10) {
    const int64_t scaled = bytes * 10;
    int64_t tenths = scaled / kGib;
    const int64_t rest = scaled % kGib;
    if (rest > kGib / 2 || (rest == kGib / 2 && tenths % 2 == 1)) ++tenths;
    // Written into a buffer and copied once: the text is short (no allocation up to 15 characters).
    char buf[32];
    char* end = std::to_chars(buf, buf + 20, tenths / 10).ptr;  // at most 10 digits; 6 more follow
    *end++ = '.';
    *end++ = static_cast<char>('0' + tenths % 10);
    for (const char c : {' ', 'G', 'i', 'B'}) *end++ = c;
    return std::string(buf, end);
  }
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.1f GiB",
                static_cast<double>(bytes) / static_cast<double>(kGib));
  return buf;
}

std::string Cat(std::initializer_list<std::string_view> parts) {
  size_t size = 0;
  for (std::string_view part : parts) size += part.size();
  // Sized once, then each part copied to its place (append checks the capacity per part).
  std::string out(size, '\0');
  char* at = out.data();
  for (std::string_view part : parts) {
    if (!part.empty()) std::memcpy(at, part.data(), part.size());
    at += part.size();
  }
  return out;
}

Sharding StateSharding(const TrainingJob& job) {
  switch (job.framework) {
    case Framework::kDeepspeed:
      return Sharding::kZero3;
    case Framework::kMegatron:
      return Sharding::kZero1;
    default:
      return Sharding::kFsdpFull;
  }
}

bool FindMoreGpus(const PolicyContext& ctx, const TrainingJob& job, TrainingJob* out,
                  JobEstimate* estimate) {
  const int64_t node = ctx.partition->gpus_per_node;
  const GpuTresField field = ctx.request->gpu_field;
  // GPU counts of valid layouts, ascending.
  std::vector<int64_t> counts = LargerCounts(job, field, node, ctx.partition->max_gpus_per_job);
  std::erase_if(counts, [&](int64_t n) { return !SuitsLayout(job, n); });
  if (counts.empty()) return false;
  // Per-GPU memory of a sharded job does not grow with the GPU count (memory_combos_test checks the
  // monotonicity over the catalog), so the smallest count that fits is found by bisection: about
  // log2(64) estimates instead of up to 64 on the reject path, which runs inside slurmctld.
  // `out` is the candidate for every count tried (a reused one keeps its string buffers).
  TrainingJob& candidate = *out;
  candidate = job;
  SetGpus(job, counts.back(), field, node, &candidate);
  if (!Fits(ctx, *ctx.gpu, *ctx.partition, candidate, estimate)) return false;
  // The counts differ only in GPUs, GPUs per node and, with a Megatron global batch, the
  // accumulation, which the activations read only through the pipeline schedule: with one stage
  // or no global batch they are the same for every count, computed once for the counts tried.
  const bool share_activations = counts.size() > 1 && (job.pp == 1 || job.global_batch == 0);
  if (share_activations) ctx.prepared->ShareActivationsOf(candidate);
  // Two estimates take turns as the best so far and the one being tried (nothing is copied).
  JobEstimate other;
  JobEstimate* best = estimate;  // invariant: counts[hi] fits and *best is its estimate
  JobEstimate* trial = &other;
  size_t lo = 0, hi = counts.size() - 1;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    SetGpus(job, counts[mid], field, node, &candidate);
    if (Fits(ctx, *ctx.gpu, *ctx.partition, candidate, trial)) {
      hi = mid;
      std::swap(best, trial);
    } else {
      lo = mid + 1;
    }
  }
  if (share_activations) ctx.prepared->ForgetActivations();
  if (best != estimate) *estimate = std::move(*best);
  SetGpus(job, counts[hi], field, node, &candidate);
  return true;
}

std::vector<Alternative> FindAlternatives(const PolicyContext& ctx, const TrainingJob& job) {
  // Fitting alternatives first, each group in the order found: a fitting one goes in after the
  // fitting ones so far, the others at the end (cut to kMaxAlternatives at the end).
  std::vector<Alternative> out;
  out.reserve(16);  // at most 8 + one per other partition before the cut
  size_t fitting = 0;
  // Estimates `j` (moved into the alternative) on `gpu` under partition `p`. One estimate serves
  // them all: only its per-GPU bytes are read.
  JobEstimate e;
  const auto add = [&](std::string change, TrainingJob&& j, const GpuSpec& gpu,
                       const PartitionConfig& p, const std::string& partition) {
    const bool fits = Fits(ctx, gpu, p, j, &e);
    if (e.memory.per_gpu_bytes == 0) return;  // the estimate failed: not a valid alternative
    out.emplace(fits ? out.begin() + static_cast<std::ptrdiff_t>(fitting++) : out.end(),
                Alternative{std::move(change), std::move(j), partition, gpu.name,
                            e.memory.per_gpu_bytes, UsableBytes(gpu, p), fits});
  };
  const GpuSpec& gpu = *ctx.gpu;
  const PartitionConfig& part = *ctx.partition;

  // 1. Shard model state (same GPUs), then more GPUs with it.
  if (!ShardsWeights(job.sharding) && job.gpus > 1 && job.framework != Framework::kMegatron) {
    TrainingJob j = job;
    j.sharding = StateSharding(job);
    std::string change = Cat(
        {"--fmte-sharding=", ToString(j.sharding), " (same ", std::to_string(job.gpus), " GPUs)"});
    add(std::move(change), std::move(j), gpu, part, ctx.partition_name);
  }
  {
    TrainingJob sharded = job;
    if (!ShardsWeights(sharded.sharding) && sharded.framework != Framework::kMegatron)
      sharded.sharding = StateSharding(job);
    if (sharded.framework == Framework::kMegatron && sharded.sharding != Sharding::kZero1)
      sharded.sharding = Sharding::kZero1;
    TrainingJob more;
    bool found = FindMoreGpus(ctx, sharded, &more, &e);
    const bool add_ac = !found && sharded.activation_checkpointing != Checkpointing::kFull;
    if (add_ac) {  // sharding alone cannot hold the activations: checkpoint them too
      sharded.activation_checkpointing = Checkpointing::kFull;
      found = FindMoreGpus(ctx, sharded, &more, &e);
    }
    if (found) {
      const bool reshard = sharded.sharding != job.sharding;
      std::string change =
          Cat({"--gpus=", std::to_string(more.gpus), reshard ? " with --fmte-sharding=" : "",
               reshard ? ToString(sharded.sharding) : "", add_ac ? " " : "",
               add_ac ? kFullCheckpointingFlag : ""});
      out.emplace(out.begin() + static_cast<std::ptrdiff_t>(fitting++),
                  Alternative{std::move(change), std::move(more), ctx.partition_name, gpu.name,
                              e.memory.per_gpu_bytes, UsableBytes(gpu, part), true});
    }
  }
  // 1b. The HF Trainer under FSDP with accumulation holds unsharded gradients (docs/memory.md
  // "Gradient accumulation under FSDP"): reducing every micro-batch is a training-config change,
  // which the user then states to fmte with an #FMTE line.
  if (job.grad_accum > 1 && job.AccumulatesUnshardedGradients()) {
    TrainingJob j = job;
    j.sync_each_batch = true;
    add("accelerator_config.gradient_accumulation_kwargs.sync_each_batch: true in the training "
        "config and #FMTE sync-each-batch=true (transformers 4.47-5.1 ignore it)",
        std::move(j), gpu, part, ctx.partition_name);
  }
  // 1c. A colocated inference engine awake through the update (TrainingJob::generation_memory)
  // that sleeps instead: its share is then held only while it generates.
  if (job.generation_memory > 0 && !job.generation_sleeps) {
    TrainingJob j = job;
    j.generation_sleeps = true;
    add("vLLM's sleep mode while the policy trains (TRL --vllm_enable_sleep_mode, ms-swift "
        "--sleep_level 1, verl free_cache_engine=True)",
        std::move(j), gpu, part, ctx.partition_name);
  }
  // 1d. A colocated engine's smaller share: the largest multiple of 0.05 below the job's with which
  // the job fits and the engine keeps more than its 16-bit weights (with vLLM's tensor parallel
  // size 1), room for a KV cache (vLLM refuses to start without any).
  if (job.generation_memory > 0 && !Fits(ctx, gpu, part, job, &e) && e.memory.per_gpu_bytes > 0) {
    const double weights = 2.0 * static_cast<double>(e.memory.params.total);
    const double capacity = static_cast<double>(gpu.memory_bytes);
    for (int steps = static_cast<int>(std::ceil(job.generation_memory * 20)) - 1; steps >= 1;
         --steps) {
      const double share = steps / 20.0;
      if (share * capacity < 1.2 * weights) break;
      TrainingJob j = job;
      j.generation_memory = share;
      if (!Fits(ctx, gpu, part, j, &e)) continue;
      char text[200];
      std::snprintf(text, sizeof text,
                    "the generation engine's share of each GPU at %.2f (TRL and ms-swift "
                    "--vllm_gpu_memory_utilization, verl rollout.gpu_memory_utilization)",
                    share);
      add(text, std::move(j), gpu, part, ctx.partition_name);
      break;
    }
  }
  // 2. More tensor parallelism on the same GPUs (Megatron and others that support it).
  if (job.framework == Framework::kMegatron) {
    for (int64_t tp = job.tp * 2; tp <= std::min<int64_t>(job.gpus, part.gpus_per_node); tp *= 2) {
      TrainingJob j = job;
      j.tp = tp;
      if (!SuitsLayout(j, j.gpus)) continue;
      if (j.global_batch > 0) j.grad_accum = j.global_batch / (j.micro_batch * j.DataParallel());
      add(Flag("tp", std::to_string(tp)), std::move(j), gpu, part, ctx.partition_name);
      break;
    }
  }
  // 3. Activation checkpointing, a smaller micro-batch.
  if (job.activation_checkpointing != Checkpointing::kFull) {
    TrainingJob j = job;
    j.activation_checkpointing = Checkpointing::kFull;
    add(std::string(kFullCheckpointingFlag), std::move(j), gpu, part, ctx.partition_name);
  }
  if (job.micro_batch > 1) {
    // The largest smaller micro-batch that fits as predicted, the sequences per step kept (a
    // divisor of the micro-batch, the accumulation raised by the same factor); 1 when none does.
    int64_t mb = 1;
    for (int64_t d = job.micro_batch / 2; d > 1; --d) {
      if (job.micro_batch % d != 0) continue;
      TrainingJob j = job;
      j.micro_batch = d;
      if (j.global_batch == 0) j.grad_accum = job.grad_accum * (job.micro_batch / d);
      if (Fits(ctx, gpu, part, j, &e)) {
        mb = d;
        break;
      }
    }
    TrainingJob j = job;
    j.micro_batch = mb;
    if (j.global_batch == 0)
      j.grad_accum = job.grad_accum * (job.micro_batch / mb);  // same sequences per step
    std::string change = Cat({"--fmte-micro-batch=", std::to_string(mb),
                              " --fmte-grad-accum=", std::to_string(j.grad_accum)});
    add(std::move(change), std::move(j), gpu, part, ctx.partition_name);
  }
  // 4. Parameter-efficient methods (alone, and with checkpointing).
  for (Method m : {Method::kLora, Method::kQlora}) {
    if (job.method == m || job.method == Method::kQlora) continue;
    if (job.method != Method::kFull && m == Method::kLora) continue;
    TrainingJob j = job;
    j.method = m;
    if (m == Method::kQlora) j.quant = Quant::kNf4;
    if (job.activation_checkpointing == Checkpointing::kFull) {
      add(Flag("method", ToString(m)), std::move(j), gpu, part, ctx.partition_name);
      continue;
    }
    // Checkpointing changes only the activations: the method alone and with checkpointing share
    // one count of the adapted model's parameters (when the adapted job is valid at all).
    if (ValidateJob(j).ok()) ctx.prepared->ShareParamsOf(j);
    add(Flag("method", ToString(m)), TrainingJob(j), gpu, part, ctx.partition_name);
    j.activation_checkpointing = Checkpointing::kFull;
    add(Cat({"--fmte-method=", ToString(m), " ", kFullCheckpointingFlag}), std::move(j), gpu, part,
        ctx.partition_name);
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
      add(Cat({"--partition=", p.name, " (", (*other)->name, ")"}), std::move(j), **other, p,
          p.name);
    }
  }
  if (out.size() > kMaxAlternatives) out.erase(out.begin() + kMaxAlternatives, out.end());
  return out;
}

}  // namespace fmte::internal
