// ProjectService: the caller's projects (GET /v1/projects) and the warehouses of one
// project with the caller's level on each (GET /v1/warehouses).
#include <nlohmann/json.hpp>
#include <set>

#include "accounts/project_service.h"

#include "accounts/errors.h"
#include "accounts/input_checks.h"
#include "common/crypto.h"
#include "common/strings.h"

namespace tablemere::accounts {
namespace {

Error ProjectNotFound(const std::string& project) {
  return Error{ErrorCode::kNotFound, "No project '" + project + "' among yours", {}}
      .With("code", "project_not_found")
      .With("field", "project")
      .With("remedy",
            "Pass a project_id or a project name; tablemere project list (GET /v1/projects) "
            "lists them.");
}

constexpr char kCreateProjectEndpoint[] = "POST /v1/projects";

Error Invalid(const std::string& code, const std::string& field, const std::string& message) {
  return Error{ErrorCode::kInvalidInput, message, {}}.With("code", code).With("field", field);
}

}  // namespace

Result<CreatedProject> ProjectService::CreateProject(const Caller& caller,
                                                     const CreateProjectRequest& request) {
  // ---- a replay answers with the first call's project
  auto replay = [&]() -> Result<std::optional<CreatedProject>> {
    TM_ASSIGN(auto seen, idempotency_.Replay(caller, request.idempotency_key,
                                             kCreateProjectEndpoint, request.request_hash));
    if (!seen) return std::optional<CreatedProject>();
    TM_ASSIGN(auto project, meta_.warehouses().FindProject(ProjectId(*seen)));
    return std::optional<CreatedProject>(
        CreatedProject{ProjectView{std::move(project), kProvider, kRegion}, true});
  };
  TM_ASSIGN(auto replayed, replay());
  if (replayed) return std::move(*replayed);

  // ---- validate
  TM_ASSIGN(std::string name, CheckName(request.name));
  if ((!request.provider.empty() && request.provider != kProvider) ||
      (!request.region.empty() && request.region != kRegion)) {
    return Fail(Invalid("unsupported_placement", "provider",
                        "This deployment has one placement: provider " + std::string(kProvider) +
                            ", region " + kRegion)
                    .With("available", std::string(kProvider) + "/" + kRegion));
  }
  TM_ASSIGN(auto orgs, meta_.orgs().OrgsOf(caller.principal.id));
  const std::pair<metastore::Organization, metastore::Role>* org = nullptr;
  for (const auto& o : orgs) {
    if (request.org_id.empty()
            ? orgs.size() == 1
            : (o.first.id.str() == request.org_id || o.first.handle == request.org_id)) {
      org = &o;
    }
  }
  if (org == nullptr) {
    if (request.org_id.empty() && orgs.size() > 1) {
      return Fail(
          Invalid("org_required", "org_id", "You belong to several organisations; pass org_id")
              .With("remedy", "tablemere org list shows your organisations."));
    }
    return Fail(OrgNotFound(request.org_id));
  }
  if (org->second != metastore::Role::kAdmin) return Fail(AdminOnly("creates projects"));

  // ---- apply: the project and the key's record in one transaction
  metastore::Project project{ProjectId("pr_" + crypto::HexEncode(random_.Bytes(8))), org->first.id,
                             name, clock_.NowMillis()};
  auto created =
      metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
        if (!request.idempotency_key.empty()) {
          TM_TRY(txn.idempotency().PutIdempotency({caller.principal.id, request.idempotency_key,
                                                   kCreateProjectEndpoint, project.id,
                                                   project.created_ms, request.request_hash}));
        }
        TM_TRY(txn.warehouses().CreateProject(project));
        return audit_.RecordIn(
            txn, metastore::AuditEvent{0, 0, caller.principal.id, org->first.id, "project.create",
                                       "project", project.id, request.request_id,
                                       nlohmann::json{{"name", name}}.dump()});
      });
  if (!created) {
    const Error& e = created.error();
    if (e.code == ErrorCode::kConflict && e.Detail("conflict") == "idempotency_key") {
      // A concurrent call with the same key won the race: answer as its replay.
      TM_ASSIGN(auto again, replay());
      if (again) return std::move(*again);
    }
    if (e.code == ErrorCode::kAlreadyExists) {
      TM_ASSIGN(auto existing, meta_.warehouses().ProjectsOfOrg(org->first.id));
      Error taken{ErrorCode::kAlreadyExists, "You have a project named '" + name + "'", {}};
      taken.With("code", "already_exists").With("field", "name");
      for (const auto& p : existing) {
        if (p.name == name) taken.With("project_id", p.id);
      }
      return Fail(std::move(taken));
    }
    return Fail(e);
  }
  return CreatedProject{ProjectView{std::move(project), kProvider, kRegion}, false};
}

Result<std::vector<ProjectView>> ProjectService::Projects(const Caller& caller) {
  TM_ASSIGN(auto orgs, meta_.orgs().OrgsOf(caller.principal.id));
  std::vector<ProjectView> out;
  for (const auto& [org, role] : orgs) {
    TM_ASSIGN(auto projects, meta_.warehouses().ProjectsOfOrg(org.id));
    for (auto& p : projects) out.push_back(ProjectView{std::move(p), kProvider, kRegion});
  }
  return out;
}

Result<ReachableProject> ProjectService::ResolveProject(const Caller& caller,
                                                        const std::string& project) {
  // ---- resolve the project by id or name among the caller's organisations
  TM_ASSIGN(auto orgs, meta_.orgs().OrgsOf(caller.principal.id));
  std::vector<ReachableProject> reachable;
  for (const auto& [org, role] : orgs) {
    TM_ASSIGN(auto projects, meta_.warehouses().ProjectsOfOrg(org.id));
    for (auto& p : projects) {
      reachable.push_back({ProjectView{std::move(p), kProvider, kRegion}, role});
    }
  }
  std::vector<const ReachableProject*> matches;
  if (project.empty()) {
    // No project named: the organisation's default project, its first (the one signup
    // made). Only a caller in several organisations must say which.
    std::set<std::string> orgs_seen;
    for (const auto& r : reachable) {
      if (orgs_seen.insert(r.view.project.org_id.str()).second) matches.push_back(&r);
    }
    if (matches.size() > 1) {
      std::vector<std::string> names;
      for (const auto* m : matches) names.push_back(m->view.project.name);
      return Fail(Error{ErrorCode::kInvalidInput,
                        "You belong to several organisations, each with its default project; "
                        "name one",
                        {}}
                      .With("code", "missing_field")
                      .With("field", "project")
                      .With("available", Join(names, ","))
                      .With("remedy",
                            "Name the project: --project <project_id or name> with the CLI, "
                            "the project field (or ?project=) with the API; tablemere project "
                            "list shows them."));
    }
  } else {
    for (const auto& r : reachable) {
      if (r.view.project.id.str() == project || r.view.project.name == project) {
        matches.push_back(&r);
      }
    }
  }
  if (matches.empty()) return Fail(ProjectNotFound(project));
  // An id matches one project; a name may match one per organisation.
  if (matches.size() > 1) {
    std::vector<std::string> ids;
    for (const auto* m : matches) ids.push_back(m->view.project.id);
    return Fail(
        Error{ErrorCode::kConflict, "More than one of your projects is named '" + project + "'", {}}
            .With("code", "ambiguous_name")
            .With("candidates", Join(ids, ","))
            .With("remedy",
                  "Pass the project_id instead of the name (--project <project_id> with "
                  "the CLI)."));
  }
  return *matches.front();
}

Result<ProjectWarehouses> ProjectService::Warehouses(const Caller& caller,
                                                     const std::string& project) {
  TM_ASSIGN(auto chosen, ResolveProject(caller, project));

  // ---- the caller's level on each of its warehouses
  TM_ASSIGN(auto grants, meta_.warehouses().GrantsOf(caller.principal.id));
  TM_ASSIGN(auto warehouses, meta_.warehouses().WarehousesOfOrg(chosen.view.project.org_id));
  ProjectWarehouses out{chosen.view, {}, limits_.warehouses_per_project};
  const bool member_agent = caller.principal.kind == metastore::PrincipalKind::kAgent &&
                            chosen.role != metastore::Role::kAdmin;
  for (auto& w : warehouses) {
    if (w.project_id != chosen.view.project.id) continue;
    auto access = AccessService::LevelOn(caller, chosen.role, grants, w);
    if (access) {
      out.warehouses.push_back({std::move(w), access->level, access->level_via});
    } else if (!member_agent) {
      // A member agent does not see warehouses it was not granted (they are 404 for
      // it); everyone else sees them, holding nothing.
      out.warehouses.push_back({std::move(w), metastore::Level::kNone, ""});
    }
  }
  return out;
}

}  // namespace tablemere::accounts
