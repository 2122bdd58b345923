// The FM Training Estimator's data.csv (foundation-model-stack/fm-training-estimator, the CSV its
// lookup and XGBoost regressors learn from) read into fmte jobs and measurements.
//
// Formats, exactly as fm_training_estimator/data/manager.py defines them (X columns, then Y):
//   v1: model_name,number_gpus,batch_size,seq_len | tokens_per_second,memory,memory_act
//   v2: model_arch,model_hidden_size,model_intermediate_size,model_num_attn_heads,
//       model_num_hidden_layers,model_num_key_value_heads,number_gpus,batch_size,seq_len | (same Y)
//   v3: the v2 architecture columns, then method,gpu_model,number_gpus,batch_size,seq_len | (same
//   Y)
// The format is detected from the header (the same column set in any order; BOM, CR and spaces
// around names are tolerated). Any other header is an error naming the expected columns.
//
// What the values mean in that code (docs/retrain.md cites the lines):
//   batch_size        per-device batch (HF per_device_train_batch_size), seq_len its padded width;
//   number_gpus       GPUs of one pod (numGpusPerPod), trained with HF Trainer + FSDP full_shard
//                     when > 1 (memory/hybrid: fsdp defaults to ["full_shard"]), one GPU otherwise;
//   tokens_per_second the whole job's throughput (ui/core.py: time = total_tokens / tps);
//   memory            per-GPU peak in bytes (compared with gpu_memory_in_gb * 1024^3);
//   memory_act        activation bytes per GPU (not mapped: fmte has no per-part correction);
//   method            v3 only, the "technique" (full, lora, qlora, ...); v1/v2 are full
//   fine-tuning.
// Malformed lines are counted with their line numbers and skipped (never fatal unless strict).
// Thread-safety: value types and pure functions.
#ifndef FMTE_LEARN_FM_CSV_H_
#define FMTE_LEARN_FM_CSV_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/cluster.h"
#include "fmte/estimator.h"
#include "fmte/job.h"
#include "fmte/learn/training_set.h"
#include "fmte/learn/xgb.h"
#include "fmte/model.h"
#include "fmte/status.h"
#include "fmte/time.h"

namespace fmte::learn {

enum class FmCsvFormat { kV1, kV2, kV3 };
std::string_view ToString(FmCsvFormat f);  // "v1" | "v2" | "v3"
// The columns of a format, in the order manager.py lists them.
const std::vector<std::string>& FmCsvColumns(FmCsvFormat f);

struct FmCsvRow {
  int64_t line = 0;  // 1-based line in its file
  // v1
  std::string model_name;
  // v2/v3 (HF config values; -1 when the FM estimator could not read them)
  std::string model_arch;  // "LlamaForCausalLM"
  int64_t hidden_size = 0, intermediate_size = 0, num_heads = 0, num_layers = 0, num_kv_heads = 0;
  // v3
  std::string method;     // the FM estimator's technique name, as written
  std::string gpu_model;  // as written ("A100", "H100", ...)
  // all formats
  int64_t number_gpus = 0, batch_size = 0, seq_len = 0;
  double tokens_per_second = 0;  // whole job
  double memory_bytes = 0;       // per GPU
  double memory_act_bytes = 0;   // per GPU
};

struct FmCsvLineError {
  int64_t line = 0;
  std::string reason;
};

struct FmCsvData {
  std::string origin;  // file name (for messages)
  FmCsvFormat format = FmCsvFormat::kV1;
  int64_t lines = 0;  // physical lines read, header included
  std::vector<FmCsvRow> rows;
  std::vector<FmCsvLineError> malformed;  // line numbers and reasons, in file order
};

struct FmCsvReadOptions {
  bool strict = false;  // the first malformed line is an error
};

// Parses a whole data.csv text. Errors: unknown header (names the expected columns of v1/v2/v3 and
// what is missing/extra against the closest), empty input, strict mode's first malformed line.
Result<FmCsvData> ParseFmCsv(std::string_view text, std::string_view origin,
                             const FmCsvReadOptions& options = {});
Result<FmCsvData> ReadFmCsvFile(const std::string& path, const FmCsvReadOptions& options = {});

// How rows become fmte jobs.
struct FmJobOptions {
  std::string gpu;  // GPU for rows without gpu_model (v1/v2); required for them
  Precision precision = Precision::kFp32;  // FMArguments.torch_dtype default "float32"
  int64_t vocab_size = 0;  // v2/v3 rows matching no catalog model: 0 = the HF config class default
  bool tps_per_gpu = false;  // tokens_per_second counts one GPU's tokens (not the FM estimator's)
};

// One row as an fmte job.
struct FmJob {
  ModelArch arch;
  TrainingJob job;
  const GpuSpec* gpu = nullptr;  // into the catalogs given to MapFmRow
  std::string arch_source;       // "catalog <id>" | "columns (vocab: ...)"
  std::string group;             // CV group: model + GPUs + GPU type (seq_len / batch vary inside)
  double step_time_s = 0;        // measured: number_gpus x batch x seq_len / tokens_per_second
  double tokens_per_s_per_gpu = 0;
  double memory_bytes = 0;  // measured per-GPU peak (0: none)
};

// Maps one row. Errors name the column: an unknown model_name lists the closest catalog ids, an
// unknown GPU the closest GPU names, an unsupported method or architecture what is supported.
Result<FmJob> MapFmRow(const FmCsvRow& row, FmCsvFormat format, const Catalogs& catalogs,
                       const FmJobOptions& options);

// The smallest per-GPU peak taken as a measurement; below it the value is a placeholder or in
// another unit (the repository's own test data holds "20").
inline constexpr double kFmMinPlausibleMemoryBytes = 256.0 * 1024 * 1024;

// ---- Training material (fm_csv_train.cc) ----

// One measured step time of a job the step-time model can estimate (FM rows, vTrain rows).
struct StepTimeSample {
  std::string origin;  // "file:line"
  ModelArch arch;
  TrainingJob job;
  const GpuSpec* gpu = nullptr;
  ClusterSpec cluster;
  double measured_s = 0;
  std::string group;  // CV group
};

struct FmUnmapped {
  std::string origin;  // file
  int64_t line = 0;
  std::string reason;
};

struct FmSamples {
  std::vector<StepTimeSample> steps;  // every mapped row (throughput is always measured)
  // Memory: the `sacct_memory_correction` target (training_set.h): features SacctFeatures of the
  // record the plugin would have written (job + the core's own per-GPU prediction), label
  // log(measured per-GPU peak / prediction). `time` stays empty: FM rows have no wall time.
  TrainingSets memory;
  std::map<std::string, int64_t> skipped;  // reason -> rows not used for a target
  std::vector<FmUnmapped> unmapped;        // rows that did not map to a job, with the reason
  int64_t rows = 0, mapped = 0;
};

// Maps every row of every file; rows that do not map are listed (never fatal).
FmSamples BuildFmSamples(const std::vector<FmCsvData>& files, const Catalogs& catalogs,
                         const FmJobOptions& options);

// The cluster an FM row ran on: one pod (node) of number_gpus GPUs of the row's type, the GPU's
// own interconnect inside it.
ClusterSpec FmPodCluster(const TrainingJob& job);

struct StepCorrectionOptions {
  int folds = 5;
  uint64_t seed = 1234;
  int min_rows = 8;
  int min_groups = 2;
  double clamp_log = 0.4;  // TimeModel's default clamp (time_model.cc)
};

struct StepCorrectionOutcome {
  bool trained = false;
  std::string skipped_reason;
  int64_t rows = 0, groups = 0;
  // Mean |predicted - measured| / measured over the same rows.
  double analytic_mape = 0;  // base efficiency constants, no correction
  double new_mape = 0;       // base constants + new correction, out of fold (held-out groups)
  double new_p90_ape = 0;
  double installed_mape = -1;  // installed model (its constants + correction); -1 when none
  std::vector<double> heldout_log_residuals;  // log(measured / new out-of-fold prediction)
  std::vector<FeatureRange> domain;           // the rows' range of the correction's domain features
  XgbParams params;
  std::string model_json;  // final correction (XGBoost JSON), all rows
};

// Trains the step-time correction (label log(measured / analytic), features StepTimeFeatures) on
// `samples` over the analytic model with `base`'s constants (kept fixed), grouped k-fold by
// sample group, and scores `installed` (null: none) on the same rows.
Result<StepCorrectionOutcome> TrainStepTimeCorrection(const std::vector<StepTimeSample>& samples,
                                                      const TimeModel& base,
                                                      const TimeModel* installed,
                                                      const StepCorrectionOptions& options);

}  // namespace fmte::learn

#endif  // FMTE_LEARN_FM_CSV_H_
