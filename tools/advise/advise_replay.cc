// fmte-advise replay PATH... [--sacct FILE] [--json]: shadow mode for the sysadmin. Runs the
// admission policy, as enforce mode would, over past batch scripts (files, folders of them, or the
// output of `sacct --batch-script`), joins what really happened from a sacct export (completed,
// TIMEOUT, OUT_OF_MEMORY, a CUDA out-of-memory seen as FAILED) and counts what a sysadmin must
// know before switching Mode=enforce: rejections of jobs that completed, time limits below what a
// job really ran. Exit codes: 0 done, 2 usage error, 1 failure (nothing to read, catalogs).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "admission.h"
#include "cli.h"
#include "commands.h"
#include "fmte/learn/sacct.h"
#include "fmte/policy.h"
#include "fmte/submission.h"
#include "job_options.h"
#include "output.h"

namespace fmte::advise {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSummary =
    "What Mode=enforce would have done to past jobs: the admission policy over their batch "
    "scripts\n"
    "(files, folders of them, or `sacct --batch-script` output with AccountingStoreFlags="
    "job_script),\n"
    "joined by job id with a sacct export (--sacct) to what really happened. Counts the false\n"
    "rejections (rejected jobs that completed), the limits that would have killed jobs (a new "
    "time\n"
    "limit below the real run time), the rejected jobs that ran out of memory and the ones fmte "
    "let\n"
    "through. Export with:\n"
    "  sacct -a -P -S 2026-10-01 --format=JobID,JobIDRaw,State,ExitCode,Elapsed,Timelimit,"
    "Partition,\n"
    "        AllocTRES,NNodes,WorkDir,TRESUsageInMax,AdminComment,Comment > acct.txt\n"
    "  sacct -a -X -B -S 2026-10-01 > scripts.txt\n"
    "  fmte-advise replay scripts.txt --sacct acct.txt";

constexpr size_t kMaxScriptBytes = 1 << 20;  // as sbatch's own default limit on a batch script
constexpr size_t kMaxScripts = 200000;
constexpr std::string_view kBatchScriptHeader = "Batch Script for ";

int Fail(const Status& s) { return cli::ReportError("fmte-advise", s); }

struct PastScript {
  std::string origin;  // "dir/123.sh", or "scripts.txt:41" for sacct -B output
  std::string job_id;  // from the sacct -B header or the file name; empty: not known
  std::string text;
  std::string dir;  // the script's folder (where its files are looked for without WorkDir)
};

// The job id a file name carries: "12345.sh", "slurm-12345.sbatch", "job_12345_7", "12345";
// empty otherwise ("llama3_8b.sh" carries none).
std::string JobIdFromName(const fs::path& p) {
  std::string stem = p.filename().string();
  if (const size_t dot = stem.find('.'); dot != std::string::npos) stem.resize(dot);
  size_t i = 0;
  while (i < stem.size() && std::isalpha(static_cast<unsigned char>(stem[i]))) ++i;
  if (i > 0) {
    if (i == stem.size() || (stem[i] != '-' && stem[i] != '_')) return "";
    ++i;
  }
  const std::string id = stem.substr(i);
  const size_t first_non_digit = id.find_first_not_of("0123456789");
  if (id.empty() || first_non_digit == 0) return "";
  if (first_non_digit == std::string::npos) return id;
  if (id[first_non_digit] == '_' &&
      id.find_first_not_of("0123456789", first_non_digit + 1) == std::string::npos &&
      first_non_digit + 1 < id.size())
    return id;
  return "";
}

Result<std::string> ReadBounded(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return Status::IoError(p.string() + ": cannot open");
  std::string text(kMaxScriptBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxScriptBytes)
    return Status::InvalidArgument(p.string() + ": larger than 1 MiB; not a batch script");
  return text;
}

// `sacct --batch-script` output: for each job "Batch Script for ID", a line of 80 '-', the script
// (or "NONE" when it was not stored) and an empty line.
void SplitSacctScripts(const std::string& text, const std::string& name, const std::string& dir,
                       std::vector<PastScript>* out, int64_t* not_stored) {
  // The next "Batch Script for " at the start of a line from `from` on, else text.size().
  const auto header_at = [&text](size_t from) {
    size_t at = text.find(kBatchScriptHeader, from);
    while (at != std::string::npos && at > 0 && text[at - 1] != '\n')
      at = text.find(kBatchScriptHeader, at + 1);
    return at == std::string::npos ? text.size() : at;
  };
  size_t pos = 0, line = 1;
  while (pos < text.size()) {
    const size_t next = header_at(pos);
    if (next == text.size()) break;
    line += static_cast<size_t>(std::count(text.begin() + pos, text.begin() + next, '\n'));
    const size_t id_end = text.find('\n', next);
    PastScript s;
    s.job_id = text.substr(
        next + kBatchScriptHeader.size(),
        (id_end == std::string::npos ? text.size() : id_end) - next - kBatchScriptHeader.size());
    s.origin = name + ":" + std::to_string(line);
    s.dir = dir;
    size_t body = id_end == std::string::npos ? text.size() : id_end + 1;
    if (text.compare(body, 8, "--------") == 0) {
      const size_t dashes_end = text.find('\n', body);
      body = dashes_end == std::string::npos ? text.size() : dashes_end + 1;
    }
    const size_t end = header_at(body);
    s.text = text.substr(body, end - body);
    line += static_cast<size_t>(std::count(text.begin() + next, text.begin() + end, '\n'));
    pos = end;
    if (s.text.starts_with("NONE\n") || s.text.find_first_not_of(" \n") == std::string::npos) {
      ++*not_stored;
      continue;
    }
    out->push_back(std::move(s));
  }
}

bool LooksLikeBatchScript(const fs::path& p, std::string_view text) {
  const std::string ext = p.extension().string();
  static const std::string_view kExtensions[] = {".sh",  ".sbatch", ".slurm", ".sbat",
                                                 ".job", ".batch",  ".bash"};
  const bool named =
      std::find(std::begin(kExtensions), std::end(kExtensions), ext) != std::end(kExtensions);
  if (text.find('\0') != std::string_view::npos) return false;
  if (text.starts_with("#!")) return named || ext.empty();
  return named && text.find("#SBATCH") != std::string_view::npos;
}

Status CollectScripts(const std::string& path, std::vector<PastScript>* out,
                      std::vector<std::string>* skipped, int64_t* not_stored) {
  std::error_code ec;
  const fs::path root(path);
  if (fs::is_directory(root, ec)) {
    std::vector<fs::path> files;
    for (fs::recursive_directory_iterator
             it(root, fs::directory_options::skip_permission_denied, ec),
         end;
         it != end && files.size() < kMaxScripts; it.increment(ec)) {
      if (ec) break;
      if (it->is_regular_file(ec) && it->file_size(ec) <= kMaxScriptBytes)
        files.push_back(it->path());
    }
    if (ec) return Status::IoError(path + ": cannot list: " + ec.message());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      auto text = ReadBounded(f);
      if (!text.ok()) {
        skipped->push_back(text.status().message());
        continue;
      }
      if (text->starts_with(kBatchScriptHeader)) {
        SplitSacctScripts(*text, f.string(), f.parent_path().string(), out, not_stored);
      } else if (LooksLikeBatchScript(f, *text)) {
        out->push_back(
            {f.string(), JobIdFromName(f), std::move(text).value(), f.parent_path().string()});
      }
    }
    return Status::Ok();
  }
  if (!fs::exists(root, ec))
    return Status::NotFound("PATH: '" + path +
                            "' does not exist (a batch script, a folder of "
                            "them, or sacct --batch-script output)");
  auto text = ReadBounded(root);
  if (!text.ok()) return text.status();
  const std::string dir = root.has_parent_path() ? root.parent_path().string() : ".";
  if (text->starts_with(kBatchScriptHeader)) {
    SplitSacctScripts(*text, path, dir, out, not_stored);
  } else {
    out->push_back({path, JobIdFromName(root), std::move(text).value(), dir});
  }
  return Status::Ok();
}

// What really happened to a job, as far as sacct tells.
enum class Outcome { kNotJoined, kCompleted, kTimeout, kOutOfMemory, kCudaOom, kFailed, kOther };

std::string_view ToString(Outcome o) {
  switch (o) {
    case Outcome::kNotJoined:
      return "unknown";
    case Outcome::kCompleted:
      return "completed";
    case Outcome::kTimeout:
      return "timeout";
    case Outcome::kOutOfMemory:
      return "out_of_memory";
    case Outcome::kCudaOom:
      return "cuda_oom";
    case Outcome::kFailed:
      return "failed";
    case Outcome::kOther:
      return "other";
  }
  return "other";
}

// A CUDA out-of-memory error ends the job as FAILED; sacct cannot tell it from any other failure
// except by the GPU memory the job reached (jobstats, or gres/gpumem in TRESUsageInMax): a failed
// job whose peak came within 5% of its GPU's memory is taken for one.
constexpr double kCudaOomPeakFraction = 0.95;

Outcome OutcomeOf(const learn::JobRecord* j, int64_t capacity_bytes) {
  if (j == nullptr) return Outcome::kNotJoined;
  switch (j->state) {
    case learn::JobState::kCompleted:
      return Outcome::kCompleted;
    case learn::JobState::kTimeout:
      return Outcome::kTimeout;
    case learn::JobState::kOutOfMemory:
      return Outcome::kOutOfMemory;
    case learn::JobState::kFailed:
      if (capacity_bytes > 0 && j->gpu_peak_bytes != learn::kUnknownValue &&
          static_cast<double>(j->gpu_peak_bytes) >=
              kCudaOomPeakFraction * static_cast<double>(capacity_bytes))
        return Outcome::kCudaOom;
      return Outcome::kFailed;
    default:
      return Outcome::kOther;
  }
}

bool RanOutOfMemory(Outcome o) { return o == Outcome::kOutOfMemory || o == Outcome::kCudaOom; }

// What enforce mode's decision means next to the outcome: the one-word verdicts the summary
// counts.
std::string VerdictOf(const Decision& d, Outcome o, const learn::JobRecord* j) {
  if (!d.touched || o == Outcome::kNotJoined) return "";
  if (d.kind == DecisionKind::kReject) {
    if (o == Outcome::kCompleted) return "false_rejection";
    if (RanOutOfMemory(o)) return "rejected_oom";
    return "rejected";
  }
  if (RanOutOfMemory(o)) return "missed_oom";
  if (d.new_time_limit_min > 0 && j != nullptr && j->elapsed_s != learn::kUnknownValue) {
    const int64_t limit_s = d.new_time_limit_min * 60;
    if (o == Outcome::kCompleted && j->elapsed_s > limit_s) return "limit_would_kill";
    if (o == Outcome::kTimeout && j->time_limit_s != learn::kUnknownValue &&
        limit_s > j->time_limit_s)
      return "limit_raised_for_timeout";
  }
  return "";
}

// The sbatch options of what Slurm gave the job, applied over the script's.
SbatchOptions AllocationOf(const learn::JobRecord& j) {
  SbatchOptions o;
  o.partition = j.partition;
  if (j.time_limit_s > 0 && j.time_limit_s != learn::kUnknownValue)
    o.time = std::to_string((j.time_limit_s + 59) / 60);
  const int64_t nodes = j.nodes > 0 && j.nodes != learn::kUnknownValue ? j.nodes : 0;
  if (nodes > 0) o.nodes = std::to_string(nodes);
  if (j.gpus > 0 && j.gpus != learn::kUnknownValue) {
    const std::string type = j.gpu_type.empty() ? "" : j.gpu_type + ":";
    if (nodes > 0 && j.gpus % nodes == 0)
      o.gpus_per_node = type + std::to_string(j.gpus / nodes);
    else
      o.gpus = type + std::to_string(j.gpus);
  }
  return o;
}

std::vector<std::string> SplitWords(std::string_view s) {
  std::vector<std::string> words;
  std::istringstream in{std::string(s)};
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

struct Replayed {
  const PastScript* script = nullptr;
  const learn::JobRecord* job = nullptr;
  bool read = false;  // ReadPastSubmission succeeded
  std::string read_error;
  JobRequest request;
  Decision decision;
  Outcome outcome = Outcome::kNotJoined;
  std::string verdict;
};

std::string DecisionWord(const Replayed& r) {
  if (!r.read) return "unreadable";
  if (!r.decision.touched) return "untouched";
  return std::string(ToString(r.decision.kind));
}

double GpuHours(const learn::JobRecord* j) {
  if (j == nullptr || j->elapsed_s <= 0 || j->gpus <= 0) return 0;
  return static_cast<double>(j->elapsed_s) * static_cast<double>(j->gpus) / 3600.0;
}

struct Counts {
  int64_t scripts = 0, joined = 0, unreadable = 0, llm = 0, estimated = 0, errors = 0;
  std::map<std::string, int64_t> decisions, outcomes, verdicts;
  int64_t time_limits_set = 0, gpus_raised = 0;
  double false_rejection_gpu_hours = 0, rejected_oom_gpu_hours = 0;
};

Counts Count(const std::vector<Replayed>& all) {
  Counts c;
  for (const Replayed& r : all) {
    ++c.scripts;
    if (r.job != nullptr) ++c.joined;
    if (!r.read) ++c.unreadable;
    ++c.decisions[DecisionWord(r)];
    if (r.job != nullptr) ++c.outcomes[std::string(ToString(r.outcome))];
    if (!r.read) continue;
    if (r.request.is_llm_job) ++c.llm;
    if (r.decision.estimated) ++c.estimated;
    if (r.decision.error) ++c.errors;
    if (r.decision.new_time_limit_min > 0) ++c.time_limits_set;
    if (r.decision.new_gpus > 0) ++c.gpus_raised;
    if (!r.verdict.empty()) ++c.verdicts[r.verdict];
    if (r.verdict == "false_rejection") c.false_rejection_gpu_hours += GpuHours(r.job);
    if (r.verdict == "rejected_oom") c.rejected_oom_gpu_hours += GpuHours(r.job);
  }
  return c;
}

int64_t Get(const std::map<std::string, int64_t>& m, const std::string& k) {
  const auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

nlohmann::json JobJson(const Replayed& r) {
  nlohmann::json j = {{"script", r.script->origin},
                      {"job_id", r.script->job_id},
                      {"decision", DecisionWord(r)},
                      {"touched", r.read && r.decision.touched},
                      {"error", r.read && r.decision.error},
                      {"outcome", std::string(ToString(r.outcome))},
                      {"verdict", r.verdict}};
  if (!r.read) {
    j["read_error"] = r.read_error;
    return j;
  }
  const Decision& d = r.decision;
  j["request"] = {{"is_llm_job", r.request.is_llm_job},
                  {"launcher", r.request.launcher},
                  {"model", r.request.job.model},
                  {"files_read", r.request.files_read}};
  j["partition"] = d.partition;
  j["gpu"] = d.gpu;
  j["reasons"] = d.reasons;
  if (d.estimated) {
    j["per_gpu_bytes"] = d.estimate.memory.per_gpu_bytes;
    j["usable_bytes"] = d.usable_bytes;
    j["gpus"] = d.job.gpus;
  }
  j["rewrite"] = {{"time_limit_min", d.new_time_limit_min}, {"gpus", d.new_gpus}};
  if (r.job != nullptr) {
    const learn::JobRecord& a = *r.job;
    auto known = [](int64_t v) {
      return v == learn::kUnknownValue ? nlohmann::json() : nlohmann::json(v);
    };
    j["sacct"] = {
        {"state", std::string(learn::ToString(a.state))}, {"elapsed_s", known(a.elapsed_s)},
        {"time_limit_s", known(a.time_limit_s)},          {"gpus", known(a.gpus)},
        {"gpu_peak_bytes", known(a.gpu_peak_bytes)},      {"work_dir", a.work_dir}};
  }
  return j;
}

nlohmann::json SummaryJson(const Counts& c) {
  return {{"scripts", c.scripts},
          {"joined", c.joined},
          {"unreadable", c.unreadable},
          {"llm_jobs", c.llm},
          {"estimated", c.estimated},
          {"errors", c.errors},
          {"decisions", c.decisions},
          {"outcomes", c.outcomes},
          {"time_limits_set", c.time_limits_set},
          {"gpus_raised", c.gpus_raised},
          {"false_rejections", Get(c.verdicts, "false_rejection")},
          {"limits_that_would_kill", Get(c.verdicts, "limit_would_kill")},
          {"rejected_oom", Get(c.verdicts, "rejected_oom")},
          {"missed_oom", Get(c.verdicts, "missed_oom")},
          {"limits_raised_for_timeouts", Get(c.verdicts, "limit_raised_for_timeout")},
          {"false_rejection_gpu_hours", c.false_rejection_gpu_hours},
          {"rejected_oom_gpu_hours", c.rejected_oom_gpu_hours}};
}

std::string Elapsed(const learn::JobRecord* j) {
  if (j == nullptr || j->elapsed_s == learn::kUnknownValue) return "";
  return FormatSlurmTime((j->elapsed_s + 59) / 60);
}

void PrintReplay(std::ostream& os, const std::vector<Replayed>& all, const Counts& c,
                 const std::string& config_path, bool with_sacct) {
  os << "config:  " << config_path << " (advise partitions replayed as enforce)\n\n";
  tools::TextTable t("llllllll");
  t.AddRow(
      {"job", "script", "model", "decision", "per GPU/usable", "new limit", "sacct", "verdict"});
  for (const Replayed& r : all) {
    const Decision& d = r.decision;
    std::string mem, limit;
    if (r.read && d.estimated)
      mem = tools::FormatGiB(d.estimate.memory.per_gpu_bytes) + "/" +
            tools::FormatGiB(d.usable_bytes);
    if (r.read && d.new_time_limit_min > 0) limit = FormatSlurmTime(d.new_time_limit_min);
    std::string sacct;
    if (r.job != nullptr) sacct = std::string(ToString(r.outcome)) + " " + Elapsed(r.job);
    t.AddRow({r.script->job_id.empty() ? "-" : r.script->job_id, r.script->origin,
              r.read ? r.request.job.model : "", DecisionWord(r), mem, limit, sacct, r.verdict});
  }
  t.Print(os);
  os << "\nscripts: " << c.scripts << " (LLM training " << c.llm << ", estimated " << c.estimated
     << ", could not estimate " << c.errors << ", unreadable " << c.unreadable << ")";
  if (with_sacct) os << "; joined with sacct: " << c.joined;
  os << "\nenforce mode would have: accepted " << Get(c.decisions, "accept") << ", rewritten "
     << Get(c.decisions, "rewrite") << " (time limit set " << c.time_limits_set << ", GPUs raised "
     << c.gpus_raised << "), rejected " << Get(c.decisions, "reject") << "; untouched "
     << Get(c.decisions, "untouched") << "\n";
  if (!with_sacct) {
    os << "(no --sacct export: what happened to the jobs is not known)\n";
    return;
  }
  char hours[64];
  std::snprintf(hours, sizeof hours, "%.1f", c.false_rejection_gpu_hours);
  os << "false rejections (rejected, but the job completed): " << Get(c.verdicts, "false_rejection")
     << " (" << hours << " GPU-hours of work refused)\n";
  os << "limits that would have killed a job (below its real run time): "
     << Get(c.verdicts, "limit_would_kill") << "\n";
  std::snprintf(hours, sizeof hours, "%.1f", c.rejected_oom_gpu_hours);
  os << "rejected jobs that ran out of memory: " << Get(c.verdicts, "rejected_oom") << " (" << hours
     << " GPU-hours saved)\n";
  os << "accepted jobs that ran out of memory: " << Get(c.verdicts, "missed_oom") << "\n";
  os << "timed-out jobs that would have got a longer limit: "
     << Get(c.verdicts, "limit_raised_for_timeout") << "\n";
}

}  // namespace

int RunReplay(const std::vector<std::string>& args) {
  namespace po = tools::po;
  po::options_description desc("options");
  desc.add_options()(
      "sacct", po::value<std::vector<std::string>>()->value_name("FILE"),
      "sacct --parsable2 export(s) to join by job id (JobID, State, Elapsed, Timelimit, "
      "Partition, AllocTRES, NNodes; WorkDir and SubmitLine when exported)")(
      "sacct-fields", po::value<std::string>()->value_name("LIST"),
      "the export's fields when it has no header line (as given to sacct --format)")(
      "config", po::value<std::string>(),
      "fmte.conf to use ('none': all defaults); default: beside $SLURM_CONF, "
      "else /etc/slurm/fmte.conf, else defaults")(
      "regressors", po::value<std::string>()->value_name("DIR"),
      "regressors directory; default: the config's RegressorsDir");
  tools::AddCommonOptions(&desc);
  // PATH words anywhere among the flags; a flag that takes a value takes the next word.
  std::vector<std::string> flags{args.empty() ? std::string("replay") : args[0]};
  std::vector<std::string> paths;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 2 || a[0] != '-') {
      paths.push_back(a);
      continue;
    }
    flags.push_back(a);
    const std::string name = a.substr(
        a.find_first_not_of('-'), a.find('=') - std::min(a.find('='), a.find_first_not_of('-')));
    const auto* opt = desc.find_nothrow(name, false);
    if (a.find('=') == std::string::npos && opt != nullptr && opt->semantic()->max_tokens() > 0 &&
        i + 1 < args.size())
      flags.push_back(args[++i]);
  }
  po::variables_map vm;
  if (Status s = tools::ParseFlags(desc, flags, &vm); !s.ok()) return Fail(s);
  if (vm.count("help")) {
    cli::Out() << tools::HelpText("replay PATH... [--sacct FILE] [--json]", kSummary, desc);
    return cli::kExitOk;
  }
  if (paths.empty())
    return Fail(Status::InvalidArgument(
        "PATH: at least one batch script, folder or sacct --batch-script output is required"));

  std::vector<PastScript> scripts;
  std::vector<std::string> skipped;
  int64_t not_stored = 0;
  for (const std::string& p : paths)
    if (Status s = CollectScripts(p, &scripts, &skipped, &not_stored); !s.ok()) return Fail(s);
  for (const std::string& s : skipped) cli::Err() << "fmte-advise: warning: " << s << "\n";
  if (not_stored > 0)
    cli::Err() << "fmte-advise: warning: " << not_stored
               << " job(s) in sacct --batch-script output have no stored script (NONE)\n";
  if (scripts.empty())
    return Fail(
        Status::NotFound("PATH: no batch script found (files starting with #! or named "
                         "*.sh/*.sbatch/*.slurm with #SBATCH lines)"));

  // The jobs of the sacct export(s), by JobID and JobIDRaw.
  std::vector<learn::JobRecord> jobs;
  const bool with_sacct = vm.count("sacct") > 0;
  if (with_sacct) {
    learn::SacctReadOptions ro;
    if (vm.count("sacct-fields"))
      ro.fields = learn::SplitFieldList(vm["sacct-fields"].as<std::string>());
    learn::SacctReader reader(ro);
    for (const std::string& f : vm["sacct"].as<std::vector<std::string>>())
      if (Status s = reader.ReadFile(f); !s.ok()) return Fail(s);
    if (reader.stats().malformed > 0)
      cli::Err() << "fmte-advise: warning: " << reader.stats().malformed
                 << " malformed sacct line(s) skipped\n";
    jobs = reader.TakeJobs();
  }
  std::map<std::string, const learn::JobRecord*> by_id;
  for (const learn::JobRecord& j : jobs) {
    by_id.emplace(j.job_id, &j);
    if (!j.job_id_raw.empty()) by_id.emplace(j.job_id_raw, &j);
  }

  auto admission =
      LoadAdmission(tools::FlagString(vm, "config"), tools::FlagString(vm, "regressors"));
  if (!admission.ok()) return Fail(admission.status());
  if (!admission->operator_set_problems.empty())
    cli::Err() << "fmte-advise: warning: " << admission->operator_set_problems << "\n";
  // What enforce would do: partitions in advise mode are decided as enforce (off stays off).
  Config config = admission->config;
  if (config.defaults.mode == Mode::kAdvise) config.defaults.mode = Mode::kEnforce;
  for (PartitionConfig& p : config.partitions)
    if (p.mode == Mode::kAdvise) p.mode = Mode::kEnforce;

  std::vector<Replayed> all;
  all.reserve(scripts.size());
  for (const PastScript& s : scripts) {
    // Progress for long replays (a month of a big cluster's jobs), on a terminal only.
    if (scripts.size() >= 200 && (all.size() % 50 == 0 || all.size() + 1 == scripts.size()))
      cli::DrawProgress("replay", all.size() + 1, scripts.size(), "jobs");
    Replayed r;
    r.script = &s;
    if (const auto it = by_id.find(s.job_id); !s.job_id.empty() && it != by_id.end())
      r.job = it->second;
    std::string dir = s.dir;
    std::vector<std::string> command_line;
    SbatchOptions allocated;
    if (r.job != nullptr) {
      std::error_code ec;
      if (!r.job->work_dir.empty() && fs::is_directory(r.job->work_dir, ec)) dir = r.job->work_dir;
      command_line = SplitWords(r.job->submit_line);
      if (!command_line.empty()) command_line.erase(command_line.begin());  // "sbatch"
      allocated = AllocationOf(*r.job);
    }
    auto sub = ReadPastSubmission(s.text, command_line, dir.empty() ? "." : dir, allocated,
                                  &admission->launchers, &admission->estimator->catalogs().models);
    if (!sub.ok()) {
      r.read_error = sub.status().message();
    } else {
      r.read = true;
      r.request = std::move(sub->request);
      r.decision = Decide(r.request, config, *admission->estimator);
      r.outcome = OutcomeOf(r.job, r.decision.capacity_bytes);
      r.verdict = VerdictOf(r.decision, r.outcome, r.job);
    }
    if (!r.read && r.job != nullptr) r.outcome = OutcomeOf(r.job, 0);
    all.push_back(std::move(r));
  }

  const Counts counts = Count(all);
  if (tools::FlagSet(vm, "json")) {
    nlohmann::json doc = {{"config", admission->config_path},
                          {"summary", SummaryJson(counts)},
                          {"jobs", nlohmann::json::array()}};
    for (const Replayed& r : all) doc["jobs"].push_back(JobJson(r));
    cli::Out() << doc.dump(2) << "\n";
  } else {
    PrintReplay(cli::Out(), all, counts, admission->config_path, with_sacct);
  }
  return cli::kExitOk;
}

}  // namespace fmte::advise
