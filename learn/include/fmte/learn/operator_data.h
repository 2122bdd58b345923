// Operator and NCCL sampling data (the format of the AI4CI "Distributed Training Estimator"'s
// published samples, DebarghaG/estimate-train-time Estimator/regressors) turned into training
// sets, and the training of one cluster's regressors directory (regressors/<cluster>/:
// operator/*.json, nccl/*.json, manifest.json).
//
// A samples directory holds operator/ and nccl/ subdirectories of CSV files named
// <GPU>_<operator>_<precision>.csv (columns: shape grid, F_dur(us), B_dur(us) or dur(us)) and
// <GPU>_<collective>_<precision>[_<nodes>_<gpus per node>].csv (shape, nodes, GPUsPerNode,
// dur(us)), plus the seed's <GPU>.csv index of its chosen regressors (read for comparison only).
// A site samples its own cluster in this format and trains with TrainClusterRegressors.
// Thread-safety: functions are reentrant.
#ifndef FMTE_LEARN_OPERATOR_DATA_H_
#define FMTE_LEARN_OPERATOR_DATA_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fmte/learn/dataset.h"
#include "fmte/learn/xgb.h"
#include "fmte/status.h"

namespace fmte::learn {

// What a sample file's name says.
struct SampleFile {
  std::string path;
  std::string gpu;        // "NVIDIAA100-SXM4-80GB"
  std::string name;       // operator ("linear1") or collective ("allreduce_large")
  std::string precision;  // "fp16"
  bool nccl = false;
  int64_t nodes = 0, gpus_per_node = 0;  // 0: a pooled file of several configurations
};
// Parses "<GPU>_<name>_<precision>[_<nodes>_<gpn>].csv" (GPU names contain no '_').
Result<SampleFile> ClassifySampleFile(const std::string& path, bool nccl);

// One regressor's training set: label = log(time_us / work), features from OperatorFeatures /
// CollectiveFeatures (estimator/time/include/fmte/operator_time.h).
struct RegressorData {
  std::string key;   // "linear1_fwd", "allreduce_large_2_1", "allreduce_large_any"
  std::string kind;  // "operator" | "nccl"
  std::string name;  // operator or collective
  std::string pass;  // "fwd" | "bwd" | "dur" (operators)
  int64_t nodes = 0, gpus_per_node = 0;
  std::vector<std::string> feature_names;
  std::vector<std::string> sources;  // CSV files (base names) and the column used
  std::string group_by;              // what a CV group is
  DenseMatrix x;
  std::vector<float> labels;
  std::vector<double> work;
  std::vector<int64_t> groups;
  int64_t skipped_rows = 0;  // non-positive or missing times
};

// Training sets of one operator file (fwd and bwd, or dur). Unknown operators: NotFound.
Result<std::vector<RegressorData>> OperatorDatasets(const SampleFile& file, const NumericTable& t);
// Training set of one per-configuration NCCL file; `bands` contiguous message-size bands are the
// CV groups (held out whole, so CV measures interpolation between sampled sizes honestly).
Result<RegressorData> CollectiveDataset(const SampleFile& file, const NumericTable& t,
                                        int bands = 8);
// The pooled fallback of one collective from its per-configuration sets (nodes and GPUs per node
// become features), for configurations that were not sampled.
RegressorData PoolCollective(const std::vector<const RegressorData*>& parts);

struct TrainClusterOptions {
  std::string samples_dir;  // holds operator/ and nccl/
  std::string out_dir;      // regressors/<cluster>
  std::string cluster;      // name recorded in the manifest ("Perlmutter")
  XgbParams params;
  int folds = 5;
  bool dry_run = false;                              // cross-validate only, write nothing
  std::function<void(const std::string&)> progress;  // one line per regressor
};

struct RegressorReport {
  std::string key;
  int64_t rows = 0;
  int64_t groups = 0;
  CvResult cv;
  double seed_best_error = -1;  // the seed's Best_error% (a fraction; random 20% holdout); -1: none
  std::string seed_best_model;
  int64_t model_bytes = 0;
};

// Trains, cross-validates and writes every regressor of a samples directory, then manifest.json.
Result<std::vector<RegressorReport>> TrainClusterRegressors(const TrainClusterOptions& options);

}  // namespace fmte::learn

#endif  // FMTE_LEARN_OPERATOR_DATA_H_
