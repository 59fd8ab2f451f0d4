// Recipes: the connection recipes engines run.
#include "accounts/recipes.h"

#include "accounts/input_checks.h"
#include "storage/access.h"

namespace tablemere::accounts {
namespace {

std::string HostPort(const std::string& url) {
  size_t p = url.find("://");
  return p == std::string::npos ? url : url.substr(p + 3);
}

}  // namespace

Result<Connection> Recipes::BuildConnection(const WarehouseAccess& access,
                                            const std::string& engine) {
  TM_TRY(CheckEngine(engine, EngineSet::kRecipes));
  Connection c;
  c.engine = engine;
  c.access = access;
  c.urls = urls_;
  // Snowflake gets the read-only identity whatever the level: its static keys sit in the
  // account's external volume, where ALLOW_WRITES = FALSE is all that would stop a write.
  bool read_only = access.level != metastore::Level::kWrite || engine == "snowflake";
  c.identity = IdentityName(access.warehouse.id, read_only);
  c.client_secret = secrets_.SecretFor(c.identity, access.warehouse.credential_generation);
  std::string bucket = storage::TableBucketName(access.warehouse.id);
  std::string token_url = urls_.catalog + "/v1/oauth/tokens";
  bool https = urls_.s3.starts_with("https://");
  c.notes.push_back(read_only
                        ? "You hold read on this warehouse: the recipe carries the read-only "
                          "identity; the catalog refuses its commits and the store its writes."
                        : "You hold write on this warehouse: the recipe reads and writes.");
  if (engine == "duckdb") {
    c.sql =
        "INSTALL iceberg; LOAD iceberg; INSTALL httpfs; LOAD httpfs;\n"
        "CREATE SECRET tablemere (TYPE ICEBERG, CLIENT_ID '" +
        c.identity + "', CLIENT_SECRET '" + c.client_secret + "', OAUTH2_SERVER_URI '" + token_url +
        "');\n"
        "CREATE SECRET tablemere_s3 (TYPE S3, KEY_ID '" +
        c.identity + "', SECRET '" + c.client_secret + "', ENDPOINT '" + HostPort(urls_.s3) +
        "', URL_STYLE 'path', USE_SSL " + (https ? "true" : "false") +
        ", REGION 'us-east-1', SCOPE 's3://" + bucket +
        "');\n"
        "ATTACH '" +
        bucket + "' AS lake (TYPE ICEBERG, ENDPOINT '" + urls_.catalog + "', SECRET tablemere);\n";
    c.notes.push_back("ATTACH the bare bucket name; the s3:// form attaches read-only in DuckDB.");
  } else if (engine == "snowflake") {
    c.sql =
        "CREATE OR REPLACE CATALOG INTEGRATION tablemere_lake\n"
        "  CATALOG_SOURCE = ICEBERG_REST\n"
        "  TABLE_FORMAT = ICEBERG\n"
        "  REST_CONFIG = (CATALOG_URI = '" +
        urls_.catalog + "' CATALOG_NAME = '" + bucket +
        "')\n"
        "  REST_AUTHENTICATION = (TYPE = OAUTH OAUTH_TOKEN_URI = '" +
        token_url + "' OAUTH_CLIENT_ID = '" + c.identity + "' OAUTH_CLIENT_SECRET = '" +
        c.client_secret +
        "' OAUTH_ALLOWED_SCOPES = ('catalog'))\n"
        "  ENABLED = TRUE;\n"
        "CREATE OR REPLACE EXTERNAL VOLUME tablemere_lake_volume\n"
        "  STORAGE_LOCATIONS = ((NAME = 'tablemere' STORAGE_PROVIDER = 'S3COMPAT'\n"
        "    STORAGE_BASE_URL = 's3compat://" +
        bucket + "/' STORAGE_ENDPOINT = '" + HostPort(urls_.s3) +
        "'\n"
        "    CREDENTIALS = (AWS_KEY_ID = '" +
        c.identity + "' AWS_SECRET_KEY = '" + c.client_secret +
        "')))\n"
        "  ALLOW_WRITES = FALSE;\n";
    c.notes.push_back(
        "Snowflake always gets the read-only identity. The catalog integration connects; reading "
        "data through Snowflake is not available today (its S3-compatible volumes need "
        "virtual-hosted bucket names over HTTPS).");
  } else if (engine == "pyiceberg") {
    // oauth2-server-uri explicitly: PyIceberg deprecates deriving it from uri (gone in 1.0).
    c.python =
        "from pyiceberg.catalog.rest import RestCatalog\n"
        "catalog = RestCatalog(name='tablemere', uri='" +
        urls_.catalog + "', warehouse='s3://" + bucket + "/', credential='" + c.identity + ":" +
        c.client_secret + "', **{'oauth2-server-uri': '" + token_url + "', 's3.endpoint': '" +
        urls_.s3 + "', 's3.path-style-access': 'true', 's3.region': 'us-east-1'})\n";
  } else {
    const std::string p = "spark.sql.catalog.lake";
    c.conf = {
        {"spark.sql.extensions",
         "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"},
        {p, "org.apache.iceberg.spark.SparkCatalog"},
        {p + ".type", "rest"},
        {p + ".uri", urls_.catalog},
        {p + ".warehouse", "s3://" + bucket + "/"},
        {p + ".credential", c.identity + ":" + c.client_secret},
        {p + ".io-impl", "org.apache.iceberg.aws.s3.S3FileIO"},
        {p + ".s3.endpoint", urls_.s3},
        {p + ".s3.path-style-access", "true"},
        {p + ".client.region", "us-east-1"},
        {p + ".header.X-Iceberg-Access-Delegation", "vended-credentials"},
        // Token refresh works either way (the catalog supports token exchange); refreshing
        // with client_credentials is the most robust for long sessions.
        {p + ".token-exchange-enabled", "false"},
    };
  }
  return c;
}

}  // namespace tablemere::accounts
