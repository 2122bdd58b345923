#include "fmte/tokens.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace fmte {
namespace {

std::string ReadData(const std::string& name) {
  std::ifstream in(std::string(FMTE_SOURCE_DIR) + "/tests/data/tokens/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string DataPath(const std::string& name) {
  return std::string(FMTE_SOURCE_DIR) + "/tests/data/tokens/" + name;
}

// The oracle: test1.contract.json is what the FM Training Estimator's gen_contract wrote from
// te_test1.jsonl (tests/data/tokens/SOURCES.txt). Our contract must be byte-identical.
TEST(TokenContract, ReproducesTheirContractOfTeTest1Exactly) {
  TokenizeOptions options;
  options.per_field = true;
  auto data = TokenizeFile(DataPath("te_test1.jsonl"), options);
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->sample_tokens.size(), 9u);
  EXPECT_EQ(ContractToJson(MakeContract(*data)), ReadData("test1.contract.json"));
}

// Writing what we read must give their bytes back (Python float repr, key order, separators).
TEST(TokenContract, RoundTripsTheirFilesByteForByte) {
  for (const char* name : {"test1.contract.json", "test_axb.contract.json"}) {
    auto c = ParseContract(ReadData(name));
    ASSERT_TRUE(c.ok()) << name << ": " << c.status().message();
    EXPECT_EQ(ContractToJson(*c), ReadData(name)) << name;
  }
}

TEST(CountTokens, FollowsTheirCharsRuleAndTheBounds) {
  struct Case {
    std::string text;
    TokenCounter counter;
    int64_t want;
  };
  const Case kCases[] = {
      // int(len/3.6) in Python: int(36/3.6) = 10, int(7/3.6) = 1, int(3/3.6) = 0.
      {std::string(36, 'a'), TokenCounter::kChars, 10},
      {"abcdefg", TokenCounter::kChars, 1},
      {"abc", TokenCounter::kChars, 0},
      // len() counts code points: four 2-byte characters are 4, not 8 (int(4/3.6) = 1).
      {"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", TokenCounter::kChars, 1},
      {"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", TokenCounter::kBytes, 8},
      {"  a  b\tc\nd ", TokenCounter::kWords, 4},
      {"", TokenCounter::kWords, 0},
  };
  for (const auto& c : kCases) EXPECT_EQ(CountTokens(c.text, c.counter), c.want) << c.text;
}

TEST(TextTemplate, ParsesDoubleAndSingleBracePlaceholders) {
  auto t = TextTemplate::Parse("### Input: {{input}}\n### Output: {output} {not a field}");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->fields, (std::vector<std::string>{"input", "output"}));
  EXPECT_EQ(t->Literal(), "### Input: \n### Output:  {not a field}");
  EXPECT_FALSE(TextTemplate::Parse("no placeholder").ok());
}

TEST(Tokenize, RendersTheTemplateAndUsesInputIdsWhenPresent) {
  auto t = TextTemplate::Parse("{{a}}-{{b}}");
  ASSERT_TRUE(t.ok());
  TokenizeOptions o;
  o.text_template = *t;
  o.counter = TokenCounter::kBytes;
  // "xyz-12" = 6 bytes; the second sample is counted from its input_ids (3).
  auto d = TokenizeText("{\"a\": \"xyz\", \"b\": 12}\n\n{\"input_ids\": [1, 2, 3]}\n", o);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->sample_tokens, (std::vector<int64_t>{6, 3}));
  EXPECT_EQ(d->exact_samples, 1);
}

TEST(Tokenize, JsonArrayGivesTheSameCountsAsJsonl) {
  TokenizeOptions o;
  auto lines = TokenizeFile(DataPath("te_test1.jsonl"), o);
  ASSERT_TRUE(lines.ok());
  std::stringstream in(ReadData("te_test1.jsonl"));
  std::string array = "[\n", line;
  while (std::getline(in, line)) array += (array.size() > 2 ? ",\n" : "") + line;
  array += "\n]\n";
  auto arr = TokenizeText(array, o);
  ASSERT_TRUE(arr.ok()) << arr.status().message();
  EXPECT_EQ(arr->sample_tokens, lines->sample_tokens);
}

TEST(Tokenize, ErrorsNameTheLine) {
  TokenizeOptions o;
  struct Case {
    const char* text;
    const char* want;
  };
  const Case kCases[] = {
      {"{\"text\": \"a\"}\n{\"text\": \"b\"}\n{\"text\": oops}\n", "d.jsonl:3: malformed JSON"},
      {"{\"text\": \"a\"}\n[1, 2]\n", "d.jsonl:2: expected a JSON object"},
      {"[\n {\"text\": \"a\"},\n 5\n]", "d.jsonl:3: expected a JSON object"},
      {"[\n {\"text\": \"a\"}\n", "missing ']'"},
      {"", "no samples"},
  };
  for (const auto& c : kCases) {
    auto d = TokenizeText(c.text, o, "d.jsonl");
    ASSERT_FALSE(d.ok()) << c.text;
    EXPECT_NE(d.status().message().find(c.want), std::string::npos) << d.status().message();
  }
  auto t = TextTemplate::Parse("{{missing}}");
  o.text_template = *t;
  auto d = TokenizeText("{\"text\": \"a\"}\n", o, "d.jsonl");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("d.jsonl:1: field 'missing'"), std::string::npos);
}

// Derivations written beside each case.
TEST(SimulateBatching, PaddingTruncationAndPacking) {
  const std::vector<int64_t> tokens = {10, 20, 30, 40};
  BatchingOptions o;
  // One batch of 4: padded to 40 whatever the shuffle: 160 processed, 100 real.
  o.batch_size = 4;
  auto r = SimulateBatching(tokens, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->total_tokens, 100);
  EXPECT_DOUBLE_EQ(r->mean_batch_width, 40);
  EXPECT_DOUBLE_EQ(r->padding_fraction, 1 - 100.0 / 160);
  EXPECT_EQ(r->steps_per_epoch, 1);
  // Batch size 1: no padding, the mean width is the mean length.
  o.batch_size = 1;
  r = SimulateBatching(tokens, o);
  EXPECT_DOUBLE_EQ(r->mean_batch_width, 25);
  EXPECT_DOUBLE_EQ(r->padding_fraction, 0);
  EXPECT_EQ(r->steps_per_epoch, 4);
  // Truncation at 25: {10, 20, 25, 25} = 80 tokens, 2 samples cut.
  o.seq_len = 25;
  r = SimulateBatching(tokens, o);
  EXPECT_EQ(r->total_tokens, 80);
  EXPECT_EQ(r->truncated_samples, 2);
  EXPECT_EQ(r->max_sample_tokens, 40);
  // Packing into rows of 32: 100 tokens -> 4 rows (128 slots); batch 2 -> 2 steps; 2.5 epochs
  // -> ceil(5) = 5 steps.
  o.seq_len = 32;
  o.packing = true;
  o.batch_size = 2;
  o.epochs = 2.5;
  r = SimulateBatching(tokens, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->total_tokens, 100);
  EXPECT_DOUBLE_EQ(r->padded_tokens, 128);
  EXPECT_EQ(r->steps_per_epoch, 2);
  EXPECT_EQ(r->steps, 5);
  EXPECT_DOUBLE_EQ(r->tokens_all_epochs, 250);
}

// {1, 2, 3, 4} in random pairs: the pairings {12|34}, {13|24}, {14|23} are equally likely with
// mean widths 3, 3.5, 3.5, so the expected mean width is 10/3.
TEST(SimulateBatching, ShuffledWidthConvergesToTheExpectation) {
  BatchingOptions o;
  o.batch_size = 2;
  o.runs = 4000;
  auto r = SimulateBatching({1, 2, 3, 4}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->mean_batch_width, 10.0 / 3, 0.03);
  o.seed = 7;
  EXPECT_NEAR(SimulateBatching({1, 2, 3, 4}, o)->mean_batch_width, 10.0 / 3, 0.03);
}

// Their test_te2.py asserts TE0's shuffled width is below TE2's sorted-longest width (bs 2).
TEST(SimulateBatching, ShuffledWidthIsBelowTheContractsWorstCase) {
  TokenizeOptions to;
  to.per_field = true;
  auto d = TokenizeFile(DataPath("te_test1.jsonl"), to);
  ASSERT_TRUE(d.ok());
  BatchingOptions o;
  o.batch_size = 2;
  auto te0 = SimulateBatching(d->sample_tokens, o);
  auto te2 = EstimateFromContract(MakeContract(*d), TextTemplate::AllStringFields(),
                                  TokenCounter::kChars, o);
  ASSERT_TRUE(te0.ok() && te2.ok());
  EXPECT_LT(te0->mean_batch_width, te2->mean_batch_width);
  EXPECT_DOUBLE_EQ(te2->mean_batch_width, 88.5);  // bs2 of test1.contract.json
  EXPECT_EQ(te0->total_tokens, 533);              // total of test1.contract.json
}

TEST(EstimateFromContract, UsesTheContractWidthsRegressionAndBaseline) {
  auto c = ParseContract(ReadData("test_axb.contract.json"));
  ASSERT_TRUE(c.ok());
  BatchingOptions o;
  o.batch_size = 4;
  auto one = TextTemplate::Parse("{{sentence1}}");
  auto r = EstimateFromContract(*c, *one, TokenCounter::kChars, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->samples, 1104);
  EXPECT_EQ(r->total_tokens, 29400);
  EXPECT_DOUBLE_EQ(r->mean_batch_width, 48.56884057971015);
  EXPECT_EQ(r->steps_per_epoch, 276);
  // Template constant text "Q:  A: " is 7 characters: int(7/3.6) = 1 token per sample.
  auto two = TextTemplate::Parse("Q: {{sentence1}} A: {{sentence2}}");
  r = EstimateFromContract(*c, *two, TokenCounter::kChars, o);
  EXPECT_DOUBLE_EQ(r->mean_batch_width, 1 + 2 * 48.56884057971015);
  EXPECT_EQ(r->total_tokens, 1104 + 2 * 29400);
  // bs 3 is not in the contract: the regression lands between bs2 and bs4 widths.
  o.batch_size = 3;
  r = EstimateFromContract(*c, *one, TokenCounter::kChars, o);
  EXPECT_GT(r->mean_batch_width, 38.96);
  EXPECT_LT(r->mean_batch_width, 48.57);
  // Far beyond the contract: never wider than the longest sample (82).
  o.batch_size = 512;
  r = EstimateFromContract(*c, *one, TokenCounter::kChars, o);
  EXPECT_LE(r->mean_batch_width, 82);
  auto bad = TextTemplate::Parse("{{question}}");
  r = EstimateFromContract(*c, *bad, TokenCounter::kChars, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'question'"), std::string::npos);
  EXPECT_NE(r.status().message().find("sentence1, sentence2"), std::string::npos);
}

// te_test2.json (older format) by te2.py parse_dataset_config: fields summed.
// mean 500 + 500 + 50 = 1050; bs2 = 3 x 620 = 1860; bs8 = 875 + 875 + 50 = 1800; len 1000.
TEST(ParseContract, ReadsTheOlderPercentileFormat) {
  auto c = ParseContract(ReadData("te_test2.json"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->size(), 1u);
  const FieldContract& f = c->front().second;
  EXPECT_EQ(f.len, 1000);
  EXPECT_DOUBLE_EQ(f.mean, 1050);
  EXPECT_DOUBLE_EQ(f.width_by_batch.at(2), 1860);
  EXPECT_DOUBLE_EQ(f.width_by_batch.at(8), 1800);
  EXPECT_EQ(f.total, 1050000);
  EXPECT_FALSE(ParseContract("{\"text\": {\"len\": 3}}").ok());
  EXPECT_FALSE(ParseContract("[").ok());
  // Found by fuzz_tokens_contract: a total of 2e98 was converted to int64_t (undefined behaviour).
  auto huge = ParseContract(
      R"({"text": {"len": 3, "total": 2e98, "min": 1, "max": 2, "mean": 1.5, "std": 0.5}})");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("'total': expected a count"), std::string::npos)
      << huge.status().message();
}

}  // namespace
}  // namespace fmte
