#include "api/lakekeeper/lakekeeper_api.h"

#include <nlohmann/json.hpp>

#include "api/common/json_request.h"
#include "api/common/route_binder.h"
#include "api/iceberg/error_model.h"
#include "api/iceberg/rest_common.h"
#include "common/strings.h"

namespace tablemere::api::lakekeeper {
namespace {

using catalog::CatalogPrincipal;
using catalog::Json;
using catalog::Namespace;
using catalog::TableIdent;
using http::PathParams;
using http::Request;
using http::Response;
using iceberg::CredentialsJson;
using iceberg::ErrorModelResponse;
using iceberg::IdentField;
using iceberg::JsonResponse;
using iceberg::NoContent;
using iceberg::Subject;

// JSON bodies here are small (a table record with an optional schema).
constexpr size_t kMaxJsonBody = 4 * 1024 * 1024;
constexpr int64_t kDefaultPageSize = 100;

Result<Json> ParseBody(Request& req) {
  return ParseJsonObject(req, kMaxJsonBody, EmptyBody::kInvalid);
}

bool WantsVending(const Request& req) {
  auto h = req.headers.Get("X-Iceberg-Access-Delegation");
  return h && ToLower(*h).find("vended-credentials") != std::string::npos;
}

Json LoadResponse(const catalog::LoadedGenericTable& t) {
  Json config = Json::object();
  for (const auto& [k, v] : t.config) config[k] = v;
  Json table = t.table;
  table.erase("id");
  Json out = {{"table", table}, {"config", config}};
  out["storage-credentials"] =
      t.credentials.empty() ? Json(nullptr) : CredentialsJson(t.credentials);
  return out;
}

// Names end up in JSON (records, messages), which must be UTF-8: the same test dump() makes.
bool JsonSafe(const std::string& s) {
  try {
    (void)Json(s).dump();
    return true;
  } catch (const Json::type_error&) {
    return false;
  }
}

// "a%1Fb%1Fview,c%1Fother" → views; the last separator splits namespace from name.
Result<std::vector<TableIdent>> ParseReferencedBy(const std::string& value) {
  std::vector<TableIdent> out;
  if (value.empty()) return out;
  for (const auto& item : Split(value, ',')) {
    auto decoded = UrlDecode(item);
    if (!decoded || decoded->empty() || !JsonSafe(*decoded)) {
      return Fail(ErrorCode::kInvalidInput, "Malformed referenced-by");
    }
    size_t sep = decoded->rfind('\x1f');
    if (sep == std::string::npos || sep == 0 || sep + 1 == decoded->size()) {
      return Fail(ErrorCode::kInvalidInput,
                  "referenced-by entries are <namespace>%1F<view>, comma-separated");
    }
    TM_ASSIGN(Namespace ns, catalog::ParseNamespace(decoded->substr(0, sep)));
    out.push_back(TableIdent{ns, decoded->substr(sep + 1)});
  }
  return out;
}

}  // namespace

struct LakekeeperApi::Impl {
  catalog::CatalogService& catalog;
  catalog::GenericTableService& tables;
  RouteBinder<catalog::AuthenticatedCaller, Subject> binder;

  using Method = Result<Response> (Impl::*)(Request&, const PathParams&, const CatalogPrincipal&,
                                            const metastore::Warehouse&);

  Impl(catalog::CatalogService& c, catalog::GenericTableService& t)
      : catalog(c),
        tables(t),
        binder([this](const Request& req,
                      const PathParams& params) { return Authenticate(req, params); },
               [](const Request&, const Error& e, Subject subject) {
                 return ErrorModelResponse(e, subject);
               }) {
    const std::string collection = "/lakekeeper/v1/{prefix}/namespaces/{namespace}/generic-tables";
    const std::string table = collection + "/{table}";
    Route("GET", collection, Subject::kNamespace, &Impl::List);
    Route("POST", collection, Subject::kGenericTable, &Impl::Create);
    Route("GET", table, Subject::kGenericTable, &Impl::Load);
    Route("DELETE", table, Subject::kGenericTable, &Impl::Drop);
    Route("GET", table + "/credentials", Subject::kGenericTable, &Impl::Credentials);
    Route("POST", table + "/protection", Subject::kGenericTable, &Impl::Protection);
    Route("POST", "/lakekeeper/v1/{prefix}/generic-tables/rename", Subject::kGenericTable,
          &Impl::Rename);
  }

  void Route(const std::string& method, const std::string& pattern, Subject subject, Method m) {
    binder.Authed(
        method, pattern,
        [this, m](Request& req, const PathParams& params, const catalog::AuthenticatedCaller& c) {
          return (this->*m)(req, params, c.principal, c.warehouse);
        },
        subject);
  }

  // Path names end up in JSON records and messages, so they must be UTF-8 before anything
  // else; then the bearer token must be valid for the warehouse {prefix} names (the
  // /v1/config prefix w-<id>, or the bare warehouse id).
  Result<catalog::AuthenticatedCaller> Authenticate(const Request& req, const PathParams& params) {
    for (const auto& [name, value] : params) {
      if (!JsonSafe(value))
        return Fail(ErrorCode::kInvalidInput, "The " + name + " must be valid UTF-8");
    }
    auto auth = req.headers.Get("Authorization");
    if (!auth || !StartsWith(ToLower(*auth), "bearer ")) {
      return Fail(ErrorCode::kUnauthenticated,
                  "Authorization: Bearer <token> required; get a token at /v1/oauth/tokens");
    }
    return catalog.AuthenticateFor(Trim(auth->substr(7)), params.at("prefix"));
  }

  static Result<TableIdent> Ident(const PathParams& params) {
    TM_ASSIGN(Namespace ns, catalog::ParseNamespace(params.at("namespace")));
    return TableIdent{ns, params.at("table")};
  }

  Result<Response> List(Request& req, const PathParams& params, const CatalogPrincipal&,
                        const metastore::Warehouse& w) {
    TM_ASSIGN(Namespace ns, catalog::ParseNamespace(params.at("namespace")));
    TM_ASSIGN(auto all, tables.List(w, ns));
    TM_ASSIGN(auto page, iceberg::Paginate(std::move(all), QueryMap(req), kDefaultPageSize));
    Json ids = Json::array();
    for (const auto& t : page.first) {
      ids.push_back(
          {{"namespace", t.ident.ns}, {"name", t.ident.name}, {"id", t.id}, {"format", t.format}});
    }
    Json body = {{"identifiers", ids}};
    body["next-page-token"] = page.second.empty() ? Json(nullptr) : Json(page.second);
    return JsonResponse(200, body);
  }

  Result<Response> Create(Request& req, const PathParams& params, const CatalogPrincipal& p,
                          const metastore::Warehouse& w) {
    TM_ASSIGN(Namespace ns, catalog::ParseNamespace(params.at("namespace")));
    TM_ASSIGN(Json body, ParseBody(req));
    TM_ASSIGN(auto table, tables.Create(p, w, ns, body, WantsVending(req)));
    return JsonResponse(200, LoadResponse(table));
  }

  Result<Response> Load(Request& req, const PathParams& params, const CatalogPrincipal& p,
                        const metastore::Warehouse& w) {
    TM_ASSIGN(TableIdent ident, Ident(params));
    TM_ASSIGN(auto table, tables.Load(p, w, ident, WantsVending(req)));
    return JsonResponse(200, LoadResponse(table));
  }

  Result<Response> Drop(Request&, const PathParams& params, const CatalogPrincipal& p,
                        const metastore::Warehouse& w) {
    TM_ASSIGN(TableIdent ident, Ident(params));
    TM_TRY(tables.Drop(p, w, ident));
    return NoContent();
  }

  Result<Response> Credentials(Request& req, const PathParams& params, const CatalogPrincipal& p,
                               const metastore::Warehouse& w) {
    TM_ASSIGN(TableIdent ident, Ident(params));
    // referenced-by is parsed from the raw query: its %1F separators must survive until
    // the view identifiers are split.
    std::string raw;
    for (const auto& part : Split(req.query, '&')) {
      if (part.starts_with("referenced-by=")) raw = part.substr(14);
    }
    TM_ASSIGN(auto chain, ParseReferencedBy(raw));
    TM_ASSIGN(auto creds, tables.Credentials(p, w, ident, chain, req.request_id));
    return JsonResponse(200, Json{{"storage-credentials", CredentialsJson(creds)}});
  }

  Result<Response> Protection(Request& req, const PathParams& params, const CatalogPrincipal& p,
                              const metastore::Warehouse& w) {
    TM_ASSIGN(TableIdent ident, Ident(params));
    TM_ASSIGN(Json body, ParseBody(req));
    auto it = body.find("protected");
    if (it == body.end() || !it->is_boolean()) {
      return Fail(ErrorCode::kInvalidInput, "protected (true or false) is required");
    }
    TM_ASSIGN(auto table, tables.SetProtected(p, w, ident, it->get<bool>()));
    return JsonResponse(200, LoadResponse(table));
  }

  Result<Response> Rename(Request& req, const PathParams&, const CatalogPrincipal& p,
                          const metastore::Warehouse& w) {
    TM_ASSIGN(Json body, ParseBody(req));
    TM_ASSIGN(TableIdent from, IdentField(body, "source"));
    TM_ASSIGN(TableIdent to, IdentField(body, "destination"));
    TM_TRY(tables.Rename(p, w, from, to));
    return NoContent();
  }
};

LakekeeperApi::LakekeeperApi(catalog::CatalogService& catalog, catalog::GenericTableService& tables)
    : impl_(std::make_unique<Impl>(catalog, tables)) {}
LakekeeperApi::~LakekeeperApi() = default;
http::Response LakekeeperApi::Handle(http::Request& request) {
  return impl_->binder.Dispatch(request);
}

}  // namespace tablemere::api::lakekeeper
