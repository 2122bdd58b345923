// Tokens of a training dataset, after the FM Training Estimator's token estimators
// (github.com/foundation-model-stack/fm-training-estimator, fm_training_estimator/tokens):
//   TE0: read the dataset, count tokens per sample, simulate batching (shuffle, batches of b,
//        each padded to its longest sample; or packing into rows of seq_len) -> total tokens,
//        mean padded batch width, padding, steps.
//   TE2: a small "contract" of per-field statistics computed once from the dataset, from which
//        widths and totals are estimated without the data.
// Token counts: chars/3.6 truncated (as TE0/TE2 do), or exact when a sample carries `input_ids`,
// or the whitespace-word / UTF-8-byte bounds. Formulas: docs/formulas.md §6.
// Thread-safety: value types and pure functions; reading a file touches only that file.
#ifndef FMTE_TOKENS_H_
#define FMTE_TOKENS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fmte/status.h"

namespace fmte {

// How text becomes a token count.
enum class TokenCounter {
  kChars,  // int(code points / 3.6): the FM Training Estimator's rule (te0.py, te2.py)
  kWords,  // whitespace-separated words: a lower bound for subword tokenizers
  kBytes,  // UTF-8 bytes: the upper bound of a byte-level tokenizer without merges
};
Result<TokenCounter> ParseTokenCounter(std::string_view s, std::string_view field = "--counter");
std::string_view ToString(TokenCounter c);
int64_t CountTokens(std::string_view utf8_text, TokenCounter counter);

// A text template over a sample's fields: "### Input: {{input}}\n### Output: {{output}}".
// Placeholders are {{name}} or, as in the FM Training Estimator's dataset_text_field (Python
// str.format), {name}; name is letters, digits, '_', '-' or '.'. Other text is literal.
struct TextTemplate {
  std::vector<std::string> literals;  // literals.size() == fields.size() + 1
  std::vector<std::string> fields;
  bool all_string_fields = false;  // the default: every string field, joined by "\n"

  static Result<TextTemplate> Parse(std::string_view text);
  static TextTemplate AllStringFields();
  std::string Literal() const;  // the template's constant text (all literals)
};

struct TokenizeOptions {
  TextTemplate text_template = TextTemplate::AllStringFields();
  TokenCounter counter = TokenCounter::kChars;
  bool per_field = false;  // also count each string field alone (for a TE2 contract)
};

// Token counts of a dataset, one entry per sample (the text itself is not kept).
struct TokenizedDataset {
  std::vector<int64_t> sample_tokens;  // rendered template, or len(input_ids) when present
  int64_t exact_samples = 0;           // samples counted from their input_ids
  // per_field: the string fields in first-seen order and their counts per sample (0 when a
  // sample lacks the field).
  std::vector<std::string> fields;
  std::vector<std::vector<int64_t>> field_tokens;
};

// Reads JSONL (one object per line) or a JSON array of objects (the first non-blank character
// is '['), streaming: memory is the counts plus one sample. Errors carry "<path>:<line>: ...".
Result<TokenizedDataset> TokenizeFile(const std::string& path, const TokenizeOptions& options);
// The same over text in memory (tests, stdin).
Result<TokenizedDataset> TokenizeText(std::string_view text, const TokenizeOptions& options,
                                      std::string_view name = "<data>");

// Batching simulation (TE0).
struct BatchingOptions {
  int64_t batch_size = 1;
  int64_t seq_len = 0;   // truncation length (padding mode); row length (packing); 0 = none
  bool packing = false;  // REQUIRES seq_len > 0
  double epochs = 1;
  uint64_t seed = 42;  // te0.py's SEED
  int64_t runs = 5;    // shuffles averaged for the mean width (te0.py's RUNS)
};

struct BatchingResult {
  int64_t samples = 0;
  int64_t total_tokens = 0;       // real tokens per epoch (after truncation)
  int64_t truncated_samples = 0;  // samples longer than seq_len (padding mode)
  int64_t max_sample_tokens = 0;  // before truncation
  double mean_batch_width = 0;    // mean over batches of the padded width (tokens per row)
  double padded_tokens = 0;       // tokens processed per epoch, padding included
  double padding_fraction = 0;    // 1 - total_tokens / padded_tokens
  int64_t steps_per_epoch = 0;    // batches of batch_size per epoch (drop_last = false)
  int64_t steps = 0;              // ceil(steps_per_epoch * epochs)
  double tokens_all_epochs = 0;   // total_tokens * epochs
};

Result<BatchingResult> SimulateBatching(const std::vector<int64_t>& sample_tokens,
                                        const BatchingOptions& options);

// TE2 contract: statistics of one field's token counts.
struct FieldContract {
  int64_t len = 0;  // samples
  int64_t total = 0;
  int64_t min = 0;
  int64_t max = 0;
  double mean = 0;  // rounded to 2 decimals (numpy round)
  double std = 0;   // population std, rounded to 2 decimals
  // bs -> mean of the longest int(len/bs) counts, for bs in 1, 2, 4, 8, 16 with bs <= len
  // (bs 1 is the rounded mean). Older contracts may hold other sizes (bs6).
  std::map<int64_t, double> width_by_batch;
};
// Field name -> contract, in the file's order.
using TokenContract = std::vector<std::pair<std::string, FieldContract>>;

// te2.py GenerateTokenEstimator2Contract over counts already made.
FieldContract MakeFieldContract(const std::vector<int64_t>& tokens);
TokenContract MakeContract(const TokenizedDataset& data);  // REQUIRES: data from per_field
// The JSON text their tool writes (Python json.dump: ", " and ": " separators, float repr).
std::string ContractToJson(const TokenContract& contract);
// Reads the per-field format above, or the older single-object format with "fields" of
// percentile lengths (te_test2.json: parse_dataset_config), which becomes one field "all".
Result<TokenContract> ParseContract(std::string_view json_text);
Result<TokenContract> LoadContractFile(const std::string& path);

// Widths and totals from a contract without the data (te2.py TokenEstimator2): the template's
// fields (all fields when it has none), plus its constant text as a per-sample baseline.
// Widths for a batch size the contract lacks come from a least-squares line over the known
// (bs, width) points, clamped to [mean, max]; seq_len truncates them.
Result<BatchingResult> EstimateFromContract(const TokenContract& contract,
                                            const TextTemplate& text_template, TokenCounter counter,
                                            const BatchingOptions& options);

}  // namespace fmte

#endif  // FMTE_TOKENS_H_
