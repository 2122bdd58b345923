#include "fmte/learn/version.h"

#include <xgboost/c_api.h>

#include <string>

namespace fmte::learn {
const char* XgboostVersion() {
  static const std::string v = [] {
    int major = 0, minor = 0, patch = 0;
    XGBoostVersion(&major, &minor, &patch);
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  }();
  return v.c_str();
}
}  // namespace fmte::learn
