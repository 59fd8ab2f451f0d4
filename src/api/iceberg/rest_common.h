// Wire helpers shared by the two catalog adapters (Iceberg REST and Lakekeeper generic
// tables), which speak the same JSON conventions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/catalog_support.h"
#include "common/result.h"
#include "http/message.h"

namespace tablemere::api::iceberg {

http::Response JsonResponse(int status, const nlohmann::json& body);
http::Response NoContent();
// The request body parsed as JSON (any value); kInvalidInput when malformed or over `limit`.
Result<nlohmann::json> ParseJsonBody(http::Request& request, size_t limit);
// First value of each query parameter, decoded.
std::map<std::string, std::string> QueryMap(const http::Request& request);
// [{"prefix", "config"}] as the StorageCredential list of both specs.
nlohmann::json CredentialsJson(const std::vector<catalog::StorageCredential>& credentials);
// {"namespace": [...], "name": "..."} under `field` of a request body.
Result<catalog::TableIdent> IdentField(const nlohmann::json& body, const char* field);

}  // namespace tablemere::api::iceberg
