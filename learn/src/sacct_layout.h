// Private to fmte_learn: the column layout of a sacct export (which field is in which column), from
// a header line, from --fields, or from a pasted "$ sacct ... --format=..." command line.
// Thread-safety: value types; the name table is immutable.
#ifndef FMTE_LEARN_SRC_SACCT_LAYOUT_H_
#define FMTE_LEARN_SRC_SACCT_LAYOUT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fmte::learn::internal {

// The fields the reader interprets; any other sacct field is accepted and ignored (kIgnored).
enum Field : uint8_t {
  kJobId,
  kJobIdRaw,
  kJobName,
  kUser,
  kAccount,
  kPartition,
  kState,
  kExitCode,
  kElapsed,
  kElapsedRaw,
  kTimelimit,
  kTimelimitRaw,
  kSubmit,
  kStart,
  kEnd,
  kAllocTres,
  kReqTres,
  kTresUsageInMax,
  kAdminComment,
  kComment,
  kNNodes,
  kAllocCpus,
  kNTasks,
  kMaxRss,
  kWorkDir,
  kSubmitLine,
  kFieldCount,
  kIgnored = 0xff,
};

// True when `name` (case-insensitive) is a field sacct knows (sacct --helpformat, 22.05-24.x).
bool IsSacctFieldName(std::string_view name);

struct Layout {
  std::vector<Field> columns;            // per column
  std::array<int16_t, kFieldCount> col;  // per field: its column, or -1
  bool empty() const { return columns.empty(); }
  int16_t operator[](Field f) const { return col[f]; }
};

// Field names -> layout; nullopt when a name is not a sacct field (the message says which).
std::optional<Layout> MakeLayout(const std::vector<std::string_view>& names, std::string* error);

// A pasted command line "$ sacct -j 1 -pno JobID,TRESUsageInMax": the fields it prints (sacct's
// default format when it has no -o/--format). nullopt when the line is not a sacct command.
std::optional<std::vector<std::string>> FieldsOfSacctCommand(std::string_view line);

}  // namespace fmte::learn::internal

#endif  // FMTE_LEARN_SRC_SACCT_LAYOUT_H_
