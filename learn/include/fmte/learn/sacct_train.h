// Training the site's corrections from sacct training sets (training_set.h) through the XGBoost C
// API (xgb.h): grouped k-fold cross-validation, a final model on all exact samples, and a
// comparison with the model installed in the target directory on the same held-out jobs.
// Thread-safety: pure functions (libxgboost uses its own threads).
#ifndef FMTE_LEARN_SACCT_TRAIN_H_
#define FMTE_LEARN_SACCT_TRAIN_H_

#include <string>
#include <vector>

#include "fmte/learn/training_set.h"
#include "fmte/learn/xgb.h"

namespace fmte::learn {

struct SacctTrainOptions {
  int folds = 5;
  uint64_t seed = 1234;
  int min_rows = 8;           // fewer exact samples: the target is not trained
  int min_groups = 2;         // CV needs at least two groups
  std::string installed_dir;  // compare with the models installed there (empty: none)
};

// Errors as mean |predicted - actual| / actual over the same rows.
struct Comparison {
  int64_t rows = 0;
  double plugin = 0;     // the plugin's own prediction (the record's pred_time_s / pred_mem)
  double new_model = 0;  // new model, out-of-fold (each row predicted by a model that never saw it)
  double installed = -1;     // installed model on the same rows; -1 when none is installed
  bool only_unseen = false;  // rows restricted to jobs ending after the installed model's data
};

struct TargetOutcome {
  std::string key;   // "sacct_time_correction" | "sacct_memory_correction"
  std::string what;  // "time" | "memory"
  bool trained = false;
  std::string skipped_reason;
  int64_t rows = 0, groups = 0, censored = 0;
  CvResult cv;                             // in log-ratio space turned into value space
  std::vector<double> actual;              // per exact row
  std::vector<double> predicted_oof;       // per exact row, value space (new model, out of fold)
  std::vector<double> plugin;              // per exact row: the plugin's prediction
  std::vector<double> limit_factor;        // time: limit / plugin prediction
  std::vector<double> censored_lower;      // per censored row
  std::vector<double> censored_predicted;  // final model on censored rows
  int64_t censored_violations = 0;         // predicted below the known lower bound
  std::vector<double> log_residual_quantiles;  // p50, p90, p95 of log(actual / predicted_oof)
  Comparison comparison;
  std::string model_json;
};

struct SacctTrainOutcome {
  std::vector<TargetOutcome> targets;  // time, memory
  XgbParams params;
};

Result<SacctTrainOutcome> TrainSacct(const TrainingSets& sets, const SacctTrainOptions& options);

// Is the new model worse than the installed one on the same rows (the refusal rule)?
bool WorseThanInstalled(const TargetOutcome& t);

}  // namespace fmte::learn

#endif  // FMTE_LEARN_SACCT_TRAIN_H_
