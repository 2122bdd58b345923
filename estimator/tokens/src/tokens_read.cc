// Reading datasets and counting tokens per sample (tokens.h): TE0's text rendering and
// chars/3.6 rule (fm_training_estimator/tokens/te0/te0.py), streamed one sample at a time.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <fstream>
#include <istream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fmte/file.h"
#include "fmte/tokens.h"

namespace fmte {
namespace {

using ordered_json = nlohmann::ordered_json;

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

bool IsName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!IsNameChar(c)) return false;
  return true;
}

// Python's str() of a JSON value, as format_map would render it.
std::string Render(const ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "None";
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  return v.dump();
}

class SampleCounter {
 public:
  SampleCounter(const TokenizeOptions& options, std::string_view name)
      : options_(options), name_(name) {}

  Status Add(const ordered_json& sample, int64_t line) {
    if (!sample.is_object())
      return Error(line,
                   std::string("expected a JSON object per sample, got ") + sample.type_name());
    const auto ids = sample.find("input_ids");
    if (ids != sample.end() && ids->is_array()) {
      // Already tokenized: the exact count.
      data_.sample_tokens.push_back(static_cast<int64_t>(ids->size()));
      ++data_.exact_samples;
    } else {
      std::string text;
      const TextTemplate& t = options_.text_template;
      if (t.all_string_fields) {
        bool first = true;
        for (const auto& [key, value] : sample.items()) {
          if (!value.is_string()) continue;
          if (!first) text += '\n';
          text += value.get_ref<const std::string&>();
          first = false;
        }
      } else {
        text = t.literals[0];
        for (size_t i = 0; i < t.fields.size(); ++i) {
          const auto it = sample.find(t.fields[i]);
          if (it == sample.end())
            return Error(line, "field '" + t.fields[i] + "' used by the template is missing");
          text += Render(*it);
          text += t.literals[i + 1];
        }
      }
      data_.sample_tokens.push_back(CountTokens(text, options_.counter));
    }
    if (options_.per_field) AddFields(sample);
    return Status::Ok();
  }

  Status Error(int64_t line, const std::string& what) const {
    return Status::ParseError(std::string(name_) + ":" + std::to_string(line) + ": " + what);
  }

  TokenizedDataset Take() && { return std::move(data_); }

 private:
  void AddFields(const ordered_json& sample) {
    const size_t n = data_.sample_tokens.size();  // this sample included
    for (const auto& [key, value] : sample.items()) {
      if (!value.is_string()) continue;
      bool known = false;
      for (const auto& f : data_.fields) known = known || f == key;
      if (!known) {
        data_.fields.push_back(key);
        data_.field_tokens.emplace_back(n - 1, 0);  // earlier samples lacked it
      }
    }
    for (size_t i = 0; i < data_.fields.size(); ++i) {
      const auto it = sample.find(data_.fields[i]);
      data_.field_tokens[i].push_back(
          it != sample.end() && it->is_string()
              ? CountTokens(it->get_ref<const std::string&>(), options_.counter)
              : 0);
    }
  }

  const TokenizeOptions& options_;
  std::string_view name_;
  TokenizedDataset data_;
};

Status ParseAndAdd(SampleCounter& counter, const std::string& text, int64_t line) {
  ordered_json sample;
  try {
    sample = ordered_json::parse(text);
  } catch (const std::exception& e) {
    return counter.Error(line, std::string("malformed JSON: ") + e.what());
  }
  return counter.Add(sample, line);
}

// JSONL: one object per line; blank lines are skipped.
Status ReadJsonLines(std::istream& in, SampleCounter& counter, int64_t first_line) {
  std::string line;
  int64_t number = first_line - 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    FMTE_RETURN_IF_ERROR(ParseAndAdd(counter, line, number));
  }
  return Status::Ok();
}

// A JSON array of samples, split into elements by a scanner that tracks strings and nesting,
// so only one element is held at a time.
Status ReadJsonArray(std::istream& in, SampleCounter& counter, int64_t first_line) {
  int64_t line = first_line;
  char c;
  auto next = [&](char* out) {
    if (!in.get(*out)) return false;
    if (*out == '\n') ++line;
    return true;
  };
  while (next(&c) && c != '[') {
  }
  std::string element;
  int64_t element_line = 0;
  int depth = 0;
  bool in_string = false, escaped = false, closed = false;
  while (next(&c)) {
    if (depth == 0 && !in_string) {
      if (std::isspace(static_cast<unsigned char>(c)) || c == ',') continue;
      if (c == ']') {
        closed = true;
        break;
      }
      element_line = line;
    }
    element += c;
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    }
    if (depth == 0 && !in_string &&
        (c == '}' || c == ']' || c == '"' || in.peek() == ',' || in.peek() == ']' ||
         std::isspace(in.peek()))) {
      FMTE_RETURN_IF_ERROR(ParseAndAdd(counter, element, element_line));
      element.clear();
    }
  }
  if (!closed) return counter.Error(line, "malformed JSON array: missing ']'");
  while (next(&c))
    if (!std::isspace(static_cast<unsigned char>(c)))
      return counter.Error(line, "unexpected text after the JSON array");
  return Status::Ok();
}

Result<TokenizedDataset> Tokenize(std::istream& in, const TokenizeOptions& options,
                                  std::string_view name) {
  if (!options.text_template.all_string_fields &&
      options.text_template.literals.size() != options.text_template.fields.size() + 1)
    return Status::InvalidArgument("--template: malformed template");
  // Skip a UTF-8 byte-order mark and blank space; the first other character decides the
  // format ('[': JSON array, else JSONL).
  if (in.peek() == 0xEF) {
    char bom[3];
    in.read(bom, 3);
  }
  int64_t line = 1;
  while (in.peek() != EOF && std::isspace(in.peek())) line += in.get() == '\n';
  SampleCounter counter(options, name);
  if (in.peek() == '[') {
    FMTE_RETURN_IF_ERROR(ReadJsonArray(in, counter, line));
  } else {
    FMTE_RETURN_IF_ERROR(ReadJsonLines(in, counter, line));
  }
  TokenizedDataset data = std::move(counter).Take();
  if (data.sample_tokens.empty())
    return Status::ParseError(std::string(name) +
                              ": no samples (expected JSONL or a JSON array of objects)");
  return data;
}

}  // namespace

Result<TokenCounter> ParseTokenCounter(std::string_view s, std::string_view field) {
  if (s == "chars") return TokenCounter::kChars;
  if (s == "words") return TokenCounter::kWords;
  if (s == "bytes") return TokenCounter::kBytes;
  return Status::InvalidArgument(std::string(field) + ": expected one of chars|words|bytes, got '" +
                                 std::string(s.substr(0, 64)) + "'");
}

std::string_view ToString(TokenCounter c) {
  switch (c) {
    case TokenCounter::kChars:
      return "chars";
    case TokenCounter::kWords:
      return "words";
    case TokenCounter::kBytes:
      return "bytes";
  }
  return "?";
}

int64_t CountTokens(std::string_view text, TokenCounter counter) {
  switch (counter) {
    case TokenCounter::kChars: {
      // te0.py / te2.py: int(len(text) / 3.6), len in Unicode code points (Python str).
      int64_t code_points = 0;
      for (unsigned char b : text) code_points += (b & 0xC0) != 0x80;
      return static_cast<int64_t>(static_cast<double>(code_points) / 3.6);
    }
    case TokenCounter::kWords: {
      int64_t words = 0;
      bool in_word = false;
      for (unsigned char b : text) {
        const bool space = std::isspace(b) != 0;
        words += !space && !in_word;
        in_word = !space;
      }
      return words;
    }
    case TokenCounter::kBytes:
      return static_cast<int64_t>(text.size());
  }
  return 0;
}

Result<TextTemplate> TextTemplate::Parse(std::string_view text) {
  TextTemplate t;
  std::string literal;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '{') {
      const bool doubled = text.compare(i, 2, "{{") == 0;
      const size_t open = doubled ? 2 : 1;
      const size_t close = text.find(doubled ? "}}" : "}", i + open);
      if (close != std::string_view::npos) {
        const std::string_view name = text.substr(i + open, close - i - open);
        if (IsName(name)) {
          t.literals.push_back(std::move(literal));
          literal.clear();
          t.fields.emplace_back(name);
          i = close + open;
          continue;
        }
      }
    }
    literal += text[i++];
  }
  t.literals.push_back(std::move(literal));
  if (t.fields.empty())
    return Status::InvalidArgument("--template: no {{field}} placeholder in '" +
                                   std::string(text.substr(0, 64)) + "'");
  return t;
}

TextTemplate TextTemplate::AllStringFields() {
  TextTemplate t;
  t.all_string_fields = true;
  t.literals.emplace_back();
  return t;
}

std::string TextTemplate::Literal() const {
  std::string out;
  for (const auto& l : literals) out += l;
  return out;
}

Result<TokenizedDataset> TokenizeFile(const std::string& path, const TokenizeOptions& options) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) return CannotRead(path, "the dataset");
  return Tokenize(in, options, path);
}

Result<TokenizedDataset> TokenizeText(std::string_view text, const TokenizeOptions& options,
                                      std::string_view name) {
  std::istringstream in{std::string(text)};
  return Tokenize(in, options, name);
}

}  // namespace fmte
