#include "fmte/zero.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace fmte {
namespace {

// DeepSpeed stage3.py, estimate_zero3_model_states_mem_needs(). The float expressions keep
// DeepSpeed's evaluation order so that int() truncates exactly as Python does.
ZeroColdRow Zero3Row(const ZeroColdInput& in, bool offload_optimizer, bool offload_param,
                     bool zero_init) {
  const double p = in.total_params;
  const double lp = in.largest_layer_params;
  const double n = static_cast<double>(in.gpus_per_node);
  const double total_gpus = static_cast<double>(in.nodes * in.gpus_per_node);
  const double gpus_factor = 1.0 / static_cast<double>(in.nodes);
  const double f = in.buffer_factor;
  // The gathered fp16 weight + gradient of the largest layer: 4 bytes per parameter.
  const double largest_layer_memory = 4 * lp;
  double gpu = 0, cpu = 0;
  if (offload_optimizer) {
    if (offload_param) {
      gpu = largest_layer_memory;
      // 18 B/param on the host: fp16 param + grad, fp32 master, Adam states.
      cpu = zero_init ? p * 18 * gpus_factor * f : p * std::max(4 * n, 18 * gpus_factor) * f;
    } else {
      gpu = largest_layer_memory + std::trunc(2 * p / total_gpus);
      cpu = zero_init ? p * 16 * gpus_factor * f : p * std::max(4 * n, 16 * gpus_factor) * f;
    }
  } else {
    gpu = largest_layer_memory + std::trunc(18 * p / total_gpus);
    // Without zero.Init every process loads the whole fp32 model on the host first.
    cpu = zero_init ? lp * 4 * n * f : p * 4 * n * f;
  }
  return {offload_param, offload_optimizer, zero_init, static_cast<int64_t>(gpu),
          static_cast<int64_t>(cpu)};
}

// DeepSpeed stage_1_and_2.py, estimate_zero2_model_states_mem_needs() (code since mid-2024,
// docs/formulas.md §3): 2 B/param fp16 weights replicated, 18 B/param of grads, fp32
// master and Adam states sharded over all GPUs.
ZeroColdRow Zero2Row(const ZeroColdInput& in, bool offload_optimizer) {
  const double p = in.total_params;
  const double n = static_cast<double>(in.gpus_per_node);
  const double total_gpus = static_cast<double>(in.nodes * in.gpus_per_node);
  const double f = in.buffer_factor;
  double gpu = 0, cpu = 0;
  if (offload_optimizer) {
    gpu = 2 * p;
    cpu = p * std::max(4 * total_gpus, 16.0) * f;
  } else {
    gpu = 2 * p + std::trunc(18 * p / total_gpus);
    cpu = p * 4 * n * f;
  }
  return {false, offload_optimizer, false, static_cast<int64_t>(gpu), static_cast<int64_t>(cpu)};
}

}  // namespace

Result<std::vector<ZeroColdRow>> EstimateZeroCold(const ZeroColdInput& in) {
  if (in.stage != 2 && in.stage != 3)
    return Status::InvalidArgument("--stage: expected 2 or 3, got " + std::to_string(in.stage));
  if (!(in.total_params > 0) || !std::isfinite(in.total_params) || in.total_params > 1e15)
    return Status::InvalidArgument("--params: expected a positive parameter count (at most 1e15)");
  if (in.stage == 3 && (!(in.largest_layer_params > 0) || !std::isfinite(in.largest_layer_params)))
    return Status::InvalidArgument(
        "--largest-layer-params: expected a positive parameter count (required for --stage 3)");
  if (in.largest_layer_params > in.total_params)
    return Status::InvalidArgument("--largest-layer-params: must not exceed --params");
  if (in.gpus_per_node <= 0 || in.gpus_per_node > 1024)
    return Status::InvalidArgument("--gpus-per-node: expected an integer in 1..1024");
  if (in.nodes <= 0 || in.nodes > 100000)
    return Status::InvalidArgument("--nodes: expected an integer in 1..100000");
  if (!(in.buffer_factor > 0)) return Status::InvalidArgument("buffer factor must be positive");

  std::vector<ZeroColdRow> rows;
  if (in.stage == 3) {
    // DeepSpeed's loop order: cpu_offload in [True, False], cpu_offload_params in [True, False]
    // (skipped without optimizer offload), zero_init in [True, False].
    for (bool offload_optimizer : {true, false})
      for (bool offload_param : {true, false}) {
        if (!offload_optimizer && offload_param) continue;
        for (bool zero_init : {true, false})
          rows.push_back(Zero3Row(in, offload_optimizer, offload_param, zero_init));
      }
  } else {
    for (bool offload_optimizer : {true, false}) rows.push_back(Zero2Row(in, offload_optimizer));
  }
  return rows;
}

Result<double> ParseParamCount(std::string_view text, std::string_view field) {
  auto bad = [&] {
    return Status::InvalidArgument(std::string(field) +
                                   ": expected a parameter count such as 2851e6, 2.851B or 32M, "
                                   "got '" +
                                   std::string(text.substr(0, 64)) + "'");
  };
  std::string s(text);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  if (s.empty()) return bad();
  // A suffix becomes a decimal exponent, so "2.851B" parses as exactly the double of 2851e6.
  const char* exponent = nullptr;
  switch (std::tolower(static_cast<unsigned char>(s.back()))) {
    case 'k':
      exponent = "e3";
      break;
    case 'm':
      exponent = "e6";
      break;
    case 'b':
    case 'g':
      exponent = "e9";
      break;
    case 't':
      exponent = "e12";
      break;
    default:
      break;
  }
  if (exponent != nullptr) {
    s.pop_back();
    if (s.empty() || s.find_first_of("eE") != std::string::npos) return bad();
    s += exponent;
  }
  double v = 0;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || ptr != last || !std::isfinite(v) || v <= 0) return bad();
  return v;
}

}  // namespace fmte
