#include "client/operations.h"

#include <openssl/rand.h>

#include <algorithm>

namespace tablemere::client {

Outcome ListCatalogs(const ApiClient& api, const std::string& project) {
  if (!project.empty()) {
    return Request(api, Call{.path = "/v1/warehouses", .query = {{"project", project}}});
  }
  auto projects = Request(api, Call{.path = "/v1/projects"});
  if (!projects) return projects;
  // Answers are read with FieldOf/StringOf/ListOf: a field missing or of another type is
  // null or skipped, never undefined behaviour (operator[] on a const json) or a throw.
  Json all = Json::array();
  for (const auto& p : ListOf(*projects, "projects")) {
    const std::string project_id = StringOf(p, "project_id");
    if (project_id.empty()) continue;
    auto listing = Request(api, Call{.path = "/v1/warehouses", .query = {{"project", project_id}}});
    if (!listing) return listing;
    for (const auto& entry : ListOf(*listing, "warehouses")) {
      if (!entry.is_object()) continue;
      Json w = entry;
      w["project"] = FieldOf(p, "name");
      w["project_id"] = project_id;
      all.push_back(std::move(w));
    }
  }
  return Json{{"warehouses", all}};
}

namespace {

// The candidates an error lists: those fields of each catalog (null where missing).
Json Candidates(const Json& catalogs, std::initializer_list<const char*> fields) {
  Json list = Json::array();
  for (const auto& w : catalogs) {
    Json c = Json::object();
    for (const char* field : fields) c[field] = FieldOf(w, field);
    list.push_back(std::move(c));
  }
  return list;
}

}  // namespace

Outcome ConnectedCatalog(const ApiClient& api, const std::vector<std::string>& connected) {
  auto listing = ListCatalogs(api, "");
  if (!listing) return listing;
  Json held = Json::array(), approved = Json::array();
  for (const auto& w : ListOf(*listing, "warehouses")) {
    const std::string level = StringOf(w, "my_level");
    if (level != "read" && level != "write") continue;
    held.push_back(w);
    if (std::find(connected.begin(), connected.end(), StringOf(w, "warehouse_id")) !=
        connected.end()) {
      approved.push_back(w);
    }
  }
  const Json& candidates = approved.empty() ? held : approved;
  if (candidates.size() == 1) return candidates[0];
  Failure f = LocalFailure(
      "catalog_required",
      candidates.empty() ? "You hold read or write on no catalog; nothing to connect to"
                         : "You hold several catalogs; name the one to connect to",
      candidates.empty() ? "Create one (tablemere catalog create --name lake) or ask an admin "
                           "for a grant (tablemere catalog grant)"
                         : "Pass --catalog <name or warehouse_id> with one of the candidates");
  f.envelope["error"]["field"] = "catalog";
  f.envelope["error"]["candidates"] =
      Candidates(candidates, {"name", "warehouse_id", "project", "my_level"});
  return std::unexpected(f);
}

Outcome ResolveWarehouse(const ApiClient& api, const std::string& id_or_name) {
  auto listing = ListCatalogs(api, "");
  if (!listing) return listing;
  Json matches = Json::array();
  for (const auto& w : ListOf(*listing, "warehouses")) {
    if (!w.is_object()) continue;
    if (StringOf(w, "warehouse_id") == id_or_name) return w;
    if (StringOf(w, "name") == id_or_name) matches.push_back(w);
  }
  if (matches.size() == 1) return matches[0];
  // None of the caller's: the API judges the value itself (its 404 names both accepted
  // forms and the command that lists them; an operator may reach any warehouse).
  if (matches.empty()) return Json{{"warehouse_id", id_or_name}, {"unresolved", true}};
  Failure f = LocalFailure("ambiguous_name",
                           "Several catalogs are named '" + id_or_name + "'; pass the warehouse_id",
                           "Pick one of the candidates' warehouse_id");
  f.envelope["error"]["candidates"] =
      Candidates(matches, {"warehouse_id", "name", "project", "project_id"});
  return std::unexpected(f);
}

Outcome ResolveOrg(const ApiClient& api, const std::string& id_or_handle) {
  auto orgs = Request(api, Call{.path = "/v1/orgs"});
  if (!orgs) return orgs;
  Json list = Json::array();
  for (const auto& o : ListOf(*orgs, "organizations")) {
    if (o.is_object()) list.push_back(o);
  }
  if (!id_or_handle.empty()) {
    for (const auto& o : list) {
      if (StringOf(o, "org_id") == id_or_handle || StringOf(o, "handle") == id_or_handle) {
        return o;
      }
    }
    // Not one of the caller's: let the API judge (an operator may name any organisation).
    return Json{{"org_id", id_or_handle}};
  }
  if (list.size() == 1) return list[0];
  if (list.empty()) {
    return std::unexpected(
        LocalFailure("no_organization", "This key is not a member of any organisation",
                     "Use a member's key (tablemere login, or tablemere api-key create as a "
                     "member), or pass --org"));
  }
  Failure f = LocalFailure("org_required", "You belong to several organisations; name one",
                           "Pass --org with an org_id or handle from: tablemere org list");
  Json candidates = Json::array();
  for (const auto& o : list) {
    candidates.push_back({{"org_id", FieldOf(o, "org_id")},
                          {"handle", FieldOf(o, "handle")},
                          {"name", FieldOf(o, "name")}});
  }
  f.envelope["error"]["candidates"] = candidates;
  return std::unexpected(f);
}

Outcome Whoami(const ApiClient& api) {
  auto usage = Request(api, Call{.path = "/v1/usage"});
  if (!usage) return usage;
  auto orgs = Request(api, Call{.path = "/v1/orgs"});
  if (!orgs) return orgs;
  auto projects = Request(api, Call{.path = "/v1/projects"});
  if (!projects) return projects;
  auto terms = Request(api, Call{.path = "/v1/terms"});
  if (!terms) return terms;
  auto listing = ListCatalogs(api, "");
  if (!listing) return listing;
  Json catalogs = Json::array();
  for (const auto& w : ListOf(*listing, "warehouses")) {
    catalogs.push_back({{"name", FieldOf(w, "name")},
                        {"warehouse_id", FieldOf(w, "warehouse_id")},
                        {"project", FieldOf(w, "project")},
                        {"level", FieldOf(w, "my_level")},
                        {"via", FieldOf(w, "my_via")}});
  }
  const Json& limits = FieldOf(*usage, "limits");
  return Json{{"url", api.base_url()},
              {"principal_id", StringOf(*usage, "principal_id")},
              {"kind", StringOf(*usage, "kind")},
              {"display_name", StringOf(*usage, "display_name")},
              {"organizations", ListOf(*orgs, "organizations")},
              {"projects", ListOf(*projects, "projects")},
              {"catalogs", catalogs},
              {"limits", limits.is_object() ? limits : Json::object()},
              {"terms",
               {{"current_version", StringOf(*terms, "current_version")},
                {"accepted_current", FieldOf(*terms, "accepted_current") == true}}}};
}

Outcome UsageOf(const ApiClient& api, const std::string& catalog, int days) {
  Call call{.path = "/v1/usage", .query = {{"days", std::to_string(days)}}};
  if (!catalog.empty()) {
    auto w = ResolveWarehouse(api, catalog);
    if (!w) return w;
    call.query.emplace_back("warehouse_id", StringOf(*w, "warehouse_id"));
  }
  return Request(api, call);
}

std::expected<std::string, Failure> OrgPath(const ApiClient& api, const std::string& org) {
  auto resolved = ResolveOrg(api, org);
  if (!resolved) return std::unexpected(resolved.error());
  return "/v1/orgs/" + ApiClient::Escape(StringOf(*resolved, "org_id"));
}

std::string NewIdempotencyKey() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return "";
  static const char* kHex = "0123456789abcdef";
  std::string out = "mcp-";
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

}  // namespace tablemere::client
