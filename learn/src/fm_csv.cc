// Reading the FM Training Estimator's data.csv (fm_csv.h): header detection and row parsing.
#include "fmte/learn/fm_csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "fmte/csv.h"
#include "fmte/text.h"

namespace fmte::learn {
namespace {

// fm_training_estimator/data/manager.py (commit 9a50fe3): `formats`, X columns then Y columns.
const std::vector<std::string>& Columns(FmCsvFormat f) {
  static const std::vector<std::string> kV1 = {"model_name", "number_gpus",       "batch_size",
                                               "seq_len",    "tokens_per_second", "memory",
                                               "memory_act"};
  static const std::vector<std::string> kV2 = {"model_arch",
                                               "model_hidden_size",
                                               "model_intermediate_size",
                                               "model_num_attn_heads",
                                               "model_num_hidden_layers",
                                               "model_num_key_value_heads",
                                               "number_gpus",
                                               "batch_size",
                                               "seq_len",
                                               "tokens_per_second",
                                               "memory",
                                               "memory_act"};
  static const std::vector<std::string> kV3 = {"model_arch",
                                               "model_hidden_size",
                                               "model_intermediate_size",
                                               "model_num_attn_heads",
                                               "model_num_hidden_layers",
                                               "model_num_key_value_heads",
                                               "method",
                                               "gpu_model",
                                               "number_gpus",
                                               "batch_size",
                                               "seq_len",
                                               "tokens_per_second",
                                               "memory",
                                               "memory_act"};
  switch (f) {
    case FmCsvFormat::kV1:
      return kV1;
    case FmCsvFormat::kV2:
      return kV2;
    case FmCsvFormat::kV3:
      return kV3;
  }
  return kV1;
}

// Comma-separated cells as pandas writes them (a cell in double quotes may hold commas, "" is a
// quote), each without surrounding white space.
std::vector<std::string> SplitCsv(std::string_view line) {
  std::vector<std::string> cells = SplitCsvLine(line);
  for (std::string& c : cells) c = std::string(Trim(c));
  return cells;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

// Which format a header is; else an error naming every format's columns and the nearest's gaps.
Result<std::pair<FmCsvFormat, std::vector<int>>> DetectFormat(
    const std::vector<std::string>& header, const std::string& where) {
  const std::set<std::string> have(header.begin(), header.end());
  const FmCsvFormat all[] = {FmCsvFormat::kV1, FmCsvFormat::kV2, FmCsvFormat::kV3};
  FmCsvFormat best = FmCsvFormat::kV1;
  size_t best_diff = SIZE_MAX;
  std::string best_missing, best_extra;
  for (FmCsvFormat f : all) {
    const std::vector<std::string>& cols = Columns(f);
    std::vector<std::string> missing, extra;
    for (const std::string& c : cols) {
      if (!have.count(c)) missing.push_back(c);
    }
    const std::set<std::string> want(cols.begin(), cols.end());
    for (const std::string& c : header) {
      if (!want.count(c)) extra.push_back(c);
    }
    if (missing.empty() && extra.empty() && header.size() == cols.size()) {
      std::vector<int> index;
      for (const std::string& c : cols) {
        index.push_back(
            static_cast<int>(std::find(header.begin(), header.end(), c) - header.begin()));
      }
      return std::make_pair(f, index);
    }
    if (missing.size() + extra.size() < best_diff) {
      best_diff = missing.size() + extra.size();
      best = f;
      best_missing = Join(missing);
      best_extra = Join(extra);
    }
  }
  std::string msg = where + ": header '" + Join(header) +
                    "' is not an FM Training Estimator data format; expected the columns of v1 (" +
                    Join(Columns(FmCsvFormat::kV1)) + "), v2 (" + Join(Columns(FmCsvFormat::kV2)) +
                    ") or v3 (" + Join(Columns(FmCsvFormat::kV3)) + "); closest is " +
                    std::string(ToString(best));
  if (!best_missing.empty()) msg += ", missing " + best_missing;
  if (!best_extra.empty()) msg += ", unexpected " + best_extra;
  return Status::ParseError(msg);
}

bool ParseInt(const std::string& s, int64_t* out) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (ec == std::errc() && p == s.data() + s.size()) return true;
  // pandas may write integers of float columns as "4.0".
  double d = 0;
  const auto [q, ec2] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec2 != std::errc() || q != s.data() + s.size() || d != std::floor(d) || std::fabs(d) > 9e15)
    return false;
  *out = static_cast<int64_t>(d);
  return true;
}

bool ParseDouble(const std::string& s, double* out) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && std::isfinite(*out);
}

// Parses one data row; "" on success, else the reason (naming the column).
std::string ParseRow(const std::vector<std::string>& cells, FmCsvFormat f,
                     const std::vector<int>& index, FmCsvRow* row) {
  const std::vector<std::string>& cols = Columns(f);
  if (cells.size() != cols.size()) {
    return "expected " + std::to_string(cols.size()) + " fields, got " +
           std::to_string(cells.size());
  }
  for (size_t k = 0; k < cols.size(); ++k) {
    const std::string& name = cols[k];
    const std::string& v = cells[static_cast<size_t>(index[k])];
    auto need_int = [&](int64_t* out, bool allow_unknown) -> std::string {
      if (!ParseInt(v, out)) return name + ": expected an integer, got '" + v + "'";
      if (*out <= 0 && !(allow_unknown && *out == -1)) {
        return name + ": expected a positive integer" + (allow_unknown ? " (or -1: unknown)" : "") +
               ", got '" + v + "'";
      }
      return "";
    };
    auto need_num = [&](double* out, bool positive) -> std::string {
      if (!ParseDouble(v, out)) return name + ": expected a number, got '" + v + "'";
      if (positive ? !(*out > 0) : *out < 0) {
        return name + ": expected a " + (positive ? "positive" : "non-negative") +
               " number, got '" + v + "'";
      }
      return "";
    };
    std::string err;
    if (name == "model_name") {
      if (v.empty()) err = "model_name: empty";
      row->model_name = v;
    } else if (name == "model_arch") {
      if (v.empty()) err = "model_arch: empty";
      row->model_arch = v;
    } else if (name == "method") {
      if (v.empty()) err = "method: empty";
      row->method = v;
    } else if (name == "gpu_model") {
      if (v.empty()) err = "gpu_model: empty";
      row->gpu_model = v;
    } else if (name == "model_hidden_size") {
      err = need_int(&row->hidden_size, true);
    } else if (name == "model_intermediate_size") {
      err = need_int(&row->intermediate_size, true);
    } else if (name == "model_num_attn_heads") {
      err = need_int(&row->num_heads, true);
    } else if (name == "model_num_hidden_layers") {
      err = need_int(&row->num_layers, true);
    } else if (name == "model_num_key_value_heads") {
      err = need_int(&row->num_kv_heads, true);
    } else if (name == "number_gpus") {
      err = need_int(&row->number_gpus, false);
    } else if (name == "batch_size") {
      err = need_int(&row->batch_size, false);
    } else if (name == "seq_len") {
      err = need_int(&row->seq_len, false);
    } else if (name == "tokens_per_second") {
      err = need_num(&row->tokens_per_second, true);
    } else if (name == "memory") {
      err = need_num(&row->memory_bytes, false);
    } else if (name == "memory_act") {
      err = need_num(&row->memory_act_bytes, false);
    }
    if (!err.empty()) return err;
  }
  return "";
}

}  // namespace

std::string_view ToString(FmCsvFormat f) {
  switch (f) {
    case FmCsvFormat::kV1:
      return "v1";
    case FmCsvFormat::kV2:
      return "v2";
    case FmCsvFormat::kV3:
      return "v3";
  }
  return "?";
}

const std::vector<std::string>& FmCsvColumns(FmCsvFormat f) { return Columns(f); }

Result<FmCsvData> ParseFmCsv(std::string_view text, std::string_view origin,
                             const FmCsvReadOptions& options) {
  FmCsvData data;
  data.origin = std::string(origin);
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 BOM
  std::vector<int> index;
  bool have_header = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = Trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++data.lines;
    if (line.empty()) continue;
    const std::string where = data.origin + ":" + std::to_string(data.lines);
    std::vector<std::string> cells = SplitCsv(line);
    if (!have_header) {
      // pandas' to_csv(index=True) writes an unnamed first column: not one of the formats either.
      Result<std::pair<FmCsvFormat, std::vector<int>>> f = DetectFormat(cells, where);
      if (!f.ok()) return f.status();
      data.format = f->first;
      index = f->second;
      have_header = true;
      continue;
    }
    FmCsvRow row;
    row.line = data.lines;
    const std::string reason = ParseRow(cells, data.format, index, &row);
    if (!reason.empty()) {
      if (options.strict) return Status::ParseError(where + ": " + reason);
      data.malformed.push_back({data.lines, reason});
      continue;
    }
    data.rows.push_back(std::move(row));
  }
  if (!have_header)
    return Status::ParseError(data.origin + ": empty file (expected a data.csv header)");
  return data;
}

Result<FmCsvData> ReadFmCsvFile(const std::string& path, const FmCsvReadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path + ": cannot read");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::IoError(path + ": read error");
  return ParseFmCsv(ss.str(), path, options);
}

}  // namespace fmte::learn
