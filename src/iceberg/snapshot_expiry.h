// Which snapshots of a table expire, by Iceberg's rules with Tablemere's defaults: keep at
// most `max_snapshots` and none older than `max_age_ms`, but always every branch and tag
// head (so always the current snapshot), and every snapshot a ref's own retention keeps
// (max-ref-age-ms drops a tag; a branch keeps min-snapshots-to-keep of its ancestry).
// Table properties override the defaults: history.expire.max-snapshot-age-ms,
// history.expire.min-snapshots-to-keep (a floor), tablemere.maintenance.max-snapshots.
// Pure: the metadata is read, time is passed in.
#pragma once

#include <cstdint>
#include <set>

#include <nlohmann/json_fwd.hpp>

namespace tablemere::iceberg {

struct ExpiryPolicy {
  int max_snapshots = 20;
  int64_t max_age_ms = 7LL * 24 * 3600 * 1000;
};

struct ExpiryPlan {
  std::set<int64_t> retained;
  std::set<int64_t> expired;
};

// The plan for `metadata` at `now_ms`; `policy` is the deployment's default, which the
// table's properties override.
ExpiryPlan PlanSnapshotExpiry(const nlohmann::json& metadata, const ExpiryPolicy& policy,
                              int64_t now_ms);

}  // namespace tablemere::iceberg
