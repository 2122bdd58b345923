// Site corrections: the models `fmte-retrain train --into DIR` installs into a regressors directory
// (sacct_time_correction.json, sacct_memory_correction.json, listed in DIR/manifest.json). Each
// predicts log(measured / the plugin's own prediction) (natural log, learn/src/training_set.cc)
// from features that exist at submit time. This file owns those features: fmte-retrain computes its
// training rows with SiteFeatures() and the estimator facade computes the applying row with the
// same function from the same values, so training and applying cannot disagree.
//
// Applying (docs/site-corrections.md):
//   time:   wall = model wall x clamp(exp(f), kMinTimeFactor, kMaxTimeFactor); the time-limit bound
//   is
//           that x exp(p95 of the held-out log residuals) when the manifest records them.
//   memory: raised by exp(f) (at most kMaxMemoryRaise); LOWERED only as far as the model's own
//           p95 held-out error still supports (exp(f + p95)), and never below kMinMemoryFactor of
//           the memory model's prediction: one bad model cannot admit jobs that run out of memory.
// Thread-safety: SiteCorrections is immutable after loading; the functions are pure.
#ifndef FMTE_SITE_CORRECTION_H_
#define FMTE_SITE_CORRECTION_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/job.h"
#include "fmte/status.h"
#include "fmte/tree_model.h"

namespace fmte {

inline constexpr size_t kSiteFeatureCount = 26;
using SiteFeatureRow = std::array<float, kSiteFeatureCount>;

// Feature names of SiteFeatures, in order (the manifest's "features" must equal them).
const std::vector<std::string>& SiteFeatureNames();

// The longest wall time an accounting record holds (~31,700 years): a longer prediction (an
// absurd token count on a few GPUs) is recorded as this, which the record's reader accepts.
inline constexpr double kMaxRecordedTimeS = 1e12;

// A wall time as the accounting record stores it (record.cc: rounded to whole seconds, at most
// kMaxRecordedTimeS, printed with %.6g): what fmte-retrain reads back and trains on. Idempotent.
double RecordedTimeS(double wall_time_s);

// One row of features (NaN for what is unknown): the job as estimated (the record's job), the
// model's own wall time (<= 0: none), per-GPU bytes (<= 0: none) and the GPU's capacity in bytes.
// pred_time_s is taken as RecordedTimeS(pred_time_s) and epochs as the record prints them.
SiteFeatureRow SiteFeatures(const TrainingJob& job, double pred_time_s, int64_t pred_mem_bytes,
                            int64_t cap_bytes);

inline constexpr std::string_view kSiteTimeKey = "sacct_time_correction";
inline constexpr std::string_view kSiteMemoryKey = "sacct_memory_correction";

// Guards (docs/site-corrections.md has the reasoning).
inline constexpr double kMaxMemoryRaise = 4.0;   // a larger factor is clamped (and reported)
inline constexpr double kMinMemoryFactor = 0.9;  // never below 90% of the memory model
inline constexpr double kMinTimeFactor = 0.01;
inline constexpr double kMaxTimeFactor = 100.0;

// One installed correction model with what its manifest entry says about it.
struct SiteCorrectionModel {
  std::string key;   // kSiteTimeKey | kSiteMemoryKey
  std::string path;  // the model file
  TreeModel model;
  int64_t rows = 0;  // exact samples it was trained on
  int64_t groups = 0;
  std::string first_end, last_end;  // data range: end times of the jobs used ("" when unknown)
  bool has_quantiles = false;       // log_residual_quantiles in the manifest
  double log_residual_p50 = 0, log_residual_p90 = 0,
         log_residual_p95 = 0;        // log(actual/predicted), out of fold
  double cv_mean_abs_rel_error = -1;  // -1: not recorded

  // The model's output for one row: log(measured / prediction).
  double PredictLogRatio(const SiteFeatureRow& row) const { return model.Predict(row); }
};

struct SiteCorrections {
  std::string dir;
  std::optional<SiteCorrectionModel> time;
  std::optional<SiteCorrectionModel> memory;

  bool empty() const { return !time && !memory; }

  // Reads `dir`/manifest.json. No directory, no manifest, or a manifest without either key: empty
  // (no correction), not an error. Errors name the file: a malformed manifest, a model file that is
  // missing or unreadable, a feature list different from SiteFeatureNames() (a model trained by
  // another fmte version), a model needing more features than we compute.
  static Result<SiteCorrections> LoadDir(const std::string& dir);
};

struct AppliedCorrection {
  bool applied = false;
  double model_factor = 1;  // exp(model output)
  double factor = 1;        // what was applied, after the guards
  bool clamped = false;     // factor != model_factor
};

// The factors for one row (guards above). REQUIRES: row from SiteFeatures.
AppliedCorrection MemoryCorrection(const SiteCorrectionModel& model, const SiteFeatureRow& row);
AppliedCorrection TimeCorrection(const SiteCorrectionModel& model, const SiteFeatureRow& row);
// Factor from a corrected wall time to its upper bound: exp(max(0, p95)); 0 when the manifest has
// no residual quantiles (then the model's own bound is scaled by the time factor instead).
double TimeBoundFactor(const SiteCorrectionModel& model);

// What the facade applied to one estimate (JobEstimate::correction).
struct SiteCorrectionInfo {
  AppliedCorrection memory;
  AppliedCorrection time;
  int64_t model_per_gpu_bytes = 0;     // the memory model's prediction (valid when memory.applied)
  double model_wall_time_s = 0;        // the time model's wall time (valid when time.applied)
  double model_wall_time_bound_s = 0;  // and its bound
  bool any() const { return memory.applied || time.applied; }
};

}  // namespace fmte

#endif  // FMTE_SITE_CORRECTION_H_
