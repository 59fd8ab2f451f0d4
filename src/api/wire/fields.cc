#include "api/wire/fields.h"

namespace tablemere::api {

Error FieldError(const std::string& code, const char* field, const std::string& message) {
  return Error{ErrorCode::kInvalidInput, message, {}}.With("code", code).With("field", field);
}

Result<std::string> StringField(const Json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return Fail(FieldError("invalid_value", name, std::string(name) + " must be a string"));
  }
  return it->get<std::string>();
}

Result<std::optional<bool>> BoolField(const Json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::optional<bool>();
  if (!it->is_boolean()) {
    return Fail(FieldError("invalid_value", name, std::string(name) + " must be true or false"));
  }
  return std::optional<bool>(it->get<bool>());
}

Result<std::string> RequiredString(const Json& body, const char* name) {
  TM_ASSIGN(std::string value, StringField(body, name));
  if (value.empty()) {
    return Fail(FieldError("missing_field", name, std::string(name) + " is required"));
  }
  return value;
}

Result<std::optional<std::string>> OptionalString(const Json& body, const char* name) {
  if (!body.contains(name)) return std::optional<std::string>();
  TM_ASSIGN(std::string value, StringField(body, name));
  return std::optional<std::string>(std::move(value));
}

Result<std::vector<std::string>> StringList(const Json& body, const char* name) {
  std::vector<std::string> out;
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return out;
  if (!it->is_array()) {
    return Fail(FieldError("invalid_value", name, std::string(name) + " must be a list"));
  }
  for (const auto& v : *it) {
    if (!v.is_string()) {
      return Fail(
          FieldError("invalid_value", name, std::string(name) + " must be a list of strings"));
    }
    out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace tablemere::api
