// DeepSpeed's "cold" ZeRO model-state estimators, reproduced to the printed digit:
//   deepspeed.runtime.zero.stage3.estimate_zero3_model_states_mem_needs_all_cold
//   deepspeed.runtime.zero.stage_1_and_2.estimate_zero2_model_states_mem_needs_all_cold
// They count model states only (weights, gradients, optimizer states; no activations, no
// framework buffers) from a parameter count, so they need no model. fmte's own memory model
// (memory.h) is the complete estimate; these tables are what DeepSpeed users compare against.
// Source of the formulas: docs/formulas.md §3 and DeepSpeed's code.
// Thread-safety: pure functions.
#ifndef FMTE_ZERO_H_
#define FMTE_ZERO_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "fmte/status.h"

namespace fmte {

struct ZeroColdInput {
  int stage = 3;                    // 2 or 3
  double total_params = 0;          // DeepSpeed takes floats (2851e6)
  double largest_layer_params = 0;  // stage 3 only
  int64_t gpus_per_node = 1;
  int64_t nodes = 1;
  double buffer_factor = 1.5;  // DeepSpeed's additional_buffer_factor default
};

// One row of DeepSpeed's table. Bytes are DeepSpeed's int() of its float formula.
struct ZeroColdRow {
  bool offload_param = false;  // stage 2: always false
  bool offload_optimizer = false;
  bool zero_init = false;  // stage 2: not applicable (false)
  int64_t gpu_bytes = 0;   // per GPU
  int64_t cpu_bytes = 0;   // per node (DeepSpeed's "per CPU")
};

// Rows in DeepSpeed's print order: stage 3 gives 6 rows (offload optimizer cpu/none x offload
// param cpu/none (param offload only with optimizer offload) x zero_init 1/0); stage 2 gives
// 2 rows (offload optimizer cpu, none). Errors name the flag (--stage, --params, ...).
Result<std::vector<ZeroColdRow>> EstimateZeroCold(const ZeroColdInput& in);

// Parses a parameter count as people write it: "2851e6", "2851000000", "2.851B", "32M",
// "7b", "1.5T", "340k". `field` names the flag in errors.
Result<double> ParseParamCount(std::string_view text, std::string_view field);

}  // namespace fmte

#endif  // FMTE_ZERO_H_
