// Helpers shared by the files component's sources.
#ifndef FMTE_FILES_SRC_FILES_INTERNAL_H_
#define FMTE_FILES_SRC_FILES_INTERNAL_H_

#include <string>

namespace fmte::internal {

// Reads up to `max_bytes` from `fd` (retrying on EINTR, stopping at end of file or an error) and
// closes it.
std::string ReadAndClose(int fd, size_t max_bytes);

}  // namespace fmte::internal

#endif  // FMTE_FILES_SRC_FILES_INTERNAL_H_
