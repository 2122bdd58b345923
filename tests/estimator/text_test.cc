// EditDistance: the "did you mean" distance behind every unknown-name message, also paid by
// slurmctld for each submission naming a model outside the catalog (bench/model_lookup_bench.cc).
#include "fmte/text.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace fmte {
namespace {

// The textbook full table (Wagner & Fischer, J. ACM 21(1), 1974), as the reference.
size_t TableDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
  }
  return d[a.size()][b.size()];
}

TEST(EditDistanceTest, TextbookPairs) {
  // Classic examples with their published distances (kitten/sitting: Levenshtein's usual
  // illustration; intention/execution: Jurafsky & Martin, Speech and Language Processing, 2.5).
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("sitting", "kitten"), 3u);
  EXPECT_EQ(EditDistance("intention", "execution"), 5u);
  EXPECT_EQ(EditDistance("flaw", "lawn"), 2u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("llama-2-7b", "llama-2-7b"), 0u);
}

TEST(EditDistanceTest, LimitStopsEarlyButNeverUnderstates) {
  EXPECT_EQ(EditDistance("kitten", "sitting", 10), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting", 3), 3u);  // at the limit: the limit
  EXPECT_EQ(EditDistance("kitten", "sitting", 2), 2u);
  EXPECT_EQ(EditDistance("kitten", "sitting", 0), 0u);
  EXPECT_EQ(EditDistance("a", std::string(500, 'b'), 17), 17u);  // lengths alone decide
}

TEST(EditDistanceTest, MatchesTheFullTableOnEveryLengthAndLimit) {
  // Random names over a small alphabet (many matches), across the one-word boundary (64
  // characters) on either side and beyond it on both.
  std::mt19937 rng(7);
  const std::string alphabet = "ab-7lm";
  auto random_text = [&](size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += alphabet[rng() % alphabet.size()];
    return s;
  };
  const std::vector<size_t> lengths = {1, 2, 5, 12, 31, 63, 64, 65, 90, 130};
  for (size_t la : lengths) {
    for (size_t lb : lengths) {
      for (int trial = 0; trial < 4; ++trial) {
        const std::string a = random_text(la), b = random_text(lb);
        const size_t exact = TableDistance(a, b);
        ASSERT_EQ(EditDistance(a, b), exact) << a << " / " << b;
        for (size_t limit : {size_t{1}, exact / 2, exact, exact + 1, exact + 20}) {
          ASSERT_EQ(EditDistance(a, b, limit), std::min(exact, limit))
              << a << " / " << b << " limit " << limit;
        }
      }
    }
  }
}

TEST(EnvValueTest, MatchesTheWholeName) {
  EXPECT_STREQ(EnvValue("FMTE_READ={\"a\":1}", "FMTE_READ"), "{\"a\":1}");
  EXPECT_STREQ(EnvValue("FMTE_READ=", "FMTE_READ"), "");      // an empty value is a value
  EXPECT_EQ(EnvValue("FMTE_READX=1", "FMTE_READ"), nullptr);  // another name that starts alike
  EXPECT_EQ(EnvValue("FMTE_READ", "FMTE_READ"), nullptr);     // no value
  EXPECT_EQ(EnvValue("FMTE_REA", "FMTE_READ"), nullptr);      // shorter than the name
  EXPECT_EQ(EnvValue("X=FMTE_READ=1", "FMTE_READ"), nullptr);
  EXPECT_EQ(EnvValue(nullptr, "FMTE_READ"), nullptr);
}

}  // namespace
}  // namespace fmte
