// End-to-end: `fmte-advise estimate` and `fmte-advise models` driven as a user would.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_tool.h"

namespace fmte {
namespace {

using nlohmann::json;
using testing::RunAdvise;
using testing::ToolRun;

json ParseJson(const ToolRun& run) {
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return json::parse(run.out, nullptr, /*allow_exceptions=*/false);
}

// Published parameter counts (Llama-2-7b 6,738,415,616; Mixtral-8x7B 46,702,792,704; sources in
// tests/estimator/model_test.cc) must come through the CLI unchanged.
TEST(AdviseEstimate, JsonCarriesPublishedParameterCounts) {
  struct Case {
    const char* model;
    int64_t total;
  };
  const Case kCases[] = {{"meta-llama/Llama-2-7b-hf", 6738415616},
                         {"mistralai/Mixtral-8x7B-v0.1", 46702792704}};
  for (const auto& c : kCases) {
    auto doc = ParseJson(RunAdvise(
        {"estimate", "--model", c.model, "--gpus", "8", "--sharding", "zero3", "--json"}));
    ASSERT_TRUE(doc.is_object()) << c.model;
    EXPECT_EQ(doc["params"]["total"], c.total) << c.model;
    EXPECT_EQ(doc["params"]["trainable"], c.total) << c.model;  // full fine-tuning
  }
}

// The estimate JSON contract (docs/advise.md) and the identities memory.h promises between its
// fields.
TEST(AdviseEstimate, JsonHasTheContractFieldsAndTheyAddUp) {
  auto doc = ParseJson(RunAdvise({"estimate", "--model", "meta-llama/Llama-3.1-8B", "--method",
                                  "lora", "--micro-batch", "2", "--seq-len", "1024", "--json"}));
  ASSERT_TRUE(doc.is_object());
  const json& m = doc["memory"];
  for (const char* k : {"per_gpu_bytes", "allocator_peak_bytes", "gpu_capacity_bytes",
                        "cpu_bytes_per_node", "heaviest_stage"})
    EXPECT_TRUE(m[k].is_number_integer()) << k;
  EXPECT_TRUE(m["fits"].is_boolean());
  EXPECT_TRUE(m["layers_per_stage"].is_array());
  int64_t sum = 0;
  for (const char* k : {"weights", "gradients", "optimizer", "activations", "logits", "other"}) {
    ASSERT_TRUE(m["breakdown"][k].is_number_integer()) << k;
    EXPECT_GE(m["breakdown"][k].get<int64_t>(), 0) << k;
    sum += m["breakdown"][k].get<int64_t>();
  }
  EXPECT_EQ(sum, m["allocator_peak_bytes"].get<int64_t>());
  EXPECT_GE(m["per_gpu_bytes"].get<int64_t>(), m["allocator_peak_bytes"].get<int64_t>());
  EXPECT_EQ(m["fits"].get<bool>(),
            m["per_gpu_bytes"].get<int64_t>() <= m["gpu_capacity_bytes"].get<int64_t>());
  // LoRA trains a small fraction of the weights.
  EXPECT_LT(doc["params"]["trainable"].get<int64_t>(), doc["params"]["total"].get<int64_t>() / 50);
  // Defaults: --gpu A100-80GB (80 GB = 74.5 GiB of device memory at least), one GPU.
  EXPECT_GT(m["gpu_capacity_bytes"].get<int64_t>(), int64_t{74} << 30);
  EXPECT_EQ(doc["job"]["gpus"], 1);
}

TEST(AdviseEstimate, GpusPerNodeDefaultsToMinOfGpusAndEight) {
  auto doc = ParseJson(RunAdvise({"estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpus", "16",
                                  "--sharding", "fsdp-full", "--json"}));
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["job"]["gpus_per_node"], 8);
  EXPECT_EQ(doc["job"]["nodes"], 2);
}

TEST(AdviseEstimate, PipelineReportsStagesAndTheHeaviest) {
  // Llama-2-7b: 32 layers over 3 stages split unevenly (DeepSpeed's partition_uniform gives
  // 11, 11, 10; Megatron refuses uneven stages).
  auto doc = ParseJson(
      RunAdvise({"estimate", "--model", "meta-llama/Llama-2-7b-hf", "--gpus", "3", "--pp", "3",
                 "--framework", "deepspeed", "--precision", "mixed-bf16", "--json"}));
  ASSERT_TRUE(doc.is_object());
  const json& stages = doc["memory"]["layers_per_stage"];
  ASSERT_EQ(stages.size(), 3u);
  int total = 0, largest = 0;
  for (const auto& s : stages) total += s.get<int>(), largest = std::max(largest, s.get<int>());
  EXPECT_EQ(total, 32);
  EXPECT_EQ(largest, 11);  // ceil(32 / 3)
  EXPECT_GE(doc["memory"]["heaviest_stage"].get<int>(), 0);
  EXPECT_LT(doc["memory"]["heaviest_stage"].get<int>(), 3);
}

TEST(AdviseEstimate, HumanTableShowsGibAndFits) {
  auto run = RunAdvise({"estimate", "--model", "meta-llama/Llama-3.1-8B", "--method", "qlora"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("GiB"), std::string::npos);
  EXPECT_NE(run.out.find("fits"), std::string::npos);
  EXPECT_NE(run.out.find("activations"), std::string::npos);
  EXPECT_EQ(run.err, "");
}

TEST(AdviseEstimate, ErrorsGoToStderrWithTheRightExitCode) {
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::vector<const char*> in_stderr;
  };
  const Case kCases[] = {
      {{"estimate", "--model", "meta-llama/Llama-3.1-8b-typo"},
       2,
       {"unknown model", "closest catalog ids", "meta-llama/Llama-3.1-8B"}},
      {{"estimate", "--model", "meta-llama/Llama-3.1-8B", "--method", "loRA"},
       2,
       {"--method", "full|lora|qlora|prompt-tuning|prefix-tuning"}},
      {{"estimate", "--model", "meta-llama/Llama-3.1-8B", "--sharding", "zero4"},
       2,
       {"--sharding", "zero3"}},
      {{"estimate", "--model", "meta-llama/Llama-3.1-8B", "--seq-len", "abc"}, 2, {"--seq-len"}},
      {{"estimate", "--model", "meta-llama/Llama-3.1-8B", "--micro-bach", "2"},
       2,
       {"unknown option", "did you mean '--micro-batch'"}},
      {{"estimate", "--method", "lora"}, 2, {"--model"}},
      // Llama-3.1-8B has 32 heads: tp 3 cannot split them.
      {{"estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpus", "3", "--tp", "3"}, 2, {"tp"}},
      // tp * pp must divide the GPUs.
      {{"estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpus", "6", "--tp", "4"},
       2,
       {"--gpus"}},
      {{"estimate", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "Z900"}, 2, {"Z900"}},
      {{"estimat", "--model", "x"}, 2, {"did you mean 'estimate'"}},
  };
  for (const auto& c : kCases) {
    auto run = RunAdvise(c.args);
    SCOPED_TRACE(c.args.size() > 2 ? c.args[2] : c.args[0]);
    EXPECT_EQ(run.exit_code, c.exit_code) << run.err;
    EXPECT_EQ(run.out, "");
    EXPECT_EQ(run.err.rfind("fmte-advise: error: ", 0), 0u) << run.err;
    for (const char* s : c.in_stderr) EXPECT_NE(run.err.find(s), std::string::npos) << run.err;
  }
}

// Wall time over a dataset, from the FM Training Estimator's own TE2 contract of te_test1.jsonl
// (tests/data/tokens/test1.contract.json, SOURCES.txt): 9 samples, 533 tokens, and a width of 115.5
// tokens for batches of 4 (its "bs4": the mean of the longest int(9/4) = 2 samples).
TEST(AdviseEstimate, WallTimeOverADatasetContract) {
  std::vector<std::string> args = {
      "estimate",
      "--model",
      "meta-llama/Llama-3.1-8B",
      "--method",
      "lora",
      "--gpus",
      "1",
      "--micro-batch",
      "4",
      "--seq-len",
      "512",
      "--epochs",
      "3",
      "--contract",
      std::string(FMTE_SOURCE_DIR) + "/tests/data/tokens/test1.contract.json",
      "--json"};
  json doc = ParseJson(RunAdvise(args));
  ASSERT_TRUE(doc.contains("time") && doc["time"].contains("dataset")) << doc.dump();
  // Padded: each step runs at the batch's padded width, ceil(115.5) = 116 tokens per row (not 512);
  // 9 samples x 3 epochs / 4 per step = 6.75 -> 7 steps; 533 x 3 real tokens.
  EXPECT_EQ(doc["time"]["dataset"]["sequence_tokens"], 116);
  EXPECT_EQ(doc["time"]["steps"], 7);
  EXPECT_DOUBLE_EQ(doc["time"]["dataset"]["tokens"].get<double>(), 533.0 * 3);
  // Packed, 900 samples: 533 tokens per 9 samples -> 53,300 per epoch -> ceil(53300 / 512) = 105
  // rows; 105 x 3 epochs / 4 = 78.75 -> 79 steps, each at the full 512 tokens.
  args.insert(args.end() - 1, {"--packing", "--samples", "900"});
  doc = ParseJson(RunAdvise(args));
  EXPECT_EQ(doc["time"]["dataset"]["sequence_tokens"], 512);
  EXPECT_EQ(doc["time"]["steps"], 79);
  EXPECT_DOUBLE_EQ(doc["time"]["dataset"]["tokens"].get<double>(), 53300.0 * 3);
  // --packing alone is a usage error naming what it needs.
  auto run = RunAdvise({"estimate", "--model", "meta-llama/Llama-3.1-8B", "--packing"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--contract"), std::string::npos) << run.err;
}

// --report FILE.html: one self-contained page with what --json says (the per-GPU figure), the
// memory bar and the step timeline as inline SVG, the assumptions; nothing loaded from elsewhere.
TEST(AdviseEstimate, ReportIsASelfContainedPage) {
  char path[] = "/tmp/fmte_report_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  const std::vector<std::string> job = {"estimate", "--model",  "meta-llama/Llama-3.1-8B",
                                        "--method", "lora",     "--gpu",
                                        "H100-SXM", "--tokens", "1e8"};
  std::vector<std::string> with_report = job;
  with_report.insert(with_report.end(), {"--report", path});
  const ToolRun run = RunAdvise(with_report);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::ifstream in(path);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path);
  std::vector<std::string> as_json = job;
  as_json.push_back("--json");
  const json doc = ParseJson(RunAdvise(as_json));
  char gib[64];
  std::snprintf(gib, sizeof gib, "%.2f GiB per GPU",
                doc["memory"]["per_gpu_bytes"].get<double>() / (1024.0 * 1024 * 1024));
  EXPECT_NE(html.find(gib), std::string::npos) << gib;
  EXPECT_NE(html.find("<h2>Step timeline</h2>"), std::string::npos);
  size_t svgs = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1))
    ++svgs;
  EXPECT_EQ(svgs, 2u);  // the memory bar and the timeline
  EXPECT_NE(html.find("Assumptions and their sources"), std::string::npos);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);

  const ToolRun bad = RunAdvise(
      {"estimate", "--model", "meta-llama/Llama-3.1-8B", "--report", "/nonexistent/dir/r.html"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--report: cannot write /nonexistent/dir/r.html"), std::string::npos)
      << bad.err;
}

// --overrides FILE with the memory and time sections (custom mode). Each figure is checked by what
// it must do to the estimate, against the published parameter count (Llama-3.1-8B: 8,030,261,248,
// its model card / config.json) or against the estimate's own other figures; none against a
// number the model printed before.
class OverridesTest : public ::testing::Test {
 protected:
  const std::vector<std::string> job_ = {"estimate",  "--model", "meta-llama/Llama-3.1-8B",
                                         "--gpus",    "8",       "--sharding",
                                         "fsdp-full", "--gpu",   "H100-SXM",
                                         "--tokens",  "1e9",     "--json"};
  json With(const std::string& overrides) {
    char path[] = "/tmp/fmte_overrides_XXXXXX";
    const int fd = mkstemp(path);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(write(fd, overrides.data(), overrides.size()),
              static_cast<ssize_t>(overrides.size()));
    close(fd);
    std::vector<std::string> args = job_;
    args.insert(args.end(), {"--overrides", path});
    const ToolRun run = RunAdvise(args);
    std::remove(path);
    last_err_ = run.err;
    last_exit_ = run.exit_code;
    return run.exit_code == 0 ? json::parse(run.out) : json();
  }
  std::string last_err_;
  int last_exit_ = 0;
};

TEST_F(OverridesTest, TheFiguresFedBackUnchangedGiveTheSameEstimate) {
  const json plain = ParseJson(RunAdvise(job_));
  ASSERT_TRUE(plain.contains("figures"));
  for (const char* section : {"gpu", "cluster", "memory", "time"})
    EXPECT_TRUE(plain["figures"].contains(section)) << section;
  const json again = With(plain["figures"].dump());
  ASSERT_EQ(last_exit_, 0) << last_err_;
  EXPECT_EQ(again["memory"], plain["memory"]);
  // One pipeline stage: its per-layer times, fixed, give back the modelled ones.
  EXPECT_NEAR(again["time"]["step_time_s"].get<double>(), plain["time"]["step_time_s"], 1e-9);
  EXPECT_EQ(again["figures"], plain["figures"]);
}

TEST_F(OverridesTest, BytesPerElementScaleTheirShareOnly) {
  const json plain = ParseJson(RunAdvise(job_));
  const double params = 8030261248.0;  // published
  // Adam keeps two states per trainable parameter, FSDP shards them over the 8 GPUs.
  EXPECT_EQ(plain["memory"]["breakdown"]["optimizer"].get<double>(),
            params * 2 * plain["figures"]["memory"]["optimizer_state"].get<double>() / 8);
  const json bf16_states = With(R"({"memory": {"optimizer_state": 2}})");
  ASSERT_EQ(last_exit_, 0) << last_err_;
  EXPECT_EQ(bf16_states["memory"]["breakdown"]["optimizer"].get<double>(), params * 2 * 2 / 8);
  EXPECT_EQ(bf16_states["memory"]["breakdown"]["weights"], plain["memory"]["breakdown"]["weights"]);
  EXPECT_EQ(bf16_states["figures"]["memory"]["optimizer_state"], 2.0);
  EXPECT_LT(bf16_states["memory"]["per_gpu_bytes"].get<double>(),
            plain["memory"]["per_gpu_bytes"].get<double>());
}

TEST_F(OverridesTest, TimeConstantsMoveTheStepTheWayTheyMust) {
  const json plain = ParseJson(RunAdvise(job_));
  const json& t = plain["figures"]["time"];
  ASSERT_TRUE(t["learned_correction"].get<bool>());
  // Without the learned correction the step is the analytic one.
  const json analytic = With(R"({"time": {"learned_correction": false}})");
  ASSERT_EQ(last_exit_, 0) << last_err_;
  EXPECT_DOUBLE_EQ(analytic["time"]["step_time_s"].get<double>(),
                   analytic["time"]["analytic_step_time_s"].get<double>());
  EXPECT_FALSE(analytic["figures"]["time"]["learned_correction"].get<bool>());
  // Half the GEMM efficiency: slower, and less than twice as slow (not all of a step is GEMM).
  const json slow = With(R"({"time": {"gemm_efficiency": )" +
                         json(t["gemm_efficiency"].get<double>() / 2).dump() + "}}");
  ASSERT_EQ(last_exit_, 0) << last_err_;
  const double before = plain["time"]["analytic_step_time_s"].get<double>();
  const double after = slow["time"]["analytic_step_time_s"].get<double>();
  EXPECT_GT(after, before * 1.2);
  EXPECT_LT(after, before * 2.0);
  // A fixed per-layer time: every layer's forward takes it (32 layers in Llama-3.1-8B's config).
  const json fixed = With(R"({"time": {"layer_fwd_s": 0.01, "layer_bwd_s": 0.02}})");
  ASSERT_EQ(last_exit_, 0) << last_err_;
  EXPECT_EQ(fixed["figures"]["time"]["layer_fwd_s"], 0.01);
  EXPECT_GT(fixed["time"]["analytic_step_time_s"].get<double>(), 32 * 0.03);
}

TEST_F(OverridesTest, BadFiguresNameTheKeyAndWhatWasExpected) {
  With(R"({"memory": {"optimizer_state": 40}})");
  EXPECT_EQ(last_exit_, 2);
  EXPECT_NE(last_err_.find("memory.optimizer_state: expected a number in [0, 16], got 40"),
            std::string::npos)
      << last_err_;
  With(R"({"time": {"gemm": 0.5}})");
  EXPECT_NE(last_err_.find("time.gemm: unknown figure (expected one of learned_correction, "
                           "gemm_efficiency"),
            std::string::npos)
      << last_err_;
  With(R"({"time": {"learned_correction": 0}})");
  EXPECT_NE(last_err_.find("time.learned_correction: expected true or false, got 0"),
            std::string::npos)
      << last_err_;
  With(R"({"power": {}})");
  EXPECT_NE(last_err_.find("power: unknown section (expected gpu, cluster, memory or time)"),
            std::string::npos)
      << last_err_;
}

TEST(AdviseEstimate, HelpListsEveryContractFlag) {
  auto run = RunAdvise({"estimate", "--help"});
  ASSERT_EQ(run.exit_code, 0);
  for (const char* flag : {"--model",
                           "--method",
                           "--gpus",
                           "--gpus-per-node",
                           "--gpu",
                           "--micro-batch",
                           "--seq-len",
                           "--grad-accum",
                           "--precision",
                           "--optimizer",
                           "--sharding",
                           "--offload-optimizer",
                           "--offload-params",
                           "--tp",
                           "--pp",
                           "--vpp",
                           "--sp",
                           "--activation-checkpointing",
                           "--attention",
                           "--lora-r",
                           "--lora-targets",
                           "--quant",
                           "--double-quant",
                           "--virtual-tokens",
                           "--framework",
                           "--chunked-loss",
                           "--compile",
                           "--activation-offload",
                           "--optimizer-in-backward",
                           "--json",
                           "--tokens",
                           "--samples",
                           "--epochs",
                           "--steps",
                           "--global-batch",
                           "--cluster",
                           "--inter-node-gbps",
                           "--timeline",
                           "--regressors",
                           "--contract",
                           "--packing",
                           "--template",
                           "--counter"})
    EXPECT_NE(run.out.find(std::string(flag) + " "), std::string::npos) << flag;
}

TEST(AdviseModels, ListsCatalogModelsWithParamsAndGpus) {
  auto doc = ParseJson(RunAdvise({"models", "--json"}));
  ASSERT_TRUE(doc.is_object());
  bool found = false;
  for (const auto& m : doc["models"])
    if (m["id"] == "meta-llama/Llama-2-7b-hf") {
      found = true;
      EXPECT_EQ(m["params"], 6738415616);
    }
  EXPECT_TRUE(found);
  ASSERT_TRUE(doc["gpus"].is_array());
  EXPECT_FALSE(doc["gpus"].empty());
  auto run = RunAdvise({"models"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.out.find("mistralai/Mixtral-8x7B-v0.1"), std::string::npos);
}

}  // namespace
}  // namespace fmte
