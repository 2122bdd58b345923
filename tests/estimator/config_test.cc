// fmte.conf parsing: defaults, globals, partitions (PartitionName=DEFAULT as in slurm.conf(5)),
// errors naming line and key, Slurm time formats (sbatch(1) --time), and the shipped etc/fmte.conf.
#include "fmte/config.h"

#include <gtest/gtest.h>

#include <csignal>

namespace fmte {
namespace {

TEST(ConfigTest, EmptyConfigHasDefaults) {
  auto c = ParseConfig("");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->defaults.mode, Mode::kEnforce);
  EXPECT_EQ(c->on_error, OnError::kAccept);
  EXPECT_DOUBLE_EQ(c->defaults.usable_memory_fraction, 0.90);
  EXPECT_FALSE(c->defaults.raise_gpus);
  EXPECT_EQ(c->For("anything").name, "");
  EXPECT_EQ(c->GpuNameFor("gpu", "a100"), "a100");  // gres types named after GPUs need no config
}

TEST(ConfigTest, GlobalsAndPartitions) {
  const char* kText =
      "# comment\n"
      "mode=advise  UsableMemoryFraction=0.85   # trailing comment\n"
      "GresTypeGpu=a100:A100-SXM4-80GB,h100:H100-SXM\n"
      "PartitionName=DEFAULT RaiseGpus=yes MaxGpusPerJob=32\n"
      "PartitionName=gpu Mode=enforce Gpu=A100-SXM4-40GB MaxTime=2-00:00:00 Default=YES\n"
      "PartitionName=big Gpu=H100-SXM ShortLimit=reject GpusPerNode=4\n"
      "OnError=reject DefaultTimeFactor=2\n";
  auto c = ParseConfig(kText);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->defaults.mode, Mode::kAdvise);
  EXPECT_EQ(c->on_error, OnError::kReject);
  ASSERT_EQ(c->partitions.size(), 2u);
  const PartitionConfig& gpu = c->For("gpu");
  EXPECT_EQ(gpu.mode, Mode::kEnforce);
  EXPECT_DOUBLE_EQ(gpu.usable_memory_fraction, 0.85);  // global set on line 2
  EXPECT_DOUBLE_EQ(gpu.default_time_factor, 2.0);      // global set after the partition lines
  EXPECT_TRUE(gpu.raise_gpus);                         // PartitionName=DEFAULT
  EXPECT_EQ(gpu.max_gpus_per_job, 32);
  EXPECT_EQ(gpu.max_time_min, 2 * 24 * 60);
  EXPECT_EQ(c->default_partition, "gpu");
  EXPECT_EQ(&c->For(""), &gpu);
  EXPECT_EQ(c->For("big").short_limit, ShortLimit::kReject);
  EXPECT_EQ(c->For("big").gpus_per_node, 4);
  EXPECT_EQ(c->For("big").mode, Mode::kAdvise);
  EXPECT_EQ(c->GpuNameFor("gpu", "h100"), "H100-SXM");    // gres map first
  EXPECT_EQ(c->GpuNameFor("gpu", ""), "A100-SXM4-40GB");  // then the partition's Gpu=
  EXPECT_EQ(c->GpuNameFor("other", "l40s"), "l40s");      // then the type itself
  EXPECT_EQ(c->For("gpu,big").name, "gpu");
}

TEST(ConfigTest, ErrorsNameLineAndKey) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case kCases[] = {
      {"Mode=strict", "fmte.conf:1: Mode: expected enforce|advise|off, got 'strict'"},
      {"\n\nUsableMemoryFraction=1.5", "fmte.conf:3: UsableMemoryFraction: expected a number"},
      {"RaiseGpus=maybe", "fmte.conf:1: RaiseGpus: expected yes|no"},
      {"Colour=red", "fmte.conf:1: Colour: unknown key"},
      {"PartitionName=gpu OnError=reject", "fmte.conf:1: OnError: not a per-partition key"},
      {"PartitionName=gpu MaxTime=forever", "fmte.conf:1: MaxTime: expected a Slurm time"},
      {"GresTypeGpu=a100", "fmte.conf:1: GresTypeGpu: expected type:GPU"},
      {"Mode", "fmte.conf:1: expected Key=Value"},
      {"Default=YES", "fmte.conf:1: Default: only valid on a PartitionName= line"},
      {"MaxGpusPerJob=1180591620717411303424", "fmte.conf:1: MaxGpusPerJob: expected an integer"},
      {"PartitionName=gpu OperatorSet=../etc",
       "fmte.conf:1: OperatorSet: expected the name of a regressor set"},
  };
  for (const Case& c : kCases) {
    auto r = ParseConfig(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << r.status().message();
  }
}

TEST(ConfigTest, SlurmTimeFormats) {
  // sbatch(1) --time: "minutes", "minutes:seconds", "hours:minutes:seconds", "days-hours",
  // "days-hours:minutes" and "days-hours:minutes:seconds"; seconds round up to a minute.
  struct Case {
    const char* text;
    int64_t minutes;
  };
  const Case kCases[] = {{"10", 10},      {"10:30", 11},        {"1:00:00", 60},  {"2-0", 2880},
                         {"1-2:3", 1563}, {"1-00:00:01", 1441}, {"UNLIMITED", 0}, {"infinite", 0}};
  for (const Case& c : kCases) {
    auto r = ParseSlurmTimeMinutes(c.text);
    ASSERT_TRUE(r.ok()) << c.text;
    EXPECT_EQ(*r, c.minutes) << c.text;
  }
  for (const char* bad : {"", "1:2:3:4", "x", "-5", "1-", "99999999999999999999"})
    EXPECT_FALSE(ParseSlurmTimeMinutes(bad).ok()) << bad;
  EXPECT_EQ(FormatSlurmTime(90), "01:30:00");
  EXPECT_EQ(FormatSlurmTime(1563), "1-02:03:00");
}

TEST(ConfigTest, FindConfigPathBesideSlurmConf) {
  EXPECT_EQ(FindConfigPath("/etc/slurm/slurm.conf"), "/etc/slurm/fmte.conf");
  EXPECT_EQ(FindConfigPath("/tmp/lab/etc/slurm.conf"), "/tmp/lab/etc/fmte.conf");
  EXPECT_EQ(FindConfigPath("slurm.conf"), "fmte.conf");
}

TEST(ConfigTest, ShippedExampleParses) {
  auto c = LoadConfigFile(std::string(FMTE_SOURCE_DIR) + "/etc/fmte.conf");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->partitions.empty());
  EXPECT_FALSE(LoadConfigFile("/nonexistent/fmte.conf").ok());
}

TEST(ConfigTest, WarnSignalAsSbatchSignal) {
  // sbatch --signal=[B:]<sig_num>[@sig_time] (sbatch(1); default time 60 s, proc_args.c
  // get_signal_opts), names with or without SIG, numbers; per partition; off by default.
  auto c = ParseConfig(
      "WarnSignal=USR1@600\n"
      "PartitionName=batch WarnSignal=B:SIGTERM\n"
      "PartitionName=num WarnSignal=12@30\n"
      "PartitionName=quiet WarnSignal=off\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->defaults.warn_signal, SIGUSR1);
  EXPECT_EQ(c->defaults.warn_time_s, 600);
  EXPECT_FALSE(c->defaults.warn_batch_only);
  EXPECT_EQ(c->For("batch").warn_signal, SIGTERM);
  EXPECT_EQ(c->For("batch").warn_time_s, 60);
  EXPECT_TRUE(c->For("batch").warn_batch_only);
  EXPECT_EQ(c->For("num").warn_signal, 12);
  EXPECT_EQ(c->For("num").warn_time_s, 30);
  EXPECT_EQ(c->For("quiet").warn_signal, 0);
  EXPECT_EQ(ParseConfig("").value().defaults.warn_signal, 0);
  for (const char* bad : {"WarnSignal=USR3@10", "WarnSignal=USR1@0", "WarnSignal=USR1@abc",
                          "WarnSignal=R:USR1", "WarnSignal=65@10", "WarnSignal=USR1@70000"}) {
    auto r = ParseConfig(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("WarnSignal"), std::string::npos) << r.status().ToString();
  }
}

// OperatorSet= names a regressor set per partition (or for all of them); none clears it.
TEST(ConfigTest, OperatorSetPerPartition) {
  auto c = ParseConfig(
      "OperatorSet=Perlmutter\n"
      "PartitionName=gpu Gpu=A100\n"
      "PartitionName=gh OperatorSet=site-gh200.v2\n"
      "PartitionName=plain OperatorSet=none\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->defaults.operator_set, "Perlmutter");
  ASSERT_EQ(c->partitions.size(), 3u);
  EXPECT_EQ(c->partitions[0].operator_set, "Perlmutter");
  EXPECT_EQ(c->partitions[1].operator_set, "site-gh200.v2");
  EXPECT_EQ(c->partitions[2].operator_set, "");
}

}  // namespace
}  // namespace fmte
