// End-to-end: `fmte-advise doctor` on site configurations written as sysadmins write them: a
// consistent one (exit 0) and one with every kind of inconsistency, each named with its file and
// line (exit 1).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "run_tool.h"

namespace fmte {
namespace {

namespace fs = std::filesystem;
using testing::RunAdvise;

class DoctorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/fmte_doctor_XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  std::string Conf() const { return (dir_ / "slurm.conf").string(); }
  // The plugins this build made (they carry the Slurm version of the headers).
  static std::string PluginDir() { return FMTE_BINARY_DIR "/slurm_plugin"; }
  fs::path dir_;
};

TEST_F(DoctorTest, AConsistentSiteIsAllWell) {
  if (!fs::exists(PluginDir() + "/job_submit_fmte.so")) GTEST_SKIP() << "plugins not built";
  Write("slurm.conf",
        "ClusterName=c\nPluginDir=/usr/lib/x86_64-linux-gnu/slurm-wlm:" + PluginDir() +
            "\nJobSubmitPlugins=fmte\nGresTypes=gpu\n"
            "Include nodes.conf\n"
            "PartitionName=gpu Nodes=gpu[01-02] Default=YES MaxTime=2-00:00:00\n"
            "PartitionName=cpu Nodes=cpu01\n");
  // Included file and a node list, as sites split them.
  Write("nodes.conf",
        "NodeName=gpu[01-02] CPUs=64 Gres=gpu:a100:8 \\\n  RealMemory=512000\n"
        "NodeName=cpu01 CPUs=64\n");
  Write("gres.conf", "NodeName=gpu[01-02] Name=gpu Type=a100 File=/dev/nvidia[0-7]\n");
  Write("plugstack.conf", "optional spank_fmte.so\n");
  Write("fmte.conf", "PartitionName=gpu Default=YES Gpu=A100-SXM4-80GB MaxTime=2-00:00:00\n");
  const auto run = RunAdvise({"doctor", "--slurm-conf", Conf()});
  // slurmctld -V is this machine's Slurm, the headers' version: the plugin matches it.
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("doctor: all well"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("gres type a100 -> A100-SXM4-80GB"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("partition cpu has no GPUs"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("plugstack.conf:1: optional " + PluginDir() + "/spank_fmte.so"),
            std::string::npos)
      << run.out;
}

TEST_F(DoctorTest, EachInconsistencyIsNamedWithItsLine) {
  Write("slurm.conf", "ClusterName=c\nPluginDir=" + dir_.string() +
                          "\nJobSubmitPlugins=lua\n"
                          "NodeName=n[1-4] Gres=gpu:rtx6000:4\n"
                          "NodeName=m1 Gres=gpu:2\n"
                          "PartitionName=main Nodes=n[1-4]\n"
                          "PartitionName=old Nodes=m1\n");
  Write("plugstack.conf", "required /nonexistent/spank_fmte.so\n");
  // A plugin built for another Slurm (its build text says so).
  Write("job_submit_fmte.so",
        "\x7f"
        "ELF...fmte-build-for-slurm=21.08.1;...");
  Write("fmte.conf", "PartitionName=gpu Gpu=A100-SXM4-80GB\n");
  const auto run = RunAdvise({"doctor", "--slurm-conf", Conf()});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const std::string conf = Conf();
  for (const std::string& expected : std::vector<std::string>{
           conf + ":3: JobSubmitPlugins=lua: add fmte",
           "built for Slurm 21.08.1",
           "plugstack.conf:1: /nonexistent/spank_fmte.so not found (required: every sbatch fails)",
           conf + ":4: gres type rtx6000 maps to no GPU of the catalog: add GresTypeGpu=rtx6000:",
           conf + ":7: partition old has untyped GPUs (gpu:N)",
           "PartitionName=gpu is not a partition of " + conf,
       })
    EXPECT_NE(run.out.find(expected), std::string::npos) << expected << "\n" << run.out;
  EXPECT_NE(run.out.find("doctor: 6 problems"), std::string::npos) << run.out;
}

TEST_F(DoctorTest, BadFmteConfAndMissingFilesAreProblems) {
  Write("slurm.conf", "JobSubmitPlugins=fmte\nPluginDir=" + dir_.string() + "\n");
  Write("fmte.conf", "Mode=strict\n");
  const auto run = RunAdvise({"doctor", "--slurm-conf", Conf()});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.out.find("fmte.conf:1: Mode: expected enforce|advise|off"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("job_submit_fmte.so is not in PluginDir"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("plugstack.conf: not found"), std::string::npos) << run.out;

  // An OperatorSet= that loads is listed; one that does not is a problem naming its file.
  Write("fmte.conf",
        "PartitionName=gpu Gpu=A100-SXM4-80GB OperatorSet=perlmutter\n"
        "PartitionName=gh OperatorSet=NoSuchCluster\n");
  const auto sets = RunAdvise({"doctor", "--slurm-conf", Conf()});
  EXPECT_EQ(sets.exit_code, 1);
  EXPECT_NE(sets.out.find("OperatorSet=perlmutter (partition gpu): "), std::string::npos)
      << sets.out;
  EXPECT_NE(sets.out.find("OperatorSet=NoSuchCluster not used"), std::string::npos) << sets.out;
  EXPECT_NE(sets.out.find("NoSuchCluster/manifest.json"), std::string::npos) << sets.out;

  const auto missing = RunAdvise({"doctor", "--slurm-conf", (dir_ / "nope.conf").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find("nope.conf: cannot read"), std::string::npos) << missing.out;
}

}  // namespace
}  // namespace fmte
