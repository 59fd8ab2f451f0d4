#include "iceberg/snapshot_expiry.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/strings.h"

namespace tablemere::iceberg {
namespace {

int64_t Property(const nlohmann::json& metadata, const char* name, int64_t fallback) {
  auto props = metadata.find("properties");
  if (props == metadata.end() || !props->is_object() || !props->contains(name)) return fallback;
  const auto& v = (*props)[name];
  if (!v.is_string()) return fallback;
  auto n = ParseInt(v.get<std::string>());
  return n && *n >= 0 ? *n : fallback;
}

}  // namespace

ExpiryPlan PlanSnapshotExpiry(const nlohmann::json& metadata, const ExpiryPolicy& policy,
                              int64_t now_ms) {
  const int64_t max_age =
      Property(metadata, "history.expire.max-snapshot-age-ms", policy.max_age_ms);
  const int64_t min_keep = Property(metadata, "history.expire.min-snapshots-to-keep", 1);
  const int64_t max_keep = std::max<int64_t>(
      min_keep, Property(metadata, "tablemere.maintenance.max-snapshots", policy.max_snapshots));

  std::map<int64_t, int64_t> parent;                 // snapshot -> parent (or -1)
  std::vector<std::pair<int64_t, int64_t>> by_time;  // (timestamp, id)
  for (const auto& s : metadata.value("snapshots", nlohmann::json::array())) {
    if (!s.is_object() || !s.contains("snapshot-id")) continue;
    int64_t id = s["snapshot-id"].get<int64_t>();
    parent[id] = s.contains("parent-snapshot-id") && s["parent-snapshot-id"].is_number()
                     ? s["parent-snapshot-id"].get<int64_t>()
                     : -1;
    by_time.emplace_back(s.value("timestamp-ms", int64_t{0}), id);
  }
  std::map<int64_t, int64_t> timestamp;
  for (const auto& [ts, id] : by_time) timestamp[id] = ts;

  ExpiryPlan plan;
  // Every ref head, and for branches the ancestry their min-snapshots-to-keep protects.
  auto refs = metadata.value("refs", nlohmann::json::object());
  if (!refs.contains("main") && metadata.contains("current-snapshot-id") &&
      metadata["current-snapshot-id"].is_number() &&
      metadata["current-snapshot-id"].get<int64_t>() >= 0) {
    refs["main"] = {{"snapshot-id", metadata["current-snapshot-id"]}, {"type", "branch"}};
  }
  for (const auto& [name, ref] : refs.items()) {
    if (!ref.is_object() || !ref.contains("snapshot-id")) continue;
    int64_t head = ref["snapshot-id"].get<int64_t>();
    if (!parent.count(head)) continue;
    const bool tag = ref.value("type", "branch") == "tag";
    if (tag && ref.contains("max-ref-age-ms") && name != "main" &&
        now_ms - timestamp[head] > ref["max-ref-age-ms"].get<int64_t>()) {
      continue;  // an expired tag keeps nothing (the ref itself is the caller's to drop)
    }
    plan.retained.insert(head);
    if (tag) continue;
    int64_t keep = ref.contains("min-snapshots-to-keep")
                       ? ref["min-snapshots-to-keep"].get<int64_t>()
                       : min_keep;
    int64_t cur = parent[head];
    for (int64_t n = 1; n < keep && cur >= 0 && parent.count(cur); n++) {
      plan.retained.insert(cur);
      cur = parent[cur];
    }
  }
  // Then the newest snapshots younger than the age limit, up to the count limit.
  std::sort(by_time.begin(), by_time.end(), std::greater<>());
  for (const auto& [ts, id] : by_time) {
    if (static_cast<int64_t>(plan.retained.size()) >= max_keep) break;
    if (now_ms - ts > max_age) break;
    plan.retained.insert(id);
  }
  for (const auto& [ts, id] : by_time) {
    if (!plan.retained.count(id)) plan.expired.insert(id);
  }
  return plan;
}

}  // namespace tablemere::iceberg
