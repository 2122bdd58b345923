#include "fmte/cluster.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fmte/file.h"
#include "fmte/json_fields.h"
#include "fmte/text.h"

namespace fmte {
namespace {}  // namespace

Result<ClusterSpec> ParseClusterJson(std::string_view json_text, std::string_view origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const std::exception& e) {
    return Status::ParseError(std::string(origin) + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) return Status::ParseError(std::string(origin) + ": expected a JSON object");
  static const char* kKeys[] = {"name",
                                "gpu",
                                "gpus_per_node",
                                "intra_node_gbps",
                                "inter_node_gbps",
                                "pcie_gbps",
                                "host_memory_gbps",
                                "storage_gbps",
                                "startup_s",
                                "checkpoint_fixed_s",
                                "source",
                                "notes"};
  for (const auto& item : j.items()) {
    const std::string& key = item.key();
    if (std::find_if(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return key == k; }) ==
        std::end(kKeys)) {
      return Status::ParseError(std::string(origin) + ": unknown key \"" + key + "\"");
    }
  }
  ClusterSpec c;
  if (!j.contains("name") || !j["name"].is_string() || j["name"].get<std::string>().empty())
    return Status::ParseError(std::string(origin) + ": \"name\": expected a non-empty string");
  c.name = j["name"].get<std::string>();
  if (j.contains("gpu")) {
    if (!j["gpu"].is_string())
      return Status::ParseError(std::string(origin) + ": \"gpu\": expected a string");
    c.gpu = j["gpu"].get<std::string>();
  }
  if (j.contains("source") && j["source"].is_string()) c.source = j["source"].get<std::string>();
  double gpn = static_cast<double>(c.gpus_per_node);
  FMTE_RETURN_IF_ERROR(
      ReadJsonNumber(j, "gpus_per_node", Presence::kOptional, Sign::kPositive, origin, &gpn));
  // Range first: a value beyond int64_t must not be converted to test it (undefined behaviour).
  if (gpn > 1024 || gpn != std::floor(gpn))
    return Status::ParseError(std::string(origin) +
                              ": \"gpus_per_node\": expected an integer 1..1024");
  c.gpus_per_node = static_cast<int64_t>(gpn);
  FMTE_RETURN_IF_ERROR(ReadJsonNumber(j, "intra_node_gbps", Presence::kOptional, Sign::kNonNegative,
                                      origin, &c.intra_node_gbps));
  FMTE_RETURN_IF_ERROR(ReadJsonNumber(j, "inter_node_gbps", Presence::kOptional, Sign::kPositive,
                                      origin, &c.inter_node_gbps));
  FMTE_RETURN_IF_ERROR(
      ReadJsonNumber(j, "pcie_gbps", Presence::kOptional, Sign::kPositive, origin, &c.pcie_gbps));
  FMTE_RETURN_IF_ERROR(ReadJsonNumber(j, "host_memory_gbps", Presence::kOptional, Sign::kPositive,
                                      origin, &c.host_memory_gbps));
  FMTE_RETURN_IF_ERROR(ReadJsonNumber(j, "storage_gbps", Presence::kOptional, Sign::kPositive,
                                      origin, &c.storage_gbps));
  FMTE_RETURN_IF_ERROR(ReadJsonNumber(j, "startup_s", Presence::kOptional, Sign::kNonNegative,
                                      origin, &c.startup_s));
  FMTE_RETURN_IF_ERROR(ReadJsonNumber(j, "checkpoint_fixed_s", Presence::kOptional,
                                      Sign::kNonNegative, origin, &c.checkpoint_fixed_s));
  return c;
}

ClusterSpec DefaultCluster(const GpuSpec& gpu) {
  ClusterSpec c;
  c.name = "default-" + gpu.name;
  c.gpu = gpu.name;
  c.source = "built-in defaults (cluster.h); give --cluster or --inter-node-gbps for your site";
  return c;
}

Result<ClusterCatalog> ClusterCatalog::LoadDir(const std::string& dir) {
  ClusterCatalog cat;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return cat;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    Result<std::string> text = ReadFile(f.string(), "the cluster description");
    if (!text.ok()) return text.status();
    Result<ClusterSpec> spec = ParseClusterJson(*text, f.string());
    if (!spec.ok()) return spec.status();
    cat.Add(std::move(spec).value());
  }
  return cat;
}

std::string ClusterCatalog::DefaultDir() { return EtcDir() + "/clusters"; }

Result<const ClusterSpec*> ClusterCatalog::Find(std::string_view name) const {
  auto it = clusters_.find(Lower(name));
  if (it != clusters_.end()) return &it->second;
  std::string known;
  for (const auto& [k, v] : clusters_) known += (known.empty() ? "" : ", ") + v.name;
  return Status::NotFound("--cluster: unknown cluster '" + std::string(name) + "' (known: " +
                          (known.empty() ? "none; add etc/clusters/<name>.json" : known) + ")");
}

std::vector<std::string> ClusterCatalog::Names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : clusters_) out.push_back(v.name);
  return out;
}

void ClusterCatalog::Add(ClusterSpec spec) { clusters_[Lower(spec.name)] = std::move(spec); }

Result<ClusterSpec> ResolveCluster(const ClusterCatalog& catalog, const TrainingJob& job,
                                   const GpuSpec& gpu) {
  if (job.cluster.empty()) {
    ClusterSpec c = DefaultCluster(gpu);
    if (job.gpus_per_node > 0) c.gpus_per_node = job.gpus_per_node;
    return c;
  }
  Result<const ClusterSpec*> found = catalog.Find(job.cluster);
  if (!found.ok()) return found.status();
  ClusterSpec c = **found;
  if (job.gpus_per_node > 0) c.gpus_per_node = job.gpus_per_node;
  return c;
}

Status ResolveClusterNumbers(const ClusterCatalog& catalog, const TrainingJob& job,
                             ClusterSpec* out) {
  if (job.cluster.empty()) {
    *out = ClusterSpec();  // DefaultCluster's numbers: the defaults
  } else {
    Result<const ClusterSpec*> found = catalog.Find(job.cluster);
    if (!found.ok()) return found.status();
    *out = **found;
  }
  if (job.gpus_per_node > 0) out->gpus_per_node = job.gpus_per_node;
  return Status::Ok();
}

}  // namespace fmte
