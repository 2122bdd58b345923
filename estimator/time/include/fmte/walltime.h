// Wall time of a whole training job: start-up (fixed + loading the weights from storage), the
// steps (from --steps, --tokens, or --samples x --epochs), evaluation passes and checkpoint writes,
// and a calibrated upper bound to use as a Slurm time limit.
//
// The bound multiplies the time that scales with the step time by TimeModel::UpperFactor(q): the
// q-quantile of the step-time model's held-out (grouped cross-validation) ratios
// measured/predicted. Thread-safety: pure functions.
#ifndef FMTE_WALLTIME_H_
#define FMTE_WALLTIME_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "fmte/cluster.h"
#include "fmte/gpu.h"
#include "fmte/job.h"
#include "fmte/model.h"
#include "fmte/status.h"
#include "fmte/time.h"
#include "fmte/tokens.h"

namespace fmte {

struct WallTimeOptions {
  double quantile = 0.95;     // of the held-out residuals, for time_limit_s
  double limit_margin_s = 0;  // added to the bound (site policy)
};

// How often a job saves and evaluates (TrainingJob::save_every, eval_every, eval_samples) when it
// does not say, as its framework does by default:
//  - checkpoint saves: the HF Trainer (TRL, axolotl and LLaMA-Factory run on it) every 500 steps
//    (TrainingArguments save_strategy "steps", save_steps 500); litgpt every 1000 (TrainArgs
//    save_interval); the others when asked (Megatron with --save and --save-interval, torchtitan
//    with checkpoint.enable), so one save of the result at the end;
//  - evaluation: the HF Trainer when it evaluates (eval_batch > 0) every 500 steps (eval_steps
//    defaults to logging_steps, 500), over an evaluation set of unknown size; Megatron-LM every
//    1000 iterations over 100 global batches (--eval-interval, --eval-iters; its default --split
//    969,30,1 has a validation share); litgpt every 600 optimizer steps (EvalArgs.interval) over
//    100 micro-batches on every data-parallel rank (EvalArgs.max_iters; the loop in validate()
//    stops there; the same number when the job sets only the interval); the others none. litgpt's
//    final validation after the last step (over the whole validation set in finetuning, of unknown
//    size) is not counted.
// Every job writes its result at least once.
struct PeriodicWork {
  int64_t checkpoints = 0;             // saves of the training state over the run
  int64_t checkpoint_every_steps = 0;  // 0: one save at the end
  int64_t evaluations = 0;             // evaluation passes over the run
  int64_t eval_every_steps = 0;        // 0: none
  double eval_samples = 0;             // sequences of one pass; 0 when unknown
  bool eval_size_unknown = false;      // the job evaluates, over a set fmte was not told of
};
// REQUIRES: ValidateJob(job).ok(), steps >= 1, global_batch >= 1.
PeriodicWork PeriodicWorkOf(const TrainingJob& job, int64_t steps, int64_t global_batch);

struct WallTimeEstimate {
  TimeEstimate step;  // the step-time estimate it was built from
  int64_t steps = 0;  // optimizer steps
  // Checkpoint saves and evaluation passes over the run (PeriodicWorkOf): their counts are
  // periodic.checkpoints and periodic.evaluations.
  PeriodicWork periodic;
  double startup_s = 0;  // cluster's fixed start-up
  double load_s = 0;     // weights from storage
  double train_s = 0;    // steps x step time
  double eval_s = 0;
  // The reference model's log-probabilities computed over the training set before the first
  // step (dpo and kto with TrainingJob::reference_precomputed: TRL _precompute_ref_logps).
  double reference_s = 0;
  double checkpoint_s = 0;  // writes of the training state (+ fixed cost each)
  double wall_time_s = 0;   // predicted (median-like) total
  double time_limit_s = 0;  // upper bound at `quantile`
  double quantile = 0;
  double upper_factor = 1;  // applied to train_s, eval_s and reference_s
  // The group of jobs whose measured error bounds this one (time_groups.h DescribeGroup): its
  // name, runs, sources and factors, as a user reads them.
  std::string error_group;
  int64_t checkpoint_bytes = 0;  // one checkpoint
  // With a dataset (EstimateWallTimeForDataset): the sequence width the step was estimated at
  // (padded: the mean padded micro-batch width; packed: seq_len), the padding share and the real
  // tokens over all epochs. 0 without a dataset.
  int64_t sequence_tokens = 0;
  double padding_fraction = 0;
  double dataset_tokens = 0;
};

// The dataset of a job as the tokens estimator sees it (tokens.h: a TE2 contract, e.g. from
// `fmte-advise tokens --write-contract`).
struct DatasetTokens {
  TokenContract contract;
  TextTemplate text_template = TextTemplate::AllStringFields();
  TokenCounter counter = TokenCounter::kChars;
  bool packing = false;  // rows of job.seq_len; else each micro-batch padded to its longest sample
};

// Steps of the job: job.steps, else ceil(tokens / (global batch x seq_len)), else
// ceil(samples x max(epochs, 1) / global batch). Error when none of them is given.
// `global_batch` is the step's sequences (TimeEstimate::global_batch).
Result<int64_t> StepsOfJob(const TrainingJob& job, int64_t global_batch);

// Measured / predicted step time at `quantile` for the group of jobs a GPU (catalog name or alias)
// and framework fall in (GPU generation x Megatron or the PyTorch frameworks; `moe`: the mixtures
// of experts' own groups), from runs the time
// model was not fitted on (time_groups.cc; scripts/eval-time.py --calibrate), against the model
// without the group's residual; a group without runs takes the widest. The time limit's factor is
// the larger of TimeModel::UpperFactor and this over TimeEstimate::measured_factor.
double MeasuredTimeFactor(std::string_view gpu, Framework framework, double quantile,
                          bool moe = false);

// The parameters a wall time reads (checkpoint size, optimizer traffic): the model's total and
// those the job trains. The time component does not count parameters: the memory estimate does
// (MemoryEstimate::params.total and trainable_params), and the estimate hands them over.
struct TrainedParams {
  int64_t total = 0;
  int64_t trainable = 0;
};

// REQUIRES: ValidateJob(job).ok().
Result<WallTimeEstimate> EstimateWallTime(const ModelArch& model, const TrainingJob& job,
                                          const GpuSpec& gpu, const ClusterSpec& cluster,
                                          const TimeModel& time_model, const TrainedParams& params,
                                          const WallTimeOptions& options = {});

// Wall time over a dataset (samples x epochs with the tokens estimator's padding or packing,
// docs/formulas.md §6): the micro-batch's padded width comes from the contract (TE2 widths for
// batch size = micro-batch; HF collators pad per device batch) and the step time is estimated at
// that width instead of seq_len; with packing the steps are ceil(ceil(tokens / seq_len) rows x
// epochs / global batch). Samples: job.samples, else the contract's count (its token statistics
// scaled to job.samples). Epochs: job.epochs (>= 1). job.steps, when given, still sets the steps.
Result<WallTimeEstimate> EstimateWallTimeForDataset(const ModelArch& model, const TrainingJob& job,
                                                    const GpuSpec& gpu, const ClusterSpec& cluster,
                                                    const TimeModel& time_model,
                                                    const DatasetTokens& data,
                                                    const TrainedParams& params,
                                                    const WallTimeOptions& options = {});

// The same from an existing step estimate.
Result<WallTimeEstimate> WallTimeFromStep(const TrainingJob& job, const ClusterSpec& cluster,
                                          const TimeModel& time_model, const TimeEstimate& step,
                                          const TrainedParams& params,
                                          const WallTimeOptions& options = {});

// The same into a default-constructed `out` whose step the caller has already put in `out->step`.
// On error `out` is unchanged.
Status WallTimeFromOwnStep(const TrainingJob& job, const ClusterSpec& cluster,
                           const TimeModel& time_model, const TrainedParams& params,
                           const WallTimeOptions& options, WallTimeEstimate* out);

}  // namespace fmte

#endif  // FMTE_WALLTIME_H_
