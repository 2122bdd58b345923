// Wall time = start-up + weights load + steps x step time + evaluation + checkpoint writes
// (docs/formulas.md §5, wall time; the FM Training Estimator's 300 s start-up and 60 s per
// checkpoint are the cluster defaults in cluster.h).
#include "fmte/walltime.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "time_groups.h"

namespace fmte {
namespace {

int64_t CeilDiv(double a, double b) { return static_cast<int64_t>(std::ceil(a / b - 1e-9)); }

// Bytes of one checkpoint: the 16-bit weights, plus for trained parameters their fp32 master copy
// and optimizer state (what DeepSpeed/FSDP/HF Trainer save to resume; docs/formulas.md §2).
double CheckpointBytes(const TrainingJob& job, int64_t total_params, int64_t trainable_params) {
  const double total = static_cast<double>(total_params);
  const double trainable = static_cast<double>(trainable_params);
  double state = 0;
  switch (job.optimizer) {
    case Optimizer::kAdamW:
      state = 8;
      break;
    case Optimizer::kAdamW8bit:
      state = 2;
      break;
    case Optimizer::kSgd:
      state = 4;
      break;
    case Optimizer::kAdafactor:
      state = 0.1;
      break;
  }
  const double master = job.precision == Precision::kPureBf16 ? 0 : 4;
  if (job.method == Method::kFull) return total * 2 + trainable * (master + state);
  // PEFT saves the adapters (and the trainer its optimizer state), not the frozen base.
  return trainable * (4 + master + state);
}

// Passes of something done every `every` over a run of `steps` optimizer steps in `epochs` epochs
// (0 when not given: one), and the steps between two (0: never).
std::pair<int64_t, int64_t> Passes(const Every& every, int64_t steps, double epochs) {
  switch (every.unit) {
    case Every::Unit::kUnset:
    case Every::Unit::kNever:
      return {0, 0};
    case Every::Unit::kSteps: {
      const int64_t n = static_cast<int64_t>(std::min(every.value, 1e15));
      return {steps / std::max<int64_t>(n, 1), n};
    }
    case Every::Unit::kPerEpoch: {
      // axolotl's saves_per_epoch / evals_per_epoch and the HF Trainer's "epoch" strategy (1).
      const double passes = std::floor(every.value * std::max(epochs, 1.0) + 1e-9);
      const int64_t count = static_cast<int64_t>(std::min(passes, static_cast<double>(steps)));
      return {count, count > 0 ? steps / count : 0};
    }
    case Every::Unit::kFraction: {
      // The HF Trainer's save_steps / eval_steps below 1: math.ceil(max_steps * fraction).
      const int64_t n = std::max<int64_t>(1, CeilDiv(every.value * static_cast<double>(steps), 1));
      return {steps / n, n};
    }
  }
  return {0, 0};
}

}  // namespace

PeriodicWork PeriodicWorkOf(const TrainingJob& job, int64_t steps, int64_t global_batch) {
  PeriodicWork p;
  Every save = job.save_every;
  if (save.unit == Every::Unit::kUnset) {
    if (job.framework == Framework::kHf) save = {Every::Unit::kSteps, kHfTrainerSaveSteps};
    if (job.framework == Framework::kLitgpt) save = {Every::Unit::kSteps, 1000};
  }
  const auto [saves, save_every] = Passes(save, steps, job.epochs);
  p.checkpoints = std::max<int64_t>(1, saves);
  p.checkpoint_every_steps = saves > 0 ? save_every : 0;

  Every eval = job.eval_every;
  double samples = job.eval_samples;
  if (eval.unit == Every::Unit::kUnset) {
    if (job.framework == Framework::kHf && job.eval_batch > 0)
      eval = {Every::Unit::kSteps, kHfTrainerEvalSteps};
    if (job.framework == Framework::kMegatron) {
      eval = {Every::Unit::kSteps, 1000};
      if (samples == 0) samples = 100.0 * static_cast<double>(global_batch);
    }
    if (job.framework == Framework::kLitgpt) eval = {Every::Unit::kSteps, 600};
  }
  if (job.framework == Framework::kLitgpt && samples == 0)
    samples = 100.0 * static_cast<double>(job.micro_batch) *
              static_cast<double>(std::max<int64_t>(1, job.DataParallel()));
  const auto [evals, eval_every] = Passes(eval, steps, job.epochs);
  p.evaluations = evals;
  p.eval_every_steps = evals > 0 ? eval_every : 0;
  if (samples > 0 && samples < 1) samples *= static_cast<double>(job.samples);
  if (evals > 0 && !(samples >= 1)) p.eval_size_unknown = true;
  p.eval_samples = evals > 0 && samples >= 1 ? samples : 0;
  return p;
}

double MeasuredTimeFactor(std::string_view gpu, Framework framework, double quantile, bool moe) {
  const time_groups::MeasuredGroup& g = time_groups::MeasuredGroupOf(gpu, framework, moe);
  // The median at the 50% setting and below, the 95% quantile at 95% and above, linear between.
  const double w = std::clamp((quantile - 0.5) / 0.45, 0.0, 1.0);
  return g.median + w * (g.q95 - g.median);
}

Result<int64_t> StepsOfJob(const TrainingJob& job, int64_t global_batch) {
  if (global_batch <= 0) return Status::InvalidArgument("--global-batch: must be positive");
  if (job.steps > 0) return job.steps;
  // Tokens through the model, as time.tokens_per_s_per_gpu counts them: both sequences of a
  // pairwise objective's sample.
  if (job.tokens > 0)
    return CeilDiv(static_cast<double>(job.tokens),
                   static_cast<double>(global_batch) * static_cast<double>(job.seq_len) *
                       static_cast<double>(job.SequencesPerSample()));
  if (job.samples > 0)
    return CeilDiv(static_cast<double>(job.samples) * std::max(job.epochs, 1.0),
                   static_cast<double>(global_batch));
  return Status::InvalidArgument(
      "--tokens/--samples/--steps: give the amount of work to estimate a wall time");
}

Result<WallTimeEstimate> WallTimeFromStep(const TrainingJob& job, const ClusterSpec& cluster,
                                          const TimeModel& time_model, const TimeEstimate& step,
                                          const TrainedParams& params,
                                          const WallTimeOptions& options) {
  WallTimeEstimate w;
  w.step = step;
  FMTE_RETURN_IF_ERROR(WallTimeFromOwnStep(job, cluster, time_model, params, options, &w));
  return w;
}

Status WallTimeFromOwnStep(const TrainingJob& job, const ClusterSpec& cluster,
                           const TimeModel& time_model, const TrainedParams& params,
                           const WallTimeOptions& options, WallTimeEstimate* out) {
  if (!(options.quantile >= 0 && options.quantile <= 1))
    return Status::InvalidArgument("time quantile: expected a number in [0, 1]");
  if (GeneratesCompletions(job.objective))
    return Status::InvalidArgument(
        "objective " + std::string(ToString(job.objective)) +
        ": the completions the policy generates in every step are not modelled: no wall time");
  const TimeEstimate& step = out->step;
  Result<int64_t> steps = StepsOfJob(job, step.global_batch);
  if (!steps.ok()) return steps.status();
  WallTimeEstimate& w = *out;
  w.steps = *steps;
  const double storage = std::max(cluster.storage_gbps, 1e-3) * 1e9;
  w.startup_s = cluster.startup_s;
  // Loading: the published checkpoint (16-bit weights) read once from storage.
  w.load_s = static_cast<double>(params.total) * 2.0 / storage;
  w.train_s = static_cast<double>(w.steps) * step.step_time_s;
  w.periodic = PeriodicWorkOf(job, w.steps, step.global_batch);
  // An evaluation pass runs the forward only over its sequences: about a third of a training
  // step's compute per sequence (forward 2P of the 6P per token; Kaplan et al. 2020). A step
  // that also runs forwards under no_grad (a reference model's, TrainingJob::ExtraForwardPasses)
  // runs them in evaluation too: (1 + extra) of its (3 + extra) forward-sized parts.
  const double extra = static_cast<double>(job.ExtraForwardPasses());
  const double per_sample_s = step.step_time_s / static_cast<double>(step.global_batch);
  w.eval_s = static_cast<double>(w.periodic.evaluations) * w.periodic.eval_samples * per_sample_s *
             (1 + extra) / (3 + extra);
  // Precomputed reference log-probabilities: one forward of the reference over each training
  // sample (dpo: the pair; kto: the completion and its KL completion) before the first step.
  if (job.reference_precomputed && UsesReference(job.objective)) {
    const double once = job.samples > 0 ? static_cast<double>(job.samples)
                                        : static_cast<double>(w.steps) *
                                              static_cast<double>(step.global_batch) /
                                              std::max(job.epochs, 1.0);
    const double passes = job.objective == Objective::kKto ? 2 : 1;
    w.reference_s = once * per_sample_s * passes / (3 + extra);
  }
  const double ckpt_bytes = CheckpointBytes(job, params.total, params.trainable);
  w.checkpoint_bytes = static_cast<int64_t>(std::min(ckpt_bytes, 9e18));
  w.checkpoint_s = static_cast<double>(w.periodic.checkpoints) *
                   (ckpt_bytes / storage + cluster.checkpoint_fixed_s);
  w.wall_time_s = w.startup_s + w.load_s + w.train_s + w.eval_s + w.reference_s + w.checkpoint_s;
  w.quantile = options.quantile;
  // The group's factor is against the model's own step time; the prediction may carry its median
  // already (TimeEstimate::measured_factor).
  const std::string_view gpu =
      step.gpu.empty() ? std::string_view(job.gpu) : std::string_view(step.gpu);
  w.upper_factor = std::max(
      time_model.UpperFactor(options.quantile),
      MeasuredTimeFactor(gpu, job.framework, options.quantile, step.moe) / step.measured_factor);
  w.error_group = time_groups::DescribeGroup(gpu, job.framework, step.moe);
  w.time_limit_s = w.startup_s + w.load_s +
                   (w.train_s + w.eval_s + w.reference_s) * w.upper_factor + w.checkpoint_s +
                   options.limit_margin_s;
  return Status::Ok();
}

Result<WallTimeEstimate> EstimateWallTime(const ModelArch& model, const TrainingJob& job,
                                          const GpuSpec& gpu, const ClusterSpec& cluster,
                                          const TimeModel& time_model, const TrainedParams& params,
                                          const WallTimeOptions& options) {
  Result<TimeEstimate> step = EstimateStepTime(model, job, gpu, cluster, time_model);
  if (!step.ok()) return step.status();
  return WallTimeFromStep(job, cluster, time_model, *step, params, options);
}

Result<WallTimeEstimate> EstimateWallTimeForDataset(const ModelArch& model, const TrainingJob& job,
                                                    const GpuSpec& gpu, const ClusterSpec& cluster,
                                                    const TimeModel& time_model,
                                                    const DatasetTokens& data,
                                                    const TrainedParams& params,
                                                    const WallTimeOptions& options) {
  BatchingOptions o;
  o.batch_size = job.micro_batch;
  o.seq_len = job.seq_len;
  o.packing = data.packing;
  o.epochs = std::max(job.epochs, 1.0);
  Result<BatchingResult> b =
      EstimateFromContract(data.contract, data.text_template, data.counter, o);
  if (!b.ok()) return Status::InvalidArgument("dataset contract: " + b.status().message());
  if (b->samples <= 0) return Status::InvalidArgument("dataset contract: no samples");
  TrainingJob j = job;
  // Padding: every row of a micro-batch is as wide as its longest sample (TE2 mean width).
  if (!data.packing)
    j.seq_len = std::clamp<int64_t>(CeilDiv(b->mean_batch_width, 1.0), 1, job.seq_len);
  Result<TimeEstimate> step = EstimateStepTime(model, j, gpu, cluster, time_model);
  if (!step.ok()) return step.status();
  const double samples = static_cast<double>(job.samples > 0 ? job.samples : b->samples);
  const double scale = samples / static_cast<double>(b->samples);
  const double real_tokens = static_cast<double>(b->total_tokens) * scale;
  if (j.steps <= 0) {
    const double gb = static_cast<double>(step->global_batch);
    if (data.packing) {
      const int64_t rows =
          std::max<int64_t>(1, CeilDiv(real_tokens, static_cast<double>(job.seq_len)));
      j.steps = CeilDiv(static_cast<double>(rows) * o.epochs, gb);
    } else {
      j.steps = CeilDiv(samples * o.epochs, gb);
    }
  }
  Result<WallTimeEstimate> w = WallTimeFromStep(j, cluster, time_model, *step, params, options);
  if (!w.ok()) return w;
  w->sequence_tokens = j.seq_len;
  w->padding_fraction = b->padding_fraction;
  w->dataset_tokens = real_tokens * o.epochs;
  return w;
}

}  // namespace fmte
