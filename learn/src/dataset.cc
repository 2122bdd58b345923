// CSV reading for measured samples.
#include "fmte/learn/dataset.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace fmte::learn {

int CsvTable::Column(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
}

int NumericTable::Column(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::vector<std::string> SplitCsvLine(std::string_view line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        cells.back() += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      cells.emplace_back();
    } else if (ch != '\r') {
      cells.back() += ch;
    }
  }
  return cells;
}

Result<CsvTable> ParseCsv(std::string_view text, const std::string& origin) {
  CsvTable t;
  size_t pos = 0;
  int64_t line_no = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.empty() || line == "\r") {
      if (end >= text.size()) break;
      continue;
    }
    std::vector<std::string> cells = SplitCsvLine(line);
    if (t.columns.empty()) {
      t.columns = std::move(cells);
    } else if (cells.size() != t.columns.size()) {
      return Status::ParseError(origin + ":" + std::to_string(line_no) + ": expected " +
                                std::to_string(t.columns.size()) + " cells, got " +
                                std::to_string(cells.size()));
    } else {
      t.rows.push_back(std::move(cells));
    }
    if (end >= text.size()) break;
  }
  if (t.columns.empty()) return Status::ParseError(origin + ": empty file (expected a header)");
  return t;
}

Result<CsvTable> ReadCsv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ParseCsv(ss.str(), path);
}

Result<NumericTable> ToNumeric(const CsvTable& t, const std::string& origin) {
  NumericTable n;
  n.columns = t.columns;
  n.rows.reserve(t.rows.size());
  for (size_t r = 0; r < t.rows.size(); ++r) {
    std::vector<double> row;
    row.reserve(t.columns.size());
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const std::string& s = t.rows[r][c];
      char* end = nullptr;
      errno = 0;
      const double v = std::strtod(s.c_str(), &end);
      if (s.empty() || end == s.c_str() || *end != '\0' || errno == ERANGE) {
        return Status::ParseError(origin + ":" + std::to_string(r + 2) + ": column '" +
                                  t.columns[c] + "': expected a number, got '" + s + "'");
      }
      row.push_back(v);
    }
    n.rows.push_back(std::move(row));
  }
  return n;
}

}  // namespace fmte::learn
