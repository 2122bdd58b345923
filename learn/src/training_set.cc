// Building the sacct training sets (see training_set.h for targets and censoring).
#include "fmte/learn/training_set.h"

#include <cmath>
#include <limits>

namespace fmte::learn {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

float Log2OrNaN(double v) { return v > 0 ? static_cast<float>(std::log2(v)) : kNaN; }
float Code(int v) { return static_cast<float>(v); }

uint64_t Fnv1a(std::string_view s, uint64_t h = 1469598103934665603ull) {
  for (const char c : s) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return h;
}

void Skip(TrainingSets& sets, const std::string& reason) { ++sets.skipped[reason]; }

}  // namespace

const std::vector<std::string>& SacctFeatureNames() {
  static const std::vector<std::string> kNames = {
      "log2_gpus", "gpus_per_node", "log2_nodes", "tp", "pp", "log2_dp", "log2_micro_batch",
      "log2_seq_len", "log2_grad_accum", "method", "precision", "optimizer", "framework", "sharding",
      "activation_checkpointing", "offload_optimizer", "offload_params", "lora_r", "quant",
      "log2_tokens", "log2_steps", "epochs", "log2_pred_time_s", "log2_pred_mem_bytes",
      "log2_cap_bytes", "pred_mem_over_cap",
  };
  return kNames;
}

std::vector<float> SacctFeatures(const AccountingRecord& r) {
  const TrainingJob& j = r.job;
  const int64_t gpn = j.EffectiveGpusPerNode();
  const int64_t nodes = j.Nodes();
  const int64_t model_parallel = std::max<int64_t>(1, j.tp * j.pp);
  std::vector<float> f = {
      Log2OrNaN(static_cast<double>(j.gpus)),
      static_cast<float>(gpn),
      Log2OrNaN(static_cast<double>(nodes)),
      static_cast<float>(j.tp),
      static_cast<float>(j.pp),
      Log2OrNaN(static_cast<double>(j.gpus / model_parallel)),
      Log2OrNaN(static_cast<double>(j.micro_batch)),
      Log2OrNaN(static_cast<double>(j.seq_len)),
      Log2OrNaN(static_cast<double>(j.grad_accum)),
      Code(static_cast<int>(j.method)),
      Code(static_cast<int>(j.precision)),
      Code(static_cast<int>(j.optimizer)),
      Code(static_cast<int>(j.framework)),
      Code(static_cast<int>(j.sharding)),
      Code(static_cast<int>(j.activation_checkpointing)),
      j.offload_optimizer ? 1.0f : 0.0f,
      j.offload_params ? 1.0f : 0.0f,
      j.method == Method::kLora || j.method == Method::kQlora ? static_cast<float>(j.lora_r) : kNaN,
      Code(static_cast<int>(j.quant)),
      Log2OrNaN(static_cast<double>(j.tokens)),
      Log2OrNaN(static_cast<double>(j.steps)),
      j.epochs > 0 ? static_cast<float>(j.epochs) : kNaN,
      Log2OrNaN(r.pred_time_s),
      Log2OrNaN(static_cast<double>(r.pred_mem_bytes)),
      Log2OrNaN(static_cast<double>(r.cap_bytes)),
      r.pred_mem_bytes > 0 && r.cap_bytes > 0
          ? static_cast<float>(static_cast<double>(r.pred_mem_bytes) / static_cast<double>(r.cap_bytes))
          : kNaN,
  };
  return f;
}

int64_t SacctGroup(const JobRecord& job) {
  uint64_t h = Fnv1a(job.user);
  if (job.record) {
    const TrainingJob& j = job.record->job;
    h = Fnv1a(j.model, h);
    h = Fnv1a(std::to_string(j.gpus) + "/" + std::to_string(j.tp) + "/" + std::to_string(j.pp) + "/" +
                  std::to_string(j.micro_batch) + "/" + std::to_string(j.seq_len) + "/" +
                  std::string(ToString(j.method)),
              h);
  }
  return static_cast<int64_t>(h & 0x7fffffffffffffffull);
}

TrainingSets BuildSacctTrainingSets(const std::vector<JobRecord>& jobs) {
  TrainingSets sets;
  sets.jobs = static_cast<int64_t>(jobs.size());
  const size_t nf = SacctFeatureNames().size();
  sets.time.x.cols = sets.time.x_censored.cols = static_cast<int64_t>(nf);
  sets.memory.x.cols = sets.memory.x_censored.cols = static_cast<int64_t>(nf);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobRecord& job = jobs[i];
    if (!job.record) {
      Skip(sets, "no fmte record");
      continue;
    }
    ++sets.with_record;
    const AccountingRecord& rec = *job.record;
    const std::vector<float> features = SacctFeatures(rec);
    const int64_t group = SacctGroup(job);
    bool used = false;

    // Time.
    if (rec.pred_time_s <= 0) {
      Skip(sets, "time: no pred_time_s in the record");
    } else if (job.state == JobState::kCompleted && job.elapsed_s > 0) {
      TargetSet& t = sets.time;
      t.x.AddRow(features);
      t.y.push_back(static_cast<float>(std::log(static_cast<double>(job.elapsed_s) / rec.pred_time_s)));
      t.groups.push_back(group);
      t.base.push_back(rec.pred_time_s);
      t.actual.push_back(static_cast<double>(job.elapsed_s));
      t.job_index.push_back(static_cast<int64_t>(i));
      t.limit_factor.push_back(job.time_limit_s > 0 ? static_cast<double>(job.time_limit_s) / rec.pred_time_s
                                                    : std::nan(""));
      t.end_time.push_back(job.end_time);
      used = true;
    } else if (TimeCensored(job) && job.elapsed_s > 0) {
      TargetSet& t = sets.time;
      t.x_censored.AddRow(features);
      t.base_censored.push_back(rec.pred_time_s);
      // It ran at least its limit (and at least what accounting measured).
      t.lower_censored.push_back(static_cast<double>(std::max(job.elapsed_s, job.time_limit_s)));
      t.job_index_censored.push_back(static_cast<int64_t>(i));
      used = true;
    } else if (job.elapsed_s <= 0) {
      Skip(sets, "time: no elapsed time");
    } else {
      Skip(sets, "time: state " + std::string(ToString(job.state)) + " (neither completed nor timed out)");
    }

    // Memory.
    if (rec.pred_mem_bytes <= 0) {
      Skip(sets, "memory: no pred_mem in the record");
    } else if (job.gpu_peak_bytes <= 0) {
      Skip(sets, "memory: no measured GPU peak (gres/gpumem or JS1)");
    } else if (MemoryCensored(job)) {
      TargetSet& m = sets.memory;
      m.x_censored.AddRow(features);
      m.base_censored.push_back(static_cast<double>(rec.pred_mem_bytes));
      m.lower_censored.push_back(static_cast<double>(job.gpu_peak_bytes));
      m.job_index_censored.push_back(static_cast<int64_t>(i));
      used = true;
    } else {
      TargetSet& m = sets.memory;
      m.x.AddRow(features);
      m.y.push_back(static_cast<float>(
          std::log(static_cast<double>(job.gpu_peak_bytes) / static_cast<double>(rec.pred_mem_bytes))));
      m.groups.push_back(group);
      m.base.push_back(static_cast<double>(rec.pred_mem_bytes));
      m.actual.push_back(static_cast<double>(job.gpu_peak_bytes));
      m.job_index.push_back(static_cast<int64_t>(i));
      m.limit_factor.push_back(std::nan(""));
      m.end_time.push_back(job.end_time);
      used = true;
    }
    if (used && job.end_time > 0) {
      if (sets.first_end_time == kUnknownValue || job.end_time < sets.first_end_time) {
        sets.first_end_time = job.end_time;
      }
      sets.last_end_time = std::max(sets.last_end_time, job.end_time);
    }
  }
  return sets;
}

}  // namespace fmte::learn
