// Error values for library code: libraries never print or exit, they return a Status or a Result<T>
// and the tools decide what to print and which exit code to use.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace xopt {

enum class ErrorCode {
  kInvalidArgument,  // bad flag or option value (tools: exit 1)
  kInvalidModel,     // the model file or graph is malformed (tools: exit 2)
  kUnsupported,      // well-formed, but something we do not implement (tools: exit 2)
  kIo,               // file system errors (tools: exit 2)
  kPassFailed,       // a pass broke the IR or could not complete (tools: exit 3)
  kMismatch,         // a validation found different results (tools: exit 1)
  kInternal,
};

const char* error_code_name(ErrorCode code);

class Status {
 public:
  Status() = default;  // OK
  Status(ErrorCode code, std::string message) : ok_(false), code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  bool is_ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefixes context ("model.onnx: ", "node 'conv1' (Conv): ") to the message of an error.
  Status with_context(const std::string& prefix) const {
    if (ok_) return *this;
    return Status(code_, prefix + message_);
  }

 private:
  bool ok_ = true;
  ErrorCode code_ = ErrorCode::kInternal;
  std::string message_;
};

inline Status invalid_model(std::string msg) { return {ErrorCode::kInvalidModel, std::move(msg)}; }
inline Status invalid_argument(std::string msg) {
  return {ErrorCode::kInvalidArgument, std::move(msg)};
}
inline Status unsupported(std::string msg) { return {ErrorCode::kUnsupported, std::move(msg)}; }
inline Status io_error(std::string msg) { return {ErrorCode::kIo, std::move(msg)}; }
inline Status internal_error(std::string msg) { return {ErrorCode::kInternal, std::move(msg)}; }

// A value or an error. Accessing value() of an error is a programming bug (asserted).
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).is_ok() && "Result constructed from an OK status");
  }

  bool is_ok() const { return v_.index() == 0; }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const {
    static const Status kOk;
    return is_ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace xopt

#define XOPT_CONCAT_INNER(a, b) a##b
#define XOPT_CONCAT(a, b) XOPT_CONCAT_INNER(a, b)

// Returns early from the enclosing function when `expr` (a Status) is an error.
#define XOPT_RETURN_IF_ERROR(expr)              \
  do {                                          \
    ::xopt::Status xopt_status_ = (expr);       \
    if (!xopt_status_.is_ok()) return xopt_status_; \
  } while (0)

// `XOPT_ASSIGN_OR_RETURN(auto x, f())` binds the value of a Result or returns its error.
#define XOPT_ASSIGN_OR_RETURN(lhs, expr) \
  XOPT_ASSIGN_OR_RETURN_IMPL(XOPT_CONCAT(xopt_result_, __LINE__), lhs, expr)
#define XOPT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.is_ok()) return tmp.status();           \
  lhs = std::move(tmp).value()
