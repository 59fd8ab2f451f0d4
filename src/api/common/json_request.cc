#include "api/common/json_request.h"

#include "common/strings.h"

namespace tablemere::api {

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

}  // namespace tablemere::api
