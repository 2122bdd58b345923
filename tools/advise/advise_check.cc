// fmte-advise check SCRIPT: the admission decision for a batch script, offline, made by the same
// parse (ParseJobRequest) and policy (Decide) as job_submit/fmte. The Slurm side of the request
// comes from the script's #SBATCH lines (including --fmte-* SPANK options), overridden by
// sbatch-like flags. Exit codes: 0 accept or rewrite, 3 reject, 2 usage error, 1 failure (catalogs,
// config file).
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "commands.h"
#include "fmte/config.h"
#include "fmte/policy.h"
#include "fmte/record.h"
#include "fmte/request.h"
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

// "gpu:a100:2,nvme:1" (sbatch --gres) -> "gres:gpu:a100:2,gres:nvme:1" (job_desc tres_per_node).
std::string GresToTres(std::string_view gres) {
  std::string out;
  while (!gres.empty()) {
    const size_t comma = gres.find(',');
    std::string_view item = gres.substr(0, comma);
    gres = comma == std::string_view::npos ? std::string_view() : gres.substr(comma + 1);
    if (item.empty()) continue;
    if (!out.empty()) out += ',';
    out += item.starts_with("gres:") ? std::string(item) : "gres:" + std::string(item);
  }
  return out;
}
// "4" or "a100:4" (sbatch --gpus/--gpus-per-node/--gpus-per-task) -> "gres:gpu:[a100:]4".
std::string GpusToTres(std::string_view v) { return "gres:gpu:" + std::string(v); }

// The Slurm options fmte looks at, from #SBATCH lines or the command line.
struct SlurmOptions {
  std::string partition, gres, gpus, gpus_per_node, gpus_per_task, time, nodes, ntasks;
  std::vector<std::pair<std::string, std::string>> spank;  // --fmte-KEY=VALUE
};

// One option (long name without dashes, or a short letter) into `o`. Unknown options are ignored.
void SetOption(std::string_view name, const std::string& value, SlurmOptions* o) {
  if (name == "p" || name == "partition")
    o->partition = value;
  else if (name == "gres")
    o->gres = value;
  else if (name == "G" || name == "gpus")
    o->gpus = value;
  else if (name == "gpus-per-node")
    o->gpus_per_node = value;
  else if (name == "gpus-per-task")
    o->gpus_per_task = value;
  else if (name == "t" || name == "time")
    o->time = value;
  else if (name == "N" || name == "nodes")
    o->nodes = value;
  else if (name == "n" || name == "ntasks")
    o->ntasks = value;
  else if (name.starts_with("fmte-"))
    o->spank.emplace_back(std::string(name.substr(5)), value);
}

// #SBATCH lines up to the first command, as sbatch reads them.
void ReadSbatchLines(std::string_view script, SlurmOptions* o) {
  std::istringstream in{std::string(script.substr(0, kMaxScriptBytes))};
  std::string line;
  while (std::getline(in, line)) {
    std::string_view l = line;
    while (!l.empty() && (l.front() == ' ' || l.front() == '\t')) l.remove_prefix(1);
    if (l.empty() || l.starts_with("#!")) continue;
    if (l.front() != '#') break;  // sbatch stops at the first command
    if (!l.starts_with("#SBATCH")) continue;
    std::istringstream words{std::string(l.substr(7))};
    std::vector<std::string> w;
    for (std::string t; words >> t && t.front() != '#';) w.push_back(t);
    for (size_t i = 0; i < w.size(); ++i) {
      const std::string& t = w[i];
      if (t.starts_with("--")) {
        const size_t eq = t.find('=');
        if (eq != std::string::npos)
          SetOption(std::string_view(t).substr(2, eq - 2), t.substr(eq + 1), o);
        else if (i + 1 < w.size())
          SetOption(std::string_view(t).substr(2), w[++i], o);
      } else if (t.size() >= 2 && t[0] == '-') {
        if (t.size() > 2)
          SetOption(std::string_view(t).substr(1, 1), t.substr(2), o);
        else if (i + 1 < w.size())
          SetOption(std::string_view(t).substr(1, 1), w[++i], o);
      }
    }
  }
}

Result<SlurmFacts> FactsFrom(const SlurmOptions& o) {
  SlurmFacts f;
  f.partition = o.partition;
  if (!o.gres.empty()) f.tres_per_node = GresToTres(o.gres);
  if (!o.gpus_per_node.empty()) f.tres_per_node = GpusToTres(o.gpus_per_node);
  if (!o.gpus.empty()) f.tres_per_job = GpusToTres(o.gpus);
  if (!o.gpus_per_task.empty()) f.tres_per_task = GpusToTres(o.gpus_per_task);
  if (!o.time.empty()) {
    auto t = ParseSlurmTimeMinutes(o.time, "--time");
    if (!t.ok()) return t.status();
    f.time_limit_min = *t;
  }
  if (!o.nodes.empty()) {  // "2" or "2-4": the minimum
    auto n = tools::ParseInt(o.nodes.substr(0, o.nodes.find('-')), "--nodes", 1, 1 << 20);
    if (!n.ok()) return n.status();
    f.min_nodes = *n;
  }
  if (!o.ntasks.empty()) {
    auto n = tools::ParseInt(o.ntasks, "--ntasks", 1, 1 << 24);
    if (!n.ok()) return n.status();
    f.num_tasks = *n;
  }
  return f;
}

// --config, else fmte.conf beside $SLURM_CONF, else /etc/slurm/fmte.conf, else defaults ("none").
Result<Config> LoadPolicyConfig(const std::string& flag, std::string* used) {
  std::string path = flag;
  if (path.empty()) {
    const char* slurm_conf = std::getenv("SLURM_CONF");
    for (const std::string& p : {slurm_conf ? FindConfigPath(slurm_conf) : std::string(),
                                 std::string("/etc/slurm/fmte.conf")}) {
      if (!p.empty() && std::ifstream(p).good()) {
        path = p;
        break;
      }
    }
  }
  if (path.empty() || path == "none") {
    *used = "(none: defaults)";
    return Config{};
  }
  *used = path;
  return LoadConfigFile(path);
}

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
  nlohmann::json req = {
      {"is_llm_job", r.is_llm_job}, {"launcher", r.launcher}, {"warnings", r.warnings}};
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
    } else if (auto found = est.catalogs().models.Find(d.job.model); found.ok()) {
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

  // SCRIPT is the one positional argument; the rest go to the flag parser.
  std::vector<std::string> flags{args.empty() ? std::string("check") : args[0]};
  std::string script_path;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() > 1 && a[0] == '-') {
      flags.push_back(a);
      const std::string name = a.substr(a.starts_with("--") ? 2 : 1);
      const auto* opt = desc.find_nothrow(name, false);
      if (a.find('=') == std::string::npos && opt != nullptr && opt->semantic()->max_tokens() > 0 &&
          i + 1 < args.size())
        flags.push_back(args[++i]);
    } else if (script_path.empty()) {
      script_path = a;
    } else {
      return Fail(Status::InvalidArgument("one SCRIPT expected, got '" + script_path + "' and '" +
                                          a + "'"));
    }
  }
  po::variables_map vm;
  if (Status s = tools::ParseFlags(desc, flags, &vm); !s.ok()) return Fail(s);
  if (vm.count("help")) {
    std::cout << tools::HelpText("check SCRIPT", kSummary, desc);
    return cli::kExitOk;
  }
  if (script_path.empty())
    return Fail(Status::InvalidArgument("SCRIPT: the batch script to check is required"));
  std::ifstream in(script_path, std::ios::binary);
  if (!in) return Fail(Status::InvalidArgument("SCRIPT: cannot open '" + script_path + "'"));
  std::string script(kMaxScriptBytes + 1, '\0');
  in.read(script.data(), static_cast<std::streamsize>(script.size()));
  script.resize(static_cast<size_t>(in.gcount()));

  SlurmOptions opts;
  ReadSbatchLines(script, &opts);
  for (const char* name :
       {"partition", "gres", "gpus", "gpus-per-node", "gpus-per-task", "ntasks", "nodes", "time"})
    if (vm.count(name)) SetOption(name, vm[name].as<std::string>(), &opts);
  if (vm.count("fmte"))
    for (const std::string& kv : vm["fmte"].as<std::vector<std::string>>()) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos)
        return Fail(Status::InvalidArgument("--fmte: expected KEY=VALUE, got '" + kv + "'"));
      opts.spank.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
  // SPANK options are refused on the client when invalid, as the SPANK plugin does.
  for (const auto& [key, value] : opts.spank)
    if (Status s = ValidateOption(key, value); !s.ok()) return Fail(s);
  auto facts = FactsFrom(opts);
  if (!facts.ok()) return Fail(facts.status());

  std::string config_path;
  auto config = LoadPolicyConfig(tools::FlagString(vm, "config"), &config_path);
  if (!config.ok()) return Fail(config.status());
  // The regressors the plugin uses (RegressorsDir), unless --regressors names others.
  auto catalogs = LoadCatalogs(config->catalog_dir, config->regressors_dir);
  if (!catalogs.ok())
    return Fail(Status::IoError("cannot load the catalogs: " + catalogs.status().message()));
  if (Status s = tools::ApplyRegressorsDir(tools::FlagString(vm, "regressors"), &catalogs.value());
      !s.ok())
    return Fail(s);
  const Estimator estimator(std::move(catalogs).value());

  const JobRequest request = ParseJobRequest(script, opts.spank, *facts);
  const Decision d = Decide(request, *config, estimator);
  if (tools::FlagSet(vm, "json")) {
    std::cout << DecisionJson(request, d, config_path, estimator).dump(2) << "\n";
  } else {
    PrintDecision(std::cout, request, d, config_path);
  }
  return d.kind == DecisionKind::kReject ? kExitRejected : cli::kExitOk;
}

}  // namespace fmte::advise
