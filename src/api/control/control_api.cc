#include "api/control/control_api.h"

#include <ctime>
#include <nlohmann/json.hpp>

#include "accounts/handles.h"
#include "common/clock.h"
#include "common/strings.h"
#include "http/router.h"
#include "storage/access.h"

namespace tablemere::api::control {
namespace {

using http::PathParams;
using http::Request;
using http::Response;
using Json = nlohmann::json;

// Request bodies are limited to 1 MB (API reference).
constexpr size_t kMaxBody = 1024 * 1024;

int StatusOf(const Error& e) {
  switch (e.code) {
    case ErrorCode::kInvalidInput:
      return 400;
    case ErrorCode::kUnauthenticated:
      return 401;
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kAlreadyExists:
    case ErrorCode::kConflict:
    case ErrorCode::kQuotaExceeded:
      return 409;
    case ErrorCode::kRateLimited:
      return 429;
    case ErrorCode::kNotImplemented:
      return 501;
    case ErrorCode::kUnavailable:
      return 503;
    case ErrorCode::kInternal:
      return 500;
  }
  return 500;
}

std::string DefaultCode(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidInput:
      return "invalid_value";
    case ErrorCode::kUnauthenticated:
      return "unauthorized";
    case ErrorCode::kPermissionDenied:
      return "forbidden";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kAlreadyExists:
      return "already_exists";
    case ErrorCode::kConflict:
      return "conflict";
    case ErrorCode::kQuotaExceeded:
      return "quota_exceeded";
    case ErrorCode::kRateLimited:
      return "rate_limited";
    case ErrorCode::kNotImplemented:
      return "not_implemented";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "internal";
}

Response ErrorResponse(const Request& req, const Error& e) {
  int status = StatusOf(e);
  Json err = {{"code", e.Detail("code").empty() ? DefaultCode(e.code) : e.Detail("code")},
              {"message", status == 500 ? "internal error" : e.message},
              {"request_id", req.request_id}};
  for (const auto& [k, v] : e.detail) {
    if (k == "code") continue;
    if (k == "available" || k == "candidates") {
      err[k] = Split(v, ',');
    } else {
      err[k] = v;
    }
  }
  return Response::Json(status, Json{{"error", err}}.dump());
}

Result<Json> ParseBody(Request& req) {
  TM_ASSIGN(std::string body, http::ReadAll(*req.body, kMaxBody));
  if (body.empty()) return Json::object();
  Json j = Json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Fail(Error{ErrorCode::kInvalidInput, "The request body must be a JSON object", {}}.With(
        "code", "invalid_json"));
  }
  return j;
}

// The query string as a map (the first of repeated names wins).
std::map<std::string, std::string> QueryMap(const Request& req) {
  std::map<std::string, std::string> q;
  if (auto parsed = ParseQuery(req.query)) {
    for (auto& [k, v] : *parsed) q.emplace(k, v);
  }
  return q;
}

std::string StringField(const Json& body, const char* name) {
  auto it = body.find(name);
  return it != body.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

struct ControlApi::Impl {
  accounts::AccountService& accounts;
  ControlApiOptions options;
  http::Router router;

  using Handler = Result<Response> (Impl::*)(Request&, const PathParams&);
  using AuthedHandler = Result<Response> (Impl::*)(Request&, const PathParams&,
                                                   const accounts::Caller&);

  Impl(accounts::AccountService& a, ControlApiOptions o) : accounts(a), options(std::move(o)) {
    Open("GET", "/healthz", &Impl::Health);
    Open("GET", "/livez", &Impl::Live);
    Open("POST", "/v1/signup", &Impl::Signup);
    Authed("GET", "/v1/connection", &Impl::Connection);
    Authed("GET", "/v1/orgs", &Impl::Orgs);
    Authed("POST", "/v1/orgs/{org_id}/agents", &Impl::CreateAgent);
    Authed("POST", "/v1/warehouses/{warehouse_id}/rotate", &Impl::Rotate);
    Authed("GET", "/v1/audit", &Impl::Audit);
    Open("GET", "/v1/handles/{handle}", &Impl::HandleCheck);
    Authed("POST", "/v1/api-keys", &Impl::CreateApiKey);
    Authed("GET", "/v1/api-keys", &Impl::ListApiKeys);
    Authed("DELETE", "/v1/api-keys/{key_id}", &Impl::RevokeApiKey);
    Authed("GET", "/v1/projects", &Impl::ListProjects);
    Authed("POST", "/v1/projects", &Impl::CreateProject);
    Authed("GET", "/v1/warehouses", &Impl::ListWarehouses);
  }

  void Open(const std::string& method, const std::string& pattern, Handler h) {
    router.Add(method, pattern, [this, h](Request& req, const PathParams& p) {
      auto r = (this->*h)(req, p);
      return r ? std::move(*r) : ErrorResponse(req, r.error());
    });
  }

  void Authed(const std::string& method, const std::string& pattern, AuthedHandler h) {
    router.Add(method, pattern, [this, h](Request& req, const PathParams& p) {
      auto caller = Authenticate(req);
      if (!caller) return ErrorResponse(req, caller.error());
      auto r = (this->*h)(req, p, *caller);
      return r ? std::move(*r) : ErrorResponse(req, r.error());
    });
  }

  Result<accounts::Caller> Authenticate(const Request& req) {
    auto auth = req.headers.Get("Authorization");
    if (!auth || !StartsWith(ToLower(*auth), "bearer ")) {
      return Fail(
          Error{ErrorCode::kUnauthenticated, "Send Authorization: Bearer <API key> (al_live_…)", {}}
              .With("code", "invalid_api_key")
              .With("remedy", "tablemere signup, or tablemere login, gives you a key"));
    }
    return accounts.Authenticate(Trim(auth->substr(7)));
  }

  Response Handle(Request& req) {
    auto match = router.Find(req.method, req.path);
    if (match.handler) return (*match.handler)(req, match.params);
    Error e{match.path_known ? ErrorCode::kInvalidInput : ErrorCode::kNotFound,
            match.path_known ? "Method not allowed on " + req.path : "No route " + req.path,
            {}};
    e.With("code", match.path_known ? "method_not_allowed" : "route_not_found");
    Response r = ErrorResponse(req, e);
    if (match.path_known) r.status = 405;
    return r;
  }

  // ---------------------------------------------------------------- routes
  // Liveness only: the process serves HTTP. Touches nothing (also the benchmarks'
  // trivial-endpoint reference).
  Result<Response> Live(Request&, const PathParams&) {
    return Response::Json(200, R"({"ok":true})");
  }

  Result<Response> Health(Request&, const PathParams&) {
    bool state = options.state_ok ? options.state_ok() : true;
    bool catalog = options.catalog_ok ? options.catalog_ok() : true;
    Json body = {{"ok", state && catalog},
                 {"state_ok", state},
                 {"catalog_ok", catalog},
                 {"issuer", accounts.urls().api},
                 {"kid", nullptr}};
    return Response::Json(state && catalog ? 200 : 503, body.dump());
  }

  Json ConnectionJson(const accounts::Connection& c) {
    const auto& w = c.access.warehouse;
    std::string bucket = storage::TableBucketName(w.id);
    Json j = {
        {"engine", c.engine},
        {"catalog_uri", c.urls.catalog},
        {"warehouse", "s3://" + bucket + "/"},
        {"warehouse_name", bucket},
        {"warehouse_id", w.id},
        {"project_id", w.project_id},
        {"level", c.access.level},
        {"level_via", c.access.level_via},
        {"identity", c.identity},
        {"catalog_credential",
         {{"client_id", c.identity},
          {"client_secret", c.client_secret},
          {"oauth2_server_uri", c.urls.catalog + "/v1/oauth/tokens"},
          {"grant", "client_credentials"},
          {"note",
           "Engines exchange this credential for 900 s catalog tokens themselves. It is "
           "also the static S3 key for the warehouse's two buckets."}}},
        {"storage_endpoint", c.urls.s3},
        {"blob_bucket", storage::BlobBucketName(w.id)},
        {"blob_note",
         "Put files that are not Iceberg tables (images, documents) in the blob bucket; "
         "same credential, path-style, region us-east-1."},
        {"blob_example_python", "import boto3\ns3 = boto3.client('s3', endpoint_url='" + c.urls.s3 +
                                    "', aws_access_key_id='" + c.identity +
                                    "', aws_secret_access_key='" + c.client_secret +
                                    "', region_name='us-east-1')\ns3.put_object(Bucket='b-" + w.id +
                                    "', Key='hello.txt', Body=b'hello')\n"},
        {"token_endpoint", c.urls.catalog + "/v1/oauth/tokens"},
        {"token_exchange",
         {{"grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"}, {"supported", true}}},
        {"notes", c.notes},
    };
    if (c.engine == "duckdb") j["sql"] = c.sql;
    if (c.engine == "pyiceberg") j["python"] = c.python;
    if (c.engine == "spark") j["conf"] = c.conf;
    return j;
  }

  Result<Response> Signup(Request& req, const PathParams&) {
    TM_ASSIGN(Json body, ParseBody(req));
    accounts::SignupRequest r;
    r.email = StringField(body, "email");
    r.workspace = StringField(body, "workspace");
    r.engine = StringField(body, "engine");
    if (r.engine.empty()) r.engine = "duckdb";
    auto terms = body.find("accept_terms");
    r.accept_terms = terms != body.end() && terms->is_boolean() && terms->get<bool>();
    TM_ASSIGN(auto result, accounts.Signup(r));
    accounts::WarehouseAccess access{result.warehouse, "write", "admin"};
    TM_ASSIGN(auto connection, accounts.BuildConnection(access, r.engine));
    Json out = {
        {"api_key", result.api_key},
        {"api_key_note", "Shown once. Only its hash is stored; keep it somewhere safe."},
        {"principal_id", result.principal.id},
        {"project_id", result.project.id},
        {"warehouse_id", result.warehouse.id},
        {"organization", {{"org_id", result.org.id}, {"role", "admin"}, {"joined_via", "signup"}}},
        {"connection", ConnectionJson(connection)},
        {"next", Json::array({"Run the connection recipe in your engine",
                              "GET /v1/connection?engine=pyiceberg for another engine"})},
        {"terms",
         {{"version", "local"}, {"accepted", true}, {"url", accounts.urls().api + "/terms"}}},
    };
    return Response::Json(201, out.dump());
  }

  Result<Response> Connection(Request& req, const PathParams&, const accounts::Caller& caller) {
    auto q = QueryMap(req);
    std::string engine = q.count("engine") ? q["engine"] : "duckdb";
    std::string warehouse = q.count("warehouse_id") ? q["warehouse_id"] : "";
    TM_ASSIGN(auto access, warehouse.empty() ? accounts.DefaultWarehouse(caller)
                                             : accounts.Access(caller, warehouse));
    TM_ASSIGN(auto connection, accounts.BuildConnection(access, engine));
    return Response::Json(200, ConnectionJson(connection).dump());
  }

  Result<Response> Orgs(Request&, const PathParams&, const accounts::Caller& caller) {
    TM_ASSIGN(auto orgs, accounts.Orgs(caller));
    Json list = Json::array();
    for (const auto& [org, role] : orgs) {
      list.push_back({{"org_id", org.id},
                      {"name", org.name},
                      {"handle", org.handle},
                      {"status", "active"},
                      {"role", role},
                      {"domain_join", false},
                      {"domains", Json::array()},
                      {"created_at", FormatIso8601(org.created_ms)}});
    }
    return Response::Json(200, Json{{"organizations", list}}.dump());
  }

  // "24h", "7d", "30m" or an ISO-8601 instant → epoch millis; 0 when absent.
  static Result<int64_t> ParseSince(const std::string& since) {
    if (since.empty()) return int64_t{0};
    int64_t now = SystemClock().NowMillis();
    char unit = since.back();
    auto n = ParseInt(since.substr(0, since.size() - 1));
    if (n && (unit == 'm' || unit == 'h' || unit == 'd')) {
      int64_t ms = *n * (unit == 'm' ? 60'000 : unit == 'h' ? 3'600'000 : 86'400'000);
      return now - ms;
    }
    std::tm tm{};
    if (strptime(since.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) != nullptr) {
      return static_cast<int64_t>(timegm(&tm)) * 1000;
    }
    return Fail(Error{
        ErrorCode::kInvalidInput,
        "since must be like 24h, 7d, 30m or an ISO-8601 time",
        {}}.With("field", "since"));
  }

  Result<Response> Audit(Request& req, const PathParams&, const accounts::Caller& caller) {
    auto q = QueryMap(req);
    int limit = 100;
    if (q.count("limit")) {
      auto n = ParseInt(q["limit"]);
      if (!n || *n < 1 || *n > 1000) {
        return Fail(
            Error{ErrorCode::kInvalidInput, "limit must be 1..1000", {}}.With("field", "limit"));
      }
      limit = static_cast<int>(*n);
    }
    TM_ASSIGN(int64_t since, ParseSince(q["since"]));
    TM_ASSIGN(auto events, accounts.Audit(caller, q["org_id"], q["action"], since, limit));
    Json list = Json::array();
    for (const auto& e : events) {
      Json detail = Json::parse(e.detail_json, nullptr, false);
      list.push_back({{"id", e.id},
                      {"ts", FormatIso8601(e.at_ms)},
                      {"principal_id", e.principal_id},
                      {"org_id", e.org_id},
                      {"action", e.action},
                      {"target_type", e.target_type},
                      {"target_id", e.target_id},
                      {"ip", nullptr},
                      {"request_id", e.request_id},
                      {"detail", detail.is_object() ? detail : Json::object()}});
    }
    Json out = {{"events", list},
                {"count", list.size()},
                {"limit", limit},
                {"scope", q["org_id"].empty() ? "own" : "organization"},
                {"org_id", q["org_id"].empty() ? Json(nullptr) : Json(q["org_id"])},
                {"since", q["since"].empty() ? Json(nullptr) : Json(q["since"])},
                {"action", q["action"].empty() ? Json(nullptr) : Json(q["action"])},
                {"retention_days", 400}};
    return Response::Json(200, out.dump());
  }

  Result<Response> HandleCheck(Request&, const PathParams& params) {
    TM_ASSIGN(auto h, accounts.CheckHandleAvailable(params.at("handle")));
    Json out = {{"handle", h.handle},
                {"valid", h.valid},
                {"available", h.available},
                {"reason", h.reason.empty() ? Json(nullptr) : Json(h.reason)},
                {"suggestion", h.suggestion.empty() ? Json(nullptr) : Json(h.suggestion)},
                {"pattern", accounts::kHandlePattern}};
    return Response::Json(200, out.dump());
  }

  static Json KeyJson(const metastore::ApiKey& k) {
    return {{"key_id", k.key_id},
            {"label", k.label},
            {"created_at", FormatIso8601(k.created_ms)},
            // Not tracked yet: recording it would add a write to every authenticated call.
            {"last_used_at", nullptr},
            {"revoked_at", k.revoked ? Json(FormatIso8601(k.revoked_ms)) : Json(nullptr)}};
  }

  Result<Response> CreateApiKey(Request& req, const PathParams&, const accounts::Caller& caller) {
    TM_ASSIGN(Json body, ParseBody(req));
    if (body.contains("label") && !body["label"].is_string()) {
      return Fail(
          Error{ErrorCode::kInvalidInput, "label must be a string", {}}.With("field", "label"));
    }
    TM_ASSIGN(auto issued,
              accounts.CreateApiKey(caller, StringField(body, "label"), req.request_id));
    Json out = {{"api_key", issued.api_key},
                {"key_id", issued.record.key_id},
                {"label", issued.record.label},
                {"principal_id", caller.principal.id},
                {"note", "Shown once. Only its hash is stored; keep it somewhere safe."}};
    return Response::Json(201, out.dump());
  }

  Result<Response> ListApiKeys(Request&, const PathParams&, const accounts::Caller& caller) {
    TM_ASSIGN(auto keys, accounts.ApiKeys(caller));
    Json list = Json::array();
    for (const auto& k : keys) list.push_back(KeyJson(k));
    return Response::Json(200, Json{{"api_keys", list}}.dump());
  }

  Result<Response> RevokeApiKey(Request& req, const PathParams& params,
                                const accounts::Caller& caller) {
    TM_ASSIGN(auto k, accounts.RevokeApiKey(caller, params.at("key_id"), req.request_id));
    return Response::Json(200, Json{{"key_id", k.key_id}, {"revoked", true}}.dump());
  }

  static Json ProjectJson(const accounts::ProjectView& p) {
    return {{"project_id", p.project.id}, {"name", p.project.name},
            {"provider", p.provider},     {"region", p.region},
            {"org_id", p.project.org_id}, {"created_at", FormatIso8601(p.project.created_ms)}};
  }

  Result<Response> ListProjects(Request&, const PathParams&, const accounts::Caller& caller) {
    TM_ASSIGN(auto projects, accounts.Projects(caller));
    Json list = Json::array();
    for (const auto& p : projects) list.push_back(ProjectJson(p));
    return Response::Json(200, Json{{"projects", list}}.dump());
  }

  Result<Response> CreateProject(Request& req, const PathParams&, const accounts::Caller& caller) {
    TM_ASSIGN(Json body, ParseBody(req));
    for (const char* field : {"name", "provider", "region", "org_id"}) {
      if (body.contains(field) && !body[field].is_string()) {
        return Fail(Error{ErrorCode::kInvalidInput, std::string(field) + " must be a string", {}}
                        .With("code", "invalid_value")
                        .With("field", field));
      }
    }
    accounts::CreateProjectRequest r{StringField(body, "name"),
                                     StringField(body, "provider"),
                                     StringField(body, "region"),
                                     StringField(body, "org_id"),
                                     req.headers.Get("Idempotency-Key").value_or(""),
                                     req.request_id};
    TM_ASSIGN(auto created, accounts.CreateProject(caller, r));
    Json out = ProjectJson(created.project);
    out["placement_immutable"] = true;
    return Response::Json(201, out.dump());
  }

  Result<Response> ListWarehouses(Request& req, const PathParams&, const accounts::Caller& caller) {
    auto q = QueryMap(req);
    // The reference names the parameter `project`; `project_id` is read too.
    std::string project = q.count("project") ? q["project"] : q["project_id"];
    TM_ASSIGN(auto listing, accounts.Warehouses(caller, project));
    Json list = Json::array();
    for (const auto& w : listing.warehouses) {
      list.push_back({{"name", w.warehouse.name},
                      {"warehouse_id", w.warehouse.id},
                      {"warehouse", "s3://" + storage::TableBucketName(w.warehouse.id) + "/"},
                      {"created_at", FormatIso8601(w.warehouse.created_ms)},
                      {"my_level", w.my_level},
                      {"my_via", w.my_via.empty() ? Json(nullptr) : Json(w.my_via)}});
    }
    int count = static_cast<int>(listing.warehouses.size());
    Json out = {{"project", listing.project.project.name},
                {"project_id", listing.project.project.id},
                {"catalog_uri", accounts.urls().catalog},
                {"warehouses", list},
                {"limit", listing.limit},
                {"headroom", std::max(0, listing.limit - count)}};
    return Response::Json(200, out.dump());
  }

  Result<Response> Rotate(Request&, const PathParams& params, const accounts::Caller& caller) {
    TM_ASSIGN(auto w, accounts.Rotate(caller, params.at("warehouse_id")));
    std::string rw = accounts::IdentityName(w.id, false);
    std::string ro = accounts::IdentityName(w.id, true);
    Json out = {
        {"warehouse_id", w.id},
        {"warehouse_name", storage::TableBucketName(w.id)},
        {"catalog_credential", {{"client_id", rw}, {"client_secret", accounts.SecretOf(w, false)}}},
        {"catalog_credential_ro",
         {{"client_id", ro}, {"client_secret", accounts.SecretOf(w, true)}}},
        {"previous_client_id", rw},
        {"previous_revoked", true},
        {"previous_client_id_ro", ro},
        {"previous_revoked_ro", true},
        {"rotated_at", FormatIso8601(SystemClock().NowMillis())},
        {"note",
         "The identities keep their names; their secrets changed. Old secrets, the "
         "catalog tokens minted from them and vended storage sessions are refused "
         "now (storage within a second). Fetch fresh recipes with GET /v1/connection."}};
    return Response::Json(200, out.dump());
  }

  Result<Response> CreateAgent(Request& req, const PathParams& params,
                               const accounts::Caller& caller) {
    TM_ASSIGN(Json body, ParseBody(req));
    std::vector<accounts::AgentGrantRequest> grants;
    if (body.contains("grants")) {
      if (!body["grants"].is_array()) {
        return Fail(
            Error{ErrorCode::kInvalidInput, "grants must be a list", {}}.With("field", "grants"));
      }
      for (const auto& g : body["grants"]) {
        if (!g.is_object()) {
          return Fail(
              Error{ErrorCode::kInvalidInput, "each grant is {warehouse_id, level}", {}}.With(
                  "field", "grants"));
        }
        grants.push_back({StringField(g, "warehouse_id"), StringField(g, "level")});
      }
    }
    TM_ASSIGN(auto agent,
              accounts.CreateAgent(caller, params.at("org_id"), StringField(body, "name"),
                                   StringField(body, "role"), grants));
    Json gl = Json::array();
    for (const auto& [g, name] : agent.grants) {
      gl.push_back({{"warehouse_id", g.warehouse_id}, {"name", name}, {"level", g.level}});
    }
    auto parsed = accounts::ParseApiKey(agent.api_key);
    Json out = {{"agent_id", agent.agent.id},
                {"name", agent.agent.display_name},
                {"org_id", agent.agent.org_id},
                {"role", agent.agent.role},
                {"grants", gl},
                {"created_by", agent.agent.created_by},
                {"created_by_display", caller.principal.display_name},
                {"created_at", FormatIso8601(agent.agent.created_ms)},
                {"last_used_at", nullptr},
                {"suspended", false},
                {"api_key", agent.api_key},
                {"key_id", parsed ? parsed->key_id : ""},
                {"note", "The api_key is shown once; only its hash is stored."}};
    return Response::Json(201, out.dump());
  }
};

ControlApi::ControlApi(accounts::AccountService& accounts, ControlApiOptions options)
    : impl_(std::make_unique<Impl>(accounts, std::move(options))) {}
ControlApi::~ControlApi() = default;
http::Response ControlApi::Handle(http::Request& request) { return impl_->Handle(request); }

}  // namespace tablemere::api::control
