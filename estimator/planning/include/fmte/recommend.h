// Layout search: for a model, a method, a GPU type, a GPU count (or range) and a global batch, try
// tensor/pipeline/data parallel degrees, micro-batch, activation checkpointing, ZeRO/FSDP mode and
// offload; rank the layouts that fit by predicted step time (and GPU-hours), and say why the best
// ones that do not fit fail.
//
// Exhaustive over the space below, pruned only where the answer is known without estimating:
// divisibility (tp | heads, tp <= GPUs per node, pp <= layers, dp | global batch / micro-batch) and
// monotonicity of memory in the micro-batch (once a micro-batch does not fit, larger ones are not
// tried). bench/recommend_bench.cc: 70B on 1,024 GPUs.
// Thread-safety: pure function.
#ifndef FMTE_RECOMMEND_H_
#define FMTE_RECOMMEND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "fmte/cluster.h"
#include "fmte/gpu.h"
#include "fmte/job.h"
#include "fmte/model.h"
#include "fmte/status.h"
#include "fmte/time.h"

namespace fmte {

struct RecommendRequest {
  TrainingJob base;  // model, method, precision, optimizer, seq_len, framework, work...
  int64_t min_gpus = 1;
  int64_t max_gpus = 1;      // a range tries whole nodes (and counts below one node)
  int64_t global_batch = 0;  // sequences per step; required
  bool search_checkpointing = true;
  bool search_sharding = true;
  bool search_offload = true;
  int64_t max_micro_batch = 64;
  size_t top = 10;            // feasible layouts kept
  size_t top_infeasible = 3;  // best layouts that do not fit, with the reason
};

struct LayoutCandidate {
  TrainingJob job;  // the full job of this layout
  bool fits = false;
  std::string why_not;  // when !fits: memory or layout reason
  int64_t per_gpu_bytes = 0;
  int64_t gpu_capacity_bytes = 0;
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;
  double gpu_hours = 0;  // whole job when the work is known, else per 1,000 steps
  bool gpu_hours_whole_job = false;
};

struct Recommendation {
  std::vector<LayoutCandidate> feasible;    // best first (by step time, then GPU-hours)
  std::vector<LayoutCandidate> infeasible;  // fastest layouts that did not fit
  int64_t evaluated = 0;                    // layouts estimated
  int64_t feasible_count = 0;
};

Result<Recommendation> Recommend(const ModelArch& model, const GpuSpec& gpu,
                                 const ClusterSpec& cluster, const TimeModel& time_model,
                                 const RecommendRequest& request);

}  // namespace fmte

#endif  // FMTE_RECOMMEND_H_
