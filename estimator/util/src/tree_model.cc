// Native evaluation of XGBoost JSON models (format of dmlc/xgboost src/tree/tree_model.cc
// RegTree::SaveModel and src/learner.cc, versions 1.x-2.x).
#include "fmte/tree_model.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fmte/file.h"

namespace fmte {
namespace {

using nlohmann::json;

// Finds a member or says which path is missing.
Result<const json*> Member(const json& obj, const char* key, const std::string& path) {
  if (!obj.is_object()) return Status::ParseError(path + ": expected a JSON object");
  auto it = obj.find(key);
  if (it == obj.end()) return Status::ParseError(path + "." + key + ": missing");
  return &*it;
}

// XGBoost writes most scalar parameters as strings ("5E-1"); accept numbers too.
Result<double> NumberOf(const json& v, const std::string& path) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (end != s.c_str() && *end == '\0') return d;
  }
  return Status::ParseError(path + ": expected a number, got " + v.dump());
}

struct TreeArrays {
  std::vector<int64_t> left, right, feature;
  std::vector<float> cond;
  std::vector<bool> default_left;
};

Status ReadIntArray(const json& tree, const char* key, const std::string& path,
                    std::vector<int64_t>* out) {
  Result<const json*> a = Member(tree, key, path);
  if (!a.ok()) return a.status();
  if (!(*a)->is_array()) return Status::ParseError(path + "." + key + ": expected an array");
  out->clear();
  for (const json& v : **a) {
    if (v.is_boolean()) {
      out->push_back(v.get<bool>() ? 1 : 0);
    } else if (v.is_number_integer()) {
      out->push_back(v.get<int64_t>());
    } else {
      return Status::ParseError(path + "." + key + ": expected integers");
    }
  }
  return Status::Ok();
}

Status ReadTree(const json& tree, const std::string& path, TreeArrays* t) {
  std::vector<int64_t> dl;
  FMTE_RETURN_IF_ERROR(ReadIntArray(tree, "left_children", path, &t->left));
  FMTE_RETURN_IF_ERROR(ReadIntArray(tree, "right_children", path, &t->right));
  FMTE_RETURN_IF_ERROR(ReadIntArray(tree, "split_indices", path, &t->feature));
  FMTE_RETURN_IF_ERROR(ReadIntArray(tree, "default_left", path, &dl));
  Result<const json*> c = Member(tree, "split_conditions", path);
  if (!c.ok()) return c.status();
  if (!(*c)->is_array()) return Status::ParseError(path + ".split_conditions: expected an array");
  t->cond.clear();
  for (const json& v : **c) {
    if (!v.is_number()) return Status::ParseError(path + ".split_conditions: expected numbers");
    t->cond.push_back(v.get<float>());
  }
  const size_t n = t->left.size();
  if (n == 0 || t->right.size() != n || t->feature.size() != n || dl.size() != n ||
      t->cond.size() != n) {
    return Status::ParseError(path + ": node arrays are empty or differ in length");
  }
  t->default_left.assign(dl.begin(), dl.end());
  auto st = tree.find("split_type");
  if (st != tree.end() && st->is_array()) {
    for (const json& v : *st) {
      if (!v.is_number_integer() || v.get<int64_t>() != 0) {
        return Status::Unsupported(path + ": categorical splits are not supported");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Result<TreeModel> TreeModel::FromJson(std::string_view json_text) {
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const std::exception& e) {
    return Status::ParseError(std::string("XGBoost model JSON: ") + e.what());
  }
  TreeModel m;
  Result<const json*> learner = Member(doc, "learner", "$");
  if (!learner.ok()) return learner.status();
  Result<const json*> mp = Member(**learner, "learner_model_param", "$.learner");
  if (!mp.ok()) return mp.status();
  Result<const json*> bs = Member(**mp, "base_score", "$.learner.learner_model_param");
  if (!bs.ok()) return bs.status();
  Result<double> base_score = NumberOf(**bs, "$.learner.learner_model_param.base_score");
  if (!base_score.ok()) return base_score.status();
  Result<const json*> nf = Member(**mp, "num_feature", "$.learner.learner_model_param");
  if (!nf.ok()) return nf.status();
  Result<double> num_feature = NumberOf(**nf, "$.learner.learner_model_param.num_feature");
  if (!num_feature.ok()) return num_feature.status();
  m.num_features_ = static_cast<int64_t>(*num_feature);
  for (const char* key : {"num_class", "num_target"}) {
    auto it = (*mp)->find(key);
    if (it == (*mp)->end()) continue;
    Result<double> v = NumberOf(*it, std::string("$.learner.learner_model_param.") + key);
    if (v.ok() && *v > 1)
      return Status::Unsupported(std::string("multi-output models (") + key + ")");
  }

  Result<const json*> obj = Member(**learner, "objective", "$.learner");
  if (!obj.ok()) return obj.status();
  Result<const json*> obj_name = Member(**obj, "name", "$.learner.objective");
  if (!obj_name.ok()) return obj_name.status();
  if (!(*obj_name)->is_string())
    return Status::ParseError("$.learner.objective.name: expected a string");
  m.objective_ = (*obj_name)->get<std::string>();
  const std::string& o = m.objective_;
  // Inverse links and base-score-to-margin (ObjFunction::ProbToMargin in dmlc/xgboost).
  const float bsf = static_cast<float>(*base_score);
  if (o == "reg:squarederror" || o == "reg:linear" || o == "reg:squaredlogerror" ||
      o == "reg:pseudohubererror" || o == "reg:absoluteerror" || o == "reg:quantileerror") {
    m.link_ = Link::kIdentity;
    m.base_margin_ = bsf;
  } else if (o == "reg:gamma" || o == "reg:tweedie" || o == "count:poisson") {
    m.link_ = Link::kExp;
    m.base_margin_ = std::log(bsf);
  } else if (o == "binary:logistic" || o == "reg:logistic") {
    m.link_ = Link::kSigmoid;
    m.base_margin_ = -std::log(1.0f / bsf - 1.0f);
  } else {
    return Status::Unsupported("objective '" + o + "' is not supported by the native evaluator");
  }

  Result<const json*> gb = Member(**learner, "gradient_booster", "$.learner");
  if (!gb.ok()) return gb.status();
  Result<const json*> gb_name = Member(**gb, "name", "$.learner.gradient_booster");
  if (!gb_name.ok()) return gb_name.status();
  if (**gb_name != "gbtree") {
    return Status::Unsupported("booster " + (*gb_name)->dump() + " (only gbtree is supported)");
  }
  Result<const json*> model = Member(**gb, "model", "$.learner.gradient_booster");
  if (!model.ok()) return model.status();
  Result<const json*> trees = Member(**model, "trees", "$.learner.gradient_booster.model");
  if (!trees.ok()) return trees.status();
  if (!(*trees)->is_array()) return Status::ParseError("$...model.trees: expected an array");

  TreeArrays t;
  for (size_t i = 0; i < (*trees)->size(); ++i) {
    const std::string path = "$.learner.gradient_booster.model.trees[" + std::to_string(i) + "]";
    FMTE_RETURN_IF_ERROR(ReadTree((**trees)[i], path, &t));
    const int64_t n = static_cast<int64_t>(t.left.size());
    const int64_t offset = static_cast<int64_t>(m.nodes_.size());
    if (offset + n > std::numeric_limits<int32_t>::max())
      return Status::Unsupported("model too large");
    m.roots_.push_back(static_cast<int32_t>(offset));
    for (int64_t j = 0; j < n; ++j) {
      Node node;
      node.value = t.cond[j];
      const bool leaf = t.left[j] == -1;
      if (!leaf) {
        if (t.left[j] <= j || t.left[j] >= n || t.right[j] <= j || t.right[j] >= n) {
          return Status::ParseError(path + ": node " + std::to_string(j) +
                                    " has children out of range");
        }
        if (t.feature[j] < 0 || t.feature[j] >= m.num_features_) {
          return Status::ParseError(path + ": node " + std::to_string(j) + " splits on feature " +
                                    std::to_string(t.feature[j]) + " of " +
                                    std::to_string(m.num_features_));
        }
        node.left = static_cast<int32_t>(offset + t.left[j]);
        node.right = static_cast<int32_t>(offset + t.right[j]);
        node.feature =
            static_cast<uint32_t>(t.feature[j]) | (t.default_left[j] ? kDefaultLeftBit : 0u);
      }
      m.nodes_.push_back(node);
    }
  }
  return m;
}

Result<TreeModel> TreeModel::LoadFile(const std::string& path) {
  Result<std::string> text = ReadFile(path, "the regressor");
  if (!text.ok()) return text.status();
  Result<TreeModel> m = FromJson(*text);
  if (!m.ok()) return m.status().WithContext(path);
  return m;
}

float TreeModel::PredictMargin(std::span<const float> row) const {
  if (static_cast<int64_t>(row.size()) < num_features_) return std::nanf("");
  const Node* nodes = nodes_.data();
  // A row without missing values (the step-time features always have them all) takes the
  // comparison at every node without testing for a missing value first: the same path through each
  // tree, fewer instructions per node (a decision walks ~1,500 nodes).
  bool missing = false;
  for (const float v : row) missing = missing || std::isnan(v);
  float sum = base_margin_;
  for (int32_t root : roots_) {
    const Node* n = nodes + root;
    if (!missing) {
      while (n->left >= 0)
        n = nodes + (row[n->feature & ~kDefaultLeftBit] < n->value ? n->left : n->right);
    } else {
      while (n->left >= 0) {
        const float v = row[n->feature & ~kDefaultLeftBit];
        bool go_left;
        if (std::isnan(v)) {
          go_left = (n->feature & kDefaultLeftBit) != 0;
        } else {
          go_left = v < n->value;
        }
        n = nodes + (go_left ? n->left : n->right);
      }
    }
    sum += n->value;
  }
  return sum;
}

double TreeModel::Predict(std::span<const float> row) const {
  const float margin = PredictMargin(row);
  switch (link_) {
    case Link::kExp:
      return std::exp(margin);
    case Link::kSigmoid:
      return 1.0f / (1.0f + std::exp(-margin));
    case Link::kIdentity:
      break;
  }
  return margin;
}

}  // namespace fmte
