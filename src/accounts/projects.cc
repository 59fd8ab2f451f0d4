// AccountService: the caller's projects (GET /v1/projects) and the warehouses of one
// project with the caller's level on each (GET /v1/warehouses).
#include "accounts/account_service.h"
#include "common/strings.h"

namespace tablemere::accounts {
namespace {

// A self-hosted deployment has one placement: its own machine. Projects record it so a
// later multi-placement deployment keeps the same shape.
constexpr char kProvider[] = "self-hosted";
constexpr char kRegion[] = "local";
// The free plan's guard on catalogs per project (tablemere-reference.md, "Limits").
constexpr int kWarehousesPerProject = 3;

struct ReachableProject {
  ProjectView view;
  std::string role;  // the caller's role in the project's organisation
};

Error ProjectNotFound(const std::string& project) {
  return Error{ErrorCode::kNotFound, "No project '" + project + "' among yours", {}}
      .With("code", "project_not_found")
      .With("field", "project")
      .With("remedy",
            "Pass a project_id or a project name; tablemere project list (GET /v1/projects) "
            "lists them.");
}

}  // namespace

Result<std::vector<ProjectView>> AccountService::Projects(const Caller& caller) {
  TM_ASSIGN(auto orgs, meta_.accounts().OrgsOf(caller.principal.id));
  std::vector<ProjectView> out;
  for (const auto& [org, role] : orgs) {
    TM_ASSIGN(auto projects, meta_.accounts().ProjectsOfOrg(org.id));
    for (auto& p : projects) out.push_back(ProjectView{std::move(p), kProvider, kRegion});
  }
  return out;
}

Result<ProjectWarehouses> AccountService::Warehouses(const Caller& caller,
                                                     const std::string& project) {
  // ---- resolve the project by id or name among the caller's organisations
  TM_ASSIGN(auto orgs, meta_.accounts().OrgsOf(caller.principal.id));
  std::vector<ReachableProject> reachable;
  for (const auto& [org, role] : orgs) {
    TM_ASSIGN(auto projects, meta_.accounts().ProjectsOfOrg(org.id));
    for (auto& p : projects) {
      reachable.push_back({ProjectView{std::move(p), kProvider, kRegion}, role});
    }
  }
  std::vector<const ReachableProject*> matches;
  for (const auto& r : reachable) {
    if (project.empty() || r.view.project.id == project || r.view.project.name == project) {
      matches.push_back(&r);
    }
  }
  if (project.empty() && matches.size() > 1) {
    std::vector<std::string> names;
    for (const auto* m : matches) names.push_back(m->view.project.name);
    return Fail(Error{ErrorCode::kInvalidInput, "You reach several projects; name one", {}}
                    .With("code", "missing_field")
                    .With("field", "project")
                    .With("available", Join(names, ","))
                    .With("remedy", "Add ?project=<project_id or name>."));
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
            .With("remedy", "Pass the project_id instead of the name."));
  }
  const ReachableProject& chosen = *matches.front();

  // ---- the caller's level on each of its warehouses
  TM_ASSIGN(auto grants, meta_.accounts().GrantsOf(caller.principal.id));
  TM_ASSIGN(auto warehouses, meta_.accounts().WarehousesOfOrg(chosen.view.project.org_id));
  ProjectWarehouses out{chosen.view, {}, kWarehousesPerProject};
  const bool member_agent = caller.principal.kind == "agent" && chosen.role != "admin";
  for (auto& w : warehouses) {
    if (w.project_id != chosen.view.project.id) continue;
    auto access = LevelOn(caller, chosen.role, grants, w);
    if (access) {
      out.warehouses.push_back({std::move(w), access->level, access->level_via});
    } else if (!member_agent) {
      // A member agent does not see warehouses it was not granted (they are 404 for
      // it); everyone else sees them, holding nothing.
      out.warehouses.push_back({std::move(w), "none", ""});
    }
  }
  return out;
}

}  // namespace tablemere::accounts
