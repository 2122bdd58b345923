// fmte-advise models: the model catalog (etc/models) and the GPU catalog (etc/gpus.csv).
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "commands.h"
#include "fmte/estimator.h"
#include "job_options.h"
#include "output.h"

namespace fmte::advise {

int RunModels(const std::vector<std::string>& args) {
  namespace po = tools::po;
  po::options_description desc("options");
  tools::AddCommonOptions(&desc);
  po::variables_map vm;
  if (Status s = tools::ParseFlags(desc, args, &vm); !s.ok())
    return cli::ReportError("fmte-advise", s);
  if (vm.count("help")) {
    cli::Out() << tools::HelpText("models",
                                  "Lists the catalog's model ids (with their parameter "
                                  "counts) and GPU names, for --model and --gpu.",
                                  desc);
    return cli::kExitOk;
  }
  auto catalogs = LoadCatalogs();
  if (!catalogs.ok())
    return cli::ReportError(
        "fmte-advise", Status::IoError("cannot load the catalogs: " + catalogs.status().message()));

  nlohmann::json models = nlohmann::json::array();
  tools::TextTable mt("llrrrr");
  mt.AddRow({"model", "type", "params", "layers", "hidden", "vocab"});
  for (const std::string& id : catalogs->models.Ids()) {
    auto arch = catalogs->models.Find(id);
    if (!arch.ok()) continue;
    const ModelArch& a = **arch;
    const ParamCounts c = a.Counts();
    models.push_back({{"id", a.id},
                      {"model_type", a.model_type},
                      {"params", c.total},
                      {"active_params", c.active},
                      {"layers", a.num_layers},
                      {"hidden_size", a.hidden_size},
                      {"vocab_size", a.vocab_size}});
    if (!a.multimodal_type.empty()) {
      models.back()["multimodal_type"] = a.multimodal_type;
      models.back()["vision_params"] = c.vision;
    }
    mt.AddRow({a.id, tools::ModelTypeText(a), tools::FormatCount(static_cast<double>(c.total)),
               std::to_string(a.num_layers), std::to_string(a.hidden_size),
               std::to_string(a.vocab_size)});
  }
  nlohmann::json gpus = nlohmann::json::array();
  tools::TextTable gt("lrrrl");
  gt.AddRow({"gpu", "memory", "bf16 TFLOPS", "HBM GB/s", "interconnect"});
  for (const std::string& name : catalogs->gpus.Names()) {
    auto g = catalogs->gpus.Find(name);
    if (!g.ok()) continue;
    const GpuSpec& s = **g;
    gpus.push_back({{"name", s.name},
                    {"memory_bytes", s.memory_bytes},
                    {"peak_bf16_tflops", s.peak_bf16_tflops},
                    {"peak_fp16_tflops", s.peak_fp16_tflops},
                    {"hbm_gbps", s.hbm_gbps},
                    {"interconnect", s.interconnect}});
    char tflops[32], hbm[32];
    std::snprintf(tflops, sizeof tflops, "%.0f", s.PeakTflops(true));
    std::snprintf(hbm, sizeof hbm, "%.0f", s.hbm_gbps);
    gt.AddRow({s.name, tools::FormatGiB(s.memory_bytes), tflops, hbm, s.interconnect});
  }
  if (tools::FlagSet(vm, "json")) {
    cli::Out() << nlohmann::json{{"models", models}, {"gpus", gpus}}.dump(2) << "\n";
  } else {
    mt.Print(cli::Out());
    cli::Out() << "\n";
    gt.Print(cli::Out());
  }
  return cli::kExitOk;
}

}  // namespace fmte::advise
