// Config: the admission policy's settings, read from fmte.conf (Slurm-style `Key=Value` words,
// `#` comments, case-insensitive keys, several pairs per line). Lines starting with
// `PartitionName=<name>` set that partition's values (inheriting the global ones set anywhere in
// the file); `PartitionName=DEFAULT` changes the defaults of later partition lines, as in
// slurm.conf.
//
// Every key has a default, so no fmte.conf at all works on a cluster whose gres types are named
// after GPUs (a100, h100, ...): the GPU model then comes from the gres type through the GPU
// catalog's aliases. etc/fmte.conf is the complete, commented example; docs/policy.md lists every
// key.
//
// Contract (docs/slurm.md §2, step 4): the plugin reads fmte.conf from the directory of the
// slurm.conf in use (FindConfigPath), as Slurm does for gres.conf.
// Thread-safety: Config is an immutable value after parsing.
#ifndef FMTE_CONFIG_H_
#define FMTE_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fmte/status.h"

namespace fmte {

enum class Mode : uint8_t { kEnforce, kAdvise, kOff };  // enforce|advise|off
enum class ShortLimit : uint8_t { kWarn, kReject };     // warn|reject
enum class OnError : uint8_t { kAccept, kReject };      // accept|reject
std::string_view ToString(Mode m);
std::string_view ToString(ShortLimit s);
std::string_view ToString(OnError o);

// Settings of one partition (the defaults are a PartitionConfig with an empty name).
struct PartitionConfig {
  std::string name;            // Slurm partition name; empty for the defaults
  Mode mode = Mode::kEnforce;  // Mode=: enforce rewrites/rejects; advise only explains; off skips
  std::string gpu;             // Gpu=: GPU model behind the partition (catalog name or alias);
                               // empty: from the gres type, else the request is not estimated
  // UsableMemoryFraction=: share of device memory a job may be predicted to use. fmte's per-GPU
  // prediction already contains the CUDA context, NCCL buffers and allocator fragmentation, so the
  // margin only covers the model's own error. 0.90 sits between "what fits" (1.0) and the ~80%
  // Megatron planning rule of Fujii et al. 2024 (docs/formulas.md §4), which had to cover those
  // overheads too. Range (0, 1].
  double usable_memory_fraction = 0.90;
  // DefaultTimeFactor=: a job without a time limit gets the larger of the predicted wall time times
  // this factor and the time model's calibrated upper bound (capped by MaxTime). Range [1, 100].
  double default_time_factor = 1.5;
  int64_t max_time_min = 0;   // MaxTime=: the partition's limit (Slurm time format); 0: none
  int64_t min_time_min = 10;  // MinTime=: a set limit is never shorter than this (minutes)
  ShortLimit short_limit = ShortLimit::kWarn;  // ShortLimit=: user limit below the prediction
  bool raise_gpus = false;  // RaiseGpus=yes|no: may raise the GPU count of sharded jobs
  // RightSizing=yes|no: notices (never decisions) for a job that fits on far fewer GPUs, on a
  // partition with a smaller GPU, or asks for a time limit far above its predicted bound.
  bool right_sizing = true;
  int64_t max_gpus_per_job = 64;  // MaxGpusPerJob=: cap for raising and for alternatives
  int64_t gpus_per_node = 8;      // GpusPerNode=: node size (raising beyond it adds nodes)
  // WarnSignal=[B:]SIG[@SECONDS] (sbatch --signal's syntax; off by default): when fmte sets or
  // raises a job's time limit, Slurm is asked to send SIG (a name such as USR1 or a number) that
  // many seconds (default 60, as sbatch) before the limit, to the batch shell only with B:, so a
  // framework that checkpoints on a signal saves its work. Never replaces the user's own --signal.
  int warn_signal = 0;  // 0: off
  int warn_time_s = 0;
  bool warn_batch_only = false;
  // OperatorSet=NAME: the operator regressors of the cluster behind the partition (the shipped
  // Perlmutter or Vista, or a set the site sampled with fmte-sample and trained with fmte-retrain
  // train --kind operators --cluster NAME into RegressorsDir): the step time composed from them may
  // lengthen a time limit fmte sets, never shorten it. Empty: none.
  std::string operator_set;
};

struct Config {
  PartitionConfig defaults;                 // global keys
  std::vector<PartitionConfig> partitions;  // PartitionName= lines, in file order
  std::string default_partition;            // the partition with Default=YES (Slurm's default)
  OnError on_error = OnError::kAccept;      // OnError=: internal errors fail open by default
  // GresTypeGpu=a100:A100-SXM4-80GB,h100:H100-SXM (repeatable): gres type -> GPU catalog name.
  // Types not listed are looked up as GPU aliases directly.
  std::vector<std::pair<std::string, std::string>> gres_type_gpu;
  std::string catalog_dir;         // CatalogDir=: models/ and gpus.csv; empty: compiled-in etc dir
  std::string regressors_dir;      // RegressorsDir=: empty: compiled-in regressors dir
  bool suggest_partitions = true;  // SuggestPartitions=yes|no: offer partitions with bigger GPUs
  // ClientDecisions=yes|no: apply the decision the SPANK plugin made in sbatch when it was made
  // with the same files for the same submission (slurm_plugin/client_decision.h); no: the
  // controller decides every job itself.
  bool client_decisions = true;

  // The settings for `partition` (empty: the default partition, else the global defaults).
  const PartitionConfig& For(std::string_view partition) const;
  // GPU catalog name for a partition and gres type (gres map first, then the partition's Gpu=, then
  // the gres type itself as an alias); empty when nothing names one.
  std::string GpuNameFor(std::string_view partition, std::string_view gres_type) const;
};

// Parses fmte.conf text. Errors name the line number and the key ("fmte.conf:12: Mode: expected
// enforce|advise|off, got 'strict'"); unknown keys are errors too (a typo must not silently disable
// a setting). `origin` prefixes messages (the file path).
Result<Config> ParseConfig(std::string_view text, std::string_view origin = "fmte.conf");
// Reads and parses a file (IoError naming the path when unreadable). Bounded to 1 MiB.
Result<Config> LoadConfigFile(const std::string& path);

// fmte.conf beside slurm.conf: "/etc/slurm/slurm.conf" -> "/etc/slurm/fmte.conf"; a bare name gives
// "fmte.conf". Pure string work.
std::string FindConfigPath(std::string_view slurm_conf_path);

// Slurm time formats: "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S", "UNLIMITED"/"INFINITE" (0).
// Returns minutes (seconds rounded up). Error names `field`.
Result<int64_t> ParseSlurmTimeMinutes(std::string_view text, std::string_view field = "time");
// Minutes as "D-HH:MM:SS" / "HH:MM:SS" for messages.
std::string FormatSlurmTime(int64_t minutes);

}  // namespace fmte

#endif  // FMTE_CONFIG_H_
