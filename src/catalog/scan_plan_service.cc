#include "catalog/scan_plan_service.h"

#include <future>

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

ScanPlanService::~ScanPlanService() {
  std::vector<Worker> workers;
  {
    std::lock_guard lock(mu_);
    workers.swap(workers_);
  }
  for (auto& w : workers) w.thread.join();
}

void ScanPlanService::ReapLocked() {
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
}

Result<ScanPlanService::Prepared> ScanPlanService::Prepare(const Json& metadata,
                                                           const iceberg::ScanRequest& request,
                                                           const iceberg::ReadFile& read,
                                                           int64_t files_per_group) {
  TM_ASSIGN(iceberg::ScanPlanner planner,
            iceberg::ScanPlanner::Prepare(metadata, request, read, files_per_group));
  // The request as planned (its snapshot pinned), so every plan task is cut alike; and the
  // group size, so a server configured otherwise cuts them alike too.
  iceberg::ScanRequest pinned = request;
  if (!pinned.end_snapshot_id && planner.snapshot_id() >= 0) {
    pinned.snapshot_id = planner.snapshot_id();
  }
  Json body = {{"request", pinned.ToJson()},
               {"groups", planner.groups()},
               {"files-per-group", files_per_group}};
  return Prepared{std::move(planner), std::move(body)};
}

Result<ScanPlanAnswer> ScanPlanService::Plan(const CatalogPrincipal& caller,
                                             const metastore::Warehouse& w, const TableIdent& ident,
                                             const iceberg::ScanRequest& request, bool can_poll) {
  TM_ASSIGN(Table table, Load(caller, w, ident));
  ScanPlanAnswer answer;
  TM_ASSIGN(answer.credentials, catalog_.TableCredentials(caller, w, ident));
  answer.plan_id = "plan-" + crypto::HexEncode(random_.Bytes(16));
  metastore::ScanPlanStore& plans = catalog_.metastore().scan_plans();
  const int64_t now = clock_.NowMillis();
  const int64_t per_group = options_.files_per_task;
  if (can_poll) {
    std::lock_guard lock(mu_);
    ReapLocked();
    can_poll = workers_.size() < kMaxWorkers;
  }
  if (!can_poll) {
    const iceberg::ReadFile read = Reader(w);
    TM_ASSIGN(Prepared prepared, Prepare(table.metadata, request, read, per_group));
    TM_ASSIGN(answer.tasks, prepared.planner.Plan(0, read));
    answer.plan_tasks = PlanTasks(answer.plan_id, prepared.planner.groups());
    TM_TRY(
        plans.Create({answer.plan_id, w.id.str(), table.uuid, metastore::ScanPlanState::kCompleted,
                      prepared.body.dump(), now, now + kPlanLifetimeMs},
                     now));
    return answer;
  }
  // Prepared on a worker: the plan's row exists first (a poll finds it "submitted"), and
  // the worker moves it to completed or failed; a plan cancelled meanwhile stays gone.
  TM_TRY(plans.Create({answer.plan_id, w.id.str(), table.uuid, metastore::ScanPlanState::kSubmitted,
                       "{}", now, now + kPlanLifetimeMs},
                      now));
  auto done = std::make_shared<std::promise<Result<Prepared>>>();
  std::future<Result<Prepared>> prepared = done->get_future();
  {
    std::lock_guard lock(mu_);
    auto finished = std::make_shared<std::atomic<bool>>(false);
    std::thread thread([this, done, finished, warehouse = w, metadata = std::move(table.metadata),
                        request, per_group, id = answer.plan_id]() {
      const iceberg::ReadFile read = [this, &warehouse](const std::string& location) {
        return ReadManifestFile(catalog_.files(), warehouse, WarehouseFiles::Canonical(location));
      };
      Result<Prepared> result = Prepare(metadata, request, read, per_group);
      metastore::ScanPlanStore& rows = catalog_.metastore().scan_plans();
      if (result) {
        (void)rows.Finish(id, metastore::ScanPlanState::kSubmitted,
                          metastore::ScanPlanState::kCompleted, result->body.dump());
      } else {
        const Json failure = {{"code", static_cast<int>(result.error().code)},
                              {"message", result.error().message}};
        (void)rows.Finish(id, metastore::ScanPlanState::kSubmitted,
                          metastore::ScanPlanState::kFailed, Json{{"failure", failure}}.dump());
      }
      done->set_value(std::move(result));
      finished->store(true);
    });
    workers_.push_back({std::move(thread), std::move(finished)});
  }
  // Waiting no time at all answers "submitted" whatever the worker's pace.
  if (options_.prepare_wait_ms == 0 ||
      prepared.wait_for(std::chrono::milliseconds(options_.prepare_wait_ms)) !=
          std::future_status::ready) {
    answer.state = metastore::ScanPlanState::kSubmitted;
    return answer;
  }
  TM_ASSIGN(Prepared ready, prepared.get());
  TM_ASSIGN(answer.tasks, ready.planner.Plan(0, Reader(w)));
  answer.plan_tasks = PlanTasks(answer.plan_id, ready.planner.groups());
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
  Json body = Json::parse(plan.body, nullptr, false);
  if (plan.state == metastore::ScanPlanState::kFailed) {
    const Json& f = body.is_object() && body.contains("failure") ? body["failure"] : Json::object();
    int code = f.value("code", static_cast<int>(ErrorCode::kInternal));
    if (code < 0 || code > static_cast<int>(ErrorCode::kInternal)) {
      code = static_cast<int>(ErrorCode::kInternal);
    }
    answer.failure =
        Error{static_cast<ErrorCode>(code), f.value("message", "scan planning failed"), {}};
    return answer;
  }
  if (plan.state != metastore::ScanPlanState::kCompleted) return answer;
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
  const int64_t per_group = body.value("files-per-group", options_.files_per_task);
  TM_ASSIGN(iceberg::ScanPlanner planner,
            iceberg::ScanPlanner::Prepare(table.metadata, request, read, per_group));
  return planner.Plan(static_cast<size_t>(*group), read);
}

}  // namespace tablemere::catalog
