// End-to-end: `fmte-advise zero` must print DeepSpeed's cold ZeRO-3 table to the digit.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_tool.h"

namespace fmte {
namespace {

using testing::RunAdvise;

// Source: DeepSpeed's documentation ("Memory Requirements"; copied into this test): DeepSpeed's
// estimate_zero3_model_states_mem_needs_all_cold(total_params=2851e6, largest_layer_params=32e6,
// num_gpus_per_node=8, num_nodes=1), as printed for t5-3b.
constexpr const char* kT5_3bTable =
    "Estimated memory needed for params, optim states and gradients for a:\n"
    "HW: Setup with 1 node, 8 GPUs per node.\n"
    "SW: Model with 2851M total params, 32M largest layer params.\n"
    "  per CPU  |  per GPU |   Options\n"
    "   71.69GB |   0.12GB | offload_param=cpu , offload_optimizer=cpu , zero_init=1\n"
    "  127.45GB |   0.12GB | offload_param=cpu , offload_optimizer=cpu , zero_init=0\n"
    "   63.72GB |   0.78GB | offload_param=none, offload_optimizer=cpu , zero_init=1\n"
    "  127.45GB |   0.78GB | offload_param=none, offload_optimizer=cpu , zero_init=0\n"
    "    1.43GB |   6.09GB | offload_param=none, offload_optimizer=none, zero_init=1\n"
    "  127.45GB |   6.09GB | offload_param=none, offload_optimizer=none, zero_init=0\n";

TEST(AdviseZero, PrintsDeepSpeedT5_3bColdTableVerbatim) {
  for (const char* params : {"2851e6", "2.851B"}) {
    auto run = RunAdvise({"zero", "--stage", "3", "--params", params, "--largest-layer-params",
                          "32e6", "--gpus-per-node", "8", "--nodes", "1"});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out, kT5_3bTable);
    EXPECT_EQ(run.err, "");
  }
}

TEST(AdviseZero, JsonHasOneObjectPerRow) {
  auto run = RunAdvise({"zero", "--stage", "3", "--params", "2851e6", "--largest-layer-params",
                        "32e6", "--gpus-per-node", "8", "--nodes", "1", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto doc = nlohmann::json::parse(run.out);
  ASSERT_TRUE(doc.is_array());
  ASSERT_EQ(doc.size(), 6u);
  // Row 1 by hand: GPU 4 * 32e6 = 128e6 B; CPU 2851e6 * 18 * 1.5 = 76977e6 B.
  EXPECT_EQ(doc[0]["offload_param"], "cpu");
  EXPECT_EQ(doc[0]["offload_optimizer"], "cpu");
  EXPECT_EQ(doc[0]["zero_init"], 1);
  EXPECT_EQ(doc[0]["gpu_bytes"], 128000000);
  EXPECT_EQ(doc[0]["cpu_bytes"], 76977000000);
  EXPECT_EQ(doc[5]["offload_param"], "none");
  EXPECT_EQ(doc[5]["zero_init"], 0);
}

TEST(AdviseZero, UsageErrorsExitTwoWithFlagNamed) {
  struct Case {
    std::vector<std::string> args;
    const char* expect_in_stderr;
  };
  const Case kCases[] = {
      {{"zero", "--params", "abc", "--largest-layer-params", "1"}, "--params"},
      {{"zero", "--stage", "1", "--params", "1e9"}, "--stage"},
      {{"zero", "--stage", "3", "--params", "1e9"}, "--largest-layer-params"},
      {{"zero", "--parms", "1e9"}, "did you mean '--params'"},
      {{"zero", "--params", "1e9", "--largest-layer-params", "1e6", "--nodes", "x"}, "--nodes"},
  };
  for (const auto& c : kCases) {
    auto run = RunAdvise(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.expect_in_stderr;
    EXPECT_EQ(run.out, "");
    EXPECT_NE(run.err.find("fmte-advise: error: "), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(c.expect_in_stderr), std::string::npos) << run.err;
  }
}

TEST(AdviseZero, HelpGoesToStdoutAndExitsZero) {
  auto run = RunAdvise({"zero", "--help"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.out.find("--largest-layer-params"), std::string::npos);
}

}  // namespace
}  // namespace fmte
