// The adapter pieces on their own: job_desc_msg_t -> SlurmFacts (NO_VAL sentinels), Decision ->
// job_desc_msg_t (fields, xmalloc'ed strings, return codes), the job_modify tracker's bounds, and
// the reload of fmte.conf when its mtime changes.
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "fmte/submission.h"
#include "job_desc_adapter.h"
#include "job_tracker.h"
#include "plugin_state.h"
#include "slurm_xapi.h"

namespace fmte::slurm {
namespace {

namespace fs = std::filesystem;

struct Desc {
  job_desc_msg_t d;
  size_t spank_entries = 0, env_entries = 0;  // as allocated (dropping entries nulls them)
  Desc() { slurm_init_job_desc_msg(&d); }
  ~Desc() {
    for (char** f : {&d.admin_comment, &d.comment, &d.tres_per_node, &d.tres_per_job, &d.partition,
                     &d.mem_per_tres}) {
      slurm_xfree(reinterpret_cast<void**>(f));  // aborts unless xmalloc'ed
    }
    FreeArray(&d.spank_job_env, spank_entries);
    FreeArray(&d.environment, env_entries);
  }
  // spank_job_env and environment as slurmctld's unpacking leaves them: xmalloc'ed.
  void SetSpankEnv(const std::vector<std::string>& entries) {
    d.spank_job_env = NewArray(entries);
    d.spank_job_env_size = static_cast<uint32_t>(spank_entries = entries.size());
  }
  void SetEnv(const std::vector<std::string>& entries) {
    d.environment = NewArray(entries);
    d.env_size = static_cast<uint32_t>(env_entries = entries.size());
  }
  static char** NewArray(const std::vector<std::string>& entries) {
    auto** array = static_cast<char**>(slurm_xcalloc(entries.size() + 1, sizeof(char*), true, false,
                                                     __FILE__, __LINE__, __func__));
    for (size_t i = 0; i < entries.size(); ++i) array[i] = slurm_xstrdup(entries[i].c_str());
    return array;
  }
  static void FreeArray(char*** array, size_t n) {
    if (*array == nullptr) return;
    for (size_t i = 0; i < n; ++i) slurm_xfree(reinterpret_cast<void**>(&(*array)[i]));
    slurm_xfree(reinterpret_cast<void**>(array));
  }
};

TEST(JobDescAdapterTest, SentinelsBecomeZeroAndStringsAreCopied) {
  Desc desc;
  SubmitInputs in = ReadJobDesc(desc.d);
  EXPECT_EQ(in.facts.time_limit_min, 0);  // NO_VAL
  EXPECT_EQ(in.facts.min_nodes, 0);
  EXPECT_TRUE(in.facts.partition.empty());
  EXPECT_TRUE(in.script.empty());
  desc.d.time_limit = INFINITE;
  EXPECT_EQ(ReadJobDesc(desc.d).facts.time_limit_min, 0);
  desc.d.time_limit = 90;
  desc.d.min_nodes = 2;
  desc.d.partition = slurm_xstrdup("gpu");
  desc.d.tres_per_job = slurm_xstrdup("gres:gpu:16");
  in = ReadJobDesc(desc.d);
  EXPECT_EQ(in.facts.time_limit_min, 90);
  EXPECT_EQ(in.facts.min_nodes, 2);
  EXPECT_EQ(in.facts.partition, "gpu");
  EXPECT_EQ(in.facts.tres_per_job, "gres:gpu:16");
  // shared: NO_VAL16 by default, JOB_SHARED_NONE for sbatch --exclusive, JOB_SHARED_USER for
  // --exclusive=user (slurm.h).
  EXPECT_FALSE(in.facts.exclusive);
  desc.d.shared = JOB_SHARED_NONE;
  EXPECT_TRUE(ReadJobDesc(desc.d).facts.exclusive);
  desc.d.shared = JOB_SHARED_USER;
  EXPECT_FALSE(ReadJobDesc(desc.d).facts.exclusive);
}

// Host memory as sbatch 22.05 hands it to the controller: --mem=N in pn_min_memory (megabytes),
// --mem-per-cpu=N there with the MEM_PER_CPU bit, --mem-per-gpu=N as mem_per_tres "gres:gpu:N",
// -c in cpus_per_task. The controller must read what the client read from the same options
// (FactsFrom), or a decision made in sbatch would not match its inputs and be made again.
TEST(JobDescAdapterTest, HostMemoryIsReadAsTheClientReadsIt) {
  struct Case {
    std::vector<std::string> words;
    uint64_t pn_min_memory;
    const char* mem_per_tres;
    uint16_t cpus_per_task;
  } cases[] = {
      {{"--mem=250G"}, 256000, nullptr, NO_VAL16},
      {{"--mem-per-cpu=2G", "-c", "16"}, 2048 | MEM_PER_CPU, nullptr, 16},
      {{"--mem-per-gpu=64000"}, NO_VAL64, "gres:gpu:64000", NO_VAL16},
      {{"--mem=0"}, 0, nullptr, NO_VAL16},
      {{}, NO_VAL64, nullptr, NO_VAL16},
  };
  for (const Case& c : cases) {
    SbatchOptions o;
    ApplySbatchWords(c.words, &o);
    auto client = FactsFrom(o);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    Desc desc;
    desc.d.pn_min_memory = c.pn_min_memory;
    if (c.mem_per_tres != nullptr) desc.d.mem_per_tres = slurm_xstrdup(c.mem_per_tres);
    desc.d.cpus_per_task = c.cpus_per_task;
    const SlurmFacts ctld = ReadJobDesc(desc.d).facts;
    const std::string what = c.words.empty() ? "(none)" : c.words[0];
    EXPECT_EQ(ctld.mem_per_node_mb, client->mem_per_node_mb) << what;
    EXPECT_EQ(ctld.mem_per_cpu_mb, client->mem_per_cpu_mb) << what;
    EXPECT_EQ(ctld.mem_per_gpu_mb, client->mem_per_gpu_mb) << what;
    EXPECT_EQ(ctld.cpus_per_task, client->cpus_per_task) << what;
  }
}

TEST(JobDescAdapterTest, TheForwardedReadingIsReadThenDroppedFromTheJob) {
  Desc desc;
  const std::vector<std::string> env = {"_SLURM_SPANK_OPTION_fmte_fmte_model=org/m",
                                        std::string(kReadEnvName) + "={\"v\":1}", "OTHER=1",
                                        std::string(kArchEnvName) + "={\"hidden_size\":8}",
                                        std::string(kDecisionEnvName) + "=fmte-decision 1"};
  desc.SetSpankEnv(env);
  // sbatch also copies its SPANK job control variables into the job's environment as
  // SLURM_SPANK_* (22.05's sbatch.c, _set_spank_env; seen in the request on the lab's loopback).
  const std::vector<std::string> job_env = {
      "PATH=/usr/bin", "SLURM_SPANK_" + std::string(kReadEnvName) + "={\"v\":2}",
      "SLURM_SPANK_" + std::string(kDecisionEnvName) + "=fmte-decision 2", "SLURM_SPANK_OTHER=2",
      std::string(kReadEnvName) + "=the user's own variable"};
  desc.SetEnv(job_env);
  const SubmitInputs in = ReadJobDesc(desc.d);
  // The option, the reading and the architecture from spank_job_env, not their copies.
  ASSERT_EQ(in.spank_values.size(), 3u);
  EXPECT_EQ(in.spank_values[2].second, "{\"v\":1}");
  EXPECT_EQ(in.client_decision, "fmte-decision 1");
  EXPECT_EQ(in.spank_env_forwarded, 3);
  EXPECT_EQ(in.env_forwarded, -1);     // spank_job_env has them: the environment's are not read
  DropForwardedReading(&desc.d, &in);  // as job_submit: the environment's copies go all the same
  ASSERT_EQ(desc.d.spank_job_env_size, 2u);
  EXPECT_STREQ(desc.d.spank_job_env[0], env[0].c_str());
  EXPECT_STREQ(desc.d.spank_job_env[1], "OTHER=1");
  for (size_t i = 2; i < env.size(); ++i) EXPECT_EQ(desc.d.spank_job_env[i], nullptr);
  ASSERT_EQ(desc.d.env_size, 3u);
  EXPECT_STREQ(desc.d.environment[0], "PATH=/usr/bin");
  EXPECT_STREQ(desc.d.environment[1], "SLURM_SPANK_OTHER=2");
  EXPECT_STREQ(desc.d.environment[2], job_env[4].c_str());
  EXPECT_EQ(desc.d.environment[3], nullptr);
  DropForwardedReading(&desc.d);  // nothing left to drop
  EXPECT_EQ(desc.d.spank_job_env_size, 2u);
  EXPECT_EQ(desc.d.env_size, 3u);
}

// sbatch's SPANK plugin forwards in the environment alone (job_desc_adapter.h, kEnvCopyPrefix),
// so that the values travel once: they are read from there and dropped from the job.
TEST(JobDescAdapterTest, ValuesForwardedInTheEnvironmentAreReadThenDropped) {
  Desc desc;
  const std::vector<std::string> env = {"_SLURM_SPANK_OPTION_fmte_fmte_model=org/m"};
  desc.SetSpankEnv(env);
  const std::vector<std::string> job_env = {
      "SLURM_SPANK_" + std::string(kReadEnvName) + "={\"v\":1}",
      "HOME=/home/u",
      "SLURM_SPANK_" + std::string(kArchEnvName) + "={\"hidden_size\":8}",
      "SLURM_SPANK_" + std::string(kDecisionEnvName) + "=fmte-decision 1",
      std::string(kDecisionEnvName) + "=the user's own variable",
      "SLURM_SPANK_OTHER=2"};
  desc.SetEnv(job_env);
  const SubmitInputs in = ReadJobDesc(desc.d);
  ASSERT_EQ(in.spank_values.size(), 3u);
  EXPECT_EQ(in.spank_values[0].second, "{\"hidden_size\":8}");
  EXPECT_EQ(in.spank_values[1].second, "org/m");
  EXPECT_EQ(in.spank_values[2].second, "{\"v\":1}");
  EXPECT_EQ(in.client_decision, "fmte-decision 1");
  EXPECT_EQ(in.spank_env_forwarded, 0);
  EXPECT_EQ(in.env_forwarded, 3);
  // As job_submit drops them: with the reading's counts, so that the entries after the last
  // forwarded one are not read again (the user's own FMTE_DECISION is not a forwarded entry).
  DropForwardedReading(&desc.d, &in);
  EXPECT_EQ(desc.d.spank_job_env_size, 1u);
  ASSERT_EQ(desc.d.env_size, 3u);
  EXPECT_STREQ(desc.d.environment[0], "HOME=/home/u");
  EXPECT_STREQ(desc.d.environment[1], job_env[4].c_str());
  EXPECT_STREQ(desc.d.environment[2], "SLURM_SPANK_OTHER=2");
  for (size_t i = 3; i < job_env.size(); ++i) EXPECT_EQ(desc.d.environment[i], nullptr);
}

TEST(JobDescAdapterTest, DecisionsAreWrittenBack) {
  struct Case {
    const char* name;
    Decision decision;
    const char* old_comment;
    int rc;
    const char* tres_per_node;
    uint32_t time_limit;
    const char* admin_comment;
    bool err;
  };
  Decision untouched;
  Decision accept;
  accept.touched = true;
  accept.user_message = "fmte: fits";
  Decision rewrite;
  rewrite.touched = true;
  rewrite.kind = DecisionKind::kRewrite;
  rewrite.new_time_limit_min = 120;
  rewrite.new_gpus = 4;
  rewrite.gpu_field = GpuTresField::kPerNode;
  rewrite.new_gpu_tres = "gres:gpu:a100:4";
  Decision reject_memory;
  reject_memory.touched = true;
  reject_memory.kind = DecisionKind::kReject;
  reject_memory.reject_reason = RejectReason::kMemory;
  reject_memory.user_message = "fmte: rejected";
  reject_memory.estimated = true;
  reject_memory.estimate.memory.per_gpu_bytes = 100;
  reject_memory.usable_bytes = 50;
  Decision reject_time = reject_memory;
  reject_time.estimate.memory.per_gpu_bytes = 10;
  reject_time.reject_reason = RejectReason::kTimeLimit;
  Decision reject_error = reject_memory;
  reject_error.error = true;
  reject_error.reject_reason = RejectReason::kError;
  const Case cases[] = {
      {"untouched", untouched, nullptr, SLURM_SUCCESS, "gres:gpu:a100:1", NO_VAL, nullptr, false},
      {"accept", accept, nullptr, SLURM_SUCCESS, "gres:gpu:a100:1", NO_VAL, "fmte:v1;x", true},
      {"accept keeps site text", accept, "JS1:abc", SLURM_SUCCESS, "gres:gpu:a100:1", NO_VAL,
       "JS1:abc fmte:v1;x", true},
      {"rewrite", rewrite, nullptr, SLURM_SUCCESS, "gres:gpu:a100:4", 120, "fmte:v1;x", false},
      {"reject memory", reject_memory, nullptr, ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE,
       "gres:gpu:a100:1", NO_VAL, nullptr, true},
      {"reject time", reject_time, nullptr, ESLURM_INVALID_TIME_LIMIT, "gres:gpu:a100:1", NO_VAL,
       nullptr, true},
      {"reject error", reject_error, nullptr, ESLURM_ACCESS_DENIED, "gres:gpu:a100:1", NO_VAL,
       nullptr, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Desc desc;
    desc.d.tres_per_node = slurm_xstrdup("gres:gpu:a100:1");
    if (c.old_comment != nullptr) desc.d.admin_comment = slurm_xstrdup(c.old_comment);
    char* err = nullptr;
    int rc = ApplyDecision(c.decision, "fmte:v1;x", &desc.d, &err);
    EXPECT_EQ(rc, c.rc);
    EXPECT_STREQ(desc.d.tres_per_node, c.tres_per_node);
    EXPECT_EQ(desc.d.time_limit, c.time_limit);
    if (c.admin_comment == nullptr) {
      EXPECT_EQ(desc.d.admin_comment, nullptr);
      EXPECT_EQ(desc.d.comment, nullptr);
    } else {
      EXPECT_STREQ(desc.d.admin_comment, c.admin_comment);
      // The copy that survives an epilog replacing AdminComment (jobstats).
      EXPECT_STREQ(desc.d.comment, "fmte:v1;x");
    }
    EXPECT_EQ(err != nullptr, c.err);
    if (err != nullptr) {
      EXPECT_EQ(std::string(err), c.decision.user_message);
      slurm_xfree(reinterpret_cast<void**>(&err));
    }
  }
}

TEST(AdapterTest, WarnSignalOnlyWhereFmteSetsTheLimitAndTheUserHasNone) {
  // sbatch --signal's fields (slurm.h job_desc_msg_t warn_signal/warn_time/warn_flags; sbatch sends
  // 0 for no signal, slurm_init_job_desc_msg leaves NO_VAL16; B: is KILL_JOB_BATCH).
  PartitionConfig usr1;
  usr1.warn_signal = SIGUSR1;
  usr1.warn_time_s = 600;
  PartitionConfig batch_term = usr1;
  batch_term.warn_signal = SIGTERM;
  batch_term.warn_batch_only = true;
  const PartitionConfig off;
  Decision limit;  // fmte sets the time limit
  limit.touched = true;
  limit.kind = DecisionKind::kRewrite;
  limit.new_time_limit_min = 120;
  Decision gpus_only = limit;  // fmte changes the GPUs, not the limit
  gpus_only.new_time_limit_min = 0;
  Decision accept;
  accept.touched = true;
  struct Case {
    const char* name;
    const Decision& decision;
    const PartitionConfig& partition;
    uint16_t user_signal;  // what the submission carried
    uint16_t signal, time, flags;
  };
  const Case cases[] = {
      {"limit set, none of the user's", limit, usr1, 0, SIGUSR1, 600, 0},
      {"limit set, init value", limit, usr1, NO_VAL16, SIGUSR1, 600, 0},
      {"batch shell only", limit, batch_term, 0, SIGTERM, 600, KILL_JOB_BATCH},
      {"the user's own signal stays", limit, usr1, SIGUSR2, SIGUSR2, 0, 0},
      {"limit not set", gpus_only, usr1, 0, 0, 0, 0},
      {"accepted as asked", accept, usr1, 0, 0, 0, 0},
      {"WarnSignal off", limit, off, 0, 0, 0, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Desc desc;
    desc.d.warn_signal = c.user_signal;
    desc.d.warn_time = 0;
    desc.d.warn_flags = 0;
    char* err = nullptr;
    const bool set = ApplyWarnSignal(OutcomeOf(c.decision), c.partition, &desc.d, &err);
    EXPECT_EQ(desc.d.warn_signal, c.signal);
    EXPECT_EQ(desc.d.warn_time, c.time);
    EXPECT_EQ(desc.d.warn_flags, c.flags);
    EXPECT_EQ(set, c.time != 0);
    EXPECT_EQ(err != nullptr, set);  // the user is told
    if (err != nullptr) {
      EXPECT_NE(std::string(err).find("600 s before this time limit"), std::string::npos) << err;
      slurm_xfree(reinterpret_cast<void**>(&err));
    }
  }
}

// A model of slurmctld 22.05's job ids (src/slurmctld/job_mgr.c): get_next_job_id steps a sequence
// past ids whose job exists; a created job takes the next id; jobs are purged later.
struct FakeCtld {
  static inline uint32_t sequence = 0;
  static inline std::set<uint32_t> jobs;
  static inline int next_calls = 0;
  static uint32_t Next(bool test_only) {
    if (test_only) ++next_calls;
    uint32_t id = sequence;
    do ++id;
    while (jobs.count(id) != 0);
    if (!test_only) sequence = id;
    return id;
  }
  static void* Find(uint32_t id) { return jobs.count(id) != 0 ? &jobs : nullptr; }
  static uint32_t Create() {
    uint32_t id = Next(false);
    jobs.insert(id);
    return id;
  }
};

TEST(JobTrackerTest, PredictsTheIdFromTheJobTableAndNeverAboveTheRealOne) {
  JobTracker tracker;
  tracker.SetSlurmctldFunctions(&FakeCtld::Next, &FakeCtld::Find);
  int exact = 0, compared = 0, interleaved = 0, submissions = 0;
  for (int i = 0; i < 400; ++i) {
    // Between two submissions (job_submit and the job's creation share one job write lock):
    if (i % 50 == 20) {  // an array's tasks took ids (job_submit is called for the array only)
      for (int t = 0; t < 3; ++t) FakeCtld::Create();
    }
    if (i % 90 == 45) {  // ids taken by jobs that are already purged: not in the table
      FakeCtld::Create();
      FakeCtld::jobs.erase(FakeCtld::sequence);
      ++interleaved;
    }
    const uint32_t predicted = tracker.PredictJobId(NO_VAL);
    ++submissions;
    if (i % 17 == 5) continue;  // refused after job_submit: no job, the id is not consumed
    const uint32_t real = FakeCtld::Create();
    // A prediction above the real id could later name another job; below it is harmless.
    EXPECT_LE(predicted, real) << "submission " << i;
    exact += predicted == real;
    ++compared;
  }
  // Wrong (too low) only right after ids that left no job behind.
  EXPECT_GE(exact, compared - interleaved);
  // slurmctld's get_next_job_id (a stat() per call) is asked only when the table cannot tell.
  EXPECT_LT(FakeCtld::next_calls, 80) << "of " << submissions;
}

// The tracker holds what the controller still has: entries of jobs that ended and were purged go
// as new jobs come (a few per submission, oldest first), and an oversized entry is never kept.
TEST(JobTrackerTest, DropsJobsTheControllerNoLongerHasAndOversizedEntries) {
  FakeCtld::jobs.clear();
  JobTracker tracker;
  tracker.SetSlurmctldFunctions(&FakeCtld::Next, &FakeCtld::Find);
  std::vector<uint32_t> ids;
  for (int i = 0; i < 10; ++i) {
    const uint32_t id = tracker.PredictJobId(NO_VAL);
    tracker.Remember(id, TrackedJob{"#FMTE model=x\n", {}, SlurmFacts{}});
    ASSERT_EQ(FakeCtld::Create(), id);
    ids.push_back(id);
  }
  EXPECT_EQ(tracker.size(), 10u);
  for (int i = 0; i < 6; ++i) FakeCtld::jobs.erase(ids[i]);  // the six oldest ended and were purged
  FakeCtld::jobs.erase(ids[8]);  // a younger one too, behind jobs still pending
  uint32_t id = tracker.PredictJobId(NO_VAL);
  tracker.Remember(id, TrackedJob{"#FMTE model=x\n", {}, SlurmFacts{}});
  FakeCtld::Create();
  EXPECT_EQ(tracker.size(), 7u);  // four of the purged gone with this submission
  id = tracker.PredictJobId(NO_VAL);
  tracker.Remember(id, TrackedJob{"#FMTE model=x\n", {}, SlurmFacts{}});
  FakeCtld::Create();
  EXPECT_EQ(tracker.size(), 6u);  // the last two oldest; the sweep stopped at a pending job
  for (int i = 0; i < 6; ++i) EXPECT_EQ(tracker.Find(ids[i]), nullptr) << i;
  for (int i = 6; i < 10; ++i) EXPECT_NE(tracker.Find(ids[i]), nullptr) << i;
  // Over kMaxEntryBytes (a script padded to megabytes): not kept; its updates pass untouched.
  id = tracker.PredictJobId(NO_VAL);
  tracker.Remember(id, TrackedJob{std::string(JobTracker::kMaxEntryBytes, '#'), {}, SlurmFacts{}});
  EXPECT_EQ(tracker.Find(id), nullptr);
  tracker.Remember(
      id,
      TrackedJob{{}, {{"FMTE_READ", std::string(JobTracker::kMaxEntryBytes, 'x')}}, SlurmFacts{}});
  EXPECT_EQ(tracker.Find(id), nullptr);
}

TEST(JobTrackerTest, BoundedAndKeyedByJobId) {
  JobTracker tracker;
  for (uint32_t id = 1; id <= JobTracker::kMaxJobs + 10; ++id) {
    tracker.Remember(id, TrackedJob{"#FMTE model=x\n", {}, SlurmFacts{}});
  }
  EXPECT_EQ(tracker.size(), JobTracker::kMaxJobs);
  EXPECT_EQ(tracker.Find(1), nullptr);  // the oldest went first
  ASSERT_NE(tracker.Find(JobTracker::kMaxJobs + 10), nullptr);
  tracker.Remember(0, TrackedJob{});  // unknown id: ignored
  EXPECT_EQ(tracker.Find(0), nullptr);
  // A forgotten id (its submission failed; the job now getting the id is not ours) is gone, the
  // others stay, and the id can be remembered again.
  tracker.Forget(JobTracker::kMaxJobs + 10);
  EXPECT_EQ(tracker.Find(JobTracker::kMaxJobs + 10), nullptr);
  EXPECT_NE(tracker.Find(JobTracker::kMaxJobs + 9), nullptr);
  EXPECT_EQ(tracker.size(), JobTracker::kMaxJobs - 1);
  tracker.Remember(JobTracker::kMaxJobs + 10, TrackedJob{"#FMTE model=y\n", {}, SlurmFacts{}});
  ASSERT_NE(tracker.Find(JobTracker::kMaxJobs + 10), nullptr);
  EXPECT_EQ(tracker.Find(JobTracker::kMaxJobs + 10)->script, "#FMTE model=y\n");
  // Outside slurmctld there is no get_next_job_id: only an explicit --jobid is known.
  EXPECT_EQ(tracker.PredictJobId(NO_VAL), 0u);
  EXPECT_EQ(tracker.PredictJobId(77), 77u);
  EXPECT_EQ(ParseJobIdStr("123"), 123u);
  EXPECT_EQ(ParseJobIdStr("123_4"), 123u);
  EXPECT_EQ(ParseJobIdStr("99999999999"), 0u);
  EXPECT_EQ(ParseJobIdStr(nullptr), 0u);
}

TEST(PluginStateTest, ReloadsWhenFmteConfChangesAndKeepsTheOldOnErrors) {
  fs::path dir = fs::temp_directory_path() / ("fmte_state_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path conf = dir / "fmte.conf";
  std::ofstream(conf) << "RaiseGpus=no\n";
  PluginState state;
  ASSERT_TRUE(state.Init(conf.string()).ok());
  ASSERT_NE(state.Current(), nullptr);
  EXPECT_FALSE(state.Current()->config.defaults.raise_gpus);
  EXPECT_TRUE(state.Current()->config_from_file);

  auto touch_later = [&](const std::string& text) {
    std::ofstream(conf, std::ios::trunc) << text;
    fs::last_write_time(conf, fs::last_write_time(conf) + std::chrono::seconds(2));
  };
  touch_later("RaiseGpus=yes\n");
  EXPECT_TRUE(state.Current(/*force=*/true)->config.defaults.raise_gpus);
  EXPECT_NE(state.TakeReloadMessage().find("reloaded"), std::string::npos);

  touch_later("RaiseGpus=maybe\n");  // broken: the previous settings stay
  EXPECT_TRUE(state.Current(true)->config.defaults.raise_gpus);
  EXPECT_NE(state.TakeReloadMessage().find("reload failed"), std::string::npos);
  EXPECT_EQ(state.TakeReloadMessage(), "");  // reported once

  // A file that was read and is now gone (half-renamed, removed by mistake): the previous
  // settings stay, said once, naming the file.
  fs::remove(conf);
  EXPECT_TRUE(state.Current(true)->config.defaults.raise_gpus);
  const std::string missing = state.TakeReloadMessage();
  EXPECT_NE(missing.find("reload failed"), std::string::npos) << missing;
  EXPECT_NE(missing.find(conf.string() + ": missing"), std::string::npos) << missing;
  EXPECT_EQ(state.Current(true), state.Current(true));
  EXPECT_EQ(state.TakeReloadMessage(), "");

  touch_later("");  // an empty file: every key at its default
  EXPECT_FALSE(state.Current(true)->config.defaults.raise_gpus);
  EXPECT_TRUE(state.Current()->config_from_file);
  fs::remove_all(dir);
}

// OperatorSet= sets are loaded with the catalogs (the shipped Perlmutter by its lower-case name);
// one that cannot be read is said once, naming its file, and the others still load (fail open).
TEST(PluginStateTest, OperatorSetsAreLoadedAndAMissingOneIsNamedOnce) {
  fs::path dir = fs::temp_directory_path() / ("fmte_opset_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path conf = dir / "fmte.conf";
  std::ofstream(conf) << "PartitionName=gpu Gpu=A100 OperatorSet=perlmutter\n"
                         "PartitionName=site OperatorSet=NoSuchCluster\n"
                         "PartitionName=site2 OperatorSet=NoSuchCluster\n";
  PluginState state;
  ASSERT_TRUE(state.Init(conf.string()).ok());
  const auto& sets = state.Current()->estimator.catalogs().operator_sets;
  EXPECT_EQ(sets.count("perlmutter"), 1u);
  EXPECT_EQ(sets.count("NoSuchCluster"), 0u);
  const std::string said = state.TakeReloadMessage();
  EXPECT_NE(said.find("OperatorSet=NoSuchCluster not used"), std::string::npos) << said;
  EXPECT_NE(said.find("NoSuchCluster/manifest.json"), std::string::npos) << said;
  // Named by two partitions, said once.
  EXPECT_EQ(said.find("OperatorSet=NoSuchCluster", said.find("OperatorSet=NoSuchCluster") + 1),
            std::string::npos)
      << said;
  EXPECT_EQ(state.TakeReloadMessage(), "");
  // A reload says it again beside what it reloaded.
  std::ofstream(conf, std::ios::app) << "# edited\n";
  fs::last_write_time(conf, fs::last_write_time(conf) + std::chrono::seconds(2));
  ASSERT_NE(state.Current(/*force=*/true), nullptr);
  const std::string reloaded = state.TakeReloadMessage();
  EXPECT_NE(reloaded.find("reloaded"), std::string::npos) << reloaded;
  EXPECT_NE(reloaded.find("OperatorSet=NoSuchCluster not used"), std::string::npos) << reloaded;
  // sbatch deciding a job for partition gpu reads that partition's set alone.
  PluginState client;
  client.OperatorSetsOnlyFor("gpu");
  ASSERT_TRUE(client.Init(conf.string(), /*watch=*/false).ok());
  EXPECT_EQ(client.Current()->estimator.catalogs().operator_sets.size(), 1u);
  EXPECT_EQ(client.Current()->estimator.catalogs().operator_sets.count("perlmutter"), 1u);
  EXPECT_EQ(client.TakeReloadMessage(), "");  // NoSuchCluster was not even looked for
  fs::remove_all(dir);
}

// The catalogs are watched as trees: a config.json edited in place under etc/models/<org>/<name>/
// changes no mtime of etc/models itself, and must still reload (and a broken one must keep the
// previous catalogs, naming the file).
TEST(PluginStateTest, ACatalogFileEditedInPlaceIsReloaded) {
  fs::path dir = fs::temp_directory_path() / ("fmte_catalog_" + std::to_string(getpid()));
  fs::create_directories(dir / "etc");
  const fs::path src = fs::path(FMTE_SOURCE_DIR) / "etc";
  fs::copy(src / "models", dir / "etc/models", fs::copy_options::recursive);
  fs::copy(src / "gpus.csv", dir / "etc/gpus.csv");
  fs::copy(src / "clusters", dir / "etc/clusters", fs::copy_options::recursive);
  std::ofstream(dir / "fmte.conf") << "CatalogDir=" << (dir / "etc").string() << "\n";
  PluginState state;
  ASSERT_TRUE(state.Init((dir / "fmte.conf").string()).ok());
  const fs::path config = dir / "etc/models/meta-llama/Llama-3.1-8B/config.json";
  const size_t models = state.Current()->estimator.catalogs().models.size();

  auto rewrite_later = [&](const std::string& text) {
    const auto before = fs::last_write_time(config);
    std::ofstream(config, std::ios::trunc) << text;
    fs::last_write_time(config, before + std::chrono::seconds(2));
  };
  std::ifstream in(config);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  rewrite_later(good.substr(0, good.size() / 2));  // truncated
  EXPECT_EQ(state.Current(/*force=*/true)->estimator.catalogs().models.size(), models);
  const std::string failed = state.TakeReloadMessage();
  EXPECT_NE(failed.find("reload failed"), std::string::npos) << failed;
  EXPECT_NE(failed.find("Llama-3.1-8B/config.json"), std::string::npos) << failed;

  rewrite_later(good);
  EXPECT_EQ(state.Current(true)->estimator.catalogs().models.size(), models);
  EXPECT_NE(state.TakeReloadMessage().find("reloaded"), std::string::npos);
  fs::remove_all(dir);
}

// The reload check reads the tree only when the kernel reports a change in it: an edit deep in a
// catalog tree, a new folder, a file replaced by rename, a removal; nothing else fires.
TEST(TreeNotifierTest, FiresOnChangesAnywhereInTheTreesAndOnlyThen) {
  const fs::path dir = fs::temp_directory_path() / ("fmte_notify_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "models/org/m1");
  fs::create_directories(dir / "etc");
  const auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  write(dir / "models/org/m1/config.json", "{}");
  write(dir / "etc/fmte.conf", "Mode=enforce\n");
  write(dir / "unwatched.txt", "x");
  TreeNotifier n;
  ASSERT_TRUE(n.Arm({(dir / "etc/fmte.conf").string(), (dir / "models").string()}));
  ASSERT_TRUE(n.armed());
  EXPECT_FALSE(n.Fired());
  write(dir / "unwatched.txt", "y");  // outside every watched folder
  EXPECT_FALSE(n.Fired());
  write(dir / "models/org/m1/config.json", "{\"hidden_size\": 8}");  // edited in place
  EXPECT_TRUE(n.Fired());
  EXPECT_FALSE(n.Fired());  // consumed
  fs::create_directories(dir / "models/org2");
  EXPECT_TRUE(n.Fired());
  write(dir / "etc/fmte.conf.new", "Mode=advise\n");
  fs::rename(dir / "etc/fmte.conf.new", dir / "etc/fmte.conf");  // a config manager's install
  EXPECT_TRUE(n.Fired());
  fs::remove(dir / "models/org/m1/config.json");
  EXPECT_TRUE(n.Fired());
  // The temporary folder's file system decides whether the trees are also compared periodically.
  struct statfs st;
  ASSERT_EQ(statfs(dir.c_str(), &st), 0);
  EXPECT_EQ(n.sees_every_change(), LocalFileSystem(static_cast<int64_t>(st.f_type)));
  n.Close();
  EXPECT_TRUE(n.Fired());  // nothing armed: the caller compares the trees itself
  EXPECT_FALSE(n.sees_every_change());
  fs::remove_all(dir);
}

// Only where inotify sees every change is the periodic comparison of the trees left out. The
// magic numbers are the kernel's (linux/magic.h; Lustre's, GPFS's and CIFS's from their sources,
// which these kernel headers do not carry).
TEST(TreeNotifierTest, OnlyLocalFileSystemsAreTrustedToReportEveryChange) {
  for (int64_t local :
       std::vector<int64_t>{EXT4_SUPER_MAGIC, XFS_SUPER_MAGIC, BTRFS_SUPER_MAGIC, TMPFS_MAGIC,
                            OVERLAYFS_SUPER_MAGIC, F2FS_SUPER_MAGIC, RAMFS_MAGIC})
    EXPECT_TRUE(LocalFileSystem(local)) << std::hex << local;
  // A magic number with its top bit set, sign-extended into f_type (32-bit f_type platforms).
  EXPECT_TRUE(LocalFileSystem(static_cast<int32_t>(uint32_t{BTRFS_SUPER_MAGIC})));
  constexpr int64_t kLustre = 0x0BD00BD0, kGpfs = 0x47504653, kCifs = 0xFF534D42;
  for (int64_t shared : std::vector<int64_t>{NFS_SUPER_MAGIC, CEPH_SUPER_MAGIC, FUSE_SUPER_MAGIC,
                                             AFS_SUPER_MAGIC, kLustre, kGpfs, kCifs, 0})
    EXPECT_FALSE(LocalFileSystem(shared)) << std::hex << shared;
}

TEST(PluginStateTest, FindsTheSlurmConfInUse) {
  setenv("SLURM_CONF", "/some/where/slurm.conf", 1);
  EXPECT_EQ(PluginState::SlurmConfPath(), "/some/where/slurm.conf");
  unsetenv("SLURM_CONF");
  // libslurmfull's slurm_conf global is empty outside a daemon: the default path.
  EXPECT_EQ(PluginState::SlurmConfPath(), "/etc/slurm/slurm.conf");
}

}  // namespace
}  // namespace fmte::slurm

// Which SlurmctldDebug / SlurmctldSyslogDebug pairs make slurmctld write verbose lines. Levels
// from Slurm 22.05's src/common/log.h (LOG_LEVEL_INFO 3, VERBOSE 4, DEBUG2 6, END 10); an unset
// SlurmctldSyslogDebug is LOG_LEVEL_END, shown as "(null)" by `scontrol show config` (the lab
// cluster's slurm.conf sets only SlurmctldDebug=info, as most sites do). Treating LOG_LEVEL_END
// as a level above verbose made the plugin compose and queue a line per accepted job that
// slurmctld then dropped (a futex wake per submission and the log thread's wake-up, measured
// with strace on the lab's slurmctld).
TEST(SlurmctldLogsVerboseTest, FollowsBothLevelsAndTreatsAnUnsetSyslogLevelAsUnset) {
  using fmte::slurm::SlurmctldLogsVerbose;
  constexpr uint16_t kQuiet = 0, kError = 2, kInfo = 3, kVerbose = 4, kDebug2 = 6, kUnset = 10;
  EXPECT_FALSE(SlurmctldLogsVerbose(kInfo, kUnset));  // the common site configuration
  EXPECT_FALSE(SlurmctldLogsVerbose(kError, kUnset));
  EXPECT_FALSE(SlurmctldLogsVerbose(kInfo, kInfo));
  EXPECT_FALSE(SlurmctldLogsVerbose(kInfo, kQuiet));
  EXPECT_TRUE(SlurmctldLogsVerbose(kVerbose, kUnset));
  EXPECT_TRUE(SlurmctldLogsVerbose(kDebug2, kUnset));  // also after `scontrol setdebug debug2`
  EXPECT_TRUE(SlurmctldLogsVerbose(kInfo, kVerbose));  // SlurmctldSyslogDebug=verbose
  EXPECT_TRUE(SlurmctldLogsVerbose(kQuiet, kDebug2));
}
