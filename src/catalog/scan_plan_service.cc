#include "catalog/scan_plan_service.h"

#include "catalog/manifest_files.h"
#include "common/crypto.h"
#include "common/strings.h"

namespace tablemere::catalog {
namespace {

Error Missing(const char* what, const std::string& message) {
  return Error{ErrorCode::kNotFound, message, {}}.With("missing", what);
}

std::vector<std::string> PlanTasks(const std::string& plan_id, size_t groups) {
  std::vector<std::string> out;
  for (size_t g = 1; g < groups; g++) out.push_back(plan_id + ":" + std::to_string(g));
  return out;
}

}  // namespace

Result<ScanPlanService::Table> ScanPlanService::Load(const CatalogPrincipal& caller,
                                                     const metastore::Warehouse& w,
                                                     const TableIdent& ident) {
  TM_ASSIGN(LoadedTable loaded, catalog_.LoadTable(caller, w, ident, false, false));
  Table t;
  t.metadata = Json::parse(loaded.metadata_text(), nullptr, false);
  if (!t.metadata.is_object()) return Fail(ErrorCode::kInternal, "stored metadata is not JSON");
  t.uuid = t.metadata.value("table-uuid", "");
  return t;
}

iceberg::ReadFile ScanPlanService::Reader(const metastore::Warehouse& w) {
  return [this, &w](const std::string& location) {
    return ReadManifestFile(catalog_.files(), w, WarehouseFiles::Canonical(location));
  };
}

Result<metastore::ScanPlan> ScanPlanService::FindPlan(const metastore::Warehouse& w,
                                                      const Table& table,
                                                      const std::string& plan_id,
                                                      const char* missing) {
  TM_ASSIGN(auto plan, catalog_.metastore().scan_plans().Find(plan_id, clock_.NowMillis()));
  // A plan of another table (or warehouse) is not found here: ids are not probed.
  if (!plan || plan->warehouse_id != w.id.str() || plan->table_uuid != table.uuid) {
    return Fail(Missing(missing, std::string("No such ") + missing + ": " + plan_id));
  }
  return *plan;
}

Result<ScanPlanAnswer> ScanPlanService::Plan(const CatalogPrincipal& caller,
                                             const metastore::Warehouse& w, const TableIdent& ident,
                                             const iceberg::ScanRequest& request) {
  TM_ASSIGN(Table table, Load(caller, w, ident));
  const iceberg::ReadFile read = Reader(w);
  TM_ASSIGN(iceberg::ScanPlanner planner,
            iceberg::ScanPlanner::Prepare(table.metadata, request, read, files_per_task_));
  ScanPlanAnswer answer;
  TM_ASSIGN(answer.tasks, planner.Plan(0, read));
  answer.plan_id = "plan-" + crypto::HexEncode(random_.Bytes(16));
  answer.plan_tasks = PlanTasks(answer.plan_id, planner.groups());
  TM_ASSIGN(answer.credentials, catalog_.TableCredentials(caller, w, ident));
  // The request as planned (its snapshot pinned), so every plan task is cut alike.
  iceberg::ScanRequest pinned = request;
  if (!pinned.end_snapshot_id && planner.snapshot_id() >= 0)
    pinned.snapshot_id = planner.snapshot_id();
  // The group size goes with the plan: a server configured otherwise cuts its tasks alike.
  const Json body = {{"request", pinned.ToJson()},
                     {"groups", planner.groups()},
                     {"files-per-group", files_per_task_}};
  const int64_t now = clock_.NowMillis();
  TM_TRY(catalog_.metastore().scan_plans().Create(
      {answer.plan_id, w.id.str(), table.uuid, metastore::ScanPlanState::kCompleted, body.dump(),
       now, now + kPlanLifetimeMs},
      now));
  return answer;
}

Result<ScanPlanAnswer> ScanPlanService::Fetch(const CatalogPrincipal& caller,
                                              const metastore::Warehouse& w,
                                              const TableIdent& ident, const std::string& plan_id) {
  TM_ASSIGN(Table table, Load(caller, w, ident));
  TM_ASSIGN(metastore::ScanPlan plan, FindPlan(w, table, plan_id, "plan"));
  ScanPlanAnswer answer;
  answer.state = plan.state;
  answer.plan_id = plan.id;
  if (plan.state != metastore::ScanPlanState::kCompleted) return answer;
  Json body = Json::parse(plan.body, nullptr, false);
  const size_t groups = body.is_object() ? body.value("groups", size_t{0}) : 0;
  // Every group as a plan task: the first one's tasks went with the plan's own answer.
  for (size_t g = 0; g < groups; g++)
    answer.plan_tasks.push_back(plan.id + ":" + std::to_string(g));
  TM_ASSIGN(answer.credentials, catalog_.TableCredentials(caller, w, ident));
  return answer;
}

Result<void> ScanPlanService::Cancel(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                                     const TableIdent& ident, const std::string& plan_id) {
  TM_ASSIGN(Table table, Load(caller, w, ident));
  TM_TRY(FindPlan(w, table, plan_id, "plan"));
  TM_TRY(catalog_.metastore().scan_plans().Remove(plan_id));
  return {};
}

Result<iceberg::ScanTasks> ScanPlanService::FetchTasks(const CatalogPrincipal& caller,
                                                       const metastore::Warehouse& w,
                                                       const TableIdent& ident,
                                                       const std::string& plan_task) {
  TM_ASSIGN(Table table, Load(caller, w, ident));
  auto colon = plan_task.rfind(':');
  auto group = colon == std::string::npos ? std::nullopt : ParseInt(plan_task.substr(colon + 1));
  if (!group || *group < 0) return Fail(Missing("plan-task", "No such plan task: " + plan_task));
  TM_ASSIGN(metastore::ScanPlan plan, FindPlan(w, table, plan_task.substr(0, colon), "plan-task"));
  Json body = Json::parse(plan.body, nullptr, false);
  if (plan.state != metastore::ScanPlanState::kCompleted || !body.is_object() ||
      static_cast<size_t>(*group) >= body.value("groups", size_t{0})) {
    return Fail(Missing("plan-task", "No such plan task: " + plan_task));
  }
  TM_ASSIGN(iceberg::ScanRequest request, iceberg::ScanRequest::FromJson(body["request"]));
  const iceberg::ReadFile read = Reader(w);
  const int64_t per_group = body.value("files-per-group", files_per_task_);
  TM_ASSIGN(iceberg::ScanPlanner planner,
            iceberg::ScanPlanner::Prepare(table.metadata, request, read, per_group));
  return planner.Plan(static_cast<size_t>(*group), read);
}

}  // namespace tablemere::catalog
