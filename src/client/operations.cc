#include "client/operations.h"

#include <openssl/rand.h>

namespace tablemere::client {

Outcome ListCatalogs(const ApiClient& api, const std::string& project) {
  if (!project.empty()) {
    return Request(api, Call{.path = "/v1/warehouses", .query = {{"project", project}}});
  }
  auto projects = Request(api, Call{.path = "/v1/projects"});
  if (!projects) return projects;
  Json all = Json::array();
  for (const auto& p : (*projects)["projects"]) {
    auto listing = Request(
        api, Call{.path = "/v1/warehouses", .query = {{"project", p.value("project_id", "")}}});
    if (!listing) return listing;
    for (auto w : (*listing)["warehouses"]) {
      w["project"] = p["name"];
      w["project_id"] = p["project_id"];
      all.push_back(w);
    }
  }
  return Json{{"warehouses", all}};
}

Outcome ResolveWarehouse(const ApiClient& api, const std::string& id_or_name) {
  auto listing = ListCatalogs(api, "");
  if (!listing) return listing;
  Json matches = Json::array();
  for (const auto& w : (*listing)["warehouses"]) {
    if (w.value("warehouse_id", "") == id_or_name) return w;
    if (w.value("name", "") == id_or_name) matches.push_back(w);
  }
  if (matches.size() == 1) return matches[0];
  // None of the caller's: the API judges the value itself (its 404 names both accepted
  // forms and the command that lists them; an operator may reach any warehouse).
  if (matches.empty()) return Json{{"warehouse_id", id_or_name}, {"unresolved", true}};
  Failure f = LocalFailure("ambiguous_name",
                           "Several catalogs are named '" + id_or_name + "'; pass the warehouse_id",
                           "Pick one of the candidates' warehouse_id");
  Json candidates = Json::array();
  for (const auto& m : matches) {
    candidates.push_back({{"warehouse_id", m["warehouse_id"]},
                          {"name", m["name"]},
                          {"project", m["project"]},
                          {"project_id", m["project_id"]}});
  }
  f.envelope["error"]["candidates"] = candidates;
  return std::unexpected(f);
}

Outcome ResolveOrg(const ApiClient& api, const std::string& id_or_handle) {
  auto orgs = Request(api, Call{.path = "/v1/orgs"});
  if (!orgs) return orgs;
  const Json& list = (*orgs)["organizations"];
  if (!id_or_handle.empty()) {
    for (const auto& o : list) {
      if (o.value("org_id", "") == id_or_handle || o.value("handle", "") == id_or_handle) return o;
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
    candidates.push_back({{"org_id", o["org_id"]}, {"handle", o["handle"]}, {"name", o["name"]}});
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
  for (const auto& w : (*listing)["warehouses"]) {
    catalogs.push_back({{"name", w["name"]},
                        {"warehouse_id", w["warehouse_id"]},
                        {"project", w["project"]},
                        {"level", w["my_level"]},
                        {"via", w["my_via"]}});
  }
  return Json{{"url", api.base_url()},
              {"principal_id", (*usage).value("principal_id", "")},
              {"kind", (*usage).value("kind", "")},
              {"display_name", (*usage).value("display_name", "")},
              {"organizations", (*orgs)["organizations"]},
              {"projects", (*projects)["projects"]},
              {"catalogs", catalogs},
              {"limits", (*usage).value("limits", Json::object())},
              {"terms",
               {{"current_version", (*terms).value("current_version", "")},
                {"accepted_current", (*terms).value("accepted_current", false)}}}};
}

Outcome UsageOf(const ApiClient& api, const std::string& catalog, int days) {
  Call call{.path = "/v1/usage", .query = {{"days", std::to_string(days)}}};
  if (!catalog.empty()) {
    auto w = ResolveWarehouse(api, catalog);
    if (!w) return w;
    call.query.emplace_back("warehouse_id", (*w).value("warehouse_id", ""));
  }
  return Request(api, call);
}

std::expected<std::string, Failure> OrgPath(const ApiClient& api, const std::string& org) {
  auto resolved = ResolveOrg(api, org);
  if (!resolved) return std::unexpected(resolved.error());
  return "/v1/orgs/" + ApiClient::Escape((*resolved).value("org_id", ""));
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
