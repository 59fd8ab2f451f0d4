// Server-side scan planning (the Iceberg REST planTableScan, fetchPlanningResult,
// cancelPlanning and fetchScanTasks): authorised exactly as loadTable, planned by
// iceberg::ScanPlanner over the table's manifests, and kept in the metastore's
// ScanPlanStore so any server answers a plan's tasks until it expires.
//
// A plan answers at once with its first group of file scan tasks; each further group is
// a plan task ("<plan-id>:<group>") that fetchScanTasks plans when asked (PyIceberg 0.12
// follows plan tasks; it cannot poll a submitted plan, so no plan is ever answered
// "submitted" here).
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog_service.h"
#include "iceberg/scan_planner.h"

namespace tablemere::catalog {

struct ScanPlanAnswer {
  metastore::ScanPlanState state = metastore::ScanPlanState::kCompleted;
  std::string plan_id;
  iceberg::ScanTasks tasks;
  std::vector<std::string> plan_tasks;
  std::vector<StorageCredential> credentials;
};

class ScanPlanService {
 public:
  // How long a plan's id and tasks stay valid.
  static constexpr int64_t kPlanLifetimeMs = 60 * 60 * 1000;

  // `files_per_task`: about how many data files one answer carries (the plan's first, then
  // each plan task).
  ScanPlanService(CatalogService& catalog, const Clock& clock, Random& random,
                  int64_t files_per_task = iceberg::ScanPlanner::kFilesPerGroup)
      : catalog_(catalog), clock_(clock), random_(random), files_per_task_(files_per_task) {}

  // Errors: loadTable's (kNotFound naming the table, kPermissionDenied), kInvalidInput for
  // a filter, column or snapshot the table does not have.
  Result<ScanPlanAnswer> Plan(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                              const TableIdent& ident, const iceberg::ScanRequest& request);
  // The plan's state (a completed plan's tasks were answered by Plan; this answers its
  // plan tasks again). kNotFound (missing=plan) for an unknown, expired or cancelled id,
  // or one of another table.
  Result<ScanPlanAnswer> Fetch(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                               const TableIdent& ident, const std::string& plan_id);
  Result<void> Cancel(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                      const TableIdent& ident, const std::string& plan_id);
  // One plan task's file scan tasks. kNotFound (missing=plan-task) for a task that is not
  // one of a live plan of this table.
  Result<iceberg::ScanTasks> FetchTasks(const CatalogPrincipal& caller,
                                        const metastore::Warehouse& w, const TableIdent& ident,
                                        const std::string& plan_task);

 private:
  struct Table {
    Json metadata;
    std::string uuid;
  };
  Result<Table> Load(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                     const TableIdent& ident);
  iceberg::ReadFile Reader(const metastore::Warehouse& w);
  // The live plan `plan_id` of the table, or kNotFound with `missing`.
  Result<metastore::ScanPlan> FindPlan(const metastore::Warehouse& w, const Table& table,
                                       const std::string& plan_id, const char* missing);

  CatalogService& catalog_;
  const Clock& clock_;
  Random& random_;
  const int64_t files_per_task_;
};

}  // namespace tablemere::catalog
