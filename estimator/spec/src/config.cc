// fmte.conf: Slurm-style Key=Value words (slurm.conf(5) conventions: '#' comments, case-insensitive
// keys, PartitionName= lines with per-partition values, PartitionName=DEFAULT for the defaults of
// later partition lines). Every key has a default (config.h).
#include "fmte/config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "fmte/file.h"
#include "fmte/text.h"

namespace fmte {
namespace {

constexpr size_t kMaxConfigBytes = size_t{1} << 20;

struct Pair {
  std::string key;  // lower-case
  std::string shown_key;
  std::string value;
};
struct Line {
  int number = 0;
  std::vector<Pair> pairs;
};

std::string Where(std::string_view origin, int line, std::string_view key) {
  return std::string(origin) + ":" + std::to_string(line) + ": " + std::string(key) + ": ";
}

Result<bool> YesNo(std::string_view v, const std::string& where) {
  const std::string l = Lower(v);
  if (l == "yes" || l == "true" || l == "1" || l == "on") return true;
  if (l == "no" || l == "false" || l == "0" || l == "off") return false;
  return Status::InvalidArgument(where + "expected yes|no, got '" + Shown(v) + "'");
}

// A signal as sbatch --signal names it: a number in [1, 64] or a name, with or without SIG.
int SignalNumber(std::string_view text) {
  std::string s = Lower(text);
  if (s.rfind("sig", 0) == 0) s = s.substr(3);
  if (!s.empty() && std::isdigit(static_cast<unsigned char>(s[0]))) {
    auto n = ParseBoundedInt(s, 1, 64, "signal");
    return n.ok() ? static_cast<int>(*n) : 0;
  }
  static constexpr std::pair<const char*, int> kNames[] = {
      {"hup", SIGHUP},   {"int", SIGINT},     {"quit", SIGQUIT}, {"abrt", SIGABRT},
      {"kill", SIGKILL}, {"usr1", SIGUSR1},   {"usr2", SIGUSR2}, {"alrm", SIGALRM},
      {"term", SIGTERM}, {"cont", SIGCONT},   {"stop", SIGSTOP}, {"tstp", SIGTSTP},
      {"urg", SIGURG},   {"xcpu", SIGXCPU},   {"xfsz", SIGXFSZ}, {"vtalrm", SIGVTALRM},
      {"prof", SIGPROF}, {"winch", SIGWINCH}, {"pwr", SIGPWR},   {"sys", SIGSYS}};
  for (const auto& [name, number] : kNames)
    if (s == name) return number;
  return 0;
}

// WarnSignal=[B:]SIG[@SECONDS] | off.
Status ParseWarnSignal(std::string_view value, const std::string& where, PartitionConfig* c) {
  const std::string l = Lower(value);
  if (l == "off" || l == "none" || l == "no" || l.empty()) {
    c->warn_signal = 0;
    c->warn_time_s = 0;
    c->warn_batch_only = false;
    return Status::Ok();
  }
  const auto bad = [&] {
    return Status::InvalidArgument(where +
                                   "expected [B:]SIGNAL[@SECONDS] (e.g. USR1@600) or off, "
                                   "got '" +
                                   Shown(value) + "'");
  };
  std::string_view v = value;
  bool batch = false;
  if (v.size() > 2 && (v[0] == 'B' || v[0] == 'b') && v[1] == ':') {
    batch = true;
    v.remove_prefix(2);
  }
  const size_t at = v.find('@');
  const int sig = SignalNumber(v.substr(0, at));
  if (sig == 0) return bad();
  int64_t seconds = 60;  // sbatch's default (proc_args.c get_signal_opts)
  if (at != std::string_view::npos) {
    auto r = ParseBoundedInt(v.substr(at + 1), 1, 65535,
                             where.substr(0, where.size() - 2) + " seconds after '@'");
    if (!r.ok()) return r.status();
    seconds = *r;
  }
  c->warn_signal = sig;
  c->warn_time_s = static_cast<int>(seconds);
  c->warn_batch_only = batch;
  return Status::Ok();
}

// Applies a key that may be global or per partition. Returns NotFound for keys it does not know.
Status ApplyPartitionKey(const Pair& p, const std::string& where, PartitionConfig* c) {
  const std::string& k = p.key;
  const std::string v = Lower(p.value);
  if (k == "mode") {
    if (v == "enforce")
      c->mode = Mode::kEnforce;
    else if (v == "advise")
      c->mode = Mode::kAdvise;
    else if (v == "off")
      c->mode = Mode::kOff;
    else
      return Status::InvalidArgument(where + "expected enforce|advise|off, got '" + Shown(p.value) +
                                     "'");
  } else if (k == "gpu") {
    if (p.value.size() > 64)
      return Status::InvalidArgument(where + "GPU name longer than 64 bytes");
    c->gpu = p.value;
  } else if (k == "usablememoryfraction") {
    auto r = ParseBoundedDouble(p.value, 0.01, 1.0, where.substr(0, where.size() - 2));
    if (!r.ok()) return r.status();
    c->usable_memory_fraction = *r;
  } else if (k == "defaulttimefactor") {
    auto r = ParseBoundedDouble(p.value, 1.0, 100.0, where.substr(0, where.size() - 2));
    if (!r.ok()) return r.status();
    c->default_time_factor = *r;
  } else if (k == "maxtime" || k == "partitionmaxtime") {
    auto r = ParseSlurmTimeMinutes(p.value, where.substr(0, where.size() - 2));
    if (!r.ok()) return r.status();
    c->max_time_min = *r;
  } else if (k == "mintime") {
    auto r = ParseSlurmTimeMinutes(p.value, where.substr(0, where.size() - 2));
    if (!r.ok()) return r.status();
    c->min_time_min = *r;
  } else if (k == "shortlimit") {
    if (v == "warn")
      c->short_limit = ShortLimit::kWarn;
    else if (v == "reject")
      c->short_limit = ShortLimit::kReject;
    else
      return Status::InvalidArgument(where + "expected warn|reject, got '" + Shown(p.value) + "'");
  } else if (k == "rightsizing") {
    auto r = YesNo(p.value, where);
    if (!r.ok()) return r.status();
    c->right_sizing = *r;
  } else if (k == "raisegpus") {
    auto r = YesNo(p.value, where);
    if (!r.ok()) return r.status();
    c->raise_gpus = *r;
  } else if (k == "maxgpusperjob") {
    auto r = ParseBoundedInt(p.value, 1, 1 << 20, where.substr(0, where.size() - 2));
    if (!r.ok()) return r.status();
    c->max_gpus_per_job = *r;
  } else if (k == "warnsignal") {
    return ParseWarnSignal(p.value, where, c);
  } else if (k == "operatorset") {
    const bool none = v.empty() || v == "none";
    const bool name_ok = p.value.size() <= 64 && p.value != "." && p.value != ".." &&
                         std::all_of(p.value.begin(), p.value.end(), [](char ch) {
                           return std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' ||
                                  ch == '_' || ch == '-';
                         });
    if (!none && !name_ok)
      return Status::InvalidArgument(where +
                                     "expected the name of a regressor set (letters, digits, "
                                     "'.', '_', '-'; at most 64), e.g. Perlmutter, got '" +
                                     Shown(p.value) + "'");
    c->operator_set = none ? std::string() : p.value;
  } else if (k == "gpuspernode") {
    auto r = ParseBoundedInt(p.value, 1, 1024, where.substr(0, where.size() - 2));
    if (!r.ok()) return r.status();
    c->gpus_per_node = *r;
  } else {
    return Status::NotFound(k);
  }
  return Status::Ok();
}

Status ApplyGlobalKey(const Pair& p, const std::string& where, Config* c) {
  const std::string& k = p.key;
  if (k == "onerror") {
    const std::string v = Lower(p.value);
    if (v == "accept")
      c->on_error = OnError::kAccept;
    else if (v == "reject")
      c->on_error = OnError::kReject;
    else
      return Status::InvalidArgument(where + "expected accept|reject, got '" + Shown(p.value) +
                                     "'");
  } else if (k == "grestypegpu") {
    // a100:A100-SXM4-80GB,h100:H100-SXM
    std::string_view rest = p.value;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string_view item = Trim(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      if (item.empty()) continue;
      const size_t colon = item.find(':');
      if (colon == std::string_view::npos || colon == 0 || colon + 1 == item.size())
        return Status::InvalidArgument(where + "expected type:GPU[,type:GPU...], got '" +
                                       Shown(item) + "'");
      if (c->gres_type_gpu.size() >= 256)
        return Status::InvalidArgument(where + "more than 256 gres types");
      c->gres_type_gpu.emplace_back(Lower(item.substr(0, colon)),
                                    std::string(item.substr(colon + 1)));
    }
  } else if (k == "catalogdir") {
    c->catalog_dir = p.value;
  } else if (k == "regressorsdir") {
    c->regressors_dir = p.value;
  } else if (k == "suggestpartitions") {
    auto r = YesNo(p.value, where);
    if (!r.ok()) return r.status();
    c->suggest_partitions = *r;
  } else if (k == "clientdecisions") {
    auto r = YesNo(p.value, where);
    if (!r.ok()) return r.status();
    c->client_decisions = *r;
  } else if (k == "defaultpartition") {
    c->default_partition = p.value;
  } else {
    return ApplyPartitionKey(p, where, &c->defaults);
  }
  return Status::Ok();
}

Status Unknown(const std::string& where) {
  return Status::InvalidArgument(
      where +
      "unknown key (known: Mode, Gpu, UsableMemoryFraction, DefaultTimeFactor, MaxTime, "
      "MinTime, ShortLimit, RaiseGpus, RightSizing, MaxGpusPerJob, GpusPerNode, WarnSignal, "
      "OperatorSet, "
      "OnError, "
      "GresTypeGpu, "
      "CatalogDir, RegressorsDir, SuggestPartitions, ClientDecisions, DefaultPartition, "
      "PartitionName, Default)");
}

}  // namespace

std::string_view ToString(Mode m) {
  return m == Mode::kEnforce ? "enforce" : m == Mode::kAdvise ? "advise" : "off";
}
std::string_view ToString(ShortLimit s) { return s == ShortLimit::kWarn ? "warn" : "reject"; }
std::string_view ToString(OnError o) { return o == OnError::kAccept ? "accept" : "reject"; }

Result<Config> ParseConfig(std::string_view text, std::string_view origin) {
  if (text.size() > kMaxConfigBytes)
    return Status::InvalidArgument(std::string(origin) + ": larger than 1 MiB");
  std::vector<Line> lines;
  int number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view raw = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++number;
    const size_t hash = raw.find('#');
    if (hash != std::string_view::npos) raw = raw.substr(0, hash);
    Line line{number, {}};
    size_t i = 0;
    while (i < raw.size()) {
      while (i < raw.size() && std::isspace(static_cast<unsigned char>(raw[i]))) ++i;
      if (i >= raw.size()) break;
      size_t e = i;
      while (e < raw.size() && !std::isspace(static_cast<unsigned char>(raw[e]))) ++e;
      const std::string_view word = raw.substr(i, e - i);
      i = e;
      const size_t eq = word.find('=');
      if (eq == std::string_view::npos || eq == 0)
        return Status::ParseError(std::string(origin) + ":" + std::to_string(number) +
                                  ": expected Key=Value, got '" + Shown(word) + "'");
      std::string value(word.substr(eq + 1));
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
          value.back() == value.front())
        value = value.substr(1, value.size() - 2);
      line.pairs.push_back(
          Pair{Lower(word.substr(0, eq)), std::string(word.substr(0, eq)), std::move(value)});
    }
    if (!line.pairs.empty()) lines.push_back(std::move(line));
  }

  Config c;
  // Pass 1: global lines (anywhere in the file) set the defaults every partition starts from.
  for (const Line& l : lines) {
    if (l.pairs.front().key == "partitionname") continue;
    for (const Pair& p : l.pairs) {
      const std::string where = Where(origin, l.number, p.shown_key);
      if (p.key == "default")
        return Status::InvalidArgument(where + "only valid on a PartitionName= line");
      const Status s = ApplyGlobalKey(p, where, &c);
      if (s.code() == Status::Code::kNotFound) return Unknown(where);
      if (!s.ok()) return s;
    }
  }
  // Pass 2: partition lines in order; PartitionName=DEFAULT changes what later ones start from.
  PartitionConfig base = c.defaults;
  for (const Line& l : lines) {
    if (l.pairs.front().key != "partitionname") continue;
    const std::string& name = l.pairs.front().value;
    const bool is_default = Lower(name) == "default";
    if (name.empty() || name.size() > 128)
      return Status::InvalidArgument(Where(origin, l.number, "PartitionName") +
                                     "expected a partition name");
    PartitionConfig* target = &base;
    PartitionConfig scratch;
    if (!is_default) {
      auto it = std::find_if(c.partitions.begin(), c.partitions.end(),
                             [&](const PartitionConfig& p) { return p.name == name; });
      if (it == c.partitions.end()) {
        scratch = base;
        scratch.name = name;
        c.partitions.push_back(scratch);
        target = &c.partitions.back();
      } else {
        target = &*it;
      }
    }
    for (size_t k = 1; k < l.pairs.size(); ++k) {
      const Pair& p = l.pairs[k];
      const std::string where = Where(origin, l.number, p.shown_key);
      if (p.key == "default") {
        auto yes = YesNo(p.value, where);
        if (!yes.ok()) return yes.status();
        if (*yes && !is_default) c.default_partition = name;
        continue;
      }
      const Status s = ApplyPartitionKey(p, where, target);
      if (s.code() == Status::Code::kNotFound) {
        return Status::InvalidArgument(
            where +
            "not a per-partition key (per partition: Mode, Gpu, "
            "UsableMemoryFraction, DefaultTimeFactor, MaxTime, MinTime, ShortLimit, "
            "RaiseGpus, RightSizing, MaxGpusPerJob, GpusPerNode, Default)");
      }
      if (!s.ok()) return s;
    }
  }
  return c;
}

Result<Config> LoadConfigFile(const std::string& path) {
  Result<std::string> text = ReadFile(path, "fmte.conf", kMaxConfigBytes);
  if (!text.ok()) return text.status();
  return ParseConfig(*text, path);
}

const PartitionConfig& Config::For(std::string_view partition) const {
  std::string_view name = partition.empty() ? std::string_view(default_partition) : partition;
  // A multi-partition request ("gpu,gpu-big"): the first listed partition's settings.
  name = name.substr(0, name.find(','));
  for (const PartitionConfig& p : partitions)
    if (p.name == name) return p;
  return defaults;
}

std::string Config::GpuNameFor(std::string_view partition, std::string_view gres_type) const {
  const std::string type = Lower(gres_type);
  if (!type.empty())
    for (const auto& [t, gpu] : gres_type_gpu)
      if (t == type) return gpu;
  const PartitionConfig& p = For(partition);
  if (!p.gpu.empty()) return p.gpu;
  return std::string(gres_type);
}

std::string FindConfigPath(std::string_view slurm_conf_path) {
  const size_t slash = slurm_conf_path.rfind('/');
  if (slash == std::string_view::npos) return "fmte.conf";
  return std::string(slurm_conf_path.substr(0, slash + 1)) + "fmte.conf";
}

Result<int64_t> ParseSlurmTimeMinutes(std::string_view text, std::string_view field) {
  const std::string t = Lower(Trim(text));
  if (t == "unlimited" || t == "infinite") return int64_t{0};
  const auto bad = [&]() {
    return Status::InvalidArgument(
        std::string(field) +
        ": expected a Slurm time (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED), got '" +
        Shown(text) + "'");
  };
  if (t.empty() || t.size() > 32) return bad();
  int64_t days = 0;
  std::string_view rest = t;
  const size_t dash = rest.find('-');
  const bool has_days = dash != std::string_view::npos;
  if (has_days) {
    auto d = ParseBoundedInt(rest.substr(0, dash), 0, 100000, field);
    if (!d.ok()) return bad();
    days = *d;
    rest = rest.substr(dash + 1);
  }
  std::vector<int64_t> parts;
  while (true) {
    const size_t colon = rest.find(':');
    auto v = ParseBoundedInt(rest.substr(0, colon), 0, int64_t{1} << 32, field);
    if (!v.ok()) return bad();
    parts.push_back(*v);
    if (colon == std::string_view::npos) break;
    rest = rest.substr(colon + 1);
    if (parts.size() >= 3) return bad();
  }
  int64_t seconds = 0;
  if (has_days) {  // D-H, D-H:M, D-H:M:S
    const int64_t h = parts[0], m = parts.size() > 1 ? parts[1] : 0,
                  s = parts.size() > 2 ? parts[2] : 0;
    seconds = ((days * 24 + h) * 60 + m) * 60 + s;
  } else if (parts.size() == 1) {
    seconds = parts[0] * 60;
  } else if (parts.size() == 2) {  // M:S
    seconds = parts[0] * 60 + parts[1];
  } else {  // H:M:S
    seconds = (parts[0] * 60 + parts[1]) * 60 + parts[2];
  }
  return (seconds + 59) / 60;
}

std::string FormatSlurmTime(int64_t minutes) {
  if (minutes <= 0) return "UNLIMITED";
  // "[D-]HH:MM:00" (printf "%lld-%02lld:%02lld:00"), without printf: the policy formats two or
  // three of these per decision inside slurmctld.
  const int64_t d = minutes / (24 * 60), h = minutes / 60 % 24, m = minutes % 60;
  char buf[40];
  char* p = buf;
  if (d > 0) {
    p = std::to_chars(p, buf + 24, d).ptr;
    *p++ = '-';
  }
  for (int64_t two : {h, m}) {
    *p++ = static_cast<char>('0' + two / 10);
    *p++ = static_cast<char>('0' + two % 10);
    *p++ = ':';
  }
  *p++ = '0';
  *p++ = '0';
  return std::string(buf, p);
}

}  // namespace fmte
