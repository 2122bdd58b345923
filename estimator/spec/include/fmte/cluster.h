// ClusterSpec and ClusterCatalog: the machines a job runs on, as far as time is concerned (GPU
// type, GPUs per node, bandwidths inside and between nodes, PCIe, storage, fixed start-up and
// checkpoint costs). Read from etc/clusters/<name>.json; a job without --cluster gets
// DefaultCluster(gpu).
//
// Units: *_gbps inside a node (intra_node_gbps, pcie_gbps, storage_gbps, host_memory_gbps) are
// GB/s; inter_node_gbps is Gb/s per node (how network cards are sold), as the --inter-node-gbps
// flag. Thread-safety: value types; ClusterCatalog is immutable after loading.
#ifndef FMTE_CLUSTER_H_
#define FMTE_CLUSTER_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/gpu.h"
#include "fmte/job.h"
#include "fmte/status.h"

namespace fmte {

struct ClusterSpec {
  std::string name;  // "dgx-a100", "perlmutter", ...; "default-<gpu>" when derived
  std::string gpu;   // GPU catalog name of its nodes ("" = whatever the job says)
  int64_t gpus_per_node = 8;
  double intra_node_gbps = 0;     // GB/s per GPU per direction (NVLink); 0 = the GPU's interconnect
  double inter_node_gbps = 200;   // Gb/s per node (all NICs of a node together)
  double pcie_gbps = 25;          // GB/s per GPU host<->device (PCIe Gen4 x16 ~ 25 usable)
  double host_memory_gbps = 100;  // GB/s per node for CPU optimizer steps (DeepSpeed CPU Adam)
  double storage_gbps = 2;        // GB/s a job reads/writes its checkpoints at (parallel FS share)
  double startup_s = 300;         // fixed start-up: scheduling, containers, imports, data loader
                                  // (FM Training Estimator seed: 300 s)
  double checkpoint_fixed_s = 60;  // fixed cost per checkpoint write (FM Training Estimator: 60 s)
  std::string source;              // where the numbers come from

  // The bandwidth a job sees: the flag overrides the configured inter-node bandwidth.
  double InterNodeGbps(const TrainingJob& job) const {
    return job.inter_node_gbps > 0 ? job.inter_node_gbps : inter_node_gbps;
  }
  double IntraNodeGbps(const GpuSpec& gpu) const {
    return intra_node_gbps > 0 ? intra_node_gbps : gpu.interconnect_gbps;
  }
};

// Parses one cluster JSON object; errors name the key. Unknown keys are errors (typos).
Result<ClusterSpec> ParseClusterJson(std::string_view json_text, std::string_view origin);

// A cluster for jobs that name none: nodes of `gpu` (8 per node), the defaults above.
ClusterSpec DefaultCluster(const GpuSpec& gpu);

class ClusterCatalog {
 public:
  // Loads every *.json under `dir` (a missing directory is an empty catalog).
  static Result<ClusterCatalog> LoadDir(const std::string& dir);
  static std::string DefaultDir();  // FMTE_ETC_DIR/clusters, or $FMTE_ETC_DIR/clusters

  // Case-insensitive name. NotFound lists the known names.
  Result<const ClusterSpec*> Find(std::string_view name) const;
  std::vector<std::string> Names() const;
  void Add(ClusterSpec spec);

 private:
  std::map<std::string, ClusterSpec> clusters_;  // key: lower-case name
};

// The cluster of `job`: job.cluster from `catalog` when set, else DefaultCluster(gpu).
Result<ClusterSpec> ResolveCluster(const ClusterCatalog& catalog, const TrainingJob& job,
                                   const GpuSpec& gpu);

// The same without the texts (name, gpu, source) of a default cluster, which an estimate does not
// read (their three allocations are a share of each admission decision): `out` gets the numbers.
Status ResolveClusterNumbers(const ClusterCatalog& catalog, const TrainingJob& job,
                             ClusterSpec* out);

}  // namespace fmte

#endif  // FMTE_CLUSTER_H_
