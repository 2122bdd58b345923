// vTrain importer and the learned step-time model, validated on held-out configurations.
#include "fmte/learn/vtrain.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "../test_gpus.h"

namespace fmte::learn {
namespace {

std::string ReadData() {
  std::ifstream in(std::string(FMTE_SOURCE_DIR) + "/tests/data/vtrain/ground_truth_single.csv");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Vtrain, ParsesThePublishedCsv) {
  auto rows = ParseVtrainCsv(ReadData(), "ground_truth_single.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 720u);  // the hidden-size-1024 half of vTrain's 1,440 rows
  // First data row: 2,16,8,1024,16,24,1024,1,1,2,372.160408
  const VtrainRow& r = rows->front();
  EXPECT_EQ(r.gpus, 2);
  EXPECT_EQ(r.pp, 2);
  EXPECT_NEAR(r.iteration_s, 0.372160408, 1e-12);
  EXPECT_EQ(VtrainGroups(*rows, VtrainGrouping::kConfig).size(), 720u);
  // Megatron pads 50257 to a multiple of 128 x tp.
  VtrainRow tp8 = r;
  tp8.tp = 8;
  EXPECT_EQ(VtrainGptArch(r).vocab_size, 50304);
  EXPECT_EQ(VtrainGptArch(tp8).vocab_size, 51200);
}

TEST(Vtrain, BadRowsNameLineAndColumn) {
  const std::string header =
      "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,tensor "
      "parallelism,data parallelism,pipeline parallelism,iteration time (ms)\n";
  struct Case {
    std::string text, needle;
  };
  const Case cases[] = {
      {header + "2,16,8,1024,16,24,1024,1,1,2,abc\n", ":2: column 'iteration time (ms)'"},
      {header + "2,16,x,1024,16,24,1024,1,1,2,3\n", "column 'micro batch'"},
      {header + "8,16,8,1024,16,24,1024,1,1,2,3\n", "is not the GPU count"},
      {"a,b\n", "header"},
      {header, "no data rows"}};
  for (const Case& c : cases) {
    auto r = ParseVtrainCsv(c.text, "f.csv");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(c.needle), std::string::npos) << r.status().message();
  }
}

TEST(Vtrain, HeldOutConfigurationErrorsBeatThePublishedSimulator) {
  // Grouped k-fold over (layers, tp, pp, dp): every fold refits the constants and the correction
  // without its configurations. Measured with 6 folds: analytic 6.3%, corrected 1.9% mean absolute
  // error (regressors/vtrain/manifest.json). Bounds: the analytic model must stay under 10% and the
  // corrected one under 4%, both below vTrain's published 8.37% single-node error (its own
  // simulator); a broken FLOP count, schedule or feature set lands far above them.
  auto rows = ParseVtrainCsv(ReadData(), "csv");
  ASSERT_TRUE(rows.ok());
  VtrainTrainOptions opt;
  opt.folds = 4;
  opt.xgb_rounds = 120;
  auto cv = CrossValidateVtrain(*rows, testing::A100Sxm80(), opt);
  ASSERT_TRUE(cv.ok()) << cv.status().ToString();
  EXPECT_EQ(cv->groups, 72);
  EXPECT_LT(cv->analytic_mape, 0.10);
  EXPECT_LT(cv->corrected_mape, 0.04);
  EXPECT_LT(cv->corrected_mape, cv->analytic_mape);
  EXPECT_EQ(cv->heldout_log_residuals.size(), 720u);
}

TEST(Vtrain, ShippedModelMatchesTheCode) {
  // regressors/vtrain was trained by `fmte-retrain vtrain` on these rows; if the step-time code
  // changes without retraining, its predictions drift and this fails.
  auto tm = TimeModel::LoadDir(std::string(FMTE_SOURCE_DIR) + "/regressors/vtrain");
  ASSERT_TRUE(tm.ok()) << tm.status().ToString();
  ASSERT_NE(tm->correction(), nullptr);
  auto rows = ParseVtrainCsv(ReadData(), "csv");
  ASSERT_TRUE(rows.ok());
  double sum = 0;
  for (const VtrainRow& r : *rows) {
    auto est = EstimateStepTime(VtrainGptArch(r), VtrainJob(r, "A100-SXM4-80GB"),
                                testing::A100Sxm80(), VtrainCluster(), *tm);
    ASSERT_TRUE(est.ok());
    sum += std::fabs(est->step_time_s - r.iteration_s) / r.iteration_s;
  }
  EXPECT_LT(sum / 720, 0.03);  // in-sample
  EXPECT_GT(tm->UpperFactor(0.95), 1.0);
}

}  // namespace
}  // namespace fmte::learn
