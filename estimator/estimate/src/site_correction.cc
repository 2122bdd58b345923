// Site corrections (site_correction.h): features, loading from a regressors directory, guards.
#include "fmte/site_correction.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fmte/file.h"

namespace fmte {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

float Log2OrNaN(double v) { return v > 0 ? static_cast<float>(std::log2(v)) : kNaN; }
float Code(int v) { return static_cast<float>(v); }

// A number as record.cc prints it ("%.6g") and DecodeRecord reads it back.
double AsPrinted(double v) {
  // Integers (step counts, epochs, rounded wall times), the common case, skip the printf/strtod
  // round trip (~3k instructions in job_submit): "%.6g" keeps 6 significant digits, rounding an
  // exact tie to even, and an integer below 2^53 is exact in a double. Checked equal to the
  // printf/strtod form on 12M integers, ties included.
  if (v >= 0 && v < 9007199254740992.0 && v == std::floor(v)) {
    const auto n = static_cast<uint64_t>(v);
    uint64_t unit = 1;  // the value of the 6th significant digit
    while (n / unit >= 1000000) unit *= 10;
    const uint64_t rest = n % unit, kept = n - rest;
    const bool up = 2 * rest > unit || (2 * rest == unit && (kept / unit) % 2 == 1);
    return static_cast<double>(up ? kept + unit : kept);
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return std::strtod(buf, nullptr);
}

using Json = nlohmann::json;

// "a vs b" at the first difference of two feature lists, for the mismatch error.
std::string FirstDifference(const std::vector<std::string>& got,
                            const std::vector<std::string>& want) {
  const size_t n = std::min(got.size(), want.size());
  for (size_t i = 0; i < n; ++i) {
    if (got[i] != want[i]) {
      return "feature #" + std::to_string(i) + " is '" + got[i] + "', expected '" + want[i] + "'";
    }
  }
  return std::to_string(got.size()) + " features listed, " + std::to_string(want.size()) +
         " expected";
}

double NumberOr(const Json& obj, const char* key, double fallback) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_number()) return fallback;
  return obj[key].get<double>();
}

// One manifest entry -> a loaded model. `manifest` is the path shown in errors.
Result<SiteCorrectionModel> LoadEntry(const std::string& dir, const std::string& manifest,
                                      const Json& top, const Json& entry, const std::string& key) {
  const std::string where = manifest + ": " + key;
  if (!entry.contains("model") || !entry["model"].is_string() ||
      entry["model"].get<std::string>().empty())
    return Status::ParseError(where + ": \"model\" (the model file name) is missing");
  // The features it was trained on: the entry's own list, else the retrain section's.
  const Json* features = nullptr;
  if (entry.contains("features")) {
    features = &entry["features"];
  } else if (top.contains("retrain") && top["retrain"].is_object() &&
             top["retrain"].contains("features")) {
    features = &top["retrain"]["features"];
  }
  if (features == nullptr || !features->is_array())
    return Status::ParseError(where +
                              ": no \"features\" list; cannot check the model matches this fmte");
  std::vector<std::string> names;
  for (const Json& f : *features) {
    if (!f.is_string())
      return Status::ParseError(where + ": \"features\" must be a list of strings");
    names.push_back(f.get<std::string>());
  }
  if (names != SiteFeatureNames()) {
    return Status::InvalidArgument(where + ": the model's feature list differs from this fmte's (" +
                                   FirstDifference(names, SiteFeatureNames()) +
                                   "); retrain it with this version (fmte-retrain train --into " +
                                   dir + ") or remove it from the manifest");
  }
  SiteCorrectionModel m;
  m.key = key;
  m.path = dir + "/" + entry["model"].get<std::string>();
  Result<TreeModel> model = TreeModel::LoadFile(m.path);
  if (!model.ok()) return model.status().WithContext(where);
  if (model->num_features() > static_cast<int64_t>(kSiteFeatureCount))
    return Status::InvalidArgument(
        m.path + ": the model uses " + std::to_string(model->num_features()) +
        " features; the site features are " + std::to_string(kSiteFeatureCount));
  m.model = std::move(model).value();
  m.rows = static_cast<int64_t>(NumberOr(entry, "rows", 0));
  m.groups = static_cast<int64_t>(NumberOr(entry, "groups", 0));
  m.cv_mean_abs_rel_error = NumberOr(entry, "cv_mean_abs_rel_error", -1);
  if (entry.contains("data") && entry["data"].is_object()) {
    const Json& d = entry["data"];
    if (d.contains("first_end") && d["first_end"].is_string())
      m.first_end = d["first_end"].get<std::string>();
    if (d.contains("last_end") && d["last_end"].is_string())
      m.last_end = d["last_end"].get<std::string>();
  }
  if (entry.contains("log_residual_quantiles")) {
    const Json& q = entry["log_residual_quantiles"];
    const double p50 = NumberOr(q, "p50", std::nan("")), p90 = NumberOr(q, "p90", std::nan("")),
                 p95 = NumberOr(q, "p95", std::nan(""));
    if (std::isfinite(p50) && std::isfinite(p90) && std::isfinite(p95)) {
      m.has_quantiles = true;
      m.log_residual_p50 = p50;
      m.log_residual_p90 = p90;
      m.log_residual_p95 = p95;
    }
  }
  return m;
}

}  // namespace

const std::vector<std::string>& SiteFeatureNames() {
  static const std::vector<std::string> kNames = {
      "log2_gpus",
      "gpus_per_node",
      "log2_nodes",
      "tp",
      "pp",
      "log2_dp",
      "log2_micro_batch",
      "log2_seq_len",
      "log2_grad_accum",
      "method",
      "precision",
      "optimizer",
      "framework",
      "sharding",
      "activation_checkpointing",
      "offload_optimizer",
      "offload_params",
      "lora_r",
      "quant",
      "log2_tokens",
      "log2_steps",
      "epochs",
      "log2_pred_time_s",
      "log2_pred_mem_bytes",
      "log2_cap_bytes",
      "pred_mem_over_cap",
  };
  return kNames;
}

double RecordedTimeS(double wall_time_s) {
  return wall_time_s > 0 ? AsPrinted(std::round(std::min(wall_time_s, kMaxRecordedTimeS))) : 0;
}

SiteFeatureRow SiteFeatures(const TrainingJob& j, double pred_time_s, int64_t pred_mem_bytes,
                            int64_t cap_bytes) {
  const int64_t gpn = j.EffectiveGpusPerNode();
  const int64_t nodes = j.Nodes();
  const int64_t model_parallel = std::max<int64_t>(1, j.ModelParallel());
  const double time_s = RecordedTimeS(pred_time_s);
  return SiteFeatureRow{
      Log2OrNaN(static_cast<double>(j.gpus)),
      static_cast<float>(gpn),
      Log2OrNaN(static_cast<double>(nodes)),
      static_cast<float>(j.tp),
      static_cast<float>(j.pp),
      Log2OrNaN(static_cast<double>(j.gpus / model_parallel)),
      // Sequences through the model per micro-batch: a pairwise objective's two per sample.
      Log2OrNaN(static_cast<double>(j.micro_batch) * static_cast<double>(j.SequencesPerSample())),
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
      j.epochs > 0 ? static_cast<float>(AsPrinted(j.epochs)) : kNaN,
      Log2OrNaN(time_s),
      Log2OrNaN(static_cast<double>(pred_mem_bytes)),
      Log2OrNaN(static_cast<double>(cap_bytes)),
      pred_mem_bytes > 0 && cap_bytes > 0
          ? static_cast<float>(static_cast<double>(pred_mem_bytes) / static_cast<double>(cap_bytes))
          : kNaN,
  };
}

Result<SiteCorrections> SiteCorrections::LoadDir(const std::string& dir) {
  SiteCorrections out;
  out.dir = dir;
  if (dir.empty()) return out;
  const std::string manifest = dir + "/manifest.json";
  std::error_code ec;
  if (!std::filesystem::exists(manifest, ec)) return out;
  Result<std::string> text = ReadFile(manifest, "the regressors manifest");
  if (!text.ok()) return text.status();
  try {
    const Json top = Json::parse(*text, nullptr, false);
    if (top.is_discarded() || !top.is_object())
      return Status::ParseError(manifest + ": not a JSON object");
    if (!top.contains("regressors")) return out;
    if (!top["regressors"].is_array())
      return Status::ParseError(manifest + ": \"regressors\" must be a list");
    for (const Json& entry : top["regressors"]) {
      if (!entry.is_object() || !entry.contains("key") || !entry["key"].is_string()) continue;
      const std::string key = entry["key"].get<std::string>();
      std::optional<SiteCorrectionModel>* slot = key == kSiteTimeKey     ? &out.time
                                                 : key == kSiteMemoryKey ? &out.memory
                                                                         : nullptr;
      if (slot == nullptr) continue;  // another kind of model sharing the directory
      Result<SiteCorrectionModel> m = LoadEntry(dir, manifest, top, entry, key);
      if (!m.ok()) return m.status();
      *slot = std::move(m).value();
    }
  } catch (const std::exception& e) {
    return Status::ParseError(manifest + ": " + e.what());
  }
  return out;
}

AppliedCorrection MemoryCorrection(const SiteCorrectionModel& model, const SiteFeatureRow& row) {
  AppliedCorrection a;
  const double f = model.PredictLogRatio(row);
  if (!std::isfinite(f)) return a;
  a.applied = true;
  a.model_factor = std::exp(f);
  if (a.model_factor >= 1) {
    a.factor = std::min(a.model_factor, kMaxMemoryRaise);
  } else {
    // Lower only as far as the model's own held-out p95 error still supports, and at most by
    // 1 - kMinMemoryFactor: an over-optimistic model must not admit jobs that run out of memory.
    const double supported =
        model.has_quantiles ? std::exp(f + std::max(0.0, model.log_residual_p95)) : a.model_factor;
    a.factor = std::clamp(supported, kMinMemoryFactor, 1.0);
  }
  a.clamped = a.factor != a.model_factor;
  return a;
}

AppliedCorrection TimeCorrection(const SiteCorrectionModel& model, const SiteFeatureRow& row) {
  AppliedCorrection a;
  const double f = model.PredictLogRatio(row);
  if (!std::isfinite(f)) return a;
  a.applied = true;
  a.model_factor = std::exp(f);
  a.factor = std::clamp(a.model_factor, kMinTimeFactor, kMaxTimeFactor);
  a.clamped = a.factor != a.model_factor;
  return a;
}

double TimeBoundFactor(const SiteCorrectionModel& model) {
  return model.has_quantiles ? std::exp(std::max(0.0, model.log_residual_p95)) : 0;
}

}  // namespace fmte
