// org and agent: the organisation, its people, domains, invitations and its agents
// (tokens). Every organisation route takes --org (org_id or handle), defaulting to the
// caller's only organisation.
#include "api/wire/control.h"
#include "cli/cli.h"
#include "client/operations.h"

namespace tablemere::cli {
namespace {

using api::wire::AgentGrant;
using api::wire::CreateAgent;
using api::wire::Invite;
using api::wire::SetRole;
using api::wire::UpdateAgent;
using api::wire::UpdateOrg;
using client::ApiClient;
using client::Call;
using client::Outcome;
using client::Request;

const char* kOrgHelp =
    "org_id or the organisation's handle (tablemere org list shows both); default: your only "
    "organisation";

// Runs `fn` with the API client and the organisation's route prefix /v1/orgs/{org_id}.
int WithOrg(const Cli& cli, const std::string& org,
            const std::function<Outcome(const ApiClient&, const std::string&)>& fn,
            const Table& table = {}) {
  auto api = cli.Api();
  auto path = client::OrgPath(api, org);
  if (!path) return cli.Fail(path.error());
  return cli.Show(fn(api, *path), table);
}

// --grant CATALOG:LEVEL values as grants, each catalog resolved to its warehouse_id.
std::expected<std::vector<AgentGrant>, client::Failure> ParseGrants(
    const ApiClient& api, const std::vector<std::string>& specs) {
  std::vector<AgentGrant> grants;
  for (const auto& spec : specs) {
    size_t colon = spec.rfind(':');
    std::string level = colon == std::string::npos ? "" : spec.substr(colon + 1);
    if (colon == std::string::npos || colon == 0 || (level != "read" && level != "write")) {
      return std::unexpected(client::LocalFailure(
          "invalid_value",
          "--grant takes CATALOG:LEVEL with LEVEL read or write, not '" + spec + "'",
          "e.g. --grant lake:write"));
    }
    auto w = client::ResolveWarehouse(api, spec.substr(0, colon));
    if (!w) return std::unexpected(w.error());
    grants.push_back({(*w).value("warehouse_id", ""), level});
  }
  return grants;
}

const Table kAgentTable{"agents",
                        {{"AGENT_ID", "agent_id"},
                         {"NAME", "name"},
                         {"ROLE", "role"},
                         {"GRANTS", "grants"},
                         {"CREATED_BY", "created_by_display"},
                         {"LAST_USED", "last_used_at"}}};

void AddOrg(CLI::App& app, Cli& cli) {
  auto* group = app.add_subcommand("org", "organisations: members, domains, invitations");
  group->require_subcommand(1);

  group->add_subcommand("list", "your organisations")->callback([&cli] {
    cli.action = [&cli] {
      return cli.Show(Request(cli.Api(), Call{.path = "/v1/orgs"}),
                      Table{"organizations",
                            {{"ORG_ID", "org_id"},
                             {"HANDLE", "handle"},
                             {"NAME", "name"},
                             {"ROLE", "role"},
                             {"MEMBERS", "members"},
                             {"DOMAIN_JOIN", "domain_join"}}});
    };
  });

  auto* members = group->add_subcommand("members", "the organisation's members");
  auto m_org = std::make_shared<std::string>();
  members->add_option("--org", *m_org, kOrgHelp);
  members->callback([&cli, m_org] {
    cli.action = [&cli, m_org] {
      return WithOrg(
          cli, *m_org,
          [](const ApiClient& api, const std::string& org) {
            return Request(api, Call{.path = org + "/members"});
          },
          Table{"members",
                {{"PRINCIPAL_ID", "principal_id"},
                 {"NAME", "display_name"},
                 {"EMAIL", "email"},
                 {"KIND", "kind"},
                 {"ROLE", "role"},
                 {"JOINED", "created_at"}}});
    };
  });

  auto* invite = group->add_subcommand("invite", "invite an address as member or admin");
  auto inv = std::make_shared<Invite>();
  auto i_org = std::make_shared<std::string>();
  auto i_key = std::make_shared<std::string>();
  invite->add_option("--org", *i_org, kOrgHelp);
  invite->add_option("--email", inv->email)->required();
  invite->add_option("--role", inv->role)->check(CLI::IsMember({"member", "admin"}));
  AddIdempotencyKey(invite, *i_key);
  invite->callback([&cli, inv, i_org, i_key] {
    cli.action = [&cli, inv, i_org, i_key] {
      return WithOrg(cli, *i_org, [&](const ApiClient& api, const std::string& org) {
        return Request(api, Call{.method = "POST",
                                 .path = org + "/invitations",
                                 .body = inv->ToJson(),
                                 .idempotency_key = *i_key});
      });
    };
  });

  auto* accept = group->add_subcommand("accept", "accept an invitation with its token");
  auto token = std::make_shared<std::string>();
  auto a_key = std::make_shared<std::string>();
  accept->add_option("--token", *token)->required();
  AddIdempotencyKey(accept, *a_key);
  accept->callback([&cli, token, a_key] {
    cli.action = [&cli, token, a_key] {
      return cli.Show(Request(cli.Api(), Call{.method = "POST",
                                              .path = "/v1/orgs/invitations/accept",
                                              .body = Json{{"token", *token}},
                                              .idempotency_key = *a_key}));
    };
  });

  auto* domain = group->add_subcommand(
      "domain", "claim your organisation's email domain (yours must be on it), or --remove it");
  struct DomainOpts {
    std::string org, domain, key;
    bool remove = false;
  };
  auto d = std::make_shared<DomainOpts>();
  domain->add_option("--org", d->org, kOrgHelp);
  domain->add_option("--domain", d->domain)->required();
  domain->add_flag("--remove", d->remove,
                   "release the domain instead of claiming it (admin); domain join switches off "
                   "when no domain remains");
  AddIdempotencyKey(domain, d->key);
  domain->callback([&cli, d] {
    cli.action = [&cli, d] {
      return WithOrg(cli, d->org, [&](const ApiClient& api, const std::string& org) {
        if (d->remove) {
          return Request(api, Call{.method = "DELETE",
                                   .path = org + "/domains/" + ApiClient::Escape(d->domain),
                                   .idempotency_key = d->key});
        }
        return Request(api, Call{.method = "POST",
                                 .path = org + "/domains",
                                 .body = Json{{"domain", d->domain}},
                                 .idempotency_key = d->key});
      });
    };
  });

  auto* set = group->add_subcommand("set", "rename the organisation or switch domain join");
  struct SetOpts {
    std::string org, name, domain_join, key;
  };
  auto s = std::make_shared<SetOpts>();
  set->add_option("--org", s->org, kOrgHelp);
  set->add_option("--name", s->name);
  set->add_option("--domain-join", s->domain_join, "let verified-domain users join")
      ->check(CLI::IsMember({"on", "off"}));
  AddIdempotencyKey(set, s->key);
  set->callback([&cli, s] {
    cli.action = [&cli, s] {
      UpdateOrg u;
      if (!s->name.empty()) u.name = s->name;
      if (!s->domain_join.empty()) u.domain_join = s->domain_join == "on";
      return WithOrg(cli, s->org, [&](const ApiClient& api, const std::string& org) {
        return Request(
            api,
            Call{.method = "PATCH", .path = org, .body = u.ToJson(), .idempotency_key = s->key});
      });
    };
  });

  auto* role = group->add_subcommand(
      "role", "change a member's role: admin or member (an organisation keeps at least one admin)");
  struct RoleOpts {
    std::string org, principal, key;
    SetRole role;
  };
  auto r = std::make_shared<RoleOpts>();
  role->add_option("--org", r->org, kOrgHelp);
  role->add_option("--principal", r->principal)->required();
  role->add_option("--role", r->role.role)->required()->check(CLI::IsMember({"admin", "member"}));
  AddIdempotencyKey(role, r->key);
  role->callback([&cli, r] {
    cli.action = [&cli, r] {
      return WithOrg(cli, r->org, [&](const ApiClient& api, const std::string& org) {
        return Request(api, Call{.method = "PATCH",
                                 .path = org + "/members/" + ApiClient::Escape(r->principal),
                                 .body = r->role.ToJson(),
                                 .idempotency_key = r->key});
      });
    };
  });
}

void AddAgent(CLI::App& app, Cli& cli) {
  auto* group = app.add_subcommand(
      "agent",
      "agents (tokens): machine identities of the organisation, each with its own key, "
      "its own grants and an organisation role");
  group->require_subcommand(1);

  struct CreateOpts {
    std::string org, warehouse, key;
    std::vector<std::string> grants;
    CreateAgent body;
  };
  auto c = std::make_shared<CreateOpts>();
  auto* create = group->add_subcommand(
      "create",
      "a new token; it holds exactly the grants given and the role given (member "
      "unless --role admin)");
  create->add_option("--org", c->org, kOrgHelp);
  create->add_option("--name", c->body.name)->required();
  create
      ->add_option("--role", c->body.role,
                   "organisation role of the token (default member); capped by your own role")
      ->check(CLI::IsMember({"admin", "member"}));
  create->add_option("--grant", c->grants,
                     "CATALOG:LEVEL (the catalog's id or name), repeatable; capped by your own "
                     "level on each catalog");
  create->add_option("--warehouse", c->warehouse, "deprecated: same as --grant CATALOG:write");
  AddIdempotencyKey(create, c->key);
  create->callback([&cli, c] {
    cli.action = [&cli, c] {
      auto specs = c->grants;
      if (!c->warehouse.empty()) specs.push_back(c->warehouse + ":write");
      auto grants = ParseGrants(cli.Api(), specs);
      if (!grants) return cli.Fail(grants.error());
      c->body.grants = *grants;
      return WithOrg(cli, c->org, [&](const ApiClient& api, const std::string& org) {
        return Request(api, Call{.method = "POST",
                                 .path = org + "/agents",
                                 .body = c->body.ToJson(),
                                 .idempotency_key = c->key});
      });
    };
  });

  struct UpdateOpts {
    std::string org, agent_id, name, role, key;
    std::vector<std::string> grants;
  };
  auto u = std::make_shared<UpdateOpts>();
  auto* update =
      group->add_subcommand("update", "rename a token, replace its grants and/or change its role");
  update->add_option("--org", u->org, kOrgHelp);
  update->add_option("--agent-id", u->agent_id)->required();
  update->add_option("--name", u->name);
  update->add_option("--role", u->role, "new organisation role; capped by your own")
      ->check(CLI::IsMember({"admin", "member"}));
  auto* grant_opt = update->add_option(
      "--grant", u->grants, "CATALOG:LEVEL, repeatable; the list REPLACES the current grants");
  AddIdempotencyKey(update, u->key);
  update->callback([&cli, u, grant_opt] {
    cli.action = [&cli, u, grant_opt] {
      UpdateAgent body;
      if (!u->name.empty()) body.name = u->name;
      if (!u->role.empty()) body.role = u->role;
      if (grant_opt->count() > 0) {
        auto grants = ParseGrants(cli.Api(), u->grants);
        if (!grants) return cli.Fail(grants.error());
        body.grants = *grants;
      }
      return WithOrg(cli, u->org, [&](const ApiClient& api, const std::string& org) {
        return Request(api, Call{.method = "PATCH",
                                 .path = org + "/agents/" + ApiClient::Escape(u->agent_id),
                                 .body = body.ToJson(),
                                 .idempotency_key = u->key});
      });
    };
  });

  auto l_org = std::make_shared<std::string>();
  auto* list = group->add_subcommand("list", "the organisation's tokens");
  list->add_option("--org", *l_org, kOrgHelp);
  list->callback([&cli, l_org] {
    cli.action = [&cli, l_org] {
      return WithOrg(
          cli, *l_org,
          [](const ApiClient& api, const std::string& org) {
            return Request(api, Call{.path = org + "/agents"});
          },
          kAgentTable);
    };
  });

  struct RevokeOpts {
    std::string org, agent_id, key;
  };
  auto r = std::make_shared<RevokeOpts>();
  auto* revoke = group->add_subcommand(
      "revoke", "revoke a token's key at once (admin, or the member who created it)");
  revoke->add_option("--org", r->org, kOrgHelp);
  revoke->add_option("--agent-id", r->agent_id)->required();
  AddIdempotencyKey(revoke, r->key);
  revoke->callback([&cli, r] {
    cli.action = [&cli, r] {
      return WithOrg(cli, r->org, [&](const ApiClient& api, const std::string& org) {
        return Request(api, Call{.method = "DELETE",
                                 .path = org + "/agents/" + ApiClient::Escape(r->agent_id),
                                 .idempotency_key = r->key});
      });
    };
  });
}

}  // namespace

void AddOrgCommands(CLI::App& app, Cli& cli) {
  AddOrg(app, cli);
  AddAgent(app, cli);
}

}  // namespace tablemere::cli
