#include "fmte/zero.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace fmte {
namespace {

std::string Gb(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

// Source: DeepSpeed's documentation ("Memory Requirements"), the output of DeepSpeed's
// estimate_zero3_model_states_mem_needs_all_cold(total_params=2851e6, largest_layer_params=32e6,
// num_gpus_per_node=8, num_nodes=1) for t5-3b, copied row by row (per CPU, per GPU in "GB").
TEST(ZeroCold, ReproducesDeepSpeedT5_3bTable) {
  struct Row {
    bool offload_param, offload_optimizer, zero_init;
    const char* cpu_gb;
    const char* gpu_gb;
  };
  const Row kExpected[] = {
      {true, true, true, "71.69", "0.12"},  {true, true, false, "127.45", "0.12"},
      {false, true, true, "63.72", "0.78"}, {false, true, false, "127.45", "0.78"},
      {false, false, true, "1.43", "6.09"}, {false, false, false, "127.45", "6.09"},
  };
  ZeroColdInput in;
  in.stage = 3;
  in.total_params = 2851e6;
  in.largest_layer_params = 32e6;
  in.gpus_per_node = 8;
  in.nodes = 1;
  auto rows = EstimateZeroCold(in);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), std::size(kExpected));
  for (size_t i = 0; i < rows->size(); ++i) {
    const ZeroColdRow& r = (*rows)[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(r.offload_param, kExpected[i].offload_param);
    EXPECT_EQ(r.offload_optimizer, kExpected[i].offload_optimizer);
    EXPECT_EQ(r.zero_init, kExpected[i].zero_init);
    EXPECT_EQ(Gb(r.cpu_bytes), kExpected[i].cpu_gb);
    EXPECT_EQ(Gb(r.gpu_bytes), kExpected[i].gpu_gb);
  }
}

// Derivation (DeepSpeed stage_1_and_2.py, docs/formulas.md §3), P = 1e9, 4 GPUs per node,
// 2 nodes (N = 8): offload: GPU 2P = 2e9, CPU P*max(4N,16)*1.5 = 48e9;
// no offload: GPU 2P + 18P/N = 2e9 + 2.25e9, CPU P*4n*1.5 = 24e9.
TEST(ZeroCold, Zero2MatchesDeepSpeedFormula) {
  ZeroColdInput in;
  in.stage = 2;
  in.total_params = 1e9;
  in.gpus_per_node = 4;
  in.nodes = 2;
  auto rows = EstimateZeroCold(in);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_TRUE((*rows)[0].offload_optimizer);
  EXPECT_EQ((*rows)[0].gpu_bytes, 2'000'000'000);
  EXPECT_EQ((*rows)[0].cpu_bytes, 48'000'000'000);
  EXPECT_FALSE((*rows)[1].offload_optimizer);
  EXPECT_EQ((*rows)[1].gpu_bytes, 4'250'000'000);
  EXPECT_EQ((*rows)[1].cpu_bytes, 24'000'000'000);
}

// Multi-node zero_init=0 with offload: DeepSpeed takes max(4n, 18/nodes) per parameter.
// P = 1e9, n = 2, nodes = 2: max(8, 9) = 9 -> 13.5e9; nodes = 8: max(8, 2.25) = 8 -> 12e9.
TEST(ZeroCold, Zero3HostMemoryTakesTheLargerOfLoadAndShard) {
  ZeroColdInput in;
  in.total_params = 1e9;
  in.largest_layer_params = 1e8;
  in.gpus_per_node = 2;
  in.nodes = 2;
  EXPECT_EQ((*EstimateZeroCold(in))[1].cpu_bytes, 13'500'000'000);
  in.nodes = 8;
  EXPECT_EQ((*EstimateZeroCold(in))[1].cpu_bytes, 12'000'000'000);
}

TEST(ZeroCold, RejectsBadInputNamingTheFlag) {
  struct Case {
    ZeroColdInput in;
    const char* flag;
  };
  ZeroColdInput ok;
  ok.total_params = 1e9;
  ok.largest_layer_params = 1e8;
  std::vector<Case> cases;
  ZeroColdInput c = ok;
  c.stage = 1;
  cases.push_back({c, "--stage"});
  c = ok;
  c.total_params = 0;
  cases.push_back({c, "--params"});
  c = ok;
  c.largest_layer_params = 0;
  cases.push_back({c, "--largest-layer-params"});
  c = ok;
  c.gpus_per_node = 0;
  cases.push_back({c, "--gpus-per-node"});
  c = ok;
  c.nodes = -1;
  cases.push_back({c, "--nodes"});
  for (const auto& k : cases) {
    auto r = EstimateZeroCold(k.in);
    ASSERT_FALSE(r.ok()) << k.flag;
    EXPECT_NE(r.status().message().find(k.flag), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  }
}

TEST(ParseParamCount, AcceptsExponentsAndSuffixes) {
  struct Case {
    const char* text;
    double want;
  };
  const Case kCases[] = {
      {"2851e6", 2851e6}, {"2.851B", 2851e6}, {"2.851b", 2851e6},          {"32M", 32e6},
      {"340k", 340e3},    {"1.5T", 1.5e12},   {"6738415616", 6738415616.0}};
  for (const auto& c : kCases) {
    auto v = ParseParamCount(c.text, "--params");
    ASSERT_TRUE(v.ok()) << c.text;
    EXPECT_EQ(*v, c.want) << c.text;  // exact: suffixes become decimal exponents
  }
  for (const char* bad : {"", "abc", "-5", "0", "1e6M", "B", "3 B", "nan"}) {
    auto v = ParseParamCount(bad, "--params");
    EXPECT_FALSE(v.ok()) << bad;
    if (!v.ok()) {
      EXPECT_NE(v.status().message().find("--params"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace fmte
