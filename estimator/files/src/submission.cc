// sbatch's command line, #SBATCH lines, the script's starting variables and the client's whole
// reading of a submission (fmte/submission.h).
#include "fmte/submission.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <tuple>

#include "files_internal.h"
#include "fmte/config.h"
#include "fmte/model_files.h"
#include "fmte/script_files.h"
#include "fmte/text.h"

namespace fmte {
namespace {

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

// Splits an #SBATCH line's text into words (quotes kept simple: sbatch splits on blanks and
// removes one level of quotes); a word starting with '#' ends the line.
std::vector<std::string> SbatchLineWords(std::string_view text) {
  std::vector<std::string> words;
  std::string w;
  char quote = 0;
  bool in_word = false;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote)
        quote = 0;
      else
        w += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      if (in_word) words.push_back(std::move(w));
      w.clear();
      in_word = false;
    } else {
      if (!in_word && c == '#') break;
      w += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(w));
  return words;
}

bool MentionsVariable(std::string_view script, std::string_view name) {
  for (size_t at = script.find(name); at != std::string_view::npos;
       at = script.find(name, at + 1)) {
    const bool before = (at >= 1 && script[at - 1] == '$') ||
                        (at >= 2 && script[at - 1] == '{' && script[at - 2] == '$');
    const size_t end = at + name.size();
    const char next = end < script.size() ? script[end] : ' ';
    const bool ends = !(std::isalnum(static_cast<unsigned char>(next)) || next == '_');
    if (before && ends) return true;
  }
  return false;
}

// The batch script as sbatch reads it: relative to where sbatch runs (fmte-advise check also tries
// the --chdir directory). Only its first kMaxScriptBytes + 1 bytes: the reader warns about the
// rest.
Result<std::string> ReadScript(const std::string& path, const std::string& cwd,
                               const std::string& chdir) {
  std::string full = path.front() == '/' ? path : cwd + "/" + path;
  struct stat st {};
  if (::stat(full.c_str(), &st) != 0 && !chdir.empty() && path.front() != '/') {
    const std::string there = (chdir.front() == '/' ? chdir : cwd + "/" + chdir) + "/" + path;
    if (::stat(there.c_str(), &st) == 0) full = there;
  }
  const int fd = ::open(full.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Status::InvalidArgument("SCRIPT: cannot open '" + full + "'");
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument("SCRIPT: '" + full + "' is not a regular file");
  }
  return internal::ReadAndClose(fd, kMaxScriptBytes + 1);
}

}  // namespace

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
  if (name.starts_with("fmte-")) return true;  // the SPANK plugin's options all take a value
  return std::find(std::begin(kLong), std::end(kLong), name) != std::end(kLong);
}

void SetSbatchOption(std::string_view name, std::string value, SbatchOptions* o) {
  struct Field {
    std::string_view long_name, short_name;
    std::string SbatchOptions::*field;
  };
  static const Field kFields[] = {
      {"partition", "p", &SbatchOptions::partition},
      {"gres", "", &SbatchOptions::gres},
      {"gpus", "G", &SbatchOptions::gpus},
      {"gpus-per-node", "", &SbatchOptions::gpus_per_node},
      {"gpus-per-task", "", &SbatchOptions::gpus_per_task},
      {"time", "t", &SbatchOptions::time},
      {"nodes", "N", &SbatchOptions::nodes},
      {"ntasks", "n", &SbatchOptions::ntasks},
      {"ntasks-per-node", "", &SbatchOptions::ntasks_per_node},
      {"job-name", "J", &SbatchOptions::job_name},
      {"array", "a", &SbatchOptions::array},
      {"export", "", &SbatchOptions::exports},
      {"chdir", "D", &SbatchOptions::chdir},
      {"wrap", "", &SbatchOptions::wrap},
      {"mem", "", &SbatchOptions::mem},
      {"mem-per-cpu", "", &SbatchOptions::mem_per_cpu},
      {"mem-per-gpu", "", &SbatchOptions::mem_per_gpu},
      {"cpus-per-task", "c", &SbatchOptions::cpus_per_task},
  };
  for (const Field& f : kFields) {
    if (name == f.long_name || (!f.short_name.empty() && name == f.short_name)) {
      o->*f.field = std::move(value);
      return;
    }
  }
  if (name.starts_with("fmte-") && name.size() > 5)
    o->spank.emplace_back(std::string(name.substr(5)), std::move(value));
}

void ApplySbatchWords(std::span<const std::string> w, SbatchOptions* o) {
  for (size_t i = 0; i < w.size(); ++i) {
    const std::string& t = w[i];
    if (t.starts_with("--") && t.size() > 2) {
      const size_t eq = t.find('=');
      const std::string_view name =
          std::string_view(t).substr(2, eq == std::string::npos ? std::string_view::npos : eq - 2);
      if (name == "exclusive")  // a flag, or =user|=mcs|=topo (sharing with some jobs)
        o->exclusive = eq == std::string::npos;
      else if (eq != std::string::npos)
        SetSbatchOption(name, t.substr(eq + 1), o);
      else if (SbatchTakesValue(name) && i + 1 < w.size())
        SetSbatchOption(name, w[++i], o);
    } else if (t.size() >= 2 && t[0] == '-' && t[1] != '-') {
      const std::string_view letter = std::string_view(t).substr(1, 1);
      if (!SbatchTakesValue(letter)) continue;  // -H, -k, -Q, ... (flags)
      if (t.size() > 2)
        SetSbatchOption(letter, t.substr(t[2] == '=' ? 3 : 2), o);
      else if (i + 1 < w.size())
        SetSbatchOption(letter, w[++i], o);
    }
  }
}

void ReadSbatchLines(std::string_view script, SbatchOptions* o) {
  script = script.substr(0, kMaxScriptBytes);
  while (!script.empty()) {
    const size_t nl = script.find('\n');
    std::string_view l = script.substr(0, nl);
    script = nl == std::string_view::npos ? std::string_view() : script.substr(nl + 1);
    while (!l.empty() && (l.front() == ' ' || l.front() == '\t')) l.remove_prefix(1);
    if (l.empty() || l.starts_with("#!")) continue;
    if (l.front() != '#') break;  // sbatch stops at the first command
    if (!l.starts_with("#SBATCH")) continue;
    const std::vector<std::string> words = SbatchLineWords(l.substr(7));
    ApplySbatchWords(words, o);
  }
}

SbatchCommandLine SplitSbatchCommandLine(
    std::span<const std::string> args,
    const std::function<bool(std::string_view)>& also_takes_value) {
  SbatchCommandLine out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!out.script.empty()) {
      out.script_args.push_back(a);
      continue;
    }
    if (a == ":") continue;  // a heterogeneous job's next component: its options follow
    if (a == "--") {         // the next word is the script, whatever it looks like
      if (i + 1 < args.size()) out.script = args[++i];
      continue;
    }
    if (a.size() < 2 || a[0] != '-') {
      out.script = a;
      continue;
    }
    out.options.push_back({a});
    const bool is_long = a.starts_with("--");
    const std::string_view name =
        is_long
            ? std::string_view(a).substr(
                  2, a.find('=') == std::string::npos ? std::string_view::npos : a.find('=') - 2)
            : std::string_view(a).substr(1, 1);
    const bool value_attached = is_long ? a.find('=') != std::string::npos : a.size() > 2;
    if (!value_attached && i + 1 < args.size() &&
        (SbatchTakesValue(name) || (also_takes_value && also_takes_value(name))))
      out.options.back().push_back(args[++i]);
  }
  return out;
}

Result<int64_t> ParseSlurmMemoryMb(std::string_view text, std::string_view field) {
  constexpr std::string_view kWhat = "a size in megabytes, or with a K, M, G or T suffix";
  std::string_view digits = text;
  double scale = 1;  // megabytes
  if (!digits.empty() && BinarySuffixFactor(LowerAscii(digits.back()), "kmgt") > 0) {
    scale = BinarySuffixFactor(LowerAscii(digits.back()), "kmgt") / (1024.0 * 1024);
    digits.remove_suffix(1);
  }
  auto n = ParseBoundedInt(digits, 0, int64_t{1} << 40, field);
  if (!n.ok()) return Expected(field, kWhat, text);
  const double mb = std::ceil(static_cast<double>(*n) * scale);
  if (mb > static_cast<double>(int64_t{1} << 40)) return Expected(field, kWhat, text);
  return static_cast<int64_t>(mb);
}

Result<SlurmFacts> FactsFrom(const SbatchOptions& o) {
  SlurmFacts f;
  f.partition = o.partition;
  f.exclusive = o.exclusive;
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
    auto n = ParseBoundedInt(std::string_view(o.nodes).substr(0, o.nodes.find('-')), 1, 1 << 20,
                             "--nodes");
    if (!n.ok()) return n.status();
    f.min_nodes = *n;
  }
  if (!o.ntasks.empty()) {
    auto n = ParseBoundedInt(o.ntasks, 1, 1 << 24, "--ntasks");
    if (!n.ok()) return n.status();
    f.num_tasks = *n;
  }
  if (!o.ntasks_per_node.empty()) {
    auto n = ParseBoundedInt(o.ntasks_per_node, 1, 1 << 16, "--ntasks-per-node");
    if (!n.ok()) return n.status();
    f.ntasks_per_node = *n;
  }
  // sbatch --ntasks-per-node without --ntasks: that many tasks on each node.
  if (f.num_tasks == 0 && f.ntasks_per_node > 0)
    f.num_tasks = f.ntasks_per_node * std::max<int64_t>(1, f.min_nodes);
  // Host memory (sbatch --mem, --mem-per-cpu, --mem-per-gpu: megabytes unless suffixed K, M, G
  // or T; --mem=0 asks for all of a node's memory, which fmte does not know, so it stays 0).
  for (auto [text, out, name] : {std::tuple{&o.mem, &f.mem_per_node_mb, "--mem"},
                                 std::tuple{&o.mem_per_cpu, &f.mem_per_cpu_mb, "--mem-per-cpu"},
                                 std::tuple{&o.mem_per_gpu, &f.mem_per_gpu_mb, "--mem-per-gpu"}}) {
    if (text->empty()) continue;
    auto mb = ParseSlurmMemoryMb(*text, name);
    if (!mb.ok()) return mb.status();
    *out = *mb;
  }
  if (!o.cpus_per_task.empty()) {
    auto n = ParseBoundedInt(o.cpus_per_task, 1, 1 << 16, "--cpus-per-task");
    if (!n.ok()) return n.status();
    f.cpus_per_task = *n;
  }
  f.job_name = o.job_name;
  return f;
}

std::vector<std::string> DropInvalidSbatchValues(SbatchOptions* o) {
  std::vector<std::string> warnings;
  for (auto [field, name] :
       {std::pair{&SbatchOptions::time, "--time"}, std::pair{&SbatchOptions::nodes, "--nodes"},
        std::pair{&SbatchOptions::ntasks, "--ntasks"},
        std::pair{&SbatchOptions::ntasks_per_node, "--ntasks-per-node"},
        std::pair{&SbatchOptions::mem, "--mem"},
        std::pair{&SbatchOptions::mem_per_cpu, "--mem-per-cpu"},
        std::pair{&SbatchOptions::mem_per_gpu, "--mem-per-gpu"},
        std::pair{&SbatchOptions::cpus_per_task, "--cpus-per-task"}}) {
    SbatchOptions one;
    one.*field = o->*field;
    if (auto f = FactsFrom(one); !f.ok()) {
      warnings.push_back(std::string("#SBATCH ") + name + ": " + f.status().message() +
                         "; ignored");
      o->*field = "";
    }
  }
  return warnings;
}

std::vector<std::pair<std::string, std::string>> SubmissionEnv(
    const SbatchOptions& o, const SlurmFacts& f, const std::string& dir, std::string_view script,
    std::span<const char* const> environ_entries) {
  std::vector<std::pair<std::string, std::string>> env;
  // --export: ALL (default), NONE, or NAME[=VALUE],... (then only those, with ALL if listed).
  bool all = true;
  std::vector<std::string_view> listed;
  std::vector<std::pair<std::string, std::string>> given;
  if (!o.exports.empty()) {
    all = false;
    std::string_view rest = o.exports;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      const size_t eq = item.find('=');
      if (item == "ALL")
        all = true;
      else if (eq == std::string_view::npos && !item.empty() && item != "NONE")
        listed.push_back(item);
      else if (eq != std::string_view::npos && eq > 0)
        given.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
    }
  }
  // The submitter's variables the script names (not all of them: the reader's variable table is
  // bounded, and a login shell has hundreds).
  size_t taken = 0;
  for (const char* entry : environ_entries) {
    if (entry == nullptr || taken >= 64) continue;
    const std::string_view e(entry, strnlen(entry, kMaxValueBytes + 256));
    const size_t eq = e.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    const std::string_view name = e.substr(0, eq);
    if (name.starts_with("SLURM_")) continue;  // the allocation's, below
    if (!all && std::find(listed.begin(), listed.end(), name) == listed.end()) continue;
    if (!MentionsVariable(script, name)) continue;
    env.emplace_back(std::string(name), std::string(e.substr(eq + 1)));
    ++taken;
  }
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
  for (auto& kv : given) env.push_back(std::move(kv));
  return env;
}

std::vector<std::string> SrunAsSbatch(std::span<const std::string> srun_args) {
  // srun's options that take a value and that sbatch does not have (srun(1); pyxis's container
  // options): their value is not the command, and they say nothing of the allocation.
  static constexpr std::string_view kSrunOnly[] = {"mpi",
                                                   "cpu-bind",
                                                   "container-image",
                                                   "container-mounts",
                                                   "container-workdir",
                                                   "container-name",
                                                   "container-env",
                                                   "task-epilog",
                                                   "task-prolog",
                                                   "epilog",
                                                   "prolog",
                                                   "accel-bind",
                                                   "het-group",
                                                   "relative",
                                                   "jobid",
                                                   "slurmd-debug",
                                                   "tres-bind",
                                                   "r"};
  auto srun_only = [](std::string_view name) {
    for (std::string_view o : kSrunOnly)
      if (name == o) return true;
    return false;
  };
  const SbatchCommandLine cl = SplitSbatchCommandLine(srun_args, srun_only);
  if (cl.script.empty()) return {};
  std::vector<std::string> words;
  for (const std::vector<std::string>& o : cl.options) {
    const std::string_view a = o.front();
    const std::string_view name =
        a.starts_with("--") ? a.substr(2, a.find('=') - 2) : a.substr(1, 1);
    if (!srun_only(name)) words.insert(words.end(), o.begin(), o.end());
  }
  auto quoted = [](std::string_view w) {
    std::string q = "'";
    for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  std::string command = quoted(cl.script);
  for (const std::string& a : cl.script_args) command += " " + quoted(a);
  words.push_back("--wrap=" + command);
  return words;
}

std::span<const char* const> ProcessEnviron() {
  size_t n = 0;
  while (environ != nullptr && environ[n] != nullptr && n < 65536) ++n;
  return {const_cast<const char* const*>(environ), n};
}

namespace {

// The GPU type a request names: "gpu:a100:4" (--gres), "a100:4" (--gpus*); empty when untyped.
std::string GpuTypeOf(const SbatchOptions& o) {
  for (std::string_view v : {o.gpus_per_node, o.gpus, o.gpus_per_task}) {
    const size_t colon = v.rfind(':');
    if (colon != std::string_view::npos) return std::string(v.substr(0, colon));
  }
  for (std::string_view rest = o.gres; !rest.empty();) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.starts_with("gres:")) item.remove_prefix(5);
    if (!item.starts_with("gpu:")) continue;
    item.remove_prefix(4);
    const size_t colon = item.rfind(':');
    if (colon != std::string_view::npos) return std::string(item.substr(0, colon));
  }
  return "";
}

// What Slurm allocated replaces what the script asked for, field by field; any GPU field of the
// allocation replaces every GPU request of the script (one job gets one GPU count). An untyped
// allocation ("gres/gpu=8") keeps the type the script asked for (it picks the GPU model).
void ApplyAllocation(SbatchOptions got, SbatchOptions* o) {
  if (!got.gres.empty() || !got.gpus.empty() || !got.gpus_per_node.empty()) {
    const std::string type = GpuTypeOf(*o);
    for (std::string* v : {&got.gpus, &got.gpus_per_node})
      if (!v->empty() && v->find(':') == std::string::npos && !type.empty()) *v = type + ":" + *v;
    o->gres.clear();
    o->gpus.clear();
    o->gpus_per_node.clear();
    o->gpus_per_task.clear();
  }
  for (std::string SbatchOptions::*field :
       {&SbatchOptions::partition, &SbatchOptions::gres, &SbatchOptions::gpus,
        &SbatchOptions::gpus_per_node, &SbatchOptions::time, &SbatchOptions::nodes})
    if (!(got.*field).empty()) o->*field = got.*field;
}

// The reading shared by a new submission and a past one: `s.script` is set; the command line's
// options win over #SBATCH lines, and `allocated` (a past job's) over both.
// sbatch's options as one list of words ({"--nodes", "2"}, {"-t10"} -> "--nodes", "2", "-t10").
std::vector<std::string> OptionWords(const SbatchCommandLine& cl) {
  std::vector<std::string> words;
  for (const std::vector<std::string>& o : cl.options)
    words.insert(words.end(), o.begin(), o.end());
  return words;
}

// The model of the launch line or of an #FMTE line, when the catalog does not know it, read from
// this machine (a path, the Hugging Face cache) into the request's arch_json; see ReadSubmission.
void ReadLocalModel(const std::string& dir, std::span<const char* const> environ_entries,
                    const ModelCatalog* models, JobRequest* r) {
  const FieldSource* source = r->SourceOf("model");
  if (source == nullptr ||
      (source->source != Source::kLauncher && source->source != Source::kFmteLine) ||
      !r->arch_json.empty() || r->job.model.empty())
    return;
  const bool path = LooksLikeModelPath(r->job.model, dir);
  if (!path && (models == nullptr || models->Find(r->job.model).ok())) return;
  Result<std::string> arch = LocalModelArch(r->job.model, dir, environ_entries);
  if (arch.ok())
    r->arch_json = std::move(arch).value();
  else if (path)
    r->warnings.push_back("model: " + arch.status().message());
}

Result<Submission> ReadScriptAndFiles(Submission s, const SbatchCommandLine& cl,
                                      std::span<const std::string> option_words,
                                      const std::string& cwd, const LauncherTable* launchers,
                                      std::span<const char* const> environ_entries,
                                      const SbatchOptions* allocated, const ModelCatalog* models) {
  ReadSbatchLines(s.script, &s.options);
  s.warnings = DropInvalidSbatchValues(&s.options);
  // The command line wins over #SBATCH lines, option by option.
  ApplySbatchWords(option_words, &s.options);
  if (allocated != nullptr) ApplyAllocation(*allocated, &s.options);
  for (const auto& [key, value] : s.options.spank)
    if (Status st = ValidateOption(key, value); !st.ok()) return st;
  auto facts = FactsFrom(s.options);
  if (!facts.ok()) return facts.status();
  s.facts = std::move(facts).value();
  s.dir = s.options.chdir.empty()          ? cwd
          : s.options.chdir.front() == '/' ? s.options.chdir
                                           : cwd + "/" + s.options.chdir;
  const DiskFiles files(s.dir);
  ScriptContext context;
  context.args = cl.script_args;
  context.env = SubmissionEnv(s.options, s.facts, s.dir, s.script, environ_entries);
  context.files = &files;
  context.launchers = launchers;
  // The script's folder, as ReadScript found it (relative to the current directory, else to
  // --chdir), named relative to the submission directory when it lies below it.
  if (!cl.script.empty()) {
    namespace fs = std::filesystem;
    fs::path full = cl.script.front() == '/' ? fs::path(cl.script) : fs::path(cwd) / cl.script;
    std::error_code ec;
    if (!fs::exists(full, ec) && cl.script.front() != '/') full = fs::path(s.dir) / cl.script;
    const fs::path dir = full.parent_path().lexically_normal();
    const fs::path below = dir.lexically_relative(fs::path(s.dir).lexically_normal());
    context.script_dir = !below.empty() && *below.begin() != ".." ? below.string() : dir.string();
  }
  s.request = ParseJobRequest(s.script, s.options.spank, s.facts, context);
  ReadLocalModel(s.dir, environ_entries, models, &s.request);
  return s;
}

}  // namespace

Result<Submission> ReadSubmission(std::span<const std::string> command_line, const std::string& cwd,
                                  const LauncherTable* launchers,
                                  std::span<const char* const> environ_entries,
                                  const ModelCatalog* models) {
  const SbatchCommandLine cl = SplitSbatchCommandLine(command_line);
  const std::vector<std::string> option_words = OptionWords(cl);
  SbatchOptions line_options;
  ApplySbatchWords(option_words, &line_options);
  Submission s;
  if (!cl.script.empty()) {
    auto text = ReadScript(cl.script, cwd, line_options.chdir);
    if (!text.ok()) return text.status();
    s.script = std::move(text).value();
  } else if (!line_options.wrap.empty()) {
    s.script = "#!/bin/sh\n" + line_options.wrap + "\n";
  } else {
    return Status::NotFound("the batch script comes from standard input");
  }
  return ReadScriptAndFiles(std::move(s), cl, option_words, cwd, launchers, environ_entries,
                            nullptr, models);
}

Result<Submission> ReadPastSubmission(std::string script, std::span<const std::string> command_line,
                                      const std::string& cwd, const SbatchOptions& allocated,
                                      const LauncherTable* launchers, const ModelCatalog* models) {
  Submission s;
  s.script = std::move(script);
  const SbatchCommandLine cl = SplitSbatchCommandLine(command_line);
  return ReadScriptAndFiles(std::move(s), cl, OptionWords(cl), cwd, launchers, {}, &allocated,
                            models);
}

}  // namespace fmte
