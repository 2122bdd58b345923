// fmte-advise check SCRIPT: the admission decision for a batch script, offline, made by the same
// parse (ParseJobRequest) and policy (Decide) as job_submit/fmte. The Slurm side of the request
// comes from the script's #SBATCH lines (including --fmte-* SPANK options), overridden by
// sbatch-like flags. Exit codes: 0 accept or rewrite, 3 reject, 2 usage error, 1 failure (catalogs,
// config file).
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "admission.h"
#include "cli.h"
#include "commands.h"
#include "fmte/config.h"
#include "fmte/policy.h"
#include "fmte/record.h"
#include "fmte/request.h"
#include "fmte/script_files.h"
#include "fmte/submission.h"
#include "job_options.h"
#include "output.h"
#include "time_output.h"

namespace fmte::advise {
namespace {

constexpr int kExitRejected = 3;

constexpr std::string_view kSummary =
    "The admission decision job_submit/fmte would make for a batch script: what it reads from the\n"
    "script (#FMTE lines, --fmte-* options in #SBATCH lines, launch lines), the predicted per-GPU\n"
    "memory against the GPU's capacity, the decision (accept, rewrite, reject) with its reasons "
    "and\n"
    "the changes that would make a rejected job fit. Flags override the script's #SBATCH lines.\n"
    "Exit code: 0 accept/rewrite, 3 reject, 2 usage error, 1 failure. Example:\n"
    "  fmte-advise check train.sh --partition gpu --gres gpu:a100:4 --config /etc/slurm/fmte.conf";

int Fail(const Status& s) { return cli::ReportError("fmte-advise", s); }

nlohmann::json DecisionJson(const JobRequest& r, const Decision& d, const std::string& config_path,
                            const Estimator& est) {
  nlohmann::json j;
  j["decision"] = std::string(ToString(d.kind));
  j["touched"] = d.touched;
  j["advise_only"] = d.advise_only;
  j["error"] = d.error;
  j["partition"] = d.partition;
  j["config"] = config_path;
  j["gpu"] = d.gpu;
  j["user_message"] = d.user_message;
  j["reasons"] = d.reasons;
  j["rewrite"] = {{"time_limit_min", d.new_time_limit_min},
                  {"gpus", d.new_gpus},
                  {"tres_field", std::string(ToString(d.gpu_field))},
                  {"tres", d.new_gpu_tres},
                  {"min_nodes", d.new_min_nodes}};
  j["alternatives"] = nlohmann::json::array();
  for (const Alternative& a : d.alternatives)
    j["alternatives"].push_back({{"change", a.change},
                                 {"partition", a.partition},
                                 {"gpu", a.gpu},
                                 {"per_gpu_bytes", a.per_gpu_bytes},
                                 {"usable_bytes", a.usable_bytes},
                                 {"fits", a.fits}});
  nlohmann::json req = {{"is_llm_job", r.is_llm_job},
                        {"launcher", r.launcher},
                        {"model", r.job.model},
                        {"files_read", r.files_read},
                        {"warnings", r.warnings}};
  req["sources"] = nlohmann::json::array();
  for (const FieldSource& s : r.sources)
    req["sources"].push_back({{"key", s.key},
                              {"source", std::string(ToString(s.source))},
                              {"value", s.value},
                              {"origin", s.origin}});
  j["request"] = req;
  j["capacity_bytes"] = d.capacity_bytes;
  j["usable_bytes"] = d.usable_bytes;
  j["time_limit_min"] = d.time_limit_min;
  if (d.estimated) {
    Result<ModelArch> arch = Status::NotFound(d.job.model);
    if (!r.arch_json.empty()) {
      arch = ParseModelConfig(r.arch_json, d.job.model);
    } else if (auto found =
                   est.catalogs().models.Find(d.named_after.empty() ? d.job.model : d.named_after);
               found.ok()) {
      arch = **found;
    }
    auto gpu = est.catalogs().gpus.Find(d.gpu);
    if (arch.ok() && gpu.ok()) j["estimate"] = tools::EstimateJson(*arch, d.job, **gpu, d.estimate);
  }
  if (d.touched) j["record"] = EncodeRecord(MakeRecord(r, d));
  return j;
}

void PrintDecision(std::ostream& os, const JobRequest& r, const Decision& d,
                   const std::string& config_path) {
  os << "decision: " << ToString(d.kind);
  if (!d.touched)
    os << " (untouched: "
       << (r.is_llm_job ? "Mode=off for this partition" : "not an LLM training job") << ")";
  if (d.advise_only) os << " (Mode=advise)";
  if (d.error) os << " (could not estimate)";
  os << "\nconfig:   " << config_path << "\n";
  if (d.touched) {
    os << "partition: " << (d.partition.empty() ? "(none)" : d.partition) << "\n";
    if (d.new_time_limit_min > 0)
      os << "rewrite:  time_limit=" << FormatSlurmTime(d.new_time_limit_min) << "\n";
    if (d.new_gpus > 0)
      os << "rewrite:  " << ToString(d.gpu_field) << "=" << d.new_gpu_tres
         << (d.new_min_nodes > 0 ? " min_nodes=" + std::to_string(d.new_min_nodes) : "") << "\n";
    os << "\nmessage to the user:\n" << d.user_message << "\n";
  }
  if (!d.alternatives.empty()) {
    os << "\nalternatives (each re-estimated):\n";
    tools::TextTable t("lrrl");
    t.AddRow({"change", "per GPU", "usable", "fits"});
    for (const Alternative& a : d.alternatives)
      t.AddRow({a.change, tools::FormatGiB(a.per_gpu_bytes), tools::FormatGiB(a.usable_bytes),
                a.fits ? "yes" : "no"});
    t.Print(os);
  }
  if (r.is_llm_job) {
    os << "\nwhat fmte read (highest precedence wins: spank > fmte-line > launcher > slurm):\n";
    tools::TextTable t("llll");
    t.AddRow({"key", "value", "source", "where"});
    for (const FieldSource& s : r.sources)
      t.AddRow({s.key, s.value, std::string(ToString(s.source)), s.origin});
    t.Print(os);
    if (!r.files_read.empty()) {
      os << "files read:";
      for (const std::string& f : r.files_read) os << " " << f;
      os << "\n";
    }
    if (d.estimated) os << "\nrecord:   " << EncodeRecord(MakeRecord(r, d)) << "\n";
  }
}

}  // namespace

int RunCheck(const std::vector<std::string>& args) {
  namespace po = tools::po;
  po::options_description desc("options");
  desc.add_options()(
      "partition,p", po::value<std::string>(),
      "partition (sbatch -p); default: the script's #SBATCH or the config's default")(
      "gres", po::value<std::string>(), "generic resources as sbatch --gres (gpu:a100:4)")(
      "gpus,G", po::value<std::string>(), "GPUs for the whole job as sbatch --gpus ([type:]N)")(
      "gpus-per-node", po::value<std::string>(), "as sbatch --gpus-per-node ([type:]N)")(
      "gpus-per-task", po::value<std::string>(), "as sbatch --gpus-per-task ([type:]N)")(
      "ntasks,n", po::value<std::string>(), "tasks (with --gpus-per-task)")(
      "nodes,N", po::value<std::string>(), "nodes as sbatch --nodes (N or MIN-MAX)")(
      "ntasks-per-node", po::value<std::string>(), "as sbatch --ntasks-per-node")(
      "job-name,J", po::value<std::string>(), "as sbatch --job-name ($SLURM_JOB_NAME)")(
      "array,a", po::value<std::string>(),
      "as sbatch --array; the script is read as its first task ($SLURM_ARRAY_TASK_ID)")(
      "export", po::value<std::string>(),
      "as sbatch --export=[ALL,]NAME=VALUE,...: variables the script starts with")(
      "chdir,D", po::value<std::string>()->value_name("DIR"),
      "the submission directory (sbatch -D): the script and the files it names are read "
      "relative to it; default: the current directory")(
      "time,t", po::value<std::string>(), "time limit as sbatch --time (M, H:M:S, D-H:M:S, ...)")(
      "config", po::value<std::string>(),
      "fmte.conf to use ('none': all defaults); default: beside $SLURM_CONF, "
      "else /etc/slurm/fmte.conf, else defaults")(
      "fmte", po::value<std::vector<std::string>>(),
      "a SPANK option as KEY=VALUE (repeatable): --fmte model=ID")(
      "regressors", po::value<std::string>()->value_name("DIR"),
      "regressors directory (step-time model, site corrections); default: the config's "
      "RegressorsDir");
  tools::AddCommonOptions(&desc);

  // As sbatch: options, then SCRIPT, then the script's own arguments. fmte-advise's own flags go
  // to the flag parser; sbatch's options (those listed above and any other: --mem, -A,
  // --exclusive, ...) are read as sbatch reads them.
  constexpr std::string_view kOwn[] = {"help", "h", "json", "config", "fmte", "regressors"};
  const auto own = [&](std::string_view name) {
    return std::find(std::begin(kOwn), std::end(kOwn), name) != std::end(kOwn);
  };
  const SbatchCommandLine cl = SplitSbatchCommandLine(
      std::span(args).subspan(std::min<size_t>(1, args.size())), [&](std::string_view name) {
        const auto* opt = own(name) ? desc.find_nothrow(std::string(name), false) : nullptr;
        return opt != nullptr && opt->semantic()->max_tokens() > 0;
      });
  std::vector<std::string> flags{args.empty() ? std::string("check") : args[0]};
  std::vector<std::string> sbatch;
  for (const std::vector<std::string>& o : cl.options) {
    const std::string& a = o.front();
    const std::string name = a.starts_with("--")
                                 ? a.substr(2, a.find('=') - std::min<size_t>(a.find('='), 2))
                                 : a.substr(1, 1);
    std::vector<std::string>& to = own(name) ? flags : sbatch;
    to.insert(to.end(), o.begin(), o.end());
  }
  po::variables_map vm;
  if (Status s = tools::ParseFlags(desc, flags, &vm); !s.ok()) return Fail(s);
  if (vm.count("help")) {
    cli::Out() << tools::HelpText("check SCRIPT", kSummary, desc);
    return cli::kExitOk;
  }
  if (cl.script.empty())
    return Fail(Status::InvalidArgument("SCRIPT: the batch script to check is required"));
  if (vm.count("fmte"))
    for (const std::string& kv : vm["fmte"].as<std::vector<std::string>>()) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos)
        return Fail(Status::InvalidArgument("--fmte: expected KEY=VALUE, got '" + kv + "'"));
      sbatch.push_back("--fmte-" + kv);
    }
  sbatch.push_back("--");
  sbatch.push_back(cl.script);
  sbatch.insert(sbatch.end(), cl.script_args.begin(), cl.script_args.end());

  auto admission =
      LoadAdmission(tools::FlagString(vm, "config"), tools::FlagString(vm, "regressors"));
  if (!admission.ok()) return Fail(admission.status());
  const Config& config = admission->config;
  const std::string& config_path = admission->config_path;
  const Estimator& estimator = *admission->estimator;
  if (!admission->operator_set_problems.empty())
    cli::Err() << "fmte-advise: warning: " << admission->operator_set_problems << "\n";

  // The client side's reading, as the SPANK plugin does it in sbatch: the script's options,
  // arguments and variables, the files it names and the launcher table of the catalog directory.
  char cwd[4096];
  auto submission =
      ReadSubmission(sbatch, getcwd(cwd, sizeof(cwd)) != nullptr ? cwd : ".", &admission->launchers,
                     ProcessEnviron(), &estimator.catalogs().models);
  if (!submission.ok()) return Fail(submission.status());
  for (const std::string& w : submission->warnings)
    cli::Err() << "fmte-advise: warning: " << w << "\n";
  const JobRequest& request = submission->request;
  const Decision d = Decide(request, config, estimator);
  if (tools::FlagSet(vm, "json")) {
    cli::Out() << DecisionJson(request, d, config_path, estimator).dump(2) << "\n";
  } else {
    PrintDecision(cli::Out(), request, d, config_path);
  }
  return d.kind == DecisionKind::kReject ? kExitRejected : cli::kExitOk;
}

}  // namespace fmte::advise
