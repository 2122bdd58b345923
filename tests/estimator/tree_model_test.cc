// Tests of the native XGBoost JSON evaluator on a hand-written model whose predictions are derived
// below by following XGBoost's rules (cpu_predictor.cc: left when value < condition, NaN follows
// default_left; margin = base_score + leaves for reg:squarederror, exp(margin) for reg:gamma).
// Agreement with libxgboost itself on trained models is tested in tests/learn/xgb_test.cc.
#include "fmte/tree_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace fmte {
namespace {

// Tree 0: node0 splits f0 < 1.5 (missing goes left): left = node1 leaf 0.25, right = node2;
//         node2 splits f1 < 10 (missing goes right): left = node3 leaf -1.0, right = node4
//         leaf 2.0.
// Tree 1: a single leaf 0.125.
std::string Model(const std::string& objective, const std::string& base_score,
                  const std::string& booster = "gbtree", const std::string& extra_tree_key = "") {
  return R"({"learner":{"learner_model_param":{"base_score":")" + base_score +
         R"(","num_feature":"2","num_class":"0"},"objective":{"name":")" + objective +
         R"("},"gradient_booster":{"name":")" + booster + R"(","model":{"trees":[)" +
         R"({"left_children":[1,-1,3,-1,-1],"right_children":[2,-1,4,-1,-1],)" +
         R"("split_indices":[0,0,1,0,0],"default_left":[1,0,0,0,0],)" +
         R"("split_conditions":[1.5,0.25,10.0,-1.0,2.0])" + extra_tree_key + "}," +
         R"({"left_children":[-1],"right_children":[-1],"split_indices":[0],"default_left":[0],)" +
         R"("split_conditions":[0.125]}]}}}})";
}

TEST(TreeModelTest, FollowsXgboostSplitRules) {
  Result<TreeModel> m = TreeModel::FromJson(Model("reg:squarederror", "5E-1"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->num_trees(), 2);
  EXPECT_EQ(m->num_features(), 2);
  const float nan = std::nanf("");
  struct Case {
    float f0, f1;
    double want;  // 0.5 + tree0 + 0.125
  } cases[] = {
      {1.0f, 0.0f, 0.875},   // left leaf 0.25
      {nan, 50.0f, 0.875},   // missing f0 -> default left
      {2.0f, 5.0f, -0.375},  // right, 5 < 10 -> -1
      {2.0f, 10.0f, 2.625},  // 10 is not < 10 -> right leaf 2
      {1.5f, 0.0f, -0.375},  // 1.5 is not < 1.5 -> right subtree, 0 < 10
      {2.0f, nan, 2.625},    // missing f1 -> default right
  };
  for (const Case& c : cases) {
    const float row[2] = {c.f0, c.f1};
    EXPECT_DOUBLE_EQ(m->Predict(row), c.want) << c.f0 << "," << c.f1;
  }
}

TEST(TreeModelTest, GammaAppliesLogLinkToBaseScoreAndExpToOutput) {
  Result<TreeModel> m = TreeModel::FromJson(Model("reg:gamma", "2"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const float row[2] = {1.0f, 0.0f};
  EXPECT_NEAR(m->Predict(row), std::exp(std::log(2.0) + 0.375), 1e-6);
}

TEST(TreeModelTest, ShortRowGivesNanNotACrash) {
  Result<TreeModel> m = TreeModel::FromJson(Model("reg:squarederror", "0"));
  ASSERT_TRUE(m.ok());
  const float row[1] = {1.0f};
  EXPECT_TRUE(std::isnan(m->Predict(std::span<const float>(row, 1))));
}

TEST(TreeModelTest, RefusesWhatItCannotEvaluate) {
  struct Case {
    std::string json;
    Status::Code code;
    std::string says;
  } cases[] = {
      {"{", Status::Code::kParseError, "JSON"},
      {R"({"learner":{}})", Status::Code::kParseError, "learner_model_param"},
      {Model("multi:softprob", "0.5"), Status::Code::kUnsupported, "multi:softprob"},
      {Model("reg:squarederror", "0.5", "dart"), Status::Code::kUnsupported, "dart"},
      {Model("reg:squarederror", "0.5", "gbtree", R"(,"split_type":[1,0,0,0,0])"),
       Status::Code::kUnsupported, "categorical"},
      {Model("reg:squarederror", "abc"), Status::Code::kParseError, "base_score"},
  };
  for (const Case& c : cases) {
    Result<TreeModel> m = TreeModel::FromJson(c.json);
    ASSERT_FALSE(m.ok()) << c.json;
    EXPECT_EQ(m.status().code(), c.code) << m.status().ToString();
    EXPECT_NE(m.status().message().find(c.says), std::string::npos) << m.status().ToString();
  }
  // A child index pointing outside the tree.
  std::string bad = Model("reg:squarederror", "0.5");
  bad.replace(bad.find("[1,-1,3,-1,-1]"), 14, "[1,-1,9,-1,-1]");
  Result<TreeModel> m = TreeModel::FromJson(bad);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("out of range"), std::string::npos);
  EXPECT_EQ(TreeModel::LoadFile("/nonexistent/model.json").status().code(), Status::Code::kIoError);
}

}  // namespace
}  // namespace fmte
