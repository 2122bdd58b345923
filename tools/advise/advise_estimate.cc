// fmte-advise estimate: per-GPU memory (and time) of one training job.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "cli.h"
#include "commands.h"
#include "fmte/estimator.h"
#include "fmte/file.h"
#include "fmte/operator_time.h"
#include "fmte/text.h"
#include "fmte/timeline.h"
#include "html_report.h"
#include "job_options.h"
#include "output.h"
#include "overrides.h"
#include "time_output.h"
#include "token_options.h"

namespace fmte::advise {
namespace {

constexpr std::string_view kSummary =
    "Predicts the peak memory of one LLM training job on its busiest GPU (weights, gradients,\n"
    "optimizer state, activations, logits, framework overhead), whether it fits the GPU, and the\n"
    "host memory CPU offload needs. Example:\n"
    "  fmte-advise estimate --model meta-llama/Llama-3.1-8B --method lora --gpus 1 \\\n"
    "      --micro-batch 4 --seq-len 4096 --gpu H100-SXM\n"
    "With --contract (a TE2 dataset contract, fmte-advise tokens --write-contract) the wall time "
    "is\n"
    "over that dataset: --samples (default: the contract's) x --epochs, each micro-batch padded "
    "to\n"
    "its longest sample (or --packing: rows of --seq-len).";

int Fail(const Status& s) { return cli::ReportError("fmte-advise", s); }

// The seed's figure for its own target_config (the Distributed Training Estimator's
// mml_3d_prediction.py): the operator regressors of the config's cluster, composed as the seed
// composes them (ComposeBatchTime). The cluster is --cluster, else the one whose GPU the config
// names (NVIDIAA100-SXM4-80GB: Perlmutter, NVIDIAGH200120GB: Vista).
struct DteFigure {
  std::string path, cluster;
  double batch_us = 0;
};

// A cluster's operator regressors: the shipped sets (Perlmutter, Vista; the name
// case-insensitive), or one a site sampled (scripts/fmte-sample) and trained with `fmte-retrain
// train --kind operators SAMPLES --cluster NAME --into DIR`: DIR/NAME/manifest.json, DIR being
// --regressors or the installed regressors directory. Empty name: none.
struct RegressorSet {
  std::string name, dir;
};

RegressorSet FindRegressorSet(std::string_view cluster, const std::string& regressors_flag) {
  const std::string dir = OperatorModels::FindDir(cluster, regressors_flag);
  if (dir.empty()) return {};
  return {std::filesystem::path(dir).filename().string(), dir};
}

// Each cluster's operator regressors, read once per command (the --dte-config figure and the
// job's own operator step time may both need the same set).
class RegressorSets {
 public:
  const Result<OperatorModels>& Of(const RegressorSet& set) {
    auto it = sets_.find(set.dir);
    if (it == sets_.end()) it = sets_.emplace(set.dir, OperatorModels::Load(set.dir)).first;
    return it->second;
  }

 private:
  std::map<std::string, Result<OperatorModels>> sets_;
};

Result<DteFigure> DteConfigFigure(const std::string& path, const std::string& cluster_flag,
                                  const std::string& regressors_flag, RegressorSets& regressors) {
  auto text = ReadFile(path, "the DTE target_config");
  if (!text.ok()) return Status(text.status()).WithContext("--dte-config");
  auto config = ParsePipelineConfig(*text);
  if (!config.ok()) return Status(config.status()).WithContext("--dte-config " + path);
  std::string cluster = Lower(cluster_flag);
  if (cluster.empty()) {
    const std::string gpu = Lower(config->gpu_name);
    if (gpu.find("a100") != std::string::npos) cluster = "perlmutter";
    if (gpu.find("gh200") != std::string::npos) cluster = "vista";
  }
  const std::string named = cluster_flag.empty() ? cluster : cluster_flag;
  const RegressorSet set = FindRegressorSet(named, regressors_flag);
  if (set.name.empty())
    return Status::InvalidArgument(
        "--dte-config: no operator regressors for " +
        (named.empty() ? "GPU '" + config->gpu_name + "'" : "cluster '" + cluster_flag + "'") +
        "; expected --cluster perlmutter|vista or a cluster whose regressors fmte-retrain "
        "trained (--regressors DIR holding NAME/manifest.json)");
  const Result<OperatorModels>& models = regressors.Of(set);
  if (!models.ok()) return Status(models.status()).WithContext("--dte-config: " + set.name);
  auto composed = ComposeBatchTime(*config, *models);
  if (!composed.ok()) return Status(composed.status()).WithContext("--dte-config " + path);
  return DteFigure{path, set.name, composed->batch_us};
}

}  // namespace

int RunEstimate(const std::vector<std::string>& args) {
  namespace po = tools::po;
  po::options_description desc("options");
  tools::AddJobOptions(&desc);
  tools::AddWorkOptions(&desc);
  po::options_description dataset("dataset (wall time over a TE2 contract)");
  dataset.add_options()("contract", po::value<std::string>()->value_name("IN"),
                        "TE2 contract of the training data")(
      "packing", po::bool_switch(), "with --contract: samples packed into rows of --seq-len");
  desc.add_options()("report", po::value<std::string>()->value_name("FILE.html"),
                     "also write a self-contained HTML report (memory bar, step timeline, "
                     "assumptions and their sources) to attach to a ticket")(
      "dte-config", po::value<std::string>()->value_name("FILE.yml"),
      "also print the Distributed Training Estimator's figure (microseconds per batch) for its "
      "target_config FILE, from the operator regressors of --cluster (perlmutter|vista, or a "
      "cluster whose sampled regressors --regressors DIR holds; default: the cluster of the GPU "
      "the file names)")(
      "overrides", po::value<std::string>()->value_name("FILE.json"),
      "replace figures the estimate uses: the \"figures\" object of --json, edited (sections "
      "gpu, cluster, memory: bytes per element, time: the step-time model's constants; e.g. "
      "{\"gpu\": {\"hbm_gbps\": 2600}, \"time\": {\"gemm_efficiency\": 0.5}})");
  tools::AddTokenCountingOptions(&dataset);
  desc.add(dataset);
  tools::AddCommonOptions(&desc);
  po::variables_map vm;
  if (Status s = tools::ParseFlags(desc, args, &vm); !s.ok()) return Fail(s);
  if (vm.count("help")) {
    cli::Out() << tools::HelpText("estimate", kSummary, desc);
    return cli::kExitOk;
  }
  auto job = tools::JobFromFlags(vm);
  if (!job.ok()) return Fail(job.status());

  // The catalogs are part of the installation: failing to load them is not a usage error.
  auto catalogs = LoadCatalogs();
  if (!catalogs.ok())
    return Fail(Status::IoError("cannot load the catalogs: " + catalogs.status().message()));
  const tools::WorkOutputs work = tools::WorkOutputsFromFlags(vm);
  if (Status s = tools::ApplyRegressorsDir(work.regressors_dir, &catalogs.value()); !s.ok())
    return Fail(s);
  auto model = ResolveModel(catalogs->models, job->model);
  if (!model.ok()) return Fail(model.status());
  auto found_gpu = catalogs->gpus.Find(job->gpu);
  if (!found_gpu.ok()) return Fail(found_gpu.status().WithContext("--gpu"));
  // The figures the estimate uses (the GPU's, the cluster's), replaced by --overrides when given;
  // an unknown --cluster is reported by Estimate as before.
  GpuSpec gpu_used = **found_gpu;
  const GpuSpec* gpu = &gpu_used;
  auto cluster = ResolveCluster(catalogs->clusters, *job, gpu_used);
  if (const std::string path = tools::FlagString(vm, "overrides"); !path.empty()) {
    if (!cluster.ok()) return Fail(cluster.status().WithContext("--cluster"));
    auto doc = tools::LoadOverridesFile(path);
    if (!doc.ok()) return Fail(doc.status());
    ClusterSpec spec = *cluster;
    if (Status s =
            tools::ApplyOverrides(*doc, "--overrides " + path, &gpu_used, &spec, &job.value(),
                                  catalogs->has_time_model ? &catalogs->time_model : nullptr);
        !s.ok())
      return Fail(s);
    spec.name = job->cluster.empty() ? "overrides" : job->cluster;
    job->cluster = spec.name;
    catalogs->clusters.Add(spec);
  }

  Result<JobEstimate> estimate = Status::Internal("unset");
  if (const std::string contract = tools::FlagString(vm, "contract"); !contract.empty()) {
    auto counting = tools::TokenCountingFromFlags(vm);
    if (!counting.ok()) return Fail(counting.status());
    auto loaded = LoadContractFile(contract);
    if (!loaded.ok()) return Fail(loaded.status().WithContext("--contract"));
    DatasetTokens data{std::move(loaded).value(), counting->text_template, counting->counter,
                       tools::FlagSet(vm, "packing")};
    estimate = Estimate(*catalogs, *model, *job, *gpu, data);
  } else if (tools::FlagSet(vm, "packing")) {
    return Fail(Status::InvalidArgument("--packing: needs --contract (the dataset to pack)"));
  } else {
    estimate = Estimate(*catalogs, *model, *job, *gpu);
  }
  if (!estimate.ok()) return Fail(estimate.status());
  // With --cluster perlmutter|vista, the step time the seed's composition gives this job from that
  // cluster's shipped operator regressors (EstimateStepTimeFromOperators), beside fmte's own.
  std::optional<double> operator_step_s;
  std::string operator_note;
  RegressorSets regressors;
  const RegressorSet found_set = FindRegressorSet(job->cluster, work.regressors_dir);
  const std::string& regressor_set = found_set.name;
  if (!regressor_set.empty()) {
    const Result<OperatorModels>& models = regressors.Of(found_set);
    auto composed = models.ok() ? EstimateStepTimeFromOperators(*model, *job, *models)
                                : Result<OperatorTimeEstimate>(models.status());
    if (composed.ok())
      operator_step_s = composed->batch_us * 1e-6;
    else
      operator_note = composed.status().message();
  }
  std::optional<DteFigure> dte;
  if (const std::string path = tools::FlagString(vm, "dte-config"); !path.empty()) {
    auto figure = DteConfigFigure(path, job->cluster, work.regressors_dir, regressors);
    if (!figure.ok()) return Fail(figure.status());
    dte = *figure;
  }
  // The operator regressors' figures beside fmte's step time (each one optimizer step).
  const auto print_operator_figures = [&](std::ostream& out) {
    if (operator_step_s)
      out << "step time from " << regressor_set << "'s operator regressors (the seed's "
          << "composition): " << *operator_step_s << " s\n";
    else if (!regressor_set.empty())
      out << "step time from " << regressor_set << "'s operator regressors: not available ("
          << operator_note << ")\n";
    if (!dte) return;
    out << "seed's operator composition (" << dte->path << ", " << dte->cluster
        << " regressors): " << static_cast<int64_t>(dte->batch_us + 0.5) << " us per batch";
    if (estimate->has_step_time)
      out << "; fmte: " << static_cast<int64_t>(estimate->time.step.step_time_s * 1e6 + 0.5)
          << " us per step";
    out << "\n";
  };

  // Time: tools::WorkOutputsFromFlags(vm) gives --timeline / --regressors; the timeline SVG is
  // written here. The "time" JSON object and table come from output_time.cc (AddTimeJson /
  // PrintTime), called by EstimateJson / PrintEstimate.
  if (Status s = tools::WriteTimeline(work.timeline_svg, *model, *estimate); !s.ok())
    return Fail(s);
  // The figures the estimate read, as --overrides takes them (cluster.intra_node_gbps 0: the GPU's
  // interconnect_gbps; gpus_per_node as the job has it).
  nlohmann::json figures;
  if (ClusterSpec numbers;
      cluster.ok() && ResolveClusterNumbers(catalogs->clusters, *job, &numbers).ok())
    figures = tools::FiguresJson(*gpu, numbers, *job,
                                 catalogs->has_time_model ? &catalogs->time_model : nullptr,
                                 estimate->has_step_time ? &estimate->time.step : nullptr);
  // The --json document, built once for --json and --report.
  const std::string report = tools::FlagString(vm, "report");
  nlohmann::json doc;
  if (!report.empty() || tools::FlagSet(vm, "json")) {
    doc = tools::EstimateJson(*model, *job, *gpu, *estimate);
    tools::AddCorrectionJson(doc, *job, *estimate, catalogs->corrections);  // site corrections
    if (!figures.is_null()) doc["figures"] = figures;
    if (dte) {
      doc["dte"] = {{"config", dte->path}, {"cluster", dte->cluster}, {"batch_us", dte->batch_us}};
    }
    if (!regressor_set.empty()) {
      nlohmann::json& o = doc["operator_time"];
      o["cluster"] = regressor_set;
      if (operator_step_s)
        o["step_time_s"] = *operator_step_s;
      else
        o["error"] = operator_note;
    }
  }
  if (!report.empty()) {
    std::ostringstream text;
    tools::PrintEstimate(text, *model, *job, *gpu, *estimate);
    tools::PrintCorrection(text, *estimate, catalogs->corrections);
    std::string command = "fmte-advise";
    for (const std::string& a : args) command += " " + a;
    const std::string svg =
        estimate->has_step_time ? StepTimelineSvg(estimate->time.step, model->id) : "";
    std::ofstream out(report, std::ios::trunc);
    out << tools::EstimateReportHtml(doc, text.str(), svg, command);
    out.flush();
    if (!out) return Fail(Status::IoError("--report: cannot write " + report));
  }
  if (tools::FlagSet(vm, "json")) {
    cli::Out() << doc.dump(2) << "\n";
  } else {
    tools::PrintEstimate(cli::Out(), *model, *job, *gpu, *estimate);
    tools::PrintCorrection(cli::Out(), *estimate, catalogs->corrections);
    print_operator_figures(cli::Out());
  }
  return cli::kExitOk;
}

}  // namespace fmte::advise
