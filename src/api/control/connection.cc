// GET /v1/connection: a paste-ready recipe for an engine, with the catalog credential
// matching the caller's level on the warehouse.
#include "api/control/routes.h"
#include "storage/access.h"

namespace tablemere::api::control {

Json ConnectionJson(const accounts::Connection& c) {
  const auto& w = c.access.warehouse;
  std::string bucket = storage::TableBucketName(w.id);
  Json j = {
      {"engine", c.engine},
      {"catalog_uri", c.urls.catalog},
      {"warehouse", "s3://" + bucket + "/"},
      {"warehouse_name", bucket},
      {"warehouse_id", w.id.str()},
      {"project_id", w.project_id.str()},
      {"level", metastore::Name(c.access.level)},
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
      {"blob_example_python",
       "import boto3\ns3 = boto3.client('s3', endpoint_url='" + c.urls.s3 +
           "', aws_access_key_id='" + c.identity + "', aws_secret_access_key='" + c.client_secret +
           "', region_name='us-east-1')\ns3.put_object(Bucket='" + storage::BlobBucketName(w.id) +
           "', Key='hello.txt', Body=b'hello')\n"},
      {"token_endpoint", c.urls.catalog + "/v1/oauth/tokens"},
      {"token_exchange",
       {{"grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"}, {"supported", true}}},
      {"notes", c.notes},
  };
  if (c.engine == "duckdb" || c.engine == "snowflake") j["sql"] = c.sql;
  if (c.engine == "pyiceberg") j["python"] = c.python;
  if (c.engine == "spark") j["conf"] = c.conf;
  return j;
}

void BindConnection(Binder& b, Context& ctx) {
  b.Authed(
      "GET", "/v1/connection",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        auto q = QueryMap(req);
        std::string engine = q.count("engine") ? q["engine"] : "duckdb";
        std::string warehouse = q.count("warehouse_id") ? q["warehouse_id"] : q["warehouse"];
        TM_ASSIGN(auto access, ctx.accounts.access().HeldAccess(caller, warehouse));
        TM_ASSIGN(auto connection, ctx.accounts.recipes().BuildConnection(access, engine));
        return Response::Json(200, ConnectionJson(connection).dump());
      });
}

}  // namespace tablemere::api::control
