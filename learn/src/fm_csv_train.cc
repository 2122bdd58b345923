// FM Training Estimator rows as training material (fm_csv.h): memory samples for the site memory
// correction and step-time samples for the step-time correction, and that correction's training.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "fmte/learn/correction_domain.h"
#include "fmte/learn/fm_csv.h"
#include "fmte/memory.h"

namespace fmte::learn {
namespace {

void Skip(FmSamples* s, const std::string& reason) { ++s->skipped[reason]; }

int64_t GroupId(std::map<std::string, int64_t>* ids, const std::string& key) {
  return ids->emplace(key, static_cast<int64_t>(ids->size())).first->second;
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

}  // namespace

ClusterSpec FmPodCluster(const TrainingJob& job) {
  ClusterSpec c;
  c.name = "fm-pod";
  c.gpu = job.gpu;
  c.gpus_per_node = job.gpus;
  c.source =
      "FM Training Estimator row: one pod of number_gpus GPUs (InfraArguments.numGpusPerPod)";
  return c;
}

FmSamples BuildFmSamples(const std::vector<FmCsvData>& files, const Catalogs& catalogs,
                         const FmJobOptions& options) {
  FmSamples out;
  const size_t nf = SacctFeatureNames().size();
  out.memory.memory.x.cols = out.memory.memory.x_censored.cols = static_cast<int64_t>(nf);
  out.memory.time.x.cols = out.memory.time.x_censored.cols = static_cast<int64_t>(nf);
  std::map<std::string, int64_t> group_ids;
  for (const FmCsvData& file : files) {
    for (const FmCsvRow& row : file.rows) {
      ++out.rows;
      ++out.memory.jobs;
      Result<FmJob> m = MapFmRow(row, file.format, catalogs, options);
      if (!m.ok()) {
        out.unmapped.push_back({file.origin, row.line, m.status().message()});
        Skip(&out, "not mapped to a job");
        continue;
      }
      ++out.mapped;
      ++out.memory.with_record;
      const std::string origin = file.origin + ":" + std::to_string(row.line);
      out.steps.push_back(
          {origin, m->arch, m->job, m->gpu, FmPodCluster(m->job), m->step_time_s, m->group});

      if (m->memory_bytes < kFmMinPlausibleMemoryBytes) {
        Skip(&out, "memory: below 256 MiB per GPU (a placeholder, or not bytes)");
        continue;
      }
      Result<MemoryEstimate> mem = EstimateMemory(m->arch, m->job, *m->gpu);
      if (!mem.ok()) {
        out.unmapped.push_back(
            {file.origin, row.line, "memory estimate: " + mem.status().message()});
        Skip(&out, "memory: the core cannot estimate this layout");
        continue;
      }
      AccountingRecord rec;
      rec.job = m->job;
      rec.pred_mem_bytes = mem->per_gpu_bytes;
      rec.cap_bytes = m->gpu->memory_bytes;
      rec.decision = "advise";
      rec.sources = "fm-csv";
      TargetSet& t = out.memory.memory;
      t.x.AddRow(SacctFeatures(rec));
      t.y.push_back(
          static_cast<float>(std::log(m->memory_bytes / static_cast<double>(rec.pred_mem_bytes))));
      t.groups.push_back(GroupId(&group_ids, m->group));
      t.base.push_back(static_cast<double>(rec.pred_mem_bytes));
      t.actual.push_back(m->memory_bytes);
      t.job_index.push_back(static_cast<int64_t>(out.steps.size() - 1));
      t.limit_factor.push_back(std::nan(""));
      t.end_time.push_back(kUnknownValue);
    }
  }
  return out;
}

Result<StepCorrectionOutcome> TrainStepTimeCorrection(const std::vector<StepTimeSample>& samples,
                                                      const TimeModel& base,
                                                      const TimeModel* installed,
                                                      const StepCorrectionOptions& options) {
  StepCorrectionOutcome out;
  // The correction's hyperparameters are vTrain's (learn/src/vtrain_fit.cc FitPredict), so both
  // sources train the same model the same way.
  out.params.num_rounds = 200;
  out.params.max_depth = 3;
  out.params.eta = 0.05;
  out.params.min_child_weight = 5;
  out.params.seed = options.seed;
  DenseMatrix x;
  std::vector<float> y;
  std::vector<int64_t> groups;
  std::vector<double> analytic, measured;
  std::map<std::string, int64_t> ids;
  std::vector<std::vector<float>> features;
  for (const StepTimeSample& s : samples) {
    Result<TimeEstimate> est =
        EstimateStepTimeAnalytic(s.arch, s.job, *s.gpu, s.cluster, base.For(*s.gpu));
    if (!est.ok()) return est.status().WithContext(s.origin);
    x.AddRow(est->features);
    features.push_back(est->features);
    y.push_back(static_cast<float>(std::log(s.measured_s / est->step_time_s)));
    groups.push_back(GroupId(&ids, s.group));
    analytic.push_back(est->step_time_s);
    measured.push_back(s.measured_s);
  }
  out.rows = static_cast<int64_t>(samples.size());
  std::vector<const std::vector<float>*> feature_rows;
  for (const std::vector<float>& f : features) feature_rows.push_back(&f);
  out.domain = MeasureCorrectionDomain(feature_rows);
  out.groups = static_cast<int64_t>(ids.size());
  if (out.rows < options.min_rows || out.groups < options.min_groups) {
    out.skipped_reason = std::to_string(out.rows) + " step-time samples in " +
                         std::to_string(out.groups) + " groups (need at least " +
                         std::to_string(options.min_rows) + " in " +
                         std::to_string(options.min_groups) + ")";
    return out;
  }
  CvOptions cv;
  cv.folds = options.folds;
  cv.seed = options.seed;
  Result<CvResult> res = GroupedKFold(x, y, groups, out.params, cv);  // out_of_fold: log ratios
  if (!res.ok()) return res.status().WithContext("step-time cross-validation");
  std::vector<double> ape_new;
  double sum_a = 0, sum_n = 0;
  for (int64_t r = 0; r < out.rows; ++r) {
    // The run-time clamp (TimeModel) applies to the held-out prediction too.
    const double corr = std::clamp(res->out_of_fold[r], -options.clamp_log, options.clamp_log);
    const double pred = analytic[r] * std::exp(corr);
    ape_new.push_back(std::fabs(pred - measured[r]) / measured[r]);
    sum_n += ape_new.back();
    sum_a += std::fabs(analytic[r] - measured[r]) / measured[r];
    out.heldout_log_residuals.push_back(std::log(measured[r] / pred));
  }
  out.analytic_mape = sum_a / static_cast<double>(out.rows);
  out.new_mape = sum_n / static_cast<double>(out.rows);
  out.new_p90_ape = Quantile(ape_new, 0.9);
  if (installed != nullptr) {
    double sum_i = 0;
    for (size_t r = 0; r < samples.size(); ++r) {
      const StepTimeSample& s = samples[r];
      Result<TimeEstimate> est = EstimateStepTime(s.arch, s.job, *s.gpu, s.cluster, *installed);
      if (!est.ok()) return est.status().WithContext(s.origin + " (installed model)");
      sum_i += std::fabs(est->step_time_s - measured[r]) / measured[r];
    }
    out.installed_mape = sum_i / static_cast<double>(out.rows);
  }
  Result<XgbModel> model = XgbModel::Train(x, y, out.params);
  if (!model.ok()) return model.status().WithContext("step-time correction");
  Result<std::string> json = model->ToJson();
  if (!json.ok()) return json.status();
  out.model_json = std::move(json).value();
  out.trained = true;
  return out;
}

}  // namespace fmte::learn
