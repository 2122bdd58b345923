// CSV tables (RFC 4180) for every reader of the project: the GPU catalog, the measured samples
// fmte-retrain learns from, the FM and GEMM exports. Errors name the file and line in the style of
// fmte/file.h. Thread-safety: value types; functions are reentrant.
#ifndef FMTE_CSV_H_
#define FMTE_CSV_H_

#include <string>
#include <string_view>
#include <vector>

#include "fmte/status.h"

namespace fmte {

struct CsvTable {
  std::vector<std::string> columns;            // the header row
  std::vector<std::vector<std::string>> rows;  // each the size of `columns`
  std::vector<long> row_lines;                 // the 1-based line each row starts on

  // Index of the column `name`, or -1.
  int Column(std::string_view name) const;
};

// One CSV line into cells: a cell in double quotes may hold commas ("" is a quote); '\r' is
// dropped. For one-line records; ParseCsv also reads quoted newlines.
std::vector<std::string> SplitCsvLine(std::string_view line);

// CSV text: a header row, then rows. Fields that start with a double quote may hold commas,
// newlines and "" (a quote); lines end in \n or \r\n; blank lines are skipped. Errors
// (kParseError), each "<origin>:<line>: ...": an unterminated quoted field, a row whose cell count
// is not the header's ("expected N cells, got M"), no header at all ("<origin>: empty file,
// expected a header row").
Result<CsvTable> ParseCsv(std::string_view text, std::string_view origin);

// ReadFile(path, what) then ParseCsv.
Result<CsvTable> ReadCsv(const std::string& path, std::string_view what = "CSV file");

}  // namespace fmte

#endif  // FMTE_CSV_H_
