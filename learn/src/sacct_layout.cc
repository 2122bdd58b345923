#include "sacct_layout.h"

#include <algorithm>
#include <cctype>

#include "fmte/text.h"

namespace fmte::learn::internal {
namespace {

// Lower-case names of every field `sacct --helpformat` lists (Slurm 22.05, plus names added up to
// 24.x), so a header line is recognised as one and a typo in --fields is reported.
constexpr std::string_view kKnownFields[] = {
    "account",
    "admincomment",
    "alloccpus",
    "allocgres",
    "allocnodes",
    "alloctres",
    "associd",
    "avecpu",
    "avecpufreq",
    "avediskread",
    "avediskwrite",
    "avepages",
    "averss",
    "avevmsize",
    "blockid",
    "cluster",
    "comment",
    "constraints",
    "consumedenergy",
    "consumedenergyraw",
    "container",
    "cputime",
    "cputimeraw",
    "dbindex",
    "derivedexitcode",
    "elapsed",
    "elapsedraw",
    "eligible",
    "end",
    "exitcode",
    "extra",
    "failednode",
    "flags",
    "gid",
    "group",
    "jobid",
    "jobidraw",
    "jobname",
    "layout",
    "licenses",
    "maxdiskread",
    "maxdiskreadnode",
    "maxdiskreadtask",
    "maxdiskwrite",
    "maxdiskwritenode",
    "maxdiskwritetask",
    "maxpages",
    "maxpagesnode",
    "maxpagestask",
    "maxrss",
    "maxrssnode",
    "maxrsstask",
    "maxvmsize",
    "maxvmsizenode",
    "maxvmsizetask",
    "mcslabel",
    "mincpu",
    "mincpunode",
    "mincputask",
    "ncpus",
    "nnodes",
    "nodelist",
    "ntasks",
    "partition",
    "planned",
    "plannedcpu",
    "plannedcpuraw",
    "priority",
    "qos",
    "qosraw",
    "qosreq",
    "reason",
    "reqcpufreq",
    "reqcpufreqgov",
    "reqcpufreqmax",
    "reqcpufreqmin",
    "reqcpus",
    "reqgres",
    "reqmem",
    "reqnodes",
    "reqtres",
    "reservation",
    "reservationid",
    "reserved",
    "resvcpu",
    "resvcpuraw",
    "start",
    "state",
    "stdin",
    "stdout",
    "stderr",
    "submit",
    "submitline",
    "suspended",
    "systemcomment",
    "systemcpu",
    "timelimit",
    "timelimitraw",
    "totalcpu",
    "tresusageinave",
    "tresusageinmax",
    "tresusageinmaxnode",
    "tresusageinmaxtask",
    "tresusageinmin",
    "tresusageinminnode",
    "tresusageinmintask",
    "tresusageintot",
    "tresusageoutave",
    "tresusageoutmax",
    "tresusageoutmaxnode",
    "tresusageoutmaxtask",
    "tresusageoutmin",
    "tresusageoutminnode",
    "tresusageoutmintask",
    "tresusageouttot",
    "uid",
    "user",
    "usercpu",
    "wckey",
    "wckeyid",
    "workdir",
};

struct Interpreted {
  std::string_view name;
  Field field;
};
constexpr Interpreted kInterpreted[] = {
    {"jobid", kJobId},
    {"jobidraw", kJobIdRaw},
    {"jobname", kJobName},
    {"user", kUser},
    {"account", kAccount},
    {"partition", kPartition},
    {"state", kState},
    {"exitcode", kExitCode},
    {"elapsed", kElapsed},
    {"elapsedraw", kElapsedRaw},
    {"timelimit", kTimelimit},
    {"timelimitraw", kTimelimitRaw},
    {"submit", kSubmit},
    {"start", kStart},
    {"end", kEnd},
    {"alloctres", kAllocTres},
    {"reqtres", kReqTres},
    {"tresusageinmax", kTresUsageInMax},
    {"admincomment", kAdminComment},
    {"comment", kComment},
    {"nnodes", kNNodes},
    {"alloccpus", kAllocCpus},
    {"ntasks", kNTasks},
    {"maxrss", kMaxRss},
    {"workdir", kWorkDir},
    {"submitline", kSubmitLine},
};

}  // namespace

bool IsSacctFieldName(std::string_view name) {
  if (name.empty() || name.size() > 24 || !std::isalpha(static_cast<unsigned char>(name[0])))
    return false;
  const std::string lower = Lower(name);
  return std::find(std::begin(kKnownFields), std::end(kKnownFields), lower) !=
         std::end(kKnownFields);
}

std::optional<Layout> MakeLayout(const std::vector<std::string_view>& names, std::string* error) {
  Layout layout;
  layout.col.fill(-1);
  for (size_t i = 0; i < names.size(); ++i) {
    std::string_view name = names[i];
    // "JobName%30" width suffixes in --format.
    if (const size_t pct = name.find('%'); pct != std::string_view::npos)
      name = name.substr(0, pct);
    if (!IsSacctFieldName(name)) {
      if (error)
        *error = "'" + std::string(name) + "' is not a sacct field (see sacct --helpformat)";
      return std::nullopt;
    }
    const std::string lower = Lower(name);
    Field f = kIgnored;
    for (const auto& e : kInterpreted) {
      if (e.name == lower) f = e.field;
    }
    layout.columns.push_back(f);
    if (f != kIgnored && layout.col[f] < 0) layout.col[f] = static_cast<int16_t>(i);
  }
  return layout;
}

std::optional<std::vector<std::string>> FieldsOfSacctCommand(std::string_view line) {
  if (line.starts_with("$")) line.remove_prefix(1);
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t j = i;
    while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
    if (j > i) tokens.push_back(line.substr(i, j - i));
    i = j;
  }
  if (tokens.empty() || (tokens[0] != "sacct" && !tokens[0].ends_with("/sacct")))
    return std::nullopt;
  std::string_view list;
  for (size_t t = 1; t < tokens.size(); ++t) {
    const std::string_view tok = tokens[t];
    const bool has_next = t + 1 < tokens.size();
    if (tok.starts_with("--format=")) {
      list = tok.substr(9);
    } else if (tok == "--format" && has_next) {
      list = tokens[++t];
    } else if (tok.size() >= 2 && tok[0] == '-' && tok[1] != '-') {
      // Short option cluster ("-pno"): 'o' takes the rest of the token or the next token.
      const size_t o = tok.find('o', 1);
      if (o == std::string_view::npos) continue;
      if (o + 1 < tok.size()) {
        list = tok.substr(o + 1);
      } else if (has_next) {
        list = tokens[++t];
      }
    }
  }
  std::vector<std::string> fields;
  if (list.empty())
    list = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode";  // sacct's default
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (comma != 0) fields.emplace_back(list.substr(0, comma));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return fields;
}

}  // namespace fmte::learn::internal
