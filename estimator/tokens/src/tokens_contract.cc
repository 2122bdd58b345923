// TE2 contracts (tokens.h): fm_training_estimator/tokens/te2/te2.py
// GenerateTokenEstimator2Contract (writing), TokenEstimator2 (estimating from a contract) and
// parse_dataset_config (the older percentile format). Written so that a contract made here is
// byte-identical to theirs (numpy rounding, Python json.dump float repr).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fmte/file.h"
#include "fmte/tokens.h"

namespace fmte {
namespace {

using ordered_json = nlohmann::ordered_json;

// numpy's pairwise summation (numpy/_core/src/umath/loops_utils.h.src, PW_BLOCKSIZE 128): the
// order numpy adds float64 arrays in, so np.std's last bits match.
double PairwiseSum(const double* a, size_t n) {
  if (n < 8) {
    double res = 0.;
    for (size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return PairwiseSum(a, n2) + PairwiseSum(a + n2, n - n2);
}

// round(np.float64(x), 2): numpy multiplies by 10**2, rounds half to even, divides.
double NumpyRound2(double x) { return std::nearbyint(x * 100.0) / 100.0; }

// Python's repr() of a float: the shortest digits that round-trip, in fixed notation unless the
// decimal exponent is < -4 or >= 16 (Python/pystrtod.c, format code 'r').
std::string PythonFloatRepr(double v) {
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  std::string sign;
  if (sci[0] == '-') sign = "-", sci.erase(0, 1);
  const size_t e_pos = sci.find('e');
  const int exp10 = std::stoi(sci.substr(e_pos + 1));
  std::string digits = sci.substr(0, e_pos);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int decpt = exp10 + 1;  // position of the decimal point after the first digit
  const int nd = static_cast<int>(digits.size());
  if (decpt <= -4 || decpt > 16) {
    std::string mant = digits.substr(0, 1);
    if (nd > 1) mant += "." + digits.substr(1);
    char e[16];
    std::snprintf(e, sizeof e, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
    return sign + mant + e;
  }
  if (decpt <= 0) return sign + "0." + std::string(-decpt, '0') + digits;
  if (decpt >= nd) return sign + digits + std::string(decpt - nd, '0') + ".0";
  return sign + digits.substr(0, decpt) + "." + digits.substr(decpt);
}

// json.dumps string quoting with ensure_ascii=True.
std::string PythonJsonString(std::string_view s) {
  std::string out = "\"";
  char hex[16];
  auto u = [&](uint32_t cp) {
    std::snprintf(hex, sizeof hex, "\\u%04x", cp);
    out += hex;
  };
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        default:
          if (c < 0x20)
            u(c);
          else
            out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    const int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    uint32_t cp = c & (len == 4 ? 0x07 : len == 3 ? 0x0F : 0x1F);
    for (int k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (s[i + k] & 0x3F);
    i += len;
    if (cp > 0xFFFF) {
      cp -= 0x10000;
      u(0xD800 + (cp >> 10));
      u(0xDC00 + (cp & 0x3FF));
    } else {
      u(cp);
    }
  }
  return out + "\"";
}

Status ContractError(const std::string& field, const std::string& what) {
  return Status::ParseError("contract field '" + field + "': " + what);
}

Result<FieldContract> ParseField(const std::string& name, const ordered_json& j) {
  if (!j.is_object()) return ContractError(name, "expected an object of statistics");
  FieldContract f;
  auto integer = [&](const char* key, int64_t* out) -> Status {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number())
      return ContractError(name, std::string("missing number '") + key + "'");
    // Counts beyond 2^62 (found by fuzz_tokens_contract: 2e98 was converted to int64_t, which is
    // undefined behaviour) or below zero are no token counts.
    const double v = it->get<double>();
    if (!(v >= 0 && v <= 4.6e18))
      return ContractError(name, std::string("'") + key + "': expected a count in [0, 4.6e18]");
    *out = static_cast<int64_t>(v);
    return Status::Ok();
  };
  auto real = [&](const char* key, double* out) -> Status {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number())
      return ContractError(name, std::string("missing number '") + key + "'");
    *out = it->get<double>();
    return Status::Ok();
  };
  FMTE_RETURN_IF_ERROR(integer("len", &f.len));
  FMTE_RETURN_IF_ERROR(integer("total", &f.total));
  FMTE_RETURN_IF_ERROR(integer("min", &f.min));
  FMTE_RETURN_IF_ERROR(integer("max", &f.max));
  FMTE_RETURN_IF_ERROR(real("mean", &f.mean));
  FMTE_RETURN_IF_ERROR(real("std", &f.std));
  if (f.len <= 0) return ContractError(name, "'len' must be positive");
  for (const auto& [key, value] : j.items()) {
    if (key.size() < 3 || key.compare(0, 2, "bs") != 0) continue;
    int64_t bs = 0;
    const auto [ptr, ec] = std::from_chars(key.data() + 2, key.data() + key.size(), bs);
    if (ec != std::errc() || ptr != key.data() + key.size() || bs <= 0 || !value.is_number())
      return ContractError(name, "malformed batch width '" + key + "'");
    f.width_by_batch[bs] = value.get<double>();
  }
  if (!f.width_by_batch.count(1)) f.width_by_batch[1] = f.mean;
  return f;
}

// te2.py parse_dataset_config: the older format sums each field's percentiles into one contract
// (50th -> bs2, 75th -> bs4, 83.33th -> bs6, 87.5th -> bs8, 93.75th -> bs16; len is its
// number_of_tokens, total = mean * len).
Result<TokenContract> ParseOldFormat(const ordered_json& j) {
  FieldContract f;
  const auto& n = j["number_of_tokens"];
  if (!n.is_number()) return ContractError("number_of_tokens", "expected a number");
  f.len = static_cast<int64_t>(n.get<double>());
  if (f.len <= 0) return ContractError("number_of_tokens", "must be positive");
  double mean = 0, std = 0, min = 0, max = 0;
  const std::pair<const char*, int64_t> kPercentiles[] = {{"50%ile_token_length", 2},
                                                          {"75%ile_token_length", 4},
                                                          {"83.33%ile_token_length", 6},
                                                          {"87.5%ile_token_length", 8},
                                                          {"93.75%ile_token_length", 16}};
  int index = 0;
  for (const auto& field : j["fields"]) {
    const std::string name = "fields[" + std::to_string(index++) + "]";
    auto get = [&](const char* key, double* sum) -> Status {
      const auto it = field.find(key);
      if (it == field.end() || !it->is_number())
        return ContractError(name, std::string("missing number '") + key + "'");
      *sum += it->get<double>();
      return Status::Ok();
    };
    FMTE_RETURN_IF_ERROR(get("minimum_token_length", &min));
    FMTE_RETURN_IF_ERROR(get("maximum_token_length", &max));
    FMTE_RETURN_IF_ERROR(get("standard_deviation", &std));  // their sum: covariances taken as 0
    FMTE_RETURN_IF_ERROR(get("mean_token_length", &mean));
    for (const auto& [key, bs] : kPercentiles)
      FMTE_RETURN_IF_ERROR(get(key, &f.width_by_batch[bs]));
  }
  f.mean = mean;
  f.std = std;
  f.min = static_cast<int64_t>(min);
  f.max = static_cast<int64_t>(max);
  f.width_by_batch[1] = mean;
  f.total = static_cast<int64_t>(mean * static_cast<double>(f.len));
  return TokenContract{{"all", f}};
}

// Least-squares line through the known (bs, width) points (te2.py fits sklearn's
// LinearRegression on them), evaluated at `bs`.
double RegressWidth(const FieldContract& f, double bs) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : f.width_by_batch) {
    n += 1, sx += x, sy += y, sxx += double(x) * x, sxy += x * y;
  }
  const double denom = n * sxx - sx * sx;
  if (n < 2 || denom == 0) return sy / std::max(n, 1.0);
  const double slope = (n * sxy - sx * sy) / denom;
  return (sy - slope * sx) / n + slope * bs;
}

}  // namespace

FieldContract MakeFieldContract(const std::vector<int64_t>& tokens_in) {
  FieldContract f;
  if (tokens_in.empty()) return f;
  std::vector<int64_t> tokens(tokens_in);
  std::sort(tokens.begin(), tokens.end(), std::greater<>());  // np.sort(...)[::-1]
  const size_t n = tokens.size();
  f.len = static_cast<int64_t>(n);
  for (int64_t t : tokens) f.total += t;
  f.max = tokens.front();
  f.min = tokens.back();
  // np.mean / np.std on the int array: float64 sum (exact for integer counts) / n; std is the
  // population deviation, summed pairwise as numpy does, over the sorted array.
  const double mean = static_cast<double>(f.total) / static_cast<double>(n);
  std::vector<double> sq(n);
  for (size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(tokens[i]) - mean;
    sq[i] = d * d;
  }
  f.mean = NumpyRound2(mean);
  f.std = NumpyRound2(std::sqrt(PairwiseSum(sq.data(), n) / static_cast<double>(n)));
  f.width_by_batch[1] = f.mean;
  for (int64_t bs = 2; bs <= 16 && bs <= f.len; bs *= 2) {
    const int64_t k = f.len / bs;  // the longest len/bs samples
    int64_t sum = 0;
    for (int64_t i = 0; i < k; ++i) sum += tokens[i];
    f.width_by_batch[bs] = static_cast<double>(sum) / static_cast<double>(k);
  }
  return f;
}

TokenContract MakeContract(const TokenizedDataset& data) {
  TokenContract c;
  for (size_t i = 0; i < data.fields.size(); ++i)
    c.emplace_back(data.fields[i], MakeFieldContract(data.field_tokens[i]));
  return c;
}

std::string ContractToJson(const TokenContract& contract) {
  std::string out = "{";
  bool first_field = true;
  for (const auto& [name, f] : contract) {
    if (!first_field) out += ", ";
    first_field = false;
    out += PythonJsonString(name) + ": {\"len\": " + std::to_string(f.len) +
           ", \"total\": " + std::to_string(f.total) + ", \"min\": " + std::to_string(f.min) +
           ", \"max\": " + std::to_string(f.max) + ", \"mean\": " + PythonFloatRepr(f.mean) +
           ", \"std\": " + PythonFloatRepr(f.std);
    for (const auto& [bs, width] : f.width_by_batch)
      out += ", \"bs" + std::to_string(bs) + "\": " + PythonFloatRepr(width);
    out += "}";
  }
  return out + "}";
}

Result<TokenContract> ParseContract(std::string_view json_text) {
  ordered_json j;
  try {
    j = ordered_json::parse(json_text);
  } catch (const std::exception& e) {
    return Status::ParseError(std::string("malformed contract JSON: ") + e.what());
  }
  if (!j.is_object() || j.empty())
    return Status::ParseError("contract: expected a JSON object of fields");
  if (j.contains("fields") && j["fields"].is_array()) return ParseOldFormat(j);
  TokenContract c;
  for (const auto& [name, value] : j.items()) {
    auto f = ParseField(name, value);
    if (!f.ok()) return f.status();
    c.emplace_back(name, *f);
  }
  return c;
}

Result<TokenContract> LoadContractFile(const std::string& path) {
  Result<std::string> text = ReadFile(path, "the dataset contract");
  if (!text.ok()) return text.status();
  auto c = ParseContract(*text);
  if (!c.ok()) return Status::ParseError(path + ": " + c.status().message());
  return c;
}

Result<BatchingResult> EstimateFromContract(const TokenContract& contract,
                                            const TextTemplate& text_template, TokenCounter counter,
                                            const BatchingOptions& o) {
  if (contract.empty()) return Status::InvalidArgument("the contract has no fields");
  if (o.batch_size < 1) return Status::InvalidArgument("--batch-size: expected a positive integer");
  if (o.packing && o.seq_len <= 0)
    return Status::InvalidArgument("--packing needs --seq-len (the length of a packed row)");
  if (!(o.epochs > 0)) return Status::InvalidArgument("--epochs: expected a positive number");
  std::vector<const FieldContract*> used;
  if (text_template.all_string_fields) {
    for (const auto& [name, f] : contract) used.push_back(&f);
  } else {
    for (const auto& field : text_template.fields) {
      const FieldContract* found = nullptr;
      std::string names;
      for (const auto& [name, f] : contract) {
        if (name == field) found = &f;
        names += (names.empty() ? "" : ", ") + name;
      }
      if (!found)
        return Status::InvalidArgument("--template: field '" + field +
                                       "' is not in the contract (its fields: " + names + ")");
      used.push_back(found);
    }
  }
  // te2.py process_sample_format: the template's constant text adds to every sample.
  const int64_t baseline =
      text_template.all_string_fields ? 0 : CountTokens(text_template.Literal(), counter);
  BatchingResult r;
  r.samples = used.front()->len;
  double width = static_cast<double>(baseline);
  int64_t total = baseline * r.samples;
  r.max_sample_tokens = baseline;
  for (const FieldContract* f : used) {
    const auto it = f->width_by_batch.find(o.batch_size);
    double w = it != f->width_by_batch.end() ? it->second
                                             : RegressWidth(*f, static_cast<double>(o.batch_size));
    w = std::clamp(w, std::min(f->mean, double(f->max)), static_cast<double>(f->max));
    width += w;
    total += f->total;
    r.max_sample_tokens += f->max;  // pessimistic, as te2.py get_max_sample_length
  }
  if (o.packing) {
    r.total_tokens = total;
    const int64_t rows = std::max<int64_t>(1, (total + o.seq_len - 1) / o.seq_len);
    r.steps_per_epoch = (rows + o.batch_size - 1) / o.batch_size;
    r.mean_batch_width = static_cast<double>(o.seq_len);
    r.padded_tokens = static_cast<double>(rows) * static_cast<double>(o.seq_len);
  } else {
    if (o.seq_len > 0) {
      width = std::min(width, static_cast<double>(o.seq_len));
      total = std::min(total, r.samples * o.seq_len);
    }
    r.total_tokens = total;
    r.steps_per_epoch = (r.samples + o.batch_size - 1) / o.batch_size;
    r.mean_batch_width = width;
    r.padded_tokens = width * static_cast<double>(r.samples);
  }
  r.steps =
      static_cast<int64_t>(std::ceil(static_cast<double>(r.steps_per_epoch) * o.epochs - 1e-9));
  r.tokens_all_epochs = static_cast<double>(r.total_tokens) * o.epochs;
  r.padding_fraction =
      r.padded_tokens > 0 ? std::max(0.0, 1 - static_cast<double>(r.total_tokens) / r.padded_tokens)
                          : 0;
  return r;
}

}  // namespace fmte
