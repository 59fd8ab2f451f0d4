// The free plan's limits (tablemere-reference.md, "Limits"), which the account use cases
// check.
#pragma once

#include <cstdint>

namespace tablemere::accounts {

// The free plan's guard on catalogs per project (tablemere-reference.md, "Limits").
inline constexpr int kWarehousesPerProject = 3;

// The free plan's limits, configurable per deployment (tablemere-reference.md, "Limits").
// Storage is the one metered limit; the rest are abuse guards.
struct Limits {
  int warehouses_per_project = kWarehousesPerProject;
  int64_t storage_bytes = 5'000'000'000;
  int64_t public_storage_bytes = 50'000'000'000;  // the public tier
  int64_t objects = 50'000;
  int tables = 50;
  int namespaces = 10;
  int64_t catalog_operations_per_month = 1'000'000;
  int64_t commits_per_month = 20'000;
  int min_seconds_between_commits = 0;
  int snapshot_retention_days = 7;
  int max_snapshots_per_table = 20;
};

}  // namespace tablemere::accounts
