// ParseJobRequest: merges SPANK values > #FMTE lines > launcher flags > Slurm facts. Every source
// goes through the one key table (request_options.cc); a bad value is a warning naming its key and
// origin, and the lower-precedence value stays.
#include <algorithm>

#include "launcher.h"
#include "request_internal.h"

namespace fmte {
namespace {

using internal::Assignment;

void AddWarning(JobRequest* r, std::string w) {
  if (r->warnings.size() < kMaxWarnings)
    r->warnings.push_back(Shown(w, 300));
  else
    ++r->dropped_warnings;
}

// "key=value key='v w' --fmte-key=value" after #FMTE.
std::vector<Assignment> ParseFmteLine(int line, std::string_view text, JobRequest* r) {
  std::vector<Assignment> out;
  const std::string origin = "#FMTE line " + std::to_string(line);
  size_t i = 0;
  while (i < text.size() && out.size() < 64) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i >= text.size() || text[i] == '#') break;
    std::string word;
    char quote = 0;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (quote != 0) {
        if (c == quote)
          quote = 0;
        else
          word += c;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == ' ' || c == '\t') {
        break;
      } else {
        word += c;
      }
    }
    if (quote != 0) AddWarning(r, origin + ": unterminated quote");
    std::string_view w = word;
    if (w.starts_with("--fmte-")) w.remove_prefix(7);
    const size_t eq = w.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      AddWarning(r, origin + ": '" + Shown(word) + "' is not key=value; ignored");
      continue;
    }
    const std::string key = Lower(w.substr(0, eq));
    if (!internal::IsKnownKey(key)) {
      std::string known;
      for (const OptionSpec& o : FmteOptions())
        known += (known.empty() ? "" : " ") + std::string(o.key);
      AddWarning(r, origin + ": unknown key '" + Shown(key) + "' ignored (keys: " + known + ")");
      continue;
    }
    out.push_back(Assignment{key, std::string(w.substr(eq + 1)), origin});
  }
  return out;
}

// Consumes `values` (their strings move into the request's sources).
void Apply(std::vector<Assignment>* values, Source source, JobRequest* r) {
  std::string shown_buf;
  for (Assignment& a : *values) {
    std::string_view shown = a.origin;  // launcher values: "line 12: --flag" as is
    if (source == Source::kSpank)
      shown = shown_buf.assign("--fmte-").append(a.key);
    else if (source == Source::kFmteLine)
      shown = shown_buf.assign(a.origin).append(": ").append(a.key);
    const Status s = internal::ApplyKey(a.key, a.value, shown, &r->job);
    if (!s.ok()) {
      AddWarning(r, s.message() + " (ignored)");
      continue;
    }
    if (a.value.size() > 128) a.value.resize(128);
    FieldSource fs{std::move(a.key), source, std::move(a.value), std::move(a.origin)};
    auto it = std::find_if(r->sources.begin(), r->sources.end(),
                           [&](const FieldSource& f) { return f.key == fs.key; });
    if (it == r->sources.end())
      r->sources.push_back(std::move(fs));
    else
      *it = std::move(fs);
  }
}

void ReadSlurmGpus(const SlurmFacts& f, JobRequest* r) {
  struct Field {
    const std::string* text;
    GpuTresField kind;
  };
  const Field fields[] = {{&f.tres_per_job, GpuTresField::kPerJob},
                          {&f.tres_per_node, GpuTresField::kPerNode},
                          {&f.tres_per_task, GpuTresField::kPerTask},
                          {&f.tres_per_socket, GpuTresField::kPerSocket}};
  for (const Field& fd : fields) {
    if (fd.text->empty()) continue;
    auto g = ParseGpuTres(*fd.text);
    if (!g.ok()) {
      AddWarning(r, std::string(ToString(fd.kind)) + ": " + g.status().message());
      continue;
    }
    if (g->count == 0) continue;
    if (r->gpu_field != GpuTresField::kNone) continue;  // the first field with GPUs decides
    r->gpu_field = fd.kind;
    r->gpu_tres = *fd.text;
    r->gres_gpu_type = g->type;
    const int64_t nodes = std::max<int64_t>(1, f.min_nodes);
    switch (fd.kind) {
      case GpuTresField::kPerJob:
        r->slurm_gpus = g->count;
        break;
      case GpuTresField::kPerNode:
        r->slurm_gpus = g->count * nodes;
        r->slurm_gpus_per_node = g->count;
        break;
      case GpuTresField::kPerTask:
        r->slurm_gpus = g->count * std::max<int64_t>(1, f.num_tasks);
        if (f.num_tasks <= 0) AddWarning(r, "tres_per_task: no task count given; one task assumed");
        break;
      case GpuTresField::kPerSocket:
        r->slurm_gpus = g->count * nodes;
        AddWarning(r,
                   "tres_per_socket: the socket count is not known at submit time; one socket per "
                   "node assumed");
        break;
      case GpuTresField::kNone:
        break;
    }
  }
}

}  // namespace

const FieldSource* JobRequest::SourceOf(std::string_view key) const {
  for (const FieldSource& f : sources)
    if (f.key == key) return &f;
  return nullptr;
}

namespace {

// The host memory a job asks for on each node: --mem, else --mem-per-gpu x its GPUs per node,
// else --mem-per-cpu x CPUs per node (--cpus-per-task, default 1, x its tasks per node).
void ReadHostMemory(const SlurmFacts& facts, JobRequest* r) {
  constexpr int64_t kMb = int64_t{1} << 20;
  const auto per_node = [&](int64_t mb, int64_t count, const char* what, const char* unit) {
    r->host_memory_per_node_bytes = mb * count * kMb;
    r->host_memory_origin = count == 1 && unit[0] == '\0'
                                ? std::string(what)
                                : std::string(what) + " x " + std::to_string(count) + unit;
  };
  if (facts.mem_per_node_mb > 0) {
    per_node(facts.mem_per_node_mb, 1, "--mem", "");
  } else if (facts.mem_per_gpu_mb > 0) {
    per_node(facts.mem_per_gpu_mb, r->job.EffectiveGpusPerNode(), "--mem-per-gpu",
             " GPUs per node");
  } else if (facts.mem_per_cpu_mb > 0) {
    const int64_t nodes = std::max<int64_t>(1, facts.min_nodes);
    const int64_t tasks = facts.ntasks_per_node > 0 ? facts.ntasks_per_node
                          : facts.num_tasks > 0     ? (facts.num_tasks + nodes - 1) / nodes
                                                    : 1;
    per_node(facts.mem_per_cpu_mb, std::max<int64_t>(1, facts.cpus_per_task) * tasks,
             "--mem-per-cpu", " CPUs per node");
  }
}

}  // namespace

JobRequest ParseJobRequest(std::string_view script,
                           const std::vector<std::pair<std::string, std::string>>& spank_values,
                           const SlurmFacts& facts) {
  return ParseJobRequest(script, spank_values, facts, ScriptContext{});
}

JobRequest ParseJobRequest(std::string_view script,
                           const std::vector<std::pair<std::string, std::string>>& spank_values,
                           const SlurmFacts& facts, const ScriptContext& context) {
  JobRequest r;
  r.partition = Shown(facts.partition, 128);
  r.time_limit_min = std::max<int64_t>(0, facts.time_limit_min);
  r.nodes = std::max<int64_t>(0, facts.min_nodes);
  r.exclusive = facts.exclusive;
  ReadSlurmGpus(facts, &r);

  const bool client = context.files != nullptr || context.launchers != nullptr ||
                      !context.args.empty() || !context.env.empty();
  // The client's reading of the script (the SPANK plugin read it and the files its launch line
  // names in sbatch) replaces the controller's own reading of the same script; a malformed one is
  // not trusted. With its #FMTE lines ("fmte"), the controller does not scan the script at all.
  Result<internal::LauncherFindings> forwarded = Status::NotFound("");
  if (!client)
    for (const auto& [key, value] : spank_values)
      if (key == kReadKey) forwarded = internal::DecodeClientReading(value);
  internal::ScanOutput scan;
  if (forwarded.ok() && forwarded->scanned) {
    scan.fmte_lines = std::move(forwarded->fmte_lines);
    scan.warnings = std::move(forwarded->scan_warnings);
    r.forwarded_scan = true;
  } else {
    scan = internal::ScanScript(script, client ? &context : nullptr);
  }
  if (client) {
    r.client_scan = true;
    r.script_warnings = scan.warnings;
  }
  for (std::string& w : scan.warnings) AddWarning(&r, std::move(w));
  if (!forwarded.ok() && !forwarded.status().message().empty())
    AddWarning(&r, forwarded.status().message() + "; the script was read on the controller");
  const bool read_by_client = forwarded.ok();
  internal::LauncherFindings launch =
      forwarded.ok() ? std::move(forwarded).value()
                     : internal::DetectLauncher(scan.commands, client ? &context : nullptr,
                                                &scan.written_files, &scan.exported);
  for (std::string& w : launch.warnings) AddWarning(&r, std::move(w));
  r.files_read = std::move(scan.files_read);
  for (std::string& f : launch.files_read) r.files_read.push_back(std::move(f));
  r.launcher = launch.launcher;
  r.launcher_procs_per_node = launch.procs_per_node;
  r.launcher_nodes = launch.nodes;
  r.launcher_procs_origin = launch.procs_origin;

  std::vector<Assignment> fmte_values;
  for (const auto& [line, text] : scan.fmte_lines) {
    std::vector<Assignment> v = ParseFmteLine(line, text, &r);
    fmte_values.insert(fmte_values.end(), std::make_move_iterator(v.begin()),
                       std::make_move_iterator(v.end()));
  }
  if (client) r.script_fmte_lines = std::move(scan.fmte_lines);
  std::vector<Assignment> spank;
  std::string spank_arch;
  for (const auto& [key, value] : spank_values) {
    if (key == kReadKey) continue;  // above
    if (key == kArchKey) {
      if (value.size() > kMaxArchJsonBytes)
        AddWarning(&r, std::string(kArchEnvName) + ": architecture JSON too long; ignored");
      else
        spank_arch = value;
      continue;
    }
    spank.push_back(Assignment{key, value, "spank"});
  }

  r.sources.reserve(launch.values.size() + fmte_values.size() + spank.size() + 1);  // + the GPUs
  Apply(&launch.values, Source::kLauncher, &r);
  Apply(&fmte_values, Source::kFmteLine, &r);
  Apply(&spank, Source::kSpank, &r);
  // What the launch line could not tell stays unknown only if no other source gave it.
  for (UnreadSetting& u : launch.unread)
    if (r.SourceOf(u.key) == nullptr) r.unread.push_back(std::move(u));

  // The forwarded or derived architecture belongs to the source that named the winning model. The
  // client's reading carries the architecture of the model that won there: the launch line's, or an
  // #FMTE line's that the controller's catalog may not know (a local path, the submitter's Hugging
  // Face cache); the same lines make it win here.
  if (const FieldSource* m = r.SourceOf("model"); m != nullptr) {
    if (m->source == Source::kSpank)
      r.arch_json = spank_arch;
    else if (m->source == Source::kLauncher || (m->source == Source::kFmteLine && read_by_client))
      r.arch_json = launch.arch_json;
  }
  // An LLM trainer's launch (launchers.json "trains_llms") whose files named no model fmte could
  // read leaves the model unread: an LLM job all the same, accepted with a notice.
  const UnreadSetting* model_unread = nullptr;
  for (const UnreadSetting& u : r.unread)
    if (u.key == "model") model_unread = &u;
  r.is_llm_job =
      !r.job.model.empty() || !spank.empty() || !fmte_values.empty() || model_unread != nullptr;
  if (r.is_llm_job && r.job.model.empty())
    AddWarning(&r, model_unread != nullptr
                       ? "model: the launch trains an LLM but names no model fmte could read (" +
                             model_unread->origin +
                             "); add --fmte-model or #FMTE model=<Hugging Face id>"
                       : "model: fmte settings were given but no model (--fmte-model or #FMTE "
                         "model=...)");

  // GPUs: Slurm's request is what the job gets; the launcher's process count only fills in.
  const int64_t launcher_gpus = launch.procs_per_node * std::max<int64_t>(1, launch.nodes);
  if (r.slurm_gpus > 0) {
    r.job.gpus = r.slurm_gpus;
    if (r.job.gpus_per_node == 0) {
      if (r.slurm_gpus_per_node > 0)
        r.job.gpus_per_node = r.slurm_gpus_per_node;
      else if (r.nodes > 0)
        r.job.gpus_per_node = (r.slurm_gpus + r.nodes - 1) / r.nodes;
    }
    r.sources.push_back(FieldSource{"gpus", Source::kSlurm, std::to_string(r.slurm_gpus),
                                    std::string(ToString(r.gpu_field))});
    // A launcher whose node count is not written out (--nnodes=$SLURM_NNODES) on a multi-node
    // allocation starts an unknown number of processes: nothing to compare.
    const bool launcher_count_known = launch.nodes > 0 || r.nodes <= 1;
    if (launch.procs_per_node > 0 && launcher_count_known && r.is_llm_job &&
        launcher_gpus != r.slurm_gpus)
      AddWarning(&r, "gpus: the launcher starts " + std::to_string(launcher_gpus) +
                         " processes but Slurm was asked for " + std::to_string(r.slurm_gpus) +
                         " GPUs");
  } else if (launcher_gpus > 0) {
    r.job.gpus = launcher_gpus;
    if (r.job.gpus_per_node == 0) r.job.gpus_per_node = launch.procs_per_node;
    r.sources.push_back(
        FieldSource{"gpus", Source::kLauncher, std::to_string(launcher_gpus),
                    r.launcher_procs_origin.empty() ? r.launcher : r.launcher_procs_origin});
    if (r.is_llm_job)
      AddWarning(&r, "gpus: no GPUs requested from Slurm (--gres=gpu:N or --gpus=N)");
  } else if (facts.ntasks_per_node > 1 && r.is_llm_job) {
    // `srun python train.py` with --ntasks-per-node=8 (Megatron, Lightning, OLMo): a rank per
    // task, so a GPU per task on whole GPU nodes.
    const int64_t nodes = std::max<int64_t>(1, facts.min_nodes);
    r.job.gpus = facts.ntasks_per_node * nodes;
    if (r.job.gpus_per_node == 0) r.job.gpus_per_node = facts.ntasks_per_node;
    r.sources.push_back(
        FieldSource{"gpus", Source::kSlurm, std::to_string(r.job.gpus), "ntasks_per_node x nodes"});
    AddWarning(&r, "gpus: no GPUs requested from Slurm; one GPU per task assumed (" +
                       std::to_string(facts.ntasks_per_node) + " tasks per node x " +
                       std::to_string(nodes) + " nodes)");
  } else {
    r.job.gpus = std::max<int64_t>(1, r.job.ModelParallel());
    if (r.is_llm_job)
      AddWarning(&r, "gpus: no GPUs requested from Slurm (--gres=gpu:N or --gpus=N)");
  }
  // Megatron-style global batch: gradient accumulation = global / (micro x data-parallel).
  if (r.job.global_batch > 0 && r.SourceOf("grad-accum") == nullptr) {
    const int64_t dp = r.job.gpus / std::max<int64_t>(1, r.job.ModelParallel());
    const int64_t per_step = r.job.micro_batch * std::max<int64_t>(1, dp);
    if (dp == 0)
      AddWarning(
          &r, "gpus: " + std::to_string(r.job.gpus) +
                  " GPUs are fewer than tp x cp x pp = " + std::to_string(r.job.ModelParallel()));
    else if (r.job.global_batch % per_step == 0)
      r.job.grad_accum = r.job.global_batch / per_step;
    else if (r.job.framework == Framework::kLitgpt && r.job.global_batch > per_step) {
      // litgpt rounds down: global_batch_size // devices // micro_batch_size (litgpt/args.py
      // TrainArgs.gradient_accumulation_iters), so a step takes that many micro-batches.
      r.job.grad_accum = r.job.global_batch / per_step;
      AddWarning(&r, "global-batch: litgpt rounds " + std::to_string(r.job.global_batch) +
                         " down to " + std::to_string(r.job.grad_accum * per_step) +
                         " (micro-batch x data-parallel x " + std::to_string(r.job.grad_accum) +
                         ") per step");
      r.job.global_batch = r.job.grad_accum * per_step;
    } else
      AddWarning(&r, "global-batch: " + std::to_string(r.job.global_batch) +
                         " is not a multiple of micro-batch x data-parallel = " +
                         std::to_string(per_step));
  }
  ReadHostMemory(facts, &r);
  return r;
}

}  // namespace fmte
