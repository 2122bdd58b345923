// job_submit/fmte (job_submit_fmte.so, enabled with JobSubmitPlugins=fmte): a thin adapter that
// maps each submission to a JobRequest, asks the core's policy for a Decision and writes it back
// (time_limit, tres_per_*, *err_msg, the `fmte:` record in admin_comment). job_modify re-decides
// changes of time limit or GPUs for jobs it admitted.
//
// Runs inside slurmctld with its locks held: everything is loaded in init() (and reloaded when the
// files change), per call work is parsing the script and one estimate. One mutex serialises the
// entry points; no exception crosses the C boundary; any internal error fails open
// (OnError=accept, the default) and is logged with the "job_submit/fmte: " prefix.
#include <dlfcn.h>

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <exception>
#include <mutex>
#include <string>

#include "client_decision.h"
#include "decision_cache.h"
#include "fmte/policy.h"
#include "fmte/record.h"
#include "fmte/request.h"
#include "job_desc_adapter.h"
#include "job_tracker.h"
#include "log_queue.h"
#include "plugin_state.h"
#include "slurm_xapi.h"

#define FMTE_EXPORT __attribute__((visibility("default")))

extern "C" FMTE_EXPORT const char plugin_name[] = "fmte: LLM training job admission";
extern "C" FMTE_EXPORT const char plugin_type[] = "job_submit/fmte";
extern "C" FMTE_EXPORT const uint32_t plugin_version = SLURM_VERSION_NUMBER;
// The Slurm version built for, as text that fmte-advise doctor finds in the file (not exported).
extern "C" __attribute__((used)) const char fmte_build_info[] =
    "fmte-build-for-slurm=" FMTE_SLURM_VERSION ";";

namespace {

using fmte::slurm::JobTracker;
using fmte::slurm::LogLevel;
using fmte::slurm::PluginState;

void WriteLogLine(LogLevel level, const std::string& line) {
  if (level == LogLevel::kInfo)
    slurm_info("%s", line.c_str());
  else
    slurm_verbose("%s", line.c_str());
}

// What job_submit costs slurmctld: the time of every call (slurmctld holds its job write lock
// throughout), reported at info every kCostReportS and at fini (docs/slurm.md). REQUIRES:
// Globals::mu held.
struct CostStats {
  static constexpr time_t kCostReportS = 3600;
  int64_t calls = 0, decided = 0, cached = 0, client = 0, total_us = 0, max_us = 0;
  time_t since = 0;
  std::string Line() const {
    char buf[256];
    snprintf(buf, sizeof(buf),
             "job_submit/fmte: cost over %lld s: %lld submissions (%lld LLM jobs decided, %lld "
             "of the decisions from the cache, %lld made in sbatch), slurmctld time in "
             "job_submit: mean %lld us, max %lld us, total %.3f s",
             static_cast<long long>(time(nullptr) - since), static_cast<long long>(calls),
             static_cast<long long>(decided), static_cast<long long>(cached),
             static_cast<long long>(client), static_cast<long long>(calls ? total_us / calls : 0),
             static_cast<long long>(max_us), static_cast<double>(total_us) * 1e-6);
    return buf;
  }
};

struct Globals {
  std::mutex mu;
  CostStats cost;
  PluginState state;
  JobTracker tracker;
  fmte::slurm::DecisionCache decisions;  // cleared whenever the files are reloaded
  fmte::slurm::LogQueue log{
      &WriteLogLine};  // the decision lines (started by init, drained by fini)
  fmte::OnError on_error = fmte::OnError::kAccept;
  time_t last_init_attempt = 0;
};

Globals& G() {
  static Globals* g = new Globals();  // never destroyed: slurmctld may call fini late
  return *g;
}

// REQUIRES: G().mu held. Loads lazily when init() could not (the files may appear later).
const fmte::slurm::Loaded* CurrentState() {
  Globals& g = G();
  const fmte::slurm::Loaded* loaded = g.state.Current();
  if (loaded == nullptr && time(nullptr) - g.last_init_attempt >= fmte::slurm::kReloadCheckS) {
    g.last_init_attempt = time(nullptr);
    fmte::Status st = g.state.Init();
    if (st.ok()) {
      g.decisions.Clear();
      slurm_info("job_submit/fmte: loaded %s", g.state.config_path().c_str());
      loaded = g.state.Current();
    }
  }
  if (std::string msg = g.state.TakeReloadMessage(); !msg.empty()) {
    if (msg.starts_with("reload failed")) {
      slurm_error("job_submit/fmte: %s", msg.c_str());
    } else {
      slurm_info("job_submit/fmte: %s", msg.c_str());
    }
    fmte::ClearPolicyCaches();  // nothing cached outlives a configuration
    g.decisions.Clear();
  }
  if (loaded != nullptr) g.on_error = loaded->config.on_error;
  return loaded;
}

// What an internal error does: accept untouched (default) or reject (OnError=reject).
int FailureCode(char** err_msg, const char* what) {
  slurm_error("job_submit/fmte: internal error (%s); OnError=%s", what,
              std::string(fmte::ToString(G().on_error)).c_str());
  if (G().on_error == fmte::OnError::kAccept) return SLURM_SUCCESS;
  if (err_msg != nullptr) {
    fmte::slurm::ReplaceXstr(err_msg,
                             "fmte: the job could not be checked (internal error); "
                             "please contact the administrators");
  }
  return ESLURM_ACCESS_DENIED;
}

// A call's time in microseconds: the monotonic clock, which the vDSO reads without entering the
// kernel. (This thread's CPU clock, CLOCK_THREAD_CPUTIME_ID, is a system call each time: measured
// 1.3 us per read on the lab VM, two per submission, more than the parts of a decision it timed.)
// Wall time is never below the CPU time and is what other RPCs wait for under the job lock.
int64_t NowUs() {
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

// Adds one job_submit call to the cost figures when it ends (also on early returns and errors),
// and writes the summary every kCostReportS. REQUIRES: Globals::mu held for its whole life.
class CostScope {
 public:
  CostScope(CostStats* stats, int64_t start_us) : stats_(stats), start_us_(start_us) {}
  ~CostScope() {
    const int64_t us = NowUs() - start_us_;
    CostStats& c = *stats_;
    if (c.since == 0) c.since = time(nullptr);
    ++c.calls;
    c.decided += decided_;
    c.cached += decided_ && cached_;
    c.client += decided_ && client_;
    c.total_us += us;
    c.max_us = std::max(c.max_us, us);
    if (time(nullptr) - c.since >= CostStats::kCostReportS) {
      G().log.Push(LogLevel::kInfo, c.Line());
      c = CostStats{};
    }
  }
  void Decided(bool from_cache, bool from_client) {
    decided_ = true;
    cached_ = from_cache;
    client_ = from_client;
  }

 private:
  CostStats* stats_;
  int64_t start_us_;
  bool decided_ = false, cached_ = false, client_ = false;
};

// Whether slurmctld writes verbose lines now (SlurmctldLogsVerbose), also as changed by
// `scontrol setdebug`, read from slurmctld's slurm_conf (public slurm_conf_t layout). Outside
// slurmctld (tests, benchmark): true.
bool VerboseLogged() {
  static const auto* conf = static_cast<const slurm_conf_t*>(dlsym(RTLD_DEFAULT, "slurm_conf"));
  return conf == nullptr ||
         fmte::slurm::SlurmctldLogsVerbose(conf->slurmctld_debug, conf->slurmctld_syslog_debug);
}

// `made_by`: where the decision was made: "controller", "cache" (an earlier decision of the same
// submission) or "sbatch" (the SPANK plugin's, client_decision.h).
void LogDecision(const char* hook, const job_desc_msg_t* desc, std::string_view model,
                 int64_t slurm_gpus, const fmte::slurm::Outcome& d, int rc, int64_t start_us,
                 const char* made_by) {
  // What accounting does not keep is logged at info: rejections, failed estimates, and what
  // Mode=advise would have done. Accepted and rewritten jobs carry the decision in their
  // AdminComment record, so their line is at verbose (SlurmctldDebug=verbose shows it), and is
  // not even composed when slurmctld would drop it. The line is written by the log queue's
  // thread: Slurm's log path costs three system calls per line (poll, fstat, write), which would
  // otherwise run with slurmctld's job lock held.
  const bool info = d.kind == fmte::DecisionKind::kReject || d.error || d.advise_only;
  if (!info && !VerboseLogged()) return;
  std::string line;
  line.reserve(256 + model.size());
  const auto num = [&line](int64_t v) {
    char buf[24];
    line.append(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
  };
  line.append("job_submit/fmte: ").append(hook).append(" uid=");
  num(desc->user_id);
  line.append(" name=").append(desc->name ? desc->name : "").append(" model=").append(model);
  line.append(" decision=").append(fmte::ToString(d.kind));
  if (d.advise_only) line += "(advise)";
  if (d.error) line += "(error)";
  if (d.estimated) {
    line += " per_gpu_bytes=";
    num(d.per_gpu_bytes);
    line += " usable_bytes=";
    num(d.usable_bytes);
    line.append(" gpu=").append(d.gpu);
  }
  if (d.new_gpus > 0) {
    line += " gpus=";
    num(slurm_gpus);
    line += "->";
    num(d.new_gpus);
  }
  if (d.new_time_limit_min > 0) {
    line += " time_limit_min=";
    num(d.new_time_limit_min);
  }
  line.append(" by=").append(made_by);
  line += " rc=";
  num(rc);
  line += " us=";
  num(NowUs() - start_us);
  G().log.Push(info ? LogLevel::kInfo : LogLevel::kVerbose, std::move(line));
}

}  // namespace

extern "C" FMTE_EXPORT int init(void) {
  try {
    Globals& g = G();
    // slurmctld loads job_submit plugins after it has daemonized and blocked its signals
    // (controller.c), so the log thread survives and inherits the blocked mask. If no thread can
    // be started, the lines are written directly.
    g.log.Start();
    std::lock_guard<std::mutex> lock(g.mu);
    g.last_init_attempt = time(nullptr);
    fmte::Status st = g.state.Init();
    if (!st.ok()) {
      // Never stop slurmctld: run untouched until the files load (retried every few seconds).
      slurm_error(
          "job_submit/fmte: cannot load %s or the catalogs: %s; accepting jobs untouched "
          "until it loads",
          g.state.config_path().c_str(), st.ToString().c_str());
      return SLURM_SUCCESS;
    }
    const fmte::slurm::Loaded* loaded = g.state.Current();
    g.decisions.Clear();
    g.on_error = loaded->config.on_error;
    slurm_info("job_submit/fmte: loaded %s (%s), %zu models, OnError=%s",
               g.state.config_path().c_str(),
               loaded->config_from_file ? "file" : "missing: all defaults",
               loaded->estimator.catalogs().models.size(),
               std::string(fmte::ToString(g.on_error)).c_str());
    return SLURM_SUCCESS;
  } catch (const std::exception& e) {
    slurm_error("job_submit/fmte: init failed (%s); jobs pass unchecked", e.what());
    return SLURM_SUCCESS;
  } catch (...) {
    slurm_error("job_submit/fmte: init failed (unknown exception); jobs pass unchecked");
    return SLURM_SUCCESS;
  }
}

extern "C" FMTE_EXPORT int fini(void) {
  try {
    {
      std::lock_guard<std::mutex> lock(G().mu);
      G().state.Reset();
      G().decisions.Clear();
      if (G().cost.calls > 0) G().log.Push(LogLevel::kInfo, G().cost.Line());
      G().cost = CostStats{};
    }
    G().log.Stop();  // writes the queued lines: no thread of ours runs once the plugin is unloaded
  } catch (const std::exception& e) {
    slurm_error("job_submit/fmte: fini: %s", e.what());
  } catch (...) {
    slurm_error("job_submit/fmte: fini: unknown exception");
  }
  return SLURM_SUCCESS;
}

extern "C" FMTE_EXPORT int job_submit(job_desc_msg_t* job_desc, uint32_t submit_uid,
                                      char** err_msg) {
  (void)submit_uid;
  if (job_desc == nullptr) return SLURM_SUCCESS;
  const int64_t start_us = NowUs();
  try {
    Globals& g = G();
    std::lock_guard<std::mutex> lock(g.mu);
    CostScope cost(&g.cost, start_us);
    const fmte::slurm::Loaded* loaded = CurrentState();
    if (loaded == nullptr) return SLURM_SUCCESS;  // nothing loaded: untouched (logged at init)
    // The id the job will get: an admitted job is remembered under it for job_modify, any other
    // submission clears what an earlier, failed submission may have left under the same id.
    const uint32_t id = g.tracker.PredictJobId(job_desc->job_id);
    fmte::slurm::SubmitInputs in = fmte::slurm::ReadJobDesc(*job_desc);
    fmte::slurm::DropForwardedReading(job_desc, &in);  // read: not kept with the job
    // Decided in sbatch (client_decision.h) with the same files for this very submission: that
    // decision. Else the same submission as a recent one (DecisionCache): its decision. Either
    // way without parsing or estimating again.
    fmte::slurm::CachedDecision fresh;
    const fmte::slurm::CachedDecision* made = nullptr;
    bool from_cache = false, from_client = false;
    if (!in.client_decision.empty() && loaded->config.client_decisions) {
      auto client = fmte::slurm::DecodeClientDecision(in.client_decision);
      if (client.ok() && client->files == loaded->files_fingerprint &&
          client->inputs == fmte::slurm::DecisionCache::InputsHash(in)) {
        fresh = std::move(client->decision);
        made = &fresh;
        from_client = true;
      }
    }
    if (made == nullptr) {
      const bool omit_script = fmte::slurm::DecisionCache::MayOmitScript(in);
      const auto probe = fmte::slurm::DecisionCache::ProbeFor(in, !omit_script);
      made = g.decisions.Find(probe);
      from_cache = made != nullptr;
      if (!from_cache) {
        const fmte::JobRequest request =
            fmte::ParseJobRequest(in.script, in.spank_values, in.facts);
        fresh = fmte::slurm::DecideJob(request, loaded->config, loaded->estimator);
        // Kept: LLM jobs (the others cost little to read again), unless a reading was forwarded
        // but not used (malformed, or without its scan): the script was then read, and the key
        // without it would not do.
        made = &fresh;
        if (request.is_llm_job && (!omit_script || request.forwarded_scan))
          made = g.decisions.Put(probe, std::move(fresh), &fresh);
      }
    }
    if (!made->is_llm_job) {
      g.tracker.Forget(id);
      return SLURM_SUCCESS;  // not an LLM training job: untouched
    }
    const fmte::slurm::Outcome& decision = made->outcome;
    cost.Decided(from_cache, from_client);
    int rc = fmte::slurm::ApplyDecision(decision, made->record, job_desc, err_msg);
    if (rc == SLURM_SUCCESS)
      fmte::slurm::ApplyWarnSignal(decision, loaded->config.For(in.facts.partition), job_desc,
                                   err_msg);
    LogDecision("submit", job_desc, made->model, made->slurm_gpus, decision, rc, start_us,
                from_client  ? "sbatch"
                : from_cache ? "cache"
                             : "controller");
    if (rc == SLURM_SUCCESS && decision.touched && id != 0) {
      fmte::SlurmFacts facts = std::move(in.facts);
      fmte::slurm::OverlayModify(*job_desc, &facts);  // the facts as rewritten
      // Kept for job_modify's re-decision; a script the client's reading stands for is not read
      // again, so not kept (the tracker's memory then holds ~1 KB per job, not the script).
      g.tracker.Remember(
          id, fmte::slurm::TrackedJob{made->script_read ? std::string(in.script) : std::string(),
                                      std::move(in.spank_values), std::move(facts)});
    } else {
      g.tracker.Forget(id);
    }
    return rc;
  } catch (const std::exception& e) {
    return FailureCode(err_msg, e.what());
  } catch (...) {
    return FailureCode(err_msg, "unknown exception");
  }
}

namespace {

// Re-decides a tracked job whose time limit or GPU request changes. REQUIRES: nothing held.
int Modify(job_desc_msg_t* job_desc, char** err_msg) {
  if (job_desc == nullptr) return SLURM_SUCCESS;
  bool changes_time = job_desc->time_limit != NO_VAL;
  bool changes_gpus = job_desc->tres_per_node || job_desc->tres_per_job ||
                      job_desc->tres_per_task || job_desc->tres_per_socket ||
                      job_desc->min_nodes != NO_VAL;
  if (!changes_time && !changes_gpus) return SLURM_SUCCESS;
  const int64_t start_us = NowUs();
  try {
    Globals& g = G();
    std::lock_guard<std::mutex> lock(g.mu);
    const fmte::slurm::Loaded* loaded = CurrentState();
    if (loaded == nullptr) return SLURM_SUCCESS;
    uint32_t id = job_desc->job_id != NO_VAL && job_desc->job_id != 0
                      ? job_desc->job_id
                      : fmte::slurm::ParseJobIdStr(job_desc->job_id_str);
    fmte::slurm::TrackedJob* tracked = g.tracker.Find(id);
    if (tracked == nullptr) return SLURM_SUCCESS;  // not admitted by us (or forgotten): untouched
    fmte::SlurmFacts facts = tracked->facts;
    fmte::slurm::OverlayModify(*job_desc, &facts);
    const fmte::JobRequest request =
        fmte::ParseJobRequest(tracked->script, tracked->spank_values, facts);
    if (!request.is_llm_job) return SLURM_SUCCESS;
    fmte::Decision decision = fmte::Decide(request, loaded->config, loaded->estimator);
    int rc = SLURM_SUCCESS;
    // An update that would need a rewrite of the GPU count is refused: the user asked explicitly.
    bool needs_gpus = decision.kind == fmte::DecisionKind::kRewrite && decision.new_gpus > 0;
    if (decision.touched && (decision.kind == fmte::DecisionKind::kReject || needs_gpus)) {
      rc = needs_gpus ? ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE
                      : fmte::slurm::RejectCode(decision.reject_reason);
      if (err_msg != nullptr) fmte::slurm::ReplaceXstr(err_msg, decision.user_message.c_str());
      slurm_info("job_submit/fmte: update of job %" PRIu32 " refused: %s", id,
                 decision.user_message.c_str());
    } else {
      tracked->facts = facts;  // the update goes through: later checks start from it
    }
    LogDecision("modify", job_desc, request.job.model, request.slurm_gpus,
                fmte::slurm::OutcomeOf(decision), rc, start_us, "controller");
    return rc;
  } catch (const std::exception& e) {
    return FailureCode(err_msg, e.what());
  } catch (...) {
    return FailureCode(err_msg, "unknown exception");
  }
}

}  // namespace

// The job_record_t is opaque to us (internal slurmctld header): declared as an incomplete struct.
struct job_record;

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
extern "C" FMTE_EXPORT int job_modify(job_desc_msg_t* job_desc, job_record* job_ptr,
                                      uint32_t submit_uid, char** err_msg) {
  (void)job_ptr;
  (void)submit_uid;
  return Modify(job_desc, err_msg);
}
#else
// 22.05: no err_msg argument (docs/slurm.md §7.3).
extern "C" FMTE_EXPORT int job_modify(job_desc_msg_t* job_desc, job_record* job_ptr,
                                      uint32_t submit_uid) {
  (void)job_ptr;
  (void)submit_uid;
  return Modify(job_desc, nullptr);
}
#endif
