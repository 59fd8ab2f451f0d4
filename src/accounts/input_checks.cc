#include "accounts/input_checks.h"

#include <algorithm>
#include <vector>

#include "accounts/errors.h"
#include "common/strings.h"

namespace tablemere::accounts {
namespace {

// A name is read in lists and typed on command lines.
constexpr size_t kMaxName = 64;

Error Invalid(const std::string& code, const std::string& field, const std::string& message) {
  return Error{ErrorCode::kInvalidInput, message, {}}.With("code", code).With("field", field);
}

}  // namespace

std::string DomainOf(const std::string& email) {
  size_t at = email.rfind('@');
  return at == std::string::npos ? std::string() : ToLower(email.substr(at + 1));
}

bool ValidEmail(const std::string& email) {
  size_t at = email.find('@');
  return at != std::string::npos && at > 0 && email.find('.', at) != std::string::npos &&
         email.size() <= 254 && email.find_first_of(" <>\r\n,;") == std::string::npos &&
         email.find('@', at + 1) == std::string::npos;
}

Result<std::string> CheckName(const std::string& raw) {
  std::string name = Trim(raw);
  if (name.empty()) return Fail(Invalid("missing_field", "name", "name is required"));
  if (name.size() > kMaxName) {
    return Fail(Invalid("invalid_value", "name", "name is longer than 64 characters"));
  }
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) {
      return Fail(Invalid("invalid_value", "name", "name contains a control character"));
    }
  }
  return name;
}

// The engines a signup answers with a recipe for; GET /v1/connection also has the
// read-only Snowflake recipe (`recipes`).
Result<void> CheckEngine(const std::string& engine, EngineSet set) {
  std::vector<std::string> engines = {"duckdb", "pyiceberg", "spark"};
  if (set == EngineSet::kRecipes) engines.push_back("snowflake");
  if (std::find(engines.begin(), engines.end(), engine) != engines.end()) return {};
  std::string list = Join(engines, ", ");
  return Fail(Coded(ErrorCode::kInvalidInput, "unsupported_engine", "engine must be one of " + list)
                  .With("available", Join(engines, ",")));
}

}  // namespace tablemere::accounts
