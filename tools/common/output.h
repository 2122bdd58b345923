// Output helpers of the fmte tools: byte and count formatting, aligned text tables, and the JSON
// and human renderings of one job estimate (shared by `fmte-advise estimate`, `check` and the
// Slurm demo). Results go to stdout only; callers pass the stream.
// Thread-safety: stateless functions.
#ifndef FMTE_TOOLS_OUTPUT_H_
#define FMTE_TOOLS_OUTPUT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "fmte/estimator.h"
#include "fmte/gpu.h"
#include "fmte/job.h"
#include "fmte/memory.h"
#include "fmte/model.h"

namespace fmte::tools {

// bytes / 2**30 with two decimals and the unit: "12.34 GiB".
std::string FormatGiB(int64_t bytes);
// The largest binary unit that keeps the number >= 1: "512 B", "1.50 KiB", ..., "2.00 TiB".
std::string FormatBytes(int64_t bytes);
// Parameter or token counts: "6.74 B", "124.44 M", "12.50 K", "999".
std::string FormatCount(double n);
// The model type as shown: "gemma3_text", or "gemma3: gemma3_text" for a multimodal model.
std::string ModelTypeText(const ModelArch& model);

// Columns separated by two spaces; `align` gives each column's alignment ('l' or 'r'; columns
// beyond it are left-aligned).
class TextTable {
 public:
  explicit TextTable(std::string align = "") : align_(std::move(align)) {}
  void AddRow(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void Print(std::ostream& os) const;

 private:
  std::string align_;
  std::vector<std::vector<std::string>> rows_;
};

// The job as the estimate read it (every field, names as the flags spell their values).
nlohmann::json JobJson(const TrainingJob& job);

// The whole estimate as one JSON document:
//   model{id, model_type, layers, ...}, job{...}, gpu{name, memory_bytes},
//   params{total, trainable, embedding, lm_head, blocks, active, largest_module},
//   memory{per_gpu_bytes, allocator_peak_bytes, allocated_peak_bytes, cuda_context_bytes,
//          gpu_capacity_bytes, fits, bound_bytes, low_bytes, cpu_bytes_per_node, peak_phase,
//          breakdown{weights, gradients, optimizer, activations, logits, other},
//          layers_per_stage[], heaviest_stage,
//          ranks[]{stage, layers, embedding, head, per_gpu_bytes, peak_phase, breakdown},
//          phases[]{name, per_gpu_bytes}},
//   time{...} (AddTimeJson, when the estimate has a time).
nlohmann::json EstimateJson(const ModelArch& model, const TrainingJob& job, const GpuSpec& gpu,
                            const JobEstimate& estimate);

// Human-readable report of the same (GiB with 2 decimals, breakdown, fits yes/no).
void PrintEstimate(std::ostream& os, const ModelArch& model, const TrainingJob& job,
                   const GpuSpec& gpu, const JobEstimate& estimate);

// The time part of the estimate, implemented in output_time.cc: adds doc["time"] / prints the
// time table when estimate.has_time.
void AddTimeJson(nlohmann::json& doc, const TrainingJob& job, const JobEstimate& estimate);
void PrintTime(std::ostream& os, const TrainingJob& job, const JobEstimate& estimate);

}  // namespace fmte::tools

#endif  // FMTE_TOOLS_OUTPUT_H_
