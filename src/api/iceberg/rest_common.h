// Wire helpers shared by the two catalog adapters (Iceberg REST and Lakekeeper generic
// tables), which speak the same JSON conventions.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/catalog_support.h"
#include "common/result.h"
#include "common/strings.h"
#include "http/message.h"

namespace tablemere::api::iceberg {

http::Response JsonResponse(int status, const nlohmann::json& body);
http::Response NoContent();

// One page of `all` as pageToken/pageSize ask (both catalog specs: the token is the
// offset of the page's first item). Without pageSize, a request carrying pageToken gets
// `default_size` items (0: all of them), one without either gets everything. Returns the
// page and the next page's token, "" after the last page.
template <typename T>
Result<std::pair<std::vector<T>, std::string>> Paginate(
    std::vector<T> all, const std::map<std::string, std::string>& query, int64_t default_size = 0) {
  const int64_t total = static_cast<int64_t>(all.size());
  int64_t start = 0;
  int64_t size = total;
  auto token = query.find("pageToken");
  if (token != query.end()) {
    if (!token->second.empty()) {
      auto n = ParseInt(token->second);
      if (!n || *n < 0) return Fail(ErrorCode::kInvalidInput, "Invalid pageToken");
      start = std::min(*n, total);
    }
    if (default_size > 0) size = default_size;
  }
  auto page_size = query.find("pageSize");
  if (page_size != query.end() && !page_size->second.empty()) {
    auto n = ParseInt(page_size->second);
    if (!n || *n < 1) return Fail(ErrorCode::kInvalidInput, "pageSize must be a positive integer");
    size = *n;
  }
  // Clamped so a huge pageSize cannot overflow start + size.
  const int64_t end = start + std::min(size, total - start);
  std::vector<T> page;
  page.reserve(static_cast<size_t>(end - start));
  for (int64_t i = start; i < end; i++) page.push_back(std::move(all[static_cast<size_t>(i)]));
  return std::pair<std::vector<T>, std::string>{std::move(page),
                                                end < total ? std::to_string(end) : ""};
}
// [{"prefix", "config"}] as the StorageCredential list of both specs.
nlohmann::json CredentialsJson(const std::vector<catalog::StorageCredential>& credentials);
// {"namespace": [...], "name": "..."} under `field` of a request body.
Result<catalog::TableIdent> IdentField(const nlohmann::json& body, const char* field);

}  // namespace tablemere::api::iceberg
