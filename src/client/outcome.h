// A control-API call as a client reports it: the answer's JSON, or a Failure carrying the
// API's error envelope unchanged (with its HTTP status) or one of the client's own
// envelopes (http_status 0): missing_credential, unreachable, route_missing,
// ambiguous_name, org_required, no_organization, confirmation_required, invalid_value.
// The CLI turns a Failure into an exit code; the MCP server into an isError result.
#pragma once

#include <expected>
#include <string>

#include "client/api_client.h"

namespace tablemere::client {

struct Failure {
  int http_status = 0;  // 0: the client's own envelope, nothing reached the API
  Json envelope;        // {"error": {"code", "message", …}}
  std::string retry_after;
  // The error's code: error.code when it is a string; for the Iceberg REST error model
  // ({"code": 404, "type": "NoSuchTableException"}) its type, else the integer as text;
  // "" when there is none. Never throws, whatever the server sent.
  std::string code() const;
};

using Outcome = std::expected<Json, Failure>;

// A client-side failure in the API's envelope shape.
Failure LocalFailure(const std::string& code, const std::string& message,
                     const std::string& remedy = "");
// A client-side Error (settings, transport) as a Failure: its detail "code" (or
// `fallback_code`), its message and its detail "remedy".
Failure LocalFailure(const Error& error, const std::string& fallback_code = "client_error");

// Reads of an answer this client does not trust to have any particular shape: the field
// when `j` is an object holding it, else null (FieldOf), "" unless it is a string
// (StringOf), or an empty array unless it is an array (ListOf). None of them throws.
const Json& FieldOf(const Json& j, const std::string& key);
std::string StringOf(const Json& j, const std::string& key);
const Json& ListOf(const Json& j, const std::string& key);

// Sends `call`; a non-2xx answer becomes a Failure holding the server's envelope (a 404
// for a route this server does not have becomes route_missing, naming method and path).
Outcome Request(const ApiClient& api, const Call& call);

// POSTs a form to an absolute URL (an external issuer's OAuth endpoint). An OAuth error
// answer {"error": "authorization_pending", "error_description"} becomes a Failure whose
// code is that error.
Outcome PostForm(const std::string& url,
                 const std::vector<std::pair<std::string, std::string>>& fields);

// The typed confirmation of a destructive call on a warehouse, checked before anything is
// sent: a Failure in the API's own shape (confirmation_required, field confirm,
// confirm_with the name) when `confirm` is not the resolved warehouse's exact name. A
// warehouse that did not resolve is left to the API, which checks again.
std::optional<Failure> CheckConfirmation(const Json& warehouse, const std::string& confirm);

// The exit-code classes of the CLI reference.
enum class ExitClass : int {
  kOk = 0,
  kInvalidInput = 1,
  kLimitOrConflict = 2,
  kAuth = 3,
  kNotFound = 4,
  kRetry = 5,
  kUsage = 6,
};
ExitClass ClassOf(const Failure& f);

}  // namespace tablemere::client
