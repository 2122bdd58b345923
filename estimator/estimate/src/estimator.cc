// The estimator facade (estimator.h): catalogs loaded once, one call per job estimate.
#include "fmte/estimator.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "fmte/memory_prepared.h"
#include "fmte/text.h"

namespace fmte {

Status LoadRegressors(const std::string& regressors_dir, Catalogs* catalogs) {
  const std::string dir = regressors_dir.empty() ? RegressorsDir() : regressors_dir;
  std::error_code ec;
  // A missing time model only disables time estimates; a broken one is an error.
  std::string vtrain = TimeModel::DefaultDir();
  if (std::filesystem::exists(dir + "/efficiency.json", ec)) {
    vtrain = dir;
  } else if (std::filesystem::exists(dir + "/vtrain", ec)) {
    vtrain = dir + "/vtrain";
  }
  if (auto time_model = TimeModel::LoadDir(vtrain); time_model.ok()) {
    catalogs->time_model = std::move(time_model).value();
    catalogs->has_time_model = true;
  } else if (time_model.status().code() != Status::Code::kIoError) {
    return time_model.status();
  } else {
    catalogs->time_model = TimeModel();
    catalogs->has_time_model = false;
  }
  // The site's corrections (fmte-retrain train --into DIR): absent = none.
  auto corrections = SiteCorrections::LoadDir(dir);
  if (!corrections.ok()) return corrections.status();
  catalogs->corrections = std::move(corrections).value();
  return Status::Ok();
}

void LoadOperatorSets(const Config& config, Catalogs* catalogs, std::string* problems,
                      const PartitionConfig* only) {
  std::vector<std::string> names;
  if (only != nullptr) {
    if (!only->operator_set.empty()) names.push_back(only->operator_set);
  } else {
    if (!config.defaults.operator_set.empty()) names.push_back(config.defaults.operator_set);
    for (const PartitionConfig& p : config.partitions)
      if (!p.operator_set.empty()) names.push_back(p.operator_set);
  }
  std::set<std::string> tried;  // a set several partitions name is read, or reported, once
  for (const std::string& name : names) {
    if (!tried.insert(name).second || catalogs->operator_sets.count(name) != 0) continue;
    const std::string dir = OperatorModels::FindDir(name, config.regressors_dir);
    Result<OperatorModels> set =
        dir.empty() ? Result<OperatorModels>(Status::NotFound(
                          "no " +
                          (config.regressors_dir.empty()
                               ? std::string()
                               : config.regressors_dir + "/" + name + "/manifest.json or ") +
                          OperatorModels::DefaultDir(name) + "/manifest.json"))
                    : OperatorModels::Load(dir);
    if (set.ok()) {
      catalogs->operator_sets.emplace(name, std::move(set).value());
    } else {
      if (!problems->empty()) *problems += "\n";
      *problems += "OperatorSet=" + name +
                   " not used (its partitions decide without it): " + set.status().message();
    }
  }
}

Result<Catalogs> LoadCatalogs(const std::string& etc_dir, const std::string& regressors_dir) {
  const std::string models_dir = etc_dir.empty() ? ModelCatalog::DefaultDir() : etc_dir + "/models";
  const std::string gpus_path = etc_dir.empty() ? GpuCatalog::DefaultPath() : etc_dir + "/gpus.csv";
  auto models = ModelCatalog::LoadDir(models_dir);
  if (!models.ok()) return models.status();
  auto gpus = GpuCatalog::LoadCsv(gpus_path);
  if (!gpus.ok()) return gpus.status();
  Catalogs out{std::move(models).value(), std::move(gpus).value(), {}, {}, false, {}, {}};
  auto clusters = ClusterCatalog::LoadDir(etc_dir.empty() ? ClusterCatalog::DefaultDir()
                                                          : etc_dir + "/clusters");
  if (!clusters.ok()) return clusters.status();
  out.clusters = std::move(clusters).value();
  FMTE_RETURN_IF_ERROR(LoadRegressors(regressors_dir, &out));
  return out;
}

int64_t ModelPerGpuBytes(const JobEstimate& e) {
  return e.correction.memory.applied ? e.correction.model_per_gpu_bytes : e.memory.per_gpu_bytes;
}

double ModelWallTimeS(const JobEstimate& e) {
  return e.correction.time.applied ? e.correction.model_wall_time_s : e.wall_time_s;
}

void ApplySiteCorrections(const SiteCorrections& corrections, const TrainingJob& job,
                          const GpuSpec& gpu, JobEstimate* e) {
  if (corrections.empty() || e->correction.any()) return;  // never twice
  // The row the accounting record would give fmte-retrain for this job (record.cc MakeRecord).
  const SiteFeatureRow row = SiteFeatures(job, e->has_time ? e->wall_time_s : 0,
                                          e->memory.per_gpu_bytes, gpu.memory_bytes);
  if (corrections.memory && e->memory.per_gpu_bytes > 0) {
    const AppliedCorrection a = MemoryCorrection(*corrections.memory, row);
    if (a.applied) {
      e->correction.memory = a;
      e->correction.model_per_gpu_bytes = e->memory.per_gpu_bytes;
      // A colocated engine's share is its setting's, not the model's: the trainer's part only.
      const double engine = static_cast<double>(e->memory.breakdown.generation);
      e->memory.per_gpu_bytes = static_cast<int64_t>(std::llround(
          (static_cast<double>(e->memory.per_gpu_bytes) - engine) * a.factor + engine));
      e->memory.fits = e->memory.per_gpu_bytes <= e->memory.gpu_capacity_bytes;
    }
  }
  if (corrections.time && e->has_time && e->wall_time_s > 0) {
    const AppliedCorrection a = TimeCorrection(*corrections.time, row);
    if (a.applied) {
      e->correction.time = a;
      e->correction.model_wall_time_s = e->wall_time_s;
      e->correction.model_wall_time_bound_s = e->wall_time_bound_s;
      e->wall_time_s *= a.factor;
      // The bound: the corrected time at the p95 of the correction's own held-out residuals when
      // the manifest records them (retrain_train.cc log_residual_quantiles), else the model's bound
      // scaled.
      const double bound_factor = TimeBoundFactor(*corrections.time);
      e->wall_time_bound_s = bound_factor > 0
                                 ? e->wall_time_s * bound_factor
                                 : std::max(e->wall_time_bound_s * a.factor, e->wall_time_s);
    }
  }
}

struct PreparedEstimate::Shared {
  explicit Shared(const ModelArch& m) : model(m) {}
  memory::PreparedModel model;
  // Per-stage parameter counts, each with the job it was counted for (ShareParamsOf).
  std::vector<std::pair<TrainingJob, std::vector<memory::StageParams>>> params;
  // Stage activations of a GPU-count search (ShareActivationsOf); empty: none shared.
  std::vector<memory::StageActivations> activations;

  const std::vector<memory::StageParams>* ParamsFor(const TrainingJob& job) const {
    for (const auto& [counted, stages] : params)
      if (memory::SameParamCounts(job, counted)) return &stages;
    return nullptr;
  }
};

PreparedEstimate::PreparedEstimate(const Catalogs& catalogs, const ModelArch& model)
    : catalogs_(catalogs), shared_(std::make_unique<Shared>(model)) {}
PreparedEstimate::~PreparedEstimate() = default;

const ModelArch& PreparedEstimate::model() const { return shared_->model.arch; }

void PreparedEstimate::ShareParamsOf(const TrainingJob& job) {
  if (shared_->ParamsFor(job) != nullptr) return;
  if (shared_->params.size() == kSharedParams) shared_->params.erase(shared_->params.begin());
  shared_->params.emplace_back(job, memory::CountPipelineParams(shared_->model, job));
}

void PreparedEstimate::ShareActivationsOf(const TrainingJob& job) {
  shared_->activations = memory::CountPipelineActivations(shared_->model, job);
}

void PreparedEstimate::ForgetActivations() { shared_->activations.clear(); }

Status PreparedEstimate::EstimateMemory(const TrainingJob& job, const GpuSpec& gpu,
                                        JobEstimate* out) {
  const auto* activations = shared_->activations.empty() ? nullptr : &shared_->activations;
  Status s = ValidateJob(job);
  if (s.ok())
    s = memory::EstimateMemory(shared_->model, job, gpu, &out->memory, shared_->ParamsFor(job),
                               activations);
  if (!s.ok()) {
    out->memory.per_gpu_bytes = 0;
    return s;
  }
  // The site's memory correction, as the full estimate applies it (the row has no time: time
  // features are missing, which the trees route by their default branch).
  out->correction = SiteCorrectionInfo{};
  ApplySiteCorrections(catalogs_.corrections, job, gpu, out);
  return Status::Ok();
}

Status PreparedEstimate::Estimate(const TrainingJob& job, const GpuSpec& gpu, JobEstimate* estimate,
                                  const DatasetTokens* dataset) {
  FMTE_RETURN_IF_ERROR(ValidateJob(job));
  const ModelArch& model = shared_->model.arch;
  JobEstimate& out = *estimate;
  FMTE_RETURN_IF_ERROR(
      memory::EstimateMemory(shared_->model, job, gpu, &out.memory, shared_->ParamsFor(job)));
  const TrainedParams params{out.memory.params.total, out.memory.trainable_params};
  // Step time whenever the time model is loaded; wall time when the job says how much work it
  // does. An unknown --cluster is the user's error; other time failures leave the estimate without
  // time (the policy then sets no limit).
  if (catalogs_.has_time_model) {
    ClusterSpec cluster;
    FMTE_RETURN_IF_ERROR(ResolveClusterNumbers(catalogs_.clusters, job, &cluster));
    // An online objective's step also generates (not modelled): its update's step time only,
    // dataset or not; WallTimeFromOwnStep refuses it a wall time (so the policy sets no limit).
    if (dataset != nullptr && !GeneratesCompletions(job.objective)) {
      // The dataset was asked for explicitly: its errors are the user's.
      auto wall = EstimateWallTimeForDataset(model, job, gpu, cluster, catalogs_.time_model,
                                             *dataset, params);
      if (!wall.ok()) return wall.status();
      out.time = std::move(wall).value();
      out.has_step_time = out.has_time = true;
      out.wall_time_s = out.time.wall_time_s;
      out.wall_time_bound_s = out.time.time_limit_s;
    } else if (EstimateStepTimeInto(model, job, gpu, cluster, catalogs_.time_model, &out.time.step)
                   .ok()) {
      out.has_step_time = true;
      // A wall time needs --steps/--tokens/--samples; without them the estimate has step time only.
      if (WallTimeFromOwnStep(job, cluster, catalogs_.time_model, params, WallTimeOptions{},
                              &out.time)
              .ok()) {
        out.has_time = true;
        out.wall_time_s = out.time.wall_time_s;
        out.wall_time_bound_s = out.time.time_limit_s;
      }
    }
  }
  ApplySiteCorrections(catalogs_.corrections, job, gpu, &out);
  return Status::Ok();
}

Result<JobEstimate> Estimate(const Catalogs& catalogs, const ModelArch& model,
                             const TrainingJob& job, const GpuSpec& gpu) {
  JobEstimate out;
  FMTE_RETURN_IF_ERROR(PreparedEstimate(catalogs, model).Estimate(job, gpu, &out));
  return out;
}

Result<JobEstimate> Estimate(const Catalogs& catalogs, const ModelArch& model,
                             const TrainingJob& job, const GpuSpec& gpu,
                             const DatasetTokens& dataset) {
  JobEstimate out;
  FMTE_RETURN_IF_ERROR(PreparedEstimate(catalogs, model).Estimate(job, gpu, &out, &dataset));
  return out;
}

Result<Estimator> Estimator::Load(const std::string& etc_dir, const std::string& regressors_dir) {
  auto catalogs = LoadCatalogs(etc_dir, regressors_dir);
  if (!catalogs.ok()) return catalogs.status();
  return Estimator(std::move(catalogs).value());
}

}  // namespace fmte
