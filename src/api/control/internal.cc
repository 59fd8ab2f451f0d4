// Operator routes under /internal/, behind the deployment's bootstrap secret
// (X-Bootstrap-Secret). Without the secret, with a wrong one, or when the deployment has
// none configured, every /internal/ path answers exactly as an unknown route does.
#include "accounts/input_checks.h"
#include "accounts/verification.h"
#include "api/control/routes.h"
#include "common/crypto.h"
#include "common/strings.h"
#include "identity/signing_keys.h"

namespace tablemere::api::control {
namespace {

Error Hidden(const Request& req) {
  return Error{ErrorCode::kNotFound, "No route " + req.path, {}}.With("code", "route_not_found");
}

Result<void> RequireBootstrap(const Context& ctx, const Request& req) {
  if (ctx.options.bootstrap_secret.empty()) return Fail(Hidden(req));
  auto sent = req.headers.Get("X-Bootstrap-Secret");
  if (!sent || !crypto::ConstantTimeEquals(*sent, ctx.options.bootstrap_secret)) {
    return Fail(Hidden(req));
  }
  return {};
}

using Handler = std::function<Result<Response>(Request&, const PathParams&)>;

// An operator route: the secret first, then the handler.
void Internal(Binder& b, Context& ctx, const char* method, const char* pattern, Handler h) {
  b.Open(method, pattern,
         [&ctx, h = std::move(h)](Request& req, const PathParams& p) -> Result<Response> {
           TM_TRY(RequireBootstrap(ctx, req));
           return h(req, p);
         });
}

}  // namespace

void BindInternal(Binder& b, Context& ctx) {
  Internal(b, ctx, "GET", "/internal/signup-codes/{email}",
           [&ctx](Request&, const PathParams& p) -> Result<Response> {
             TM_ASSIGN(auto codes, ctx.verification.Codes(p.at("email")));
             if (!codes.signup && !codes.recover) {
               return Fail(Error{
                   ErrorCode::kNotFound,
                   "No readable code is pending for this address (codes are "
                   "readable only when no mail sender is configured)",
                   {}}.With("code", "no_pending_code"));
             }
             Json out = {{"email", ToLower(p.at("email"))},
                         {"signup_code", codes.signup ? Json(*codes.signup) : Json(nullptr)},
                         {"recover_code", codes.recover ? Json(*codes.recover) : Json(nullptr)},
                         {"expires_at", FormatIso8601(codes.expires_ms)}};
             return Response::Json(200, out.dump());
           });

  // Runs maintenance jobs on one table now and answers with each job's result.
  Internal(b, ctx, "POST", "/internal/maintenance/run",
           [&ctx](Request& req, const PathParams&) -> Result<Response> {
             TM_ASSIGN(Json body, Body(req));
             TM_ASSIGN(std::string warehouse_id, RequiredString(body, "warehouse_id"));
             TM_ASSIGN(std::string ns_text, RequiredString(body, "namespace"));
             TM_ASSIGN(std::string table, RequiredString(body, "table"));
             TM_ASSIGN(std::vector<std::string> jobs, StringList(body, "jobs"));
             if (jobs.empty()) jobs = {"expire"};
             TM_ASSIGN(auto w, ctx.accounts.warehouses().Find(WarehouseId(warehouse_id)));
             catalog::TableIdent ident{Split(ns_text, '.'), table};
             Json results = Json::array();
             for (const auto& job : jobs) {
               if (job == "expire") {
                 TM_ASSIGN(auto r, ctx.maintenance.Expire(w, ident));
                 Json out = maintenance::ToJson(r);
                 out["job"] = job;
                 results.push_back(std::move(out));
               } else if (job == "orphans") {
                 int64_t grace_ms = ctx.maintenance.options().orphan_grace_ms;
                 if (body.contains("orphan_grace_seconds")) {
                   if (!body["orphan_grace_seconds"].is_number_unsigned()) {
                     return Fail(Error{ErrorCode::kInvalidInput,
                                       "orphan_grace_seconds must be a non-negative integer",
                                       {}}
                                     .With("code", "invalid_value")
                                     .With("field", "orphan_grace_seconds"));
                   }
                   grace_ms = body["orphan_grace_seconds"].get<int64_t>() * 1000;
                 }
                 TM_ASSIGN(auto r, ctx.maintenance.Orphans(w, ident, grace_ms));
                 Json out = maintenance::ToJson(r);
                 out["job"] = job;
                 results.push_back(std::move(out));
               } else if (job == "compact") {
                 TM_ASSIGN(auto r, ctx.maintenance.Compact(w, ident));
                 Json out = maintenance::ToJson(r);
                 out["job"] = job;
                 results.push_back(std::move(out));
               } else if (job == "rewrite-manifests") {
                 TM_ASSIGN(auto r, ctx.maintenance.RewriteManifests(w, ident));
                 Json out = maintenance::ToJson(r);
                 out["job"] = job;
                 results.push_back(std::move(out));
               } else {
                 return Fail(Error{ErrorCode::kInvalidInput, "Unknown job " + job, {}}
                                 .With("code", "invalid_value")
                                 .With("field", "jobs"));
               }
             }
             return Response::Json(200, Json{{"warehouse_id", warehouse_id},
                                             {"namespace", ns_text},
                                             {"table", table},
                                             {"results", results}}
                                            .dump());
           });

  Internal(b, ctx, "GET", "/internal/login-tokens/{email}",
           [&ctx](Request& req, const PathParams& p) -> Result<Response> {
             TM_ASSIGN(auto links, ctx.sessions.PendingLinks(p.at("email")));
             const std::string purpose = QueryMap(req)["purpose"];
             Json tokens = Json::array();
             for (const auto& l : links) {
               if (!purpose.empty() && l.purpose != purpose) continue;
               tokens.push_back({{"purpose", l.purpose},
                                 {"token", l.token},
                                 {"expires_at", FormatIso8601(l.expires_ms)}});
             }
             if (tokens.empty()) {
               return Fail(Error{
                   ErrorCode::kNotFound,
                   "No readable link is pending for this address (links are "
                   "readable only when no mail sender is configured)",
                   {}}.With("code", "no_pending_token"));
             }
             Json out = {{"email", ToLower(p.at("email"))},
                         {"token", tokens[0]["token"]},
                         {"purpose", tokens[0]["purpose"]},
                         {"tokens", tokens}};
             return Response::Json(200, out.dump());
           });

  Internal(b, ctx, "POST", "/internal/principals",
           [&ctx](Request& req, const PathParams&) -> Result<Response> {
             TM_ASSIGN(Json body, Body(req));
             TM_ASSIGN(std::string email, RequiredString(body, "email"));
             TM_ASSIGN(std::string workspace, StringField(body, "workspace"));
             if (!accounts::ValidEmail(email)) {
               return Fail(Error{ErrorCode::kInvalidInput, "email is not a valid address", {}}
                               .With("code", "invalid_value")
                               .With("field", "email"));
             }
             if (workspace.empty()) workspace = email.substr(0, email.find('@'));
             TM_ASSIGN(auto r, ctx.accounts.signup().CreateAccount(
                                   {ToLower(email), workspace, workspace, {}, {}}));
             Json out = {
                 {"principal_id", r.principal.id.str()},
                 {"api_key", r.api_key},
                 {"org_id", r.org.id.str()},
                 {"warehouse_id", r.warehouse ? Json(r.warehouse->id.str()) : Json(nullptr)}};
             return Response::Json(200, out.dump());
           });

  Internal(
      b, ctx, "POST", "/internal/principals/{principal_id}/suspend",
      [&ctx](Request& req, const PathParams& p) -> Result<Response> {
        TM_ASSIGN(Json body, Body(req));
        TM_ASSIGN(auto suspended, BoolField(body, "suspended"));
        TM_ASSIGN(auto principal,
                  ctx.accounts.operator_actions().SetSuspended(
                      PrincipalId(p.at("principal_id")), suspended.value_or(true), req.request_id));
        return Response::Json(
            200,
            Json{{"principal_id", principal.id.str()}, {"suspended", principal.suspended}}.dump());
      });

  Internal(b, ctx, "POST", "/internal/api-keys/{key_id}/revoke",
           [&ctx](Request& req, const PathParams& p) -> Result<Response> {
             TM_ASSIGN(auto key, ctx.accounts.api_keys().RevokeAny(p.at("key_id"), req.request_id));
             return Response::Json(200, Json{{"key_id", key.key_id},
                                             {"principal_id", key.principal_id.str()},
                                             {"revoked", true}}
                                            .dump());
           });

  Internal(
      b, ctx, "POST", "/internal/clock",
      [&ctx](Request& req, const PathParams&) -> Result<Response> {
        if (!ctx.options.advance_clock) return Fail(Hidden(req));
        TM_ASSIGN(Json body, Body(req));
        auto seconds = body.find("advance_seconds");
        if (seconds == body.end() || !seconds->is_number_integer() || seconds->get<int64_t>() < 0) {
          return Fail(Error{ErrorCode::kInvalidInput, "advance_seconds: a whole number >= 0", {}}
                          .With("code", "invalid_value")
                          .With("field", "advance_seconds"));
        }
        ctx.options.advance_clock(seconds->get<int64_t>() * 1000);
        return Response::Json(200, Json{{"advanced_seconds", seconds->get<int64_t>()}}.dump());
      });

  Internal(b, ctx, "POST", "/internal/backup",
           [&ctx](Request& req, const PathParams&) -> Result<Response> {
             if (!ctx.options.backup) return Fail(Hidden(req));
             TM_ASSIGN(Json body, Body(req));
             TM_ASSIGN(std::string to, RequiredString(body, "to"));
             TM_ASSIGN(std::string done, ctx.options.backup(to));
             return Response::Json(200, done);
           });

  Internal(b, ctx, "POST", "/internal/signing-keys/rotate",
           [&ctx](Request&, const PathParams&) -> Result<Response> {
             auto* keys = ctx.accounts.auth().signing_keys();
             if (keys == nullptr) return Fail(ErrorCode::kNotImplemented, "no signing keys");
             // The previous key stays published until the tokens it signed expire.
             constexpr int64_t kKeepPreviousMs = (900 + 60) * 1000;
             TM_TRY(keys->Rotate(kKeepPreviousMs));
             return Response::Json(200, Json{{"kid", keys->CurrentKid()}}.dump());
           });

  Internal(
      b, ctx, "POST", "/internal/usage",
      [&ctx](Request& req, const PathParams&) -> Result<Response> {
        TM_ASSIGN(Json body, Body(req));
        TM_ASSIGN(std::string warehouse, RequiredString(body, "warehouse_id"));
        std::optional<metastore::UsageSample> reported;
        if (body.contains("bytes") || body.contains("blob_bytes")) {
          auto number = [&](const char* k) -> Result<int64_t> {
            if (!body.contains(k)) return int64_t{0};
            if (!body[k].is_number_integer() || body[k].get<int64_t>() < 0) {
              return Fail(Error{ErrorCode::kInvalidInput, std::string(k) + ": a count >= 0", {}}
                              .With("code", "invalid_value")
                              .With("field", k));
            }
            return body[k].get<int64_t>();
          };
          metastore::UsageSample s;
          TM_ASSIGN(s.table_bytes, number("bytes"));
          TM_ASSIGN(s.table_objects, number("objects"));
          TM_ASSIGN(s.blob_bytes, number("blob_bytes"));
          TM_ASSIGN(s.blob_objects, number("blob_objects"));
          reported = s;
        }
        TM_ASSIGN(auto s, ctx.accounts.usage().RecordUsage(WarehouseId(warehouse), reported));
        // Recording a footprint recomputes the quota (API reference): the enforcement pass.
        TM_ASSIGN(auto pass, ctx.accounts.usage().EnforceQuotas());
        Json out = {{"warehouse_id", s.warehouse_id.str()},
                    {"bytes", s.table_bytes},
                    {"objects", s.table_objects},
                    {"blob_bytes", s.blob_bytes},
                    {"blob_objects", s.blob_objects},
                    {"measured_at", FormatIso8601(s.at_ms)},
                    {"measured", !reported.has_value()},
                    {"quota",
                     {{"orgs_over", pass.orgs_over},
                      {"made_read_only", pass.made_read_only},
                      {"made_writable", pass.made_writable}}}};
        return Response::Json(200, out.dump());
      });

  Internal(b, ctx, "POST", "/internal/selftest/error",
           [](Request&, const PathParams&) -> Result<Response> {
             // On purpose: the unexpected-failure path end to end (500, request id, no
             // internal text).
             return Fail(ErrorCode::kInternal, "selftest: an unhandled error raised on purpose");
           });

  Internal(b, ctx, "GET", "/internal/tls-ask",
           [&ctx](Request& req, const PathParams&) -> Result<Response> {
             // 200 only for "<bucket>.<host>" where the bucket is an existing warehouse's.
             std::string domain = ToLower(QueryMap(req)["domain"]);
             std::string bucket = domain.substr(0, domain.find('.'));
             TM_ASSIGN(bool known, ctx.accounts.warehouses().IsWarehouseBucket(bucket));
             if (known) return Response::Json(200, Json{{"ok", true}, {"bucket", bucket}}.dump());
             return Fail(Error{ErrorCode::kNotFound, "not a warehouse bucket", {}}.With(
                 "code", "not_found"));
           });
}

}  // namespace tablemere::api::control
