// Text helpers of every component (case, trimming, bounded number parsing with errors that name
// the field, did-you-mean distance) and the install paths.
// Thread-safety: pure functions (the path helpers read the environment).
#ifndef FMTE_TEXT_H_
#define FMTE_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fmte/status.h"

namespace fmte {

// ASCII lower case (no locale calls).
constexpr char LowerAscii(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
// Whether `text` equals the lower-case `lower` ignoring ASCII case, without copying the text.
bool EqualsIgnoreCase(std::string_view text, std::string_view lower);
// `s` in ASCII lower case.
std::string Lower(std::string_view s);
// The factor a binary size suffix stands for: 1024^(k+1) for the k-th character of `suffixes`
// (with "KMGTP": K = 1024, M = 1024^2, ...), 0 for any other character (compared as given).
constexpr double BinarySuffixFactor(char c, std::string_view suffixes = "KMGTP") {
  double factor = 1024;
  for (char s : suffixes) {
    if (s == c) return factor;
    factor *= 1024;
  }
  return 0;
}
// std::isspace in the "C" locale (fmte never sets another).
constexpr bool IsCSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
// `s` without leading and trailing C-locale white space.
constexpr std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsCSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsCSpace(s.back())) s.remove_suffix(1);
  return s;
}
// Printable, bounded copy of user text for messages (control bytes as '?', at most `max` bytes,
// "..." when cut).
std::string Shown(std::string_view s, size_t max = 64);

// The value of an environment entry "NAME=value" named `name`, or nullptr for another entry (or
// none). The one matcher of the forwarded values: SpankValuesFromEnv and job_submit's reading of a
// job's environment (slurm_plugin/job_desc_adapter.cc).
const char* EnvValue(const char* entry, std::string_view name);

// The one error style for a bad value: "<shown>: expected <what>, got '<text>'" (text Shown).
Status Expected(std::string_view shown, std::string_view what, std::string_view text);

// Decimal integer in [min, max]; with `suffixes`, K/M/B/T multiply by 1e3..1e12 (G as B). No
// overflow: digits beyond max are an error. Error: "<shown>: expected an integer in [min, max], got
// '<text>'".
Result<int64_t> ParseBoundedInt(std::string_view text, int64_t min, int64_t max,
                                std::string_view shown, bool suffixes = false);
// Decimal number in [min, max]. Error: "<shown>: expected a number in [min, max], got '<text>'".
Result<double> ParseBoundedDouble(std::string_view text, double min, double max,
                                  std::string_view shown);
// true/false, yes/no, 1/0, on/off (any case); empty text is true (a bare flag).
Result<bool> ParseBool(std::string_view text, std::string_view shown);

// Levenshtein distance, for "did you mean" suggestions. With a limit, stops as soon as the distance
// is known to be at least `limit` and returns `limit` then (cost: rows until then, not |a|*|b|).
size_t EditDistance(std::string_view a, std::string_view b, size_t limit = SIZE_MAX);

// "Did you mean": the candidate offered with the smallest EditDistance to the query, if it is
// below `below` (ties: the first offered).
class NearestName {
 public:
  NearestName(std::string_view query, size_t below) : query_(query), best_distance_(below) {}
  void Offer(std::string_view candidate) {
    const size_t d = EditDistance(query_, candidate, best_distance_);
    if (d < best_distance_) best_distance_ = d, best_ = candidate;
  }
  // The nearest candidate, or "" when none was near enough.
  const std::string& best() const { return best_; }

 private:
  std::string query_;
  size_t best_distance_;
  std::string best_;
};

// Where catalogs and configs are read from: $FMTE_ETC_DIR when set, else the compiled-in
// FMTE_ETC_DIR (CMake cache variable).
std::string EtcDir();
// Where the shipped regressors are read from: $FMTE_REGRESSORS_DIR when set, else the compiled-in
// FMTE_REGRESSORS_DIR.
std::string RegressorsDir();

}  // namespace fmte

#endif  // FMTE_TEXT_H_
