// signup, recover, terms, account delete, api-key, whoami, usage, audit: the caller's own
// account.
#include <unistd.h>

#include <iostream>

#include "api/wire/control.h"
#include "cli/cli.h"
#include "client/operations.h"
#include "client/settings.h"

namespace tablemere::cli {
namespace {

using api::wire::Confirm;
using api::wire::CreateApiKey;
using api::wire::Recover;
using api::wire::SignupStart;
using api::wire::SignupVerify;
using client::Call;
using client::Request;

struct KeyOptions {
  bool save = false, show_key = false;
};

// An answer that carries a new API key: saved when asked (then not printed unless
// --show-key), printed otherwise.
int ShowIssuedKey(const Cli& cli, client::Outcome outcome, const KeyOptions& k,
                  const std::string& email) {
  if (!outcome) return cli.Fail(outcome.error());
  Json answer = *outcome;
  if (k.save && client::FieldOf(answer, "api_key").is_string()) {
    Json entry = {{"api_key", answer["api_key"]},
                  {"principal_id", client::StringOf(answer, "principal_id")},
                  {"email", email}};
    // A signup connects the catalog it created: `connect` without --catalog picks it.
    if (const auto& w = client::FieldOf(answer, "warehouse_id"); w.is_string()) {
      entry["warehouse_ids"] = Json::array({w});
    }
    auto path = client::SaveEntry(cli.Url(), entry);
    if (!path) return cli.Fail(client::LocalFailure(path.error(), "credentials_file"));
    if (!k.show_key) answer.erase("api_key");
    answer["api_key_saved_to"] = *path;
  }
  cli.Print(answer);
  return 0;
}

// The code from the terminal when one is attached; "" otherwise.
std::string PromptCode(const std::string& email) {
  if (::isatty(STDIN_FILENO) != 1) return "";
  std::cerr << "Code sent to " << email << ": " << std::flush;
  std::string code;
  std::getline(std::cin, code);
  return code;
}

// The two-step code flows (signup, recovery): without a code, POST `start` mails one and,
// on a terminal, the code is asked for; then POST `verify` with `code` filled in by
// `with_code`. Piped without a code, the start's answer is printed with `hint`.
int CodeFlow(const Cli& cli, const std::string& email, const Call& start, std::string& code,
             const std::function<Call()>& verify, const KeyOptions& keys, const std::string& hint) {
  // --save with a credentials file that cannot take the key: refused before anything is
  // sent, rather than minting a key that could then be neither saved nor shown.
  if (keys.save) {
    if (auto creds = client::LoadCredentials(); !creds) {
      return cli.Fail(client::LocalFailure(creds.error(), "credentials_file"));
    }
  }
  auto api = cli.Api();
  if (code.empty()) {
    auto started = Request(api, start);
    if (!started) return cli.Fail(started.error());
    if (client::StringOf(*started, "delivery") == "log") {
      // A stack without mail (scripts/start.sh): the message is in the server's output.
      cli.Say("No mail server is configured on " + cli.Url() +
              ": the code was written to the server's output (the terminal running "
              "tablemere-server or scripts/start.sh), in a block headed 'mail (log "
              "delivery…)' with To: " +
              email + ".");
    }
    code = PromptCode(email);
    if (code.empty()) {
      cli.Print(*started);
      if (!hint.empty()) cli.Say(hint);
      return 0;
    }
  }
  return ShowIssuedKey(cli, Request(api, verify()), keys, email);
}

void AddSignup(CLI::App& app, Cli& cli) {
  auto* cmd =
      app.add_subcommand("signup",
                         "create your account and catalog: email -> code -> API key. The code "
                         "is mailed; a server without a mail server (scripts/start.sh) writes "
                         "the message to its own output instead");
  auto start = std::make_shared<SignupStart>();
  auto verify = std::make_shared<SignupVerify>();
  auto keys = std::make_shared<KeyOptions>();
  cmd->add_option("--email", start->email)->required();
  cmd->add_option("--workspace", start->workspace, "workspace name (default: the part before @)");
  cmd->add_option("--full-name", start->full_name, "your name, for the account");
  cmd->add_option("--organization", start->organization_name,
                  "organisation name; with --handle the organisation is reserved now");
  cmd->add_option("--handle", start->handle,
                  "the organisation's handle (lowercase letters, digits, dashes; fixed after "
                  "signup)");
  cmd->add_option("--code", verify->code, "the code you received; prompted for if omitted");
  cmd->add_option("--engine", verify->engine)
      ->check(CLI::IsMember({"duckdb", "pyiceberg", "spark"}));
  cmd->add_flag("--save", keys->save,
                "store the API key in the credentials file; with it the key is NOT printed");
  cmd->add_flag("--show-key", keys->show_key, "print the API key even when it was saved");
  cmd->add_flag("--accept-terms", verify->accept_terms,
                "accept the Terms of Service and Privacy Policy");
  cmd->callback([&cli, start, verify, keys] {
    cli.action = [&cli, start, verify, keys] {
      verify->email = start->email;
      verify->workspace = start->workspace;
      return CodeFlow(
          cli, start->email,
          Call{.method = "POST",
               .path = "/v1/signup/start",
               .body = start->ToJson(),
               .authenticated = false},
          verify->code,
          [verify] {
            return Call{.method = "POST",
                        .path = "/v1/signup/verify",
                        .body = verify->ToJson(),
                        .authenticated = false};
          },
          *keys,
          "Finish with: tablemere signup --email " + start->email +
              " --code 123456 --accept-terms --save");
    };
  });
}

void AddRecover(CLI::App& app, Cli& cli) {
  auto* cmd = app.add_subcommand(
      "recover",
      "lost API key: a code to your email gives you a new one (a server without a mail "
      "server writes the message to its own output)");
  auto r = std::make_shared<Recover>();
  auto keys = std::make_shared<KeyOptions>();
  cmd->add_option("--email", r->email)->required();
  cmd->add_option("--code", r->code);
  cmd->add_flag("--save", keys->save,
                "store the key in the credentials file; with it the key is NOT printed");
  cmd->add_flag("--show-key", keys->show_key, "print the key even when it was saved");
  cmd->callback([&cli, r, keys] {
    cli.action = [&cli, r, keys] {
      return CodeFlow(
          cli, r->email,
          Call{.method = "POST",
               .path = "/v1/recover/start",
               .body = Recover{r->email, ""}.ToJson(),
               .authenticated = false},
          r->code,
          [r] {
            return Call{.method = "POST",
                        .path = "/v1/recover/verify",
                        .body = r->ToJson(),
                        .authenticated = false};
          },
          *keys, "Finish with: tablemere recover --email " + r->email + " --code 123456 --save");
    };
  });
}

void AddTerms(CLI::App& app, Cli& cli) {
  auto* cmd = app.add_subcommand("terms", "the Terms version in force and whether you accepted it");
  auto accept = std::make_shared<bool>(false);
  auto key = std::make_shared<std::string>();
  cmd->add_flag("--accept", *accept);
  AddIdempotencyKey(cmd, *key);
  cmd->callback([&cli, accept, key] {
    cli.action = [&cli, accept, key] {
      auto api = cli.Api();
      auto terms = Request(api, Call{.path = "/v1/terms"});
      if (!terms || !*accept) return cli.Show(terms);
      return cli.Show(
          Request(api, Call{.method = "POST",
                            .path = "/v1/terms/accept",
                            .body = Json{{"version", (*terms).value("current_version", "")}},
                            .idempotency_key = *key}));
    };
  });
}

void AddAccount(CLI::App& app, Cli& cli) {
  auto* group = app.add_subcommand("account", "your account");
  group->require_subcommand(1);
  auto* cmd = group->add_subcommand(
      "delete", "delete your account: keys revoked now, data purged within 30 days");
  auto c = std::make_shared<Confirm>();
  auto key = std::make_shared<std::string>();
  cmd->add_option("--confirm", c->confirm, "your email, typed out")->required();
  AddIdempotencyKey(cmd, *key);
  cmd->callback([&cli, c, key] {
    cli.action = [&cli, c, key] {
      return cli.Show(Request(
          cli.Api(),
          Call{
              .method = "DELETE", .path = "/v1/me", .body = c->ToJson(), .idempotency_key = *key}));
    };
  });
}

void AddApiKeys(CLI::App& app, Cli& cli) {
  auto* group = app.add_subcommand("api-key", "API keys of the caller");
  group->require_subcommand(1);
  auto* create = group->add_subcommand("create", "a new API key for you, shown once");
  auto r = std::make_shared<CreateApiKey>();
  auto key = std::make_shared<std::string>();
  create->add_option("--label", r->label);
  AddIdempotencyKey(create, *key);
  create->callback([&cli, r, key] {
    cli.action = [&cli, r, key] {
      return cli.Show(Request(cli.Api(), Call{.method = "POST",
                                              .path = "/v1/api-keys",
                                              .body = r->ToJson(),
                                              .idempotency_key = *key}));
    };
  });
  auto* list = group->add_subcommand("list", "your API keys (never their secrets)");
  list->callback([&cli] {
    cli.action = [&cli] {
      return cli.Show(Request(cli.Api(), Call{.path = "/v1/api-keys"}),
                      Table{"api_keys",
                            {{"KEY_ID", "key_id"},
                             {"LABEL", "label"},
                             {"CREATED", "created_at"},
                             {"LAST_USED", "last_used_at"},
                             {"REVOKED", "revoked_at"}}});
    };
  });
  auto* revoke = group->add_subcommand("revoke", "revoke one of your keys at once");
  auto id = std::make_shared<std::string>();
  auto rkey = std::make_shared<std::string>();
  revoke->add_option("--key-id", *id)->required();
  AddIdempotencyKey(revoke, *rkey);
  revoke->callback([&cli, id, rkey] {
    cli.action = [&cli, id, rkey] {
      return cli.Show(
          Request(cli.Api(), Call{.method = "DELETE",
                                  .path = "/v1/api-keys/" + client::ApiClient::Escape(*id),
                                  .idempotency_key = *rkey}));
    };
  });
}

// who am I: the principal and its limits (GET /v1/usage), its organisations, and its
// level on every catalog it sees.
void AddWhoami(CLI::App& app, Cli& cli) {
  auto* cmd = app.add_subcommand("whoami", "who am I, my limits, and what I hold on each catalog");
  cmd->callback([&cli] {
    cli.action = [&cli] {
      auto out = client::Whoami(cli.Api());
      if (!out) return cli.Fail(out.error());
      if (!cli.Human()) {
        cli.Print(*out);
        return 0;
      }
      std::cout << "principal_id  " << (*out).value("principal_id", "") << "\nurl           "
                << cli.Url() << "\n\n";
      cli.Print(*out, Table{"catalogs",
                            {{"CATALOG", "name"},
                             {"WAREHOUSE_ID", "warehouse_id"},
                             {"PROJECT", "project"},
                             {"LEVEL", "level"},
                             {"VIA", "via"}}});
      return 0;
    };
  });
}

void AddUsage(CLI::App& app, Cli& cli) {
  auto* cmd = app.add_subcommand(
      "usage",
      "limits, current usage and headroom; --catalog for one catalog's storage and "
      "traffic by day");
  auto catalog = std::make_shared<std::string>();
  auto days = std::make_shared<int>(7);
  cmd->add_option("--catalog,--warehouse", *catalog,
                  "one catalog's view, day by day; its warehouse_id or name (tablemere catalog "
                  "list)");
  cmd->add_option("--days", *days, "length of the daily history, 1..30 (default 7)");
  cmd->callback([&cli, catalog, days] {
    cli.action = [&cli, catalog, days] {
      auto usage = client::UsageOf(cli.Api(), *catalog, *days);
      if (catalog->empty()) return cli.Show(usage);
      return cli.Show(usage, Table{"history",
                                   {{"DAY", "day"},
                                    {"BYTES", "bytes"},
                                    {"OBJECTS", "objects"},
                                    {"REQUESTS", "requests"},
                                    {"BYTES_IN", "bytes_in"},
                                    {"BYTES_OUT", "bytes_out"}}});
    };
  });
}

void AddAudit(CLI::App& app, Cli& cli) {
  auto* cmd = app.add_subcommand("audit",
                                 "who did what: your events, or your organisation's (owner/admin)");
  struct Opts {
    std::string org, since, action;
    int limit = 0;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--org", o->org,
                  "org_id: the organisation's events (owners and admins) instead of only yours");
  cmd->add_option("--since", o->since, "24h, 7d, 30m, or an ISO-8601 timestamp");
  cmd->add_option("--action", o->action,
                  "one action, e.g. credentials.vend, or a prefix like org.*");
  cmd->add_option("--limit", o->limit, "at most this many events (max 1000)");
  cmd->callback([&cli, o] {
    cli.action = [&cli, o] {
      auto api = cli.Api();
      Call call{.path = "/v1/audit"};
      if (!o->org.empty()) {
        auto org = client::ResolveOrg(api, o->org);
        if (!org) return cli.Fail(org.error());
        call.query.emplace_back("org_id", (*org).value("org_id", ""));
      }
      if (!o->since.empty()) call.query.emplace_back("since", o->since);
      if (!o->action.empty()) call.query.emplace_back("action", o->action);
      if (o->limit > 0) call.query.emplace_back("limit", std::to_string(o->limit));
      return cli.Show(Request(api, call), Table{"events",
                                                {{"TIME", "ts"},
                                                 {"ACTION", "action"},
                                                 {"PRINCIPAL", "principal_id"},
                                                 {"TARGET", "target_type"},
                                                 {"TARGET_ID", "target_id"}}});
    };
  });
}

}  // namespace

void AddAccountCommands(CLI::App& app, Cli& cli) {
  AddSignup(app, cli);
  AddTerms(app, cli);
  AddAccount(app, cli);
  AddRecover(app, cli);
  AddApiKeys(app, cli);
  AddWhoami(app, cli);
  AddUsage(app, cli);
  AddAudit(app, cli);
}

}  // namespace tablemere::cli
