// fmte-advise estimate --overrides FILE (and the web page's custom mode): the figures an estimate
// uses, replaced by the user's. The file is the "figures" object that estimate --json prints,
// edited: {"gpu": {"hbm_gbps": 2600, ...}, "cluster": {"inter_node_gbps": 400, ...}, "memory":
// {"optimizer_state": 2, ...}, "time": {"gemm_efficiency": 0.5, "learned_correction": false,
// ...}}; any subset of the sections and keys; unknown keys and values out of range are errors
// naming them. Sections: gpu and cluster (the catalogs' figures), memory (bytes per element,
// TrainingJob::element_bytes), time (the step-time model's constants for this GPU, TimeEfficiency,
// its fixed per-layer times, and whether the learned correction applies).
// Thread-safety: pure functions.
#ifndef FMTE_TOOLS_OVERRIDES_H_
#define FMTE_TOOLS_OVERRIDES_H_

#include <nlohmann/json.hpp>
#include <string>

#include "fmte/cluster.h"
#include "fmte/gpu.h"
#include "fmte/job.h"
#include "fmte/status.h"
#include "fmte/time.h"

namespace fmte::tools {

// The figures as estimate --json prints them (and as an overrides file holds them). `time_model`
// null: no time section (no step-time model); `step`: the estimate's step, whose heaviest stage
// gives the per-layer times shown (null: 0, modelled).
nlohmann::json FiguresJson(const GpuSpec& gpu, const ClusterSpec& cluster, const TrainingJob& job,
                           const TimeModel* time_model, const TimeEstimate* step);

// Checks an overrides document (`origin` names it in errors) and applies it: the gpu section to
// *gpu, cluster to *cluster, memory to job->element_bytes, time to time_model->MutableFor(*gpu)
// (and learned_correction false drops its correction; null time_model: a time section is an error).
// Nothing is changed on an error.
Status ApplyOverrides(const nlohmann::json& doc, const std::string& origin, GpuSpec* gpu,
                      ClusterSpec* cluster, TrainingJob* job, TimeModel* time_model);

// Reads FILE (bounded to 1 MiB) as JSON.
Result<nlohmann::json> LoadOverridesFile(const std::string& path);

}  // namespace fmte::tools

#endif  // FMTE_TOOLS_OVERRIDES_H_
