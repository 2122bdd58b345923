#include "fmte/text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fmte/status.h"

namespace fmte {

namespace {

// Myers' bit-vector algorithm (J. ACM 46(3), 1999) in Hyyrö's form for the global Levenshtein
// distance: one 64-bit step per character of `text` for a pattern of at most 64 characters (every
// catalog name and nearly every query), instead of a row of the table.
size_t BitParallelDistance(std::string_view pattern, std::string_view text, size_t limit) {
  thread_local uint64_t peq[256] = {};  // per byte: where it occurs in the pattern; left all zero
  for (size_t i = 0; i < pattern.size(); ++i) {
    peq[static_cast<unsigned char>(pattern[i])] |= uint64_t{1} << i;
  }
  const uint64_t last = uint64_t{1} << (pattern.size() - 1);
  uint64_t pv = ~uint64_t{0}, mv = 0;
  size_t score = pattern.size();
  for (size_t j = 0; j < text.size(); ++j) {
    const uint64_t eq = peq[static_cast<unsigned char>(text[j])];
    const uint64_t xv = eq | mv;
    const uint64_t xh = (((eq & pv) + pv) ^ pv) | eq;
    uint64_t ph = mv | ~(xh | pv);
    uint64_t mh = pv & xh;
    if ((ph & last) != 0) ++score;
    if ((mh & last) != 0) --score;
    ph = (ph << 1) | 1;  // row 0 of the table grows by one per text character
    mh <<= 1;
    pv = mh | ~(xv | ph);
    mv = ph & xv;
    // Each remaining character can lower the distance by at most one.
    const size_t remaining = text.size() - 1 - j;
    if (score > remaining && score - remaining >= limit) {
      score = limit;
      break;
    }
  }
  for (char c : pattern) peq[static_cast<unsigned char>(c)] = 0;
  return std::min(score, limit);
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b, size_t limit) {
  if (limit == 0) return 0;
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) >= limit) return limit;
  if (a.empty() || b.empty()) return std::min(a.size() + b.size(), limit);
  if (a.size() <= 64) return BitParallelDistance(a, b, limit);
  if (b.size() <= 64) return BitParallelDistance(b, a, limit);
  // Both longer than a word: one row of the table at a time.
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    size_t row_min = row[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
      row_min = std::min(row_min, row[j]);
    }
    // Distances never fall below a row's minimum: once it reaches the limit, so does the result.
    if (row_min >= limit) return limit;
  }
  return std::min(row[b.size()], limit);
}

namespace {
std::string EnvOr(const char* name, const char* fallback) {
  const char* env = std::getenv(name);
  return env != nullptr && *env != '\0' ? env : fallback;
}
}  // namespace

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = LowerAscii(c);
  return out;
}

bool EqualsIgnoreCase(std::string_view text, std::string_view lower) {
  if (text.size() != lower.size()) return false;
  for (size_t i = 0; i < text.size(); ++i)
    if (LowerAscii(text[i]) != lower[i]) return false;
  return true;
}

const char* EnvValue(const char* entry, std::string_view name) {
  // strncmp stops at the entry's end: a shorter entry never matches.
  if (entry == nullptr || std::strncmp(entry, name.data(), name.size()) != 0 ||
      entry[name.size()] != '=')
    return nullptr;
  return entry + name.size() + 1;
}

std::string Shown(std::string_view s, size_t max) {
  std::string out;
  out.reserve(std::min(s.size(), max) + 3);
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
  }
  if (s.size() > max) out += "...";
  return out;
}

Status Expected(std::string_view shown, std::string_view what, std::string_view text) {
  return Status::InvalidArgument(std::string(shown) + ": expected " + std::string(what) +
                                 ", got '" + Shown(text) + "'");
}

Result<int64_t> ParseBoundedInt(std::string_view text, int64_t min, int64_t max,
                                std::string_view shown, bool suffixes) {
  // The error text is built only on failure (this runs for every numeric flag of every script).
  const auto fail = [&] {
    return Expected(shown,
                    "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]" +
                        (suffixes ? " (K/M/B/T suffixes allowed)" : ""),
                    text);
  };
  const std::string_view t = Trim(text);
  if (t.empty()) return fail();
  size_t i = 0;
  int64_t v = 0;
  bool any = false;
  for (; i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])); ++i) {
    any = true;
    const int d = t[i] - '0';
    if (v > (max - d) / 10) return fail();  // also stops overflow
    v = v * 10 + d;
  }
  if (!any) return fail();
  if (i < t.size()) {
    if (!suffixes || i + 1 != t.size()) return fail();
    int64_t mult = 1;
    switch (std::toupper(static_cast<unsigned char>(t[i]))) {
      case 'K':
        mult = 1000;
        break;
      case 'M':
        mult = 1000 * 1000;
        break;
      case 'B':
      case 'G':
        mult = 1000LL * 1000 * 1000;
        break;
      case 'T':
        mult = 1000LL * 1000 * 1000 * 1000;
        break;
      default:
        return fail();
    }
    if (v > max / mult) return fail();
    v *= mult;
  }
  if (v < min || v > max) return fail();
  return v;
}

Result<double> ParseBoundedDouble(std::string_view text, double min, double max,
                                  std::string_view shown) {
  const auto fail = [&] {
    char range[64];
    std::snprintf(range, sizeof range, "a number in [%g, %g]", min, max);
    return Expected(shown, range, text);
  };
  const std::string_view t = Trim(text).substr(0, 64);
  if (t.empty()) return fail();
  for (char c : t)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' ||
          c == '-' || c == '+'))
      return fail();
  // strtod needs a terminated copy; at most 64 bytes, on the stack.
  char buf[65];
  t.copy(buf, t.size());
  buf[t.size()] = '\0';
  char* end = nullptr;
  const double v = std::strtod(buf, &end);
  if (end != buf + t.size() || !std::isfinite(v) || v < min || v > max) return fail();
  return v;
}

Result<bool> ParseBool(std::string_view text, std::string_view shown) {
  const std::string_view t = Trim(text);
  if (t.empty() || EqualsIgnoreCase(t, "true") || EqualsIgnoreCase(t, "yes") || t == "1" ||
      EqualsIgnoreCase(t, "on"))
    return true;
  if (EqualsIgnoreCase(t, "false") || EqualsIgnoreCase(t, "no") || t == "0" ||
      EqualsIgnoreCase(t, "off"))
    return false;
  return Expected(shown, "true|false", text);
}

std::string EtcDir() { return EnvOr("FMTE_ETC_DIR", FMTE_DEFAULT_ETC_DIR); }
std::string RegressorsDir() { return EnvOr("FMTE_REGRESSORS_DIR", FMTE_DEFAULT_REGRESSORS_DIR); }

}  // namespace fmte
