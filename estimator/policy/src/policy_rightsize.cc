// Right-sizing notices: a job that fits on far fewer GPUs, on a partition with a smaller GPU, or
// asks for a time limit far above its predicted bound gets one line each, with the numbers. They
// never change the decision: a notice that is wrong costs a user a moment, a decision that is wrong
// costs a job.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "policy_internal.h"

namespace fmte::internal {
namespace {

// "5.3 GPU-hours"
std::string GpuHours(double wall_s, int64_t gpus) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f GPU-hours", wall_s * static_cast<double>(gpus) / 3600.0);
  return buf;
}

std::string Minutes(double s) {
  return FormatSlurmTime(static_cast<int64_t>(std::ceil(std::max(s, 0.0) / 60.0)));
}

// The extra GPUs are worth a notice when the same training on fewer GPUs costs at least 20% fewer
// GPU-hours (they would idle a fifth of their time or more), or, without a time prediction, when a
// parameter-efficient job (LoRA, QLoRA, prompt/prefix tuning) fits on one GPU.
constexpr double kWastedGpuHoursFactor = 1.25;

// A single-node job that asks for at least twice the GPUs it needs: the fewest GPUs (a divisor of
// the count, suiting tp x pp and a Megatron global batch) on which it fits with the same
// micro-batch and the same global batch (gradient accumulation raised by the factor). Multi-node
// jobs ask for GPUs to finish sooner, and the scaling a notice would rest on is the time model's
// least certain part (docs/time.md), so they get none. Nor do jobs that offload model states:
// host memory, which fmte does not check, is what bounds them on fewer GPUs.
void FewerGpus(const PolicyContext& ctx, const TrainingJob& job, const Decision& d,
               std::vector<std::string>* notes) {
  const int64_t mp = job.ModelParallel();
  if (job.gpus < 2 || mp <= 0 || job.Nodes() > 1 || job.offload_optimizer || job.offload_params)
    return;
  for (int64_t n = mp; n <= job.gpus / 2; n += mp) {
    if (job.gpus % n != 0) continue;
    TrainingJob fewer = job;
    fewer.gpus = n;
    fewer.gpus_per_node = n;
    if (job.global_batch > 0) {
      const int64_t per_step = job.micro_batch * (n / mp);
      if (per_step <= 0 || job.global_batch % per_step != 0) continue;
      fewer.grad_accum = job.global_batch / per_step;
    } else {
      fewer.grad_accum = job.grad_accum * (job.gpus / n);
    }
    JobEstimate e;
    if (!ctx.prepared->EstimateMemory(fewer, *ctx.gpu, &e).ok() ||
        e.memory.per_gpu_bytes > ctx.usable_bytes)
      continue;
    std::string line =
        Cat({"right-size: this job also fits on ", std::to_string(n), " GPU", n == 1 ? "" : "s",
             " of the ", std::to_string(job.gpus), " it asks for (", Gib(e.memory.per_gpu_bytes),
             " per GPU of ", Gib(ctx.usable_bytes), " usable, with the same global batch)"});
    JobEstimate timed;
    if (d.estimate.has_time && ctx.prepared->Estimate(fewer, *ctx.gpu, &timed).ok() &&
        timed.has_time) {
      const double asked = d.estimate.wall_time_s * static_cast<double>(job.gpus);
      const double fewest = timed.wall_time_s * static_cast<double>(n);
      if (asked < kWastedGpuHoursFactor * fewest) return;
      line += Cat({": predicted ", Minutes(timed.wall_time_s), " on ", std::to_string(n), " (",
                   GpuHours(timed.wall_time_s, n), ") against ", Minutes(d.estimate.wall_time_s),
                   " on ", std::to_string(job.gpus), " (",
                   GpuHours(d.estimate.wall_time_s, job.gpus), ")"});
    } else if (n != 1 || job.method == Method::kFull) {
      return;
    }
    notes->push_back(std::move(line));
    return;
  }
}

// A GPU a tier down: at most 3/4 of this one's memory and no faster (an 80 GB H100 is not a smaller
// GPU than an 80 GB A100 because the driver reports a little less memory).
constexpr double kSmallerMemoryFraction = 0.75;
bool TierDown(const GpuSpec& other, const GpuSpec& gpu) {
  return static_cast<double>(other.memory_bytes) <=
             kSmallerMemoryFraction * static_cast<double>(gpu.memory_bytes) &&
         other.PeakTflops(true) <= gpu.PeakTflops(true) &&
         other.PeakTflops(false) <= gpu.PeakTflops(false);
}

// The configured partition with the smallest GPU a tier down on which the job fits as it is.
void SmallerGpu(const PolicyContext& ctx, const TrainingJob& job, std::vector<std::string>* notes) {
  if (!ctx.config->suggest_partitions) return;
  const GpuSpec* best = nullptr;
  const PartitionConfig* best_partition = nullptr;
  int64_t best_need = 0, best_usable = 0;
  for (const PartitionConfig& p : ctx.config->partitions) {
    if (p.name == ctx.partition_name || p.mode == Mode::kOff) continue;
    const std::string name = ctx.config->GpuNameFor(p.name, "");
    if (name.empty()) continue;
    auto other = ctx.estimator->catalogs().gpus.Find(name);
    if (!other.ok() || !TierDown(**other, *ctx.gpu)) continue;
    if (best != nullptr && (*other)->memory_bytes >= best->memory_bytes) continue;
    TrainingJob j = job;
    j.gpu = (*other)->name;
    j.gpus_per_node = std::min(j.gpus, p.gpus_per_node);
    JobEstimate e;
    const int64_t usable = UsableBytes(**other, p);
    if (!ctx.prepared->EstimateMemory(j, **other, &e).ok() || e.memory.per_gpu_bytes > usable)
      continue;
    best = *other;
    best_partition = &p;
    best_need = e.memory.per_gpu_bytes;
    best_usable = usable;
  }
  if (best == nullptr) return;
  notes->push_back(Cat({"right-size: it also fits partition ", best_partition->name, "'s ",
                        best->name, " (", Gib(best_need), " per GPU of ", Gib(best_usable),
                        " usable): --partition=", best_partition->name}));
}

// A limit far above what the job needs: at least 4x the larger of the calibrated bound and the
// prediction widened by the time model's largest measured under-prediction (public Hopper runs ran
// up to 2.2x longer than predicted: throughput +120%, issue 13), and 2 hours above it. The backfill
// scheduler starts a job sooner when its limit is nearer what it needs.
constexpr double kFarAboveFactor = 4.0;
constexpr double kTimeModelSpread = 2.2;
constexpr double kFarAboveMinS = 2 * 3600.0;

void LongLimit(const JobRequest& r, const Decision& d, std::vector<std::string>* notes) {
  if (r.time_limit_min <= 0 || !d.estimate.has_time || d.new_time_limit_min > 0) return;
  const double predicted_s = d.estimate.wall_time_s;
  const double needs_s = std::max(d.estimate.wall_time_bound_s, predicted_s * kTimeModelSpread);
  const double limit_s = static_cast<double>(r.time_limit_min) * 60.0;
  if (predicted_s <= 0 || limit_s < kFarAboveFactor * needs_s || limit_s - needs_s < kFarAboveMinS)
    return;
  char times[32];
  std::snprintf(times, sizeof times, "%.0fx", limit_s / predicted_s);
  notes->push_back(Cat({"right-size: the time limit ", FormatSlurmTime(r.time_limit_min), " is ",
                        times, " the predicted ", Minutes(predicted_s),
                        "; a limit nearer what the job needs lets the backfill scheduler start it "
                        "sooner"}));
}

}  // namespace

const UnreadSetting* UnreadObjective(const JobRequest& r) {
  for (const UnreadSetting& u : r.unread)
    if (u.key == "objective") return &u;
  return nullptr;
}

void AddRightSizingNotices(const PolicyContext& ctx, const TrainingJob& job, Decision* d) {
  if (!ctx.partition->right_sizing || d->kind == DecisionKind::kReject || !d->estimated) return;
  // An online objective's estimate is its update's alone: the engine that generates its
  // completions (colocated vLLM, a server's GPUs, verl's and OpenRLHF's rollout, reference and
  // critic models) needs GPUs and memory fmte does not count, so no fewer or smaller GPUs are
  // suggested from it.
  if (GeneratesCompletions(job.objective)) return;
  std::vector<std::string> notes;
  FewerGpus(ctx, job, *d, &notes);
  SmallerGpu(ctx, job, &notes);
  // A multimodal model's prediction leaves out its images' encoding (DecideTime): no time notice.
  // Nor where the objective is unknown (DecideTime).
  if (!LoadsVisionTower(*ctx.model, job) && UnreadObjective(*ctx.request) == nullptr)
    LongLimit(*ctx.request, *d, &notes);
  for (std::string& n : notes) d->reasons.push_back(std::move(n));
}

}  // namespace fmte::internal
