#include "api/iceberg/iceberg_rest_api.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "api/common/json_request.h"
#include "api/common/route_binder.h"
#include "api/iceberg/error_model.h"
#include "api/iceberg/rest_common.h"
#include "api/iceberg/scan_planning_wire.h"
#include "common/crypto.h"
#include "common/strings.h"

namespace tablemere::api::iceberg {
namespace {

using catalog::CatalogPrincipal;
using catalog::Json;
using catalog::Namespace;
using catalog::TableIdent;
using http::PathParams;
using http::Request;
using http::Response;

// Largest JSON request body: commits carry only the changes, creates a schema.
constexpr size_t kMaxJsonBody = 16 * 1024 * 1024;

Response ErrorResponse(int status, const std::string& type, const std::string& message) {
  return ErrorModelResponse(status, type, message);
}

Json NamespaceJson(const Namespace& ns) { return Json(ns); }

// Appends `s` as a JSON string exactly as nlohmann's dump() writes it. Printable ASCII
// without quotes or backslashes (every vended value) is copied as it is; anything else
// goes through nlohmann, which escapes it and rejects invalid UTF-8.
void AppendJsonString(std::string& out, const std::string& s) {
  // A table rather than a predicate per byte: this runs over every vended value of every
  // loadTable (a few KB), and the predicate showed in profiles.
  static constexpr auto kPlain = [] {
    std::array<bool, 256> plain{};
    for (int c = 0x20; c < 0x7f; c++) plain[static_cast<size_t>(c)] = c != '"' && c != '\\';
    return plain;
  }();
  bool plain = true;
  for (char ch : s) plain &= kPlain[static_cast<unsigned char>(ch)];
  if (!plain) {
    out += Json(s).dump();
    return;
  }
  out += '"';
  out += s;
  out += '"';
}

// A string map as a JSON object; std::map's order is the order nlohmann writes keys in.
void AppendStringMap(std::string& out, const std::map<std::string, std::string>& map) {
  out += '{';
  const char* separator = "";
  for (const auto& [k, v] : map) {
    out += separator;
    AppendJsonString(out, k);
    out += ':';
    AppendJsonString(out, v);
    separator = ",";
  }
  out += '}';
}

// The LoadTableResult body is written directly rather than through nlohmann: the few
// hundred bytes of session config cost more that way than copying a 50 KB document.
// A LoadTableResult, keys in nlohmann's sorted order. The metadata document is spliced in
// as stored text; when it is the shared cached copy it is sent from there, not copied.
Response LoadResponse(const catalog::LoadedTable& t) {
  std::string config;
  AppendStringMap(config, t.config);
  Response r = Response::Json(200, "{\"config\":" + config + ",\"metadata\":");
  std::string& tail = t.shared_metadata ? r.body_tail : r.body;
  if (t.shared_metadata) {
    r.body_shared = t.shared_metadata;
  } else {
    r.body += t.metadata_json;
  }
  tail += ",\"metadata-location\":";
  if (t.metadata_location.empty()) {
    tail += "null";
  } else {
    AppendJsonString(tail, t.metadata_location);
  }
  if (!t.credentials.empty()) {
    tail += ",\"storage-credentials\":[";
    const char* separator = "";
    for (const auto& c : t.credentials) {
      tail += separator;
      tail += "{\"config\":";
      // A vended credential's config is usually the table config itself.
      if (c.config == t.config) {
        tail += config;
      } else {
        AppendStringMap(tail, c.config);
      }
      tail += ",\"prefix\":";
      AppendJsonString(tail, c.prefix);
      tail += '}';
      separator = ",";
    }
    tail += ']';
  }
  tail += '}';
  return r;
}

// One page of a list response: the items under `field`, and the token of the next page
// (null on the last).
Response PageResponse(const char* field, Json items, const std::string& next_token) {
  Json body = {{field, std::move(items)}};
  body["next-page-token"] = next_token.empty() ? Json(nullptr) : Json(next_token);
  return JsonResponse(200, body);
}

// Table or view identifiers as list responses carry them.
Json IdentifiersJson(const std::vector<TableIdent>& idents) {
  Json ids = Json::array();
  for (const auto& t : idents) ids.push_back({{"namespace", t.ns}, {"name", t.name}});
  return ids;
}

Result<Json> ParseBody(Request& req) {
  return ParseJsonObject(req, kMaxJsonBody, EmptyBody::kInvalid);
}

bool WantsVending(const Request& req) {
  auto h = req.headers.Get("X-Iceberg-Access-Delegation");
  if (!h) return true;
  return ToLower(*h).find("vended-credentials") != std::string::npos;
}

Result<std::pair<std::string, std::string>> BasicCredentials(const Request& req) {
  auto auth = req.headers.Get("Authorization");
  if (!auth || !StartsWith(ToLower(*auth), "basic ")) return std::pair<std::string, std::string>{};
  auto decoded = crypto::Base64Decode(Trim(auth->substr(6)));
  if (!decoded) return Fail(ErrorCode::kInvalidInput, "Malformed Basic credentials");
  size_t colon = decoded->find(':');
  if (colon == std::string::npos)
    return Fail(ErrorCode::kInvalidInput, "Malformed Basic credentials");
  auto id = UrlDecode(decoded->substr(0, colon), true);
  auto secret = UrlDecode(decoded->substr(colon + 1), true);
  return std::pair<std::string, std::string>{id.value_or(""), secret.value_or("")};
}

Response OAuthError(int status, const std::string& error, const std::string& description) {
  return JsonResponse(status, Json{{"error", error}, {"error_description", description}});
}

}  // namespace

struct IcebergRestApi::Impl {
  catalog::CatalogService& catalog;
  catalog::ViewService& views;
  catalog::ScanPlanService& plans;
  // Every route but /v1/config and the token endpoint authenticates for the warehouse its
  // {prefix} names; the subject picks the Iceberg exception a NotFound or Conflict becomes.
  RouteBinder<catalog::AuthenticatedCaller, Subject> binder;

  Impl(catalog::CatalogService& c, catalog::ViewService& v, catalog::ScanPlanService& sp)
      : catalog(c),
        views(v),
        plans(sp),
        binder([this](const Request& req,
                      const PathParams& params) { return Authenticate(req, params); },
               [](const Request&, const Error& e, Subject subject) {
                 return ErrorModelResponse(e, subject);
               }) {
    binder.Open(
        "GET", "/v1/config", [this](Request& r, const PathParams&) { return Config(r); },
        Subject::kOther);
    binder.Open(
        "POST", "/v1/oauth/tokens", [this](Request& r, const PathParams&) { return Token(r); },
        Subject::kOther);
    const std::string ns = "/v1/{prefix}/namespaces";
    const std::string one = ns + "/{namespace}";
    const std::string tables = one + "/tables";
    const std::string table = tables + "/{table}";
    Route("GET", ns, Subject::kNamespace, &Impl::ListNamespaces);
    Route("POST", ns, Subject::kNamespace, &Impl::CreateNamespace);
    Route("GET", one, Subject::kNamespace, &Impl::LoadNamespace);
    Route("HEAD", one, Subject::kNamespace, &Impl::NamespaceExists);
    Route("DELETE", one, Subject::kNamespace, &Impl::DropNamespace);
    Route("POST", one + "/properties", Subject::kNamespace, &Impl::UpdateProperties);
    Route("GET", tables, Subject::kNamespace, &Impl::ListTables);
    Route("POST", tables, Subject::kTable, &Impl::CreateTable);
    Route("POST", one + "/register", Subject::kTable, &Impl::RegisterTable);
    CallerRoute("GET", table, Subject::kTable, &Impl::LoadTable);
    CallerRoute("HEAD", table, Subject::kTable, &Impl::TableExists);
    Route("POST", table, Subject::kTable, &Impl::CommitTable);
    Route("DELETE", table, Subject::kTable, &Impl::DropTable);
    Route("GET", table + "/credentials", Subject::kTable, &Impl::Credentials);
    Route("POST", table + "/metrics", Subject::kTable, &Impl::Metrics);
    Route("POST", table + "/plan", Subject::kTable, &Impl::PlanTableScan);
    Route("GET", table + "/plan/{plan_id}", Subject::kTable, &Impl::FetchPlanningResult);
    Route("DELETE", table + "/plan/{plan_id}", Subject::kTable, &Impl::CancelPlanning);
    Route("POST", table + "/tasks", Subject::kTable, &Impl::FetchScanTasks);
    Route("POST", "/v1/{prefix}/tables/rename", Subject::kTable, &Impl::RenameTable);
    Route("POST", "/v1/{prefix}/transactions/commit", Subject::kTable, &Impl::CommitTransaction);
    const std::string views_path = one + "/views";
    const std::string view = views_path + "/{view}";
    Route("GET", views_path, Subject::kNamespace, &Impl::ListViews);
    Route("POST", views_path, Subject::kView, &Impl::CreateView);
    Route("GET", view, Subject::kView, &Impl::LoadView);
    Route("HEAD", view, Subject::kView, &Impl::ViewExists);
    Route("POST", view, Subject::kView, &Impl::ReplaceView);
    Route("DELETE", view, Subject::kView, &Impl::DropView);
    Route("POST", "/v1/{prefix}/views/rename", Subject::kView, &Impl::RenameView);
    Route("POST", one + "/register-view", Subject::kView, &Impl::RegisterView);
  }

  template <typename Method>
  void Route(const std::string& method, const std::string& pattern, Subject subject, Method m) {
    binder.Authed(
        method, pattern,
        [this, m](Request& req, const PathParams& params, const catalog::AuthenticatedCaller& c) {
          return (this->*m)(req, params, c.principal, c.warehouse);
        },
        subject);
  }

  // A route whose method takes the whole authenticated caller (with the table head read
  // along with its warehouse).
  template <typename Method>
  void CallerRoute(const std::string& method, const std::string& pattern, Subject subject,
                   Method m) {
    binder.Authed(
        method, pattern,
        [this, m](Request& req, const PathParams& params, const catalog::AuthenticatedCaller& c) {
          return (this->*m)(req, params, c);
        },
        subject);
  }

  // No credential at all. PyIceberg 0.12 without a token or credential sends the literal
  // "Authorization: Bearer None" (its OAuth2 manager formats an absent token).
  static bool NoToken(const Request& req) {
    auto auth = req.headers.Get("Authorization");
    if (!auth) return true;
    std::string t = Trim(*auth);
    if (!StartsWith(ToLower(t), "bearer")) return false;
    t = Trim(t.substr(6));
    return t.empty() || t == "None" || t == "null" || t == "undefined";
  }

  static Result<std::string> BearerToken(const Request& req) {
    auto auth = req.headers.Get("Authorization");
    if (!auth || !StartsWith(ToLower(*auth), "bearer ")) {
      return Fail(ErrorCode::kUnauthenticated,
                  "Authorization: Bearer <token> required; get a token at /v1/oauth/tokens");
    }
    return Trim(auth->substr(7));
  }

  // The caller and the warehouse `prefix` names, which must be its own.
  Result<catalog::AuthenticatedCaller> Authenticate(const Request& req, const std::string& prefix) {
    if (NoToken(req)) return catalog.AuthenticateAnonymous(prefix);
    TM_ASSIGN(std::string token, BearerToken(req));
    return catalog.AuthenticateFor(token, prefix);
  }

  // The same for a route: a table's read (GET or HEAD of one table, the hot loadTable)
  // also reads the table's head along with the warehouse, in one metastore read.
  Result<catalog::AuthenticatedCaller> Authenticate(const Request& req, const PathParams& params) {
    const std::string& prefix = params.at("prefix");
    const bool reads_table = (req.method == "GET" || req.method == "HEAD") &&
                             params.count("table") && params.count("namespace");
    if (!reads_table || NoToken(req)) return Authenticate(req, prefix);
    auto ident = Ident(params);
    TM_ASSIGN(std::string token, BearerToken(req));
    // A malformed name is the handler's to report.
    return catalog.AuthenticateFor(token, prefix, ident ? &*ident : nullptr);
  }

  // ---------------------------------------------------------------- config & tokens
  Result<Response> Config(Request& req) {
    auto q = QueryMap(req);
    auto caller = Authenticate(req, q.count("warehouse") ? q["warehouse"] : "");
    if (!caller) return Fail(caller.error());
    std::string prefix = catalog::CatalogService::PrefixOf(caller->warehouse);
    Json endpoints = Json::array();
    for (const char* e :
         {"GET /v1/{prefix}/namespaces",
          "POST /v1/{prefix}/namespaces",
          "GET /v1/{prefix}/namespaces/{namespace}",
          "HEAD /v1/{prefix}/namespaces/{namespace}",
          "DELETE /v1/{prefix}/namespaces/{namespace}",
          "POST /v1/{prefix}/namespaces/{namespace}/properties",
          "GET /v1/{prefix}/namespaces/{namespace}/tables",
          "POST /v1/{prefix}/namespaces/{namespace}/tables",
          "POST /v1/{prefix}/namespaces/{namespace}/register",
          "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
          "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
          "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
          "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
          "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials",
          "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
          "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan",
          "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
          "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
          "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks",
          "POST /v1/{prefix}/tables/rename",
          "POST /v1/{prefix}/transactions/commit",
          "GET /v1/{prefix}/namespaces/{namespace}/views",
          "POST /v1/{prefix}/namespaces/{namespace}/views",
          "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
          "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
          "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
          "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
          "POST /v1/{prefix}/views/rename",
          "POST /v1/{prefix}/namespaces/{namespace}/register-view"}) {
      endpoints.push_back(e);
    }
    Json body = {{"defaults", Json::object()},
                 {"overrides", {{"prefix", prefix}, {"warehouse", "s3://" + prefix + "/"}}},
                 {"endpoints", endpoints}};
    return JsonResponse(200, body);
  }

  Result<Response> Token(Request& req) {
    auto body = http::ReadAll(*req.body, 64 * 1024);
    if (!body) return OAuthError(400, "invalid_request", "Unreadable request body");
    auto form = ParseQuery(*body, true);
    if (!form) return OAuthError(400, "invalid_request", "Malformed form body");
    std::map<std::string, std::string> f;
    for (auto& [k, v] : *form) f.emplace(k, v);
    auto basic = BasicCredentials(req);
    if (!basic) return OAuthError(400, "invalid_request", basic.error().message);
    std::string grant_type = f["grant_type"];
    Result<catalog::TokenGrant> grant = Fail(ErrorCode::kInvalidInput, "");
    auto client = [&]() -> Result<catalog::TokenGrant> {
      std::string id = f.count("client_id") ? f["client_id"] : basic->first;
      std::string secret = f.count("client_secret") ? f["client_secret"] : basic->second;
      if (id.empty() || secret.empty()) {
        return Fail(
            Error{ErrorCode::kUnauthenticated, "client_id and client_secret are required", {}}.With(
                "oauth_error", "invalid_client"));
      }
      return catalog.ClientCredentials(id, secret);
    };
    if (grant_type == "client_credentials") {
      grant = client();
    } else if (grant_type == "urn:ietf:params:oauth:grant-type:token-exchange") {
      std::string subject = f["subject_token"];
      if (subject.empty()) return OAuthError(400, "invalid_request", "subject_token is required");
      grant = catalog.ExchangeToken(subject);
      // Java refreshes an expired token with Basic client credentials beside it.
      if (!grant && !basic->first.empty()) grant = client();
    } else if (grant_type == "refresh_token") {
      grant = client();
    } else {
      return OAuthError(400, "unsupported_grant_type",
                        "grant_type must be client_credentials or token-exchange");
    }
    if (!grant) {
      std::string error = grant.error().Detail("oauth_error");
      if (error.empty()) {
        return ErrorResponse(503, "ServiceUnavailableException", grant.error().message);
      }
      return OAuthError(error == "invalid_client" ? 401 : 400, error, grant.error().message);
    }
    Json resp = {{"access_token", grant->access_token},
                 {"token_type", "bearer"},
                 {"expires_in", grant->expires_in},
                 {"issued_token_type", "urn:ietf:params:oauth:token-type:access_token"}};
    Response r = JsonResponse(200, resp);
    r.headers.Set("Cache-Control", "no-store");
    return r;
  }

  // ---------------------------------------------------------------- namespaces
  static Result<Namespace> Ns(const PathParams& params) {
    return catalog::ParseNamespace(params.at("namespace"));
  }

  Result<Response> ListNamespaces(Request& req, const PathParams&, const CatalogPrincipal&,
                                  const metastore::Warehouse& w) {
    auto q = QueryMap(req);
    Namespace parent;
    if (q.count("parent") && !q["parent"].empty()) {
      TM_ASSIGN(parent, catalog::ParseNamespace(q["parent"]));
    }
    TM_ASSIGN(auto all, catalog.ListNamespaces(w, parent));
    TM_ASSIGN(auto page, Paginate(std::move(all), q));
    Json list = Json::array();
    for (const auto& ns : page.first) list.push_back(NamespaceJson(ns));
    return PageResponse("namespaces", std::move(list), page.second);
  }

  Result<Response> CreateNamespace(Request& req, const PathParams&, const CatalogPrincipal& p,
                                   const metastore::Warehouse& w) {
    TM_ASSIGN(Json body, ParseBody(req));
    if (!body.is_object() || !body.contains("namespace") || !body["namespace"].is_array()) {
      return Fail(ErrorCode::kInvalidInput, "namespace (an array of strings) is required");
    }
    Namespace ns;
    for (const auto& level : body["namespace"]) {
      if (!level.is_string())
        return Fail(ErrorCode::kInvalidInput, "namespace levels must be strings");
      ns.push_back(level.get<std::string>());
    }
    Json props = body.value("properties", Json::object());
    auto created = catalog.CreateNamespace(p, w, ns, props);
    if (!created) {
      if (created.error().code == ErrorCode::kAlreadyExists) {
        return ErrorResponse(409, "AlreadyExistsException",
                             "Namespace already exists: " + ns.back());
      }
      return Fail(created.error());
    }
    // DuckDB requires 200 here, not the 201 one might expect.
    return JsonResponse(200, Json{{"namespace", ns}, {"properties", *created}});
  }

  Result<Response> LoadNamespace(Request&, const PathParams& params, const CatalogPrincipal&,
                                 const metastore::Warehouse& w) {
    TM_ASSIGN(Namespace ns, Ns(params));
    TM_ASSIGN(Json props, catalog.LoadNamespace(w, ns));
    return JsonResponse(200, Json{{"namespace", ns}, {"properties", props}});
  }

  Result<Response> NamespaceExists(Request&, const PathParams& params, const CatalogPrincipal&,
                                   const metastore::Warehouse& w) {
    TM_ASSIGN(Namespace ns, Ns(params));
    TM_TRY(catalog.LoadNamespace(w, ns));
    Response r;
    r.status = 204;
    return r;
  }

  Result<Response> DropNamespace(Request&, const PathParams& params, const CatalogPrincipal& p,
                                 const metastore::Warehouse& w) {
    TM_ASSIGN(Namespace ns, Ns(params));
    TM_TRY(catalog.DropNamespace(p, w, ns));
    Response r;
    r.status = 204;
    return r;
  }

  Result<Response> UpdateProperties(Request& req, const PathParams& params,
                                    const CatalogPrincipal& p, const metastore::Warehouse& w) {
    TM_ASSIGN(Namespace ns, Ns(params));
    TM_ASSIGN(Json body, ParseBody(req));
    if (!body.is_object()) return Fail(ErrorCode::kInvalidInput, "Expected a JSON object");
    std::vector<std::string> removals;
    for (const auto& r : body.value("removals", Json::array())) {
      if (!r.is_string()) return Fail(ErrorCode::kInvalidInput, "removals must be strings");
      removals.push_back(r.get<std::string>());
    }
    TM_ASSIGN(Json result, catalog.UpdateNamespaceProperties(
                               p, w, ns, removals, body.value("updates", Json::object())));
    return JsonResponse(200, result);
  }

  // ---------------------------------------------------------------- tables
  static Result<TableIdent> Ident(const PathParams& params) {
    TM_ASSIGN(Namespace ns, Ns(params));
    return TableIdent{ns, params.at("table")};
  }

  Result<Response> ListTables(Request& req, const PathParams& params, const CatalogPrincipal&,
                              const metastore::Warehouse& w) {
    TM_ASSIGN(Namespace ns, Ns(params));
    TM_ASSIGN(auto all, catalog.ListTables(w, ns));
    auto q = QueryMap(req);
    TM_ASSIGN(auto page, Paginate(std::move(all), q));
    return PageResponse("identifiers", IdentifiersJson(page.first), page.second);
  }

  Result<Response> CreateTable(Request& req, const PathParams& params, const CatalogPrincipal& p,
                               const metastore::Warehouse& w) {
    TM_ASSIGN(Namespace ns, Ns(params));
    TM_ASSIGN(Json body, ParseBody(req));
    TM_ASSIGN(auto table, catalog.CreateTable(p, w, ns, body, WantsVending(req)));
    return LoadResponse(table);
  }

  Result<Response> RegisterTable(Request& req, const PathParams& params, const CatalogPrincipal& p,
                                 const metastore::Warehouse& w) {
    TM_ASSIGN(Namespace ns, Ns(params));
    TM_ASSIGN(Json body, ParseBody(req));
    if (!body.is_object() || !body.contains("name") || !body["name"].is_string() ||
        !body.contains("metadata-location") || !body["metadata-location"].is_string()) {
      return Fail(ErrorCode::kInvalidInput, "name and metadata-location are required");
    }
    // value("overwrite", false) would throw on a non-boolean (a 500, not the client's 400).
    if (body.contains("overwrite") && !body["overwrite"].is_null() &&
        !body["overwrite"].is_boolean()) {
      return Fail(ErrorCode::kInvalidInput, "overwrite must be a boolean");
    }
    TM_ASSIGN(auto table,
              catalog.RegisterTable(p, w, ns, body["name"], body["metadata-location"],
                                    body.contains("overwrite") && body["overwrite"].is_boolean() &&
                                        body["overwrite"].get<bool>()));
    return LoadResponse(table);
  }

  Result<Response> LoadTable(Request& req, const PathParams& params,
                             const catalog::AuthenticatedCaller& c) {
    TM_ASSIGN(TableIdent ident, Ident(params));
    auto q = QueryMap(req);
    bool refs = q.count("snapshots") && q["snapshots"] == "refs";
    TM_ASSIGN(auto table, catalog.LoadTable(c.principal, c.warehouse, ident, WantsVending(req),
                                            refs, c.table_head ? &*c.table_head : nullptr));
    return LoadResponse(table);
  }

  Result<Response> TableExists(Request&, const PathParams& params,
                               const catalog::AuthenticatedCaller& c) {
    TM_ASSIGN(TableIdent ident, Ident(params));
    TM_TRY(catalog.LoadTable(c.principal, c.warehouse, ident, false, false,
                             c.table_head ? &*c.table_head : nullptr));
    Response r;
    r.status = 204;
    return r;
  }

  static Result<catalog::TableChange> ParseChange(const Json& body, const TableIdent* path_ident) {
    if (!body.is_object()) return Fail(ErrorCode::kInvalidInput, "Expected a JSON object");
    catalog::TableChange change;
    if (path_ident) {
      change.ident = *path_ident;
    } else {
      const Json& id = body.value("identifier", Json());
      if (!id.is_object() || !id.contains("name") || !id["name"].is_string() ||
          !id.contains("namespace") || !id["namespace"].is_array()) {
        return Fail(ErrorCode::kInvalidInput, "identifier {namespace, name} is required");
      }
      for (const auto& level : id["namespace"]) {
        if (!level.is_string())
          return Fail(ErrorCode::kInvalidInput, "namespace levels must be strings");
        change.ident.ns.push_back(level.get<std::string>());
      }
      change.ident.name = id["name"].get<std::string>();
    }
    change.requirements = body.value("requirements", Json::array());
    change.updates = body.value("updates", Json::array());
    return change;
  }

  Result<Response> CommitTable(Request& req, const PathParams& params, const CatalogPrincipal& p,
                               const metastore::Warehouse& w) {
    TM_ASSIGN(TableIdent ident, Ident(params));
    TM_ASSIGN(Json body, ParseBody(req));
    TM_ASSIGN(auto change, ParseChange(body, &ident));
    TM_ASSIGN(auto results, catalog.Commit(p, w, {change}));
    const auto& t = results.front();
    // Spliced like LoadResultBody, keys in nlohmann's sorted order.
    return Response::Json(200, "{\"metadata\":" + t.metadata_json + ",\"metadata-location\":" +
                                   Json(t.metadata_location).dump() + "}");
  }

  Result<Response> CommitTransaction(Request& req, const PathParams&, const CatalogPrincipal& p,
                                     const metastore::Warehouse& w) {
    TM_ASSIGN(Json body, ParseBody(req));
    if (!body.is_object() || !body.contains("table-changes") || !body["table-changes"].is_array()) {
      return Fail(ErrorCode::kInvalidInput, "table-changes (an array) is required");
    }
    std::vector<catalog::TableChange> changes;
    for (const auto& c : body["table-changes"]) {
      TM_ASSIGN(auto change, ParseChange(c, nullptr));
      changes.push_back(std::move(change));
    }
    TM_TRY(catalog.Commit(p, w, changes));
    Response r;
    r.status = 204;
    return r;
  }

  Result<Response> DropTable(Request& req, const PathParams& params, const CatalogPrincipal& p,
                             const metastore::Warehouse& w) {
    TM_ASSIGN(TableIdent ident, Ident(params));
    auto q = QueryMap(req);
    // PyIceberg sends the Python spelling "True"/"False".
    bool purge = q.count("purgeRequested") && EqualsIgnoreCase(q["purgeRequested"], "true");
    TM_TRY(catalog.DropTable(p, w, ident, purge));
    Response r;
    r.status = 204;
    return r;
  }

  Result<Response> Credentials(Request&, const PathParams& params, const CatalogPrincipal& p,
                               const metastore::Warehouse& w) {
    TM_ASSIGN(TableIdent ident, Ident(params));
    TM_ASSIGN(auto creds, catalog.TableCredentials(p, w, ident));
    return JsonResponse(200, Json{{"storage-credentials", CredentialsJson(creds)}});
  }

  Result<Response> Metrics(Request& req, const PathParams&, const CatalogPrincipal&,
                           const metastore::Warehouse&) {
    TM_TRY(ParseBody(req));
    Response r;
    r.status = 204;
    return r;
  }

  // ---------------------------------------------------------------- scan planning
  static NullPartitions NullPartitionsOf(const Request& req) {
    auto agent = req.headers.Get("User-Agent");
    return NullPartitionsFor(agent ? *agent : "");
  }

  Result<Response> PlanTableScan(Request& req, const PathParams& params, const CatalogPrincipal& p,
                                 const metastore::Warehouse& w) {
    TM_ASSIGN(TableIdent ident, Ident(params));
    TM_ASSIGN(Json body, ParseBody(req));
    TM_ASSIGN(auto request, tablemere::iceberg::ScanRequest::FromJson(body));
    auto agent = req.headers.Get("User-Agent");
    TM_ASSIGN(auto answer, plans.Plan(p, w, ident, request, CanPoll(agent ? *agent : "")));
    return JsonResponse(200, PlanAnswerJson(answer, NullPartitionsOf(req)));
  }

  Result<Response> FetchPlanningResult(Request& req, const PathParams& params,
                                       const CatalogPrincipal& p, const metastore::Warehouse& w) {
    TM_ASSIGN(TableIdent ident, Ident(params));
    TM_ASSIGN(auto answer, plans.Fetch(p, w, ident, params.at("plan_id")));
    return JsonResponse(200, PlanAnswerJson(answer, NullPartitionsOf(req)));
  }

  Result<Response> CancelPlanning(Request&, const PathParams& params, const CatalogPrincipal& p,
                                  const metastore::Warehouse& w) {
    TM_ASSIGN(TableIdent ident, Ident(params));
    TM_TRY(plans.Cancel(p, w, ident, params.at("plan_id")));
    return NoContent();
  }

  Result<Response> FetchScanTasks(Request& req, const PathParams& params, const CatalogPrincipal& p,
                                  const metastore::Warehouse& w) {
    TM_ASSIGN(TableIdent ident, Ident(params));
    TM_ASSIGN(Json body, ParseBody(req));
    if (!body.is_object() || !body.contains("plan-task") || !body["plan-task"].is_string()) {
      return Fail(ErrorCode::kInvalidInput, "plan-task is required");
    }
    TM_ASSIGN(auto tasks, plans.FetchTasks(p, w, ident, body["plan-task"].get<std::string>()));
    return JsonResponse(200, ScanTasksJson(tasks, NullPartitionsOf(req)));
  }

  Result<Response> RenameTable(Request& req, const PathParams&, const CatalogPrincipal& p,
                               const metastore::Warehouse& w) {
    TM_ASSIGN(Json body, ParseBody(req));
    TM_ASSIGN(TableIdent from, IdentField(body, "source"));
    TM_ASSIGN(TableIdent to, IdentField(body, "destination"));
    TM_TRY(catalog.RenameTable(p, w, from, to));
    return NoContent();
  }

  // ---------------------------------------------------------------- views
  static Json ViewResult(const catalog::LoadedView& v) {
    Json config = Json::object();
    for (const auto& [k, val] : v.config) config[k] = val;
    return Json{
        {"metadata-location", v.metadata_location}, {"metadata", v.metadata}, {"config", config}};
  }

  static Result<TableIdent> ViewIdent(const PathParams& params) {
    TM_ASSIGN(Namespace ns, Ns(params));
    return TableIdent{ns, params.at("view")};
  }

  Result<Response> ListViews(Request& req, const PathParams& params, const CatalogPrincipal&,
                             const metastore::Warehouse& w) {
    TM_ASSIGN(Namespace ns, Ns(params));
    TM_ASSIGN(auto all, views.List(w, ns));
    TM_ASSIGN(auto page, Paginate(std::move(all), QueryMap(req)));
    return PageResponse("identifiers", IdentifiersJson(page.first), page.second);
  }

  Result<Response> CreateView(Request& req, const PathParams& params, const CatalogPrincipal& p,
                              const metastore::Warehouse& w) {
    TM_ASSIGN(Namespace ns, Ns(params));
    TM_ASSIGN(Json body, ParseBody(req));
    TM_ASSIGN(auto view, views.Create(p, w, ns, body));
    return JsonResponse(200, ViewResult(view));
  }

  Result<Response> LoadView(Request&, const PathParams& params, const CatalogPrincipal&,
                            const metastore::Warehouse& w) {
    TM_ASSIGN(TableIdent ident, ViewIdent(params));
    TM_ASSIGN(auto view, views.Load(w, ident));
    return JsonResponse(200, ViewResult(view));
  }

  Result<Response> ViewExists(Request&, const PathParams& params, const CatalogPrincipal&,
                              const metastore::Warehouse& w) {
    TM_ASSIGN(TableIdent ident, ViewIdent(params));
    TM_TRY(views.Load(w, ident));
    return NoContent();
  }

  Result<Response> ReplaceView(Request& req, const PathParams& params, const CatalogPrincipal& p,
                               const metastore::Warehouse& w) {
    TM_ASSIGN(TableIdent ident, ViewIdent(params));
    TM_ASSIGN(Json body, ParseBody(req));
    if (!body.is_object()) return Fail(ErrorCode::kInvalidInput, "Expected a JSON object");
    TM_ASSIGN(auto view, views.Replace(p, w, ident, body.value("requirements", Json::array()),
                                       body.value("updates", Json::array())));
    return JsonResponse(200, ViewResult(view));
  }

  Result<Response> DropView(Request&, const PathParams& params, const CatalogPrincipal& p,
                            const metastore::Warehouse& w) {
    TM_ASSIGN(TableIdent ident, ViewIdent(params));
    TM_TRY(views.Drop(p, w, ident));
    return NoContent();
  }

  Result<Response> RenameView(Request& req, const PathParams&, const CatalogPrincipal& p,
                              const metastore::Warehouse& w) {
    TM_ASSIGN(Json body, ParseBody(req));
    TM_ASSIGN(TableIdent from, IdentField(body, "source"));
    TM_ASSIGN(TableIdent to, IdentField(body, "destination"));
    TM_TRY(views.Rename(p, w, from, to));
    return NoContent();
  }

  Result<Response> RegisterView(Request& req, const PathParams& params, const CatalogPrincipal& p,
                                const metastore::Warehouse& w) {
    TM_ASSIGN(Namespace ns, Ns(params));
    TM_ASSIGN(Json body, ParseBody(req));
    if (!body.is_object() || !body.contains("name") || !body["name"].is_string() ||
        !body.contains("metadata-location") || !body["metadata-location"].is_string()) {
      return Fail(ErrorCode::kInvalidInput, "name and metadata-location are required");
    }
    TM_ASSIGN(auto view, views.Register(p, w, ns, body["name"], body["metadata-location"]));
    return JsonResponse(200, ViewResult(view));
  }
};

IcebergRestApi::IcebergRestApi(catalog::CatalogService& catalog, catalog::ViewService& views,
                               catalog::ScanPlanService& plans)
    : impl_(std::make_unique<Impl>(catalog, views, plans)) {}
IcebergRestApi::~IcebergRestApi() = default;
http::Response IcebergRestApi::Handle(http::Request& request) {
  return impl_->binder.Dispatch(request);
}

}  // namespace tablemere::api::iceberg
