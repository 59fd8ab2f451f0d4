// Result<T> and the one Error type every library returns for expected failures.
// Each wire protocol (control JSON, Iceberg REST, S3 XML) maps Error to its own
// format in exactly one place under src/api/.
#pragma once

#include <expected>
#include <map>
#include <string>
#include <utility>

namespace tablemere {

enum class ErrorCode {
  kInvalidInput,      // the caller sent something malformed or out of range
  kNotFound,          // the named thing does not exist
  kAlreadyExists,     // creating something that is there
  kConflict,          // a concurrent change or a stale requirement
  kUnauthenticated,   // no or wrong credentials
  kPermissionDenied,  // credentials fine, not allowed
  kQuotaExceeded,     // a configured limit
  kRateLimited,       // too many attempts
  kUnavailable,       // a dependency failed, safe to retry
  kNotImplemented,    // an operation this server does not offer
  kInternal,          // a bug or an environment failure
};

// A failure with a machine-readable code, a human message, and an optional
// protocol-neutral detail map (e.g. {"s3_code": "NoSuchKey"}, {"remedy": "…"}).
// Messages and details must never contain secrets.
struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
  std::map<std::string, std::string> detail;

  Error& With(std::string key, std::string value) & {
    detail[std::move(key)] = std::move(value);
    return *this;
  }
  Error&& With(std::string key, std::string value) && {
    detail[std::move(key)] = std::move(value);
    return std::move(*this);
  }
  std::string Detail(const std::string& key) const {
    auto it = detail.find(key);
    return it == detail.end() ? std::string() : it->second;
  }
};

template <typename T>
using Result = std::expected<T, Error>;

// Builds the unexpected side of a Result: `return Fail(ErrorCode::kNotFound, "…");`
inline std::unexpected<Error> Fail(ErrorCode code, std::string message) {
  return std::unexpected<Error>(Error{code, std::move(message), {}});
}
inline std::unexpected<Error> Fail(Error error) { return std::unexpected<Error>(std::move(error)); }

const char* ErrorCodeName(ErrorCode code);

}  // namespace tablemere

// Propagates a failed Result from the enclosing function.
#define TM_TRY(expr)                                                     \
  do {                                                                   \
    auto tm_try_result_ = (expr);                                        \
    if (!tm_try_result_) return std::unexpected(tm_try_result_.error()); \
  } while (0)

#define TM_CONCAT_INNER(a, b) a##b
#define TM_CONCAT(a, b) TM_CONCAT_INNER(a, b)
// Declares `lhs` from a Result's value or propagates its error.
#define TM_ASSIGN(lhs, expr) TM_ASSIGN_IMPL(TM_CONCAT(tm_assign_, __LINE__), lhs, expr)
#define TM_ASSIGN_IMPL(tmp, lhs, expr)                      \
  auto tmp = (expr);                                        \
  if (!tmp) return std::unexpected(std::move(tmp).error()); \
  lhs = std::move(*tmp)
