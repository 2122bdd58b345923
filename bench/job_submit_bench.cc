// job_submit/fmte latency, in-process, without slurmctld: loads the built job_submit_fmte.so the
// way slurmctld does (dlopen + init) and calls job_submit() on job_desc_msg_t built with
// libslurmfull from the realistic batch scripts in tests/data/scripts and scripts/demo (their
// #SBATCH lines give the GPU request, nodes, time limit, partition and the --fmte-* SPANK values).
// Each call includes script parsing, the estimate, the policy (with its re-estimated alternatives
// on rejection) and writing the decision back. Prints p50/p99 per call; target p99 < 50 us
// (docs/slurm.md §6), and per script how many of the slowest 1% of calls it makes. The plugin's
// decision lines go to Slurm's log from its own log thread (log_queue.h), as they do in slurmctld:
// a call pays for building and queueing its line, not for the write. During the timed run stderr
// goes to a scratch file, so the log thread's writes are file writes whether the bench runs on a
// terminal, into a pipe or to /dev/null. The load average before and after is printed: on a shared
// machine take the lowest-load runs (docs/slurm.md, Performance). FMTE_BENCH_ONLY=substring keeps
// the scripts whose file name contains it; FMTE_BENCH_ITERS=N sets the number of calls (default
// 20,000): bench/instructions_per_call.sh uses both under callgrind. FMTE_BENCH_FORWARD=1 attaches
// to every job the client's reading (FMTE_READ) that the SPANK plugin sends from sbatch, so the
// controller's path is measured as sites run it (no scan of the script in slurmctld);
// FMTE_BENCH_DISTINCT=1 makes every job a different one (no decision from the cache);
// FMTE_BENCH_CLIENT=1 (with FORWARD) also attaches the decision the SPANK plugin makes in sbatch
// (FMTE_DECISION), so job_submit applies it as it does for a default install.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
}

#include "client_decision.h"
#include "fmte/config.h"
#include "fmte/estimator.h"
#include "fmte/policy.h"
#include "fmte/record.h"
#include "fmte/request.h"
#include "fmte/script_files.h"
#include "fmte/submission.h"
#include "job_desc_adapter.h"
#include "plugin_state.h"
#include "slurm_xapi.h"

// slurmctld's next job id, which job_submit/fmte asks for to remember an admitted job for
// job_modify (job_tracker.cc). Every call here is a new job, as every submission is in slurmctld,
// so the tracker's cost (a copy of the script, eviction beyond kMaxJobs) is part of the measured
// call.
extern "C" uint32_t get_next_job_id(bool test_only) {
  static uint32_t next_id = 1000;
  (void)test_only;
  return next_id++;
}

namespace {

namespace fs = std::filesystem;
using SubmitFn = int (*)(job_desc_msg_t*, uint32_t, char**);

struct Description {
  std::string name, script, partition, tres_per_node, tres_per_job;
  uint32_t min_nodes = NO_VAL, time_limit = NO_VAL;
  std::vector<std::string> spank_env;
  std::string forwarded;  // FMTE_READ as the SPANK plugin in sbatch sends it (empty: none)
};

double ThreadCpuUs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

// Minor page faults of the calling thread so far.
long MinorFaults() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_minflt;
}

std::string Value(const std::string& arg) { return arg.substr(arg.find('=') + 1); }

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

// Sends stderr (the plugin's log lines) to a scratch file while alive.
class StderrToFile {
 public:
  StderrToFile() {
    path_ = (fs::temp_directory_path() / ("fmte_bench_log_" + std::to_string(getpid()))).string();
    std::fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (saved_ >= 0 && fd >= 0) dup2(fd, STDERR_FILENO);
    if (fd >= 0) close(fd);
  }
  ~StderrToFile() {
    std::fflush(stderr);
    if (saved_ >= 0) {
      dup2(saved_, STDERR_FILENO);
      close(saved_);
    }
    std::error_code ec;
    fs::remove(path_, ec);
  }
  StderrToFile(const StderrToFile&) = delete;
  StderrToFile& operator=(const StderrToFile&) = delete;

 private:
  std::string path_;
  int saved_ = -1;
};

// What sbatch would send for this script: the job_desc fields from #SBATCH lines.
Description Describe(const fs::path& path) {
  Description d;
  d.name = path.filename().string();
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  d.script = ss.str();
  std::istringstream lines(d.script);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#SBATCH ", 0) != 0) continue;
    std::string arg = line.substr(8);
    if (arg.rfind("--gres=gpu:", 0) == 0) d.tres_per_node = "gres:" + Value(arg);
    if (arg.rfind("--gpus-per-node=", 0) == 0) d.tres_per_node = "gres:gpu:" + Value(arg);
    if (arg.rfind("--gpus=", 0) == 0) d.tres_per_job = "gres:gpu:" + Value(arg);
    if (arg.rfind("--nodes=", 0) == 0) d.min_nodes = static_cast<uint32_t>(std::stoul(Value(arg)));
    if (arg.rfind("-N ", 0) == 0) d.min_nodes = static_cast<uint32_t>(std::stoul(arg.substr(3)));
    if (arg.rfind("--partition=", 0) == 0) d.partition = Value(arg);
    if (arg.rfind("-p ", 0) == 0) d.partition = arg.substr(3);
    if (arg.rfind("--time=", 0) == 0) {
      auto minutes = fmte::ParseSlurmTimeMinutes(Value(arg));
      if (minutes.ok()) d.time_limit = static_cast<uint32_t>(*minutes);
    }
    if (arg.rfind("--fmte-", 0) == 0) {  // SPANK option: what spank_job_env carries
      std::string key = arg.substr(7, arg.find('=') - 7);
      std::replace(key.begin(), key.end(), '-', '_');
      d.spank_env.push_back("_SLURM_SPANK_OPTION_fmte_fmte_" + key + "=" + Value(arg));
    }
  }
  // What the SPANK plugin forwards when sbatch reads the script (spank_fmte.cc): the controller
  // then skips its own scan. Read as `sbatch SCRIPT` from the script's folder.
  static const auto launchers = fmte::LoadLauncherTable(std::string(FMTE_SOURCE_DIR) + "/etc");
  if (launchers.ok()) {
    const std::vector<std::string> words = {path.filename().string()};
    auto submission = fmte::ReadSubmission(words, path.parent_path().string(), &launchers.value());
    if (submission.ok()) d.forwarded = fmte::EncodeClientReading(submission->request);
  }
  return d;
}

// An FMTE_BENCH_* switch: set to 1.
bool EnvOn(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v == '1';
}
// FMTE_BENCH_FORWARD=1: every job carries the client's reading (FMTE_READ), as it does where the
// SPANK plugin runs in sbatch with its file reading on (the default); otherwise the controller
// scans each script itself.
bool Forward() { return EnvOn("FMTE_BENCH_FORWARD"); }
// FMTE_BENCH_DISTINCT=1: every job differs from the ones before (its time limit), so that
// job_submit/fmte decides each afresh; otherwise the scripts repeat and its DecisionCache serves
// the repeats, as it does for a burst of one sweep.
bool Distinct() { return EnvOn("FMTE_BENCH_DISTINCT"); }
// FMTE_BENCH_CLIENT=1 (with FMTE_BENCH_FORWARD=1): every LLM job also carries the decision the
// SPANK plugin made in sbatch (FMTE_DECISION, client_decision.h), made here as spank_fmte.cc makes
// it, on the controller's own reading of the job, so that job_submit applies it; the forwarded
// values travel in the job's environment, as from sbatch.
bool Client() { return EnvOn("FMTE_BENCH_CLIENT"); }

// The decision sbatch forwards for `desc` (empty: none, as for a job that is not an LLM job).
std::string ClientDecisionFor(const job_desc_msg_t& desc) {
  static fmte::slurm::PluginState* state = [] {
    auto* s = new fmte::slurm::PluginState;
    if (!s->Init("", /*watch=*/false).ok()) std::exit(1);
    return s;
  }();
  const fmte::slurm::Loaded* loaded = state->Current();
  const fmte::slurm::SubmitInputs in = fmte::slurm::ReadJobDesc(desc);
  const fmte::JobRequest request = fmte::ParseJobRequest("", in.spank_values, in.facts);
  if (loaded == nullptr || !request.is_llm_job || !request.forwarded_scan) return "";
  const fmte::slurm::ClientDecision decision{
      loaded->files_fingerprint, fmte::slurm::DecisionCache::InputsHash(in),
      fmte::slurm::DecideJob(request, loaded->config, loaded->estimator)};
  return fmte::slurm::EncodeClientDecision(decision);
}

void SetEnvironment(job_desc_msg_t* desc, const std::vector<std::string>& environment) {
  for (uint32_t i = 0; i < desc->env_size; ++i)
    slurm_xfree(reinterpret_cast<void**>(&desc->environment[i]));
  slurm_xfree(reinterpret_cast<void**>(&desc->environment));
  desc->environment = static_cast<char**>(slurm_xcalloc(environment.size() + 1, sizeof(char*), true,
                                                        false, __FILE__, __LINE__, __func__));
  for (size_t i = 0; i < environment.size(); ++i)
    desc->environment[i] = slurm_xstrdup(environment[i].c_str());
  desc->env_size = static_cast<uint32_t>(environment.size());
}

void AddSpankEnv(job_desc_msg_t* desc, const std::vector<std::string>& env) {
  const uint32_t n = desc->spank_job_env_size;
  auto** grown = static_cast<char**>(
      slurm_xcalloc(n + env.size() + 1, sizeof(char*), true, false, __FILE__, __LINE__, __func__));
  for (uint32_t i = 0; i < n; ++i) grown[i] = desc->spank_job_env[i];
  for (size_t i = 0; i < env.size(); ++i) grown[n + i] = slurm_xstrdup(env[i].c_str());
  slurm_xfree(reinterpret_cast<void**>(&desc->spank_job_env));
  desc->spank_job_env = grown;
  desc->spank_job_env_size = static_cast<uint32_t>(n + env.size());
}

// `forward` and `client`: as FMTE_BENCH_FORWARD and FMTE_BENCH_CLIENT (their defaults).
job_desc_msg_t* NewDesc(const Description& d, bool forward = Forward(), bool client = Client()) {
  auto* desc = static_cast<job_desc_msg_t*>(
      slurm_xcalloc(1, sizeof(job_desc_msg_t), true, false, __FILE__, __LINE__, __func__));
  slurm_init_job_desc_msg(desc);
  desc->script = slurm_xstrdup(d.script.c_str());
  desc->name = slurm_xstrdup(d.name.c_str());
  desc->user_id = 1000;
  if (!d.partition.empty()) desc->partition = slurm_xstrdup(d.partition.c_str());
  if (!d.tres_per_node.empty()) desc->tres_per_node = slurm_xstrdup(d.tres_per_node.c_str());
  if (!d.tres_per_job.empty()) desc->tres_per_job = slurm_xstrdup(d.tres_per_job.c_str());
  desc->min_nodes = d.min_nodes;
  desc->time_limit = d.time_limit;
  if (Distinct()) {  // a time limit of its own: no job like the 239 before it (the cache holds 128)
    static uint32_t n = 0;
    const uint32_t base = d.time_limit != NO_VAL && d.time_limit >= 480 ? d.time_limit : 480;
    desc->time_limit = base - n++ % 240;
  }
  std::vector<std::string> env = d.spank_env;
  const std::string read =
      forward && !d.forwarded.empty() ? std::string(fmte::kReadEnvName) + "=" + d.forwarded : "";
  if (!client && !read.empty()) env.push_back(read);
  if (!env.empty()) AddSpankEnv(desc, env);
  if (client && !read.empty()) {
    // As sbatch sends them: the SPANK plugin sets the forwarded values in sbatch's environment
    // (kEnvCopyPrefix, spank_fmte.cc Forward), which sbatch sends whole as the job's environment:
    // this process's environment stands for the user's. The decision is made on the job as the
    // controller will read it, the reading included, and then added.
    std::vector<std::string> environment;
    for (char** e = environ; *e != nullptr; ++e) environment.emplace_back(*e);
    const std::string copy(fmte::slurm::kEnvCopyPrefix);
    environment.push_back(copy + read);
    SetEnvironment(desc, environment);
    const std::string decision = ClientDecisionFor(*desc);
    if (!decision.empty()) {
      environment.push_back(copy + std::string(fmte::slurm::kDecisionEnvName) + "=" + decision);
      SetEnvironment(desc, environment);
    }
  }
  return desc;
}

void FreeDesc(job_desc_msg_t* desc) {
  for (char** f :
       {&desc->script, &desc->name, &desc->partition, &desc->admin_comment, &desc->comment,
        &desc->tres_per_node, &desc->tres_per_job, &desc->tres_per_task}) {
    slurm_xfree(reinterpret_cast<void**>(f));
  }
  for (uint32_t i = 0; i < desc->spank_job_env_size; ++i) {
    slurm_xfree(reinterpret_cast<void**>(&desc->spank_job_env[i]));
  }
  slurm_xfree(reinterpret_cast<void**>(&desc->spank_job_env));
  for (uint32_t i = 0; i < desc->env_size; ++i)
    slurm_xfree(reinterpret_cast<void**>(&desc->environment[i]));
  slurm_xfree(reinterpret_cast<void**>(&desc->environment));
  slurm_xfree(reinterpret_cast<void**>(&desc));
}

SubmitFn LoadPlugin() {
  static SubmitFn submit = [] {
    // The shipped example etc/fmte.conf beside a slurm.conf: partition gpu (the default) has
    // A100-SXM4-80GB behind untyped GPU requests and RaiseGpus=yes, so every LLM script is
    // estimated.
    fs::path dir = fs::temp_directory_path() / ("fmte_bench_" + std::to_string(getpid()));
    fs::create_directories(dir);
    fs::copy_file(fs::path(FMTE_SOURCE_DIR) / "etc/fmte.conf", dir / "fmte.conf",
                  fs::copy_options::overwrite_existing);
    setenv("SLURM_CONF", (dir / "slurm.conf").c_str(), 1);
    void* h = dlopen(FMTE_PLUGIN_DIR "/job_submit_fmte.so", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      std::fprintf(stderr, "cannot load plugin: %s\n", dlerror());
      std::exit(1);
    }
    auto init = reinterpret_cast<int (*)()>(dlsym(h, "init"));
    if (init == nullptr || init() != 0) std::exit(1);
    return reinterpret_cast<SubmitFn>(dlsym(h, "job_submit"));
  }();
  return submit;
}

std::vector<Description> Descriptions() {
  std::vector<Description> out;
  for (const char* sub : {"tests/data/scripts", "scripts/demo"}) {
    fs::path dir = fs::path(FMTE_SOURCE_DIR) / sub;
    if (!fs::exists(dir)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir)) {
      std::string ext = e.path().extension().string();
      if (ext == ".sh" || ext == ".sbatch") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) out.push_back(Describe(f));
  }
  if (const char* only = std::getenv("FMTE_BENCH_ONLY"); only != nullptr && *only != '\0') {
    std::erase_if(out,
                  [&](const Description& d) { return d.name.find(only) == std::string::npos; });
  }
  return out;
}

// One call of job_submit() per iteration, cycling through the descriptions; the job_desc is built
// and freed outside the timed region. Reports p50/p99 (us) over all calls.
void BM_JobSubmit(benchmark::State& state) {
  SubmitFn submit = LoadPlugin();
  std::vector<Description> descs = Descriptions();
  if (descs.empty()) {
    state.SkipWithError("no script matches FMTE_BENCH_ONLY");
    return;
  }
  std::vector<double> latencies_us, cpu_us;
  std::vector<std::vector<double>> per_script(descs.size());
  std::vector<std::pair<double, size_t>> calls;  // (latency, script): which scripts make the p99
  size_t i = 0, rejected = 0;
  const std::string load_before = LoadAverage();
  auto log_to_file = std::make_unique<StderrToFile>();
  for (auto _ : state) {
    size_t which = i++ % descs.size();
    job_desc_msg_t* desc = NewDesc(descs[which]);
    char* err = nullptr;
    double cpu_start_us = ThreadCpuUs();
    auto start = std::chrono::steady_clock::now();
    int rc = submit(desc, 1000, &err);
    auto end = std::chrono::steady_clock::now();
    cpu_us.push_back(ThreadCpuUs() - cpu_start_us);
    double us = std::chrono::duration<double, std::micro>(end - start).count();
    state.SetIterationTime(us * 1e-6);
    latencies_us.push_back(us);
    per_script[which].push_back(us);
    calls.emplace_back(us, which);
    rejected += rc != 0;
    if (err != nullptr) slurm_xfree(reinterpret_cast<void**>(&err));
    FreeDesc(desc);
  }
  log_to_file.reset();
  const std::string load_after = LoadAverage();
  std::sort(latencies_us.begin(), latencies_us.end());
  std::sort(cpu_us.begin(), cpu_us.end());
  auto pct_of = [](const std::vector<double>& v, double p) {
    return v.empty() ? 0.0 : v[static_cast<size_t>(p * (v.size() - 1))];
  };
  auto pct = [&](double p) { return pct_of(latencies_us, p); };
  state.counters["cpu_p50_us"] = pct_of(cpu_us, 0.50);
  state.counters["cpu_p99_us"] = pct_of(cpu_us, 0.99);
  state.counters["p50_us"] = pct(0.50);
  state.counters["p99_us"] = pct(0.99);
  state.counters["max_us"] = latencies_us.empty() ? 0.0 : latencies_us.back();
  state.counters["scripts"] = static_cast<double>(descs.size());
  state.counters["heap_in_use_kib"] = static_cast<double>(mallinfo2().uordblks) / 1024.0;
  state.counters["rejected_share"] =
      latencies_us.empty() ? 0.0 : static_cast<double>(rejected) / latencies_us.size();
  // The slowest 1% of calls (those at or above the p99), counted per script.
  std::vector<size_t> in_top(descs.size());
  std::sort(calls.begin(), calls.end(), std::greater<>());
  for (size_t k = 0; k < calls.size() / 100; ++k) ++in_top[calls[k].second];
  for (size_t k = 0; k < descs.size(); ++k) {  // where the time goes, per script
    std::vector<double>& v = per_script[k];
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    std::printf("  %-40s p50 %7.1f us  p90 %7.1f us  p99 %7.1f us  slowest 1%%: %4zu calls\n",
                descs[k].name.c_str(), v[v.size() / 2],
                v[static_cast<size_t>(0.90 * (v.size() - 1))],
                v[static_cast<size_t>(0.99 * (v.size() - 1))], in_top[k]);
  }
  std::printf(
      "job_submit/fmte over %zu scripts, %zu calls: p50 %.1f us, p99 %.1f us (target < 50 us)\n",
      descs.size(), latencies_us.size(), pct(0.50), pct(0.99));
  // Thread CPU time excludes preemption: the figure to trust on a busy machine.
  std::printf("  thread CPU time per call: p50 %.1f us, p99 %.1f us\n", pct_of(cpu_us, 0.50),
              pct_of(cpu_us, 0.99));
  std::printf("  min %.1f us, max %.1f us; load average before %s, after %s\n",
              latencies_us.empty() ? 0.0 : latencies_us.front(),
              latencies_us.empty() ? 0.0 : latencies_us.back(), load_before.c_str(),
              load_after.c_str());
}
int64_t BenchIterations() {
  const char* n = std::getenv("FMTE_BENCH_ITERS");
  const long v = n != nullptr ? std::strtol(n, nullptr, 10) : 0;
  return v > 0 ? v : 20000;
}
BENCHMARK(BM_JobSubmit)
    ->UseManualTime()
    ->Iterations(BenchIterations())
    ->Unit(benchmark::kMicrosecond);

// job_submit() as slurmctld calls it: each RPC on a thread of its own that ends afterwards
// (22.05 serves every connection on a new thread), with the caches cold from the controller's
// other work (range(0) = 1: 32 MiB are written between calls). Counts the thread CPU time per
// call, which is what the controller pays; compare with BM_JobSubmit's hot loop.
void BM_JobSubmitAsSlurmctld(benchmark::State& state) {
  SubmitFn submit = LoadPlugin();
  const std::vector<Description> descs = Descriptions();
  std::vector<double> cpu_us;
  std::vector<char> other_work(state.range(0) != 0 ? size_t{32} << 20 : 0);
  size_t i = 0;
  long faults = 0;
  auto log_to_file = std::make_unique<StderrToFile>();
  for (auto _ : state) {
    const Description& d = descs[i++ % descs.size()];
    job_desc_msg_t* desc = NewDesc(d);
    double cpu = 0;
    if (!other_work.empty()) std::fill(other_work.begin(), other_work.end(), static_cast<char>(i));
    auto start = std::chrono::steady_clock::now();
    std::thread rpc([&] {
      char* err = nullptr;
      const long faults_before = MinorFaults();
      const double cpu_start_us = ThreadCpuUs();
      submit(desc, 1000, &err);
      cpu = ThreadCpuUs() - cpu_start_us;
      faults += MinorFaults() - faults_before;
      if (err != nullptr) slurm_xfree(reinterpret_cast<void**>(&err));
    });
    rpc.join();
    auto end = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
    cpu_us.push_back(cpu);
    FreeDesc(desc);
  }
  log_to_file.reset();
  std::sort(cpu_us.begin(), cpu_us.end());
  state.counters["cpu_p50_us"] = cpu_us[cpu_us.size() / 2];
  state.counters["cpu_mean_us"] =
      std::accumulate(cpu_us.begin(), cpu_us.end(), 0.0) / static_cast<double>(cpu_us.size());
  state.counters["cpu_p90_us"] = cpu_us[static_cast<size_t>(0.9 * (cpu_us.size() - 1))];
  // Page faults inside job_submit: a new thread's stack below its first 16 KiB and the heap above
  // what its arena kept were given back to the kernel (glibc), so each call faults in what it uses.
  state.counters["page_faults"] = static_cast<double>(faults) / static_cast<double>(cpu_us.size());
}
BENCHMARK(BM_JobSubmitAsSlurmctld)
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Iterations(2000)
    ->Unit(benchmark::kMicrosecond);

// The LLM jobs as sbatch sends them with fmte's SPANK plugin: each carries the decision made in
// sbatch (the caller frees them with FreeDesc).
std::vector<job_desc_msg_t*> ClientDecisionJobs() {
  std::vector<job_desc_msg_t*> jobs;
  for (const Description& d : Descriptions()) {
    job_desc_msg_t* desc = NewDesc(d, /*forward=*/true, /*client=*/true);
    if (!fmte::slurm::ReadJobDesc(*desc).client_decision.empty()) {
      jobs.push_back(desc);
    } else {
      FreeDesc(desc);
    }
  }
  return jobs;
}

// Times `call(i)` as slurmctld runs job_submit: each call on a new thread with the caches cold
// (32 MiB written before it); the thread CPU time per call is the iteration's time, with its
// median and mean as counters.
template <typename Call>
void TimeCold(benchmark::State& state, Call call) {
  std::vector<char> other_work(size_t{32} << 20);
  std::vector<double> cpu_us;
  size_t i = 0;
  for (auto _ : state) {
    ++i;
    std::fill(other_work.begin(), other_work.end(), static_cast<char>(i));
    double cpu = 0;
    std::thread rpc([&] {
      const double start = ThreadCpuUs();
      call(i);
      cpu = ThreadCpuUs() - start;
    });
    rpc.join();
    cpu_us.push_back(cpu);
    state.SetIterationTime(cpu * 1e-6);
  }
  std::sort(cpu_us.begin(), cpu_us.end());
  state.counters["cpu_p50_us"] = cpu_us[cpu_us.size() / 2];
  state.counters["cpu_mean_us"] =
      std::accumulate(cpu_us.begin(), cpu_us.end(), 0.0) / static_cast<double>(cpu_us.size());
}

// What job_submit does with a decision made in sbatch, warm, per LLM job that carries one (the
// forwarded values in its environment, as from sbatch): stage 0 reads the job (ReadJobDesc), 1
// also decodes the decision, 2 also hashes the controller's reading to bind it (InputsHash).
void BM_ClientDecisionPath(benchmark::State& state) {
  std::vector<job_desc_msg_t*> jobs = ClientDecisionJobs();
  if (jobs.empty()) {
    state.SkipWithError("no job carries a decision made in sbatch");
    return;
  }
  size_t i = 0;
  for (auto _ : state) {
    const fmte::slurm::SubmitInputs in = fmte::slurm::ReadJobDesc(*jobs[i++ % jobs.size()]);
    if (state.range(0) >= 1) {
      auto decision = fmte::slurm::DecodeClientDecision(in.client_decision);
      benchmark::DoNotOptimize(decision);
    }
    if (state.range(0) >= 2) benchmark::DoNotOptimize(fmte::slurm::DecisionCache::InputsHash(in));
  }
  state.counters["jobs"] = static_cast<double>(jobs.size());
  for (job_desc_msg_t* j : jobs) FreeDesc(j);
}
BENCHMARK(BM_ClientDecisionPath)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

// The same stages as the controller runs them: each call on a new thread after 32 MiB of other
// work (BM_StagesCold's set-up), thread CPU time per call; the jobs carry this process's
// environment as sbatch sends the user's (env | wc -l entries; ~100 from the lab's login shell),
// the forwarded values among them.
void BM_ClientDecisionPathCold(benchmark::State& state) {
  std::vector<job_desc_msg_t*> jobs = ClientDecisionJobs();
  if (jobs.empty()) {
    state.SkipWithError("no job carries a decision made in sbatch");
    return;
  }
  TimeCold(state, [&](size_t i) {
    const fmte::slurm::SubmitInputs in = fmte::slurm::ReadJobDesc(*jobs[i % jobs.size()]);
    if (state.range(0) >= 1) {
      auto decision = fmte::slurm::DecodeClientDecision(in.client_decision);
      benchmark::DoNotOptimize(decision);
    }
    if (state.range(0) >= 2) benchmark::DoNotOptimize(fmte::slurm::DecisionCache::InputsHash(in));
  });
  for (job_desc_msg_t* j : jobs) FreeDesc(j);
}
BENCHMARK(BM_ClientDecisionPathCold)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->UseManualTime()
    ->Iterations(2000)
    ->Unit(benchmark::kMicrosecond);

// The fingerprint of fmte.conf, the catalogs and the regressors that binds a decision made in
// sbatch to the files it was made with: computed once per sbatch (the SPANK plugin's load) and at
// every load of job_submit (client_decision.h FilesFingerprint).
void BM_FilesFingerprint(benchmark::State& state) {
  LoadPlugin();  // sets SLURM_CONF to the bench's fmte.conf
  const std::string conf = fmte::FindConfigPath(std::getenv("SLURM_CONF"));
  const auto config = fmte::LoadConfigFile(conf);
  if (!config.ok()) {
    state.SkipWithError("cannot load fmte.conf");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(fmte::slurm::FilesFingerprint(conf, *config));
}
BENCHMARK(BM_FilesFingerprint)->Unit(benchmark::kMillisecond);

// The core's part of a submission, in stages (BM_Stages, BM_StagesCold): the job descriptions and
// the loaded files, and one call up to `stage`.
struct Stages {
  fmte::Result<fmte::Config> config = fmte::Status::NotFound("");
  fmte::Result<fmte::Estimator> estimator = fmte::Status::NotFound("");
  std::vector<job_desc_msg_t*> jobs;
  Stages() {
    LoadPlugin();  // sets SLURM_CONF to the bench's fmte.conf
    config = fmte::LoadConfigFile(fmte::FindConfigPath(std::getenv("SLURM_CONF")));
    estimator = fmte::Estimator::Load(config.ok() ? config->catalog_dir : "");
    for (const Description& d : Descriptions()) jobs.push_back(NewDesc(d));
  }
  ~Stages() {
    for (job_desc_msg_t* j : jobs) FreeDesc(j);
  }
  Stages(const Stages&) = delete;
  Stages& operator=(const Stages&) = delete;
  bool ok() const { return config.ok() && estimator.ok() && !jobs.empty(); }
  // 0 = parse (ParseJobRequest), 1 = + Decide, 2 = + the fmte: record.
  void Run(int64_t stage, const job_desc_msg_t& job) const {
    fmte::slurm::SubmitInputs in = fmte::slurm::ReadJobDesc(job);
    auto request = fmte::ParseJobRequest(in.script, in.spank_values, in.facts);
    benchmark::DoNotOptimize(request);
    if (stage >= 1 && request.is_llm_job) {
      fmte::Decision d = fmte::Decide(request, *config, *estimator);
      if (stage >= 2 && d.touched) {
        benchmark::DoNotOptimize(fmte::EncodeRecord(fmte::MakeRecord(request, d)));
      }
      benchmark::DoNotOptimize(d);
    }
  }
};

void BM_Stages(benchmark::State& state) {
  const Stages stages;
  if (!stages.ok()) {
    state.SkipWithError("cannot load config or catalogs");
    return;
  }
  size_t i = 0;
  for (auto _ : state) stages.Run(state.range(0), *stages.jobs[i++ % stages.jobs.size()]);
}
BENCHMARK(BM_Stages)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

// The same stages as slurmctld runs them: each call on a new thread with the caches cold (32 MiB
// written before it), thread CPU time per call; the differences between stages are what each
// costs the controller.
void BM_StagesCold(benchmark::State& state) {
  const Stages stages;
  if (!stages.ok()) {
    state.SkipWithError("cannot load config or catalogs");
    return;
  }
  TimeCold(state,
           [&](size_t i) { stages.Run(state.range(0), *stages.jobs[i % stages.jobs.size()]); });
}
BENCHMARK(BM_StagesCold)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->UseManualTime()
    ->Iterations(1000)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
