// CsvTable: a small reader for the measured-sample CSV files fmte learns from (a header line, then
// rows; RFC 4180 quoting so dict-valued cells such as the seed's Best_config survive).
// Thread-safety: value types; functions are reentrant.
#ifndef FMTE_LEARN_DATASET_H_
#define FMTE_LEARN_DATASET_H_

#include <string>
#include <string_view>
#include <vector>

#include "fmte/status.h"

namespace fmte::learn {

struct CsvTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // each the size of `columns`

  // Index of `name`, or -1.
  int Column(std::string_view name) const;
};

// Splits one CSV line (quotes "..." may hold commas; "" is an escaped quote).
std::vector<std::string> SplitCsvLine(std::string_view line);

// Reads a CSV file. Errors name the file and line (a row with the wrong number of cells).
Result<CsvTable> ReadCsv(const std::string& path);
Result<CsvTable> ParseCsv(std::string_view text, const std::string& origin);

// A numeric view: every cell parsed as a double. Errors name file, line and column.
struct NumericTable {
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  int Column(std::string_view name) const;
};
Result<NumericTable> ToNumeric(const CsvTable& t, const std::string& origin);

}  // namespace fmte::learn

#endif  // FMTE_LEARN_DATASET_H_
