// Server-side scan planning (the Iceberg REST planTableScan, fetchPlanningResult,
// cancelPlanning and fetchScanTasks): authorised exactly as loadTable, planned by
// iceberg::ScanPlanner over the table's manifests, and kept in the metastore's
// ScanPlanStore so any server answers a plan's tasks until it expires.
//
// A plan answers at once with its first group of file scan tasks; each further group is
// a plan task ("<plan-id>:<group>") that fetchScanTasks plans when asked. Preparing a plan
// (reading the manifest lists, pruning manifests) runs on a worker thread of the service;
// a client that can poll (Iceberg Java) waits for it up to `prepare_wait_ms` and past that
// gets "submitted", and fetchPlanningResult later answers every group as a plan task (or
// "failed"). PyIceberg 0.12 raises on "submitted", so it always waits.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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
  std::optional<Error> failure;  // state kFailed: why
};

class ScanPlanService {
 public:
  // How long a plan's id and tasks stay valid.
  static constexpr int64_t kPlanLifetimeMs = 60 * 60 * 1000;

  struct Options {
    // About how many data files one answer carries (the plan's first, then each task).
    int64_t files_per_task = iceberg::ScanPlanner::kFilesPerGroup;
    // How long a client that can poll waits for a plan to be prepared.
    int64_t prepare_wait_ms = 10'000;
  };

  ScanPlanService(CatalogService& catalog, const Clock& clock, Random& random, Options options)
      : catalog_(catalog), clock_(clock), random_(random), options_(options) {}
  ScanPlanService(CatalogService& catalog, const Clock& clock, Random& random)
      : ScanPlanService(catalog, clock, random, Options{}) {}
  // Waits for the plans still being prepared.
  ~ScanPlanService();

  // Errors: loadTable's (kNotFound naming the table, kPermissionDenied), kInvalidInput for
  // a filter, column or snapshot the table does not have.
  // `can_poll`: whether the client follows a "submitted" answer.
  Result<ScanPlanAnswer> Plan(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                              const TableIdent& ident, const iceberg::ScanRequest& request,
                              bool can_poll);
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

  // What preparing a plan yields: the planner, and the plan's row body.
  struct Prepared {
    iceberg::ScanPlanner planner;
    Json body;
  };
  static Result<Prepared> Prepare(const Json& metadata, const iceberg::ScanRequest& request,
                                  const iceberg::ReadFile& read, int64_t files_per_group);

  CatalogService& catalog_;
  const Clock& clock_;
  Random& random_;
  const Options options_;
  // At most this many plans are prepared on workers at once; past it a plan is prepared in
  // its request, as for a client that cannot poll.
  static constexpr size_t kMaxWorkers = 8;
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  // Joins the workers that finished (each keeps its stack until joined). Holds mu_.
  void ReapLocked();
  std::mutex mu_;
  std::vector<Worker> workers_;  // protected by mu_
};

}  // namespace tablemere::catalog
