// Status and Result<T>: errors as values at every boundary (leveldb / abseil style).
//
// A Status is either OK or carries a code and a message meant for a person: the message names the
// field and says what was expected ("--seq-len: expected a positive integer, got 'abc'").
// Thread-safety: value types, no shared state.
#ifndef FMTE_STATUS_H_
#define FMTE_STATUS_H_

#include <string>
#include <utility>
#include <variant>

namespace fmte {

// [[nodiscard]]: a Status returned and ignored is a compile warning (an error in the core).
class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,  // the caller's input is wrong (usage errors: exit code 2 in the tools)
    kNotFound,         // a named thing (model, GPU, file) does not exist
    kIoError,          // reading or writing a file failed
    kParseError,       // a file's content is malformed
    kUnsupported,      // valid input this version cannot handle (unknown architecture, ...)
    kInternal,         // a bug: should never happen
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return Status(Code::kInvalidArgument, std::move(msg));
  }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status IoError(std::string msg) { return Status(Code::kIoError, std::move(msg)); }
  static Status ParseError(std::string msg) { return Status(Code::kParseError, std::move(msg)); }
  static Status Unsupported(std::string msg) { return Status(Code::kUnsupported, std::move(msg)); }
  static Status Internal(std::string msg) { return Status(Code::kInternal, std::move(msg)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid argument: <message>" style text for logs.
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>".
  Status WithContext(const std::string& context) const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// Holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: REQUIRES: !status.ok()

  bool ok() const { return std::holds_alternative<T>(v_); }
  // REQUIRES: ok()
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  // OK when ok(), else the error.
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace fmte

// Returns the Status of `expr` from the enclosing function when it is not OK.
#define FMTE_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::fmte::Status fmte_status_ = (expr);        \
    if (!fmte_status_.ok()) return fmte_status_; \
  } while (0)

#endif  // FMTE_STATUS_H_
