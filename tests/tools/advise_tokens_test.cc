// End-to-end: `fmte-advise tokens` on the FM Training Estimator's test data.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_tool.h"

namespace fmte {
namespace {

using nlohmann::json;
using testing::RunAdvise;

std::string Data(const char* name) {
  return std::string(FMTE_SOURCE_DIR) + "/tests/data/tokens/" + name;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// test1.contract.json was written by their gen_contract from te_test1.jsonl
// (tests/data/tokens/SOURCES.txt): the CLI must write the same bytes.
TEST(AdviseTokens, WritesTheirContractOfTeTest1) {
  char path[] = "/tmp/fmte_contract_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  auto run =
      RunAdvise({"tokens", "--data", Data("te_test1.jsonl"), "--write-contract", path, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::string expected = Slurp(Data("test1.contract.json"));
  while (!expected.empty() && expected.back() == '\n') expected.pop_back();
  EXPECT_EQ(Slurp(path), expected);
  std::remove(path);
  auto doc = json::parse(run.out);
  EXPECT_EQ(doc["samples"], 9);
  EXPECT_EQ(doc["total_tokens"], 533);  // "total" of their contract
  EXPECT_EQ(doc["max_sample_tokens"], 158);
}

TEST(AdviseTokens, BatchingFromDataAndFromContract) {
  // Batch 9 = the whole file in one batch: width = the longest sample (158), 1 step;
  // padding = 1 - 533 / (9 * 158).
  auto doc = json::parse(
      RunAdvise({"tokens", "--data", Data("te_test1.jsonl"), "--batch-size", "9", "--json"}).out);
  EXPECT_DOUBLE_EQ(doc["mean_batch_width"].get<double>(), 158);
  EXPECT_EQ(doc["steps_per_epoch"], 1);
  EXPECT_NEAR(doc["padding_fraction"].get<double>(), 1 - 533.0 / (9 * 158), 1e-12);
  // Their axb contract, bs 4: width 48.56884057971015 (its bs4); 1104 / 4 = 276 steps;
  // 2 epochs -> 552 steps.
  doc = json::parse(RunAdvise({"tokens", "--contract", Data("test_axb.contract.json"), "--template",
                               "{{sentence1}}", "--batch-size", "4", "--epochs", "2", "--json"})
                        .out);
  EXPECT_DOUBLE_EQ(doc["mean_batch_width"].get<double>(), 48.56884057971015);
  EXPECT_EQ(doc["steps"], 552);
  EXPECT_EQ(doc["total_tokens"], 29400);
  // Packing 533 tokens into rows of 100: 6 rows; batch 4 -> 2 steps.
  doc = json::parse(RunAdvise({"tokens", "--data", Data("te_test1.jsonl"), "--packing", "--seq-len",
                               "100", "--batch-size", "4", "--json"})
                        .out);
  EXPECT_EQ(doc["steps_per_epoch"], 2);
  EXPECT_DOUBLE_EQ(doc["padded_tokens"].get<double>(), 600);
}

TEST(AdviseTokens, HumanOutputAndErrors) {
  auto run = RunAdvise({"tokens", "--data", Data("te_test1.jsonl"), "--batch-size", "2"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("mean batch width"), std::string::npos);

  char path[] = "/tmp/fmte_bad_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string bad = "{\"text\": \"a\"}\n{\"text\": \"b\"\n";
  ASSERT_EQ(write(fd, bad.data(), bad.size()), static_cast<ssize_t>(bad.size()));
  close(fd);
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    const char* in_stderr;
  };
  const Case kCases[] = {
      {{"tokens", "--data", path}, 1, ":2: malformed JSON"},
      {{"tokens", "--data", "/nonexistent.jsonl"},
       1,
       "/nonexistent.jsonl: cannot read the dataset"},
      {{"tokens"}, 2, "--data"},
      {{"tokens", "--data", Data("te_test1.jsonl"), "--packing"}, 2, "--seq-len"},
      {{"tokens", "--data", Data("te_test1.jsonl"), "--batch-size", "0"}, 2, "--batch-size"},
      {{"tokens", "--data", Data("te_test1.jsonl"), "--template", "{{input}}"}, 1, "field 'input'"},
      {{"tokens", "--contract", Data("test_axb.contract.json"), "--template", "{{q}}"},
       2,
       "sentence1, sentence2"},
      {{"tokens", "--data", Data("te_test1.jsonl"), "--counter", "tiktoken"},
       2,
       "chars|words|bytes"},
      {{"tokens", "--data", Data("te_test1.jsonl"), "--batchsize", "2"},
       2,
       "did you mean '--batch-size'"},
  };
  for (const auto& c : kCases) {
    auto r = RunAdvise(c.args);
    SCOPED_TRACE(c.in_stderr);
    EXPECT_EQ(r.exit_code, c.exit_code) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(c.in_stderr), std::string::npos) << r.err;
  }
  std::remove(path);
}

}  // namespace
}  // namespace fmte
