// The connection recipes engines run (GET /v1/connection, the signup answer): the
// catalog, the store and the warehouse identity's credentials for DuckDB, PyIceberg,
// Spark and (read-only) Snowflake (recipes.cc).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "accounts/access_service.h"
#include "accounts/credentials.h"
#include "common/result.h"
#include "metastore/metastore.h"

namespace tablemere::accounts {

struct PublicUrls {
  std::string api;      // "http://127.0.0.1:8080"
  std::string catalog;  // "http://127.0.0.1:8181"
  std::string s3;       // "http://127.0.0.1:9000"
};

struct Connection {
  std::string engine;
  WarehouseAccess access;
  std::string identity;       // t-<id> or t-<id>-ro
  std::string client_secret;  // the identity's secret
  PublicUrls urls;
  std::string sql;                          // duckdb
  std::string python;                       // pyiceberg
  std::map<std::string, std::string> conf;  // spark
  std::vector<std::string> notes;
};

class Recipes {
 public:
  Recipes(const IdentitySecrets& secrets, const PublicUrls& urls)
      : secrets_(secrets), urls_(urls) {}

  // The recipe for `engine` on a warehouse the caller holds `access` on: the read-only
  // identity unless it holds write. Errors: kInvalidInput (unsupported_engine).
  Result<Connection> BuildConnection(const WarehouseAccess& access, const std::string& engine);
  // The current secret of a warehouse's read-write or read-only identity.
  std::string SecretOf(const metastore::Warehouse& w, bool read_only) const {
    return secrets_.SecretFor(IdentityName(w.id, read_only), w.credential_generation);
  }

 private:
  const IdentitySecrets& secrets_;
  const PublicUrls& urls_;
};

}  // namespace tablemere::accounts
