// catalog publish, unpublish and public-url: a catalog's table bucket readable by anyone
// (storage-level publishing), the REST catalog opened to anonymous reads only on its own
// flag, and the recipes that read a public catalog with no credential, as printed.
#include "api/wire/control.h"
#include "cli/cli.h"
#include "client/operations.h"

namespace tablemere::cli {
namespace {

using client::ApiClient;
using client::Call;
using client::Outcome;
using client::Request;

// "host:port" of an endpoint URL (DuckDB's ENDPOINT takes no scheme).
std::string HostPort(const std::string& url) {
  const size_t scheme = url.find("://");
  std::string rest = scheme == std::string::npos ? url : url.substr(scheme + 3);
  while (rest.ends_with("/")) rest.pop_back();
  return rest;
}

// Python's string literal of `s` (the recipe's values are URLs and names).
std::string PyString(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

// The unsigned S3 secret DuckDB reads a public bucket with: this deployment's endpoint,
// path-style, no key (httpfs then sends requests unsigned), scoped to the bucket.
std::string DuckDbSecret(const std::string& endpoint, const std::string& bucket) {
  const bool https = endpoint.starts_with("https://");
  return "INSTALL iceberg; LOAD iceberg; INSTALL httpfs; LOAD httpfs;\n"
         "CREATE SECRET tablemere_public (TYPE S3, PROVIDER config, ENDPOINT '" +
         HostPort(endpoint) + "', URL_STYLE 'path', USE_SSL " + (https ? "true" : "false") +
         ", REGION 'us-east-1', SCOPE 's3://" + bucket + "');\n";
}

// PyIceberg reading `path` (a metadata file, or a table folder with a version hint)
// anonymously from this deployment's endpoint.
std::string PyIcebergRecipe(const std::string& path, const std::string& endpoint) {
  return "from pyiceberg.table import StaticTable\n"
         "table = StaticTable.from_metadata(\n    " +
         PyString(path) + ",\n    properties={'s3.endpoint': " + PyString(endpoint) +
         ", 's3.anonymous': 'true', 's3.region': "
         "'us-east-1'},\n)\nprint(table.scan().to_arrow())\n";
}

// The public-url answer for one catalog (and one table when `table` is NS.TABLE).
Outcome PublicUrls(const ApiClient& api, const Json& w, const std::string& table) {
  const std::string id = w.value("warehouse_id", "");
  auto conn = Request(api, Call{.path = "/v1/connection", .query = {{"warehouse_id", id}}});
  if (!conn) return conn;
  const std::string bucket = client::StringOf(*conn, "warehouse_name");
  const std::string endpoint = client::StringOf(*conn, "storage_endpoint");
  const std::string base = endpoint + "/" + bucket;
  const bool is_public = w.value("public", false);
  Json out = {
      {"warehouse_id", id},
      {"name", w.value("name", "")},
      {"public", is_public},
      {"anonymous_catalog", w.value("anonymous_catalog", false)},
      {"public_url", base + "/"},
      {"duckdb", DuckDbSecret(endpoint, bucket) + "SELECT * FROM iceberg_scan('s3://" + bucket +
                     "/NAMESPACE/TABLE') LIMIT 10;  -- a table's folder: read through its "
                     "metadata/version-hint.text"}};
  if (!is_public) {
    out["note"] =
        "Not public: anonymous reads are refused. Publish with: tablemere catalog publish "
        "--catalog " +
        w.value("name", "") + " --confirm " + w.value("name", "");
  }
  if (table.empty()) return out;
  const size_t dot = table.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == table.size()) {
    return std::unexpected(client::LocalFailure("invalid_value", "--table takes NAMESPACE.TABLE",
                                                "e.g. --table analytics.events"));
  }
  auto t = Request(api, Call{.path = "/v1/table",
                             .query = {{"warehouse_id", id},
                                       {"namespace", table.substr(0, dot)},
                                       {"name", table.substr(dot + 1)}}});
  if (!t) return t;
  const std::string metadata = client::StringOf(*t, "metadata_location");
  const std::string location = client::StringOf(*t, "location");
  const std::string prefix = "s3://" + bucket + "/";
  if (!metadata.starts_with(prefix)) return out;
  out["metadata_location"] = metadata;
  out["metadata_url"] = base + "/" + metadata.substr(prefix.size());
  // The server keeps <location>/metadata/version-hint.text current for public tables
  // whose metadata lies there (every table it created).
  const std::string metadata_dir = location + "/metadata/";
  const bool hinted = location.starts_with(prefix) && metadata.starts_with(metadata_dir) &&
                      metadata.find('/', metadata_dir.size()) == std::string::npos;
  if (hinted) {
    out["version_hint_url"] =
        base + "/" + location.substr(prefix.size()) + "/metadata/version-hint.text";
  } else {
    out["version_hint_url"] = nullptr;
    out["version_hint_note"] =
        "This table's metadata lies outside its location's metadata/ folder (a registered "
        "table): read it through metadata_url.";
  }
  out["duckdb"] =
      DuckDbSecret(endpoint, bucket) + "SELECT * FROM iceberg_scan('" + metadata + "') LIMIT 10;";
  if (hinted) {
    out["duckdb_latest"] = DuckDbSecret(endpoint, bucket) + "SELECT * FROM iceberg_scan('" +
                           location + "') LIMIT 10;  -- follows the version hint";
  }
  out["pyiceberg"] = PyIcebergRecipe(metadata, endpoint);
  // PyIceberg reads a folder's metadata/version-hint.text itself.
  if (hinted) out["pyiceberg_latest"] = PyIcebergRecipe(location, endpoint);
  return out;
}

}  // namespace

void AddPublishCommands(CLI::App* group, Cli& cli) {
  struct PublishOpts {
    std::string catalog, key;
    api::wire::Publish body;
  };
  auto pub = std::make_shared<PublishOpts>();
  auto* publish = group->add_subcommand(
      "publish",
      "make a catalog PUBLIC (admin, the name typed out): every data file and every "
      "retained metadata.json becomes readable by anyone without credentials; the REST "
      "catalog stays private unless --anonymous-catalog");
  AddCatalogOption(publish, pub->catalog);
  publish->add_option("--confirm", pub->body.confirm, "the catalog's name, exactly")->required();
  publish->add_flag("--anonymous-catalog", pub->body.anonymous_catalog,
                    "also open the REST catalog to anonymous list and load (our addition: "
                    "table names, schemas and history become public too)");
  AddIdempotencyKey(publish, pub->key);
  publish->callback([&cli, pub] {
    cli.action = [&cli, pub] {
      return WithCatalog(cli, pub->catalog, [&](const ApiClient& api, const Json& w) -> Outcome {
        // The name typed out, compared here before anything is sent and again by the server.
        if (auto refused = client::CheckConfirmation(w, pub->body.confirm)) {
          return std::unexpected(*refused);
        }
        return Request(api, Call{.method = "POST",
                                 .path = WarehousePath(w, "/public"),
                                 .body = pub->body.ToJson(),
                                 .idempotency_key = pub->key});
      });
    };
  });

  struct Opts {
    std::string catalog, key;
  };
  auto unpub = std::make_shared<Opts>();
  auto* unpublish = group->add_subcommand(
      "unpublish",
      "make a public catalog private again (admin): anonymous reads of its storage and "
      "catalog are refused at once");
  AddCatalogOption(unpublish, unpub->catalog);
  AddIdempotencyKey(unpublish, unpub->key);
  unpublish->callback([&cli, unpub] {
    cli.action = [&cli, unpub] {
      return WithCatalog(cli, unpub->catalog, [&](const ApiClient& api, const Json& w) {
        return Request(api, Call{.method = "DELETE",
                                 .path = WarehousePath(w, "/public"),
                                 .idempotency_key = unpub->key});
      });
    };
  });

  struct UrlOpts {
    std::string catalog, table;
  };
  auto pu = std::make_shared<UrlOpts>();
  auto* public_url = group->add_subcommand(
      "public-url",
      "the public URL of a catalog and the no-credentials DuckDB recipe; with --table, that "
      "table's current metadata_url and version_hint_url and DuckDB and PyIceberg recipes "
      "that run as printed");
  AddCatalogOption(public_url, pu->catalog);
  public_url->add_option("--table", pu->table,
                         "NAMESPACE.TABLE: also print its current metadata_url and "
                         "version_hint_url");
  public_url->callback([&cli, pu] {
    cli.action = [&cli, pu] {
      return WithCatalog(cli, pu->catalog, [&](const ApiClient& api, const Json& w) {
        return PublicUrls(api, w, pu->table);
      });
    };
  });
}

}  // namespace tablemere::cli
