// Width-dependent GEMM efficiency (learn/gemm_fit.h) against the measured operator samples of
// Perlmutter (A100) and Vista (GH200) in tests/data/gemm (AI4CI estimator data, PROVENANCE.md).
#include "fmte/learn/gemm_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

namespace fmte::learn {
namespace {

std::string Data(const std::string& cluster) {
  return std::string(FMTE_SOURCE_DIR) + "/tests/data/gemm/" + cluster;
}

// Dense 16-bit peaks of the sampled GPUs (etc/gpus.csv: A100-SXM4-80GB 312, GH200 989 TFLOPS).
constexpr double kA100Peak = 312e12;
constexpr double kGh200Peak = 989e12;

TEST(GemmFit, ParsesRowsIntoTheSeedsShapes) {
  // First data row of NVIDIAA100-SXM4-80GB_linear1_fp16.csv: mp 1, b 2, l 1024, dim 5632.
  const char* csv =
      "mp,b,l,dim,F_dur(us),B_dur(us)\n1.0,2.0,1024.0,5632.0,1728.8,3552.4\n2,4,1024,4096,10,20\n";
  auto rows = ParseGemmCsv(csv, "linear1", "x.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].m, 2048);      // b x l tokens
  EXPECT_EQ((*rows)[0].k, 5632);      // hidden
  EXPECT_EQ((*rows)[0].n, 3 * 5632);  // fused QKV
  EXPECT_DOUBLE_EQ((*rows)[0].fwd_s, 1728.8e-6);
  EXPECT_EQ((*rows)[0].width, 5632);
  EXPECT_EQ((*rows)[1].n, 3 * 4096 / 2);  // column-parallel over mp 2
  auto down = ParseGemmCsv(csv, "linear4", "x.csv");
  ASSERT_TRUE(down.ok());
  EXPECT_EQ((*down)[1].k, 4 * 4096 / 2);  // row-parallel MLP down: input split
  EXPECT_EQ((*down)[1].n, 4096);
  // Perlmutter's linear2 file has an mp column of ones; a file without mp means mp 1.
  auto no_mp = ParseGemmCsv("b,l,dim,F_dur(us),B_dur(us)\n2,1024,2048,5,9\n", "linear2", "y.csv");
  ASSERT_TRUE(no_mp.ok());
  EXPECT_EQ((*no_mp)[0].k, 2048);
}

TEST(GemmFit, BadInputNamesLineAndColumn) {
  auto bad = ParseGemmCsv("mp,b,l,dim,F_dur(us),B_dur(us)\n1,2,1024,abc,1,2\n", "linear1", "x.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("x.csv:2"), std::string::npos);
  EXPECT_NE(bad.status().message().find("'dim'"), std::string::npos);
  auto missing = ParseGemmCsv("mp,b,l,F_dur(us),B_dur(us)\n", "linear1", "x.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("'dim'"), std::string::npos);
  EXPECT_FALSE(ParseGemmCsv("b\n", "linear9", "x.csv").ok());
  EXPECT_FALSE(ReadGemmSamples(Data("nowhere")).ok());
}

TEST(GemmFit, HeldOutWidthsArePredictedBetterThanByOneEfficiency) {
  // Leave-one-hidden-size-out over 13 widths (2048..8192). Measured: Perlmutter fwd 5.4%, bwd 5.0%
  // (one constant efficiency: 6.6%, 7.3%); Vista fwd 5.6%, bwd 10.1% (flat 10.5%, 17.8%); fitted
  // on widths <= 6144 and predicting 6656..8192: 5.5/5.1% and 5.1/10.0%. Bounds leave room for
  // numerical noise only; a wrong shape mapping or FLOP count lands far above them.
  struct Case {
    const char* cluster;
    double peak, fwd, bwd, wide_fwd, wide_bwd;
  };
  for (const Case& c : {Case{"Perlmutter", kA100Peak, 0.07, 0.07, 0.07, 0.07},
                        Case{"Vista", kGh200Peak, 0.07, 0.12, 0.07, 0.12}}) {
    auto samples = ReadGemmSamples(Data(c.cluster));
    ASSERT_TRUE(samples.ok()) << samples.status().ToString();
    auto cv = CrossValidateGemmCurve(*samples, c.peak);
    ASSERT_TRUE(cv.ok()) << cv.status().ToString();
    EXPECT_EQ(cv->groups, 13) << c.cluster;
    EXPECT_LT(cv->fwd_mape, c.fwd) << c.cluster;
    EXPECT_LT(cv->bwd_mape, c.bwd) << c.cluster;
    EXPECT_LT(cv->fwd_mape, cv->flat_fwd_mape) << c.cluster;
    EXPECT_LT(cv->bwd_mape, cv->flat_bwd_mape) << c.cluster;
    EXPECT_LT(cv->wide_fwd_mape, c.wide_fwd) << c.cluster;
    EXPECT_LT(cv->wide_bwd_mape, c.wide_bwd) << c.cluster;
  }
}

TEST(GemmFit, ShippedCurvesMatchAFitOfTheProjectData) {
  // regressors/vtrain/gemm.json was written by TrainGemmCurves from tests/data/gemm; a change of
  // the fit or the data without regenerating it fails here.
  auto shipped = LoadGemmCurves(std::string(FMTE_SOURCE_DIR) + "/regressors/vtrain/gemm.json");
  ASSERT_TRUE(shipped.ok()) << shipped.status().ToString();
  const GemmCurveEntry* a100 = FindGemmCurve(*shipped, "A100-SXM4-80GB");
  const GemmCurveEntry* h100 = FindGemmCurve(*shipped, "h100-sxm5-80gb");
  ASSERT_NE(a100, nullptr);
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100, FindGemmCurve(*shipped, "GH200-96GB"));
  EXPECT_EQ(FindGemmCurve(*shipped, "V100-SXM2-32GB"), nullptr);
  auto samples = ReadGemmSamples(Data("Perlmutter"));
  ASSERT_TRUE(samples.ok());
  auto fwd = FitGemmCurve(*samples, false, kA100Peak);
  ASSERT_TRUE(fwd.ok());
  EXPECT_NEAR(fwd->peak_fraction, a100->fwd.peak_fraction, 1e-6);
  EXPECT_NEAR(fwd->n_half, a100->fwd.n_half, 1e-3 * a100->fwd.n_half);
}

TEST(GemmFit, ShippedStepModelReproducesMeasuredWideLinears) {
  // The shipped analytic model's efficiency for a linear, gemm_efficiency x GemmCurve factor
  // (regressors/vtrain/efficiency.json, A100 entry), against the measured forward time of the
  // widest Perlmutter linears (hidden 7680 and 8192, every TP degree). A flat efficiency learned
  // from vTrain's hidden-1024 runs (0.358) is 2x slow on these: this fails with it.
  auto tm = TimeModel::LoadDir(std::string(FMTE_SOURCE_DIR) + "/regressors/vtrain");
  ASSERT_TRUE(tm.ok()) << tm.status().ToString();
  GpuSpec a100;
  a100.name = "A100-SXM4-80GB";
  bool exact = false;
  const TimeEfficiency& e = tm->For(a100, &exact);
  ASSERT_TRUE(exact);
  ASSERT_TRUE(e.gemm_fwd.valid());
  auto samples = ReadGemmSamples(Data("Perlmutter"));
  ASSERT_TRUE(samples.ok());
  double sum = 0;
  int n = 0;
  for (const GemmSample& s : *samples) {
    if (s.width < 7680) continue;
    const double eff = e.gemm_efficiency * e.gemm_fwd.Factor(s.m, s.k, s.n);
    sum += std::fabs(2 * s.m * s.k * s.n / (kA100Peak * eff) - s.fwd_s) / s.fwd_s;
    ++n;
  }
  ASSERT_GT(n, 100);
  EXPECT_LT(sum / n, 0.10);
}

}  // namespace
}  // namespace fmte::learn
