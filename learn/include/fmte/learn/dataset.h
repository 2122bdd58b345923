// The measured-sample CSV files fmte learns from, read with the core's CSV reader (RFC 4180
// quoting, so dict-valued cells such as the seed's Best_config survive), and their numeric view.
// Thread-safety: value types; functions are reentrant.
#ifndef FMTE_LEARN_DATASET_H_
#define FMTE_LEARN_DATASET_H_

#include <string>
#include <string_view>
#include <vector>

#include "fmte/csv.h"
#include "fmte/status.h"

namespace fmte::learn {

// The project's one CSV reader (fmte/csv.h): a header line, then rows, RFC 4180 quoting.
using ::fmte::CsvTable;
using ::fmte::ParseCsv;
using ::fmte::ReadCsv;
using ::fmte::SplitCsvLine;

// A numeric view: every cell parsed as a double. Errors name file, line and column.
struct NumericTable {
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  int Column(std::string_view name) const;
};
Result<NumericTable> ToNumeric(const CsvTable& t, const std::string& origin);

}  // namespace fmte::learn

#endif  // FMTE_LEARN_DATASET_H_
