// The estimator facade (estimator.h): catalogs loaded once, one call per job estimate.
#include "fmte/estimator.h"

namespace fmte {

Result<Catalogs> LoadCatalogs(const std::string& etc_dir) {
  const std::string models_dir = etc_dir.empty() ? ModelCatalog::DefaultDir() : etc_dir + "/models";
  const std::string gpus_path = etc_dir.empty() ? GpuCatalog::DefaultPath() : etc_dir + "/gpus.csv";
  auto models = ModelCatalog::LoadDir(models_dir);
  if (!models.ok()) return models.status();
  auto gpus = GpuCatalog::LoadCsv(gpus_path);
  if (!gpus.ok()) return gpus.status();
  Catalogs out{std::move(models).value(), std::move(gpus).value(), {}, {}, false};
  // Time (issue 4): a missing time model only disables time estimates; a broken one is an error.
  auto clusters = ClusterCatalog::LoadDir(etc_dir.empty() ? ClusterCatalog::DefaultDir() : etc_dir + "/clusters");
  if (!clusters.ok()) return clusters.status();
  out.clusters = std::move(clusters).value();
  if (auto time_model = TimeModel::LoadDir(TimeModel::DefaultDir()); time_model.ok()) {
    out.time_model = std::move(time_model).value();
    out.has_time_model = true;
  } else if (time_model.status().code() != Status::Code::kIoError) {
    return time_model.status();
  }
  return out;
}

Result<JobEstimate> Estimate(const Catalogs& catalogs, const ModelArch& model, const TrainingJob& job,
                             const GpuSpec& gpu) {
  FMTE_RETURN_IF_ERROR(ValidateJob(job));
  auto memory = EstimateMemory(model, job, gpu);
  if (!memory.ok()) return memory.status();
  JobEstimate out;
  out.memory = std::move(memory).value();
  // Time (issue 4): step time whenever the time model is loaded; wall time when the job says how
  // much work it does. An unknown --cluster is the user's error; other time failures leave the
  // estimate without time (the policy then sets no limit).
  if (catalogs.has_time_model) {
    auto cluster = ResolveCluster(catalogs.clusters, job, gpu);
    if (!cluster.ok()) return cluster.status();
    auto step = EstimateStepTime(model, job, gpu, *cluster, catalogs.time_model);
    if (step.ok()) {
      out.has_step_time = true;
      out.time.step = *step;
      auto wall = WallTimeFromStep(model, job, *cluster, catalogs.time_model, *step);
      if (wall.ok()) {
        out.time = std::move(wall).value();
        out.has_time = true;
        out.wall_time_s = out.time.wall_time_s;
        out.wall_time_bound_s = out.time.time_limit_s;
      }
    }
  }
  return out;
}

Result<Estimator> Estimator::Load(const std::string& etc_dir) {
  auto catalogs = LoadCatalogs(etc_dir);
  if (!catalogs.ok()) return catalogs.status();
  return Estimator(std::move(catalogs).value());
}

}  // namespace fmte
