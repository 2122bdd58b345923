#include "overrides.h"

#include <fstream>
#include <iterator>

namespace fmte::tools {
namespace {

struct Figure {
  const char* key;
  double lo, hi;
  double GpuSpec::*gpu = nullptr;
  double ClusterSpec::*cluster = nullptr;
};

// The figures, with the ranges they may take (the GPU catalog's bounds: 1 EFLOPS, 1 PB/s).
const Figure kGpu[] = {
    {"peak_bf16_tflops", 0, 1e6, &GpuSpec::peak_bf16_tflops},
    {"peak_fp16_tflops", 0, 1e6, &GpuSpec::peak_fp16_tflops},
    {"hbm_gbps", 1, 1e6, &GpuSpec::hbm_gbps},
    {"interconnect_gbps", 0, 1e6, &GpuSpec::interconnect_gbps},
};
const Figure kCluster[] = {
    {"intra_node_gbps", 0, 1e6, nullptr, &ClusterSpec::intra_node_gbps},
    {"inter_node_gbps", 1e-3, 1e6, nullptr, &ClusterSpec::inter_node_gbps},
    {"pcie_gbps", 1e-3, 1e6, nullptr, &ClusterSpec::pcie_gbps},
    {"host_memory_gbps", 1e-3, 1e6, nullptr, &ClusterSpec::host_memory_gbps},
    {"storage_gbps", 1e-3, 1e6, nullptr, &ClusterSpec::storage_gbps},
    {"startup_s", 0, 1e7, nullptr, &ClusterSpec::startup_s},
    {"checkpoint_fixed_s", 0, 1e7, nullptr, &ClusterSpec::checkpoint_fixed_s},
};
constexpr double kMaxMemoryBytes = 16.0 * (1LL << 40);  // 16 TiB, as gpus.csv

Result<double> Number(const nlohmann::json& v, const std::string& name, double lo, double hi) {
  if (!v.is_number() || !(v.get<double>() >= lo && v.get<double>() <= hi))
    return Status::InvalidArgument(name + ": expected a number in [" + nlohmann::json(lo).dump() +
                                   ", " + nlohmann::json(hi).dump() + "], got " + v.dump());
  return v.get<double>();
}

}  // namespace

nlohmann::json FiguresJson(const GpuSpec& gpu, const ClusterSpec& cluster) {
  nlohmann::json g = {{"memory_bytes", gpu.memory_bytes}};
  for (const Figure& f : kGpu) g[f.key] = gpu.*f.gpu;
  nlohmann::json c = {{"gpus_per_node", cluster.gpus_per_node}};
  for (const Figure& f : kCluster) c[f.key] = cluster.*f.cluster;
  return {{"gpu", g}, {"cluster", c}};
}

Status ApplyOverrides(const nlohmann::json& doc, const std::string& origin, GpuSpec* gpu,
                      ClusterSpec* cluster) {
  if (!doc.is_object())
    return Status::InvalidArgument(origin +
                                   ": expected an object {\"gpu\": {...}, \"cluster\": "
                                   "{...}}, got " +
                                   std::string(doc.type_name()));
  for (const auto& [section, values] : doc.items()) {
    const bool is_gpu = section == "gpu";
    if (!is_gpu && section != "cluster")
      return Status::InvalidArgument(origin + ": " + section +
                                     ": unknown section (expected gpu or cluster)");
    if (!values.is_object())
      return Status::InvalidArgument(origin + ": " + section + ": expected an object");
    for (const auto& [key, v] : values.items()) {
      const std::string name = origin + ": " + section + "." + key;
      if (is_gpu && key == "memory_bytes") {
        auto n = Number(v, name, 1 << 20, kMaxMemoryBytes);
        if (!n.ok()) return n.status();
        gpu->memory_bytes = static_cast<int64_t>(*n);
        gpu->memory_mib = gpu->memory_bytes >> 20;
        continue;
      }
      if (!is_gpu && key == "gpus_per_node") {
        auto n = Number(v, name, 1, 1024);
        if (!n.ok()) return n.status();
        cluster->gpus_per_node = static_cast<int64_t>(*n);
        continue;
      }
      bool known = false;
      for (const Figure& f :
           is_gpu ? std::span<const Figure>(kGpu) : std::span<const Figure>(kCluster)) {
        if (key != f.key) continue;
        auto n = Number(v, name, f.lo, f.hi);
        if (!n.ok()) return n.status();
        if (is_gpu)
          gpu->*f.gpu = *n;
        else
          cluster->*f.cluster = *n;
        known = true;
      }
      if (!known) {
        std::string keys = is_gpu ? "memory_bytes" : "gpus_per_node";
        for (const Figure& f :
             is_gpu ? std::span<const Figure>(kGpu) : std::span<const Figure>(kCluster))
          keys += std::string(", ") + f.key;
        return Status::InvalidArgument(name + ": unknown figure (expected one of " + keys + ")");
      }
    }
  }
  if (gpu->peak_bf16_tflops <= 0 && gpu->peak_fp16_tflops <= 0)
    return Status::InvalidArgument(origin +
                                   ": gpu: peak_bf16_tflops and peak_fp16_tflops are both 0");
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
