#include "server/config.h"

#include <fstream>
#include <sstream>

#include <cstdlib>
#include <functional>
#include <vector>

#include "common/strings.h"

namespace tablemere::server {

namespace {

struct Flag {
  const char* name;  // without "--"
  const char* env;
  const char* help;
  std::function<Result<void>(const std::string&)> set;
};

Result<void> SetInt(int64_t& target, const std::string& value, const char* name) {
  auto n = ParseInt(value);
  if (!n || *n <= 0)
    return Fail(ErrorCode::kInvalidInput, std::string("--") + name + " needs a positive integer");
  target = *n;
  return {};
}

// For settings where 0 means "off".
Result<void> SetNonNegative(int64_t& target, const std::string& value, const char* name) {
  auto n = ParseInt(value);
  if (!n || *n < 0) {
    return Fail(ErrorCode::kInvalidInput,
                std::string("--") + name + " needs a non-negative integer (0: off)");
  }
  target = *n;
  return {};
}

// A PostgreSQL conninfo is accepted as a URI or key=value string without a password: a
// flag's value shows in the process list and shell history.
Result<void> CheckPostgresConninfo(const std::string& v) {
  bool uri = v.starts_with("postgresql://") || v.starts_with("postgres://");
  if (!uri && v.find('=') == std::string::npos) {
    return Fail(ErrorCode::kInvalidInput,
                "--metastore is sqlite or a PostgreSQL URI (postgresql://user@host:port/db)");
  }
  bool password = false;
  if (uri) {
    std::string authority = v.substr(v.find("://") + 3);
    authority = authority.substr(0, authority.find_first_of("/?"));
    size_t at = authority.rfind('@');
    password = at != std::string::npos && authority.substr(0, at).find(':') != std::string::npos;
    password = password || v.find("password=") != std::string::npos;
  } else {
    password = v.find("password") != std::string::npos;
  }
  if (password) {
    return Fail(ErrorCode::kInvalidInput,
                "--metastore must not carry the database password: set PGPASSWORD or a passfile "
                "(PGPASSFILE) instead");
  }
  return {};
}

std::vector<Flag> Flags(Config& c) {
  auto str = [](std::string& target) {
    return [&target](const std::string& v) -> Result<void> {
      target = v;
      return {};
    };
  };
  return {
      {"api-addr", "TABLEMERE_API_ADDR",
       "control-plane API listen address (default 127.0.0.1:8080)", str(c.api_addr)},
      {"catalog-addr", "TABLEMERE_CATALOG_ADDR",
       "Iceberg REST catalog listen address (default 127.0.0.1:8181)", str(c.catalog_addr)},
      {"s3-addr", "TABLEMERE_S3_ADDR",
       "S3-compatible storage listen address (default 127.0.0.1:9000)", str(c.s3_addr)},
      {"metrics-addr", "TABLEMERE_METRICS_ADDR",
       "serve GET /metrics on this address only, not on the API listener (default: on the API)",
       str(c.metrics_addr)},
      {"data-dir", "TABLEMERE_DATA_DIR", "directory for all state and objects (default ./data)",
       str(c.data_dir)},
      {"metastore", "TABLEMERE_METASTORE",
       "where the state lives: sqlite (under --data-dir, default) or a PostgreSQL URI, e.g. "
       "postgresql://tablemere@db.internal/tablemere (password from PGPASSWORD or a passfile)",
       [&c](const std::string& v) -> Result<void> {
         if (v.empty() || v == "sqlite") {
           c.metastore.clear();
           return {};
         }
         TM_TRY(CheckPostgresConninfo(v));
         c.metastore = v;
         return {};
       }},
      {"master-key-file", "TABLEMERE_MASTER_KEY_FILE",
       "the master key (32 bytes or 64 hex digits); required with a PostgreSQL metastore, "
       "the same file on every replica (default <data-dir>/master.key, created)",
       str(c.master_key_file)},
      {"object-store", "TABLEMERE_OBJECT_STORE",
       "where objects live: local (under --data-dir, default) or s3 (an existing "
       "S3-compatible store; keys from the environment)",
       [&c](const std::string& v) -> Result<void> {
         if (v != "local" && v != "s3") {
           return Fail(ErrorCode::kInvalidInput, "--object-store is local or s3");
         }
         c.object_store = v;
         return {};
       }},
      {"object-store-endpoint", "TABLEMERE_OBJECT_STORE_ENDPOINT",
       "the S3 store's endpoint URL, e.g. http://127.0.0.1:8333 (path-style requests)",
       str(c.object_store_endpoint)},
      {"object-store-bucket", "TABLEMERE_OBJECT_STORE_BUCKET",
       "the S3 store's bucket, which must exist", str(c.object_store_bucket)},
      {"object-store-root", "TABLEMERE_OBJECT_STORE_ROOT",
       "key prefix for everything Tablemere stores in that bucket (default none)",
       str(c.object_store_root)},
      {"object-store-region", "TABLEMERE_OBJECT_STORE_REGION",
       "the S3 store's signing region (default us-east-1)", str(c.object_store_region)},
      {"object-store-stall-seconds", "TABLEMERE_OBJECT_STORE_STALL_SECONDS",
       "a request to the S3 store that makes no progress this long fails with 503 SlowDown "
       "(default 30)",
       [&c](const std::string& v) {
         return SetInt(c.object_store_stall_seconds, v, "object-store-stall-seconds");
       }},
      {"public-api-url", "TABLEMERE_PUBLIC_API_URL",
       "API URL printed in recipes (default: from --api-addr)", str(c.public_api_url)},
      {"public-catalog-url", "TABLEMERE_PUBLIC_CATALOG_URL",
       "catalog URL given to engines (default: from --catalog-addr)", str(c.public_catalog_url)},
      {"public-s3-url", "TABLEMERE_PUBLIC_S3_URL",
       "S3 endpoint vended to engines (default: from --s3-addr)", str(c.public_s3_url)},
      {"session-seconds", "TABLEMERE_SESSION_SECONDS",
       "lifetime of vended storage sessions (default 900)",
       [&c](const std::string& v) { return SetInt(c.session_seconds, v, "session-seconds"); }},
      {"catalog-token-seconds", "TABLEMERE_CATALOG_TOKEN_SECONDS",
       "lifetime of catalog tokens (default 900)",
       [&c](const std::string& v) {
         return SetInt(c.catalog_token_seconds, v, "catalog-token-seconds");
       }},
      {"maintenance-interval", "TABLEMERE_MAINTENANCE_INTERVAL",
       "seconds between maintenance sweeps over every table (default 3600; 0: off)",
       [&c](const std::string& v) {
         return SetNonNegative(c.maintenance_interval_seconds, v, "maintenance-interval");
       }},
      {"orphan-grace-seconds", "TABLEMERE_ORPHAN_GRACE_SECONDS",
       "unreferenced files younger than this are not deleted as orphans (default 259200, 3 "
       "days)",
       [&c](const std::string& v) {
         return SetInt(c.orphan_grace_seconds, v, "orphan-grace-seconds");
       }},
      {"maintenance-quiet-seconds", "TABLEMERE_MAINTENANCE_QUIET_SECONDS",
       "how long after a table's last commit maintenance visits it, and how old a file must "
       "be before the visit rewrites it (default 600)",
       [&c](const std::string& v) {
         return SetNonNegative(c.maintenance_quiet_seconds, v, "maintenance-quiet-seconds");
       }},
      {"maintenance-bytes-per-hour", "TABLEMERE_MAINTENANCE_BYTES_PER_HOUR",
       "bytes compaction may rewrite per hour (default 8 GiB)",
       [&c](const std::string& v) {
         return SetInt(c.maintenance_bytes_per_hour, v, "maintenance-bytes-per-hour");
       }},
      {"maintenance-worker", "TABLEMERE_MAINTENANCE_WORKER",
       "the maintenance worker program (default: tablemere-maint beside the server)",
       str(c.maintenance_worker)},
      {"web-dir", "TABLEMERE_WEB_DIR",
       "the built account page served at /app/ (default: ../web beside the server binary, "
       "where scripts/build.sh puts it)",
       str(c.web_dir)},
      {"rebase-timeout-seconds", "TABLEMERE_REBASE_TIMEOUT_SECONDS",
       "how long a commit's rebase over maintenance may run the worker, in all; past it the "
       "commit's conflict stands (default 60, at most 3600; 0: commits whose deletes need "
       "re-aiming are not rebased)",
       [&c](const std::string& v) -> Result<void> {
         TM_TRY(SetNonNegative(c.rebase_timeout_seconds, v, "rebase-timeout-seconds"));
         if (c.rebase_timeout_seconds > 3600) {
           return Fail(ErrorCode::kInvalidInput,
                       "rebase-timeout-seconds is at most 3600 (it holds a commit request)");
         }
         return {};
       }},
      {"scan-plan-files-per-task", "TABLEMERE_SCAN_PLAN_FILES_PER_TASK",
       "server-side scan planning answers about this many data files at once and the rest as "
       "plan tasks the client fetches (default 2000)",
       [&c](const std::string& v) -> Result<void> {
         TM_TRY(SetNonNegative(c.scan_plan_files_per_task, v, "scan-plan-files-per-task"));
         if (c.scan_plan_files_per_task < 1) {
           return Fail(ErrorCode::kInvalidInput, "scan-plan-files-per-task is at least 1");
         }
         return {};
       }},
      {"scan-plan-wait-ms", "TABLEMERE_SCAN_PLAN_WAIT_MS",
       "how long a scan plan request of a client that polls (Iceberg Java) waits for the plan "
       "to be prepared before it is answered \"submitted\" (default 10000)",
       [&c](const std::string& v) {
         return SetNonNegative(c.scan_plan_wait_ms, v, "scan-plan-wait-ms");
       }},
      {"ready-file", "TABLEMERE_READY_FILE", "write the bound URLs as JSON here once serving",
       str(c.ready_file)},
      {"cors-origins", "TABLEMERE_CORS_ORIGINS",
       "web origins allowed by CORS, comma-separated (default: the public API URL's origin)",
       str(c.cors_origins)},
      {"access-log", "TABLEMERE_ACCESS_LOG",
       "access log: '-' for stderr (default), a file, or '' for none", str(c.access_log)},
      {"max-connections", "TABLEMERE_MAX_CONNECTIONS",
       "open connections per server, idle ones included (default 50000)",
       [&c](const std::string& v) { return SetInt(c.max_connections, v, "max-connections"); }},
      {"max-connections-per-address", "TABLEMERE_MAX_CONNECTIONS_PER_ADDRESS",
       "open connections per client address; more get a 503 (default 1000)",
       [&c](const std::string& v) {
         return SetInt(c.max_connections_per_address, v, "max-connections-per-address");
       }},
      {"head-timeout-seconds", "TABLEMERE_HEAD_TIMEOUT_SECONDS",
       "a request head must arrive within this (default 10)",
       [&c](const std::string& v) {
         return SetInt(c.head_timeout_seconds, v, "head-timeout-seconds");
       }},
      {"idle-timeout-seconds", "TABLEMERE_IDLE_TIMEOUT_SECONDS",
       "a keep-alive connection idle this long is closed (default 120)",
       [&c](const std::string& v) {
         return SetInt(c.idle_timeout_seconds, v, "idle-timeout-seconds");
       }},
      {"max-request-threads", "TABLEMERE_MAX_REQUEST_THREADS",
       "threads serving requests at once; more requests queue (default 1024)",
       [&c](const std::string& v) {
         return SetInt(c.max_request_threads, v, "max-request-threads");
       }},
  };
}

std::string Usage(const std::vector<Flag>& flags) {
  std::string out =
      "Usage: tablemere-server [flags]\n\n"
      "Serves the Tablemere control-plane API, the Iceberg REST catalog and S3-compatible\n"
      "storage from one process, with state and objects under --data-dir.\n\nFlags (each also "
      "read from the environment variable shown):\n";
  for (const auto& f : flags) {
    std::string name = std::string("  --") + f.name + " VALUE";
    name.resize(std::max<size_t>(name.size() + 1, 30), ' ');
    out += name + f.help + "  [" + f.env + "]\n";
  }
  out +=
      "  --help                      this text\n  --version                   the version\n\n"
      "Environment only (secrets never go on a command line):\n"
      "  TABLEMERE_S3_USERS          operator S3 users, 'access:secret,…'; each owns the buckets "
      "it creates\n"
      "  TABLEMERE_BOOTSTRAP_SECRET[_FILE]  the operator's secret for /internal/ routes\n"
      "  TABLEMERE_SMTP_HOST, _PORT (587), _USER, _PASSWORD[_FILE], _FROM, _TLS "
      "(starttls|required|off), _CA_FILE\n"
      "                              the mail sender; without it codes and links are only "
      "logged\n"
      "  TABLEMERE_OIDC_ISSUERS      external OpenID Connect issuers, a JSON list of {issuer, "
      "client_id, audience, discovery_url, trust_email}\n"
      "  TABLEMERE_OBJECT_STORE_ACCESS_KEY_ID, TABLEMERE_OBJECT_STORE_SECRET_ACCESS_KEY[_FILE]\n"
      "                              the S3 store's keys (default AWS_ACCESS_KEY_ID and "
      "AWS_SECRET_ACCESS_KEY)\n";
  return out;
}

// A secret from NAME or from the file named by NAME_FILE (trimmed); "" when neither is set.
Result<std::string> SecretFromEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  const char* file = std::getenv((name + "_FILE").c_str());
  if (value && *value && file && *file) {
    return Fail(ErrorCode::kInvalidInput, "set " + name + " or " + name + "_FILE, not both");
  }
  if (value && *value) return std::string(value);
  if (!file || !*file) return std::string();
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) {
    return Fail(ErrorCode::kInvalidInput, "cannot read " + name + "_FILE " + file);
  }
  std::string secret = Trim(text.str());
  if (secret.empty()) return Fail(ErrorCode::kInvalidInput, name + "_FILE " + file + " is empty");
  return secret;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? Trim(v) : std::string();
}

// The SMTP sender, from the environment only: TABLEMERE_SMTP_HOST (none: "log" delivery),
// _PORT (587), _USER, _PASSWORD or _PASSWORD_FILE, _FROM, _TLS (starttls | required | off),
// _CA_FILE (trust anchors of a private relay).
Result<void> ReadSmtp(Config& config) {
  auto& smtp = config.smtp;
  smtp.host = Env("TABLEMERE_SMTP_HOST");
  if (smtp.host.empty()) return {};
  if (std::string port = Env("TABLEMERE_SMTP_PORT"); !port.empty()) {
    auto n = ParseInt(port);
    if (!n || *n <= 0 || *n > 65535) {
      return Fail(ErrorCode::kInvalidInput, "TABLEMERE_SMTP_PORT must be a port number");
    }
    smtp.port = static_cast<int>(*n);
  }
  smtp.user = Env("TABLEMERE_SMTP_USER");
  TM_ASSIGN(smtp.password, SecretFromEnv("TABLEMERE_SMTP_PASSWORD"));
  smtp.from = Env("TABLEMERE_SMTP_FROM");
  smtp.ca_file = Env("TABLEMERE_SMTP_CA_FILE");
  if (smtp.from.empty()) {
    return Fail(ErrorCode::kInvalidInput,
                "TABLEMERE_SMTP_HOST is set: set TABLEMERE_SMTP_FROM to the sender address too");
  }
  const std::string tls = ToLower(Env("TABLEMERE_SMTP_TLS"));
  if (tls.empty() || tls == "starttls") {
    smtp.tls = mail::SmtpTls::kOpportunistic;
  } else if (tls == "required") {
    smtp.tls = mail::SmtpTls::kRequired;
  } else if (tls == "off") {
    smtp.tls = mail::SmtpTls::kOff;
  } else {
    return Fail(ErrorCode::kInvalidInput, "TABLEMERE_SMTP_TLS must be starttls, required or off");
  }
  return {};
}

}  // namespace

Result<ParseOutcome> ParseConfig(int argc, char** argv, Config& config, std::string* output) {
  std::vector<Flag> flags = Flags(config);
  for (const auto& f : flags) {
    if (const char* v = std::getenv(f.env)) TM_TRY(f.set(v));
  }
  if (const char* users = std::getenv("TABLEMERE_S3_USERS")) {
    for (const auto& pair : Split(users, ',')) {
      std::string p = Trim(pair);
      if (p.empty()) continue;
      size_t colon = p.find(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == p.size()) {
        return Fail(ErrorCode::kInvalidInput, "TABLEMERE_S3_USERS must be 'access:secret,…'");
      }
      config.s3_users[p.substr(0, colon)] = p.substr(colon + 1);
    }
  }
  TM_ASSIGN(config.bootstrap_secret, SecretFromEnv("TABLEMERE_BOOTSTRAP_SECRET"));
  config.object_store_access_key = Env("TABLEMERE_OBJECT_STORE_ACCESS_KEY_ID");
  if (config.object_store_access_key.empty()) {
    config.object_store_access_key = Env("AWS_ACCESS_KEY_ID");
  }
  TM_ASSIGN(config.object_store_secret_key,
            SecretFromEnv("TABLEMERE_OBJECT_STORE_SECRET_ACCESS_KEY"));
  if (config.object_store_secret_key.empty()) {
    config.object_store_secret_key = Env("AWS_SECRET_ACCESS_KEY");
  }
  TM_TRY(ReadSmtp(config));
  std::string issuers = Env("TABLEMERE_OIDC_ISSUERS");
  if (issuers.empty()) issuers = Env("AL_OIDC_ISSUERS");
  if (!issuers.empty()) {
    TM_ASSIGN(config.oidc_issuers, identity::ParseIssuers(issuers));
  }
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      *output = Usage(flags);
      return ParseOutcome::kExitOk;
    }
    if (arg == "--version") {
      *output = std::string("tablemere-server ") + TABLEMERE_VERSION + "\n";
      return ParseOutcome::kExitOk;
    }
    if (!arg.starts_with("--"))
      return Fail(ErrorCode::kInvalidInput, "unexpected argument '" + arg + "'");
    std::string name = arg.substr(2);
    std::string value;
    size_t eq = name.find('=');
    bool has_value = eq != std::string::npos;
    if (has_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    auto it =
        std::find_if(flags.begin(), flags.end(), [&](const Flag& f) { return name == f.name; });
    if (it == flags.end()) {
      return Fail(ErrorCode::kInvalidInput, "unknown flag --" + name + " (see --help)");
    }
    if (!has_value) {
      if (i + 1 >= argc) return Fail(ErrorCode::kInvalidInput, "--" + name + " needs a value");
      value = argv[++i];
    }
    TM_TRY(it->set(value));
  }
  if (!config.metastore.empty() && config.master_key_file.empty()) {
    return Fail(ErrorCode::kInvalidInput,
                "a PostgreSQL --metastore needs --master-key-file, the same file on every "
                "server sharing the database (create it once: openssl rand -hex 32 > "
                "master.key)");
  }
  if (config.object_store == "s3" &&
      (config.object_store_endpoint.empty() || config.object_store_bucket.empty())) {
    return Fail(ErrorCode::kInvalidInput,
                "--object-store s3 needs --object-store-endpoint and --object-store-bucket");
  }
  return ParseOutcome::kRun;
}

}  // namespace tablemere::server
