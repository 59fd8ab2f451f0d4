#include "api/iceberg/rest_common.h"

#include "common/strings.h"

namespace tablemere::api::iceberg {

using Json = nlohmann::json;

http::Response JsonResponse(int status, const Json& body) {
  return http::Response::Json(status, body.dump());
}

http::Response NoContent() {
  http::Response r;
  r.status = 204;
  return r;
}

Json CredentialsJson(const std::vector<catalog::StorageCredential>& credentials) {
  Json list = Json::array();
  for (const auto& c : credentials) {
    list.push_back({{"prefix", c.prefix}, {"config", Json(c.config)}});
  }
  return list;
}

Result<catalog::TableIdent> IdentField(const Json& body, const char* field) {
  if (!body.is_object()) return Fail(ErrorCode::kInvalidInput, "Expected a JSON object");
  auto it = body.find(field);
  if (it == body.end() || !it->is_object() || !it->contains("name") || !(*it)["name"].is_string() ||
      !it->contains("namespace") || !(*it)["namespace"].is_array()) {
    return Fail(ErrorCode::kInvalidInput, std::string(field) + " {namespace, name} is required");
  }
  catalog::TableIdent t;
  for (const auto& level : (*it)["namespace"]) {
    if (!level.is_string()) {
      return Fail(ErrorCode::kInvalidInput, "namespace levels must be strings");
    }
    t.ns.push_back(level.get<std::string>());
  }
  t.name = (*it)["name"].get<std::string>();
  return t;
}

}  // namespace tablemere::api::iceberg
