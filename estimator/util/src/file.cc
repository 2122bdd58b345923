#include "fmte/file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace fmte {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

Status CannotRead(const std::string& path, std::string_view what, int err) {
  return Status::IoError(path + ": cannot read " + std::string(what) + ": " + std::strerror(err));
}

}  // namespace

Status CannotRead(const std::string& path, std::string_view what) {
  const int err = errno;
  return CannotRead(path, what, err != 0 ? err : ENOENT);
}

Result<std::string> ReadFile(const std::string& path, std::string_view what, size_t max_bytes) {
  errno = 0;
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return CannotRead(path, what, errno != 0 ? errno : ENOENT);
  std::string text;
  char buf[1 << 16];
  while (true) {
    const size_t n = std::fread(buf, 1, sizeof(buf), f.get());
    if (n > 0) {
      if (text.size() + n > max_bytes)
        return Status::IoError(path + ": " + std::string(what) + " is larger than " +
                               std::to_string(max_bytes) + " bytes");
      text.append(buf, n);
    }
    if (n < sizeof(buf)) {
      // A directory opens but reads EISDIR; any read error ends here.
      if (std::ferror(f.get())) return CannotRead(path, what, errno != 0 ? errno : EIO);
      break;
    }
  }
  return text;
}

Status FileParseError(std::string_view path, long line, std::string_view message) {
  std::string out(path);
  if (line > 0) out += ":" + std::to_string(line);
  out += ": ";
  out += message;
  return Status::ParseError(std::move(out));
}

}  // namespace fmte
