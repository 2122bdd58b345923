// The accounting record: a compact, versioned `fmte:` text the job_submit plugin appends to the
// job's AdminComment so that Slurm accounting (sacct) keeps what was predicted next to what
// happened; fmte-retrain reads it back from sacct exports.
//
// Format (version 1), one token without spaces:
//   fmte:v1;model=meta-llama/Llama-3.1-8B;method=lora;gpus=4;gpn=4;gpu=A100-SXM4-80GB;tp=1;pp=1;
//   mb=2;seq=4096;ga=8;prec=amp-bf16;opt=adamw;shard=fsdp-full;ac=full;fw=hf;lora_r=16;
//   pred_mem=61203283968;cap=85899345920;pred_time_s=5400;limit_s=8100;decision=accept
// - starts with "fmte:" (contract), then "v<N>", then `;`-separated key=value pairs;
// - values are percent-encoded outside [A-Za-z0-9._/:+@-] (so never ';', '|', ',', '=', spaces);
// - the record ends at the first whitespace, ',' / '|' or end of text; other text around it in
//   AdminComment (a Princeton jobstats "JS1:..." blob, a site's own notes) is ignored;
// - keys with default values may be omitted; unknown keys are kept in `extra` (newer writers);
// - at most kMaxRecordBytes (long model paths are shortened to fit).
// Keys: model method gpus gpn gpu tp pp vpp ep etp cp sp fp8 fp8p gr16 seb mb seq ga gb prec opt
// shard off_opt off_par ac attn oimpl
//   lora_r lora_do quant fw tokens samples epochs steps part pred_mem cap pred_time_s limit_s
//   decision src corr_mem corr_time_s.
// pred_mem and pred_time_s are always the memory and time MODELS' own predictions, never the site-
// corrected ones: fmte-retrain trains the site corrections on log(measured / pred_*), so recording
// a corrected value would make the next model learn the correction of a correction. When a site
// correction was applied (site_correction.h) the corrected values the policy decided by follow as
// corr_mem / corr_time_s (decoders older than these keys keep them in `extra`).
// Thread-safety: pure functions over value types.
#ifndef FMTE_RECORD_H_
#define FMTE_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fmte/job.h"
#include "fmte/policy.h"
#include "fmte/request.h"
#include "fmte/status.h"

namespace fmte {

inline constexpr size_t kMaxRecordBytes = 1024;
// The largest byte count a record holds (pred_mem, corr_mem; 2^62, ~4.6 EB): an absurd job's
// saturated prediction (INT64_MAX) is recorded as this, so its reader never refuses the record
// (as kMaxRecordedTimeS for times).
inline constexpr int64_t kMaxRecordedBytes = int64_t{1} << 62;
inline constexpr std::string_view kRecordPrefix = "fmte:";

struct AccountingRecord {
  int version = 1;
  TrainingJob job;             // the features (the job as estimated)
  std::string partition;       // part=
  int64_t pred_mem_bytes = 0;  // pred_mem=: predicted per-GPU bytes (0: not estimated)
  int64_t cap_bytes = 0;       // cap=: device memory of the GPU
  double pred_time_s = 0;      // pred_time_s=: predicted wall time (0: none)
  int64_t corr_mem_bytes =
      0;                   // corr_mem=: per-GPU bytes after the site correction (0: none applied)
  double corr_time_s = 0;  // corr_time_s=: wall time after the site correction (0: none applied)
  int64_t limit_s = 0;     // limit_s=: time limit after the decision (0: none)
  std::string decision;    // decision=: accept|rewrite|reject|advise|error
  std::string sources;     // src=: compact provenance ("spank+launcher")
  std::vector<std::pair<std::string, std::string>> extra;  // unknown keys, in order
};

// Encodes; the result starts with "fmte:v1;" and is at most kMaxRecordBytes.
std::string EncodeRecord(const AccountingRecord& record);

// Finds the first "fmte:v<N>" record in `text` (e.g. a whole AdminComment) and decodes it.
// NotFound when there is none; ParseError naming the key for a malformed known value.
Result<AccountingRecord> DecodeRecord(std::string_view text);

// The record of one decision (what the plugin appends).
AccountingRecord MakeRecord(const JobRequest& request, const Decision& decision);

}  // namespace fmte

#endif  // FMTE_RECORD_H_
