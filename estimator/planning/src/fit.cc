// SolveFit: what fits, by searching one field of the job with the memory estimate
// (fmte/fit.h). Memory grows with the micro-batch and the sequence and does not grow with the GPU
// count at a fixed tensor/pipeline split, so those searches double and then bisect.
#include "fmte/fit.h"

#include <algorithm>
#include <array>
#include <functional>
#include <utility>

#include "fmte/memory_prepared.h"

namespace fmte {
namespace {

constexpr int64_t kMaxMicroBatch = 1 << 20, kMaxSeq = int64_t{1} << 24;

constexpr std::array<std::pair<FitTarget, std::string_view>, 4> kTargetNames{
    {{FitTarget::kMicroBatch, "micro-batch"},
     {FitTarget::kSeqLen, "seq-len"},
     {FitTarget::kGpus, "gpus"},
     {FitTarget::kModel, "model"}}};

struct Searcher {
  Searcher(const ModelArch& m, const GpuSpec& g, int64_t usable_bytes)
      : model(m), gpu(g), usable(usable_bytes), prepared(m) {}

  const ModelArch& model;
  const GpuSpec& gpu;
  int64_t usable = 0;
  int64_t evaluated = 0;
  memory::PreparedModel prepared;  // the model's layers counted once for every estimate
  MemoryEstimate m;                // reused: an estimate allocates nothing

  // The job's memory, or nothing when the job is not a valid layout for the model.
  bool Eval(const TrainingJob& j, FitPoint* p) {
    ++evaluated;
    if (!ValidateJob(j).ok() || !memory::EstimateMemory(prepared, j, gpu, &m).ok()) return false;
    p->job = j;
    p->params = m.params.total;
    p->per_gpu_bytes = m.per_gpu_bytes;
    p->bound_bytes = m.bound_bytes;
    p->fits = m.per_gpu_bytes <= usable;
    p->fits_at_bound = m.bound_bytes <= usable;
    return true;
  }

  // The largest v in [1, hi] with ok(v) (0 if none), for ok true then false as v grows; `best`
  // gets its point and `next` the point of v + 1 when that was estimated.
  int64_t Largest(int64_t hi, const std::function<void(int64_t, TrainingJob*)>& set,
                  const TrainingJob& base, bool at_bound, FitPoint* best, FitPoint* next) {
    auto ok = [&](int64_t v, FitPoint* p) {
      *p = FitPoint{};
      TrainingJob j = base;
      set(v, &j);
      return Eval(j, p) && (at_bound ? p->fits_at_bound : p->fits);
    };
    FitPoint p;
    if (!ok(1, &p)) {
      if (next != nullptr && p.per_gpu_bytes > 0) *next = p;
      return 0;
    }
    *best = p;
    int64_t lo = 1, up = 2;  // ok(lo); up: not yet known
    while (up <= hi && ok(up, &p)) {
      *best = p;
      lo = up;
      up = std::min(hi + 1, up * 2);
      if (lo == hi) return lo;
    }
    if (up > hi) return lo;
    FitPoint fail = p;  // ok(up) is false
    while (up - lo > 1) {
      const int64_t mid = lo + (up - lo) / 2;
      if (ok(mid, &p)) {
        lo = mid;
        *best = p;
      } else {
        up = mid;
        fail = p;
      }
    }
    if (next != nullptr) *next = fail;
    return lo;
  }
};

// The largest value of `field` (micro-batch or sequence) that fits as predicted and at the bound.
void SolveLargest(Searcher& s, const TrainingJob& job, int64_t TrainingJob::*field, int64_t hi,
                  FitAnswer* a) {
  auto set = [field](int64_t v, TrainingJob* j) { j->*field = v; };
  a->predicted = s.Largest(hi, set, job, false, &a->predicted_point, &a->next_point);
  a->at_bound = s.Largest(hi, set, job, true, &a->bound_point, nullptr);
  a->next = a->next_point.per_gpu_bytes > 0 ? a->next_point.job.*field : 0;
}

// GPU counts tried: every count up to 8, then whole 8-GPU nodes.
std::vector<int64_t> GpuCounts(int64_t max_gpus) {
  std::vector<int64_t> out;
  for (int64_t n = 1; n <= std::min<int64_t>(8, max_gpus); ++n) out.push_back(n);
  for (int64_t n = 16; n <= max_gpus; n += 8) out.push_back(n);
  return out;
}

void SolveGpus(Searcher& s, const FitRequest& r, FitAnswer* a) {
  const TrainingJob& base = r.job;
  // Tensor/pipeline splits tried: the job's own, and under Megatron the usual powers of two.
  std::vector<std::pair<int64_t, int64_t>> splits = {{base.tp, base.pp}};
  if (base.framework == Framework::kMegatron)
    for (int64_t tp : {1, 2, 4, 8})
      for (int64_t pp : {1, 2, 4, 8, 16, 32})
        if (pp <= s.model.num_layers && !(tp == base.tp && pp == base.pp))
          splits.emplace_back(tp, pp);
  const std::vector<int64_t> counts = GpuCounts(r.max_gpus);
  auto with = [&](int64_t n, std::pair<int64_t, int64_t> split) {
    TrainingJob j = base;
    j.gpus = n;
    j.tp = split.first;
    j.pp = split.second;
    if (j.vpp > 1 && j.pp == 1) j.vpp = 1;
    if (n % j.ModelParallel() != 0 ||
        (j.tp * j.DataContextParallel()) % (j.ExpertTensorParallel() * j.ep) != 0)
      j.ep = 1;  // ep splits dp
    return j;
  };
  // The fewest GPUs of each split (memory does not grow with the count at a fixed split: the
  // first index that fits is found by bisection over the counts that hold the split).
  auto fewest = [&](std::pair<int64_t, int64_t> split, bool at_bound, FitPoint* at) {
    std::vector<int64_t> ns;
    for (int64_t n : counts)
      if (n % (split.first * split.second * base.cp) == 0) ns.push_back(n);
    auto ok = [&](size_t i, FitPoint* p) {
      *p = FitPoint{};
      return s.Eval(with(ns[i], split), p) && (at_bound ? p->fits_at_bound : p->fits);
    };
    FitPoint p;
    if (ns.empty() || !ok(ns.size() - 1, &p)) return int64_t{0};
    *at = p;
    size_t lo = 0, hi = ns.size() - 1;  // ok(hi)
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (ok(mid, &p)) {
        hi = mid;
        *at = p;
      } else {
        lo = mid + 1;
      }
    }
    return ns[hi];
  };
  for (const bool at_bound : {false, true}) {
    int64_t best = 0;
    FitPoint best_point;
    for (const auto& split : splits) {
      FitPoint p;
      const int64_t n = fewest(split, at_bound, &p);
      if (n > 0 &&
          (best == 0 || n < best || (n == best && p.per_gpu_bytes < best_point.per_gpu_bytes))) {
        best = n;
        best_point = p;
      }
    }
    (at_bound ? a->at_bound : a->predicted) = best;
    (at_bound ? a->bound_point : a->predicted_point) = best_point;
  }
  if (a->predicted == 0) return;
  for (const auto& split : splits) {
    FitPoint p;
    if (a->predicted % (split.first * split.second) == 0 && s.Eval(with(a->predicted, split), &p) &&
        p.fits)
      a->layouts.push_back(p);
  }
  std::sort(a->layouts.begin(), a->layouts.end(),
            [](const FitPoint& x, const FitPoint& y) { return x.per_gpu_bytes < y.per_gpu_bytes; });
}

}  // namespace

std::string_view ToString(FitTarget t) {
  for (const auto& [target, name] : kTargetNames)
    if (target == t) return name;
  return kTargetNames[0].second;
}

Result<FitTarget> ParseFitTarget(std::string_view s) {
  for (const auto& [target, name] : kTargetNames)
    if (s == name) return target;
  return Status::InvalidArgument("--solve: expected micro-batch|seq-len|gpus|model, got '" +
                                 std::string(s) + "'");
}

Result<FitAnswer> SolveFit(const ModelArch& model, const GpuSpec& gpu, const FitRequest& r,
                           const ModelCatalog* catalog) {
  if (!(r.usable_fraction > 0 && r.usable_fraction <= 1))
    return Status::InvalidArgument("usable memory fraction: expected a number in (0, 1]");
  if (r.max_gpus < 1 || r.max_gpus > (1 << 20))
    return Status::InvalidArgument("--max-gpus: expected 1 to 1048576");
  Searcher s(model, gpu,
             static_cast<int64_t>(static_cast<double>(gpu.memory_bytes) * r.usable_fraction));
  FitAnswer a;
  a.target = r.target;
  a.usable_bytes = s.usable;
  switch (r.target) {
    case FitTarget::kMicroBatch:
      SolveLargest(s, r.job, &TrainingJob::micro_batch, kMaxMicroBatch, &a);
      break;
    case FitTarget::kSeqLen:
      SolveLargest(s, r.job, &TrainingJob::seq_len, kMaxSeq, &a);
      break;
    case FitTarget::kGpus:
      SolveGpus(s, r, &a);
      break;
    case FitTarget::kModel: {
      if (catalog == nullptr) return Status::InvalidArgument("--solve model: no model catalog");
      for (const std::string& id : catalog->Ids()) {
        Result<const ModelArch*> m = catalog->Find(id);
        if (!m.ok()) continue;
        Searcher one(**m, gpu, s.usable);
        TrainingJob j = r.job;
        j.model = id;
        FitPoint p;
        if (one.Eval(j, &p)) a.models.push_back(p);
        s.evaluated += one.evaluated;
      }
      std::sort(a.models.begin(), a.models.end(), [](const FitPoint& x, const FitPoint& y) {
        if (x.fits != y.fits) return x.fits;
        if (x.fits) return x.params != y.params ? x.params > y.params : x.job.model < y.job.model;
        // Equal sizes (a base and its instruct copy) in name order, whatever the catalog's order.
        return x.per_gpu_bytes != y.per_gpu_bytes ? x.per_gpu_bytes < y.per_gpu_bytes
                                                  : x.job.model < y.job.model;
      });
      break;
    }
  }
  a.evaluated = s.evaluated;
  return a;
}

}  // namespace fmte
