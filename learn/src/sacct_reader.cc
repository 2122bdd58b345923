// The streaming sacct reader: lines -> layout or row -> fold into the allocation's JobRecord.
// Rows are split into string_views of one reused buffer and only the fields the layout has are
// parsed, so a row costs a hash lookup and a handful of small parses.
#include <cstdio>
#include <fstream>
#include <unordered_map>

#include "fmte/learn/sacct.h"
#include "sacct_layout.h"

namespace fmte::learn {

using internal::Field;
using internal::Layout;

namespace {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

// What the reader keeps beside a JobRecord until TakeJobs finalises it.
struct Aux {
  int64_t batch_elapsed_s = kUnknownValue;
  int64_t max_step_elapsed_s = kUnknownValue;
  JobState step_state = JobState::kUnknown;  // of .batch, else the last step
  bool batch_state_seen = false;
  int64_t tres_peak_per_gpu = kUnknownValue;
};

int64_t MaxKnown(int64_t a, int64_t b) {
  return a == kUnknownValue ? b : (b == kUnknownValue ? a : std::max(a, b));
}

bool IsNumericStep(std::string_view step) {
  return !step.empty() && step.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

struct SacctReader::Impl {
  SacctReadOptions options;
  ReadStats stats;
  std::vector<JobRecord> jobs;
  std::vector<Aux> aux;
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> index;

  // Per source.
  Layout layout;
  std::string source;
  int32_t file_index = -1;
  int64_t line_no = 0;
  std::vector<std::string_view> fields;

  Status Malformed(std::string reason) {
    ++stats.malformed;
    if (stats.malformed_lines.size() < options.max_malformed_lines_kept) {
      stats.malformed_lines.push_back({file_index, line_no, reason});
    }
    if (options.strict) {
      return Status::ParseError(source + ":" + std::to_string(line_no) + ": " + reason);
    }
    return Status::Ok();
  }

  std::string_view Get(Field f) const {
    const int16_t c = layout[f];
    return c >= 0 && static_cast<size_t>(c) < fields.size() ? fields[c] : std::string_view();
  }

  void BeginSource(const std::string& name) {
    source = name;
    file_index = static_cast<int32_t>(stats.files.size());
    stats.files.push_back(name);
    line_no = 0;
    layout = Layout();
    if (!options.fields.empty()) {
      std::vector<std::string_view> names(options.fields.begin(), options.fields.end());
      std::string error;
      if (auto l = internal::MakeLayout(names, &error)) layout = *l;
    }
  }

  Status Line(std::string_view line) {
    ++line_no;
    ++stats.lines;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') {
      ++stats.comment_lines;
      return Status::Ok();
    }
    if (line[0] == '$' || line.starts_with("sacct ")) {
      ++stats.comment_lines;
      if (auto names = internal::FieldsOfSacctCommand(line)) {
        std::vector<std::string_view> views(names->begin(), names->end());
        if (auto l = internal::MakeLayout(views, nullptr)) layout = *l;
      }
      return Status::Ok();
    }
    fields.clear();
    for (size_t start = 0;;) {
      const size_t bar = line.find('|', start);
      fields.push_back(
          line.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start));
      if (bar == std::string_view::npos) break;
      start = bar + 1;
    }
    if (LooksLikeHeader()) {
      if (fields.size() > 1 && fields.back().empty()) fields.pop_back();
      std::string error;
      if (auto l = internal::MakeLayout(fields, &error)) {
        layout = *l;
        ++stats.header_lines;
        return Status::Ok();
      }
    }
    if (layout.empty()) {
      return Status::InvalidArgument(
          source + ":" + std::to_string(line_no) +
          ": no header line and no field list: pass --fields with the list given to sacct "
          "--format/-o, e.g. --fields "
          "JobID,JobIDRaw,State,Elapsed,Timelimit,AllocTRES,AdminComment "
          "(or export with a header: sacct --parsable2 without -n/--noheader)");
    }
    const size_t n = layout.columns.size();
    if (fields.size() == n + 1 && fields.back().empty()) fields.pop_back();  // --parsable
    if (fields.size() > n) {
      return Malformed(std::to_string(fields.size()) + " fields, expected " + std::to_string(n) +
                       " (a '|' inside a comment or job name?)");
    }
    if (fields.size() < n) {
      ++stats.short_rows;
      fields.resize(n);
    }
    if (layout[internal::kJobId] < 0 && layout[internal::kJobIdRaw] < 0) {
      ++stats.rows;  // understood, but cannot be attributed to a job
      return Status::Ok();
    }
    return Row();
  }

  bool LooksLikeHeader() const {
    size_t named = 0;
    for (const std::string_view f : fields) {
      if (f.empty()) continue;
      if (!internal::IsSacctFieldName(f.substr(0, f.find('%')))) return false;
      ++named;
    }
    return named > 0;
  }

  Status Row() {
    std::string_view job_id_text = Get(internal::kJobId);
    const std::string_view raw_text = Get(internal::kJobIdRaw);
    if (job_id_text.empty()) job_id_text = raw_text;
    Result<ParsedJobId> id = ParseJobId(job_id_text);
    if (!id.ok()) return Malformed(id.status().message());
    ParsedJobId raw;
    if (!raw_text.empty()) {
      Result<ParsedJobId> r = ParseJobId(raw_text);
      if (!r.ok()) return Malformed("JobIDRaw: " + r.status().message());
      raw = *r;
    }
    const bool is_step = !id->step.empty();

    // Parse everything before touching the job, so a malformed row leaves no trace.
    const ParsedState state = ParseJobState(Get(internal::kState));
    Result<int64_t> elapsed = ParseSlurmDuration(Get(internal::kElapsed));
    if (!elapsed.ok()) return Malformed("Elapsed: " + elapsed.status().message());
    if (*elapsed == kUnknownValue && layout[internal::kElapsedRaw] >= 0) {
      elapsed = ParseCount(Get(internal::kElapsedRaw));
      if (!elapsed.ok()) return Malformed("ElapsedRaw: " + elapsed.status().message());
    }
    Result<int64_t> limit = ParseSlurmDuration(Get(internal::kTimelimit));
    if (!limit.ok()) return Malformed("Timelimit: " + limit.status().message());
    if (*limit == kUnknownValue && layout[internal::kTimelimitRaw] >= 0) {
      Result<int64_t> m = ParseTimelimitRawMinutes(Get(internal::kTimelimitRaw));
      if (!m.ok()) return Malformed(m.status().message());
      limit = *m > 0 ? *m * 60 : *m;
    }
    Result<Tres> alloc = ParseTres(Get(internal::kAllocTres));
    if (!alloc.ok()) return Malformed("AllocTRES: " + alloc.status().message());
    Result<Tres> req = ParseTres(Get(internal::kReqTres));
    if (!req.ok()) return Malformed("ReqTRES: " + req.status().message());
    Result<Tres> usage = ParseTres(Get(internal::kTresUsageInMax));
    if (!usage.ok()) return Malformed("TRESUsageInMax: " + usage.status().message());
    Result<int64_t> rss = ParseSlurmBytes(Get(internal::kMaxRss));
    if (!rss.ok()) return Malformed("MaxRSS: " + rss.status().message());
    Result<int64_t> nnodes = ParseCount(Get(internal::kNNodes));
    if (!nnodes.ok()) return Malformed("NNodes: " + nnodes.status().message());
    Result<int64_t> ncpus = ParseCount(Get(internal::kAllocCpus));
    if (!ncpus.ok()) return Malformed("AllocCPUS: " + ncpus.status().message());
    Result<int64_t> ntasks = ParseCount(Get(internal::kNTasks));
    if (!ntasks.ok()) return Malformed("NTasks: " + ntasks.status().message());
    int64_t times[3] = {kUnknownValue, kUnknownValue, kUnknownValue};
    const Field time_fields[3] = {internal::kSubmit, internal::kStart, internal::kEnd};
    for (int i = 0; i < 3; ++i) {
      Result<int64_t> t = ParseSlurmTimestamp(Get(time_fields[i]));
      if (!t.ok()) return Malformed(t.status().message());
      times[i] = *t;
    }
    Result<ExitCode> exit = ParseExitCode(Get(internal::kExitCode));
    if (!exit.ok()) return Malformed(exit.status().message());

    ++stats.rows;
    const std::string_view key = id->allocation;
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(std::string(key), static_cast<uint32_t>(jobs.size())).first;
      jobs.emplace_back();
      aux.emplace_back();
      JobRecord& j = jobs.back();
      j.job_id = std::string(key);
      j.array_job = std::string(id->array_job);
      j.first_line = line_no;
      j.file_index = file_index;
    }
    JobRecord& job = jobs[it->second];
    Aux& a = aux[it->second];
    const Tres& tres = alloc->gpus != kUnknownValue || alloc->cpus != kUnknownValue ? *alloc : *req;

    if (!is_step) {
      ++stats.allocation_rows;
      job.has_allocation_row = true;
      if (!raw.allocation.empty()) job.job_id_raw = std::string(raw.allocation);
      job.name = std::string(Get(internal::kJobName));
      job.user = std::string(Get(internal::kUser));
      job.account = std::string(Get(internal::kAccount));
      job.partition = std::string(Get(internal::kPartition));
      job.work_dir = std::string(Get(internal::kWorkDir));
      job.submit_line = std::string(Get(internal::kSubmitLine));
      job.state = state.state;
      job.cancelled_by_uid = state.cancelled_by_uid;
      job.exit_code = exit->code;
      job.elapsed_s = *elapsed;
      job.time_limit_s = *limit;
      job.submit_time = times[0];
      job.start_time = times[1];
      job.end_time = times[2];
      job.gpus = tres.gpus;
      job.gpu_type = tres.gpu_type;
      job.nodes = tres.nodes != kUnknownValue ? tres.nodes : *nnodes;
      job.cpus = tres.cpus != kUnknownValue ? tres.cpus : *ncpus;
      job.ntasks = *ntasks;
    } else {
      ++stats.step_rows;
      ++job.steps;
      if (id->step == "batch") {
        a.batch_elapsed_s = *elapsed;
        a.step_state = state.state;
        a.batch_state_seen = true;
      } else if (IsNumericStep(id->step)) {
        job.main_step_elapsed_s = MaxKnown(job.main_step_elapsed_s, *elapsed);
      }
      if (!a.batch_state_seen && id->step != "extern") a.step_state = state.state;
      a.max_step_elapsed_s = MaxKnown(a.max_step_elapsed_s, *elapsed);
      if (job.end_time == kUnknownValue) job.end_time = times[2];
      job.max_rss_bytes = MaxKnown(job.max_rss_bytes, *rss);
      if (usage->gpumem_bytes > 0) {
        const int64_t step_gpus = tres.gpus != kUnknownValue ? tres.gpus : job.gpus;
        int64_t per_gpu = usage->gpumem_bytes;
        if (options.gpumem_mode == GpuMemTresMode::kSumOverTaskGpus && step_gpus > 0) {
          // TRESUsageInMax is the maximum over tasks; a task sees its node's share of the GPUs.
          int64_t tasks = *ntasks > 0 ? *ntasks : (tres.nodes > 0 ? tres.nodes : 1);
          tasks = std::min(tasks, step_gpus);
          per_gpu = usage->gpumem_bytes / std::max<int64_t>(1, step_gpus / tasks);
        }
        if (usage->gpumem_bytes > job.gpumem_tres_bytes) {
          job.gpumem_tres_bytes = usage->gpumem_bytes;
          job.step_gpus = step_gpus;
        }
        a.tres_peak_per_gpu = MaxKnown(a.tres_peak_per_gpu, per_gpu);
      }
    }
    const std::string_view admin = Get(internal::kAdminComment);
    if (!admin.empty()) AdminComment(admin, job);
    // The plugin's copy in Comment: the record when an epilog replaced AdminComment (jobstats).
    if (const std::string_view comment = Get(internal::kComment); !comment.empty())
      Record(comment, job);
    return Status::Ok();
  }

  void AdminComment(std::string_view admin, JobRecord& job) {
    Record(admin, job);
    Jobstats(admin, job);
  }

  // The first `fmte:` record found for the job (AdminComment before Comment) is kept.
  void Record(std::string_view text, JobRecord& job) {
    if (text.find(kRecordPrefix) != std::string_view::npos && !job.record) {
      Result<AccountingRecord> rec = DecodeRecord(text);
      if (rec.ok()) {
        job.record = std::move(rec).value();
      } else {
        ++stats.record_errors;
        if (stats.record_error_lines.size() < options.max_malformed_lines_kept) {
          stats.record_error_lines.push_back({file_index, line_no, rec.status().message()});
        }
      }
    }
  }

  // A jobstats summary; "js1:" is one that Slurm 22.05's sacctmgr lowercased (it no longer
  // decodes, and counts as an error).
  void Jobstats(std::string_view admin, JobRecord& job) {
    if (admin.find("JS1:") != std::string_view::npos ||
        admin.find("js1:") != std::string_view::npos) {
      Result<int64_t> peak = JobstatsGpuPeakBytes(admin);
      if (peak.ok()) {
        ++stats.jobstats_records;
        if (*peak != kUnknownValue) {
          job.gpu_peak_bytes = MaxKnown(job.gpu_peak_bytes, *peak);
          job.gpu_peak_source = GpuMemSource::kJobstats;
        }
      } else {
        ++stats.jobstats_errors;
      }
    }
  }

  void Finalise(JobRecord& j, const Aux& a) const {
    if (!j.has_allocation_row) {
      j.state = a.step_state;
      j.elapsed_s = a.batch_elapsed_s != kUnknownValue ? a.batch_elapsed_s : a.max_step_elapsed_s;
    }
    if (j.main_step_elapsed_s == kUnknownValue) j.main_step_elapsed_s = a.batch_elapsed_s;
    if (j.gpu_peak_source == GpuMemSource::kNone && a.tres_peak_per_gpu != kUnknownValue) {
      j.gpu_peak_bytes = a.tres_peak_per_gpu;
      j.gpu_peak_source = GpuMemSource::kTresUsage;
    }
  }
};

SacctReader::SacctReader(SacctReadOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}
SacctReader::~SacctReader() = default;
SacctReader::SacctReader(SacctReader&&) noexcept = default;
SacctReader& SacctReader::operator=(SacctReader&&) noexcept = default;

void SacctReader::BeginSource(const std::string& name) { impl_->BeginSource(name); }
Status SacctReader::Line(std::string_view line) { return impl_->Line(line); }
const ReadStats& SacctReader::stats() const { return impl_->stats; }
int64_t SacctReader::job_count() const { return static_cast<int64_t>(impl_->jobs.size()); }

Status SacctReader::ReadStream(std::istream& in, const std::string& name, uint64_t total_bytes) {
  BeginSource(name);
  std::string line;
  uint64_t done = 0;
  while (std::getline(in, line)) {
    done += line.size() + 1;
    FMTE_RETURN_IF_ERROR(impl_->Line(line));
    if (impl_->options.progress && (impl_->line_no & 0xffff) == 0)
      impl_->options.progress(done, total_bytes);
  }
  if (in.bad()) return Status::IoError(name + ": read error");
  if (impl_->options.progress) impl_->options.progress(done, total_bytes);
  return Status::Ok();
}

Status SacctReader::ReadFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::IoError(path + ": cannot open for reading");
  std::fseek(f, 0, SEEK_END);
  const long size = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  const uint64_t total = size > 0 ? static_cast<uint64_t>(size) : 0;
  BeginSource(path);
  // Read in 1 MiB chunks split at '\n' here: a line inside one chunk is passed as a view into it;
  // only a line that spans two chunks is assembled in `buf`.
  std::string buf;
  std::vector<char> chunk(1 << 20);
  uint64_t done = 0;
  Status status;
  size_t got = 0;
  while (status.ok() && (got = std::fread(chunk.data(), 1, chunk.size(), f)) > 0) {
    done += got;
    size_t start = 0;
    for (size_t i = 0; i < got && status.ok(); ++i) {
      if (chunk[i] != '\n') continue;
      if (buf.empty()) {
        status = impl_->Line(std::string_view(chunk.data() + start, i - start));
      } else {
        buf.append(chunk.data() + start, i - start);
        status = impl_->Line(buf);
        buf.clear();
      }
      start = i + 1;
    }
    if (status.ok()) buf.append(chunk.data() + start, got - start);
    if (impl_->options.progress) impl_->options.progress(done, total);
  }
  const bool read_error = std::ferror(f) != 0;
  std::fclose(f);
  if (!status.ok()) return status;
  if (read_error) return Status::IoError(path + ": read error");
  if (!buf.empty()) return impl_->Line(buf);
  return Status::Ok();
}

std::vector<JobRecord> SacctReader::TakeJobs() {
  std::vector<JobRecord> out = std::move(impl_->jobs);
  for (size_t i = 0; i < out.size(); ++i) impl_->Finalise(out[i], impl_->aux[i]);
  impl_->jobs.clear();
  impl_->aux.clear();
  impl_->index.clear();
  return out;
}

}  // namespace fmte::learn
