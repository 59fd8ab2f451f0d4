// Server configuration: flags, each also readable from a TABLEMERE_… environment variable.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "identity/oidc.h"
#include "mail/smtp_mailer.h"

namespace tablemere::server {

struct Config {
  std::string api_addr = "127.0.0.1:8080";
  std::string catalog_addr = "127.0.0.1:8181";
  std::string s3_addr = "127.0.0.1:9000";
  std::string metrics_addr;  // "": GET /metrics on the API listener
  std::string data_dir = "./data";
  // Where the state lives: "" for SQLite under --data-dir, else a PostgreSQL conninfo (a
  // postgresql:// URI or key=value string) without its password, which libpq reads from
  // PGPASSWORD or a passfile.
  std::string metastore;
  // The master key's file; required with a PostgreSQL metastore (every replica reads the
  // same key), else "<data-dir>/master.key", created on first start.
  std::string master_key_file;
  // Where objects live: "local" (under --data-dir) or "s3" (an existing S3-compatible store:
  // endpoint, bucket, root prefix, region; its keys from the environment only).
  std::string object_store = "local";
  std::string object_store_endpoint;
  std::string object_store_bucket;
  std::string object_store_root;
  std::string object_store_region = "us-east-1";
  int64_t object_store_stall_seconds = 30;  // a backend transfer without progress this long fails
  std::string object_store_access_key;      // TABLEMERE_OBJECT_STORE_ACCESS_KEY_ID | AWS_…
  std::string object_store_secret_key;  // TABLEMERE_OBJECT_STORE_SECRET_ACCESS_KEY[_FILE] | AWS_…
  std::string public_api_url;           // derived from api_addr when empty
  std::string public_catalog_url;       // derived from catalog_addr when empty
  std::string public_s3_url;            // derived from s3_addr when empty
  int64_t session_seconds = 900;        // vended storage sessions
  int64_t catalog_token_seconds = 900;  // catalog bearer tokens
  int64_t maintenance_interval_seconds = 3600;     // the maintenance sweep; 0 turns it off
  int64_t orphan_grace_seconds = 3 * 24 * 3600;    // unreferenced files younger than this stay
  int64_t maintenance_quiet_seconds = 600;         // a table's writes settle this long first
  int64_t maintenance_bytes_per_hour = 8LL << 30;  // what compaction may read in an hour
  std::string maintenance_worker;                  // tablemere-maint ("": beside the server)
  std::string web_dir;                  // the built account page ("": build/web beside build/bin)
  int64_t rebase_timeout_seconds = 60;  // a commit's rebase, all its worker runs
  int64_t scan_plan_files_per_task = 2000;  // a scan plan's files before a plan task
  int64_t scan_plan_wait_ms = 10000;        // before a pollable plan is "submitted"
  std::string ready_file;                   // written with the bound URLs once serving
  std::string access_log = "-";             // "-" for stderr, "" to disable, or a file path
  // Web origins allowed to call the S3 and catalog listeners from a browser, comma-separated;
  // empty: the deployment's own web origin (the public API URL's).
  std::string cors_origins;
  // Transport limits (http::ServerOptions has the reasons).
  int64_t max_connections = 50000;
  int64_t max_connections_per_address = 1000;
  int64_t head_timeout_seconds = 10;
  int64_t idle_timeout_seconds = 120;
  int64_t max_request_threads = 1024;
  // Operator S3 users "access:secret,…" — from the environment only, never a flag.
  std::map<std::string, std::string> s3_users;
  // The operator's secret for the /internal/ routes, from TABLEMERE_BOOTSTRAP_SECRET or the
  // file named by TABLEMERE_BOOTSTRAP_SECRET_FILE (never a flag); empty: routes off.
  std::string bootstrap_secret;
  // The mail sender (TABLEMERE_SMTP_*, environment only); no host: "log" delivery.
  mail::SmtpOptions smtp;
  // External OpenID Connect issuers trusted for people's logins (TABLEMERE_OIDC_ISSUERS, a
  // JSON list; AL_OIDC_ISSUERS is read when it is unset).
  std::vector<identity::IssuerConfig> oidc_issuers;
};

enum class ParseOutcome { kRun, kExitOk };

// Parses argv over the environment. Errors: kInvalidInput with a message for the user.
Result<ParseOutcome> ParseConfig(int argc, char** argv, Config& config, std::string* output);

}  // namespace tablemere::server
