// The control API as its clients (the CLI and the MCP server) call it: one HTTPS/HTTP
// request per call through libcurl, JSON in and out, the API key as the bearer. Nothing
// is cached between calls. No server types here: requests are api/wire structs' JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace tablemere::client {

using Json = nlohmann::json;

// What the server answered: its status and its JSON body (null when the body was empty,
// a string when it was not JSON).
struct Answer {
  int status = 0;
  Json body;
  std::string retry_after;  // the Retry-After header, "" when absent
  bool ok() const { return status >= 200 && status < 300; }
};

struct Call {
  std::string method = "GET";
  std::string path;  // "/v1/…", already escaped where it carries names
  std::vector<std::pair<std::string, std::string>> query;
  std::optional<Json> body;
  // An application/x-www-form-urlencoded body instead (OAuth endpoints), when not empty.
  std::vector<std::pair<std::string, std::string>> form;
  std::string idempotency_key;  // "" for none
  bool authenticated = true;    // false: no Authorization header (signup, recovery, device)
};

class ApiClient {
 public:
  // `base_url` like "https://api.tablemere.eu" (a trailing slash is dropped); `api_key`
  // may be empty, then authenticated calls fail with kUnauthenticated locally, before any
  // traffic (code missing_credential).
  ApiClient(std::string base_url, std::string api_key, std::string user_agent);

  // One request. Any HTTP answer is a success here (the caller reads the status); the
  // error is the transport's: kUnavailable with code `unreachable` when nothing answered.
  Result<Answer> Send(const Call& call) const;

  const std::string& base_url() const { return base_url_; }
  bool has_key() const { return !api_key_.empty(); }

  // A path segment escaped for a URL (names may hold any character).
  static std::string Escape(const std::string& segment);

 private:
  std::string base_url_;
  std::string api_key_;
  std::string user_agent_;
};

}  // namespace tablemere::client
