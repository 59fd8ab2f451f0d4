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
