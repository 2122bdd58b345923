// fmte-advise zero: DeepSpeed's cold ZeRO-2/3 model-state estimator table, printed as
// DeepSpeed prints it (deepspeed/runtime/zero/stage3.py, stage_1_and_2.py: *_all_cold).
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "commands.h"
#include "fmte/zero.h"
#include "job_options.h"

namespace fmte::advise {
namespace {

constexpr std::string_view kSummary =
    "DeepSpeed's cold estimator of ZeRO-2/3 model-state memory (weights, gradients, optimizer\n"
    "states; no activations) per GPU and per node, for each offload option. Same numbers and\n"
    "format as deepspeed's estimate_zero{2,3}_model_states_mem_needs_all_cold; GB means 2**30\n"
    "bytes. For the full per-GPU estimate of a job use `fmte-advise estimate`.";

std::string Gb(int64_t bytes, int width) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%*.2fGB", width, static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

void PrintTable(const ZeroColdInput& in, const std::vector<ZeroColdRow>& rows) {
  cli::Out() << "Estimated memory needed for params, optim states and gradients for a:\n"
             << "HW: Setup with " << in.nodes << (in.nodes > 1 ? " nodes" : " node") << ", "
             << in.gpus_per_node << (in.gpus_per_node > 1 ? " GPUs" : " GPU") << " per node.\n"
             << "SW: Model with " << static_cast<int64_t>(in.total_params / 1e6)
             << "M total params";
  if (in.stage == 3)
    cli::Out() << ", " << static_cast<int64_t>(in.largest_layer_params / 1e6)
               << "M largest layer params";
  cli::Out() << ".\n  per CPU  |  per GPU |   Options\n";
  for (const auto& r : rows) {
    // DeepSpeed pads "cpu" to 4 characters so that the columns line up with "none".
    std::string options;
    if (in.stage == 3)
      options += std::string("offload_param=") + (r.offload_param ? "cpu " : "none") + ", ";
    options += std::string("offload_optimizer=") + (r.offload_optimizer ? "cpu " : "none");
    if (in.stage == 3) options += std::string(", zero_init=") + (r.zero_init ? "1" : "0");
    cli::Out() << " " << Gb(r.cpu_bytes, 7) << " | " << Gb(r.gpu_bytes, 6) << " | " << options
               << "\n";
  }
}

nlohmann::json RowsJson(const ZeroColdInput& in, const std::vector<ZeroColdRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json row;
    row["offload_param"] = r.offload_param ? "cpu" : "none";
    row["offload_optimizer"] = r.offload_optimizer ? "cpu" : "none";
    if (in.stage == 3)
      row["zero_init"] = r.zero_init ? 1 : 0;
    else
      row["zero_init"] = nullptr;  // ZeRO-2 has no zero.Init
    row["gpu_bytes"] = r.gpu_bytes;
    row["cpu_bytes"] = r.cpu_bytes;
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

int RunZero(const std::vector<std::string>& args) {
  namespace po = tools::po;
  po::options_description desc("options");
  desc.add_options()("stage", po::value<std::string>()->default_value("3"), "ZeRO stage: 2 or 3")(
      "params", po::value<std::string>()->value_name("P"),
      "total parameters (2851e6, 2.851B, 32M; required)")(
      "largest-layer-params", po::value<std::string>()->value_name("L"),
      "parameters of the largest layer (required for stage 3)")(
      "gpus-per-node", po::value<std::string>()->default_value("1"), "GPUs per node")(
      "nodes", po::value<std::string>()->default_value("1"), "nodes");
  tools::AddCommonOptions(&desc);

  po::variables_map vm;
  if (Status s = tools::ParseFlags(desc, args, &vm); !s.ok())
    return cli::ReportError("fmte-advise", s);
  if (vm.count("help")) {
    cli::Out() << tools::HelpText("zero", kSummary, desc);
    return cli::kExitOk;
  }
  ZeroColdInput in;
  auto stage = tools::ParseInt(vm["stage"].as<std::string>(), "--stage", 2, 3);
  if (!stage.ok()) return cli::ReportError("fmte-advise", stage.status());
  in.stage = static_cast<int>(*stage);
  if (!vm.count("params"))
    return cli::ReportError("fmte-advise",
                            Status::InvalidArgument("--params: required (e.g. 2851e6)"));
  auto params = ParseParamCount(vm["params"].as<std::string>(), "--params");
  if (!params.ok()) return cli::ReportError("fmte-advise", params.status());
  in.total_params = *params;
  if (vm.count("largest-layer-params")) {
    auto lp =
        ParseParamCount(vm["largest-layer-params"].as<std::string>(), "--largest-layer-params");
    if (!lp.ok()) return cli::ReportError("fmte-advise", lp.status());
    in.largest_layer_params = *lp;
  }
  auto n = tools::ParseInt(vm["gpus-per-node"].as<std::string>(), "--gpus-per-node", 1, 1024);
  if (!n.ok()) return cli::ReportError("fmte-advise", n.status());
  auto nodes = tools::ParseInt(vm["nodes"].as<std::string>(), "--nodes", 1, 100000);
  if (!nodes.ok()) return cli::ReportError("fmte-advise", nodes.status());
  in.gpus_per_node = *n;
  in.nodes = *nodes;

  auto rows = EstimateZeroCold(in);
  if (!rows.ok()) return cli::ReportError("fmte-advise", rows.status());
  if (tools::FlagSet(vm, "json")) {
    cli::Out() << RowsJson(in, *rows).dump(2) << "\n";
  } else {
    PrintTable(in, *rows);
  }
  return cli::kExitOk;
}

}  // namespace fmte::advise
