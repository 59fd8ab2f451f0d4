// Tables through the catalog: POST /v1/tables, GET /v1/namespaces, GET /v1/tables,
// GET /v1/table, POST /v1/credentials. The caller's level on the warehouse picks the
// identity the catalog sees (catalog/control_tables.h).
#include "api/control/routes.h"
#include "api/iceberg/error_model.h"
#include "common/strings.h"
#include "storage/access.h"

namespace tablemere::api::control {
namespace {

constexpr char kCreateTableEndpoint[] = "POST /v1/tables";

// A catalog failure as the reference shows it: catalog_error with the catalog's own
// status, exception type and message; 4xx keep their status, the rest are 502.
Error CatalogFailure(const Error& e) {
  if (e.Detail(catalog::kCatalogErrorDetail).empty()) return e;
  auto mapped = api::iceberg::MapError(e, api::iceberg::Subject::kTable);
  Error out{e.code, e.message, {}};
  out.With("code", e.code == ErrorCode::kAlreadyExists ? "already_exists" : "catalog_error")
      .With("catalog_status", std::to_string(mapped.status))
      .With("catalog_type", mapped.type)
      .With("catalog_message", e.message)
      .With("http_status", std::to_string(mapped.status < 500 ? mapped.status : 502));
  return out;
}

Result<catalog::Namespace> NamespaceOf(const std::string& dotted, bool required) {
  if (dotted.empty()) {
    if (!required) return catalog::Namespace{};
    return Fail(Error{ErrorCode::kInvalidInput, "namespace is required", {}}
                    .With("code", "missing_field")
                    .With("field", "namespace"));
  }
  return Split(dotted, '.');
}

Json Warning(const char* text) { return Json(text); }

// The warehouse a request names (id or name), or the caller's default when it names none.
Result<accounts::WarehouseAccess> AccessNamed(Context& ctx, const accounts::Caller& caller,
                                              const std::string& warehouse) {
  return ctx.accounts.access().HeldAccess(caller, warehouse);
}

// The warehouse a query names (?warehouse= or ?warehouse_id=), or the default.
Result<accounts::WarehouseAccess> AccessOfQuery(Context& ctx, const accounts::Caller& caller,
                                                std::map<std::string, std::string>& q) {
  return AccessNamed(ctx, caller, q.count("warehouse") ? q["warehouse"] : q["warehouse_id"]);
}

// The answer of POST /v1/tables (and what its Idempotency-Key replays).
Json CreatedTableJson(const metastore::Warehouse& w, const catalog::CreatedTable& created,
                      int requested) {
  std::string ns = catalog::JoinDots(created.ident.ns);
  Json out = {{"table", ns + "." + created.ident.name},
              {"warehouse_id", w.id.str()},
              {"warehouse", storage::TableBucketName(w.id)},
              {"namespace", ns},
              {"name", created.ident.name},
              {"table_uuid", created.table_uuid},
              {"location", created.location},
              {"format_version", created.format_version},
              {"format_version_requested", requested},
              {"format_version_honoured", created.format_version == requested}};
  if (created.format_version >= 3) {
    out["warnings"] =
        Json::array({Warning("Format version 3 is writable only by Spark 3.5 + Iceberg 1.11 today; "
                             "DuckDB 1.5 and PyIceberg 0.12 read it but cannot write it.")});
    out["writable_by"] = Json::array({"spark"});
    out["not_writable_by"] = Json::array({"duckdb", "pyiceberg"});
  }
  return out;
}

}  // namespace

void BindTables(Binder& b, Context& ctx) {
  b.Authed(
      "POST", "/v1/tables",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        const std::string idem = IdempotencyKey(req);
        TM_ASSIGN(Json body, Body(req));
        const std::string fingerprint = Fingerprint(body);
        TM_ASSIGN(auto replay, ctx.accounts.idempotency().Replay(caller, idem, kCreateTableEndpoint,
                                                                 fingerprint));
        if (replay) return Response::Json(201, *replay);
        TM_ASSIGN(std::string warehouse, StringField(body, "warehouse_id"));
        if (warehouse.empty()) {
          TM_ASSIGN(warehouse, StringField(body, "warehouse"));
        }
        catalog::NewTableRequest r;
        std::string ns_text;
        if (body.contains("namespace") && body["namespace"].is_array()) {
          for (const auto& level : body["namespace"]) {
            if (level.is_string()) r.ns.push_back(level.get<std::string>());
          }
        } else {
          TM_ASSIGN(ns_text, StringField(body, "namespace"));
          TM_ASSIGN(r.ns, NamespaceOf(ns_text, true));
        }
        TM_ASSIGN(r.name, StringField(body, "name"));
        if (body.contains("schema")) r.schema = body["schema"];
        int requested = 2;
        if (body.contains("format_version") && !body["format_version"].is_null()) {
          if (!body["format_version"].is_number_integer()) {
            return Fail(Error{ErrorCode::kInvalidInput, "format_version must be 2 or 3", {}}
                            .With("code", "invalid_value")
                            .With("field", "format_version"));
          }
          requested = body["format_version"].get<int>();
        }
        r.format_version = requested;
        TM_ASSIGN(auto access, AccessNamed(ctx, caller, warehouse));
        TM_TRY(ctx.accounts.usage().CheckStorageQuota(caller, access.warehouse.org_id,
                                                      "creating a table"));
        const auto& w = access.warehouse;
        // The Idempotency-Key record lands with the table, in its transaction: a retry after
        // a crash, or a concurrent call with the key, gets this answer, never a 409.
        catalog::ControlTables::AlsoInCreate remember;
        if (!idem.empty()) {
          remember = [&](metastore::Stores& stores, const catalog::CreatedTable& made) {
            return ctx.accounts.idempotency().RememberIn(
                stores, caller, idem, kCreateTableEndpoint,
                CreatedTableJson(w, made, requested).dump(), fingerprint);
          };
        }
        auto created = ctx.tables.Create(access, r, remember);
        if (!created) {
          if (!idem.empty()) {
            // A concurrent call with the same key created the table first.
            TM_ASSIGN(auto first, ctx.accounts.idempotency().Replay(
                                      caller, idem, kCreateTableEndpoint, fingerprint));
            if (first) return Response::Json(201, *first);
          }
          return Fail(CatalogFailure(created.error()));
        }
        Json out = CreatedTableJson(w, *created, requested);
        std::string ns = catalog::JoinDots(created->ident.ns);
        TM_TRY(ctx.accounts.audit().Record(
            metastore::AuditEvent{0, 0, caller.principal.id, w.org_id, "table.create", "table",
                                  w.id + "/" + ns + "." + created->ident.name, req.request_id,
                                  Json{{"format_version", created->format_version}}.dump()}));
        return Response::Json(201, out.dump());
      });

  b.Authed(
      "GET", "/v1/namespaces",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        auto q = QueryMap(req);
        TM_ASSIGN(auto access, AccessOfQuery(ctx, caller, q));
        TM_ASSIGN(auto namespaces, ctx.tables.Namespaces(access));
        Json list = Json::array();
        for (const auto& ns : namespaces) list.push_back({{"namespace", catalog::JoinDots(ns)}});
        Json out = {{"warehouse", access.warehouse.name},
                    {"warehouse_id", access.warehouse.id.str()},
                    {"namespaces", list}};
        return Response::Json(200, out.dump());
      });

  b.Authed(
      "GET", "/v1/tables",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        auto q = QueryMap(req);
        TM_ASSIGN(auto access, AccessOfQuery(ctx, caller, q));
        TM_ASSIGN(auto ns, NamespaceOf(q["namespace"], false));
        TM_ASSIGN(auto found, ctx.tables.Tables(access, ns));
        Json searched = Json::array();
        for (const auto& n : found.searched) searched.push_back(catalog::JoinDots(n));
        Json list = Json::array();
        for (const auto& t : found.tables) {
          std::string dotted = catalog::JoinDots(t.ns);
          list.push_back(
              {{"namespace", dotted}, {"name", t.name}, {"table", dotted + "." + t.name}});
        }
        Json out = {{"warehouse", access.warehouse.name},
                    {"warehouse_id", access.warehouse.id.str()},
                    {"namespaces_searched", searched},
                    {"tables", list}};
        return Response::Json(200, out.dump());
      });

  b.Authed(
      "GET", "/v1/table",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        auto q = QueryMap(req);
        TM_ASSIGN(auto access, AccessOfQuery(ctx, caller, q));
        TM_ASSIGN(auto ns, NamespaceOf(q["namespace"], true));
        if (q["name"].empty()) {
          return Fail(Error{ErrorCode::kInvalidInput, "name is required", {}}
                          .With("code", "missing_field")
                          .With("field", "name"));
        }
        auto described = ctx.tables.Describe(access, {ns, q["name"]});
        if (!described) return Fail(CatalogFailure(described.error()));
        const auto& s = *described;
        auto opt = [](const std::optional<int64_t>& v) { return v ? Json(*v) : Json(nullptr); };
        std::string dotted = catalog::JoinDots(s.ident.ns);
        Json out = {{"table", dotted + "." + s.ident.name},
                    {"namespace", dotted},
                    {"name", s.ident.name},
                    {"warehouse", access.warehouse.name},
                    {"warehouse_id", access.warehouse.id.str()},
                    {"table_uuid", s.table_uuid},
                    {"location", s.location},
                    {"metadata_location", s.metadata_location},
                    {"format_version", s.format_version},
                    {"schema", s.schema_fields},
                    {"identifier_field_ids", s.identifier_field_ids},
                    {"partition_spec", s.partition_spec},
                    {"snapshots", s.snapshots},
                    {"current_snapshot_id", opt(s.current_snapshot_id)},
                    {"rows", opt(s.rows)},
                    {"data_files", opt(s.data_files)},
                    {"delete_files", opt(s.delete_files)},
                    {"rows_source", s.rows_source}};
        // Maintenance state is shown to every reader of the table; a failure to read it
        // leaves it out rather than failing the description.
        if (auto m = ctx.maintenance.Status(access.warehouse, s.ident, s.table_uuid)) {
          out["maintenance"] = std::move(*m);
        }
        if (s.format_version >= 3) {
          out["warnings"] = Json::array(
              {Warning("Format version 3: DuckDB 1.5 and PyIceberg 0.12 cannot write it.")});
        }
        return Response::Json(200, out.dump());
      });

  b.Authed(
      "POST", "/v1/credentials",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        TM_ASSIGN(Json body, Body(req));
        TM_ASSIGN(std::string warehouse, StringField(body, "warehouse_id"));
        TM_ASSIGN(std::string ns_text, StringField(body, "namespace"));
        TM_ASSIGN(auto ns, NamespaceOf(ns_text, true));
        TM_ASSIGN(std::string name, RequiredString(body, "name"));
        TM_ASSIGN(auto access, AccessNamed(ctx, caller, warehouse));
        if (access.level == metastore::Level::kWrite) {
          TM_TRY(ctx.accounts.usage().CheckStorageQuota(caller, access.warehouse.org_id,
                                                        "vending a write credential"));
        }
        auto vended = ctx.tables.Credentials(access, {ns, name});
        if (!vended) return Fail(CatalogFailure(vended.error()));
        Json storage = Json::object();
        for (const auto& [k, v] : vended->credential.config) storage[k] = v;
        Json out = {{"table", ns_text + "." + name},
                    {"location", vended->location},
                    {"scope", vended->credential.prefix},
                    {"level", "write"},
                    {"identity", vended->identity},
                    {"storage", storage},
                    {"expires_at", TimeOrNull(vended->expires_ms)}};
        TM_TRY(ctx.accounts.audit().Record(metastore::AuditEvent{
            0, 0, caller.principal.id, access.warehouse.org_id, "credentials.vend", "table",
            access.warehouse.id + "/" + ns_text + "." + name, req.request_id, "{}"}));
        return Response::Json(200, out.dump());
      });
}

}  // namespace tablemere::api::control
