// Value parsers of sacct output. Inputs are strings printed by real sacct (tests/data/sacct; the
// formats: docs/formulas.md §7); expected values derived by hand beside each row.
#include "fmte/learn/sacct_fields.h"

#include <gtest/gtest.h>

namespace fmte::learn {
namespace {

TEST(SacctFieldsTest, Durations) {
  struct Case {
    const char* text;
    int64_t seconds;
  };
  const Case cases[] = {
      {"3-00:00:00", 3 * 86400},                           // xdmod TIMEOUT row
      {"2-22:03:04", 2 * 86400 + 22 * 3600 + 3 * 60 + 4},  // xdmod CANCELLED row
      {"14:00:49", 14 * 3600 + 49},
      {"00:00:00", 0},
      {"00:00.081", 0},  // TotalCPU MM:SS.mmm (reportseff)
      {"06:57.815", 6 * 60 + 57},
      {"451-06:00:24", 451 * 86400 + 6 * 3600 + 24},
      {"12-14:16:39", 12 * 86400 + 14 * 3600 + 16 * 60 + 39},
      {"23:05:24", 23 * 3600 + 5 * 60 + 24},
      {"UNLIMITED", kNoTimeLimit},
      {"Partition_Limit", kNoTimeLimit},
      {"", kUnknownValue},
      {"Unknown", kUnknownValue},
  };
  for (const Case& c : cases) {
    Result<int64_t> r = ParseSlurmDuration(c.text);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.status().message();
    EXPECT_EQ(*r, c.seconds) << c.text;
  }
  // The last three found by fuzz_sacct (signed overflow before the bound; tests/fuzz/sacct/).
  for (const char* bad : {"1:2:3:4", "ab", "12:xx", "-1:00", "1-", "::", "6666666666666666666",
                          "2049638230412172402:00", "9999999999-00:00:00"}) {
    EXPECT_FALSE(ParseSlurmDuration(bad).ok()) << bad;
  }
}

TEST(SacctFieldsTest, TimelimitRawAndTimestamps) {
  EXPECT_EQ(*ParseTimelimitRawMinutes("42"), 42);  // TimelimitRaw is minutes
  EXPECT_EQ(*ParseTimelimitRawMinutes("4294967295"), kNoTimeLimit);
  EXPECT_FALSE(ParseTimelimitRawMinutes("4h").ok());
  // 2015-07-01T02:55:50 UTC = 1435719350 (date -u -d 2015-07-01T02:55:50 +%s).
  EXPECT_EQ(*ParseSlurmTimestamp("2015-07-01T02:55:50"), 1435719350);
  EXPECT_EQ(*ParseSlurmTimestamp("Unknown"), kUnknownValue);
  EXPECT_EQ(*ParseSlurmTimestamp("1435719350"), 1435719350);
  EXPECT_FALSE(ParseSlurmTimestamp("2015-13-01T02:55:50").ok());
  EXPECT_FALSE(ParseSlurmTimestamp("yesterday").ok());
}

TEST(SacctFieldsTest, Bytes) {
  struct Case {
    const char* text;
    int64_t bytes;
  };
  const Case cases[] = {
      {"4224K", 4224LL * 1024},
      // gres/gpumem=38888M (sacct) and 40777023488 (the same job with --noconvert, CURC docs).
      {"38888M", 40777023488LL},
      {"3000Mc", 3000LL << 20},  // ReqMem per CPU
      {"48000Mn", 48000LL << 20},
      {"62.50G", static_cast<int64_t>(62.5 * (1LL << 30))},
      {"0", 0},
      {"", kUnknownValue},
  };
  for (const Case& c : cases) {
    Result<int64_t> r = ParseSlurmBytes(c.text);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.status().message();
    EXPECT_EQ(*r, c.bytes) << c.text;
  }
  EXPECT_FALSE(ParseSlurmBytes("12Q").ok());
  EXPECT_FALSE(ParseSlurmBytes("-5M").ok());
  // Found by fuzz_sacct: sizes beyond int64_t were converted (undefined behaviour); malformed now.
  EXPECT_FALSE(ParseSlurmBytes("38083300000000000000000").ok());
  EXPECT_FALSE(ParseSlurmBytes("3.8e22").ok());
  EXPECT_FALSE(ParseSlurmBytes("9999999999P").ok());
}

TEST(SacctFieldsTest, Tres) {
  // Real AllocTRES of the lab cluster (tests/data/sacct/fmte-lab-slurmdbd.psv form: typed and
  // untyped GPU both printed).
  Result<Tres> t = ParseTres("billing=1,cpu=1,gres/gpu:a100=2,gres/gpu=2,mem=1000M,node=1");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->gpus, 2);
  EXPECT_EQ(t->gpu_type, "a100");
  EXPECT_EQ(t->cpus, 1);
  EXPECT_EQ(t->nodes, 1);
  EXPECT_EQ(t->mem_bytes, 1000LL << 20);
  // Typed only: the count is the sum of the typed entries.
  EXPECT_EQ(ParseTres("cpu=4,gres/gpu:a100=3,node=1")->gpus, 3);
  EXPECT_EQ(ParseTres("gres/gpu=2")->gpus, 2);  // xdmod ReqTRES
  EXPECT_EQ(ParseTres("")->gpus, kUnknownValue);
  // Usage TRES: cpu is a duration there.
  Result<Tres> u = ParseTres(
      "cpu=00:56:24,energy=0,fs/disk=350130624578,gres/gpumem=38888M,gres/"
      "gpuutil=100,mem=10372780K,"
      "pages=3465,vmem=10194376K");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->gpumem_bytes, 40777023488LL);
  EXPECT_EQ(u->gpuutil, 100);
  EXPECT_EQ(u->cpus, kUnknownValue);
  EXPECT_FALSE(ParseTres("cpu").ok());
  EXPECT_FALSE(ParseTres("gres/gpu=two").ok());
}

TEST(SacctFieldsTest, States) {
  struct Case {
    const char* text;
    JobState state;
    int64_t by;
  };
  const Case cases[] = {
      {"COMPLETED", JobState::kCompleted, kUnknownValue},
      {"CANCELLED by 349394", JobState::kCancelled, 349394},
      {"CANCELLED", JobState::kCancelled, kUnknownValue},
      {"TIMEOUT", JobState::kTimeout, kUnknownValue},
      {"OUT_OF_MEMORY", JobState::kOutOfMemory, kUnknownValue},
      {"OUT_OF_ME+", JobState::kOutOfMemory, kUnknownValue},
      {"NODE_FAIL", JobState::kNodeFail, kUnknownValue},
      {"FAILED", JobState::kFailed, kUnknownValue},
      {"SOMETHING_NEW", JobState::kOther, kUnknownValue},
  };
  for (const Case& c : cases) {
    const ParsedState p = ParseJobState(c.text);
    EXPECT_EQ(p.state, c.state) << c.text;
    EXPECT_EQ(p.cancelled_by_uid, c.by) << c.text;
  }
  EXPECT_EQ(ToString(JobState::kOutOfMemory), "OUT_OF_MEMORY");
}

TEST(SacctFieldsTest, JobIds) {
  struct Case {
    const char* text;
    const char* allocation;
    const char* step;
    const char* array_job;
    const char* array_task;
  };
  const Case cases[] = {
      {"4103947", "4103947", "", "", ""},
      {"39889258_1426.batch", "39889258_1426", "batch", "39889258", "1426"},
      {"8205464.0", "8205464", "0", "", ""},
      {"4103947_[9-11,20]", "4103947_[9-11,20]", "", "4103947", "[9-11,20]"},
      {"123+1.0", "123+1", "0", "", ""},
  };
  for (const Case& c : cases) {
    Result<ParsedJobId> id = ParseJobId(c.text);
    ASSERT_TRUE(id.ok()) << c.text << ": " << id.status().message();
    EXPECT_EQ(id->allocation, c.allocation);
    EXPECT_EQ(id->step, c.step);
    EXPECT_EQ(id->array_job, c.array_job);
    EXPECT_EQ(id->array_task, c.array_task);
  }
  for (const char* bad : {"", "abc", "123.", "12x", "123_"})
    EXPECT_FALSE(ParseJobId(bad).ok()) << bad;
}

}  // namespace
}  // namespace fmte::learn
