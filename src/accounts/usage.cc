// UsageService: storage usage (GET /v1/usage, POST /internal/usage) and the storage
// quota that creating catalogs and tables and vending write credentials check.
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "accounts/usage_service.h"
#include "common/clock.h"
#include "storage/access.h"

namespace tablemere::accounts {
namespace {

// How often metering lists a bucket to correct its usage counters. Between listings it
// reads the counters the object store keeps as objects are written and deleted.
constexpr int64_t kRelistEveryMs = 24 * 3600 * 1000;

// Lists a bucket: its bytes and objects; a bucket that is gone counts as empty.
Result<std::pair<int64_t, int64_t>> Listed(objectstore::ObjectStore& objects,
                                           const std::string& bucket) {
  int64_t bytes = 0, count = 0;
  objectstore::ListOptions opts;
  opts.max_keys = 1000;
  while (true) {
    auto page = objects.List(bucket, opts);
    if (!page) {
      if (objectstore::FailureOf(page.error()) == objectstore::StoreFailure::kNoSuchBucket) break;
      return Fail(page.error());
    }
    for (const auto& o : page->objects) {
      bytes += static_cast<int64_t>(o.size);
      count++;
    }
    if (!page->truncated) break;
    opts.continuation = page->next_marker;
  }
  return std::pair{bytes, count};
}

// A bucket's bytes and objects from its usage counters, corrected by a listing when the
// last one is older than kRelistEveryMs (or a write's size change was unknown since),
// less the noncurrent objects in `skip` still there with the size they had when found.
Result<std::pair<int64_t, int64_t>> Footprint(
    objectstore::RegisteredStore& objects, metastore::BucketStore& buckets, int64_t now_ms,
    const std::string& bucket, const std::vector<metastore::NoncurrentObject>& skip = {}) {
  TM_TRY(objects.FlushUsage());
  auto found = buckets.FindBucket(bucket);
  if (!found) {
    if (found.error().code == ErrorCode::kNotFound) return std::pair<int64_t, int64_t>{0, 0};
    return Fail(found.error());
  }
  metastore::BucketUsage usage = found->usage;
  if (usage.reconciled_ms == 0 || now_ms - usage.reconciled_ms >= kRelistEveryMs) {
    TM_ASSIGN(auto listed, Listed(objects, bucket));
    // A correction, not an overwrite: what was counted while the listing ran stays.
    auto reconciled = buckets.ReconcileUsage(bucket, listed.first - usage.bytes,
                                             listed.second - usage.objects, now_ms);
    if (!reconciled) {
      if (reconciled.error().code == ErrorCode::kNotFound) return std::pair<int64_t, int64_t>{0, 0};
      return Fail(reconciled.error());
    }
    TM_ASSIGN(auto again, buckets.FindBucket(bucket));
    usage = again.usage;
  }
  for (const auto& o : skip) {
    auto head = objects.Head(bucket, o.object_key);
    if (head && static_cast<int64_t>(head->size) == o.size) {
      usage.bytes -= o.size;
      usage.objects--;
    }
  }
  return std::pair{std::max<int64_t>(usage.bytes, 0), std::max<int64_t>(usage.objects, 0)};
}

}  // namespace

Result<metastore::UsageSample> UsageService::RecordUsage(
    const WarehouseId& id, std::optional<metastore::UsageSample> reported) {
  auto w = meta_.warehouses().FindWarehouse(id);
  if (!w) {
    if (w.error().code != ErrorCode::kNotFound) return Fail(w.error());
    return Fail(Error{ErrorCode::kNotFound, "No warehouse " + id.str(), {}}.With(
        "code", "warehouse_not_found"));
  }
  metastore::UsageSample s = reported.value_or(metastore::UsageSample{});
  s.warehouse_id = w->id;
  s.at_ms = clock_.NowMillis();
  if (!reported) {
    TM_ASSIGN(auto noncurrent, meta_.maintenance().NoncurrentOfWarehouse(w->id.str()));
    const int64_t now = clock_.NowMillis();
    TM_ASSIGN(auto table, Footprint(objects_, meta_.buckets(), now, storage::TableBucketName(w->id),
                                    noncurrent));
    TM_ASSIGN(auto blob, Footprint(objects_, meta_.buckets(), now, storage::BlobBucketName(w->id)));
    s.table_bytes = table.first;
    s.table_objects = table.second;
    s.blob_bytes = blob.first;
    s.blob_objects = blob.second;
  }
  if (traffic_.read) {
    // The store's own per-bucket counters, as they stand now (cumulative).
    BucketTraffic t = traffic_.read(storage::TableBucketName(w->id));
    BucketTraffic b = traffic_.read(storage::BlobBucketName(w->id));
    s.requests = t.requests + b.requests;
    s.requests_failed = t.requests_failed + b.requests_failed;
    s.bytes_in = t.bytes_in + b.bytes_in;
    s.bytes_out = t.bytes_out + b.bytes_out;
    s.counter_epoch = traffic_.epoch;
  }
  TM_TRY(meta_.usage().RecordSample(s));
  return s;
}

Result<int> UsageService::MeterAll() {
  TM_ASSIGN(auto warehouses, meta_.warehouses().AllWarehouses());
  int metered = 0;
  for (const auto& w : warehouses) {
    auto s = RecordUsage(w.id, std::nullopt);
    // A warehouse deleted since the list was read is skipped, not an error.
    if (!s && s.error().code != ErrorCode::kNotFound) return Fail(s.error());
    if (s) metered++;
  }
  return metered;
}

namespace {

std::string DayOf(int64_t ms) { return FormatIso8601(ms).substr(0, 10); }

// The traffic between two consecutive samples: the counters' growth, or, when the later
// sample's counters restarted (another process, or a restart), all of the later ones.
struct Interval {
  BucketTraffic traffic;
  bool reset = false;
};
std::optional<Interval> Between(const metastore::UsageSample& a, const metastore::UsageSample& b) {
  if (a.requests < 0 || b.requests < 0) return std::nullopt;
  const bool reset = a.counter_epoch != b.counter_epoch || b.requests < a.requests ||
                     b.bytes_in < a.bytes_in || b.bytes_out < a.bytes_out ||
                     b.requests_failed < a.requests_failed;
  if (reset) {
    return Interval{{b.requests, b.requests_failed, b.bytes_in, b.bytes_out}, true};
  }
  return Interval{{b.requests - a.requests, b.requests_failed - a.requests_failed,
                   b.bytes_in - a.bytes_in, b.bytes_out - a.bytes_out},
                  false};
}

void Add(BucketTraffic& into, const BucketTraffic& t) {
  into.requests += t.requests;
  into.requests_failed += t.requests_failed;
  into.bytes_in += t.bytes_in;
  into.bytes_out += t.bytes_out;
}

}  // namespace

WarehouseHistory SummarizeHistory(const std::vector<metastore::UsageSample>& samples, int days) {
  WarehouseHistory h;
  h.days = days;
  const metastore::UsageSample* previous = nullptr;
  for (const auto& s : samples) {
    const std::string day = DayOf(s.at_ms);
    if (h.rows.empty() || h.rows.back().day != day) h.rows.push_back(DayRow{day});
    DayRow& row = h.rows.back();
    row.last = s;  // the day's last footprint
    row.samples++;
    if (previous) {
      if (auto i = Between(*previous, s)) {
        Add(row.traffic, i->traffic);
        row.intervals++;
        Add(h.traffic, i->traffic);
        h.intervals++;
        if (i->reset) h.resets++;
        if (h.traffic_since_ms == 0) h.traffic_since_ms = previous->at_ms;
        h.traffic_to_ms = s.at_ms;
      }
    }
    previous = &s;
  }
  if (!samples.empty()) {
    h.first = samples.front();
    h.last = samples.back();
  }
  return h;
}

Result<QuotaPass> UsageService::EnforceQuotas() {
  QuotaPass pass;
  TM_ASSIGN(auto warehouses, meta_.warehouses().AllWarehouses());
  std::set<std::string> orgs;
  for (const auto& w : warehouses) orgs.insert(w.org_id.str());
  const int64_t now = clock_.NowMillis();
  for (const auto& org_text : orgs) {
    const OrgId org(org_text);
    TM_ASSIGN(auto usage, OrgStorage(org));
    const bool over = usage.bytes > limits_.storage_bytes;
    if (over) pass.orgs_over++;
    for (const auto& wu : usage.per_warehouse) {
      const auto& w = wu.warehouse;
      if (over == (w.read_only_ms != 0)) continue;
      TM_TRY(metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
        TM_TRY(txn.warehouses().SetWarehouseReadOnly(w.id, over ? now : 0));
        return audit_.RecordIn(
            txn, {0, 0, "", org, over ? "quota.enforce" : "quota.release", "warehouse", w.id, "",
                  nlohmann::json{{"bytes", usage.bytes}, {"limit", limits_.storage_bytes}}.dump()});
      }));
      (over ? pass.made_read_only : pass.made_writable)++;
    }
  }
  return pass;
}

Result<StorageUsage> UsageService::OrgStorage(const OrgId& org) {
  StorageUsage u{.org_id = org};
  TM_ASSIGN(auto warehouses, meta_.warehouses().WarehousesOfOrg(org));
  for (auto& w : warehouses) {
    TM_ASSIGN(auto sample, meta_.usage().LatestSample(w.id));
    u.warehouses++;
    if (sample) {
      u.warehouses_metered++;
      u.bytes += sample->table_bytes + sample->blob_bytes;
      if (w.published_ms != 0) u.public_bytes += sample->table_bytes;
      u.measured_ms = std::max(u.measured_ms, sample->at_ms);
    }
    u.per_warehouse.push_back({std::move(w), sample});
  }
  return u;
}

Result<void> UsageService::CheckStorageQuota(const Caller& caller, const OrgId& org,
                                             const std::string& what) {
  TM_ASSIGN(auto u, OrgStorage(org));
  if (u.bytes <= limits_.storage_bytes) return {};
  TM_TRY(audit_.Record(metastore::AuditEvent{0, 0, caller.principal.id, org, "quota.reject", "org",
                                             org, "", nlohmann::json{{"refused", what}}.dump()}));
  return Fail(Error{ErrorCode::kQuotaExceeded,
                    "The organisation is over its storage limit: " + what + " is refused",
                    {}}
                  .With("code", "quota_exceeded")
                  .With("current", std::to_string(u.bytes))
                  .With("limit_value", std::to_string(limits_.storage_bytes))
                  .With("scope", "organization")
                  .With("remedy",
                        "Free space (drop tables, delete a catalog); reading keeps "
                        "working meanwhile. tablemere usage shows the figures."));
}

Result<UsageReport> UsageService::Usage(const Caller& caller, const std::string& project,
                                        int days) {
  UsageReport r;
  TM_ASSIGN(auto orgs, meta_.orgs().OrgsOf(caller.principal.id));
  // The window starts at the beginning of the UTC day `days - 1` days ago.
  constexpr int64_t kDayMs = 86'400'000;
  const int64_t since = (clock_.NowMillis() / kDayMs - (days - 1)) * kDayMs;
  for (const auto& [org, role] : orgs) {
    TM_ASSIGN(auto storage, OrgStorage(org.id));
    for (auto& wu : storage.per_warehouse) {
      TM_ASSIGN(auto samples, meta_.usage().SamplesSince(wu.warehouse.id, since));
      wu.history = SummarizeHistory(samples, days);
    }
    TM_ASSIGN(auto projects, meta_.warehouses().ProjectsOfOrg(org.id));
    for (auto& p : projects) {
      if (!project.empty() && p.id.str() != project && p.name != project) continue;
      ProjectUsage pu{std::move(p), {}};
      for (const auto& wu : storage.per_warehouse) {
        if (wu.warehouse.project_id == pu.project.id) pu.warehouses.push_back(wu.warehouse);
      }
      r.projects.push_back(std::move(pu));
    }
    r.orgs.emplace_back(std::move(storage), role);
  }
  if (!project.empty() && r.projects.empty()) {
    return Fail(Error{ErrorCode::kNotFound, "No project '" + project + "' among yours", {}}
                    .With("code", "project_not_found")
                    .With("remedy", "tablemere project list shows yours."));
  }
  return r;
}

}  // namespace tablemere::accounts
