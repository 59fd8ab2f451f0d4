#include "server/app.h"

#include <cstdlib>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "accounts/account_service.h"
#include "accounts/s3_identities.h"
#include "accounts/shared_signing_keys.h"
#include "api/control/control_api.h"
#include "api/iceberg/iceberg_rest_api.h"
#include "api/lakekeeper/lakekeeper_api.h"
#include "api/s3/s3_api.h"
#include "catalog/catalog_service.h"
#include "catalog/generic_table_service.h"
#include "common/files.h"
#include "common/key_ring.h"
#include "common/strings.h"
#include "http/server.h"
#include "identity/signing_keys.h"
#include "mail/log_mailer.h"
#include "maintenance/commit_rebase.h"
#include "maintenance/task_runner.h"
#include "metastore/metastore.h"
#include "metrics/metrics.h"
#include "objectstore/local_disk.h"
#include "objectstore/s3_store.h"
#include "objectstore/shared_key_locks.h"
#include "server/backup.h"
#include "server/cors_defaults.h"
#include "storage/access.h"
#include "web/static_site.h"

namespace tablemere::server {
namespace {

// The queue kind of the periodic maintenance sweep.
constexpr char kMaintenanceSweepTask[] = "maintenance_sweep";

// Test servers move their clock forward through POST /internal/clock.
bool TestClockEnabled() {
  const char* v = std::getenv("TABLEMERE_TEST_CLOCK");
  return v != nullptr && std::string(v) == "1";
}

// The maintenance worker: the configured path, or tablemere-maint beside this binary.
std::string WorkerPath(const std::string& configured) {
  if (!configured.empty()) return configured;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "tablemere-maint";
  return (self.parent_path() / "tablemere-maint").string();
}

// The account page's folder: the configured one, or ../web beside this binary (build/web).
std::string WebDir(const std::string& configured) {
  if (!configured.empty()) return configured;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "web";
  return (self.parent_path().parent_path() / "web").string();
}

// scheme://host[:port] of a URL.
std::string OriginOf(const std::string& url) {
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  size_t path = url.find('/', scheme + 3);
  return path == std::string::npos ? url : url.substr(0, path);
}

bool IsLoopback(const std::string& addr) {
  return addr.starts_with("127.") || addr.starts_with("localhost:") || addr.starts_with("[::1]");
}

// This server's name across its restarts: the host's name and an id kept in the data
// directory, which one live process holds at a time (its lock), so no two live servers
// share a name. A copied data directory on another host still gets a name of its own.
Result<std::string> ServerName(const std::string& data_dir, Random& random) {
  const std::string path = data_dir + "/server-id";
  auto id = ReadWholeFile(path);
  if (!id && id.error().code == ErrorCode::kNotFound) {
    id = random.Uuid();
    TM_TRY(WriteFileAtomically(path, *id + "\n", 0600));
  }
  if (!id) return Fail(id.error());
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = 0;
  const std::string trimmed = Trim(*id);
  if (trimmed.empty()) return Fail(ErrorCode::kUnavailable, path + " is empty; remove it");
  return std::string(host) + "/" + trimmed;
}

std::string UrlFor(const std::string& bound) {
  // A wildcard bind has no address to hand out; recipes then point at loopback.
  std::string host_port = bound;
  if (host_port.starts_with("0.0.0.0:")) host_port = "127.0.0.1:" + host_port.substr(8);
  if (host_port.starts_with("[::]:")) host_port = "[::1]:" + host_port.substr(5);
  return "http://" + host_port;
}

// The object store the configuration names; an S3 store is checked (list, write, delete)
// before the server starts serving.
Result<std::unique_ptr<objectstore::ObjectStore>> OpenObjectStore(
    const Config& config, const Clock& clock, Random& random,
    objectstore::SharedKeyLocks* shared_locks) {
  if (config.object_store != "s3") {
    return objectstore::OpenLocalDiskStore(config.data_dir + "/objects", clock, random);
  }
  const std::string spool = config.data_dir + "/spool";
  std::error_code ec;
  std::filesystem::create_directories(spool, ec);
  if (ec) return Fail(ErrorCode::kUnavailable, "cannot create " + spool + ": " + ec.message());
  objectstore::S3StoreConfig s3{
      .endpoint = config.object_store_endpoint,
      .bucket = config.object_store_bucket,
      .root = config.object_store_root,
      .region = config.object_store_region,
      .access_key = config.object_store_access_key,
      .secret_key = config.object_store_secret_key,
      .spool_dir = spool,
      .stall_seconds = static_cast<int>(config.object_store_stall_seconds),
      .shared_locks = shared_locks};
  auto store = objectstore::OpenS3Store(s3, clock, random);
  if (!store) {
    return Fail(store.error().code, "--object-store s3 (" + config.object_store_endpoint + ", " +
                                        "bucket " + config.object_store_bucket +
                                        "): " + store.error().message);
  }
  return store;
}

class AppImpl final : public App {
 public:
  Result<void> Init(const Config& config) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(config.data_dir, ec);
    if (ec)
      return Fail(ErrorCode::kUnavailable,
                  "cannot create " + config.data_dir + ": " + ec.message());
    fs::permissions(config.data_dir, fs::perms::owner_all, fs::perm_options::replace, ec);
    // The metastore first: it takes the data directory's exclusive lock, so two servers
    // starting together cannot both create the master key.
    if (config.metastore.empty()) {
      TM_ASSIGN(meta_, metastore::OpenSqliteMetastore(config.data_dir + "/state.db", clock_));
    } else {
      // The data directory (local objects, keys) is still this process's alone.
      TM_ASSIGN(FileLock lock, FileLock::Take(config.data_dir + "/server.lock"));
      data_dir_lock_.emplace(std::move(lock));
      auto opened = metastore::OpenPostgresMetastore(config.metastore, {}, clock_);
      if (!opened) {
        return Fail(opened.error().code, "--metastore: " + opened.error().message);
      }
      meta_ = std::move(*opened);
    }
    TM_ASSIGN(KeyRing keys, config.master_key_file.empty()
                                ? KeyRing::LoadOrCreate(config.data_dir + "/master.key")
                                : KeyRing::Load(config.master_key_file));
    keys_ = std::make_unique<KeyRing>(std::move(keys));
    TM_ASSIGN(const std::string lock_owner, ServerName(config.data_dir, random_));
    key_locks_ =
        std::make_unique<objectstore::MetastoreKeyLocks>(meta_->key_locks(), clock_, lock_owner);
    // This process holds the data directory: what a killed predecessor held is free.
    TM_TRY(key_locks_->ReleaseLeftBehind());
    TM_ASSIGN(auto backend, OpenObjectStore(config, clock_, random_, key_locks_.get()));
    // Key holds span servers only where servers share the metastore (PostgreSQL); one
    // server over SQLite holds its keys in process.
    objects_ = std::make_unique<objectstore::RegisteredStore>(
        std::move(backend), meta_->buckets(), clock_,
        config.metastore.empty() ? nullptr : key_locks_.get());
    // Buckets were registered in the object store before the metastore kept them.
    TM_TRY(objects_->ImportLegacyBuckets());
    // Usage counted as objects change reaches the metastore once a second, in one write.
    objects_->FlushEvery(1000);
    if (!config.access_log.empty() && config.access_log != "-") {
      log_file_ = std::fopen(config.access_log.c_str(), "a");
      if (!log_file_) return Fail(ErrorCode::kUnavailable, "cannot open " + config.access_log);
    }
    bool log = !config.access_log.empty();
    // ---- bind first: public URLs for port 0 are only known after binding
    std::vector<http::ListenerOptions> listeners = {
        {"api", config.api_addr, [this](http::Request& r) { return Route(0, r); }},
        {"catalog", config.catalog_addr, [this](http::Request& r) { return Route(1, r); }},
        {"s3", config.s3_addr, [this](http::Request& r) { return Route(2, r); }},
    };
    metrics_on_api_ = config.metrics_addr.empty();
    if (!metrics_on_api_) {
      listeners.push_back(
          {"metrics", config.metrics_addr, [this](http::Request& r) { return Route(3, r); }});
    }
    TM_ASSIGN(server_, http::Server::Start(std::move(listeners),
                                           log ? http::AccessLog([this](const std::string& line) {
                                             std::lock_guard lock(log_mu_);
                                             FILE* out = log_file_ ? log_file_ : stderr;
                                             std::fprintf(out, "%s\n", line.c_str());
                                             std::fflush(out);
                                           })
                                               : http::AccessLog(),
                                           TransportOptions(config)));
    accounts::PublicUrls urls{
        config.public_api_url.empty() ? UrlFor(server_->BoundAddress("api"))
                                      : config.public_api_url,
        config.public_catalog_url.empty() ? UrlFor(server_->BoundAddress("catalog"))
                                          : config.public_catalog_url,
        config.public_s3_url.empty() ? UrlFor(server_->BoundAddress("s3")) : config.public_s3_url};
    // ---- services
    secrets_ = std::make_unique<accounts::IdentitySecrets>(*keys_);
    sealer_ = std::make_unique<storage::SessionSealer>(*keys_);
    tokens_ =
        std::make_unique<catalog::CatalogTokens>(*keys_, clock_, config.catalog_token_seconds);
    // The one-call unverified signup is for local stacks only: loopback API, no mailer.
    bool local = IsLoopback(server_->BoundAddress("api")) && config.smtp.host.empty();
    // The control API's signing keys: in the data directory for the embedded server, in
    // the metastore (sealed) when servers share it, so any replica verifies any token.
    if (config.metastore.empty()) {
      TM_ASSIGN(signing_keys_, identity::SigningKeys::Open(config.data_dir + "/jwt", clock_));
    } else {
      TM_ASSIGN(
          signing_keys_,
          identity::SigningKeys::Open(
              accounts::NewSharedKeySetStore(meta_->shared_values(), *keys_, random_), clock_));
    }
    accounts_ = std::make_unique<accounts::AccountService>(
        *meta_, *objects_, clock_, random_, *secrets_, urls, local, signing_keys_.get());
    if (!config.oidc_issuers.empty()) {
      external_issuers_ = std::make_unique<identity::ExternalIssuers>(config.oidc_issuers, clock_,
                                                                      identity::HttpFetch());
      accounts_->auth().SetExternalIssuers(external_issuers_.get());
    }
    // Metering reads the S3 listener's per-bucket counters; a new epoch per process tells a
    // restart's zeroed counters from traffic.
    accounts_->usage().SetTrafficCounters(
        {[this](const std::string& bucket) {
           auto c = metrics_.Bucket(bucket);
           return accounts::BucketTraffic{
               static_cast<int64_t>(c.requests), static_cast<int64_t>(c.requests_failed),
               static_cast<int64_t>(c.bytes_in), static_cast<int64_t>(c.bytes_out)};
         },
         random_.Uuid()});
    catalog_ = std::make_unique<catalog::CatalogService>(
        *meta_, *objects_, clock_, random_, *sealer_, *secrets_, *tokens_,
        catalog::CatalogOptions{urls.s3, config.session_seconds, 4});
    identities_ = std::make_unique<accounts::S3Identities>(*meta_, *secrets_, *sealer_, clock_,
                                                           config.s3_users);
    control_tables_ = std::make_unique<catalog::ControlTables>(*catalog_, clock_);
    // Compaction's scratch space holds only the copies of bins in flight: what a killed
    // process left there is of no use to anyone.
    const std::string scratch = config.data_dir + "/maintenance";
    fs::remove_all(scratch, ec);
    if (ec) return Fail(ErrorCode::kUnavailable, "cannot clear " + scratch + ": " + ec.message());
    TM_ASSIGN(const std::string server_name, ServerName(config.data_dir, random_));
    maintenance::MaintenanceOptions maintenance_options{
        .expiry = {},
        .orphan_grace_ms = config.orphan_grace_seconds * 1000,
        .compaction = {.worker_path = WorkerPath(config.maintenance_worker),
                       .scratch_dir = scratch,
                       .quiet_ms = config.maintenance_quiet_seconds * 1000},
        .compaction_bytes_per_hour = config.maintenance_bytes_per_hour,
        .sweep_interval_ms = config.maintenance_interval_seconds * 1000,
        .sole_server = config.metastore.empty(),
        .server_name = server_name};
    // The rebase runs the worker inside a client's commit request: a commit whose delete
    // files take longer than this to re-aim, in all, keeps its 409 instead.
    const int64_t rebase_timeout_ms = config.rebase_timeout_seconds * 1000;
    rebaser_ = std::make_unique<maintenance::WorkerRebaser>(
        catalog_->files(), random_, meta_->maintenance(),
        maintenance::WorkerOptions{maintenance_options.compaction.worker_path, scratch,
                                   rebase_timeout_ms});
    catalog_->SetCommitRebaser(rebaser_.get());
    maintenance_ = std::make_unique<maintenance::TableMaintenance>(*catalog_, clock_, random_,
                                                                   std::move(maintenance_options));
    if (!config.smtp.host.empty()) {
      TM_ASSIGN(mailer_, mail::NewSmtpMailer(config.smtp));
    } else {
      // A stack without mail logs each message to the server's output: the person who
      // started it reads codes and links there.
      mailer_ = mail::NewLogMailer(stderr);
    }
    const accounts::VerificationOptions mail{mailer_.get(), keys_->Derive("signup-code"),
                                             keys_->Derive("code-seal")};
    accounts::AccountService& a = *accounts_;
    verification_ = std::make_unique<accounts::Verification>(*meta_, clock_, random_, a.audit(),
                                                             a.signup(), a.api_keys(), mail);
    devices_ = std::make_unique<accounts::DeviceFlow>(*meta_, clock_, random_, a.audit(),
                                                      a.access(), a.agents(), a.api_keys());
    sessions_ = std::make_unique<accounts::Sessions>(*meta_, clock_, random_, a.audit(), a.signup(),
                                                     a.auth(), *verification_, a.urls().api, mail);
    control_api_ = std::make_unique<api::control::ControlApi>(
        api::control::ControlServices{*accounts_, *control_tables_, *verification_, *devices_,
                                      *sessions_, *maintenance_},
        api::control::ControlApiOptions{
            [this] { return meta_->Ping().has_value(); },
            [this] { return meta_->Ping().has_value(); }, config.bootstrap_secret,
            TestClockEnabled()
                ? std::function<void(int64_t)>([this](int64_t ms) { clock_.Advance(ms); })
                : nullptr,
            [this, data_dir = config.data_dir](const std::string& to) -> Result<std::string> {
              TM_TRY(objects_->FlushUsage());  // the counters as of the backup
              TM_ASSIGN(BackupDone done, Backup(*meta_, *objects_, data_dir, to, clock_));
              return nlohmann::json{
                  {"dir", done.dir}, {"at_ms", done.at_ms}, {"objects", done.objects}}
                  .dump();
            }});
    views_ = std::make_unique<catalog::ViewService>(*catalog_, clock_, random_, 4);
    scan_plans_ = std::make_unique<catalog::ScanPlanService>(
        *catalog_, clock_, random_,
        catalog::ScanPlanService::Options{config.scan_plan_files_per_task,
                                          config.scan_plan_wait_ms});
    iceberg_api_ = std::make_unique<api::iceberg::IcebergRestApi>(*catalog_, *views_, *scan_plans_);
    generic_tables_ = std::make_unique<catalog::GenericTableService>(*catalog_, clock_, random_);
    lakekeeper_api_ = std::make_unique<api::lakekeeper::LakekeeperApi>(*catalog_, *generic_tables_);
    const std::vector<std::string> origins = CorsOrigins(config.cors_origins, urls.api);
    s3_api_ = std::make_unique<api::s3::S3Api>(*objects_, *identities_, clock_,
                                               api::s3::S3ApiOptions{"us-east-1", S3Cors(origins)});
    catalog_cors_ = CatalogCors(origins);
    web_dir_ = WebDir(config.web_dir);
    if (auto site =
            web::StaticSite::Open({web_dir_, {OriginOf(urls.catalog), OriginOf(urls.s3)}})) {
      site_ = std::move(*site);
    } else {
      // The API serves without the page; /app/ says how to build it.
      std::fprintf(stderr, "account page off: %s\n", site.error().message.c_str());
    }
    tasks_ = std::make_unique<maintenance::TaskRunner>(*meta_, *objects_);
    // Storage metering: one chain of tasks through the queue (any replica runs it), each
    // measuring every warehouse and queueing the next an hour later.
    tasks_->RegisterRecurring(
        accounts::kMeterStorageTask, accounts::kMeterEveryMs,
        [this](const metastore::Task&) -> Result<void> {
          TM_TRY(accounts_->usage().MeterAll());
          TM_TRY(accounts_->usage().EnforceQuotas());
          // Rate windows are at most an hour: older events only take space.
          TM_TRY(meta_->verification().PurgeRateEvents(clock_.NowMillis() - 2 * 3600 * 1000));
          return Result<void>{};
        });
    // Table maintenance: a chain like metering's, one sweep over every table per interval.
    if (config.maintenance_interval_seconds > 0) {
      const int64_t every_ms = config.maintenance_interval_seconds * 1000;
      tasks_->RegisterRecurring(
          kMaintenanceSweepTask, every_ms, [this](const metastore::Task&) -> Result<void> {
            TM_ASSIGN(auto sweep, maintenance_->SweepAll());
            if (sweep.compacted > 0 || sweep.expired_snapshots > 0 || sweep.failures > 0) {
              std::fprintf(stderr,
                           "maintenance sweep: %d tables, %d compacted, %d snapshots expired, %d "
                           "files deleted, %d failures\n",
                           sweep.tables, sweep.compacted, sweep.expired_snapshots,
                           sweep.files_deleted, sweep.failures);
            }
            return Result<void>{};
          });
      // And driven by commits: a table a client writes is visited once its writes settle.
      tasks_->Register(maintenance::kMaintainTableTask, [this](const metastore::Task& task) {
        return maintenance_->RunQueued(task.payload_json);
      });
      catalog_->SetCommitObserver(
          [this](const metastore::Warehouse& w, const catalog::TableIdent& ident) {
            maintenance_->NoteCommit(w, ident);
          });
      // One chain however many replicas start together.
      TM_TRY(meta_->tasks().EnqueueFirstOfKind({kMaintenanceSweepTask, "{}", every_ms}));
    }
    TM_TRY(meta_->tasks().EnqueueFirstOfKind({accounts::kMeterStorageTask, "{}", 0}));
    tasks_->Start();
    ready_.store(true);
    if (!config.ready_file.empty()) {
      nlohmann::json ready = {
          {"api", urls.api},
          {"catalog", urls.catalog},
          {"s3", urls.s3},
          {"metrics", metrics_on_api_ ? urls.api + "/metrics"
                                      : UrlFor(server_->BoundAddress("metrics")) + "/metrics"},
          {"pid", static_cast<int64_t>(::getpid())},
          // Where this process listens, when the URLs above are a balancer's.
          {"bound",
           {{"api", UrlFor(server_->BoundAddress("api"))},
            {"catalog", UrlFor(server_->BoundAddress("catalog"))},
            {"s3", UrlFor(server_->BoundAddress("s3"))}}}};
      std::string tmp = config.ready_file + ".tmp";
      std::ofstream(tmp) << ready.dump() << "\n";
      fs::rename(tmp, config.ready_file, ec);
    }
    std::fprintf(stderr, "tablemere-server %s: api %s, catalog %s, s3 %s, data %s\n",
                 TABLEMERE_VERSION, urls.api.c_str(), urls.catalog.c_str(), urls.s3.c_str(),
                 config.data_dir.c_str());
    return {};
  }

  void Shutdown() override {
    if (server_) server_->Shutdown();
    if (tasks_) tasks_->Stop();
  }

  ~AppImpl() override {
    Shutdown();
    if (log_file_) std::fclose(log_file_);
  }

 private:
  http::ServerOptions TransportOptions(const Config& config) {
    auto clamp = [](int64_t v) { return static_cast<int>(std::min<int64_t>(v, 1 << 30)); };
    http::ServerOptions options;
    options.max_connections = clamp(config.max_connections);
    options.max_connections_per_address = clamp(config.max_connections_per_address);
    options.head_timeout_seconds = clamp(config.head_timeout_seconds);
    options.idle_timeout_seconds = clamp(config.idle_timeout_seconds);
    options.max_request_threads = clamp(config.max_request_threads);
    options.observe = [this](const http::RequestRecord& r) { Observe(r); };
    return options;
  }

  void Observe(const http::RequestRecord& r) {
    if (r.listener == "metrics") return;
    metrics_.ObserveRequest(r.listener,
                            metrics::RouteClass(r.listener, r.request.method, r.request.path),
                            r.status, r.seconds);
    // Path-style S3: the first segment is the bucket. Failed requests count only for a
    // warehouse's buckets that exist, so a stream of requests for made-up names adds no
    // series.
    if (r.listener == "s3") {
      std::string_view path = r.request.path;
      while (path.starts_with('/')) path.remove_prefix(1);
      std::string bucket(path.substr(0, path.find('/')));
      if (bucket.empty()) return;
      const bool failed = r.status >= 400;
      if (failed) {
        const std::string id = storage::WarehouseOfBucket(bucket);
        if (id.empty() || !meta_->warehouses().FindWarehouse(WarehouseId(id))) return;
      }
      metrics_.AddBucketRequest(bucket, failed, r.bytes_in, r.bytes_out);
    }
  }

  http::Response MetricsPage(const http::Request& request) {
    if (request.method != "GET" && request.method != "HEAD") {
      return http::Response::Json(
          405, R"({"error":{"code":"method_not_allowed","message":"GET /metrics"}})");
    }
    metrics::Gauges g;
    auto& counters = catalog_->files().counters();
    g.commits = counters.commits.load();
    g.commit_conflicts = counters.commit_conflicts.load();
    g.commit_rebases = counters.commit_rebases.load();
    g.vended_sessions = counters.vended_sessions.load();
    if (auto depth = meta_->tasks().QueueDepth()) g.task_queue_depth = *depth;
    http::Response r;
    r.status = 200;
    r.headers.Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    r.body = metrics_.Render(g);
    return r;
  }

  http::Response Route(int listener, http::Request& request) {
    if (!ready_.load()) {
      return http::Response::Json(503, R"({"error":{"code":"starting","message":"starting up"}})");
    }
    switch (listener) {
      case 0:
        if (request.path == "/metrics" && metrics_on_api_) return MetricsPage(request);
        if (web::StaticSite::Owns(request.path)) {
          return site_ ? site_->Handle(request) : web::StaticSite::NotBuilt(request, web_dir_);
        }
        return control_api_->Handle(request);
      case 3:
        if (request.path == "/metrics") return MetricsPage(request);
        return http::Response::Json(404,
                                    R"({"error":{"code":"not_found","message":"GET /metrics"}})");
      case 1:
        return http::WithCors(catalog_cors_, request, [this](http::Request& r) {
          // One listener serves both catalog APIs; Lakekeeper's live under /lakekeeper/.
          if (r.path.starts_with("/lakekeeper/")) return lakekeeper_api_->Handle(r);
          return iceberg_api_->Handle(r);
        });
      default:
        return s3_api_->Handle(request);
    }
  }

  metrics::Metrics metrics_;
  bool metrics_on_api_ = true;
  AdjustableClock clock_;
  SystemRandom random_;
  std::unique_ptr<KeyRing> keys_;
  std::optional<FileLock> data_dir_lock_;
  std::unique_ptr<metastore::Metastore> meta_;
  std::unique_ptr<objectstore::MetastoreKeyLocks> key_locks_;  // before the store using it
  std::unique_ptr<objectstore::RegisteredStore> objects_;
  std::unique_ptr<accounts::IdentitySecrets> secrets_;
  std::unique_ptr<storage::SessionSealer> sealer_;
  std::unique_ptr<catalog::CatalogTokens> tokens_;
  std::unique_ptr<identity::SigningKeys> signing_keys_;
  std::unique_ptr<identity::ExternalIssuers> external_issuers_;
  std::unique_ptr<accounts::AccountService> accounts_;
  std::unique_ptr<catalog::CatalogService> catalog_;
  std::unique_ptr<catalog::ViewService> views_;
  std::unique_ptr<catalog::ScanPlanService> scan_plans_;
  std::unique_ptr<catalog::GenericTableService> generic_tables_;
  std::unique_ptr<accounts::S3Identities> identities_;
  std::unique_ptr<catalog::ControlTables> control_tables_;
  std::unique_ptr<maintenance::TableMaintenance> maintenance_;
  std::unique_ptr<maintenance::WorkerRebaser> rebaser_;
  std::unique_ptr<mail::Mailer> mailer_;  // SMTP, or "log" delivery to stderr
  std::unique_ptr<accounts::Verification> verification_;
  std::unique_ptr<accounts::DeviceFlow> devices_;
  std::unique_ptr<accounts::Sessions> sessions_;
  std::unique_ptr<api::control::ControlApi> control_api_;
  std::string web_dir_;
  std::unique_ptr<web::StaticSite> site_;  // null when the page is not built
  std::unique_ptr<api::iceberg::IcebergRestApi> iceberg_api_;
  std::unique_ptr<api::lakekeeper::LakekeeperApi> lakekeeper_api_;
  std::unique_ptr<api::s3::S3Api> s3_api_;
  std::vector<http::CorsRule> catalog_cors_;
  std::unique_ptr<maintenance::TaskRunner> tasks_;
  std::atomic<bool> ready_{false};
  std::mutex log_mu_;
  FILE* log_file_ = nullptr;
  // Declared last so it is destroyed first: no request may outlive the services.
  std::unique_ptr<http::Server> server_;
};

}  // namespace

Result<std::unique_ptr<App>> App::Start(const Config& config) {
  auto app = std::make_unique<AppImpl>();
  TM_TRY(app->Init(config));
  return std::unique_ptr<App>(std::move(app));
}

}  // namespace tablemere::server
