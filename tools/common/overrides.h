// fmte-advise estimate --overrides FILE (and the web page's custom mode): the GPU's and the
// cluster's figures an estimate uses, replaced by the user's. The file is the "figures" object that
// estimate --json prints, edited: {"gpu": {"hbm_gbps": 2600, ...}, "cluster": {"inter_node_gbps":
// 400, ...}}; any subset of the keys; unknown keys and values out of range are errors naming them.
// Thread-safety: pure functions.
#ifndef FMTE_TOOLS_OVERRIDES_H_
#define FMTE_TOOLS_OVERRIDES_H_

#include <nlohmann/json.hpp>
#include <string>

#include "fmte/cluster.h"
#include "fmte/gpu.h"
#include "fmte/status.h"

namespace fmte::tools {

// The figures as estimate --json prints them (and as an overrides file holds them).
nlohmann::json FiguresJson(const GpuSpec& gpu, const ClusterSpec& cluster);

// Checks an overrides document (`origin` names it in errors) and applies it.
Status ApplyOverrides(const nlohmann::json& doc, const std::string& origin, GpuSpec* gpu,
                      ClusterSpec* cluster);

// Reads FILE (bounded to 1 MiB) as JSON.
Result<nlohmann::json> LoadOverridesFile(const std::string& path);

}  // namespace fmte::tools

#endif  // FMTE_TOOLS_OVERRIDES_H_
