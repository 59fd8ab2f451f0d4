// project, catalog (alias warehouse), namespace, table, credentials, connect: the data
// side of the control API. Every --catalog takes --warehouse too, and an id or a name.
#include <fstream>
#include <iostream>
#include <sstream>

#include "api/wire/control.h"
#include "cli/cli.h"
#include "client/operations.h"
#include "client/settings.h"

namespace tablemere::cli {
namespace {

using api::wire::Confirm;
using api::wire::CreateProject;
using api::wire::CreateTable;
using api::wire::CreateWarehouse;
using api::wire::SetGrant;
using api::wire::TableCredentials;
using client::ApiClient;
using client::Call;
using client::Outcome;
using client::Request;

const char* kProjectHelp =
    "project_id (UUID) or project name; list both with: tablemere project list";

const Table kCatalogTable{"warehouses",
                          {{"NAME", "name"},
                           {"WAREHOUSE_ID", "warehouse_id"},
                           {"PROJECT", "project"},
                           {"LEVEL", "my_level"},
                           {"PUBLIC", "public"},
                           {"CREATED", "created_at"}}};

void AddProject(CLI::App& app, Cli& cli) {
  auto* group = app.add_subcommand("project", "projects (placement is immutable)");
  group->require_subcommand(1);
  auto p = std::make_shared<CreateProject>();
  auto key = std::make_shared<std::string>();
  auto* create = group->add_subcommand("create", "a new project");
  create->add_option("--name", p->name)->required();
  create->add_option("--provider", p->provider, "default: the deployment's own");
  create->add_option("--region", p->region, "default: the deployment's own placement");
  AddIdempotencyKey(create, *key);
  create->callback([&cli, p, key] {
    cli.action = [&cli, p, key] {
      return cli.Show(Request(cli.Api(), Call{.method = "POST",
                                              .path = "/v1/projects",
                                              .body = p->ToJson(),
                                              .idempotency_key = *key}));
    };
  });
  group->add_subcommand("list", "your projects")->callback([&cli] {
    cli.action = [&cli] {
      return cli.Show(Request(cli.Api(), Call{.path = "/v1/projects"}),
                      Table{"projects",
                            {{"NAME", "name"},
                             {"PROJECT_ID", "project_id"},
                             {"PROVIDER", "provider"},
                             {"REGION", "region"},
                             {"CREATED", "created_at"}}});
    };
  });
}

void AddCatalogGroup(CLI::App& app, Cli& cli) {
  auto* group = app.add_subcommand(
      "catalog",
      "catalogs: one Iceberg catalog per lakehouse, with its own storage and identity "
      "(the API names one by warehouse_id, under /v1/warehouses)");
  group->alias("warehouse");
  group->require_subcommand(1);

  auto c = std::make_shared<CreateWarehouse>();
  auto c_key = std::make_shared<std::string>();
  auto* create = group->add_subcommand(
      "create", "create a new catalog; --name alone puts it in the organisation's default project");
  create->add_option("--name", c->name)->required();
  create->add_option("--project", c->project,
                     std::string(kProjectHelp) + " (default: the organisation's default project)");
  AddIdempotencyKey(create, *c_key);
  create->callback([&cli, c, c_key] {
    cli.action = [&cli, c, c_key] {
      return cli.Show(Request(cli.Api(), Call{.method = "POST",
                                              .path = "/v1/warehouses",
                                              .body = c->ToJson(),
                                              .idempotency_key = *c_key}));
    };
  });

  auto project = std::make_shared<std::string>();
  auto* list = group->add_subcommand(
      "list", "list every catalog you can see: name and warehouse_id side by side");
  list->add_option("--project", *project,
                   std::string(kProjectHelp) + " (default: every project you can see)");
  list->callback([&cli, project] {
    cli.action = [&cli, project] {
      return cli.Show(client::ListCatalogs(cli.Api(), *project), kCatalogTable);
    };
  });

  struct Opts {
    std::string catalog, key;
  };
  auto rot = std::make_shared<Opts>();
  auto* rotate = group->add_subcommand(
      "rotate",
      "replace the catalog's credentials (read/write and read-only); the old keys and "
      "their tokens are refused at once");
  AddCatalogOption(rotate, rot->catalog);
  AddIdempotencyKey(rotate, rot->key);
  rotate->callback([&cli, rot] {
    cli.action = [&cli, rot] {
      return WithCatalog(cli, rot->catalog, [&](const ApiClient& api, const Json& w) {
        return Request(api, Call{.method = "POST",
                                 .path = WarehousePath(w, "/rotate"),
                                 .idempotency_key = rot->key});
      });
    };
  });

  auto g = std::make_shared<Opts>();
  auto* grants = group->add_subcommand(
      "grants",
      "who holds read or write on a catalog, and how (admin, membership, creator, "
      "explicit)");
  AddCatalogOption(grants, g->catalog);
  grants->callback([&cli, g] {
    cli.action = [&cli, g] {
      return WithCatalog(
          cli, g->catalog,
          [](const ApiClient& api, const Json& w) {
            return Request(api, Call{.path = WarehousePath(w, "/grants")});
          },
          Table{"",
                {{"PRINCIPAL_ID", "principal_id"},
                 {"KIND", "kind"},
                 {"NAME", "display"},
                 {"LEVEL", "level"},
                 {"VIA", "via"}}});
    };
  });

  struct GrantOpts {
    std::string catalog, principal, key;
    SetGrant body;
  };
  auto gr = std::make_shared<GrantOpts>();
  auto* grant =
      group->add_subcommand("grant", "grant read or write on a catalog to a member or an agent");
  AddCatalogOption(grant, gr->catalog);
  grant
      ->add_option("--principal", gr->principal,
                   "principal_id of the member or agent (tablemere org members / agent list)")
      ->required();
  grant->add_option("--level", gr->body.level)->required()->check(CLI::IsMember({"read", "write"}));
  AddIdempotencyKey(grant, gr->key);
  grant->callback([&cli, gr] {
    cli.action = [&cli, gr] {
      return WithCatalog(cli, gr->catalog, [&](const ApiClient& api, const Json& w) {
        return Request(api,
                       Call{.method = "PUT",
                            .path = WarehousePath(w, "/grants/" + ApiClient::Escape(gr->principal)),
                            .body = gr->body.ToJson(),
                            .idempotency_key = gr->key});
      });
    };
  });

  auto rv = std::make_shared<GrantOpts>();
  auto* revoke = group->add_subcommand("revoke", "revoke a grant (admin, or whoever made it)");
  AddCatalogOption(revoke, rv->catalog);
  revoke->add_option("--principal", rv->principal)->required();
  AddIdempotencyKey(revoke, rv->key);
  revoke->callback([&cli, rv] {
    cli.action = [&cli, rv] {
      return WithCatalog(cli, rv->catalog, [&](const ApiClient& api, const Json& w) {
        return Request(api,
                       Call{.method = "DELETE",
                            .path = WarehousePath(w, "/grants/" + ApiClient::Escape(rv->principal)),
                            .idempotency_key = rv->key});
      });
    };
  });

  // delete and publish: the name typed out, compared here before anything is sent and
  // again by the server.
  struct ConfirmOpts {
    std::string catalog, key;
    Confirm body;
  };
  auto confirmed = [&cli](const std::shared_ptr<ConfirmOpts>& o, const std::string& method,
                          const std::string& tail) {
    return [&cli, o, method, tail] {
      return WithCatalog(cli, o->catalog, [&](const ApiClient& api, const Json& w) -> Outcome {
        if (auto refused = client::CheckConfirmation(w, o->body.confirm)) {
          return std::unexpected(*refused);
        }
        return Request(api, Call{.method = method,
                                 .path = WarehousePath(w, tail),
                                 .body = o->body.ToJson(),
                                 .idempotency_key = o->key});
      });
    };
  };
  auto del = std::make_shared<ConfirmOpts>();
  auto* remove = group->add_subcommand(
      "delete",
      "delete a catalog for good (admin): tables, buckets, identities, grants; the name "
      "typed out");
  AddCatalogOption(remove, del->catalog);
  remove
      ->add_option("--confirm", del->body.confirm,
                   "the catalog's name, exactly; this cannot be undone")
      ->required();
  AddIdempotencyKey(remove, del->key);
  remove->callback([&cli, del, confirmed] { cli.action = confirmed(del, "DELETE", ""); });

  AddPublishCommands(group, cli);
}

void AddNamespace(CLI::App& app, Cli& cli) {
  auto* group = app.add_subcommand("namespace", "namespaces (created on demand by table create)");
  group->require_subcommand(1);
  auto catalog = std::make_shared<std::string>();
  auto* list = group->add_subcommand("list", "the namespaces of a catalog");
  AddCatalogOption(list, *catalog);
  list->callback([&cli, catalog] {
    cli.action = [&cli, catalog] {
      return WithCatalog(
          cli, *catalog,
          [](const ApiClient& api, const Json& w) {
            return Request(api, Call{.path = "/v1/namespaces",
                                     .query = {{"warehouse_id", w.value("warehouse_id", "")}}});
          },
          Table{"namespaces", {{"NAMESPACE", "namespace"}}});
    };
  });
}

// --column name:type[:required][:identifier] values as an Iceberg schema.
std::expected<Json, client::Failure> SchemaOfColumns(const std::vector<std::string>& columns) {
  Json fields = Json::array();
  Json identifiers = Json::array();
  int id = 0;
  for (const auto& spec : columns) {
    std::vector<std::string> parts;
    std::stringstream ss(spec);
    std::string part;
    while (std::getline(ss, part, ':')) parts.push_back(part);
    if (parts.size() < 2 || parts[0].empty() || parts[1].empty()) {
      return std::unexpected(client::LocalFailure(
          "invalid_value", "--column takes name:type[:required][:identifier], not '" + spec + "'",
          "e.g. --column id:long:required:identifier --column name:string"));
    }
    bool required = false, identifier = false;
    for (size_t i = 2; i < parts.size(); i++) {
      if (parts[i] == "required") {
        required = true;
      } else if (parts[i] == "identifier") {
        identifier = true;
      } else {
        return std::unexpected(client::LocalFailure(
            "invalid_value", "Unknown column flag '" + parts[i] + "' in --column " + spec,
            "The flags are required and identifier"));
      }
    }
    ++id;
    fields.push_back({{"id", id}, {"name", parts[0]}, {"type", parts[1]}, {"required", required}});
    if (identifier) identifiers.push_back(id);
  }
  return Json{{"type", "struct"},
              {"schema-id", 0},
              {"identifier-field-ids", identifiers},
              {"fields", fields}};
}

void AddTable(CLI::App& app, Cli& cli) {
  auto* group = app.add_subcommand("table", "tables");
  group->require_subcommand(1);

  struct ListOpts {
    std::string catalog, ns;
  };
  auto l = std::make_shared<ListOpts>();
  auto* list = group->add_subcommand("list", "list every table in a catalog, or in one namespace");
  AddCatalogOption(list, l->catalog);
  list->add_option("--namespace", l->ns, "restrict to one namespace");
  list->callback([&cli, l] {
    cli.action = [&cli, l] {
      return WithCatalog(
          cli, l->catalog,
          [&](const ApiClient& api, const Json& w) {
            Call call{.path = "/v1/tables",
                      .query = {{"warehouse_id", w.value("warehouse_id", "")}}};
            if (!l->ns.empty()) call.query.emplace_back("namespace", l->ns);
            return Request(api, call);
          },
          Table{"tables", {{"TABLE", "table"}, {"NAMESPACE", "namespace"}, {"NAME", "name"}}});
    };
  });

  struct GetOpts {
    std::string catalog, ns, name;
  };
  auto g = std::make_shared<GetOpts>();
  auto* get = group->add_subcommand("get", "schema, real format-version, snapshot and row count");
  AddCatalogOption(get, g->catalog);
  get->add_option("--namespace", g->ns)->required();
  get->add_option("--name", g->name)->required();
  get->callback([&cli, g] {
    cli.action = [&cli, g] {
      return WithCatalog(cli, g->catalog, [&](const ApiClient& api, const Json& w) {
        return Request(api, Call{.path = "/v1/table",
                                 .query = {{"warehouse_id", w.value("warehouse_id", "")},
                                           {"namespace", g->ns},
                                           {"name", g->name}}});
      });
    };
  });

  struct CreateOpts {
    std::string catalog, schema_file, key;
    std::vector<std::string> columns;
    CreateTable body;
  };
  auto c = std::make_shared<CreateOpts>();
  auto* create = group->add_subcommand("create", "create a table (its namespace on demand)");
  AddCatalogOption(create, c->catalog);
  create->add_option("--namespace", c->body.ns)->required();
  create->add_option("--name", c->body.name)->required();
  auto* columns =
      create->add_option("--column", c->columns, "name:type[:required][:identifier], repeatable");
  auto* schema_file = create->add_option("--schema-file", c->schema_file,
                                         "a full Iceberg schema as JSON, e.g. {\"type\":\"struct\","
                                         "\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"id\","
                                         "\"required\":true,\"type\":\"long\"}]}");
  columns->excludes(schema_file);
  create
      ->add_option("--format-version", c->body.format_version,
                   "2 (default, writable by DuckDB and PyIceberg) or 3 (only Spark 3.5 + "
                   "Iceberg 1.11 can write it)")
      ->check(CLI::IsMember({2, 3}));
  AddIdempotencyKey(create, c->key);
  create->callback([&cli, c] {
    cli.action = [&cli, c] {
      if (!c->schema_file.empty()) {
        std::ifstream in(c->schema_file);
        std::stringstream text;
        text << in.rdbuf();
        c->body.schema = Json::parse(text.str(), nullptr, false);
        if (!in || c->body.schema.is_discarded() || !c->body.schema.is_object()) {
          return cli.Fail(client::LocalFailure(
              "invalid_value",
              "--schema-file " + c->schema_file + " is not a readable JSON object"));
        }
      } else if (!c->columns.empty()) {
        auto schema = SchemaOfColumns(c->columns);
        if (!schema) return cli.Fail(schema.error());
        c->body.schema = *schema;
      }
      return WithCatalog(cli, c->catalog, [&](const ApiClient& api, const Json& w) {
        c->body.warehouse = w.value("warehouse_id", "");
        return Request(api, Call{.method = "POST",
                                 .path = "/v1/tables",
                                 .body = c->body.ToJson(),
                                 .idempotency_key = c->key});
      });
    };
  });
}

void AddCredentials(CLI::App& app, Cli& cli) {
  auto* cmd = app.add_subcommand("credentials", "short-lived, table-scoped storage credentials");
  auto t = std::make_shared<TableCredentials>();
  AddCatalogOption(cmd, t->warehouse);
  cmd->add_option("--namespace", t->ns)->required();
  cmd->add_option("--table", t->table)->required();
  cmd->callback([&cli, t] {
    cli.action = [&cli, t] {
      return WithCatalog(cli, t->warehouse, [&](const ApiClient& api, const Json& w) {
        TableCredentials body = *t;
        body.warehouse = w.value("warehouse_id", "");
        return Request(api,
                       Call{.method = "POST", .path = "/v1/credentials", .body = body.ToJson()});
      });
    };
  });
}

// The warehouse ids the saved login connected, when the key in use is that login's.
std::vector<std::string> ConnectedIds(const Cli& cli) {
  const std::string url = cli.Url();
  auto saved = client::SavedEntry(url);
  if (!saved || client::StringOf(*saved, "api_key") != client::ResolveKey(cli.key_flag, url)) {
    return {};
  }
  std::vector<std::string> ids;
  for (const auto& id : client::ListOf(*saved, "warehouse_ids")) {
    if (id.is_string()) ids.push_back(id.get<std::string>());
  }
  return ids;
}

void AddConnect(CLI::App& app, Cli& cli) {
  auto* cmd = app.add_subcommand(
      "connect",
      "a paste-ready recipe for your own engine, carrying the identity that matches "
      "your level");
  struct Opts {
    std::string catalog, engine = "duckdb";
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--catalog,--warehouse", o->catalog,
                  std::string(kCatalogHelp) +
                      " (default: the connected catalog: the one `tablemere login` approved, "
                      "or the only one you hold)");
  cmd->add_option("--engine", o->engine)
      ->check(CLI::IsMember({"duckdb", "pyiceberg", "spark", "snowflake"}));
  cmd->callback([&cli, o] {
    cli.action = [&cli, o] {
      auto api = cli.Api();
      auto w = o->catalog.empty() ? client::ConnectedCatalog(api, ConnectedIds(cli))
                                  : client::ResolveWarehouse(api, o->catalog);
      if (!w) return cli.Fail(w.error());
      auto conn = Request(api, Call{.path = "/v1/connection",
                                    .query = {{"warehouse_id", (*w).value("warehouse_id", "")},
                                              {"engine", o->engine}}});
      if (!conn) return cli.Fail(conn.error());
      // On a terminal the recipe itself is what a person wants to paste.
      if (cli.Human()) {
        for (const char* field : {"sql", "python"}) {
          if (conn->contains(field) && (*conn)[field].is_string()) {
            std::cout << (*conn)[field].get<std::string>() << "\n";
            return 0;
          }
        }
      }
      cli.Print(*conn);
      return 0;
    };
  });
}

}  // namespace

void AddCatalogCommands(CLI::App& app, Cli& cli) {
  AddProject(app, cli);
  AddCatalogGroup(app, cli);
  AddNamespace(app, cli);
  AddTable(app, cli);
  AddCredentials(app, cli);
  AddConnect(app, cli);
}

}  // namespace tablemere::cli
