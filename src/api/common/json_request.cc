#include "api/common/json_request.h"

#include "common/strings.h"

namespace tablemere::api {
namespace {

Error FieldError(const std::string& code, const char* field, const std::string& message) {
  return Error{ErrorCode::kInvalidInput, message, {}}.With("code", code).With("field", field);
}

}  // namespace

Result<Json> ParseJsonObject(http::Request& req, size_t max_bytes, EmptyBody empty) {
  auto body = http::ReadAll(*req.body, max_bytes);
  if (!body) {
    if (body.error().code == ErrorCode::kInvalidInput) {
      return Fail(Error{ErrorCode::kInvalidInput,
                        "The request body is larger than " + std::to_string(max_bytes) + " bytes",
                        {}}
                      .With("code", "body_too_large")
                      .With("limit", std::to_string(max_bytes)));
    }
    return Fail(body.error());
  }
  if (body->empty() && empty == EmptyBody::kEmptyObject) return Json::object();
  Json j = Json::parse(*body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Fail(Error{ErrorCode::kInvalidInput, "The request body must be a JSON object", {}}.With(
        "code", "invalid_json"));
  }
  return j;
}

std::map<std::string, std::string> QueryMap(const http::Request& req) {
  std::map<std::string, std::string> q;
  if (auto parsed = ParseQuery(req.query)) {
    for (auto& [k, v] : *parsed) q.emplace(k, v);
  }
  return q;
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

}  // namespace tablemere::api
