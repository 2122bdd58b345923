// GpuSpec and GpuCatalog: the accelerators fmte knows (etc/gpus.csv: vendor datasheet figures with
// their sources, etc/PROVENANCE-models.md), under the names users type
// ("A100-80GB", "H100-SXM", "H200", "L40S", gres types such as "a100" ...).
// Thread-safety: immutable after construction.
#ifndef FMTE_GPU_H_
#define FMTE_GPU_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/status.h"

namespace fmte {

struct GpuSpec {
  std::string name;  // canonical catalog name, e.g. "A100-SXM4-80GB"
  // GPUs one NVLink domain joins when it spans nodes (GB200/GB300 NVL72: 72, over 4-GPU compute
  // trays); 0: the node is the domain.
  int64_t nvlink_domain = 0;
  int64_t memory_bytes = 0;      // device memory as the driver reports it (nvidia-smi total)
  double peak_bf16_tflops = 0;   // dense; 0 when the GPU has no bf16 (V100)
  double peak_fp16_tflops = 0;   // dense
  double hbm_gbps = 0;           // memory bandwidth, GB/s
  double interconnect_gbps = 0;  // GPU-to-GPU inside a node, GB/s per direction
  std::string interconnect;      // "NVLink 3", "PCIe Gen4 x16", ...
  int64_t memory_mib = 0;        // memory_bytes / 2^20, as nvidia-smi / rocm-smi print it
  std::string memory_type;       // "HBM3", "GDDR6", ...
  std::string form_factor;       // "SXM5", "PCIe", "OAM", ...
  double tdp_w = 0;              // board / module power, W
  std::string source;            // vendor URL of the figures

  double PeakTflops(bool bf16) const {
    return bf16 && peak_bf16_tflops > 0 ? peak_bf16_tflops : peak_fp16_tflops;
  }
};

class GpuCatalog {
 public:
  // Reads a gpus.csv with the columns of etc/gpus.csv (docs/models.md; `aliases`: space-separated
  // names users type). Errors name the line and the column.
  static Result<GpuCatalog> LoadCsv(const std::string& path);
  // The same from the text of such a file; `path` names it in errors.
  static Result<GpuCatalog> ParseCsv(std::string_view text, const std::string& path);
  static std::string DefaultPath();  // FMTE_ETC_DIR/gpus.csv, or $FMTE_ETC_DIR/gpus.csv

  // Canonical name or alias, case-insensitive. NotFound lists the closest names.
  Result<const GpuSpec*> Find(std::string_view name) const;
  std::vector<std::string> Names() const;
  // The `n` canonical names whose name or alias is closest to `name` (edit distance), best first.
  std::vector<std::string> Closest(std::string_view name, size_t n = 3) const;
  size_t size() const { return gpus_.size(); }
  // Adds a GPU; its canonical name is an alias of itself. A name already taken is replaced.
  void Add(GpuSpec spec, const std::vector<std::string>& aliases);

 private:
  std::map<std::string, GpuSpec> gpus_;       // key: canonical name
  std::map<std::string, std::string> alias_;  // lower-case alias -> canonical name
};

}  // namespace fmte

#endif  // FMTE_GPU_H_
