// The report's under-prediction curve on a hand-made outcome (counts derived in the comments) and
// the figures' shape.
#include "fmte/learn/report.h"

#include <gtest/gtest.h>

namespace fmte::learn {
namespace {

TargetOutcome Outcome() {
  TargetOutcome t;
  t.key = "sacct_time_correction";
  t.what = "time";
  t.trained = true;
  t.actual = {100, 200};
  t.predicted_oof = {100, 100};
  t.plugin = {50, 250};
  t.censored_lower = {300};
  t.censored_predicted = {100};
  return t;
}

TEST(ReportTest, UnderPredictionCountsCensoredRunsByTheirLowerBound) {
  const UnderPredictionCurve c = UnderPrediction(Outcome());
  ASSERT_EQ(c.factors.size(), 21u);
  // f=1.0: 200>100 and 300>100 -> 2 of 3; f=2.0: only 300>200 -> 1 of 3; f=3.0: none.
  EXPECT_NEAR(c.new_model[0], 2.0 / 3, 1e-12);
  EXPECT_NEAR(c.new_model[10], 1.0 / 3, 1e-12);
  EXPECT_NEAR(c.new_model[20], 0.0, 1e-12);
  // Plugin (exact runs only): f=1.0: 100>50 -> 1 of 2; f=2.0: 100>100 no -> 0.
  EXPECT_NEAR(c.plugin[0], 0.5, 1e-12);
  EXPECT_NEAR(c.plugin[10], 0.0, 1e-12);
}

TEST(ReportTest, FiguresAreSvgDocuments) {
  for (const std::string& svg : {SvgPredictedVsActual(Outcome()), SvgUnderPrediction(Outcome())}) {
    EXPECT_EQ(svg.rfind("<svg", 0), 0u);
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
    EXPECT_EQ(svg.find("nan"), std::string::npos);
  }
  EXPECT_NE(SvgPredictedVsActual(Outcome()).find("<circle"), std::string::npos);
  EXPECT_NE(SvgUnderPrediction(Outcome()).find("<polyline"), std::string::npos);
}

}  // namespace
}  // namespace fmte::learn
