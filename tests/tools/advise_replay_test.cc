// End-to-end: `fmte-advise replay` over stored batch scripts joined with a sacct export. The
// scripts and the export are written here in the formats Slurm prints: `sacct --batch-script`
// prints "Batch Script for ID", a line of 80 '-', the script (or NONE) and an empty line (Slurm's
// src/sacct/sacct.c _print_script); `sacct --parsable2` rows as in tests/data/sacct (real
// slurmdbd output). The decisions follow from arithmetic outside fmte's model: full fine-tuning of
// a 70B model needs >= 16 bytes/parameter (ZeRO paper §3.1) = 1.1 TB, never fitting one 80 GB
// GPU; LoRA on an 8B model at 1k tokens fits one; 100M tokens of an 8B model take at least
// 6 x 8e9 x 1e8 / 312e12 FLOP/s (A100 bf16 peak) = 4.3 hours, so no limit fmte sets is below that.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_tool.h"

namespace fmte {
namespace {

namespace fs = std::filesystem;
using testing::RunAdvise;

class AdviseReplay : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("fmte_replay_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    Write("fmte.conf", "GresTypeGpu=a100:A100-80GB\nMode=advise\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  static std::string Stored(const std::string& id, const std::string& script) {
    return "Batch Script for " + id + "\n" + std::string(80, '-') + "\n" + script + "\n";
  }

  nlohmann::json Replay(std::vector<std::string> args) {
    args.insert(args.begin(), "replay");
    args.push_back("--config");
    args.push_back(Path("fmte.conf"));
    args.push_back("--json");
    last_ = RunAdvise(args);
    EXPECT_EQ(last_.exit_code, 0) << last_.err;
    return nlohmann::json::parse(last_.out, nullptr, false);
  }
  static const nlohmann::json& Job(const nlohmann::json& doc, const std::string& id) {
    for (const nlohmann::json& j : doc["jobs"])
      if (j["job_id"] == id) return j;
    static const nlohmann::json kNone;
    ADD_FAILURE() << "job " << id << " not in the replay";
    return kNone;
  }

  fs::path dir_;
  testing::ToolRun last_;
};

constexpr const char* kLora =
    "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH -t 60\n"
    "#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=1024 micro-batch=1\n"
    "python train.py\n";
constexpr const char* kFull70b =
    "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH -t 60\n"
    "#FMTE model=meta-llama/Llama-3.1-70B method=full seq-len=1024 micro-batch=1\n"
    "python train.py\n";
constexpr const char* kHeader =
    "JobID|JobIDRaw|State|Elapsed|Timelimit|Partition|AllocTRES|NNodes|TRESUsageInMax\n";

TEST_F(AdviseReplay, JoinsStoredScriptsWithWhatHappened) {
  const std::string scripts =
      Write("scripts.txt", Stored("101", kLora) + Stored("102", "NONE\n") +
                               Stored("103", kFull70b) + Stored("104", kFull70b));
  const std::string gres1 = "|gpu|billing=1,cpu=1,gres/gpu:a100=1,gres/gpu=1,node=1|1|\n";
  const std::string acct =
      Write("acct.psv", std::string(kHeader) + "101|101|COMPLETED|00:30:00|01:00:00" + gres1 +
                            "103|103|COMPLETED|00:40:00|01:00:00" + gres1 +
                            "104|104|OUT_OF_MEMORY|00:01:00|01:00:00" + gres1);
  const nlohmann::json doc = Replay({scripts, "--sacct", acct});
  ASSERT_FALSE(doc.is_discarded()) << last_.out;
  EXPECT_NE(last_.err.find("1 job(s) in sacct --batch-script output have no stored script"),
            std::string::npos)
      << last_.err;
  const nlohmann::json& s = doc["summary"];
  EXPECT_EQ(s["scripts"], 3);
  EXPECT_EQ(s["joined"], 3);
  EXPECT_EQ(s["false_rejections"], 1);  // 103: rejected, yet it completed (in this export)
  EXPECT_EQ(s["rejected_oom"], 1);      // 104
  EXPECT_EQ(s["decisions"]["accept"], 1);
  EXPECT_EQ(Job(doc, "101")["verdict"], "");
  EXPECT_EQ(Job(doc, "103")["verdict"], "false_rejection");
  EXPECT_EQ(Job(doc, "104")["outcome"], "out_of_memory");
  EXPECT_EQ(Job(doc, "104")["verdict"], "rejected_oom");
  // 40 minutes on one GPU (the allocation of job 103).
  EXPECT_NEAR(s["false_rejection_gpu_hours"].get<double>(), 40.0 / 60.0, 1e-9);
}

TEST_F(AdviseReplay, FailedJobAtItsGpuMemoryIsACudaOutOfMemory) {
  // A CUDA OOM ends as FAILED; the step's gres/gpumem (TRESUsageInMax) shows the GPU was full.
  const std::string scripts = Write("s.txt", Stored("201", kLora) + Stored("202", kLora));
  const std::string row = "|gpu|billing=1,cpu=1,gres/gpu:a100=1,gres/gpu=1,node=1|1|\n";
  const std::string acct =
      Write("acct.psv", std::string(kHeader) + "201|201|FAILED|00:10:00|01:00:00" + row +
                            "201.0|201.0|FAILED|00:10:00||||1|cpu=00:09:00,gres/gpumem=81000M\n" +
                            "202|202|FAILED|00:10:00|01:00:00" + row +
                            "202.0|202.0|FAILED|00:10:00||||1|cpu=00:09:00,gres/gpumem=20000M\n");
  const nlohmann::json doc = Replay({scripts, "--sacct", acct});
  ASSERT_FALSE(doc.is_discarded()) << last_.out;
  EXPECT_EQ(Job(doc, "201")["outcome"], "cuda_oom");  // 81000 MiB of an 80 GiB A100
  EXPECT_EQ(Job(doc, "201")["verdict"], "missed_oom");
  EXPECT_EQ(Job(doc, "202")["outcome"], "failed");
  EXPECT_EQ(doc["summary"]["missed_oom"], 1);
}

TEST_F(AdviseReplay, TheAllocationWinsOverTheScriptsRequest) {
  // The script asks for one GPU; sbatch's command line gave it eight (AllocTRES): replayed on 8.
  const std::string scripts =
      Write("s.txt", Stored("301",
                            "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH -t 60\n"
                            "#FMTE model=meta-llama/Llama-3.1-8B method=full sharding=fsdp-full "
                            "seq-len=1024 micro-batch=1\npython train.py\n"));
  const std::string acct =
      Write("acct.psv", std::string(kHeader) +
                            "301|301|COMPLETED|00:30:00|01:00:00|gpu|billing=8,cpu=8,gres/"
                            "gpu:a100=8,gres/gpu=8,node=1|1|\n");
  const nlohmann::json joined = Replay({scripts, "--sacct", acct});
  ASSERT_FALSE(joined.is_discarded()) << last_.out;
  EXPECT_EQ(Job(joined, "301")["gpus"], 8);
  const nlohmann::json alone = Replay({scripts});
  ASSERT_FALSE(alone.is_discarded()) << last_.out;
  EXPECT_EQ(Job(alone, "301")["gpus"], 1);
  EXPECT_EQ(Job(alone, "301")["outcome"], "unknown");
  EXPECT_EQ(alone["summary"]["joined"], 0);
}

TEST_F(AdviseReplay, LimitBelowTheRealRunTimeIsCounted) {
  // No limit asked: fmte would set one from the prediction (>= 4.3 h, see the header).
  const std::string job =
      "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n"
      "#FMTE model=meta-llama/Llama-3.1-8B method=lora seq-len=1024 "
      "micro-batch=1 tokens=100M\npython train.py\n";
  const std::string scripts = Write("s.txt", Stored("401", job) + Stored("402", job));
  const std::string row = "|UNLIMITED|gpu|billing=1,cpu=1,gres/gpu:a100=1,gres/gpu=1,node=1|1|\n";
  const std::string acct =
      Write("acct.psv", std::string(kHeader) + "401|401|COMPLETED|30-00:00:00" + row +
                            "402|402|COMPLETED|00:01:00" + row);
  const nlohmann::json doc = Replay({scripts, "--sacct", acct});
  ASSERT_FALSE(doc.is_discarded()) << last_.out;
  EXPECT_GT(Job(doc, "401")["rewrite"]["time_limit_min"].get<int64_t>(), 0);
  EXPECT_EQ(Job(doc, "401")["verdict"], "limit_would_kill");  // ran 30 days
  EXPECT_EQ(Job(doc, "402")["verdict"], "");                  // ran 1 minute
  EXPECT_EQ(doc["summary"]["limits_that_would_kill"], 1);
}

TEST_F(AdviseReplay, FolderOfScriptsNamedByJobId) {
  Write("jobs/501.sh", kLora);
  Write("jobs/sub/slurm-502.sbatch", kFull70b);
  Write("jobs/llama3_8b.sh", kLora);                             // no job id in the name
  Write("jobs/notes.txt", "#SBATCH in a text file\n");           // not a script
  Write("jobs/configs/ds.json", "{\"zero_optimization\": {}}");  // not a script
  const std::string acct =
      Write("acct.psv", std::string(kHeader) +
                            "501|501|COMPLETED|00:30:00|01:00:00|gpu|gres/gpu=1,node=1|1|\n"
                            "502|502|CANCELLED by 0|00:30:00|01:00:00|gpu|gres/gpu=1,node=1|1|\n");
  const nlohmann::json doc = Replay({Path("jobs"), "--sacct", acct});
  ASSERT_FALSE(doc.is_discarded()) << last_.out;
  EXPECT_EQ(doc["summary"]["scripts"], 3);
  EXPECT_EQ(doc["summary"]["joined"], 2);
  EXPECT_EQ(Job(doc, "502")["outcome"], "other");
  EXPECT_EQ(Job(doc, "502")["verdict"], "rejected");
  EXPECT_EQ(Job(doc, "")["script"], Path("jobs/llama3_8b.sh"));
}

TEST_F(AdviseReplay, ErrorsNameWhatIsMissing) {
  auto run = RunAdvise({"replay", "--config", Path("fmte.conf")});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("PATH: at least one batch script"), std::string::npos) << run.err;
  run = RunAdvise({"replay", Path("nowhere"), "--config", Path("fmte.conf")});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("does not exist"), std::string::npos) << run.err;
  const std::string s = Write("s.txt", Stored("1", kLora));
  run = RunAdvise({"replay", s, "--sacct", Path("missing.psv"), "--config", Path("fmte.conf")});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("missing.psv"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace fmte

namespace fmte {
namespace {

// Long replays show progress on a terminal (script(1) gives replay one), never in a pipe.
TEST_F(AdviseReplay, ProgressOnATerminalOnly) {
  for (int i = 1; i <= 250; ++i)
    Write("jobs/job" + std::to_string(i) + ".sh",
          "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#FMTE model=meta-llama/Llama-3.1-8B "
          "method=lora\npython t.py\n");
  const std::string command = testing::ShellQuote(testing::AdviseBinary()) + " replay " +
                              testing::ShellQuote(Path("jobs")) + " --config " +
                              testing::ShellQuote(Path("fmte.conf"));
  const testing::ToolRun tty = testing::RunTool("/usr/bin/script", {"-qec", command, "/dev/null"});
  EXPECT_EQ(tty.exit_code, 0) << tty.err;
  EXPECT_NE(tty.out.find("100% 250/250 jobs"), std::string::npos) << tty.out.substr(0, 400);
  const testing::ToolRun piped = RunAdvise({"replay", Path("jobs"), "--config", Path("fmte.conf")});
  EXPECT_EQ(piped.err.find("replay ["), std::string::npos) << piped.err;
  EXPECT_EQ(piped.out.find("replay ["), std::string::npos);
}

}  // namespace
}  // namespace fmte
