// fmte-advise fit: what fits on a GPU type, with the same estimator and bound as `estimate` and the
// policy: the largest micro-batch or sequence, the fewest GPUs (and the layouts that work there),
// or the catalog models that fit (fmte/fit.h).
#include <iostream>

#include "cli.h"
#include "commands.h"
#include "fmte/estimator.h"
#include "fmte/fit.h"
#include "job_options.h"
#include "output.h"

namespace fmte::advise {
namespace {

constexpr std::string_view kSummary =
    "Answers what fits on a GPU type for one job, with the estimator and its bound:\n"
    "  --solve micro-batch  the largest micro-batch that fits\n"
    "  --solve seq-len      the longest sequence that fits\n"
    "  --solve gpus         the fewest GPUs that fit, and the layouts that do there\n"
    "  --solve model        the catalog models that fit\n"
    "'Fits' is the prediction within the usable memory (the GPU x --usable-fraction, as the\n"
    "Slurm plugin judges); 'safe' is the bound (the highest measured / predicted of published\n"
    "runs) within it. Example:\n"
    "  fmte-advise fit --solve micro-batch --model meta-llama/Llama-3.1-8B --method lora \\\n"
    "      --seq-len 4096 --gpu H100-SXM";

int Fail(const Status& s) { return cli::ReportError("fmte-advise", s); }

std::string Value(FitTarget t, const TrainingJob& j) {
  switch (t) {
    case FitTarget::kMicroBatch:
      return std::to_string(j.micro_batch);
    case FitTarget::kSeqLen:
      return std::to_string(j.seq_len);
    case FitTarget::kGpus:
      return std::to_string(j.gpus);
    case FitTarget::kModel:
      return j.model;
  }
  return "";
}

std::string LayoutText(const TrainingJob& j) {
  std::string s = std::to_string(j.gpus) + " GPUs: tp " + std::to_string(j.tp) + " pp " +
                  std::to_string(j.pp) + " dp " + std::to_string(j.DataParallel());
  if (j.ep > 1) s += " ep " + std::to_string(j.ep);
  return s + ", " + std::string(ToString(j.sharding));
}

nlohmann::json PointJson(const FitPoint& p) {
  return {{"model", p.job.model},
          {"params", p.params},
          {"micro_batch", p.job.micro_batch},
          {"seq_len", p.job.seq_len},
          {"gpus", p.job.gpus},
          {"tp", p.job.tp},
          {"pp", p.job.pp},
          {"ep", p.job.ep},
          {"sharding", ToString(p.job.sharding)},
          {"per_gpu_bytes", p.per_gpu_bytes},
          {"bound_bytes", p.bound_bytes},
          {"fits", p.fits},
          {"fits_at_bound", p.fits_at_bound}};
}

nlohmann::json AnswerJson(const FitAnswer& a, const TrainingJob& job, const GpuSpec& gpu) {
  nlohmann::json j;
  j["solve"] = ToString(a.target);
  j["gpu"] = {{"name", gpu.name}, {"memory_bytes", gpu.memory_bytes}};
  j["usable_bytes"] = a.usable_bytes;
  j["job"] = tools::JobJson(job);
  if (a.target == FitTarget::kModel) {
    j["models"] = nlohmann::json::array();
    for (const FitPoint& p : a.models) j["models"].push_back(PointJson(p));
  } else {
    // The best value that fits as predicted and at the bound (null when none does), and the first
    // value that does not fit as predicted.
    auto value = [&](int64_t v, const FitPoint& p) {
      return v > 0 ? nlohmann::json{{"value", v}, {"estimate", PointJson(p)}} : nlohmann::json();
    };
    j["predicted"] = value(a.predicted, a.predicted_point);
    j["safe"] = value(a.at_bound, a.bound_point);
    j["next"] = value(a.next, a.next_point);
    if (a.target == FitTarget::kGpus) {
      j["layouts"] = nlohmann::json::array();
      for (const FitPoint& p : a.layouts) j["layouts"].push_back(PointJson(p));
    }
  }
  j["evaluated"] = a.evaluated;
  return j;
}

void PrintAnswer(std::ostream& os, const FitAnswer& a, const ModelArch& model, const GpuSpec& gpu) {
  const std::string usable = tools::FormatGiB(a.usable_bytes);
  os << "fit: " << ToString(a.target)
     << (a.target == FitTarget::kModel ? std::string() : " for " + model.id) << " on " << gpu.name
     << " (" << usable << " usable per GPU)\n";
  if (a.target == FitTarget::kModel) {
    tools::TextTable t("llrr");
    t.AddRow({"  model", "fits", "per GPU", "bound"});
    for (const FitPoint& p : a.models)
      t.AddRow({"  " + p.job.model, p.fits ? (p.fits_at_bound ? "safe" : "yes") : "no",
                tools::FormatGiB(p.per_gpu_bytes), tools::FormatGiB(p.bound_bytes)});
    t.Print(os);
    return;
  }
  const std::string what(ToString(a.target));
  if (a.predicted == 0) {
    os << "  nothing tried fits as predicted";
    if (a.next_point.per_gpu_bytes > 0)
      os << " (" << what << " " << Value(a.target, a.next_point.job) << " needs "
         << tools::FormatGiB(a.next_point.per_gpu_bytes) << " per GPU)";
    os << "\n";
    return;
  }
  const std::string verb = a.target == FitTarget::kGpus ? "fewest " : "largest ";
  os << "  " << verb << what << " that fits as predicted: " << a.predicted << " ("
     << tools::FormatGiB(a.predicted_point.per_gpu_bytes) << " per GPU)\n";
  if (a.next > 0)
    os << "  " << what << " " << a.next << " needs " << tools::FormatGiB(a.next_point.per_gpu_bytes)
       << " per GPU\n";
  if (a.at_bound > 0)
    os << "  " << verb << what << " that fits even at the bound: " << a.at_bound << " (bound "
       << tools::FormatGiB(a.bound_point.bound_bytes) << ")\n";
  else
    os << "  none fits at the bound (the highest measured / predicted of published runs)\n";
  if (a.target == FitTarget::kGpus && !a.layouts.empty()) {
    os << "  layouts that fit on " << a.predicted << " GPUs:\n";
    for (const FitPoint& p : a.layouts)
      os << "    " << LayoutText(p.job) << ": " << tools::FormatGiB(p.per_gpu_bytes)
         << " per GPU\n";
  }
}

}  // namespace

int RunFit(const std::vector<std::string>& args) {
  namespace po = tools::po;
  po::options_description desc("options");
  desc.add_options()("solve", po::value<std::string>()->value_name("WHAT"),
                     "micro-batch|seq-len|gpus|model (required)")(
      "usable-fraction", po::value<double>()->default_value(0.90),
      "share of the GPU's memory a job may use (fmte.conf UsableMemoryFraction)")(
      "max-gpus", po::value<int64_t>()->default_value(4096), "--solve gpus: largest count tried");
  tools::AddJobOptions(&desc);
  tools::AddCommonOptions(&desc);
  po::variables_map vm;
  if (Status s = tools::ParseFlags(desc, args, &vm); !s.ok()) return Fail(s);
  if (vm.count("help")) {
    cli::Out() << tools::HelpText("fit", kSummary, desc);
    return cli::kExitOk;
  }
  if (!vm.count("solve"))
    return Fail(Status::InvalidArgument("--solve: required (micro-batch|seq-len|gpus|model)"));
  auto target = ParseFitTarget(vm["solve"].as<std::string>());
  if (!target.ok()) return Fail(target.status());
  auto catalogs = LoadCatalogs();
  if (!catalogs.ok())
    return Fail(Status::IoError("cannot load the catalogs: " + catalogs.status().message()));
  if (*target == FitTarget::kModel && !vm.count("model")) {
    // --solve model tries every catalog model: --model is not needed (the first one stands in).
    std::vector<std::string> with = args;
    const std::vector<std::string> ids = catalogs->models.Ids();
    if (ids.empty()) return Fail(Status::IoError("the model catalog is empty"));
    with.insert(with.end(), {"--model", ids.front()});
    vm = po::variables_map();
    if (Status s = tools::ParseFlags(desc, with, &vm); !s.ok()) return Fail(s);
  }
  auto job = tools::JobFromFlags(vm);
  if (!job.ok()) return Fail(job.status());
  auto model = ResolveModel(catalogs->models, job->model);
  if (!model.ok()) return Fail(model.status());
  auto gpu = catalogs->gpus.Find(job->gpu);
  if (!gpu.ok()) return Fail(gpu.status().WithContext("--gpu"));

  FitRequest r;
  r.job = *job;
  r.job.gpu = (*gpu)->name;
  r.target = *target;
  r.usable_fraction = vm["usable-fraction"].as<double>();
  r.max_gpus = vm["max-gpus"].as<int64_t>();
  auto answer = SolveFit(*model, **gpu, r, &catalogs->models);
  if (!answer.ok()) return Fail(answer.status());
  if (tools::FlagSet(vm, "json"))
    cli::Out() << AnswerJson(*answer, r.job, **gpu).dump(2) << "\n";
  else
    PrintAnswer(cli::Out(), *answer, *model, **gpu);
  return cli::kExitOk;
}

}  // namespace fmte::advise
