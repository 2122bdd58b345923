// Reading whole files, with one error style for every component: the path first, then what the
// file was meant to be and why it could not be read ("etc/gpus.csv: cannot read the GPU catalog:
// No such file or directory"). Content errors name the line: "<path>:<line>: <what was expected>".
// Thread-safety: reentrant (errno is thread-local).
#ifndef FMTE_FILE_H_
#define FMTE_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "fmte/status.h"

namespace fmte {

// No file fmte reads (catalogs, configs, manifests, regressors, contracts) is near this size.
inline constexpr size_t kMaxReadFileBytes = size_t{256} << 20;

// The whole file at `path`. `what` names it in errors ("the GPU catalog", "fmte.conf"). Errors
// (kIoError): "<path>: cannot read <what>: <reason>"; a file over `max_bytes`:
// "<path>: <what> is larger than <max_bytes> bytes".
Result<std::string> ReadFile(const std::string& path, std::string_view what,
                             size_t max_bytes = kMaxReadFileBytes);

// The error of a file that would not open (for readers that stream instead of ReadFile): the
// same text as ReadFile's, with the reason taken from errno.
Status CannotRead(const std::string& path, std::string_view what);

// A content error at a line of a file: "<path>:<line>: <message>" (line <= 0: "<path>: <message>").
Status FileParseError(std::string_view path, long line, std::string_view message);

}  // namespace fmte

#endif  // FMTE_FILE_H_
