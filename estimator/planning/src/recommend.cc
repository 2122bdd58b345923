// Exhaustive layout search (recommend.h).
#include "fmte/recommend.h"

#include <algorithm>
#include <cstdio>

#include "fmte/memory.h"
#include "fmte/walltime.h"

namespace fmte {
namespace {

std::vector<int64_t> Divisors(int64_t n, int64_t max) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= std::min(n, max); ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

std::vector<int64_t> GpuCounts(const RecommendRequest& r, int64_t per_node) {
  std::vector<int64_t> out;
  if (r.min_gpus == r.max_gpus) return {r.min_gpus};
  for (int64_t k = r.min_gpus; k <= r.max_gpus; ++k) {
    const bool whole_nodes = k % per_node == 0;
    const bool part_node = k < per_node && (k & (k - 1)) == 0;  // 1, 2, 4 GPUs of one node
    if (whole_nodes || part_node) out.push_back(k);
  }
  return out;
}

struct ShardingChoice {
  Sharding sharding;
  bool offload_optimizer;
  bool offload_params;
};

std::vector<ShardingChoice> ShardingChoices(const RecommendRequest& r, int64_t dp, int64_t pp) {
  const TrainingJob& b = r.base;
  if (!r.search_sharding) return {{b.sharding, b.offload_optimizer, b.offload_params}};
  if (dp == 1) return {{Sharding::kNone, false, false}};
  std::vector<ShardingChoice> out;
  const bool fsdp = b.framework == Framework::kFsdp || b.framework == Framework::kTorchtune;
  out.push_back({fsdp ? Sharding::kFsdpNoShard : Sharding::kDdp, false, false});
  if (b.framework == Framework::kMegatron) {
    out.push_back({Sharding::kZero1, false, false});  // Megatron's distributed optimizer
    return out;
  }
  if (!fsdp) out.push_back({Sharding::kZero1, false, false});
  // DeepSpeed refuses ZeRO-2/3 with pipeline parallelism; FSDP has no pipeline.
  if (pp > 1) return out;
  const Sharding s2 = fsdp ? Sharding::kFsdpGradOp : Sharding::kZero2;
  const Sharding s3 = fsdp ? Sharding::kFsdpFull : Sharding::kZero3;
  out.push_back({s2, false, false});
  out.push_back({s3, false, false});
  if (r.search_offload) {
    if (!fsdp) out.push_back({s2, true, false});
    out.push_back({s3, true, false});
    out.push_back({s3, true, true});
  }
  return out;
}

std::string GiB(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  return buf;
}

bool Better(const LayoutCandidate& a, const LayoutCandidate& b) {
  if (a.step_time_s != b.step_time_s) return a.step_time_s < b.step_time_s;
  return a.gpu_hours < b.gpu_hours;
}

}  // namespace

Result<Recommendation> Recommend(const ModelArch& model, const GpuSpec& gpu,
                                 const ClusterSpec& cluster, const TimeModel& time_model,
                                 const RecommendRequest& req) {
  if (req.global_batch <= 0)
    return Status::InvalidArgument("--global-batch: required (sequences per step)");
  if (req.min_gpus <= 0 || req.max_gpus < req.min_gpus)
    return Status::InvalidArgument("--gpus: expected N or MIN-MAX with 1 <= MIN <= MAX");
  if (req.max_gpus > (1 << 20)) return Status::InvalidArgument("--gpus: at most 1048576");
  const int64_t per_node = std::max<int64_t>(1, cluster.gpus_per_node);
  std::vector<Checkpointing> ckpts = {req.base.activation_checkpointing};
  if (req.search_checkpointing)
    ckpts = {Checkpointing::kNone, Checkpointing::kSelective, Checkpointing::kFull};

  Recommendation rec;
  std::vector<LayoutCandidate> feasible, infeasible;
  for (int64_t n : GpuCounts(req, per_node)) {
    for (int64_t tp : Divisors(n, std::min(per_node, model.num_heads))) {
      if (model.num_heads % tp != 0) continue;
      for (int64_t pp : Divisors(n / tp, model.num_layers)) {
        // The job's context parallelism is kept: it is chosen for the sequence length.
        if ((n / (tp * pp)) % req.base.cp != 0) continue;
        const int64_t dp = n / (tp * pp * req.base.cp);
        if (req.global_batch % dp != 0) continue;
        const int64_t per_rank = req.global_batch / dp;
        for (const ShardingChoice& sc : ShardingChoices(req, dp * req.base.cp, pp)) {
          for (Checkpointing ck : ckpts) {
            for (int64_t b : Divisors(per_rank, req.max_micro_batch)) {
              TrainingJob job = req.base;
              job.gpus = n;
              job.gpus_per_node = std::min(per_node, n);
              job.tp = tp;
              job.pp = pp;
              job.vpp = 1;
              job.sequence_parallel = tp > 1 && job.framework == Framework::kMegatron;
              job.micro_batch = b;
              job.grad_accum = per_rank / b;
              job.global_batch = req.global_batch;
              job.sharding = sc.sharding;
              job.offload_optimizer = sc.offload_optimizer;
              job.offload_params = sc.offload_params;
              job.activation_checkpointing = ck;
              if (!ValidateJob(job).ok()) break;
              Result<MemoryEstimate> mem = EstimateMemory(model, job, gpu);
              if (!mem.ok()) break;  // the layout does not fit the architecture
              Result<TimeEstimate> t = EstimateStepTime(model, job, gpu, cluster, time_model);
              if (!t.ok()) break;
              ++rec.evaluated;
              LayoutCandidate c;
              c.job = std::move(job);
              c.fits = mem->fits;
              c.per_gpu_bytes = mem->per_gpu_bytes;
              c.gpu_capacity_bytes = mem->gpu_capacity_bytes;
              c.step_time_s = t->step_time_s;
              c.tokens_per_s_per_gpu = t->tokens_per_s_per_gpu;
              c.mfu = t->mfu;
              Result<int64_t> steps = StepsOfJob(c.job, t->global_batch);
              // An online objective's steps also generate (not modelled): no whole-job figure.
              c.gpu_hours_whole_job = steps.ok() && !GeneratesCompletions(c.job.objective);
              c.gpu_hours = (steps.ok() ? static_cast<double>(*steps) : 1000.0) * c.step_time_s *
                            static_cast<double>(n) / 3600.0;
              if (c.fits) {
                feasible.push_back(std::move(c));
              } else {
                c.why_not = "needs " + GiB(c.per_gpu_bytes) + " per GPU, the " + gpu.name +
                            " has " + GiB(c.gpu_capacity_bytes);
                infeasible.push_back(std::move(c));
                break;  // memory grows with the micro-batch: larger ones do not fit either
              }
            }
          }
        }
      }
    }
  }
  rec.feasible_count = static_cast<int64_t>(feasible.size());
  auto keep = [](std::vector<LayoutCandidate>* v, size_t k) {
    const size_t n = std::min(k, v->size());
    std::partial_sort(v->begin(), v->begin() + static_cast<std::ptrdiff_t>(n), v->end(), Better);
    v->resize(n);
  };
  keep(&feasible, req.top);
  keep(&infeasible, req.top_infeasible);
  // Only report infeasible layouts that would have beaten the best feasible one (or all, if none
  // fit).
  if (!feasible.empty()) {
    const double best = feasible.front().step_time_s;
    infeasible.erase(
        std::remove_if(infeasible.begin(), infeasible.end(),
                       [&](const LayoutCandidate& c) { return c.step_time_s >= best; }),
        infeasible.end());
  }
  rec.feasible = std::move(feasible);
  rec.infeasible = std::move(infeasible);
  return rec;
}

}  // namespace fmte
