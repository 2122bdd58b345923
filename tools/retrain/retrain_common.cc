#include "retrain_common.h"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "cli.h"

namespace fmte::retrain {
namespace {

constexpr uint64_t kProgressMinBytes = 16ull << 20;

// The read's progress in MB (files of 16 MB and more).
void DrawProgress(const std::string& name, uint64_t done, uint64_t total) {
  if (total < kProgressMinBytes) return;
  cli::DrawProgress(name, done >> 20, total >> 20, "MB");
}

}  // namespace

Result<ReadFlags> ParseReadFlags(const std::vector<std::string>& args, const std::string& command,
                                 const std::string& usage) {
  ReadFlags f;
  const bool train = command == "train";
  for (size_t i = 1; i < args.size(); ++i) {
    std::string a = args[i];
    std::string value;
    bool has_inline = false;
    if (a.starts_with("--") && a.find('=') != std::string::npos) {
      value = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
      has_inline = true;
    }
    auto next = [&](const char* name) -> Result<std::string> {
      if (has_inline) return value;
      if (i + 1 >= args.size())
        return Status::InvalidArgument(std::string(name) + ": expected a value");
      return args[++i];
    };
    auto take = [&](const char* name, std::string* out) -> Status {
      Result<std::string> v = next(name);
      if (!v.ok()) return v.status();
      *out = *v;
      return Status::Ok();
    };
    if (a == "--help" || a == "-h") {
      std::cout << usage << "\n";
      f.help = true;
      return f;
    } else if (a == "--json") {
      f.json = true;
    } else if (a == "--strict") {
      f.strict = true;
    } else if (a == "--gpumem-per-gpu") {
      f.gpumem_per_gpu = true;
    } else if (a == "--fields") {
      std::string list;
      FMTE_RETURN_IF_ERROR(take("--fields", &list));
      f.fields = learn::SplitFieldList(list);
      if (f.fields.empty())
        return Status::InvalidArgument("--fields: expected a list like JobID,State,Elapsed");
    } else if (train && a == "--into") {
      FMTE_RETURN_IF_ERROR(take("--into", &f.into));
    } else if (train && a == "--force") {
      f.force = true;
    } else if (train && a == "--kind") {
      FMTE_RETURN_IF_ERROR(take("--kind", &f.kind));
    } else if (train && a == "--svg-dir") {
      FMTE_RETURN_IF_ERROR(take("--svg-dir", &f.svg_dir));
    } else if (train && a == "--report") {
      FMTE_RETURN_IF_ERROR(take("--report", &f.report_path));
    } else if (train &&
               (a == "--cluster" || a == "--gpu" || a == "--precision" || a == "--provenance")) {
      std::string* out = a == "--cluster"     ? &f.cluster
                         : a == "--gpu"       ? &f.gpu
                         : a == "--precision" ? &f.precision
                                              : &f.provenance;
      FMTE_RETURN_IF_ERROR(take(a.c_str(), out));
    } else if (train && (a == "--tps-per-gpu" || a == "--no-correction" || a == "--dry-run" ||
                         a == "--exact-dir")) {
      (a == "--tps-per-gpu"     ? f.tps_per_gpu
       : a == "--no-correction" ? f.no_correction
       : a == "--dry-run"       ? f.dry_run
                                : f.into_exact) = true;
    } else if (train && (a == "--vocab" || a == "--rounds" || a == "--depth" || a == "--threads" ||
                         a == "--eta")) {
      std::string v;
      FMTE_RETURN_IF_ERROR(take(a.c_str(), &v));
      double x = 0;
      const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      const bool integral = a != "--eta";
      if (ec != std::errc() || p != v.data() + v.size() || !(x > 0) || x > 1e9 ||
          (integral && x != static_cast<double>(static_cast<int64_t>(x)))) {
        return Status::InvalidArgument(a + ": expected a positive " +
                                       (integral ? "integer" : "number") + ", got '" + v + "'");
      }
      if (a == "--vocab") f.vocab = static_cast<int64_t>(x);
      if (a == "--rounds") f.rounds = static_cast<int>(x);
      if (a == "--depth") f.depth = static_cast<int>(x);
      if (a == "--threads") f.threads = static_cast<int>(x);
      if (a == "--eta") f.eta = x;
    } else if (train && (a == "--folds" || a == "--seed")) {
      std::string v;
      FMTE_RETURN_IF_ERROR(take(a.c_str(), &v));
      int64_t n = 0;
      const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || p != v.data() + v.size() || n < (a == "--folds" ? 2 : 0)) {
        return Status::InvalidArgument(a + ": expected " +
                                       (a == "--folds" ? "an integer >= 2" : "an integer") +
                                       ", got '" + v + "'");
      }
      if (a == "--folds") {
        f.folds = static_cast<int>(std::min<int64_t>(n, 100));
        f.folds_set = true;
      } else {
        f.seed = static_cast<uint64_t>(n);
      }
    } else if (a.starts_with("-") && a != "-") {
      return Status::InvalidArgument("unknown flag '" + a + "' for '" + command + "' (" + usage +
                                     ")");
    } else {
      f.files.push_back(args[i]);
    }
  }
  if (f.files.empty()) return Status::InvalidArgument("expected at least one FILE (" + usage + ")");
  if (train && f.into.empty() && !f.dry_run)
    return Status::InvalidArgument("--into DIR: the regressors directory is required");
  return f;
}

Result<ReadResult> ReadExports(const ReadFlags& flags) {
  learn::SacctReadOptions options;
  options.fields = flags.fields;
  options.strict = flags.strict;
  if (flags.gpumem_per_gpu) options.gpumem_mode = learn::GpuMemTresMode::kPerGpu;
  const bool tty = isatty(STDERR_FILENO) != 0;
  std::string current;
  if (tty) {
    options.progress = [&current](uint64_t done, uint64_t total) {
      DrawProgress(current, done, total);
    };
  }
  learn::SacctReader reader(options);
  for (const std::string& file : flags.files) {
    current = file;
    if (file == "-") {
      FMTE_RETURN_IF_ERROR(reader.ReadStream(std::cin, "<stdin>"));
    } else {
      FMTE_RETURN_IF_ERROR(reader.ReadFile(file));
    }
  }
  ReadResult r;
  r.stats = reader.stats();
  r.jobs = reader.TakeJobs();
  return r;
}

nlohmann::json ReadJson(const learn::ReadStats& st, const learn::JobsSummary& summary) {
  nlohmann::json j;
  j["rows"] = st.rows;
  j["jobs"] = summary.jobs;
  j["steps"] = st.step_rows;
  j["malformed"] = st.malformed;
  nlohmann::json lines = nlohmann::json::array();
  nlohmann::json details = nlohmann::json::array();
  for (const auto& m : st.malformed_lines) {
    lines.push_back(m.line);
    details.push_back({{"file", st.files[m.file_index]}, {"line", m.line}, {"reason", m.reason}});
  }
  j["malformed_lines"] = lines;
  j["fmte_records"] = summary.fmte_records;
  j["states"] = summary.states;
  // Beyond the contract.
  j["files"] = st.files;
  j["lines"] = st.lines;
  j["allocation_rows"] = st.allocation_rows;
  j["header_lines"] = st.header_lines;
  j["comment_lines"] = st.comment_lines;
  j["short_rows"] = st.short_rows;
  j["malformed_details"] = details;
  nlohmann::json rec_err = nlohmann::json::array();
  for (const auto& m : st.record_error_lines) {
    rec_err.push_back({{"file", st.files[m.file_index]}, {"line", m.line}, {"reason", m.reason}});
  }
  j["fmte_record_errors"] = st.record_errors;
  j["fmte_record_error_lines"] = rec_err;
  j["jobstats_records"] = st.jobstats_records;
  j["jobstats_errors"] = st.jobstats_errors;
  j["array_tasks"] = summary.arrays;
  j["jobs_with_gpus"] = summary.with_gpus;
  j["jobs_with_gpu_memory"] = summary.with_gpu_memory;
  j["first_end_time"] = FormatTime(summary.first_end_time);
  j["last_end_time"] = FormatTime(summary.last_end_time);
  return j;
}

std::string FormatTime(int64_t t) {
  if (t <= 0) return "-";
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

}  // namespace fmte::retrain
