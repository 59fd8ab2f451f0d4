// Projects (GET/POST /v1/projects) and the warehouses of one project with the caller's
// level on each (GET /v1/warehouses) (projects.cc).
#pragma once

#include <string>
#include <vector>

#include "accounts/access_service.h"
#include "accounts/audit_recorder.h"
#include "accounts/caller.h"
#include "accounts/idempotency_records.h"
#include "accounts/limits.h"
#include "common/clock.h"
#include "common/result.h"
#include "metastore/metastore.h"

namespace tablemere::accounts {

// A self-hosted deployment has one placement: its own machine. Projects record it so a
// later multi-placement deployment keeps the same shape.
inline constexpr char kProvider[] = "self-hosted";
inline constexpr char kRegion[] = "local";

// A project with the placement it was created with (fixed for its life).
struct ProjectView {
  metastore::Project project;
  std::string provider;
  std::string region;
};

// One warehouse of a project as the caller sees it: level "read" | "write" | "none".
struct WarehouseListing {
  metastore::Warehouse warehouse;
  metastore::Level my_level = metastore::Level::kNone;
  std::string my_via;  // "grant" | "admin" | "" for none
};

// A project the caller reaches, with its role in the project's organisation.
struct ReachableProject {
  ProjectView view;
  metastore::Role role = metastore::Role::kMember;
};

struct ProjectWarehouses {
  ProjectView project;
  std::vector<WarehouseListing> warehouses;
  int limit = 0;  // warehouses per project
};

struct CreateProjectRequest {
  std::string name;
  std::string provider;  // "" for the deployment's own
  std::string region;
  std::string org_id;           // "" when the caller belongs to one organisation
  std::string idempotency_key;  // "" for none
  std::string request_hash;     // the body's fingerprint, checked on a replay
  std::string request_id;
};

struct CreatedProject {
  ProjectView project;
  bool replayed = false;  // an Idempotency-Key seen before: the first call's project
};

class ProjectService {
 public:
  ProjectService(metastore::Metastore& meta, const Clock& clock, Random& random,
                 const Limits& limits, AuditRecorder& audit, AccessService& access,
                 IdempotencyRecords& idempotency)
      : meta_(meta),
        clock_(clock),
        random_(random),
        limits_(limits),
        audit_(audit),
        access_(access),
        idempotency_(idempotency) {}

  // Errors of the calls that name a project: kNotFound (code
  // project_not_found), kConflict (ambiguous_name, candidates), kInvalidInput
  // (missing_field project when the caller reaches several projects).
  Result<std::vector<ProjectView>> Projects(const Caller& caller);
  // Errors: kInvalidInput (missing_field / invalid_value name, unsupported_placement,
  // org_required), kNotFound (org_not_found), kPermissionDenied (insufficient_role: only
  // organisation admins create projects), kAlreadyExists (already_exists, project_id),
  // kConflict (idempotency_key_reused).
  Result<CreatedProject> CreateProject(const Caller& caller, const CreateProjectRequest& request);
  Result<ProjectWarehouses> Warehouses(const Caller& caller, const std::string& project);
  // A project by id or name among those the caller reaches ("" when it reaches one).
  Result<ReachableProject> ResolveProject(const Caller& caller, const std::string& project);

 private:
  metastore::Metastore& meta_;
  const Clock& clock_;
  Random& random_;
  const Limits& limits_;
  AuditRecorder& audit_;
  AccessService& access_;
  IdempotencyRecords& idempotency_;
};

}  // namespace tablemere::accounts
