// Control-API operations both clients (the CLI and the MCP server) perform in more than
// one request: listing every catalog across projects, assembling "who am I", one
// catalog's usage view, and acting on an organisation named by id, handle or default.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "client/outcome.h"

namespace tablemere::client {

// {"warehouses": [...]} of one project (id or name), or of every project the caller sees
// (each entry then carries project and project_id).
Outcome ListCatalogs(const ApiClient& api, const std::string& project);

// The warehouse a value names: its id, or its name among every warehouse the caller
// sees ({"warehouse_id", "name", …}). A value matching none comes back as
// {"warehouse_id": value, "unresolved": true} for the API to judge; two warehouses of one
// name are ambiguous_name with the candidates, never a guess.
Outcome ResolveWarehouse(const ApiClient& api, const std::string& id_or_name);
// The catalog a command means when none is named: among `connected` (the warehouse ids a
// device login approved, saved with its key) those the caller still holds, else every
// catalog it holds read or write on; exactly one is the answer. None or several is
// catalog_required (class 1) with the candidates [{name, warehouse_id, project,
// my_level}].
Outcome ConnectedCatalog(const ApiClient& api, const std::vector<std::string>& connected);

// The organisation a value names (org_id or handle), or the caller's only one when the
// value is empty (org_required with candidates when there are several).
Outcome ResolveOrg(const ApiClient& api, const std::string& id_or_handle);

// {url, principal_id, organizations, projects, catalogs[{name, warehouse_id, project,
// level, via}], limits, terms{current_version, accepted_current}}.
Outcome Whoami(const ApiClient& api);

// GET /v1/usage over `days` days; with a catalog (id or name), the API's view of that
// catalog alone (storage and traffic by day).
Outcome UsageOf(const ApiClient& api, const std::string& catalog, int days);

// The organisation's route prefix "/v1/orgs/{org_id}" for an id, a handle or "" (the
// caller's only organisation).
std::expected<std::string, Failure> OrgPath(const ApiClient& api, const std::string& org);

// A fresh random idempotency key (for a mutation the caller gave none).
std::string NewIdempotencyKey();

}  // namespace tablemere::client
