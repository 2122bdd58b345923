#include "fmte/csv.h"

#include "fmte/file.h"

namespace fmte {

int CsvTable::Column(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return static_cast<int>(i);
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

Result<CsvTable> ParseCsv(std::string_view text, std::string_view origin) {
  CsvTable table;
  bool have_header = false;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, field_started = false;
  long line = 1, record_line = 1;
  // A finished record: the header, or a row of the header's width; blank lines are skipped.
  const auto end_record = [&]() -> Status {
    record.push_back(std::move(field));
    field.clear();
    field_started = false;
    const bool blank = record.size() == 1 && record[0].empty();
    if (!blank) {
      if (!have_header) {
        table.columns = std::move(record);
        have_header = true;
      } else if (record.size() != table.columns.size()) {
        return FileParseError(origin, record_line,
                              "expected " + std::to_string(table.columns.size()) + " cells, got " +
                                  std::to_string(record.size()));
      } else {
        table.rows.push_back(std::move(record));
        table.row_lines.push_back(record_line);
      }
    }
    record.clear();
    return Status::Ok();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"' && field.empty() && !field_started) {
      quoted = field_started = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
      field_started = false;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      FMTE_RETURN_IF_ERROR(end_record());
      record_line = ++line;
    } else {
      field += c;
      field_started = true;
    }
  }
  if (quoted) return FileParseError(origin, record_line, "unterminated quoted field");
  if (!field.empty() || !record.empty()) FMTE_RETURN_IF_ERROR(end_record());
  if (!have_header) return FileParseError(origin, 0, "empty file, expected a header row");
  return table;
}

Result<CsvTable> ReadCsv(const std::string& path, std::string_view what) {
  Result<std::string> text = ReadFile(path, what);
  if (!text.ok()) return text.status();
  return ParseCsv(*text, path);
}

}  // namespace fmte
