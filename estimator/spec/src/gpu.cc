// GpuCatalog: etc/gpus.csv (RFC 4180 CSV with a header row) and lookups by canonical name or alias.
#include "fmte/gpu.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <sstream>

#include "fmte/csv.h"
#include "fmte/file.h"
#include "fmte/text.h"

namespace fmte {
namespace {

// Lower case, and spaces as underscores, so nvidia-smi names ("NVIDIA H100 80GB HBM3") match the
// gres-style aliases Slurm's AutoDetect=nvml derives from them ("nvidia_h100_80gb_hbm3").
std::string Key(std::string_view s) {
  std::string out(s);  // one allocation, then changed in place (not appended per character)
  for (char& c : out) {
    c = c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// Parses a non-negative number; empty means `empty_value`.
bool ParseNumber(const std::string& s, double empty_value, double* out) {
  if (s.empty()) {
    *out = empty_value;
    return true;
  }
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || !std::isfinite(v) || v < 0) return false;
  *out = v;
  return true;
}

}  // namespace

Result<GpuCatalog> GpuCatalog::LoadCsv(const std::string& path) {
  Result<std::string> text = ReadFile(path, "the GPU catalog");
  if (!text.ok()) return text.status();
  return ParseCsv(*text, path);
}

Result<GpuCatalog> GpuCatalog::ParseCsv(std::string_view text, const std::string& path) {
  Result<CsvTable> table = fmte::ParseCsv(text, path);
  if (!table.ok()) return table.status();
  const CsvTable& csv = *table;
  const char* required[] = {"gpu",
                            "hbm_bandwidth_gbps",
                            "peak_dense_bf16_tflops",
                            "peak_dense_fp16_tflops",
                            "gpu_interconnect_bw_gbps_bidir",
                            "aliases"};
  for (const char* name : required) {
    if (csv.Column(name) < 0)
      return FileParseError(path, 1, "missing column '" + std::string(name) + "'");
  }
  if (csv.Column("memory_mib") < 0 && csv.Column("memory_gb") < 0)
    return FileParseError(path, 1, "missing column 'memory_mib' (or 'memory_gb')");

  GpuCatalog catalog;
  for (size_t r = 0; r < csv.rows.size(); ++r) {
    const std::vector<std::string>& rec = csv.rows[r];
    const std::string where = path + ":" + std::to_string(csv.row_lines[r]) + ": column ";
    auto text_of = [&](const char* name) -> std::string {
      const int c = csv.Column(name);
      return c < 0 ? std::string() : rec[static_cast<size_t>(c)];
    };
    Status bad;
    // Every figure is bounded far above any device (found by fuzz_gpu_catalog: a memory size of
    // 3e77 MiB overflowed the conversion to bytes): 16 TiB, 1 PB/s, 1 EFLOPS, 1 MW.
    auto number = [&](const char* name, double empty_value, double max) -> double {
      double v = 0;
      if (bad.ok() && !ParseNumber(text_of(name), empty_value, &v)) {
        bad = Status::ParseError(where + name + ": expected a non-negative number, got '" +
                                 text_of(name) + "'");
      } else if (bad.ok() && v > max) {
        std::ostringstream at_most;
        at_most << std::setprecision(12) << max;
        bad = Status::ParseError(where + name + ": expected at most " + at_most.str() + ", got '" +
                                 text_of(name) + "'");
      }
      return v;
    };
    GpuSpec g;
    g.name = text_of("gpu");
    if (g.name.empty()) return Status::ParseError(where + "gpu: empty GPU name");
    // Device memory as the driver reports it (MiB), else the marketing GB (10^9 bytes).
    double mib = number("memory_mib", -1, 16 * 1048576.0);
    double gb = number("memory_gb", -1, 16 * 1099.511627776);
    if (bad.ok() && mib <= 0 && gb <= 0) {
      bad = Status::ParseError(where + "memory_mib: a positive memory size is required");
    }
    if (!bad.ok()) return bad;  // before any conversion of an out-of-range figure
    g.memory_mib = mib > 0 ? static_cast<int64_t>(mib) : static_cast<int64_t>(gb * 1e9 / 1048576.0);
    g.memory_bytes = mib > 0 ? g.memory_mib * 1048576 : static_cast<int64_t>(gb * 1e9);
    g.hbm_gbps = number("hbm_bandwidth_gbps", 0, 1e6);
    g.peak_bf16_tflops = number("peak_dense_bf16_tflops", 0, 1e6);  // empty: no bf16 (V100)
    g.peak_fp16_tflops = number("peak_dense_fp16_tflops", 0, 1e6);
    g.interconnect_gbps = number("gpu_interconnect_bw_gbps_bidir", 0, 1e6) / 2;  // per direction
    g.tdp_w = number("tdp_w", 0, 1e6);
    // Optional: GPUs joined by NVLink beyond a node (GB200/GB300 NVL72: 72); empty = the node.
    const double domain = number("nvlink_domain", 0, 1 << 20);
    if (bad.ok() && domain != std::floor(domain)) {
      bad = Status::ParseError(where + "nvlink_domain: expected a whole number of GPUs, got '" +
                               text_of("nvlink_domain") + "'");
    }
    g.nvlink_domain = static_cast<int64_t>(domain);
    if (!bad.ok()) return bad;
    if (g.peak_fp16_tflops <= 0 && g.peak_bf16_tflops <= 0) {
      return Status::ParseError(where + "peak_dense_fp16_tflops: a peak is required");
    }
    g.interconnect = text_of("interconnect");
    g.memory_type = text_of("memory_type");
    g.form_factor = text_of("form_factor");
    g.source = text_of("source");
    std::vector<std::string> aliases;
    std::istringstream words(text_of("aliases"));
    for (std::string w; words >> w;) aliases.push_back(w);
    for (const std::string& name : aliases) {
      auto it = catalog.alias_.find(Key(name));
      if (it != catalog.alias_.end()) {
        return Status::ParseError(where + "aliases: '" + name + "' already names " + it->second);
      }
    }
    if (catalog.alias_.count(Key(g.name)) != 0) {
      return Status::ParseError(where + "gpu: '" + g.name + "' is already defined");
    }
    catalog.Add(std::move(g), aliases);
  }
  return catalog;
}

std::string GpuCatalog::DefaultPath() { return EtcDir() + "/gpus.csv"; }

Result<const GpuSpec*> GpuCatalog::Find(std::string_view name) const {
  auto it = alias_.find(Key(name));
  if (it != alias_.end()) return &gpus_.at(it->second);
  std::string msg = "unknown GPU '" + std::string(name) + "'";
  std::vector<std::string> closest = Closest(name);
  if (!closest.empty()) {
    msg += "; closest: ";
    for (size_t i = 0; i < closest.size(); ++i) msg += (i ? ", " : "") + closest[i];
  }
  return Status::NotFound(msg);
}

std::vector<std::string> GpuCatalog::Closest(std::string_view name, size_t n) const {
  // GPU names are short: a longer query is compared by its first 64 characters (bounded cost).
  std::string query = Key(name.substr(0, 64));
  std::map<std::string, size_t> best;  // canonical -> best distance over its names
  for (const auto& [alias, canonical] : alias_) {
    size_t d = EditDistance(query, alias);
    auto it = best.find(canonical);
    if (it == best.end() || d < it->second) best[canonical] = d;
  }
  std::vector<std::pair<size_t, std::string>> ranked;
  for (const auto& [canonical, d] : best) ranked.emplace_back(d, canonical);
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < ranked.size() && i < n; ++i) out.push_back(ranked[i].second);
  return out;
}

std::vector<std::string> GpuCatalog::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, spec] : gpus_) names.push_back(name);
  return names;
}

void GpuCatalog::Add(GpuSpec spec, const std::vector<std::string>& aliases) {
  std::string canonical = spec.name;
  alias_[Key(canonical)] = canonical;
  for (const std::string& a : aliases) alias_[Key(a)] = canonical;
  gpus_.insert_or_assign(canonical, std::move(spec));
}

}  // namespace fmte
