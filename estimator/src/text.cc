#include "fmte/text.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace fmte {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

namespace {
std::string EnvOr(const char* name, const char* fallback) {
  const char* env = std::getenv(name);
  return env != nullptr && *env != '\0' ? env : fallback;
}
}  // namespace

std::string EtcDir() { return EnvOr("FMTE_ETC_DIR", FMTE_DEFAULT_ETC_DIR); }
std::string RegressorsDir() { return EnvOr("FMTE_REGRESSORS_DIR", FMTE_DEFAULT_REGRESSORS_DIR); }

}  // namespace fmte
