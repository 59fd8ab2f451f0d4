#include "client/outcome.h"

namespace tablemere::client {

std::string Failure::code() const {
  if (envelope.is_object() && envelope.contains("error") && envelope["error"].is_object()) {
    return envelope["error"].value("code", "");
  }
  return "";
}

Failure LocalFailure(const std::string& code, const std::string& message,
                     const std::string& remedy) {
  Json e = {{"code", code}, {"message", message}};
  if (!remedy.empty()) e["remedy"] = remedy;
  return Failure{0, Json{{"error", e}}, ""};
}

Outcome Request(const ApiClient& api, const Call& call) {
  auto answer = api.Send(call);
  if (!answer) {
    const Error& e = answer.error();
    return std::unexpected(
        LocalFailure(e.Detail("code").empty() ? "client_error" : e.Detail("code"), e.message,
                     e.Detail("remedy")));
  }
  if (answer->ok()) return answer->body.is_null() ? Json::object() : answer->body;
  Failure f{answer->status, answer->body, answer->retry_after};
  if (!f.envelope.is_object() || !f.envelope.contains("error") ||
      !(f.envelope["error"].is_object() || f.envelope["error"].is_string())) {
    f.envelope = {
        {"error",
         {{"code", answer->status >= 500 ? "server_error" : "unexpected_answer"},
          {"message", "HTTP " + std::to_string(answer->status) + " without an error body"}}}};
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
  if (f.envelope.is_object() && f.envelope.contains("error") && f.envelope["error"].is_string()) {
    f.envelope = {
        {"error",
         {{"code", f.envelope["error"]}, {"message", f.envelope.value("error_description", "")}}}};
  }
  return std::unexpected(f);
}

std::optional<Failure> CheckConfirmation(const Json& warehouse, const std::string& confirm) {
  const std::string name = warehouse.value("name", "");
  if (warehouse.value("unresolved", false) || confirm == name) return std::nullopt;
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
    if (code == "unreachable" || code == "route_missing") return ExitClass::kRetry;
    if (code == "missing_credential") return ExitClass::kAuth;
    if (code == "ambiguous_name") return ExitClass::kLimitOrConflict;
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
      if (code == "quota_exceeded" || code == "limit_exceeded") return ExitClass::kLimitOrConflict;
      if (code == "verification_required" || code == "terms_required") {
        return ExitClass::kInvalidInput;
      }
      return ExitClass::kAuth;
    case 404:
      return ExitClass::kNotFound;
    case 409:
    case 429:
      return ExitClass::kLimitOrConflict;
    default:
      return f.http_status >= 500 ? ExitClass::kRetry : ExitClass::kInvalidInput;
  }
}

}  // namespace tablemere::client
