// fmte::learn — XGBoost training and the importers of learning data.
#ifndef FMTE_LEARN_VERSION_H_
#define FMTE_LEARN_VERSION_H_
namespace fmte::learn {
const char* XgboostVersion();  // "major.minor.patch" of the linked libxgboost
}  // namespace fmte::learn
#endif  // FMTE_LEARN_VERSION_H_
