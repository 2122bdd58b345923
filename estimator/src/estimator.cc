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
  return Catalogs{std::move(models).value(), std::move(gpus).value()};
}

Result<JobEstimate> Estimate(const Catalogs& /*catalogs*/, const ModelArch& model, const TrainingJob& job,
                             const GpuSpec& gpu) {
  FMTE_RETURN_IF_ERROR(ValidateJob(job));
  auto memory = EstimateMemory(model, job, gpu);
  if (!memory.ok()) return memory.status();
  JobEstimate out;
  out.memory = std::move(memory).value();
  // Wall time: filled once the time model joins the facade (has_time stays false until then, and
  // the policy sets no time limit without it).
  return out;
}

Result<Estimator> Estimator::Load(const std::string& etc_dir) {
  auto catalogs = LoadCatalogs(etc_dir);
  if (!catalogs.ok()) return catalogs.status();
  return Estimator(std::move(catalogs).value());
}

}  // namespace fmte
