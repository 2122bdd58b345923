// What fits: the inverse questions of the memory estimate, answered with the same estimator and
// its bound (memory.bound_bytes): for one job on one GPU type,
//   micro-batch  the largest micro-batch that fits,
//   seq-len      the longest sequence that fits,
//   gpus         the fewest GPUs that fit, with the layouts that do at that count,
//   model        the catalog models that fit.
// "Fits as predicted" is per_gpu_bytes <= usable memory (the GPU x UsableMemoryFraction, as the
// policy judges); "fits at the bound" is bound_bytes <= usable memory: never above the measured
// peak of a published run with such a prediction (docs/memory.md "The bound"). Memory only (no time
// model). Micro-batch and sequence use memory's monotonicity (binary search after doubling); gpus
// tries counts up to max_gpus; model estimates every catalog model. Thread-safety: pure functions.
// bench/fit_bench.cc.
#ifndef FMTE_FIT_H_
#define FMTE_FIT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/gpu.h"
#include "fmte/job.h"
#include "fmte/memory.h"
#include "fmte/model.h"
#include "fmte/status.h"

namespace fmte {

enum class FitTarget { kMicroBatch, kSeqLen, kGpus, kModel };
std::string_view ToString(FitTarget t);
Result<FitTarget> ParseFitTarget(std::string_view s);  // micro-batch|seq-len|gpus|model

struct FitRequest {
  TrainingJob job;  // the job; the solved field is ignored
  FitTarget target = FitTarget::kMicroBatch;
  double usable_fraction = 0.90;  // fmte.conf UsableMemoryFraction
  int64_t max_gpus = 4096;        // gpus: largest count tried
};

// One job that was estimated: the value of the solved field and its memory.
struct FitPoint {
  TrainingJob job;
  int64_t params = 0;  // the model's parameters
  int64_t per_gpu_bytes = 0;
  int64_t bound_bytes = 0;
  bool fits = false;           // per_gpu_bytes <= usable_bytes
  bool fits_at_bound = false;  // bound_bytes <= usable_bytes
};

struct FitAnswer {
  FitTarget target = FitTarget::kMicroBatch;
  int64_t usable_bytes = 0;
  // micro-batch / seq-len / gpus: the best value that fits as predicted, and the best that fits at
  // the bound (0 when none does), with the job at each; `next` is the first value that does not
  // fit as predicted (0 when every value tried fits).
  int64_t predicted = 0, at_bound = 0, next = 0;
  FitPoint predicted_point, bound_point, next_point;
  // gpus: every layout that fits as predicted at `predicted` GPUs, smallest memory first.
  std::vector<FitPoint> layouts;
  // model: every catalog model the job was estimated with, largest that fits first, then the
  // ones that do not fit (smallest first). Models the job cannot run on (a layout error) are
  // left out.
  std::vector<FitPoint> models;
  int64_t evaluated = 0;  // estimates made
};

// `catalog` is needed for FitTarget::kModel only (nullptr otherwise).
Result<FitAnswer> SolveFit(const ModelArch& model, const GpuSpec& gpu, const FitRequest& request,
                           const ModelCatalog* catalog = nullptr);

}  // namespace fmte

#endif  // FMTE_FIT_H_
