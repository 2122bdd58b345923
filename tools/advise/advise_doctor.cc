// fmte-advise doctor: reads a site's slurm.conf (with its Include files), gres.conf, plugstack.conf
// and fmte.conf, and says line by line what is consistent and what is not, before the plugin is
// enabled or after an upgrade. Exit code 0 only when nothing is wrong.
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "admission.h"
#include "cli.h"
#include "commands.h"
#include "fmte/config.h"
#include "fmte/estimator.h"
#include "fmte/text.h"
#include "job_options.h"

#ifndef FMTE_DEFAULT_SLURM_PLUGIN_DIR
#define FMTE_DEFAULT_SLURM_PLUGIN_DIR "/usr/lib/x86_64-linux-gnu/slurm-wlm"
#endif

namespace fmte::advise {
namespace {

namespace fs = std::filesystem;

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t begin = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(begin, i - begin));
      begin = i + 1;
    }
  return out;
}

constexpr std::string_view kSummary =
    "Checks a site's Slurm and fmte configuration before the plugin is enabled (or after an\n"
    "upgrade), line by line: JobSubmitPlugins and plugstack.conf name the plugins, the plugins "
    "are\n"
    "in PluginDir and were built for the Slurm that `slurmctld -V` reports, every GPU gres type\n"
    "maps to a GPU of the catalog, the partitions fmte.conf names exist and have GPUs, fmte.conf,\n"
    "the catalogs and the regressors load. Exit code 0 only when all is well. Example:\n"
    "  fmte-advise doctor --slurm-conf /etc/slurm/slurm.conf";

// One Key=Value line of a Slurm config file.
struct ConfLine {
  std::string file;
  int line = 0;
  std::vector<std::pair<std::string, std::string>> kv;  // keys lower-cased, in order
  std::string Get(std::string_view key) const {
    for (const auto& [k, v] : kv)
      if (k == key) return v;
    return "";
  }
  std::string Where() const { return file + ":" + std::to_string(line); }
};

// Reads Key=Value words per line ('#' comments, '\' continuations, Include FILE relative to the
// file's folder, at most 8 levels).
Status ReadConf(const std::string& path, int depth, std::vector<ConfLine>* out) {
  std::ifstream in(path);
  if (!in) return Status::IoError(path + ": cannot read");
  std::string line, joined;
  int no = 0, start = 0;
  while (std::getline(in, line)) {
    ++no;
    if (joined.empty()) start = no;
    if (!line.empty() && line.back() == '\\') {
      joined += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    joined += line;
    std::string text = joined;
    joined.clear();
    if (const size_t hash = text.find('#'); hash != std::string::npos) text.resize(hash);
    std::istringstream words(text);
    std::string word;
    ConfLine cl{path, start, {}};
    std::vector<std::string> all;
    while (words >> word) all.push_back(word);
    if (all.empty()) continue;
    if (Lower(all[0]) == "include" && all.size() >= 2) {
      if (depth >= 8) return Status::InvalidArgument(cl.Where() + ": Include nested too deep");
      fs::path inc = all[1];
      if (inc.is_relative()) inc = fs::path(path).parent_path() / inc;
      if (Status s = ReadConf(inc.string(), depth + 1, out); !s.ok()) return s;
      continue;
    }
    for (const std::string& w : all) {
      const size_t eq = w.find('=');
      cl.kv.emplace_back(Lower(w.substr(0, eq)), eq == std::string::npos ? "" : w.substr(eq + 1));
    }
    out->push_back(std::move(cl));
  }
  return Status::Ok();
}

// Slurm host lists: "node[01-04,07],gpu1" -> node01..node04, node07, gpu1.
std::vector<std::string> ExpandHostList(std::string_view expr) {
  std::vector<std::string> out;
  int depth = 0;
  size_t begin = 0;
  const auto expand_one = [&](std::string_view item, auto& self) -> void {
    const size_t open = item.find('[');
    const size_t close = item.find(']', open);
    if (open == std::string_view::npos || close == std::string_view::npos) {
      if (!item.empty()) out.emplace_back(item);
      return;
    }
    const std::string prefix(item.substr(0, open));
    const std::string_view inside = item.substr(open + 1, close - open - 1);
    const std::string_view rest = item.substr(close + 1);
    for (std::string_view part : Split(inside, ',')) {
      const size_t dash = part.find('-');
      const std::string_view lo = part.substr(0, dash);
      const std::string_view hi = dash == std::string_view::npos ? lo : part.substr(dash + 1);
      const long a = std::strtol(std::string(lo).c_str(), nullptr, 10);
      const long b = std::strtol(std::string(hi).c_str(), nullptr, 10);
      if (b < a || b - a > 100000) continue;
      for (long n = a; n <= b; ++n) {
        std::string num = std::to_string(n);
        if (num.size() < lo.size()) num.insert(0, lo.size() - num.size(), '0');
        self(prefix + num + std::string(rest), self);
      }
    }
  };
  for (size_t i = 0; i <= expr.size(); ++i) {
    if (i < expr.size() && expr[i] == '[') ++depth;
    if (i < expr.size() && expr[i] == ']') --depth;
    if (i == expr.size() || (expr[i] == ',' && depth == 0)) {
      expand_one(expr.substr(begin, i - begin), expand_one);
      begin = i + 1;
    }
  }
  return out;
}

// GPU gres types of a "gpu:a100:8,gpu:h100:2(S:0),shard:4" specification ("" = untyped).
std::vector<std::string> GpuTypes(std::string_view gres) {
  std::vector<std::string> types;
  for (std::string_view item : Split(gres, ',')) {
    const std::vector<std::string_view> parts = Split(item.substr(0, item.find('(')), ':');
    if (parts.empty() || Lower(parts[0]) != "gpu") continue;
    if (parts.size() >= 3) {
      types.emplace_back(Lower(parts[1]));
    } else if (parts.size() == 2 && !parts[1].empty() &&
               !std::isdigit(static_cast<unsigned char>(parts[1][0]))) {
      types.emplace_back(Lower(parts[1]));
    } else {
      types.emplace_back("");
    }
  }
  return types;
}

// The version a plugin file was built for (its "fmte-build-for-slurm=X;" text), or "".
std::string PluginBuildVersion(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  constexpr std::string_view kMark = "fmte-build-for-slurm=";
  const size_t at = bytes.find(kMark);
  if (at == std::string::npos) return "";
  const size_t end = bytes.find(';', at);
  if (end == std::string::npos || end - at > 64) return "";
  return bytes.substr(at + kMark.size(), end - at - kMark.size());
}

// `slurmctld -V` ("slurm 22.05.8", Debian's "slurm-wlm 22.05.8") -> "22.05.8"; "" when it cannot
// be run here.
std::string RunningSlurmVersion() {
  FILE* p = popen(
      "timeout 10 slurmctld -V 2>/dev/null || timeout 10 /usr/sbin/slurmctld -V 2>/dev/null", "r");
  if (p == nullptr) return "";
  char buf[128] = {0};
  const bool got = fgets(buf, sizeof buf, p) != nullptr;
  pclose(p);
  if (!got) return "";
  std::string v = std::string(Trim(buf));
  if (const size_t space = v.rfind(' '); space != std::string::npos) v = v.substr(space + 1);
  return v;
}

class Report {
 public:
  void Ok(const std::string& s) { Line("ok   ", s); }
  void Problem(const std::string& s) {
    Line("FAIL ", s);
    ++problems_;
  }
  void Note(const std::string& s) { Line("note ", s); }
  int problems() const { return problems_; }

 private:
  void Line(std::string_view tag, const std::string& s) { cli::Out() << tag << " " << s << "\n"; }
  int problems_ = 0;
};

int Fail(const Status& s) { return cli::ReportError("fmte-advise", s); }

}  // namespace

int RunDoctor(const std::vector<std::string>& args) {
  namespace po = tools::po;
  po::options_description desc("options");
  desc.add_options()("slurm-conf", po::value<std::string>()->value_name("PATH"),
                     "slurm.conf to check (default: $SLURM_CONF, else /etc/slurm/slurm.conf); "
                     "gres.conf, plugstack.conf and fmte.conf are read beside it")(
      "help,h", "show this help and exit");
  po::variables_map vm;
  if (Status s = tools::ParseFlags(desc, args, &vm); !s.ok()) return Fail(s);
  if (vm.count("help")) {
    cli::Out() << tools::HelpText("doctor", kSummary, desc);
    return cli::kExitOk;
  }
  std::string slurm_conf = tools::FlagString(vm, "slurm-conf");
  if (slurm_conf.empty()) {
    const char* env = std::getenv("SLURM_CONF");
    slurm_conf = env != nullptr && *env != '\0' ? env : "/etc/slurm/slurm.conf";
  }
  Report r;
  std::vector<ConfLine> slurm;
  if (Status s = ReadConf(slurm_conf, 0, &slurm); !s.ok()) {
    r.Problem("slurm.conf: " + s.message());
    cli::Out() << "doctor: 1 problem\n";
    return cli::kExitFailure;
  }
  r.Ok("slurm.conf: " + slurm_conf + " (" + std::to_string(slurm.size()) + " settings)");
  const fs::path etc = fs::path(slurm_conf).parent_path();
  const auto last = [&](std::string_view key) -> const ConfLine* {
    const ConfLine* found = nullptr;
    for (const ConfLine& l : slurm)
      if (!l.kv.empty() && l.kv[0].first == key) found = &l;
    return found;
  };

  // JobSubmitPlugins names fmte.
  const ConfLine* jsp = last("jobsubmitplugins");
  bool fmte_enabled = false;
  if (jsp != nullptr)
    for (std::string_view p : Split(jsp->kv[0].second, ','))
      fmte_enabled =
          fmte_enabled || Lower(Trim(p)) == "fmte" || Lower(Trim(p)) == "job_submit/fmte";
  if (fmte_enabled) {
    r.Ok(jsp->Where() + ": JobSubmitPlugins=" + jsp->kv[0].second + " includes fmte");
  } else {
    r.Problem((jsp != nullptr ? jsp->Where() + ": JobSubmitPlugins=" + jsp->kv[0].second
                              : "slurm.conf: no JobSubmitPlugins line") +
              ": add fmte (JobSubmitPlugins=fmte) and restart slurmctld");
  }

  // The plugins in PluginDir, built for the running Slurm.
  const ConfLine* pd = last("plugindir");
  const std::string plugin_dirs = pd != nullptr ? pd->kv[0].second : FMTE_DEFAULT_SLURM_PLUGIN_DIR;
  const auto find_plugin = [&](const std::string& name) -> std::string {
    for (std::string_view d : Split(plugin_dirs, ':')) {
      const fs::path p = fs::path(std::string(d)) / name;
      if (fs::exists(p)) return p.string();
    }
    return "";
  };
  const std::string running = RunningSlurmVersion();
  const std::string job_submit = find_plugin("job_submit_fmte.so");
  if (job_submit.empty()) {
    r.Problem("job_submit_fmte.so is not in PluginDir (" + plugin_dirs +
              "): install the fmte package or add its folder to PluginDir");
  } else {
    const std::string built = PluginBuildVersion(job_submit);
    if (built.empty()) {
      r.Problem(job_submit + ": no fmte build information (not an fmte plugin, or older than 0.1)");
    } else if (running.empty()) {
      r.Note(job_submit + ": built for Slurm " + built +
             "; slurmctld -V cannot be run here: run doctor on the controller to compare");
    } else if (built != running) {
      r.Problem(job_submit + ": built for Slurm " + built + ", slurmctld -V says " + running +
                ": slurmctld refuses a job_submit plugin of another version; rebuild fmte "
                "against this Slurm's headers");
    } else {
      r.Ok(job_submit + ": built for Slurm " + built + ", as slurmctld -V says");
    }
  }

  // plugstack.conf names spank_fmte.so (the client-side reading in sbatch).
  const ConfLine* psc = last("plugstackconfig");
  const std::string plugstack =
      psc != nullptr ? psc->kv[0].second : (etc / "plugstack.conf").string();
  std::ifstream ps(plugstack);
  if (!ps) {
    r.Problem(plugstack +
              ": not found: add 'optional spank_fmte.so' to it (sbatch then reads "
              "batch scripts and their config files for fmte)");
  } else {
    std::string line;
    int no = 0;
    bool found = false;
    while (std::getline(ps, line)) {
      ++no;
      std::istringstream words(line.substr(0, line.find('#')));
      std::string kind, path;
      if (!(words >> kind >> path) || path.find("spank_fmte.so") == std::string::npos) continue;
      found = true;
      const std::string where = plugstack + ":" + std::to_string(no);
      const std::string resolved = path.front() == '/' ? path : find_plugin(path);
      if (resolved.empty() || !fs::exists(resolved)) {
        r.Problem(where + ": " + path + " not found" +
                  (kind == "required" ? " (required: every sbatch fails)" : ""));
      } else if (const std::string built = PluginBuildVersion(resolved);
                 !running.empty() && !built.empty() && built != running) {
        r.Problem(where + ": " + resolved + " built for Slurm " + built + ", slurmctld -V says " +
                  running);
      } else {
        r.Ok(where + ": " + kind + " " + resolved);
      }
    }
    if (!found)
      r.Problem(plugstack +
                ": no spank_fmte.so line: add 'optional spank_fmte.so' (sbatch then "
                "reads batch scripts and their config files for fmte)");
  }

  // fmte.conf, the catalogs and the regressors, as the plugin loads them.
  const std::string fmte_conf = FindConfigPath(slurm_conf);
  Config config;
  std::unique_ptr<Estimator> estimator;
  if (!fs::exists(fmte_conf)) {
    r.Note(fmte_conf + ": none: every key has its default (gres types are read as GPU names)");
  }
  auto admission = LoadAdmission(fs::exists(fmte_conf) ? fmte_conf : "none", "");
  if (!admission.ok()) {
    r.Problem(admission.status().message());
  } else {
    config = admission->config;
    if (fs::exists(fmte_conf)) r.Ok(fmte_conf + ": parses");
    const Catalogs& c = admission->estimator->catalogs();
    r.Ok("catalogs: " + std::to_string(c.models.Ids().size()) + " models, " +
         std::to_string(c.gpus.Names().size()) + " GPUs (" +
         (config.catalog_dir.empty() ? EtcDir() : config.catalog_dir) + "), regressors (" +
         (config.regressors_dir.empty() ? RegressorsDir() : config.regressors_dir) + ") load");
    // Each OperatorSet= the plugin would load (the defaults' and the partitions').
    std::vector<const PartitionConfig*> naming{&config.defaults};
    for (const PartitionConfig& q : config.partitions) naming.push_back(&q);
    for (const PartitionConfig* p : naming) {
      if (p->operator_set.empty()) continue;
      const auto& sets = admission->estimator->catalogs().operator_sets;
      const auto it = sets.find(p->operator_set);
      const std::string who = p->name.empty() ? "the defaults" : "partition " + p->name;
      if (it != sets.end()) {
        r.Ok("OperatorSet=" + p->operator_set + " (" + who +
             "): " + std::to_string(it->second.size()) + " operator regressors load");
      }
    }
    if (!admission->operator_set_problems.empty()) r.Problem(admission->operator_set_problems);
    estimator = std::move(admission->estimator);
  }

  // Nodes and their GPU gres (slurm.conf NodeName lines and gres.conf), partitions and their nodes.
  std::map<std::string, std::set<std::string>> node_gpu_types;  // node -> types ("" untyped)
  std::map<std::string, std::string> type_where;                // type -> first line naming it
  std::vector<std::string> all_nodes;
  std::string default_gres;
  for (const ConfLine& l : slurm) {
    if (l.kv[0].first != "nodename") continue;
    const std::string gres = l.Get("gres");
    if (Lower(l.kv[0].second) == "default") {
      default_gres = gres;
      continue;
    }
    for (const std::string& n : ExpandHostList(l.kv[0].second)) {
      all_nodes.push_back(n);
      for (const std::string& t : GpuTypes(gres.empty() ? default_gres : gres)) {
        node_gpu_types[n].insert(t);
        type_where.emplace(t, l.Where());
      }
    }
  }
  std::vector<ConfLine> gres_conf;
  const std::string gres_path = (etc / "gres.conf").string();
  if (fs::exists(gres_path) && ReadConf(gres_path, 0, &gres_conf).ok()) {
    for (const ConfLine& l : gres_conf) {
      if (Lower(l.Get("name")) != "gpu") {
        if (l.kv[0].first == "autodetect" && Lower(l.kv[0].second) != "off")
          r.Note(l.Where() + ": AutoDetect=" + l.kv[0].second +
                 ": the gres types come from the GPUs; check they are in slurm.conf's Gres=");
        continue;
      }
      const std::string type = Lower(l.Get("type"));
      const std::string nodes = l.Get("nodename");
      for (const std::string& n : nodes.empty() ? all_nodes : ExpandHostList(nodes))
        node_gpu_types[n].insert(type);
      type_where.emplace(type, l.Where());
    }
  }
  // Every GPU gres type maps to a GPU of the catalog.
  for (const auto& [type, where] : type_where) {
    if (type.empty()) continue;
    const std::string gpu = config.GpuNameFor("", type);
    const bool known = estimator != nullptr && estimator->catalogs().gpus.Find(gpu).ok();
    if (estimator == nullptr) continue;
    if (known) {
      r.Ok(where + ": gres type " + type + " -> " + (*estimator->catalogs().gpus.Find(gpu))->name);
    } else {
      r.Problem(where + ": gres type " + type +
                " maps to no GPU of the catalog: add "
                "GresTypeGpu=" +
                type +
                ":NAME to fmte.conf (fmte-advise models lists the names); "
                "jobs asking for it are accepted unestimated");
    }
  }
  // Partitions: GPUs, and the ones fmte.conf names.
  std::set<std::string> slurm_partitions;
  for (const ConfLine& l : slurm) {
    if (l.kv[0].first != "partitionname" || Lower(l.kv[0].second) == "default") continue;
    const std::string name = l.kv[0].second;
    slurm_partitions.insert(name);
    const std::string nodes = l.Get("nodes");
    std::set<std::string> types;
    for (const std::string& n : Lower(nodes) == "all" ? all_nodes : ExpandHostList(nodes))
      for (const std::string& t : node_gpu_types[n]) types.insert(t);
    const PartitionConfig& pc = config.For(name);
    const bool named = std::any_of(config.partitions.begin(), config.partitions.end(),
                                   [&](const PartitionConfig& p) { return p.name == name; });
    if (types.empty()) {
      if (named && pc.mode != Mode::kOff && !pc.gpu.empty())
        r.Problem(l.Where() + ": partition " + name + " has no GPU gres on its nodes, but " +
                  fmte_conf + " gives it Gpu=" + pc.gpu);
      else
        r.Note(l.Where() + ": partition " + name + " has no GPUs: fmte leaves its jobs alone");
      continue;
    }
    if (types.count("") > 0 && pc.gpu.empty())
      r.Problem(l.Where() + ": partition " + name + " has untyped GPUs (gpu:N) and " + fmte_conf +
                " gives it no Gpu=NAME: its jobs cannot be estimated");
    else
      r.Ok(l.Where() + ": partition " + name + " has GPUs (" + std::to_string(types.size()) +
           " type" + (types.size() > 1 ? "s" : "") + "), Mode=" + std::string(ToString(pc.mode)));
  }
  for (const PartitionConfig& p : config.partitions)
    if (slurm_partitions.count(p.name) == 0)
      r.Problem(fmte_conf + ": PartitionName=" + p.name + " is not a partition of " + slurm_conf);

  if (r.problems() == 0) {
    cli::Out() << "doctor: all well\n";
    return cli::kExitOk;
  }
  cli::Out() << "doctor: " << r.problems() << " problem" << (r.problems() > 1 ? "s" : "") << "\n";
  return cli::kExitFailure;
}

}  // namespace fmte::advise
