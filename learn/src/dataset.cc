// CSV reading for measured samples.
#include "fmte/learn/dataset.h"

#include <cerrno>
#include <cstdlib>

namespace fmte::learn {

int NumericTable::Column(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
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
        const long line = r < t.row_lines.size() ? t.row_lines[r] : static_cast<long>(r) + 2;
        return Status::ParseError(origin + ":" + std::to_string(line) + ": column '" +
                                  t.columns[c] + "': expected a number, got '" + s + "'");
      }
      row.push_back(v);
    }
    n.rows.push_back(std::move(row));
  }
  return n;
}

}  // namespace fmte::learn
