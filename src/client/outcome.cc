#include "client/outcome.h"

#include <cstdlib>

namespace tablemere::client {

std::string Failure::code() const {
  const Json& error = FieldOf(envelope, "error");
  const Json& code = FieldOf(error, "code");
  if (code.is_string()) return code.get<std::string>();
  if (code.is_number()) {
    // The Iceberg REST error model: an HTTP-like integer code, the kind of error in type.
    std::string type = StringOf(error, "type");
    return type.empty() ? code.dump() : type;
  }
  return "";
}

Failure LocalFailure(const std::string& code, const std::string& message,
                     const std::string& remedy) {
  Json e = {{"code", code}, {"message", message}};
  if (!remedy.empty()) e["remedy"] = remedy;
  return Failure{0, Json{{"error", e}}, ""};
}

Failure LocalFailure(const Error& error, const std::string& fallback_code) {
  const std::string code = error.Detail("code");
  return LocalFailure(code.empty() ? fallback_code : code, error.message, error.Detail("remedy"));
}

const Json& FieldOf(const Json& j, const std::string& key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string StringOf(const Json& j, const std::string& key) {
  const Json& v = FieldOf(j, key);
  return v.is_string() ? v.get<std::string>() : "";
}

const Json& ListOf(const Json& j, const std::string& key) {
  static const Json kEmpty = Json::array();
  const Json& v = FieldOf(j, key);
  return v.is_array() ? v : kEmpty;
}

Outcome Request(const ApiClient& api, const Call& call) {
  auto answer = api.Send(call);
  if (!answer) return std::unexpected(LocalFailure(answer.error()));
  if (answer->ok()) return answer->body.is_null() ? Json::object() : answer->body;
  Failure f{answer->status, answer->body, answer->retry_after};
  if (!f.envelope.is_object() || !f.envelope.contains("error") ||
      !(f.envelope["error"].is_object() || f.envelope["error"].is_string())) {
    f.envelope = {
        {"error",
         {{"code", answer->status >= 500 ? "server_error" : "unexpected_answer"},
          {"message", "HTTP " + std::to_string(answer->status) + " without an error body"}}}};
  }
  // A throttled or unavailable answer says when to come back: in the body's
  // retry_after_seconds, or else in the Retry-After header, copied into the envelope so
  // the caller (an agent reading stderr) finds it in one place.
  if (!f.retry_after.empty() && f.envelope["error"].is_object() &&
      !f.envelope["error"].contains("retry_after_seconds")) {
    char* end = nullptr;
    long seconds = std::strtol(f.retry_after.c_str(), &end, 10);
    if (end != f.retry_after.c_str() && *end == '\0' && seconds >= 0) {
      f.envelope["error"]["retry_after_seconds"] = seconds;
    }
  }
  if (answer->status == 404 && f.code() == "route_not_found") {
    f = LocalFailure(
        "route_missing",
        "This server has no route " + call.method + " " + call.path + "; nothing was changed",
        "The deployed control plane predates this call; upgrade the server");
  }
  return std::unexpected(std::move(f));
}

Outcome PostForm(const std::string& url,
                 const std::vector<std::pair<std::string, std::string>>& fields) {
  ApiClient api(url, "", std::string("tablemere-cli/") + TABLEMERE_VERSION);
  auto answer = Request(api, Call{.method = "POST", .form = fields, .authenticated = false});
  if (answer) return answer;
  Failure f = answer.error();
  if (FieldOf(f.envelope, "error").is_string()) {
    f.envelope = {{"error",
                   {{"code", FieldOf(f.envelope, "error")},
                    {"message", StringOf(f.envelope, "error_description")}}}};
  }
  return std::unexpected(f);
}

std::optional<Failure> CheckConfirmation(const Json& warehouse, const std::string& confirm) {
  const std::string name = StringOf(warehouse, "name");
  if (FieldOf(warehouse, "unresolved") == true || confirm == name) return std::nullopt;
  Failure f = LocalFailure("confirmation_required",
                           "Type the catalog's name, exactly, in confirm; nothing was sent",
                           "The name is shown by: tablemere catalog list");
  f.envelope["error"]["field"] = "confirm";
  f.envelope["error"]["confirm_with"] = name;
  return f;
}

ExitClass ClassOf(const Failure& f) {
  const std::string code = f.code();
  if (f.http_status == 0) {
    // route_missing (this server predates the call: retrying cannot help) and
    // ambiguous_name (pass the warehouse_id instead) are the caller's to fix: class 1.
    if (code == "unreachable") return ExitClass::kRetry;
    if (code == "missing_credential") return ExitClass::kAuth;
    if (code.ends_with("_not_found")) return ExitClass::kNotFound;
    return ExitClass::kInvalidInput;
  }
  switch (f.http_status) {
    case 400:
    case 410:
    case 413:
    case 422:
      return ExitClass::kInvalidInput;
    case 401:
      return code == "invalid_code" ? ExitClass::kInvalidInput : ExitClass::kAuth;
    case 403:
      // The key is fine but does not allow this (forbidden, insufficient_role, a level
      // too low): re-authenticating cannot help; ask for access or change the plan. Only a
      // suspended principal or a revoked key is an auth problem, and a missing Terms
      // acceptance or verification is the caller's to fix.
      if (code == "principal_suspended" || code == "api_key_revoked") return ExitClass::kAuth;
      if (code == "verification_required" || code == "terms_required") {
        return ExitClass::kInvalidInput;
      }
      return ExitClass::kLimitOrConflict;
    case 404:
      return ExitClass::kNotFound;
    case 409:
      // Not a real conflict: the name matches several catalogs, and the caller fixes it by
      // passing the warehouse_id (one class, whether the client or the server found it).
      if (code == "ambiguous_name") return ExitClass::kInvalidInput;
      return ExitClass::kLimitOrConflict;
    case 429:
      // Throttled: safe to retry once retry_after_seconds (in the envelope) have passed.
      return ExitClass::kRetry;
    default:
      return f.http_status >= 500 ? ExitClass::kRetry : ExitClass::kInvalidInput;
  }
}

}  // namespace tablemere::client
