// fmte-retrain train --kind ...: the kinds beyond sacct, end to end through the real binary
// (install rules: files and manifest entries, refusal of a worse model, --force keeps .prev.json).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_tool.h"

namespace fmte::testing {
namespace {

namespace fs = std::filesystem;

const std::string kRetrain = FMTE_BINARY_DIR "/tools/fmte-retrain";
const std::string kFm = std::string(FMTE_SOURCE_DIR) + "/tests/data/fm/";

class RetrainKinds : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("fmte_retrain_kinds_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // 32 v1 rows of catalog models (4 models x 2 GPU counts = 8 groups) with plausible, varied
  // measurements; the values only need to be trainable (this tests the install rules, not
  // accuracy).
  std::string WriteV1() const {
    const char* models[] = {"meta-llama/Llama-2-7b-hf", "TinyLlama/TinyLlama-1.1B-Chat-v1.0",
                            "meta-llama/Llama-3.2-1B-Instruct", "Qwen/Qwen2.5-0.5B"};
    std::ostringstream csv;
    csv << "model_name,number_gpus,batch_size,seq_len,tokens_per_second,memory,memory_act\n";
    int i = 0;
    for (const char* m : models) {
      for (int gpus : {2, 4}) {
        for (int batch : {1, 2}) {
          for (int seq : {512, 1024}) {
            ++i;
            csv << m << "," << gpus << "," << batch << "," << seq << ","
                << 5000 * (1 + 0.05 * ((i * 3) % 4)) << "," << 20e9 * (1 + 0.1 * ((i * 7) % 5))
                << ",1e9\n";
          }
        }
      }
    }
    const std::string path = (dir_ / "v1.csv").string();
    std::ofstream(path) << csv.str();
    return path;
  }

  fs::path dir_;
};

TEST_F(RetrainKinds, FmCsvReportsFormatsAndMalformedLines) {
  const ToolRun r = RunTool(kRetrain, {"train", "--kind", "fm-csv", kFm + "data_v3.csv", "--into",
                                       (dir_ / "regs").string(), "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // 4 rows: nothing to train
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["rows"], 4);
  EXPECT_EQ(j["files"][0]["format"], "v3");
  EXPECT_EQ(j["files"][0]["malformed_lines"], nlohmann::json::array({5, 6}));
  EXPECT_NE(r.err.find("nothing trained"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "regs" / "sacct_memory_correction.json"));
}

TEST_F(RetrainKinds, FmCsvUnknownHeaderIsAnError) {
  const ToolRun r =
      RunTool(kRetrain, {"train", "--kind", "fm-csv", kFm + "data1.csv", "--into", dir_.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("expected the columns of v1"), std::string::npos) << r.err;
}

TEST_F(RetrainKinds, FmCsvInstallsThenRefusesAWorseModelUnlessForced) {
  const std::string csv = WriteV1();
  const std::string into = (dir_ / "regs").string();
  const std::vector<std::string> base = {"train", "--kind", "fm-csv", csv,     "--gpu",
                                         "A100",  "--into", into,     "--json"};
  ToolRun r = RunTool(kRetrain, base);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_EQ(j["mapped"], 32);
  EXPECT_TRUE(j["memory"]["trained"].get<bool>());
  EXPECT_TRUE(j["step_time"]["trained"].get<bool>());
  EXPECT_EQ(j["step_time"]["groups"], 8);
  EXPECT_TRUE(fs::exists(fs::path(into) / "sacct_memory_correction.json"));
  EXPECT_TRUE(fs::exists(fs::path(into) / "vtrain" / "correction.json"));
  EXPECT_TRUE(fs::exists(fs::path(into) / "vtrain" / "efficiency.json"));
  std::ifstream mf(fs::path(into) / "manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(mf, nullptr, false);
  ASSERT_TRUE(manifest.is_object());
  EXPECT_EQ(manifest["regressors"][0]["key"], "sacct_memory_correction");
  EXPECT_EQ(manifest["regressors"][0]["rows"], 32);
  EXPECT_TRUE(manifest["regressors"][0].contains("features"));
  EXPECT_EQ(manifest["retrain_fm_csv"]["kind"], "fm-csv");

  // The installed models have seen these rows: on the same rows they beat the new out-of-fold
  // predictions, so the new ones are refused and the installed files stay.
  r = RunTool(kRetrain, base);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("not installed"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(fs::path(into) / "sacct_memory_correction.prev.json"));
  std::vector<std::string> forced = base;
  forced.push_back("--force");
  r = RunTool(kRetrain, forced);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(fs::path(into) / "sacct_memory_correction.prev.json"));
  EXPECT_TRUE(fs::exists(fs::path(into) / "vtrain" / "correction.prev.json"));
}

TEST_F(RetrainKinds, BadKindsAndMissingFlagsNameThem) {
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string needle;
  };
  const std::string into = dir_.string();
  const Case cases[] = {
      {{"train", "--kind", "nccl", "x.csv", "--into", into},
       2,
       "--kind: expected sacct, vtrain, operators or fm-csv"},
      {{"train", "--kind", "operators", "samples", "--into", into}, 2, "--cluster NAME"},
      {{"train", "--kind", "vtrain", kFm + "data2.csv", "--into", into}, 1, "vTrain header"},
      {{"train", "--kind", "fm-csv", kFm + "data2.csv", "--into", into, "--precision", "fp8"},
       2,
       "--precision"},
      {{"train", "--kind", "fm-csv", kFm + "data2.csv", "--into", into, "--vocab", "-3"},
       2,
       "--vocab"},
      {{"vtrain", "--out", into}, 2, "--data: required"},
  };
  for (const Case& c : cases) {
    const ToolRun r = RunTool(kRetrain, c.args);
    EXPECT_EQ(r.exit_code, c.code) << c.args[2] << ": " << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace fmte::testing
