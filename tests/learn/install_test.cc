// Atomic install: temp files in the same directory, previous model kept, manifest merged (other
// kinds' entries survive), stale temps of a killed install removed, directory mtime changes (what
// the plugin watches).
#include "fmte/learn/install.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace fmte::learn {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class InstallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            ("fmte_install_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<std::string> Names() const {
    std::vector<std::string> n;
    for (const auto& e : fs::directory_iterator(dir_)) n.push_back(e.path().filename().string());
    std::sort(n.begin(), n.end());
    return n;
  }
  std::string dir_;
};

TEST_F(InstallTest, KeepsPreviousAndMergesManifest) {
  fs::create_directories(dir_);
  // Another kind's manifest already there (the operators' format: cluster + regressors[key,
  // model]).
  std::ofstream(dir_ + "/manifest.json")
      << R"({"cluster":"lab","regressors":[{"key":"matmul_fwd","model":"m.json"}]})";
  ASSERT_TRUE(InstallModels(dir_,
                            {{"sacct_time_correction", "sacct_time_correction.json", "{\"v\":1}",
                              "{\"rows\":3}"}},
                            R"({"retrain":{"rows":3}})")
                  .ok());
  ASSERT_TRUE(
      InstallModels(dir_,
                    {{"sacct_time_correction", "sacct_time_correction.json", "{\"v\":2}", "{}"}},
                    R"({"retrain":{"rows":4}})")
          .ok());
  EXPECT_EQ(Slurp(dir_ + "/sacct_time_correction.json"), "{\"v\":2}");
  EXPECT_EQ(Slurp(dir_ + "/sacct_time_correction.prev.json"), "{\"v\":1}");
  const nlohmann::json m = nlohmann::json::parse(Slurp(dir_ + "/manifest.json"));
  EXPECT_EQ(m["cluster"], "lab");
  EXPECT_EQ(m["retrain"]["rows"], 4);
  ASSERT_EQ(m["regressors"].size(), 2u);
  EXPECT_EQ(m["regressors"][0]["key"], "matmul_fwd");
  EXPECT_EQ(m["regressors"][1]["key"], "sacct_time_correction");
  EXPECT_EQ(m["regressors"][1]["model"], "sacct_time_correction.json");
  // Nothing temporary left behind.
  EXPECT_EQ(Names(), (std::vector<std::string>{"manifest.json", "sacct_time_correction.json",
                                               "sacct_time_correction.prev.json"}));
}

TEST_F(InstallTest, KilledInstallLeavesOldModelAndOnlyATempFile) {
  ASSERT_TRUE(InstallModels(dir_, {{"k", "k.json", "old", "{}"}}, "{}").ok());
  // What a kill between write and rename leaves: a temp file; the model itself is untouched.
  std::ofstream(dir_ + "/.fmte-install-k.json.999.tmp") << "half-writ";
  EXPECT_EQ(Slurp(dir_ + "/k.json"), "old");
  ASSERT_TRUE(InstallModels(dir_, {{"k", "k.json", "new", "{}"}}, "{}").ok());
  EXPECT_EQ(Slurp(dir_ + "/k.json"), "new");
  EXPECT_FALSE(fs::exists(dir_ + "/.fmte-install-k.json.999.tmp"));
}

TEST_F(InstallTest, DirectoryMtimeChanges) {
  ASSERT_TRUE(InstallModels(dir_, {{"k", "k.json", "a", "{}"}}, "{}").ok());
  struct stat before {};
  ASSERT_EQ(::stat(dir_.c_str(), &before), 0);
  ::usleep(20000);
  ASSERT_TRUE(InstallModels(dir_, {{"k", "k.json", "b", "{}"}}, "{}").ok());
  struct stat after {};
  ASSERT_EQ(::stat(dir_.c_str(), &after), 0);
  EXPECT_TRUE(after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
              after.st_mtim.tv_nsec != before.st_mtim.tv_nsec);
}

TEST_F(InstallTest, BrokenManifestIsAnErrorNotOverwritten) {
  fs::create_directories(dir_);
  std::ofstream(dir_ + "/manifest.json") << "[1,2";
  const Status s = InstallModels(dir_, {{"k", "k.json", "a", "{}"}}, "{}");
  EXPECT_EQ(s.code(), Status::Code::kParseError);
  EXPECT_EQ(Slurp(dir_ + "/manifest.json"), "[1,2");
}

}  // namespace
}  // namespace fmte::learn
