// OperatorModels: loading a cluster's regressors (manifest.json + XGBoost JSON models) and
// predicting operator and collective times from them.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fmte/file.h"
#include "fmte/operator_time.h"
#include "fmte/text.h"

namespace fmte {

std::string OperatorModels::DefaultDir(std::string_view cluster) {
  return RegressorsDir() + "/" + std::string(cluster);
}

std::string OperatorModels::FindDir(std::string_view name, const std::string& site_dir) {
  if (name.empty()) return "";
  const std::string lower = Lower(name);
  const std::string shipped = lower == "perlmutter" ? "Perlmutter"
                              : lower == "vista"    ? "Vista"
                                                    : std::string(name);
  for (const std::string& root : {site_dir, RegressorsDir()}) {
    if (root.empty()) continue;
    for (const std::string& n : {std::string(name), shipped}) {
      std::error_code ec;
      if (std::filesystem::is_regular_file(root + "/" + n + "/manifest.json", ec))
        return root + "/" + n;
    }
  }
  return "";
}

Result<OperatorModels> OperatorModels::Load(const std::string& dir) {
  const std::string path = dir + "/manifest.json";
  Result<std::string> text = ReadFile(path, "the operator regressors manifest");
  if (!text.ok())
    return Status::NotFound(text.status().message() + " (train with fmte-train-operators)");
  OperatorModels m;
  try {
    const nlohmann::json doc = nlohmann::json::parse(*text);
    m.cluster_ = doc.value("cluster", "");
    m.gpu_ = doc.value("gpu", "");
    if (!doc.contains("regressors") || !doc["regressors"].is_array()) {
      return Status::ParseError(path + ": 'regressors': expected an array");
    }
    for (const auto& r : doc["regressors"]) {
      if (!r.contains("key") || !r["key"].is_string() || !r.contains("model") ||
          !r["model"].is_string()) {
        return Status::ParseError(path + ": each regressor needs string 'key' and 'model'");
      }
      Result<TreeModel> t = TreeModel::LoadFile(dir + "/" + r["model"].get<std::string>());
      if (!t.ok()) return t.status();
      m.models_.emplace(r["key"].get<std::string>(), std::move(t.value()));
    }
  } catch (const std::exception& e) {
    return Status::ParseError(path + ": " + e.what());
  }
  if (m.models_.empty()) return Status::ParseError(path + ": lists no regressors");
  return m;
}

Result<double> OperatorModels::OperatorUs(std::string_view op, Pass pass,
                                          const OperatorConfig& c) const {
  char key[96];
  std::snprintf(key, sizeof key, "%.*s_%.*s", static_cast<int>(op.size()), op.data(),
                static_cast<int>(ToString(pass).size()), ToString(pass).data());
  auto it = models_.find(std::string_view(key));
  if (it == models_.end()) {
    return Status::NotFound("no regressor '" + std::string(key) + "' for cluster " + cluster_);
  }
  float x[kMaxOperatorFeatures] = {};
  double work = 0;
  Result<int> n = OperatorFeatures(op, c, x, &work);
  if (!n.ok()) return n.status();
  return std::exp(it->second.Predict(std::span<const float>(x, kMaxOperatorFeatures))) * work;
}

Result<double> OperatorModels::CollectiveUs(std::string_view collective, int64_t nodes,
                                            int64_t gpus_per_node, double elements) const {
  if (!(elements > 0)) return 0.0;
  char key[96];
  std::snprintf(key, sizeof key, "%.*s_%lld_%lld", static_cast<int>(collective.size()),
                collective.data(), static_cast<long long>(nodes),
                static_cast<long long>(gpus_per_node));
  bool pooled = false;
  auto it = models_.find(std::string_view(key));
  if (it == models_.end()) {
    std::snprintf(key, sizeof key, "%.*s_any", static_cast<int>(collective.size()),
                  collective.data());
    it = models_.find(std::string_view(key));
    pooled = true;
  }
  if (it == models_.end()) {
    return Status::NotFound("no regressor for " + std::string(collective) + " on " +
                            std::to_string(nodes) + " node(s) x " + std::to_string(gpus_per_node) +
                            " GPU(s) for cluster " + cluster_);
  }
  float x[kMaxOperatorFeatures] = {};
  double work = 0;
  CollectiveFeatures(elements, nodes, gpus_per_node, pooled, x, &work);
  return std::exp(it->second.Predict(std::span<const float>(x, kMaxOperatorFeatures))) * work;
}

}  // namespace fmte
