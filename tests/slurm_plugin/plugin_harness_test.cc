// Loads job_submit_fmte.so and spank_fmte.so as Slurm would (but with RTLD_NOW, so an unresolved
// symbol fails here instead of crashing slurmctld on first call), checks their exports and version,
// and drives job_submit/job_modify with job_desc_msg_t built by libslurmfull. Every string the
// plugin hands back is released with Slurm's own xfree, which aborts on memory that did not come
// from xmalloc: the test proves the allocation contract too. (Slurm's own slurm_free_job_desc_msg
// would need a configured select plugin, so the fields are freed here.)
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurm_version.h>
}

#include "client_decision.h"
#include "fmte/request.h"
#include "plugin_state.h"
#include "slurm_xapi.h"

namespace {

namespace fs = std::filesystem;
using SubmitFn = int (*)(job_desc_msg_t*, uint32_t, char**);
using ModifyFn = int (*)(job_desc_msg_t*, void*, uint32_t);  // 22.05: three arguments
using VoidFn = int (*)();

const std::string kPluginDir = FMTE_PLUGIN_DIR;

struct Plugin {
  void* handle = nullptr;
  SubmitFn submit = nullptr;
  ModifyFn modify = nullptr;
};

// The test cluster's fmte.conf: a100 gres are 80 GB A100s; raising GPUs of sharded jobs is allowed.
const char kFmteConf[] =
    "# written by plugin_harness_test\n"
    "GresTypeGpu=a100:A100-80GB\n"
    "RaiseGpus=yes\n"
    "OnError=accept\n";

class JobSubmitPluginTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("fmte_harness_" + std::to_string(getpid())));
    fs::create_directories(*dir_);
    std::ofstream(*dir_ / "fmte.conf") << kFmteConf;
    // The plugin reads fmte.conf beside the slurm.conf in use (contract: docs/slurm.md §2).
    setenv("SLURM_CONF", (*dir_ / "slurm.conf").c_str(), 1);
    plugin_.handle = dlopen((kPluginDir + "/job_submit_fmte.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(plugin_.handle, nullptr) << dlerror();
    plugin_.submit = reinterpret_cast<SubmitFn>(dlsym(plugin_.handle, "job_submit"));
    plugin_.modify = reinterpret_cast<ModifyFn>(dlsym(plugin_.handle, "job_modify"));
    auto init = reinterpret_cast<VoidFn>(dlsym(plugin_.handle, "init"));
    ASSERT_NE(init, nullptr);
    ASSERT_EQ(init(), SLURM_SUCCESS);
  }
  static void TearDownTestSuite() {
    if (plugin_.handle != nullptr) {
      auto fini = reinterpret_cast<VoidFn>(dlsym(plugin_.handle, "fini"));
      if (fini != nullptr) fini();
    }
    std::error_code ec;
    fs::remove_all(*dir_, ec);
  }

  static job_desc_msg_t* NewDesc(const std::string& script, const char* tres_per_node,
                                 std::vector<std::string> spank_env = {}) {
    auto* desc = static_cast<job_desc_msg_t*>(
        slurm_xcalloc(1, sizeof(job_desc_msg_t), true, false, __FILE__, __LINE__, __func__));
    slurm_init_job_desc_msg(desc);
    desc->script = slurm_xstrdup(script.c_str());
    desc->name = slurm_xstrdup("harness");
    desc->user_id = 1000;
    desc->group_id = 1000;
    if (tres_per_node != nullptr) desc->tres_per_node = slurm_xstrdup(tres_per_node);
    if (!spank_env.empty()) {
      desc->spank_job_env = static_cast<char**>(slurm_xcalloc(
          spank_env.size() + 1, sizeof(char*), true, false, __FILE__, __LINE__, __func__));
      for (size_t i = 0; i < spank_env.size(); ++i) {
        desc->spank_job_env[i] = slurm_xstrdup(spank_env[i].c_str());
      }
      desc->spank_job_env_size = static_cast<uint32_t>(spank_env.size());
    }
    return desc;
  }

  // xfree aborts on pointers that did not come from xmalloc: this checks what the plugin wrote.
  static void FreeDesc(job_desc_msg_t* desc) {
    for (char** field :
         {&desc->script, &desc->name, &desc->admin_comment, &desc->job_id_str, &desc->tres_per_node,
          &desc->tres_per_job, &desc->tres_per_task, &desc->tres_per_socket, &desc->comment}) {
      slurm_xfree(reinterpret_cast<void**>(field));
    }
    for (uint32_t i = 0; i < desc->spank_job_env_size; ++i) {
      slurm_xfree(reinterpret_cast<void**>(&desc->spank_job_env[i]));
    }
    slurm_xfree(reinterpret_cast<void**>(&desc->spank_job_env));
    slurm_xfree(reinterpret_cast<void**>(&desc));
  }

  static inline fs::path* dir_ = nullptr;
  static inline Plugin plugin_;
};

TEST(PluginLoadTest, BothPluginsLoadWithRtldNowAndExportTheirSymbols) {
  struct Case {
    const char* file;
    const char* type;
    std::vector<const char*> functions;
    bool exact_version;  // job_submit: full version incl. micro; SPANK: major.minor
                         // (docs/slurm.md §7.4)
  };
  const Case cases[] = {
      {"job_submit_fmte.so", "job_submit/fmte", {"init", "fini", "job_submit", "job_modify"}, true},
      {"spank_fmte.so", "spank", {"slurm_spank_init", "slurm_spank_init_post_opt"}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    void* h = dlopen((kPluginDir + "/" + c.file).c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h, nullptr) << dlerror();
    auto* type = static_cast<const char*>(dlsym(h, "plugin_type"));
    ASSERT_NE(type, nullptr) << "plugin_type not exported (C++ internal linkage?)";
    EXPECT_STREQ(type, c.type);
    ASSERT_NE(dlsym(h, "plugin_name"), nullptr);
    auto* version = static_cast<const uint32_t*>(dlsym(h, "plugin_version"));
    ASSERT_NE(version, nullptr);
    if (c.exact_version) {
      EXPECT_EQ(*version & 0xffffff, static_cast<uint32_t>(SLURM_VERSION_NUMBER));
    } else {
      EXPECT_EQ(*version >> 8, static_cast<uint32_t>(SLURM_VERSION_NUMBER) >> 8);
    }
    for (const char* fn : c.functions) EXPECT_NE(dlsym(h, fn), nullptr) << fn;
    // The core stays private: no fmte:: symbol may leak into slurmctld's namespace.
    EXPECT_EQ(dlsym(h, "_ZN4fmte6DecideERKNS_10JobRequestERKNS_6ConfigERKNS_9EstimatorE"), nullptr);
    dlclose(h);
  }
  void* h = dlopen((kPluginDir + "/spank_fmte.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr);
  EXPECT_STREQ(static_cast<const char*>(dlsym(h, "plugin_name")), "fmte");  // option env prefix
  dlclose(h);
}

TEST_F(JobSubmitPluginTest, NonLlmJobIsLeftUntouched) {
  job_desc_msg_t* desc =
      NewDesc("#!/bin/bash\n#SBATCH -t 10\nsrun hostname\nsleep 5\n", "gres:gpu:1");
  desc->time_limit = 10;
  char* err = nullptr;
  EXPECT_EQ(plugin_.submit(desc, 1000, &err), SLURM_SUCCESS);
  EXPECT_EQ(err, nullptr);
  EXPECT_EQ(desc->admin_comment, nullptr);
  EXPECT_EQ(desc->time_limit, 10u);
  EXPECT_STREQ(desc->tres_per_node, "gres:gpu:1");
  FreeDesc(desc);
}

// Outcomes whose direction follows from arithmetic independent of fmte's model:
//  - full fine-tuning of Llama-3.1-70B (70.55e9 parameters, its config.json) with AdamW needs at
//    least 16 bytes/parameter for weights+gradients+optimizer (ZeRO paper, Rajbhandari et al. 2020,
//    §3.1) = 1.13e12 bytes on one GPU, far above an 80 GB A100: must be rejected;
//  - LoRA on Llama-3.1-8B (8.03e9) keeps frozen weights plus tiny adapters: 8.03e9 x 4 bytes (fp32
//    weights under amp) = 32 GB, and 1024-token micro-batches of 1 add a few GB of activations:
//    fits in 80 GB, so it is accepted and recorded.
TEST_F(JobSubmitPluginTest, DecisionsReachTheJobDescription) {
  struct Case {
    const char* name;
    std::string script;
    std::vector<std::string> spank_env;
    bool accepted;
  };
  const std::string spank = "_SLURM_SPANK_OPTION_fmte_fmte_";
  const Case cases[] = {
      {"lora 8B via #FMTE fits",
       "#!/bin/bash\n#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=1024 micro-batch=1\n"
       "python train.py\n",
       {},
       true},
      {"full 70B via #FMTE rejected",
       "#!/bin/bash\n#FMTE model=meta-llama/Llama-3.1-70B method=full seq-len=4096 micro-batch=1\n"
       "python train.py\n",
       {},
       false},
      {"full 70B via SPANK values rejected",
       "#!/bin/bash\npython train.py\n",
       {spank + "model=meta-llama/Llama-3.1-70B", spank + "method=full", "SLURM_FOO=bar"},
       false},
      {"SPANK value overrides #FMTE line",
       "#!/bin/bash\n#FMTE model=meta-llama/Llama-3.1-70B method=full\npython train.py\n",
       {spank + "model=meta-llama/Llama-3.1-8B", spank + "method=lora", spank + "seq-len=1024"},
       true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    job_desc_msg_t* desc = NewDesc(c.script, "gres:gpu:a100:1", c.spank_env);
    char* err = nullptr;
    int rc = plugin_.submit(desc, 1000, &err);
    if (c.accepted) {
      EXPECT_EQ(rc, SLURM_SUCCESS) << (err ? err : "");
      ASSERT_NE(desc->admin_comment, nullptr);
      EXPECT_EQ(std::string(desc->admin_comment).rfind("fmte:", 0), 0u) << desc->admin_comment;
      EXPECT_NE(std::string(desc->admin_comment).find("Llama-3.1-8B"), std::string::npos);
    } else {
      EXPECT_NE(rc, SLURM_SUCCESS);
      ASSERT_NE(err, nullptr);
      EXPECT_EQ(std::string(err).rfind("fmte:", 0), 0u) << err;
    }
    if (err != nullptr) slurm_xfree(reinterpret_cast<void**>(&err));  // aborts unless xmalloc'ed
    EXPECT_EQ(err, nullptr);
    FreeDesc(desc);
  }
}

// Repeated submissions are decided once (DecisionCache); what a repeat gets must be what a fresh
// decision gives, and a submission that differs in what fmte reads must get its own. The same
// arithmetic as above: LoRA on Llama-3.1-8B fits an 80 GB A100, full fine-tuning of
// Llama-3.1-70B (>= 16 bytes x 70.55e9 parameters) does not.
TEST_F(JobSubmitPluginTest, RepeatsGetTheSameDecisionAndOtherJobsTheirOwn) {
  const std::string lora =
      "#!/bin/bash\n#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=1024 micro-batch=1\n"
      "python train.py\n";
  const std::string full =
      "#!/bin/bash\n#FMTE model=meta-llama/Llama-3.1-70B method=full seq-len=4096 micro-batch=1\n"
      "python train.py\n";
  const std::string read = std::string(fmte::kReadEnvName) + "=";
  // A forwarded reading that is malformed is not trusted: the controller scans the script, so the
  // script decides, and two scripts with the same broken reading are two jobs.
  const std::string broken = read + "{\"v\":1,\"values\":";
  // A well-formed reading with its scan: the controller reads neither script, the reading decides.
  const std::string scanned =
      read +
      "{\"files\":[],\"fmte\":[[\"2\",\" model=meta-llama/Llama-3.1-8B method=lora seq-len=1024 "
      "micro-batch=1\"]],\"launcher\":\"\",\"nodes\":0,\"notes\":[],\"procs\":0,\"unread\":[],"
      "\"v\":1,\"values\":[]}";
  struct Answer {
    int rc;
    std::string admin_comment, err;
  };
  const auto submit = [&](const std::string& script, std::vector<std::string> env,
                          uint32_t time_limit = NO_VAL) {
    job_desc_msg_t* desc = NewDesc(script, "gres:gpu:a100:1", std::move(env));
    desc->time_limit = time_limit;
    char* err = nullptr;
    Answer o;
    o.rc = plugin_.submit(desc, 1000, &err);
    o.admin_comment = desc->admin_comment != nullptr ? desc->admin_comment : "";
    o.err = err != nullptr ? err : "";
    if (err != nullptr) slurm_xfree(reinterpret_cast<void**>(&err));
    FreeDesc(desc);
    return o;
  };
  const Answer first = submit(lora, {});
  ASSERT_EQ(first.rc, SLURM_SUCCESS) << first.err;
  ASSERT_EQ(first.admin_comment.rfind("fmte:", 0), 0u) << first.admin_comment;
  for (int i = 0; i < 3; ++i) {
    const Answer again = submit(lora, {});
    EXPECT_EQ(again.rc, first.rc);
    EXPECT_EQ(again.admin_comment, first.admin_comment);
    EXPECT_EQ(again.err, first.err);
    EXPECT_NE(submit(full, {}).rc, SLURM_SUCCESS);  // the other job between the repeats
  }
  // The same script with another time limit is another submission: its record says so.
  const Answer limited = submit(lora, {}, 120);
  EXPECT_EQ(limited.rc, SLURM_SUCCESS) << limited.err;
  EXPECT_NE(limited.admin_comment, first.admin_comment);
  EXPECT_EQ(submit(lora, {broken}).rc, SLURM_SUCCESS);
  EXPECT_NE(submit(full, {broken}).rc, SLURM_SUCCESS);
  EXPECT_NE(submit(full, {}).rc, SLURM_SUCCESS);
  // With a scanned reading the script is not read: both scripts are the 8B LoRA job.
  const Answer from_reading = submit(full, {scanned});
  EXPECT_EQ(from_reading.rc, SLURM_SUCCESS) << from_reading.err;
  EXPECT_EQ(submit(lora, {scanned}).admin_comment, from_reading.admin_comment);
}

// The decision the SPANK plugin makes in sbatch (client_decision.h), made here as the client
// makes it: the controller applies it for the same submission with the same files, and decides
// itself for anything else.
TEST_F(JobSubmitPluginTest, ADecisionMadeInSbatchIsUsedOnlyForTheSameSubmissionAndFiles) {
  const std::string read =
      std::string(fmte::kReadEnvName) +
      "={\"files\":[],\"fmte\":[[\"2\",\" model=meta-llama/Llama-3.1-8B method=lora seq-len=1024 "
      "micro-batch=1\"]],\"launcher\":\"\",\"nodes\":0,\"notes\":[],\"procs\":0,\"unread\":[],"
      "\"v\":1,\"values\":[]}";
  const std::string option = fmte::SpankEnvKey("grad-accum") + "=2";
  // The client: the Slurm facts it read from the sbatch options, the values it forwards.
  fmte::slurm::SubmitInputs client;
  client.facts.tres_per_node = "gres:gpu:a100:1";
  const std::vector<const char*> env = {read.c_str(), option.c_str()};
  client.spank_values = fmte::SpankValuesFromEnv(env);
  const fmte::JobRequest request = fmte::ParseJobRequest("", client.spank_values, client.facts);
  ASSERT_TRUE(request.is_llm_job && request.forwarded_scan);
  fmte::slurm::PluginState files;
  ASSERT_TRUE(files.Init((*dir_ / "fmte.conf").string(), /*watch=*/false).ok());
  const fmte::slurm::Loaded* loaded = files.Current();
  ASSERT_NE(loaded, nullptr);
  fmte::slurm::ClientDecision made{
      loaded->files_fingerprint, fmte::slurm::DecisionCache::InputsHash(client),
      fmte::slurm::DecideJob(request, loaded->config, loaded->estimator)};
  const auto as_env = [](const fmte::slurm::ClientDecision& d) {
    return std::string(fmte::slurm::kDecisionEnvName) + "=" + fmte::slurm::EncodeClientDecision(d);
  };
  struct Answer {
    int rc;
    std::string admin_comment, err;
  };
  const auto submit = [&](std::vector<std::string> spank_env, uint32_t time_limit = NO_VAL) {
    job_desc_msg_t* desc =
        NewDesc("#!/bin/bash\npython train.py\n", "gres:gpu:a100:1", std::move(spank_env));
    desc->time_limit = time_limit;
    char* err = nullptr;
    Answer a{plugin_.submit(desc, 1000, &err), desc->admin_comment ? desc->admin_comment : "",
             err != nullptr ? err : ""};
    // Read, then dropped from the job with the reading.
    for (uint32_t i = 0; i < desc->spank_job_env_size; ++i)
      EXPECT_NE(std::string(desc->spank_job_env[i]).rfind("FMTE_", 0), 0u);
    if (err != nullptr) slurm_xfree(reinterpret_cast<void**>(&err));
    FreeDesc(desc);
    return a;
  };
  // Made honestly, it is the controller's own decision.
  const Answer own = submit({option, read});
  ASSERT_EQ(own.rc, SLURM_SUCCESS) << own.err;
  ASSERT_EQ(own.admin_comment.rfind("fmte:", 0), 0u) << own.admin_comment;
  const Answer honest = submit({as_env(made), option, read});  // another order of the entries
  EXPECT_EQ(honest.rc, own.rc);
  EXPECT_EQ(honest.admin_comment, own.admin_comment);
  EXPECT_EQ(honest.err, own.err);
  // It is used, not re-made: a message only the client's decision has reaches the user.
  fmte::slurm::ClientDecision marked = made;
  marked.decision.outcome.user_message = "fmte: decided in sbatch";
  EXPECT_NE(submit({read, option, as_env(marked)}).err.find("decided in sbatch"),
            std::string::npos);
  // Not for another submission (another time limit, another value), nor other files.
  EXPECT_EQ(submit({read, option, as_env(marked)}, 120).err.find("decided in sbatch"),
            std::string::npos);
  EXPECT_EQ(submit({read, fmte::SpankEnvKey("grad-accum") + "=4", as_env(marked)})
                .err.find("decided in sbatch"),
            std::string::npos);
  fmte::slurm::ClientDecision other_files = marked;
  other_files.files = "0000000000000000";
  const Answer refused_files = submit({read, option, as_env(other_files)});
  EXPECT_EQ(refused_files.err, own.err);
  EXPECT_EQ(refused_files.admin_comment, own.admin_comment);
  // A malformed one, or one whose record is not an fmte record, is not used either.
  const std::string garbage = std::string(fmte::slurm::kDecisionEnvName) + "=fmte-decision 1\nx";
  EXPECT_EQ(submit({read, option, garbage}).admin_comment, own.admin_comment);
  fmte::slurm::ClientDecision forged = marked;
  forged.decision.record = "anything the user likes";
  const Answer refused_record = submit({read, option, as_env(forged)});
  EXPECT_EQ(refused_record.admin_comment, own.admin_comment);
  EXPECT_EQ(refused_record.err.find("decided in sbatch"), std::string::npos);
}

// Full fine-tuning of Llama-3.1-8B with ZeRO-3: 8.03e9 x 16 bytes = 128 GB of model states on one
// GPU (too big for 80 GB) but 128/4 = 32 GB each on four; sharded and RaiseGpus=yes, so the plugin
// must raise the GPU count in the same tres field, within the node's 8 GPUs.
TEST_F(JobSubmitPluginTest, ShardedJobGetsMoreGpus) {
  job_desc_msg_t* desc = NewDesc(
      "#!/bin/bash\n#FMTE model=meta-llama/Llama-3.1-8B method=full sharding=zero3 seq-len=2048 "
      "micro-batch=1 activation-checkpointing=full\npython train.py\n",
      "gres:gpu:a100:1");
  char* err = nullptr;
  EXPECT_EQ(plugin_.submit(desc, 1000, &err), SLURM_SUCCESS) << (err ? err : "");
  ASSERT_NE(desc->tres_per_node, nullptr);
  fmte::Result<fmte::GpuTres> tres = fmte::ParseGpuTres(desc->tres_per_node);
  ASSERT_TRUE(tres.ok()) << desc->tres_per_node;
  EXPECT_GT(tres->count, 1) << desc->tres_per_node;
  EXPECT_LE(tres->count, 8);
  EXPECT_EQ(tres->type, "a100");
  if (err != nullptr) slurm_xfree(reinterpret_cast<void**>(&err));
  FreeDesc(desc);
}

TEST_F(JobSubmitPluginTest, HostileInputNeverCrashes) {
  std::string huge = "#!/bin/bash\n#FMTE model=meta-llama/Llama-3.1-8B\n";
  while (huge.size() < (3u << 20)) huge += "torchrun --nproc_per_node=8 train.py --bf16 \\\n";
  std::string binary = "#!/bin/bash\n#FMTE model=\x01\xff\xfe seq-len=99999999999999999999999\n";
  for (int i = 1; i < 256; ++i) binary += static_cast<char>(i);
  const std::string cases[] = {
      huge,
      binary,
      "#FMTE model=meta-llama/Llama-3.1-8B micro-batch=-5 tp=0 pp=1000000 seq-len=abc\n",
      "#FMTE model=meta-llama/Llama-3.1-8B method=lora method=full sharding=zero3 sharding=none\n",
      "#FMTE model=no-such-org/no-such-model\npython train.py\n",
      "#FMTE model=\"unterminated quote\n",
  };
  for (const std::string& script : cases) {
    job_desc_msg_t* desc = NewDesc(script, "gres:gpu:a100:99999999");
    char* err = nullptr;
    int rc = plugin_.submit(desc, 1000, &err);
    (void)rc;  // any decision is fine; not crashing and xmalloc'ed outputs are the point
    if (err != nullptr) {
      EXPECT_EQ(std::string(err).rfind("fmte:", 0), 0u) << err;
      slurm_xfree(reinterpret_cast<void**>(&err));
    }
    FreeDesc(desc);
  }
}

// slurmctld calls job_submit and job_modify from its RPC threads; the plugin relies on nothing but
// its own mutex. Meanwhile the site edits fmte.conf and the plugin's log thread writes. Four
// threads submit and modify while a fifth rewrites fmte.conf (atomically, every 100 ms) with
// Mode=advise added: after the reload check (kReloadCheckS = 5 s) a job that does not fit must go
// from rejected to accepted with a notice, which proves the reload ran between the submissions.
// Every call returns success or a rejection with an fmte: message. Under ThreadSanitizer
// (build-tsan, scripts/test.sh) any data race between the submitters, the reload and the log thread
// fails the run.
TEST_F(JobSubmitPluginTest, ConcurrentSubmitsModifiesReloadsAndTheLogThread) {
  using namespace std::chrono_literals;
  const std::string too_big =
      "#!/bin/bash\n#FMTE model=meta-llama/Llama-3.1-70B method=full seq-len=4096 micro-batch=1\n"
      "python train.py\n";
  const std::string fits =
      "#!/bin/bash\n#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=1024 micro-batch=1\n"
      "torchrun --nproc_per_node 1 train.py\n";
  std::atomic<bool> stop{false};
  std::atomic<int> rejected{0}, too_big_accepted{0}, bad{0}, calls{0};
  std::thread writer([&] {
    for (int i = 0; !stop; ++i) {
      std::ofstream(*dir_ / "fmte.conf.new") << kFmteConf << "Mode=advise\n# edit " << i << "\n";
      fs::rename(*dir_ / "fmte.conf.new", *dir_ / "fmte.conf");
      std::this_thread::sleep_for(100ms);
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + 15s;
  std::vector<std::thread> submitters;
  for (int t = 0; t < 4; ++t) {
    submitters.emplace_back([&, t] {
      for (int i = 0; !stop; ++i) {
        const bool big = (i + t) % 2 == 0;
        job_desc_msg_t* desc = NewDesc(big ? too_big : fits, "gres:gpu:a100:1");
        char* err = nullptr;
        const int rc = plugin_.submit(desc, 1000, &err);
        ++calls;
        if (rc != SLURM_SUCCESS) {
          ++rejected;
          if (!big || err == nullptr || std::string(err).rfind("fmte:", 0) != 0) ++bad;
        } else if (big) {
          ++too_big_accepted;
        }
        if (err != nullptr) slurm_xfree(reinterpret_cast<void**>(&err));
        FreeDesc(desc);
        job_desc_msg_t* update = NewDesc("", nullptr);
        update->job_id_str = slurm_xstrdup(std::to_string(1000 + i).c_str());
        update->time_limit = 60 + i;
        if (plugin_.modify(update, nullptr, 0) != SLURM_SUCCESS) ++bad;
        FreeDesc(update);
        if (too_big_accepted > 4 || std::chrono::steady_clock::now() > deadline) stop = true;
      }
    });
  }
  for (std::thread& s : submitters) s.join();
  writer.join();
  EXPECT_EQ(bad, 0) << calls << " calls";
  EXPECT_GT(rejected, 0) << "before the reload, Mode=enforce rejects the 70B job on one GPU";
  EXPECT_GT(too_big_accepted, 0) << "no reload within 15 s of rewriting fmte.conf (" << calls
                                 << " calls)";
}

TEST_F(JobSubmitPluginTest, JobModifyOfAnUnknownJobIsAccepted) {
  job_desc_msg_t* desc = NewDesc("", nullptr);
  desc->job_id_str = slurm_xstrdup("424242");
  desc->time_limit = 5000;
  EXPECT_EQ(plugin_.modify(desc, nullptr, 0), SLURM_SUCCESS);
  FreeDesc(desc);
}

}  // namespace
