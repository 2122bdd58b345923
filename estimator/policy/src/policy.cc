// Decide: the admission decision (policy.h has the rules in short, docs/policy.md in full).
#include "fmte/policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "policy_internal.h"

namespace fmte {
namespace {

using internal::Cat;
using internal::Gib;
using internal::PolicyContext;
using internal::UnreadObjective;

constexpr std::string_view kPrefix = "fmte: ";

std::string Join(const std::vector<std::string>& lines) {
  size_t size = 0;
  for (const std::string& l : lines) size += 1 + kPrefix.size() + l.size();
  std::string out;
  out.reserve(size);
  for (const std::string& l : lines) {
    if (!out.empty()) out += '\n';
    out.append(kPrefix).append(l);
  }
  return out;
}

// The parser's warnings go after the verdict, as notes.
void Finish(const JobRequest& r, Decision* d) {
  for (const std::string& w : r.warnings) d->reasons.push_back(Cat({"note: ", w}));
  if (r.dropped_warnings > 0)
    d->reasons.push_back("note: " + std::to_string(r.dropped_warnings) + " more warnings");
  d->user_message = Join(d->reasons);
}

// What the job's batch counts, after a count of `n`: sequences, or pairs for a pairwise objective.
std::string_view SamplesWord(const TrainingJob& j, int64_t n) {
  if (j.SequencesPerSample() > 1) return n == 1 ? " pair" : " pairs";
  return n == 1 ? " sequence" : " sequences";
}

std::string_view MethodText(const TrainingJob& j) {
  switch (j.method) {
    case Method::kFull:
      return j.freeze_language ? "full fine-tuning with the language model frozen"
                               : "full fine-tuning";
    case Method::kLora:
      return "LoRA";
    case Method::kQlora:
      return "QLoRA";
    case Method::kPromptTuning:
      return "prompt tuning";
    case Method::kPrefixTuning:
      return "prefix tuning";
  }
  return "training";
}

// Failing to estimate: OnError decides (fail open by default). Decide returns `d` itself on every
// path, so that it is built in place (no Decision moved on return).
void Fail(const JobRequest& r, const Config& config, const PartitionConfig& p,
          const std::string& why, Decision* d) {
  d->error = true;
  d->reasons.push_back("could not estimate this job: " + why);
  if (config.on_error == OnError::kReject && p.mode == Mode::kEnforce) {
    d->kind = DecisionKind::kReject;
    d->reject_reason = RejectReason::kError;
    d->reasons.push_back(
        "rejected because OnError=reject; fix the fmte settings or ask the administrators");
  } else {
    d->reasons.push_back("the job is accepted unchanged");
  }
  Finish(r, d);
}

// The architecture: forwarded/derived JSON (parsed once per distinct text, kept alive by `owned`)
// or the catalog's (no copy).
Result<const ModelArch*> ResolveArch(const JobRequest& r, const Catalogs& c,
                                     std::shared_ptr<const ModelArch>* owned,
                                     std::string* named_after) {
  if (!r.arch_json.empty()) {
    auto parsed = internal::CachedModelConfig(r.arch_json, r.job.model);
    if (!parsed.ok()) return parsed.status();
    *owned = std::move(parsed).value();
    return owned->get();
  }
  auto found = c.models.Find(r.job.model);
  if (found.ok()) return *found;
  // A checkpoint nobody here can read, named after its base model (a fine-tuned copy has its
  // base's architecture): estimated as that model, never acted on (Decide).
  if (auto base = c.models.NamedAfter(r.job.model); base.ok()) {
    *named_after = (*base)->id;
    return *base;
  }
  if (r.job.model.find('/') == 0 || r.job.model.ends_with(".json"))
    return Status::NotFound(
        "model '" + r.job.model +
        "' is a path the controller cannot read; submit with the SPANK option --fmte-model so "
        "the client forwards its architecture");
  return found.status();
}

// The partition's operator regressors (fmte.conf OperatorSet=, docs/operators.md): the step time
// the seed's composition gives the decided job from the cluster's own samples. Where it is longer
// than fmte's step time, the time bound grows by the difference over the job's steps at the bound's
// own factor (WallTimeEstimate::upper_factor); a shorter figure leaves the bound as it is: no
// measured runs validate a shorter limit from a site's set, and a limit that kills a job is the
// worst outcome. Only with a time estimate; a set that was not loaded was named at load time.
void ApplyOperatorSet(const Catalogs& c, const PartitionConfig& p, const ModelArch& arch,
                      Decision* d) {
  if (p.operator_set.empty() || !d->estimate.has_time || d->kind == DecisionKind::kReject) return;
  const auto set = c.operator_sets.find(p.operator_set);
  if (set == c.operator_sets.end()) return;
  const Result<OperatorTimeEstimate> op = EstimateStepTimeFromOperators(arch, d->job, set->second);
  if (!op.ok()) {
    d->reasons.push_back(
        Cat({"the operator regressors of ", p.operator_set, " cannot take this job (",
             op.status().message(), "): its time bound is fmte's own"}));
    return;
  }
  const WallTimeEstimate& w = d->estimate.time;
  const double op_step_s = op->batch_us * 1e-6, step_s = w.step.step_time_s;
  const double extra_s = (op_step_s - step_s) * static_cast<double>(w.steps);
  const auto secs = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.3g s", v);
    return std::string(buf);
  };
  if (extra_s > 0 && d->estimate.wall_time_bound_s > 0) {
    d->estimate.wall_time_bound_s += extra_s * w.upper_factor;
    d->reasons.push_back(Cat(
        {"step time from ", p.operator_set, "'s operator regressors ", secs(op_step_s),
         " against fmte's ", secs(step_s), ": the time bound grows to ",
         FormatSlurmTime(static_cast<int64_t>(std::ceil(d->estimate.wall_time_bound_s / 60.0)))}));
  } else {
    d->reasons.push_back(Cat({"step time from ", p.operator_set, "'s operator regressors ",
                              secs(op_step_s), " against fmte's ", secs(step_s),
                              " (a shorter figure does not shorten the time bound)"}));
  }
}

// Time limit rules; only with a time estimate (JobEstimate::has_time).
void DecideTime(const JobRequest& r, const PartitionConfig& p, const ModelArch& arch, Decision* d) {
  d->time_limit_min = r.time_limit_min;
  if (!d->estimate.has_time || d->kind == DecisionKind::kReject) return;
  // An objective the request could not read (a trainer type from an unknown variable) may be an
  // online one, whose generation the prediction leaves out: the favourable reading for time is
  // no limit and no warning (the memory's is supervised training, FavourableReading).
  if (const UnreadSetting* u = UnreadObjective(r)) {
    if (r.time_limit_min == 0)
      d->reasons.push_back(
          Cat({"no time limit given, and none set: the objective is unknown (", u->origin,
               "); an online one (GRPO, PPO, ...) generates its completions, which fmte does not "
               "model"}));
    return;
  }
  const double predicted_s = d->estimate.wall_time_s;
  const double bound_s =
      d->estimate.wall_time_bound_s > 0 ? d->estimate.wall_time_bound_s : predicted_s;
  if (const PeriodicWork& p = d->estimate.time.periodic; p.eval_size_unknown)
    d->reasons.push_back(Cat({"the ", std::to_string(p.evaluations), " evaluations (every ",
                              std::to_string(p.eval_every_steps),
                              " steps) are not in the predicted time: the size of the evaluation "
                              "set is unknown (#FMTE eval-samples=N says it)"}));
  // A multimodal model's time also goes to its vision encoder, whose share is the data's (how
  // many images, at what resolution): the prediction is the language model's, a lower bound, and
  // no limit is set on it (a limit that kills the job is the worst outcome).
  if (r.time_limit_min == 0 && LoadsVisionTower(arch, d->job)) {
    d->reasons.push_back(
        Cat({"no time limit given, and none set: the language model alone is predicted to take ",
             FormatSlurmTime(static_cast<int64_t>(std::ceil(predicted_s / 60))),
             "; what encoding the images adds depends on the data"}));
    return;
  }
  if (r.time_limit_min == 0) {
    // The larger of the calibrated upper bound and prediction x DefaultTimeFactor.
    int64_t limit = static_cast<int64_t>(
        std::ceil(std::max(bound_s, predicted_s * p.default_time_factor) / 60.0));
    limit = std::max(limit, p.min_time_min);
    if (p.max_time_min > 0 && limit > p.max_time_min) {
      limit = p.max_time_min;
      d->reasons.push_back(Cat({"predicted wall time ",
                                FormatSlurmTime(static_cast<int64_t>(std::ceil(predicted_s / 60))),
                                " (x", std::to_string(p.default_time_factor).substr(0, 4),
                                ") exceeds the partition limit; time limit set to the limit ",
                                FormatSlurmTime(limit), ": checkpoint and resubmit"}));
    } else {
      d->reasons.push_back(
          Cat({"no time limit given: set to ", FormatSlurmTime(limit), " (predicted ",
               FormatSlurmTime(static_cast<int64_t>(std::ceil(predicted_s / 60))), ")"}));
    }
    d->new_time_limit_min = limit;
    d->time_limit_min = limit;
    d->kind = DecisionKind::kRewrite;
    return;
  }
  if (static_cast<double>(r.time_limit_min) * 60.0 < predicted_s) {
    const std::string why = Cat(
        {"the time limit ", FormatSlurmTime(r.time_limit_min), " is shorter than the predicted ",
         FormatSlurmTime(static_cast<int64_t>(std::ceil(predicted_s / 60)))});
    if (p.short_limit == ShortLimit::kReject) {
      d->kind = DecisionKind::kReject;
      d->reject_reason = RejectReason::kTimeLimit;
      d->reasons.push_back(Cat({why, "; rejected (ShortLimit=reject): ask for at least ",
                                FormatSlurmTime(static_cast<int64_t>(std::ceil(bound_s / 60)))}));
    } else {
      d->reasons.push_back(Cat({why, "; the job may be killed before it finishes"}));
    }
  }
}

// Host memory: what the job asks for on each node (--mem, --mem-per-gpu, --mem-per-cpu) against
// the least fmte knows it needs there: the state it offloads (ZeRO/FSDP CPU offload) and, on rank
// 0's node, the full state dict a checkpoint save gathers (memory phase checkpoint-save). The
// processes, data loaders and pinned buffers need more, so only a request below that is told;
// never rejected or rewritten (whether Slurm kills a job over its request is the site's cgroup
// setting).
void DecideHostMemory(const JobRequest& r, Decision* d) {
  if (r.host_memory_per_node_bytes <= 0 || !d->estimated) return;
  const MemoryEstimate& m = d->estimate.memory;
  int64_t save = 0;
  for (const MemoryPhase& p : m.phases) save = std::max(save, p.host_bytes);
  const int64_t need = m.cpu_bytes_per_node + save;
  if (need <= r.host_memory_per_node_bytes) return;
  std::string what;
  if (save > 0)
    what = Cat({"the ", Gib(need),
                " that rank 0's node needs when a checkpoint save gathers the "
                "full state dict there",
                m.cpu_bytes_per_node > 0 ? " beside its offloaded state" : ""});
  else
    what = Cat({"the ", Gib(need), " of state the job offloads to each node's memory"});
  d->reasons.push_back(
      Cat({"host memory: the job asks for ", Gib(r.host_memory_per_node_bytes), " per node (",
           r.host_memory_origin, "), less than ", what, ": it may be killed for memory",
           save > 0 ? " at its first save; ask for more or save sharded (--state-dict sharded: "
                      "fsdp_state_dict_type SHARDED_STATE_DICT)"
                    : "; ask for more"}));
}

// The GPU-count rewrite for job_desc: which tres field, its new text and the node count.
void SetGpuRewrite(const JobRequest& r, const TrainingJob& job, Decision* d) {
  d->new_gpus = job.gpus;
  d->gpu_field = r.gpu_field;
  if (r.gpu_field == GpuTresField::kPerNode) {
    d->new_gpu_tres = ReplaceGpuCount(r.gpu_tres, job.EffectiveGpusPerNode());
    const int64_t nodes = job.Nodes();
    if (nodes > std::max<int64_t>(1, r.nodes)) d->new_min_nodes = nodes;
  } else {
    d->new_gpu_tres = ReplaceGpuCount(r.gpu_tres, job.gpus);
  }
}

// The job under the most favourable reading of the settings the request could not read (the
// least memory per GPU), and what was assumed, in the user's terms. An unread sharding (a DeepSpeed
// or accelerate config file fmte does not open) is read as the framework's full state sharding with
// the optimizer and the parameters offloaded to the host; unread activation checkpointing (an
// accelerate FSDP config) as full checkpointing; any other unread memory setting (verl's token
// budgets and sequence parallelism, a recipe's parallel layout and batch, a flag from an unknown
// variable) as all three and one sequence per micro-batch: a token budget or a layout only bounds
// what a GPU holds from above. False when nothing unread could change the memory.
// An unread setting other than sharding and checkpointing: a layout, a batch or token budget, a
// memory option (what the favourable reading treats as "all of these").
// An unread setting of an online objective's other models (the generation engine's share and
// sleep mode, the KL reference): read as the least memory (no share, asleep, no reference).
bool UnreadOnlineModelSetting(const UnreadSetting& u) {
  return u.key == "generation-memory" || u.key == "generation-sleeps" || u.key == "kl-reference" ||
         u.key == "generation-batch" || u.key == "generation-gathers";
}

bool UnreadBeyondStatesAndCheckpointing(const UnreadSetting& u) {
  return u.key != "sharding" && u.key != "activation-checkpointing" && u.key != "objective" &&
         !UnreadOnlineModelSetting(u);
}

bool FavourableReading(const JobRequest& r, const TrainingJob& job, TrainingJob* out,
                       std::string* assumed) {
  *out = job;
  assumed->clear();
  auto add = [assumed](std::string_view what) {
    *assumed += Cat({assumed->empty() ? "" : " ", what});
  };
  bool states = false, checkpointing = false, micro_batch = false;
  for (const UnreadSetting& u : r.unread) {
    // An unread objective (swift rlhf --rlhf_type $TYPE) is read as supervised, one sequence per
    // sample and no reference: what the request already holds.
    if (u.key == "objective") {
      if (out->objective != Objective::kSft) {
        out->objective = Objective::kSft;
        add("objective=sft");
      }
      continue;
    }
    if (UnreadOnlineModelSetting(u)) {
      if (u.key == "generation-memory" && out->generation_memory > 0) {
        out->generation_memory = 0;
        add("generation-memory=0");
      } else if (u.key == "generation-sleeps" && out->generation_memory > 0 &&
                 !out->generation_sleeps) {
        out->generation_sleeps = true;
        add("generation-sleeps=true");
      } else if (u.key == "generation-batch" && out->generation_batch > 0) {
        out->generation_batch = 0;
        add("generation-batch=0");
      } else if (u.key == "generation-gathers" && out->generation_gathers) {
        out->generation_gathers = false;
        add("generation-gathers=false");
      } else if (u.key == "kl-reference" && out->kl_reference) {
        out->kl_reference = false;
        add("kl-reference=false");
      }
      continue;
    }
    states = states || u.key != "activation-checkpointing";
    checkpointing = checkpointing || u.key != "sharding";
    micro_batch = micro_batch || UnreadBeyondStatesAndCheckpointing(u);
  }
  if (states) {
    // Sharded as fully as the framework can, and offloaded: the least the states can take.
    const Sharding full = internal::StateSharding(job);
    if (!ShardsWeights(out->sharding) && out->sharding != full) {
      out->sharding = full;
      add(Cat({"sharding=", ToString(full)}));
    }
    const bool weights = ShardsWeights(out->sharding);
    if (!out->offload_optimizer || (weights && !out->offload_params)) {
      out->offload_optimizer = true;
      out->offload_params = weights;
      add(weights ? "offload-optimizer=true offload-params=true" : "offload-optimizer=true");
    }
  }
  if (checkpointing && out->activation_checkpointing != Checkpointing::kFull) {
    out->activation_checkpointing = Checkpointing::kFull;
    add("activation-checkpointing=full");
  }
  if (micro_batch && out->micro_batch > 1) {
    out->micro_batch = 1;
    add("micro-batch=1");
  }
  return !assumed->empty();
}

// The largest value in [1, below) of the job's field `field` with which `job` fits (its estimate
// in `estimate`), or 0 when not even 1 does. Memory grows with the field, so a bisection finds it.
int64_t LargestFitting(const internal::PolicyContext& ctx, const TrainingJob& job,
                       int64_t TrainingJob::*field, int64_t below, JobEstimate* estimate) {
  TrainingJob smaller = job;
  JobEstimate e;
  int64_t lo = 0, hi = below - 1;  // lo fits (0: none found yet)
  while (lo < hi) {
    smaller.*field = lo + (hi - lo + 1) / 2;
    if (ctx.prepared->EstimateMemory(smaller, *ctx.gpu, &e).ok() &&
        e.memory.per_gpu_bytes <= ctx.usable_bytes) {
      lo = smaller.*field;
      *estimate = e;
    } else {
      hi = smaller.*field - 1;
    }
  }
  return lo;
}

// The longest sequence below job.seq_len with which `job` fits, or 0 when not even one token does.
int64_t LongestFittingSeq(const internal::PolicyContext& ctx, const TrainingJob& job,
                          JobEstimate* estimate) {
  return LargestFitting(ctx, job, &TrainingJob::seq_len, job.seq_len, estimate);
}

// When `job` does not fit only because of its evaluation (memory.peak_phase "evaluation"): the
// largest evaluation batch per GPU that fits (0: not even one sequence), with the per-GPU bytes of
// its training steps alone in `training_bytes`; -1 when the training steps do not fit either.
int64_t LargestFittingEvalBatch(const internal::PolicyContext& ctx, const TrainingJob& job,
                                int64_t* training_bytes) {
  TrainingJob none = job;
  none.eval_batch = 0;
  JobEstimate e;
  if (!ctx.prepared->EstimateMemory(none, *ctx.gpu, &e).ok() ||
      e.memory.per_gpu_bytes > ctx.usable_bytes)
    return -1;
  *training_bytes = e.memory.per_gpu_bytes;
  return LargestFitting(ctx, job, &TrainingJob::eval_batch, job.eval_batch, &e);
}

// Whether `job` fits under the most favourable reading of what the request could not read;
// `estimate` gets that reading's memory estimate and `assumed` what was assumed. A Megatron job
// whose parallel layout is unread (a Megatron-Bridge recipe's Python defaults, TP from an unknown
// variable) may spread its model over all its GPUs: TP within a node, PP across the rest. The
// layouts the estimator accepts for the model (heads, layers) are tried; the least memory wins.
bool FitsFavourably(const internal::PolicyContext& ctx, const JobRequest& r, const TrainingJob& job,
                    JobEstimate* estimate, std::string* assumed) {
  TrainingJob favourable;
  if (!FavourableReading(r, job, &favourable, assumed)) return false;
  const bool layout_unread =
      std::any_of(r.unread.begin(), r.unread.end(), UnreadBeyondStatesAndCheckpointing);
  if (!(layout_unread && favourable.framework == Framework::kMegatron && favourable.gpus > 1))
    return ctx.prepared->EstimateMemory(favourable, *ctx.gpu, estimate).ok() &&
           estimate->memory.per_gpu_bytes <= ctx.usable_bytes;
  bool found = false;
  TrainingJob best_layout = favourable;
  const int64_t node = std::min<int64_t>(favourable.EffectiveGpusPerNode(), favourable.gpus);
  // A TP or PP that the request does give (on the line, in a file, #FMTE) is kept as given.
  std::vector<int64_t> tps, pps, cps;
  if (r.SourceOf("tp") != nullptr)
    tps.push_back(favourable.tp);
  else
    for (int64_t tp = 1; tp <= node; tp *= 2) tps.push_back(tp);
  if (r.SourceOf("pp") != nullptr)
    pps.push_back(favourable.pp);
  else
    for (int64_t pp = 1; pp <= std::min<int64_t>(favourable.gpus, 64); pp *= 2) pps.push_back(pp);
  // Context parallelism only where the request leaves it unread: long-sequence recipes use it.
  if (r.SourceOf("cp") != nullptr ||
      !std::any_of(r.unread.begin(), r.unread.end(),
                   [](const UnreadSetting& u) { return u.key == "cp"; }))
    cps.push_back(favourable.cp);
  else
    for (int64_t cp = 1; cp <= std::min<int64_t>(favourable.gpus, 32); cp *= 2) cps.push_back(cp);
  for (const int64_t tp : tps) {
    for (const int64_t pp : pps) {
      for (const int64_t cp : cps) {
        const int64_t mp = tp * pp * cp;
        if (mp > favourable.gpus || favourable.gpus % mp != 0) continue;
        TrainingJob layout = favourable;
        layout.tp = tp;
        layout.pp = pp;
        layout.cp = cp;
        JobEstimate e;
        if (!ctx.prepared->EstimateMemory(layout, *ctx.gpu, &e).ok()) continue;  // not valid here
        if (!found || e.memory.per_gpu_bytes < estimate->memory.per_gpu_bytes) {
          *estimate = e;
          best_layout = layout;
          found = true;
        }
      }
    }
  }
  if (!found) return false;
  if (best_layout.tp != job.tp || best_layout.pp != job.pp || best_layout.cp != job.cp)
    *assumed += Cat({assumed->empty() ? "" : " ", "tp=", std::to_string(best_layout.tp),
                     " pp=", std::to_string(best_layout.pp),
                     best_layout.cp != job.cp ? " cp=" + std::to_string(best_layout.cp) : ""});
  return estimate->memory.per_gpu_bytes <= ctx.usable_bytes;
}

// One reason per alternative of `d` that fits, each "<prefix><change>: X GiB per GPU of Y GiB
// usable"; whether there was one.
bool AddFittingAlternatives(std::string_view prefix, Decision* d) {
  bool any = false;
  for (const Alternative& a : d->alternatives) {
    if (!a.fits) continue;
    any = true;
    d->reasons.push_back(Cat({prefix, a.change, ": ", Gib(a.per_gpu_bytes), " per GPU of ",
                              Gib(a.usable_bytes), " usable"}));
  }
  return any;
}

// "line 16: --deepspeed ds_config.json, line 20: ..."
std::string UnreadOrigins(const JobRequest& r) {
  std::string out;
  for (const UnreadSetting& u : r.unread)
    if (out.find(u.origin) == std::string::npos) out += (out.empty() ? "" : ", ") + u.origin;
  return out;
}

}  // namespace

void ClearPolicyCaches() { internal::ClearArchCache(); }

std::string_view ToString(DecisionKind k) {
  return k == DecisionKind::kAccept ? "accept" : k == DecisionKind::kRewrite ? "rewrite" : "reject";
}

Decision Decide(const JobRequest& r, const Config& config, const Estimator& estimator) {
  Decision d;
  d.job = r.job;
  d.time_limit_min = r.time_limit_min;
  if (!r.is_llm_job) return d;  // untouched
  const PartitionConfig& p = config.For(r.partition);
  d.partition = r.partition.empty() ? config.default_partition : r.partition;
  if (p.mode == Mode::kOff) return d;
  d.touched = true;
  // At most: an assumed GPU count, the verdict, a line per alternative, "no single change" (or on a
  // raise: the batch and time-limit lines), three right-sizing lines, the advise line and the
  // parser's notes: one allocation for all of them.
  d.reasons.reserve(internal::kMaxAlternatives + 3 + 3 + r.warnings.size() + 2);

  if (r.job.model.empty()) {
    Fail(r, config, p, "no model named (--fmte-model=ID or #FMTE model=ID)", &d);
    return d;
  }
  // No GPUs in the request: on a partition whose GPU fmte.conf names, whole nodes (--exclusive)
  // have GpusPerNode each, and a launcher's process count or a task per GPU tell how many the job
  // uses. Such a count is assumed, never acted on: the job is estimated, not rejected or raised.
  bool assumed_gpus = false;
  if (r.slurm_gpus == 0) {
    const bool gpu_partition = !config.GpuNameFor(d.partition, "").empty();
    const FieldSource* counted = r.SourceOf("gpus");
    if (!gpu_partition || (!r.exclusive && counted == nullptr)) {
      d.reasons.push_back(
          "this LLM training job requests no GPUs; ask for them with --gres=gpu:N or --gpus=N");
      Finish(r, &d);
      return d;
    }
    assumed_gpus = true;
    if (r.exclusive) {
      d.job.gpus = std::max<int64_t>(1, r.nodes) * p.gpus_per_node;
      d.job.gpus_per_node = p.gpus_per_node;
      d.reasons.push_back(
          Cat({"no GPUs in the request: --exclusive gives whole nodes of partition '",
               d.partition.empty() ? "(default)" : d.partition, "', assumed ",
               std::to_string(std::max<int64_t>(1, r.nodes)), " x ",
               std::to_string(p.gpus_per_node), " GPUs (GpusPerNode)"}));
    } else {
      d.reasons.push_back(Cat({"no GPUs in the request: ", std::to_string(d.job.gpus),
                               " assumed from ", counted->origin}));
    }
  }
  std::shared_ptr<const ModelArch> owned_arch;
  auto arch = ResolveArch(r, estimator.catalogs(), &owned_arch, &d.named_after);
  if (!arch.ok()) {
    Fail(r, config, p, arch.status().message(), &d);
    return d;
  }
  // A model taken from its name is a guess, like a GPU count fmte assumed: estimated and shown,
  // never rejected, raised or given a time limit on.
  const bool assumed_model = !d.named_after.empty();
  const bool guessed = assumed_gpus || assumed_model;  // estimated, never acted on
  if (assumed_model) {
    d.reasons.push_back(Cat({"model: '", r.job.model,
                             "' is neither readable here nor in the catalog; its name says it is a "
                             "copy of ",
                             d.named_after, ", whose architecture is assumed (#FMTE model=",
                             d.named_after, " says so, a readable config.json checks it)"}));
  }
  std::string gpu_name = config.GpuNameFor(d.partition, r.gres_gpu_type);
  if (gpu_name.empty()) gpu_name = r.job.gpu;
  if (gpu_name.empty()) {
    Fail(r, config, p,
         "the GPU model is unknown: request a typed GPU (--gres=gpu:a100:N) or set Gpu= for "
         "partition '" +
             d.partition + "' in fmte.conf",
         &d);
    return d;
  }
  auto gpu = estimator.catalogs().gpus.Find(gpu_name);
  if (!gpu.ok()) {
    Fail(r, config, p, gpu.status().message(), &d);
    return d;
  }

  PolicyContext ctx{&r, &config, &p, &estimator, *arch, *gpu, d.partition, 0};
  ctx.usable_bytes = internal::UsableBytes(**gpu, p);
  // The job as decided, resolved in place in the decision (its GPU and GPUs per node); a failed
  // estimate leaves the decision with the request's job.
  TrainingJob& job = d.job;
  job.gpu = (*gpu)->name;
  if (job.gpus_per_node == 0) job.gpus_per_node = std::min(job.gpus, p.gpus_per_node);
  // One prepared model for this estimate and, when the job does not fit, for the GPU-count search
  // and every alternative.
  PreparedEstimate prepared(estimator.catalogs(), **arch);
  ctx.prepared = &prepared;
  // Estimated straight into the decision; a failed one is cleared.
  if (const Status est = prepared.Estimate(job, **gpu, &d.estimate); !est.ok()) {
    d.job = r.job;
    d.estimate = JobEstimate();
    Fail(r, config, p, est.message(), &d);
    return d;
  }

  d.estimated = true;
  d.gpu = job.gpu;
  d.capacity_bytes = (*gpu)->memory_bytes;
  d.usable_bytes = ctx.usable_bytes;
  const int64_t need = d.estimate.memory.per_gpu_bytes;
  const std::string what =
      Cat({job.model, " ", MethodText(job),
           job.objective != Objective::kSft ? Cat({" (", ToString(job.objective), ")"}) : "",
           " on ", std::to_string(job.gpus), "x ", job.gpu});
  const std::string against =
      Cat({Gib(need), " per GPU; ", job.gpu, " has ", Gib(d.capacity_bytes), " (",
           Gib(d.usable_bytes), " usable at ",
           std::to_string(static_cast<int>(std::lround(p.usable_memory_fraction * 100))), "%)"});

  const bool fits_as_asked = need <= d.usable_bytes;
  if (fits_as_asked) {
    d.reasons.push_back(Cat({what, " fits: predicted ", against}));
    // A multimodal model's images add vision-encoder activations that depend on the data (how
    // many images, at what resolution): a fit is said without them, a misfit holds with them.
    if (LoadsVisionTower(**arch, job))
      d.reasons.push_back(Cat({"note: ", job.model, " is multimodal (", (*arch)->multimodal_type,
                               "): its vision encoder's weights are counted, the activations of "
                               "the images it encodes are not"}));
  } else {
    // Too big. Sharded jobs may get more GPUs (RaiseGpus=yes); otherwise reject with alternatives.
    // Most candidates change only the GPU count, sharding, batch or checkpointing: the job's
    // parameters per pipeline stage are counted once for them (the estimate above validated it).
    prepared.ShareParamsOf(job);
    TrainingJob more;
    JobEstimate more_est;
    std::string assumed;  // the favourable reading of what fmte could not read
    const bool can_raise =
        p.raise_gpus && !assumed_model && ShardsOptimizer(job.sharding) &&
        (r.gpu_field == GpuTresField::kPerNode || r.gpu_field == GpuTresField::kPerJob);
    // The training step fits and its evaluation does not: the evaluation set's lengths are the
    // data's and its batch is one setting, so the job is accepted with what to set.
    int64_t training_bytes = 0;
    const int64_t eval_fits = d.estimate.memory.peak_phase == "evaluation"
                                  ? LargestFittingEvalBatch(ctx, job, &training_bytes)
                                  : -1;
    if (eval_fits >= 0) {
      const FieldSource* eb = r.SourceOf("eval-batch");
      d.reasons.push_back(
          Cat({what, " needs ", Gib(need), " per GPU (", Gib(d.usable_bytes),
               " usable) when it evaluates ", std::to_string(job.eval_batch),
               SamplesWord(job, job.eval_batch), " of ", std::to_string(job.seq_len),
               " tokens per GPU", eb == nullptr ? std::string() : " (" + eb->origin + ")",
               "; its training steps need ", Gib(training_bytes), ": accepted; ",
               eval_fits > 0
                   ? "set per_device_eval_batch_size (eval_batch_size) to " +
                         std::to_string(eval_fits) +
                         " or less, or shorter evaluation samples, so that "
                         "the evaluation fits"
                   : "even one evaluation sequence of that length does not fit: evaluate shorter "
                     "samples, or on fewer tokens"}));
    } else if (can_raise && internal::FindMoreGpus(ctx, job, &more, &more_est)) {
      // The search judges by memory only; the chosen layout gets the full estimate (time included),
      // so a raised job still gets its time limit.
      if (JobEstimate full; prepared.Estimate(more, **gpu, &full).ok()) {
        d.estimate = std::move(full);
      } else {
        d.estimate = std::move(more_est);
      }
      d.kind = DecisionKind::kRewrite;
      SetGpuRewrite(r, more, &d);
      const std::string more_gpus = std::to_string(more.gpus);
      d.reasons.push_back(
          Cat({what, " needs ", Gib(need), " per GPU (", Gib(d.usable_bytes), " usable); with ",
               ToString(job.sharding), " sharding over ", more_gpus, " GPUs it needs ",
               Gib(d.estimate.memory.per_gpu_bytes), ": GPU count raised to ", more_gpus, " (",
               ToString(d.gpu_field), "=", d.new_gpu_tres,
               d.new_min_nodes > 0 ? ", nodes=" + std::to_string(d.new_min_nodes) : "", ")"}));
      if (job.global_batch == 0 && more.gpus > job.gpus)
        d.reasons.push_back(
            Cat({"the global batch grows from ",
                 std::to_string(job.micro_batch * job.grad_accum * job.DataParallel()), " to ",
                 std::to_string(more.micro_batch * more.grad_accum * more.DataParallel()),
                 SamplesWord(job, 2), " per step; lower the gradient accumulation to keep it"}));
      d.job = std::move(more);
    } else if (FitsFavourably(ctx, r, job, &more_est, &assumed)) {
      // fmte could not read what may make it fit (a config file it does not open): a job that fits
      // under the most favourable reading is accepted, never rejected on a guess.
      d.reasons.push_back(
          Cat({what, " needs ", Gib(need), " per GPU as fmte reads it (", Gib(d.usable_bytes),
               " usable), but ", UnreadOrigins(r), " was not read; with ", assumed, " it needs ",
               Gib(more_est.memory.per_gpu_bytes),
               ": accepted unchecked; put what fmte could not read in #FMTE lines "
               "(#FMTE sharding=zero3, ...) so that fmte can check the job"}));
    } else if (int64_t longest = 0;
               job.seq_len_is_cap && (longest = LongestFittingSeq(ctx, job, &more_est)) > 0) {
      // The sequence length is a truncation limit: micro-batches are padded to their longest
      // sample, so whether the job fits depends on the data; never rejected on it.
      const FieldSource* seq = r.SourceOf("seq-len");
      const std::string limit = std::to_string(job.seq_len);
      d.reasons.push_back(
          Cat({what, " needs ", Gib(need), " per GPU (", Gib(d.usable_bytes),
               " usable) when a micro-batch reaches the ", limit, " tokens samples are cut to",
               seq == nullptr ? std::string() : " (" + seq->origin + ")",
               "; a micro-batch is padded to its longest sample, so it fits while that is at most ",
               std::to_string(longest), " tokens (", Gib(more_est.memory.per_gpu_bytes),
               "): accepted; lower the limit to ", std::to_string(longest),
               " (or pack to that length) to be sure"}));
      d.alternatives = internal::FindAlternatives(ctx, job);
      AddFittingAlternatives("would fit at the full length: ", &d);
    } else if (guessed) {
      // The GPU count or the model is a guess: never reject on it.
      d.reasons.push_back(
          Cat({what, " would need ", against,
               assumed_gpus ? " on the GPUs assumed: accepted unchecked; ask for the GPUs "
                              "(--gres=gpu:N) so that fmte can check the job"
                            : " as the model assumed: accepted unchecked; name the model "
                              "(#FMTE model=ID) so that fmte can check the job"}));
    } else if (d.estimate.memory.low_bytes <= d.usable_bytes) {
      // Predicted not to fit, but published runs have peaked at as little as the low end of
      // fmte's prediction (memory.low_bytes, docs/memory.md "The bound"): a rejection must rest
      // on a bound, so the job is accepted with the numbers and what would make it fit.
      d.reasons.push_back(
          Cat({what, " is predicted to need ", against, "; measured peaks of published runs have ",
               "been as low as ", Gib(d.estimate.memory.low_bytes),
               " for such a prediction, so it may fit: accepted unchecked, it may run out of "
               "GPU memory"}));
      d.alternatives = internal::FindAlternatives(ctx, job);
      AddFittingAlternatives("would fit as predicted: ", &d);
    } else {
      d.kind = DecisionKind::kReject;
      d.reject_reason = RejectReason::kMemory;
      d.reasons.push_back(Cat({"rejected: ", what, " needs ", against}));
      d.reasons.push_back(
          Cat({"even the low end of the prediction, ", Gib(d.estimate.memory.low_bytes),
               " (the lowest measured / predicted of published runs), exceeds the ",
               Gib(d.usable_bytes), " usable"}));
      if (!r.unread.empty())
        d.reasons.push_back(
            Cat({"even under the most favourable reading of what fmte could not read (",
                 UnreadOrigins(r), ") it does not fit"}));
      d.alternatives = internal::FindAlternatives(ctx, job);
      const bool any = AddFittingAlternatives("would fit: ", &d);
      for (const Alternative& a : d.alternatives)
        if (!a.fits)
          d.reasons.push_back(
              Cat({"not enough alone: ", a.change, ": ", Gib(a.per_gpu_bytes), " per GPU"}));
      if (!any)
        d.reasons.push_back(
            "no single change found that fits; combine them or use a smaller model");
    }
  }
  // A time limit from a guessed GPU count or model could kill the job: none is set or judged then.
  if (!guessed) {
    DecideHostMemory(r, &d);
    ApplyOperatorSet(estimator.catalogs(), p, **arch, &d);
    DecideTime(r, p, **arch, &d);
  }
  if (fits_as_asked && !guessed) internal::AddRightSizingNotices(ctx, d.job, &d);

  if (p.mode == Mode::kAdvise && d.kind != DecisionKind::kAccept) {
    d.advise_only = true;
    d.reasons.insert(d.reasons.begin(),
                     std::string("advice only (Mode=advise): would ") +
                         (d.kind == DecisionKind::kReject ? "reject" : "rewrite") + " this job");
    d.kind = DecisionKind::kAccept;
    d.reject_reason = RejectReason::kNone;
    d.new_time_limit_min = 0;
    d.new_gpus = 0;
    d.new_gpu_tres.clear();
    d.new_min_nodes = 0;
    d.gpu_field = GpuTresField::kNone;
    d.time_limit_min = r.time_limit_min;
  }
  if (d.new_gpus == 0) d.gpu_field = GpuTresField::kNone;
  Finish(r, &d);
  return d;
}

}  // namespace fmte
