// Batching simulation (tokens.h): TE0's padded-batch width
// (fm_training_estimator/tokens/te0/te0.py get_estimated_batch_width_random_shuffle: shuffle,
// split into batches of b with drop_last=False, width = the longest sample of each batch,
// averaged over RUNS shuffles), plus truncation at seq_len and packing into rows of seq_len.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "fmte/tokens.h"

namespace fmte {
namespace {

// Uniform integer in [0, n) by rejection, so that the shuffle depends only on mt19937_64 (whose
// output the standard fixes), not on the library's distribution implementation.
uint64_t UniformBelow(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t r;
  do r = rng();
  while (r >= limit);
  return r % n;
}

Status Check(const std::vector<int64_t>& tokens, const BatchingOptions& o) {
  if (tokens.empty()) return Status::InvalidArgument("no samples to batch");
  if (o.batch_size < 1) return Status::InvalidArgument("--batch-size: expected a positive integer");
  if (o.seq_len < 0) return Status::InvalidArgument("--seq-len: expected a positive integer");
  if (o.packing && o.seq_len <= 0)
    return Status::InvalidArgument("--packing needs --seq-len (the length of a packed row)");
  if (!(o.epochs > 0) || !std::isfinite(o.epochs))
    return Status::InvalidArgument("--epochs: expected a positive number");
  return Status::Ok();
}

void FinishSteps(const BatchingOptions& o, BatchingResult* r) {
  r->steps =
      static_cast<int64_t>(std::ceil(static_cast<double>(r->steps_per_epoch) * o.epochs - 1e-9));
  r->tokens_all_epochs = static_cast<double>(r->total_tokens) * o.epochs;
  r->padding_fraction =
      r->padded_tokens > 0
          ? std::max(0.0, 1 - static_cast<double>(r->total_tokens) / r->padded_tokens)
          : 0;
}

}  // namespace

Result<BatchingResult> SimulateBatching(const std::vector<int64_t>& sample_tokens,
                                        const BatchingOptions& o) {
  FMTE_RETURN_IF_ERROR(Check(sample_tokens, o));
  BatchingResult r;
  const int64_t n = static_cast<int64_t>(sample_tokens.size());
  r.samples = n;
  r.max_sample_tokens = *std::max_element(sample_tokens.begin(), sample_tokens.end());

  if (o.packing) {
    // Samples concatenated and cut into rows of seq_len: no padding but the last row's tail.
    r.total_tokens = std::accumulate(sample_tokens.begin(), sample_tokens.end(), int64_t{0});
    const int64_t rows = std::max<int64_t>(1, (r.total_tokens + o.seq_len - 1) / o.seq_len);
    r.steps_per_epoch = (rows + o.batch_size - 1) / o.batch_size;
    r.mean_batch_width = static_cast<double>(o.seq_len);
    r.padded_tokens = static_cast<double>(rows) * static_cast<double>(o.seq_len);
    FinishSteps(o, &r);
    return r;
  }

  std::vector<int64_t> lengths(sample_tokens);
  for (int64_t& t : lengths) {
    if (o.seq_len > 0 && t > o.seq_len) {
      t = o.seq_len;
      ++r.truncated_samples;
    }
    r.total_tokens += t;
  }
  const int64_t batches = (n + o.batch_size - 1) / o.batch_size;
  r.steps_per_epoch = batches;
  const int64_t runs = std::max<int64_t>(1, o.runs);
  double width_sum = 0, padded_sum = 0;
  for (int64_t run = 0; run < runs; ++run) {
    std::mt19937_64 rng(o.seed + static_cast<uint64_t>(run));
    for (int64_t i = n - 1; i > 0; --i)
      std::swap(lengths[i], lengths[UniformBelow(rng, static_cast<uint64_t>(i) + 1)]);
    for (int64_t b = 0; b < batches; ++b) {
      const auto first = lengths.begin() + b * o.batch_size;
      const auto last = lengths.begin() + std::min(n, (b + 1) * o.batch_size);
      const int64_t width = *std::max_element(first, last);
      width_sum += static_cast<double>(width);
      padded_sum += static_cast<double>(width) * static_cast<double>(last - first);
    }
  }
  r.mean_batch_width = width_sum / static_cast<double>(runs * batches);
  r.padded_tokens = padded_sum / static_cast<double>(runs);
  FinishSteps(o, &r);
  return r;
}

}  // namespace fmte
