#include "overrides.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "fmte/memory.h"

namespace fmte::tools {
namespace {

// One figure of a section: its key, the range it may take, and where it lives.
template <typename T>
struct Figure {
  const char* key;
  double lo, hi;
  double T::*field;
};

// The ranges are the catalogs' bounds (1 EFLOPS, 1 PB/s) or what is physically meaningful.
const Figure<GpuSpec> kGpu[] = {
    {"peak_bf16_tflops", 0, 1e6, &GpuSpec::peak_bf16_tflops},
    {"peak_fp16_tflops", 0, 1e6, &GpuSpec::peak_fp16_tflops},
    {"hbm_gbps", 1, 1e6, &GpuSpec::hbm_gbps},
    {"interconnect_gbps", 0, 1e6, &GpuSpec::interconnect_gbps},
};
const Figure<ClusterSpec> kCluster[] = {
    {"intra_node_gbps", 0, 1e6, &ClusterSpec::intra_node_gbps},
    {"inter_node_gbps", 1e-3, 1e6, &ClusterSpec::inter_node_gbps},
    {"pcie_gbps", 1e-3, 1e6, &ClusterSpec::pcie_gbps},
    {"host_memory_gbps", 1e-3, 1e6, &ClusterSpec::host_memory_gbps},
    {"storage_gbps", 1e-3, 1e6, &ClusterSpec::storage_gbps},
    {"startup_s", 0, 1e7, &ClusterSpec::startup_s},
    {"checkpoint_fixed_s", 0, 1e7, &ClusterSpec::checkpoint_fixed_s},
};
// Bytes per element: 0 (not kept) to 16 (fp64 Adam with a fp64 master would be 8 per element).
const Figure<ElementBytes> kMemory[] = {
    {"param", 0, 16, &ElementBytes::param},
    {"grad", 0, 16, &ElementBytes::grad},
    {"master", 0, 16, &ElementBytes::master},
    {"optimizer_state", 0, 16, &ElementBytes::optimizer_state},
    {"activation", 0, 16, &ElementBytes::activation},
    {"frozen_weight", 0, 16, &ElementBytes::frozen_weight},
};
// The step-time model's constants (time.h TimeEfficiency); efficiencies are fractions of peak.
const Figure<TimeEfficiency> kTime[] = {
    {"gemm_efficiency", 1e-3, 1, &TimeEfficiency::gemm_efficiency},
    {"memory_traffic", 0, 1e3, &TimeEfficiency::memory_traffic},
    {"layer_overhead_s", 0, 10, &TimeEfficiency::layer_overhead_s},
    {"comm_efficiency", 1e-3, 1, &TimeEfficiency::comm_efficiency},
    {"comm_latency_s", 0, 10, &TimeEfficiency::comm_latency_s},
    {"step_overhead_s", 0, 1e4, &TimeEfficiency::step_overhead_s},
    {"layer_fwd_s", 0, 1e4, &TimeEfficiency::layer_fwd_s},
    {"layer_bwd_s", 0, 1e4, &TimeEfficiency::layer_bwd_s},
};
constexpr double kMaxMemoryBytes = 16.0 * (1LL << 40);  // 16 TiB, as gpus.csv

std::string Shortest(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

Result<double> Number(const nlohmann::json& v, const std::string& name, double lo, double hi) {
  if (!v.is_number() || !(v.get<double>() >= lo && v.get<double>() <= hi))
    return Status::InvalidArgument(name + ": expected a number in [" + Shortest(lo) + ", " +
                                   Shortest(hi) + "], got " + v.dump());
  return v.get<double>();
}

template <typename T, size_t N>
void Put(nlohmann::json* out, const T& from, const Figure<T> (&figures)[N]) {
  for (const Figure<T>& f : figures) (*out)[f.key] = from.*(f.field);
}

// Sets `key` of `section` in *to when it is one of `figures`; false when it is not.
template <typename T, size_t N>
Result<bool> Set(const std::string& key, const nlohmann::json& v, const std::string& name,
                 const Figure<T> (&figures)[N], T* to) {
  for (const Figure<T>& f : figures) {
    if (key != f.key) continue;
    auto n = Number(v, name, f.lo, f.hi);
    if (!n.ok()) return n.status();
    to->*(f.field) = *n;
    return true;
  }
  return false;
}

template <typename T, size_t N>
std::string Keys(std::string keys, const Figure<T> (&figures)[N]) {
  for (const Figure<T>& f : figures) keys += (keys.empty() ? "" : ", ") + std::string(f.key);
  return keys;
}

}  // namespace

nlohmann::json FiguresJson(const GpuSpec& gpu, const ClusterSpec& cluster, const TrainingJob& job,
                           const TimeModel* time_model, const TimeEstimate* step) {
  nlohmann::json g = {{"memory_bytes", gpu.memory_bytes}};
  Put(&g, gpu, kGpu);
  nlohmann::json c = {{"gpus_per_node", cluster.gpus_per_node}};
  Put(&c, cluster, kCluster);
  nlohmann::json m = nlohmann::json::object();
  Put(&m, ElementBytesUsed(job), kMemory);
  nlohmann::json doc = {{"gpu", g}, {"cluster", c}, {"memory", m}};
  if (time_model != nullptr) {
    TimeEfficiency eff = time_model->For(gpu);
    // The per-layer times the estimate used: its heaviest stage's, per layer (unless fixed).
    if (step != nullptr && !step->stages.empty()) {
      const StageTime* heaviest = &step->stages.front();
      for (const StageTime& st : step->stages)
        if (st.Total() > heaviest->Total()) heaviest = &st;
      const double layers = static_cast<double>(std::max<int64_t>(1, heaviest->layers));
      if (eff.layer_fwd_s <= 0) eff.layer_fwd_s = heaviest->fwd_s / layers;
      if (eff.layer_bwd_s <= 0) eff.layer_bwd_s = heaviest->bwd_s / layers;
    }
    nlohmann::json t = nlohmann::json::object();
    Put(&t, eff, kTime);
    t["learned_correction"] = time_model->correction() != nullptr;
    doc["time"] = t;
  }
  return doc;
}

Status ApplyOverrides(const nlohmann::json& doc, const std::string& origin, GpuSpec* gpu,
                      ClusterSpec* cluster, TrainingJob* job, TimeModel* time_model) {
  if (!doc.is_object())
    return Status::InvalidArgument(origin +
                                   ": expected an object {\"gpu\": {...}, \"cluster\": {...}, "
                                   "\"memory\": {...}, \"time\": {...}}, got " +
                                   std::string(doc.type_name()));
  // Applied to copies, which replace the originals only when the whole document is good.
  GpuSpec g = *gpu;
  ClusterSpec c = *cluster;
  ElementBytes bytes = job->element_bytes;
  TimeEfficiency eff = time_model != nullptr ? time_model->For(*gpu) : TimeEfficiency{};
  bool drop_correction = false;
  for (const auto& [section, values] : doc.items()) {
    if (section != "gpu" && section != "cluster" && section != "memory" && section != "time")
      return Status::InvalidArgument(origin + ": " + section +
                                     ": unknown section (expected gpu, cluster, memory or time)");
    if (!values.is_object())
      return Status::InvalidArgument(origin + ": " + section + ": expected an object");
    for (const auto& [key, v] : values.items()) {
      const std::string name = origin + ": " + section + "." + key;
      Result<bool> known = false;
      std::string keys;
      if (section == "gpu") {
        if (key == "memory_bytes") {
          auto n = Number(v, name, 1 << 20, kMaxMemoryBytes);
          if (!n.ok()) return n.status();
          g.memory_bytes = static_cast<int64_t>(*n);
          g.memory_mib = g.memory_bytes >> 20;
          continue;
        }
        known = Set(key, v, name, kGpu, &g);
        keys = Keys("memory_bytes", kGpu);
      } else if (section == "cluster") {
        if (key == "gpus_per_node") {
          auto n = Number(v, name, 1, 1024);
          if (!n.ok()) return n.status();
          c.gpus_per_node = static_cast<int64_t>(*n);
          continue;
        }
        known = Set(key, v, name, kCluster, &c);
        keys = Keys("gpus_per_node", kCluster);
      } else if (section == "memory") {
        known = Set(key, v, name, kMemory, &bytes);
        keys = Keys("", kMemory);
      } else {
        if (time_model == nullptr)
          return Status::InvalidArgument(origin + ": time: no step-time model is loaded");
        if (key == "learned_correction") {
          if (!v.is_boolean())
            return Status::InvalidArgument(name + ": expected true or false, got " + v.dump());
          drop_correction = !v.get<bool>();
          continue;
        }
        known = Set(key, v, name, kTime, &eff);
        keys = Keys("learned_correction", kTime);
      }
      if (!known.ok()) return known.status();
      if (!*known)
        return Status::InvalidArgument(name + ": unknown figure (expected one of " + keys + ")");
    }
  }
  if (g.peak_bf16_tflops <= 0 && g.peak_fp16_tflops <= 0)
    return Status::InvalidArgument(origin +
                                   ": gpu: peak_bf16_tflops and peak_fp16_tflops are both 0");
  *gpu = g;
  *cluster = c;
  job->element_bytes = bytes;
  if (const auto t = doc.find("time"); t != doc.end() && !t->empty() && time_model != nullptr)
    time_model->MutableFor(*gpu) = eff;
  if (drop_correction && time_model != nullptr) {
    time_model->SetCorrection(nullptr);
    time_model->SetMeasuredGroups(false);  // the measured groups' medians are learned too
  }
  return Status::Ok();
}

Result<nlohmann::json> LoadOverridesFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument("--overrides: cannot read " + path);
  std::string text;
  text.resize(1 << 20);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.peek() != std::char_traits<char>::eof())
    return Status::InvalidArgument("--overrides: " + path + ": larger than 1 MiB");
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return Status::InvalidArgument("--overrides: " + path + ": not valid JSON");
  return doc;
}

}  // namespace fmte::tools
