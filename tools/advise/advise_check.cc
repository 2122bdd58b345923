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

#include "cli.h"
#include "commands.h"
#include "fmte/config.h"
#include "fmte/policy.h"
#include "fmte/record.h"
#include "fmte/request.h"
#include "fmte/script_files.h"
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
  std::string ntasks_per_node, job_name, array, exports;
  std::vector<std::pair<std::string, std::string>> spank;  // --fmte-KEY=VALUE
};

// sbatch's options that take a value (long names, and short letters), so that the words of an
// sbatch command line (`fmte-advise check --mem 80G -A proj train.sh`) are told from the script's
// path; sbatch 22.05's `--help`.
bool SbatchTakesValue(std::string_view name) {
  static constexpr std::string_view kLong[] = {"account",
                                               "acctg-freq",
                                               "array",
                                               "batch",
                                               "bb",
                                               "bbf",
                                               "begin",
                                               "chdir",
                                               "cluster-constraint",
                                               "clusters",
                                               "comment",
                                               "constraint",
                                               "container",
                                               "core-spec",
                                               "cores-per-socket",
                                               "cpu-freq",
                                               "cpus-per-gpu",
                                               "cpus-per-task",
                                               "deadline",
                                               "delay-boot",
                                               "dependency",
                                               "distribution",
                                               "error",
                                               "exclude",
                                               "export",
                                               "export-file",
                                               "extra-node-info",
                                               "gid",
                                               "gpu-bind",
                                               "gpu-freq",
                                               "gpus",
                                               "gpus-per-node",
                                               "gpus-per-socket",
                                               "gpus-per-task",
                                               "gres",
                                               "gres-flags",
                                               "hint",
                                               "input",
                                               "job-name",
                                               "licenses",
                                               "mail-type",
                                               "mail-user",
                                               "mcs-label",
                                               "mem",
                                               "mem-bind",
                                               "mem-per-cpu",
                                               "mem-per-gpu",
                                               "mincpus",
                                               "network",
                                               "nodefile",
                                               "nodelist",
                                               "nodes",
                                               "ntasks",
                                               "ntasks-per-core",
                                               "ntasks-per-gpu",
                                               "ntasks-per-node",
                                               "ntasks-per-socket",
                                               "open-mode",
                                               "output",
                                               "partition",
                                               "power",
                                               "prefer",
                                               "priority",
                                               "profile",
                                               "qos",
                                               "reservation",
                                               "signal",
                                               "sockets-per-node",
                                               "switches",
                                               "thread-spec",
                                               "threads-per-core",
                                               "time",
                                               "time-min",
                                               "tmp",
                                               "uid",
                                               "wait-all-nodes",
                                               "wckey",
                                               "wrap"};
  if (name.size() == 1)
    return std::string_view("AabcDdeFGiJLMmNnopqStwx").find(name[0]) != std::string_view::npos;
  for (std::string_view l : kLong)
    if (l == name) return true;
  return false;
}

// One option (long name without dashes, or a short letter) into `o`. Unknown options are ignored.
void SetOption(std::string_view name, const std::string& value, SlurmOptions* o) {
  if (name == "ntasks-per-node")
    o->ntasks_per_node = value;
  else if (name == "J" || name == "job-name")
    o->job_name = value;
  else if (name == "a" || name == "array")
    o->array = value;
  else if (name == "export")
    o->exports = value;
  else if (name == "p" || name == "partition")
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
  if (!o.ntasks_per_node.empty()) {
    auto n = tools::ParseInt(o.ntasks_per_node, "--ntasks-per-node", 1, 1 << 16);
    if (!n.ok()) return n.status();
    f.ntasks_per_node = *n;
  }
  // sbatch --ntasks-per-node without --ntasks: that many tasks on each node.
  if (f.num_tasks == 0 && f.ntasks_per_node > 0)
    f.num_tasks = f.ntasks_per_node * std::max<int64_t>(1, f.min_nodes);
  f.job_name = o.job_name;
  return f;
}

// The variables a batch script starts with, as far as they are known at submission: sbatch
// --export=[ALL,]NAME=VALUE,... and the SLURM_* variables of the allocation it asked for.
std::vector<std::pair<std::string, std::string>> ScriptEnv(const SlurmOptions& o,
                                                           const SlurmFacts& f,
                                                           const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> env;
  const int64_t nodes = std::max<int64_t>(1, f.min_nodes);
  env.emplace_back("SLURM_NNODES", std::to_string(nodes));
  env.emplace_back("SLURM_JOB_NUM_NODES", std::to_string(nodes));
  env.emplace_back("SLURM_SUBMIT_DIR", dir);
  if (!o.job_name.empty()) env.emplace_back("SLURM_JOB_NAME", o.job_name);
  if (f.ntasks_per_node > 0) {
    env.emplace_back("SLURM_NTASKS_PER_NODE", std::to_string(f.ntasks_per_node));
    env.emplace_back("SLURM_NTASKS", std::to_string(f.ntasks_per_node * nodes));
  } else if (f.num_tasks > 0) {
    env.emplace_back("SLURM_NTASKS", std::to_string(f.num_tasks));
  }
  const std::string_view per_node = o.gpus_per_node.empty() ? o.gres : o.gpus_per_node;
  if (!per_node.empty()) {  // "gpu:a100:4" or "4": the count is the last field
    const std::string_view count = per_node.substr(per_node.rfind(':') + 1);
    if (!count.empty() && count.find_first_not_of("0123456789") == std::string_view::npos)
      env.emplace_back("SLURM_GPUS_PER_NODE", std::string(count));
  }
  if (!o.array.empty()) {  // the first task of the array: "0-2", "1,3,5", "0-15%4"
    const size_t end = o.array.find_first_not_of("0123456789");
    if (end != 0) env.emplace_back("SLURM_ARRAY_TASK_ID", o.array.substr(0, end));
  }
  std::string_view rest = o.exports;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq != std::string_view::npos && eq > 0)
      env.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
  }
  return env;
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

  // As sbatch: options, then SCRIPT, then the script's own arguments. Options fmte-advise knows
  // go to the flag parser; other sbatch options (--mem, -A, --exclusive, ...) are skipped.
  std::vector<std::string> flags{args.empty() ? std::string("check") : args[0]};
  std::string script_path;
  std::vector<std::string> script_args;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!script_path.empty()) {
      script_args.push_back(a);
    } else if (a.size() > 1 && a[0] == '-') {
      const bool is_long = a.starts_with("--");
      const std::string name = a.substr(is_long ? 2 : 1, a.find('=') == std::string::npos
                                                             ? std::string::npos
                                                             : a.find('=') - (is_long ? 2 : 1));
      const auto* opt = desc.find_nothrow(is_long ? name : name.substr(0, 1), false);
      if (opt == nullptr) {  // an sbatch option fmte does not use, with its value
        if (a.find('=') == std::string::npos && (is_long || a.size() == 2) &&
            SbatchTakesValue(is_long ? name : name.substr(0, 1)) && i + 1 < args.size())
          ++i;
        continue;
      }
      flags.push_back(a);
      if (a.find('=') == std::string::npos && (is_long || a.size() == 2) &&
          opt->semantic()->max_tokens() > 0 && i + 1 < args.size())
        flags.push_back(args[++i]);
    } else {
      script_path = a;
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
  // The submission directory: files the script names are read relative to it, as sbatch -D.
  std::string dir = tools::FlagString(vm, "chdir");
  if (dir.empty()) {
    char cwd[4096];
    dir = getcwd(cwd, sizeof(cwd)) != nullptr ? cwd : ".";
  }
  const DiskFiles files(dir);
  const std::string script_file = files.Resolve(script_path);
  std::ifstream in(script_file, std::ios::binary);
  if (!in) return Fail(Status::InvalidArgument("SCRIPT: cannot open '" + script_file + "'"));
  std::string script(kMaxScriptBytes + 1, '\0');
  in.read(script.data(), static_cast<std::streamsize>(script.size()));
  script.resize(static_cast<size_t>(in.gcount()));

  SlurmOptions opts;
  ReadSbatchLines(script, &opts);
  // A value sbatch would refuse in an #SBATCH line (a template's "{{ nodes }}") is dropped with a
  // warning; the same value on the command line is an error.
  for (auto [field, name] :
       {std::pair{&SlurmOptions::time, "--time"}, std::pair{&SlurmOptions::nodes, "--nodes"},
        std::pair{&SlurmOptions::ntasks, "--ntasks"},
        std::pair{&SlurmOptions::ntasks_per_node, "--ntasks-per-node"}}) {
    SlurmOptions one;
    one.*field = opts.*field;
    if (auto f = FactsFrom(one); !f.ok()) {
      std::cerr << "fmte-advise: warning: #SBATCH " << name << ": " << f.status().message()
                << "; ignored\n";
      opts.*field = "";
    }
  }
  for (const char* name : {"partition", "gres", "gpus", "gpus-per-node", "gpus-per-task", "ntasks",
                           "ntasks-per-node", "nodes", "time", "job-name", "array", "export"})
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

  // The client side's reading (what the SPANK plugin does in sbatch): the script's arguments and
  // variables, the files it names and the launcher table of the catalog directory.
  ScriptContext context;
  context.args = script_args;
  context.env = ScriptEnv(opts, *facts, dir);
  context.files = &files;
  auto launchers = LoadLauncherTable(config->catalog_dir);
  if (!launchers.ok()) return Fail(launchers.status());
  context.launchers = &launchers.value();
  const JobRequest request = ParseJobRequest(script, opts.spank, *facts, context);
  const Decision d = Decide(request, *config, estimator);
  if (tools::FlagSet(vm, "json")) {
    std::cout << DecisionJson(request, d, config_path, estimator).dump(2) << "\n";
  } else {
    PrintDecision(std::cout, request, d, config_path);
  }
  return d.kind == DecisionKind::kReject ? kExitRejected : cli::kExitOk;
}

}  // namespace fmte::advise
