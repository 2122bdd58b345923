// Tests of XgbModel (training through the XGBoost C API), grouped k-fold CV, and the native
// evaluator (fmte/tree_model.h) against XGBoost's own predictions: the reference is libxgboost.
#include "fmte/learn/xgb.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <set>

#include "fmte/tree_model.h"

namespace fmte::learn {
namespace {

// y = 2*x0 + x1^2 - 3*[x2 > 0.5], with some rows missing x1 (NaN).
struct Synthetic {
  DenseMatrix x;
  std::vector<float> y;
  std::vector<int64_t> groups;
};

Synthetic MakeData(int rows, uint64_t seed, bool with_missing) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  Synthetic s;
  s.x = DenseMatrix(rows, 3);
  for (int r = 0; r < rows; ++r) {
    const float a = u(rng), b = u(rng), c = u(rng);
    s.x.at(r, 0) = a;
    s.x.at(r, 1) = (with_missing && r % 7 == 0) ? std::nanf("") : b;
    s.x.at(r, 2) = c;
    s.y.push_back(2 * a + b * b - 3 * (c > 0.5f) + 5);
    s.groups.push_back(r / 10);  // groups of 10 consecutive rows
  }
  return s;
}

TEST(XgbModelTest, NativeEvaluatorMatchesXgboostOnHeldOutRows) {
  struct Case {
    std::string objective;
    int depth;
  };
  for (const Case& c :
       {Case{"reg:squarederror", 6}, Case{"reg:gamma", 4}, Case{"reg:absoluteerror", 3}}) {
    SCOPED_TRACE(c.objective);
    Synthetic train = MakeData(400, 1, true);
    Synthetic test = MakeData(200, 2, true);  // held-out rows, different draws
    XgbParams p;
    p.objective = c.objective;
    p.max_depth = c.depth;
    p.num_rounds = 60;
    Result<XgbModel> m = XgbModel::Train(train.x, train.y, p);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    Result<std::vector<float>> want = m->Predict(test.x);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    Result<std::string> json = m->ToJson();
    ASSERT_TRUE(json.ok());
    Result<TreeModel> native = TreeModel::FromJson(*json);
    ASSERT_TRUE(native.ok()) << native.status().ToString();
    EXPECT_EQ(native->num_features(), 3);
    EXPECT_EQ(native->num_trees(), 60);
    for (int64_t r = 0; r < test.x.rows; ++r) {
      const double got = native->Predict(test.x.Row(r));
      EXPECT_NEAR(got, (*want)[r], 1e-5 * std::max(1.0, std::abs(double((*want)[r]))))
          << "row " << r;
    }
  }
}

TEST(XgbModelTest, SaveAndLoadJsonRoundTrips) {
  Synthetic d = MakeData(200, 3, false);
  XgbParams p;
  p.num_rounds = 20;
  Result<XgbModel> m = XgbModel::Train(d.x, d.y, p);
  ASSERT_TRUE(m.ok());
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("fmte_xgb_test_" + std::to_string(::getpid()) + ".json"))
                               .string();
  ASSERT_TRUE(m->SaveJson(path).ok());
  Result<XgbModel> back = XgbModel::LoadJson(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->num_features(), 3);
  Result<std::vector<float>> a = m->Predict(d.x);
  Result<std::vector<float>> b = back->Predict(d.x);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  Result<TreeModel> native = TreeModel::LoadFile(path);
  ASSERT_TRUE(native.ok());
  std::filesystem::remove(path);
}

TEST(XgbModelTest, BadInputIsAnErrorNamingTheField) {
  Synthetic d = MakeData(50, 4, false);
  XgbParams p;
  std::vector<float> short_labels(d.y.begin(), d.y.end() - 1);
  Result<XgbModel> m = XgbModel::Train(d.x, short_labels, p);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("labels"), std::string::npos);
  std::vector<float> nan_labels = d.y;
  nan_labels[3] = std::nanf("");
  EXPECT_FALSE(XgbModel::Train(d.x, nan_labels, p).ok());
  p.objective = "reg:no-such-objective";
  Result<XgbModel> bad = XgbModel::Train(d.x, d.y, p);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("xgboost"), std::string::npos);  // XGBGetLastError text
  EXPECT_FALSE(XgbModel::FromJson("{not json").ok());
}

TEST(GroupedKFoldTest, GroupsNeverStraddleFoldsAndErrorIsSmallOnSmoothTarget) {
  Synthetic d = MakeData(500, 5, false);
  XgbParams p;
  p.num_rounds = 80;
  CvOptions o;
  o.folds = 5;
  Result<CvResult> cv = GroupedKFold(d.x, d.y, d.groups, p, o);
  ASSERT_TRUE(cv.ok()) << cv.status().ToString();
  ASSERT_EQ(cv->folds.size(), 5u);
  int64_t test_rows = 0, test_groups = 0;
  for (const CvFold& f : cv->folds) {
    test_rows += f.test_rows;
    test_groups += f.test_groups;
    EXPECT_EQ(f.train_rows + f.test_rows, 500);
    EXPECT_EQ(f.test_rows, f.test_groups * 10);  // whole groups of 10 rows held out
  }
  EXPECT_EQ(test_rows, 500);  // each row predicted exactly once
  EXPECT_EQ(test_groups, 50);
  // y ranges over about [2, 8]; a boosted model of this smooth target is within a few percent.
  EXPECT_LT(cv->mean_abs_rel_error, 0.05);
  EXPECT_GT(cv->mean_abs_rel_error, 0.0);
  for (double v : cv->out_of_fold) EXPECT_FALSE(std::isnan(v));
}

TEST(GroupedKFoldTest, ValueTransformIsAppliedToBothSides) {
  // Train on log(y); errors are reported on y = exp(label).
  Synthetic d = MakeData(300, 6, false);
  std::vector<float> logy;
  for (float v : d.y) logy.push_back(std::log(v));
  XgbParams p;
  p.num_rounds = 80;
  CvOptions o;
  o.to_value = [](int64_t, double label) { return std::exp(label); };
  Result<CvResult> cv = GroupedKFold(d.x, logy, d.groups, p, o);
  ASSERT_TRUE(cv.ok());
  for (size_t r = 0; r < d.y.size(); ++r) EXPECT_GT(cv->out_of_fold[r], 1.0);  // exp applied
  EXPECT_LT(cv->mean_abs_rel_error, 0.05);
}

TEST(GroupedKFoldTest, RejectsSingleGroup) {
  Synthetic d = MakeData(30, 7, false);
  std::vector<int64_t> one(30, 0);
  EXPECT_FALSE(GroupedKFold(d.x, d.y, one, XgbParams{}).ok());
}

}  // namespace
}  // namespace fmte::learn
