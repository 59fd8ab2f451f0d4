// Storage usage and quotas: metering each warehouse's footprint (GET /v1/usage, POST
// /internal/usage, the hourly pass), the storage quota that creating catalogs and tables
// and vending write credentials check, and its enforcement (usage.cc).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "accounts/audit_recorder.h"
#include "accounts/caller.h"
#include "accounts/limits.h"
#include "common/clock.h"
#include "common/result.h"
#include "metastore/metastore.h"
#include "objectstore/registered_store.h"

namespace tablemere::accounts {

// The metering pass's task: measures every warehouse, then queues itself an hour later.
inline constexpr char kMeterStorageTask[] = "meter_storage";
inline constexpr int64_t kMeterEveryMs = 3600 * 1000;

// What one quota enforcement pass changed.
struct QuotaPass {
  int orgs_over = 0;
  int made_read_only = 0;
  int made_writable = 0;
};

// S3 traffic of a bucket as cumulative counters.
struct BucketTraffic {
  int64_t requests = 0;
  int64_t requests_failed = 0;
  int64_t bytes_in = 0;
  int64_t bytes_out = 0;
};

// Where metering reads the object store's own per-bucket counters (the server's S3
// listener counts them); `epoch` changes whenever the counters start again from zero.
struct TrafficCounters {
  std::function<BucketTraffic(const std::string& bucket)> read;
  std::string epoch;
};

// One UTC day of a warehouse's samples: its last footprint and the traffic counted in it.
struct DayRow {
  std::string day;  // "2026-12-04"
  metastore::UsageSample last;
  int samples = 0;
  BucketTraffic traffic;
  int intervals = 0;  // consecutive sample pairs with counters ending that day
};

// A warehouse's samples over the window, per day, with the trend and the traffic totals.
struct WarehouseHistory {
  int days = 0;
  std::vector<DayRow> rows;
  std::optional<metastore::UsageSample> first;
  std::optional<metastore::UsageSample> last;
  BucketTraffic traffic;
  int intervals = 0;  // 0: no two consecutive samples carried counters
  int resets = 0;
  int64_t traffic_since_ms = 0;
  int64_t traffic_to_ms = 0;
};

// Summarises samples (oldest first) into per-day rows and totals.
WarehouseHistory SummarizeHistory(const std::vector<metastore::UsageSample>& samples, int days);

// A warehouse's latest storage sample (absent: not metered yet).
struct WarehouseUsage {
  metastore::Warehouse warehouse;
  std::optional<metastore::UsageSample> sample;
  WarehouseHistory history;  // filled by Usage() for its window
};

// An organisation's storage: the latest sample of each of its warehouses, summed.
struct StorageUsage {
  OrgId org_id;
  int64_t bytes = 0;
  int64_t public_bytes = 0;  // the published warehouses' table buckets (the public tier)
  int64_t measured_ms = 0;   // the newest sample's time
  int warehouses = 0;
  int warehouses_metered = 0;
  std::vector<WarehouseUsage> per_warehouse;
};

struct ProjectUsage {
  metastore::Project project;
  std::vector<metastore::Warehouse> warehouses;
};

struct UsageReport {
  std::vector<ProjectUsage> projects;
  std::vector<std::pair<StorageUsage, metastore::Role>> orgs;
};

class UsageService {
 public:
  UsageService(metastore::Metastore& meta, objectstore::RegisteredStore& objects,
               const Clock& clock, const Limits& limits, AuditRecorder& audit)
      : meta_(meta), objects_(objects), clock_(clock), limits_(limits), audit_(audit) {}

  // Where metering reads the S3 listener's per-bucket traffic counters (none: not read).
  void SetTrafficCounters(TrafficCounters counters) { traffic_ = std::move(counters); }

  // `days`: the per-warehouse history window.
  Result<UsageReport> Usage(const Caller& caller, const std::string& project, int days = 7);
  Result<StorageUsage> OrgStorage(const OrgId& org);
  // kQuotaExceeded (quota_exceeded: current, limit_value, scope) when the organisation is
  // over its storage limit; the refusal is audited (quota.reject).
  Result<void> CheckStorageQuota(const Caller& caller, const OrgId& org, const std::string& what);
  // Records a warehouse's footprint: the given figures, or measured from its buckets.
  Result<metastore::UsageSample> RecordUsage(const WarehouseId& warehouse,
                                             std::optional<metastore::UsageSample> reported);
  // Measures every warehouse (the hourly metering pass); returns how many.
  Result<int> MeterAll();
  // The enforcement pass after metering: an organisation over its storage limit gets its
  // warehouses' buckets read-only (writes refused at the S3 layer and in the catalog,
  // reads and deletes allowed); back under it, writable again. Audited per warehouse.
  Result<QuotaPass> EnforceQuotas();

 private:
  metastore::Metastore& meta_;
  objectstore::RegisteredStore& objects_;
  const Clock& clock_;
  const Limits& limits_;
  AuditRecorder& audit_;
  TrafficCounters traffic_;
};

}  // namespace tablemere::accounts
