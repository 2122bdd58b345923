#include "fmte/status.h"

namespace fmte {

std::string Status::ToString() const {
  const char* name = "ok";
  switch (code_) {
    case Code::kOk:
      return "ok";
    case Code::kInvalidArgument:
      name = "invalid argument";
      break;
    case Code::kNotFound:
      name = "not found";
      break;
    case Code::kIoError:
      name = "I/O error";
      break;
    case Code::kParseError:
      name = "parse error";
      break;
    case Code::kUnsupported:
      name = "unsupported";
      break;
    case Code::kInternal:
      name = "internal error";
      break;
  }
  return std::string(name) + ": " + message_;
}

Status Status::WithContext(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_);
}

}  // namespace fmte
