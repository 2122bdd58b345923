// Small text and path helpers shared by the catalogs and the tools.
// Thread-safety: pure functions (the path helpers read the environment).
#ifndef FMTE_TEXT_H_
#define FMTE_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace fmte {

// Levenshtein distance, for "did you mean" suggestions.
size_t EditDistance(std::string_view a, std::string_view b);

// Where catalogs and configs are read from: $FMTE_ETC_DIR when set, else the compiled-in
// FMTE_ETC_DIR (CMake cache variable).
std::string EtcDir();
// Where the shipped regressors are read from: $FMTE_REGRESSORS_DIR when set, else the compiled-in
// FMTE_REGRESSORS_DIR.
std::string RegressorsDir();

}  // namespace fmte

#endif  // FMTE_TEXT_H_
