// Internal to src/iceberg: typed access to JSON members with the conventions both
// metadata models use. Client input is validated strictly (kInvalidInput naming the
// field); stored metadata is read tolerantly because it was validated when written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace tablemere::iceberg {

using Json = nlohmann::json;

std::unexpected<Error> Invalid(std::string message);
std::string Str(int64_t v);
// An integer that fits int64 (JSON numbers may arrive unsigned).
bool IsInt(const Json& v);
int64_t AsInt(const Json& v);
// A member that is present and not null, or nullptr.
const Json* Member(const Json& obj, const std::string& key);
std::string FieldError(const std::string& context, const std::string& key, const char* expected);
Result<int64_t> RequireInt(const Json& obj, const std::string& key, const std::string& context);
Result<std::optional<int64_t>> OptionalInt(const Json& obj, const std::string& key,
                                           const std::string& context);
Result<std::string> RequireString(const Json& obj, const std::string& key,
                                  const std::string& context);
Result<const Json*> RequireObject(const Json& obj, const std::string& key,
                                  const std::string& context);
Result<const Json*> RequireArray(const Json& obj, const std::string& key,
                                 const std::string& context);

}  // namespace tablemere::iceberg
