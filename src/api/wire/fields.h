// Typed reads of JSON fields that refuse the wrong JSON type with a field error instead
// of reading it as absent. Shared by the server's request parsing and the client's answer
// parsing; no HTTP here.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace tablemere::api {

using Json = nlohmann::json;

// A string field: "" when absent or null; kInvalidInput (invalid_value, field) when the
// field holds another JSON type.
Result<std::string> StringField(const Json& body, const char* name);
// A boolean field: nullopt when absent or null.
Result<std::optional<bool>> BoolField(const Json& body, const char* name);
// A required string field: kInvalidInput (missing_field) when absent or empty.
Result<std::string> RequiredString(const Json& body, const char* name);
// A string field that may be absent (nullopt) but not of another type.
Result<std::optional<std::string>> OptionalString(const Json& body, const char* name);
// A list of strings: empty when absent or null.
Result<std::vector<std::string>> StringList(const Json& body, const char* name);
// kInvalidInput with code `code` naming `field`.
Error FieldError(const std::string& code, const char* field, const std::string& message);

}  // namespace tablemere::api
