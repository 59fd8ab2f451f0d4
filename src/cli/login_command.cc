// tablemere login: connect this machine through the device flow (RFC 8628). The person
// approves the code in the browser; the approval creates an agent named after this
// machine holding exactly the approved grants, and its key is saved here, never printed
// unless --show-key. --issuer runs the device flow at an external OpenID Connect issuer
// instead and mints an API key of the person with its token.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "api/wire/control.h"
#include "cli/cli.h"
#include "client/settings.h"

namespace tablemere::cli {
namespace {

using api::wire::DeviceStart;
using client::ApiClient;
using client::Call;
using client::Request;

struct LoginOptions {
  std::string issuer, label, name, level = "write", engine, key_file;
  std::vector<std::string> catalogs;
  bool issuer_given = false, fresh = false, save = false, show_key = false, accept_terms = false,
       with_key = false;
};

std::string Hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == 0) return "cli";
  return buf;
}

// Opens the link in a browser only when there is one to open it in.
void MaybeOpenBrowser(const std::string& url) {
  if (std::getenv("DISPLAY") == nullptr && std::getenv("WAYLAND_DISPLAY") == nullptr) return;
  for (const char* opener : {"xdg-open", "open"}) {
    for (const auto& dir : {"/usr/bin/", "/usr/local/bin/", "/bin/"}) {
      std::string path = std::string(dir) + opener;
      if (::access(path.c_str(), X_OK) != 0) continue;
      pid_t pid = ::fork();
      if (pid == 0) {
        ::execl(path.c_str(), opener, url.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
      }
      return;
    }
  }
}

// Saves the new key for this URL and prints the outcome; the key itself only with --show-key.
int Finish(const Cli& cli, const LoginOptions& o, Json answer, const std::string& who) {
  const std::string key = client::StringOf(answer, "api_key");
  if (key.empty()) {
    return cli.Fail(client::LocalFailure(
        "unexpected_answer", "The server's answer holds no API key; nothing was saved"));
  }
  Json entry = {
      {"api_key", key},
      {"principal_id", client::StringOf(answer, "principal_id")},
      {"key_id", client::StringOf(answer, "key_id")},
      {"kind", client::StringOf(answer, "kind").empty() ? std::string("agent")
                                                        : client::StringOf(answer, "kind")}};
  // The catalogs the approval connected: `connect` without --catalog uses them.
  Json connected = Json::array();
  for (const auto& w : client::ListOf(client::FieldOf(answer, "connection"), "warehouses")) {
    if (!client::StringOf(w, "warehouse_id").empty()) connected.push_back(w["warehouse_id"]);
  }
  if (!connected.empty()) entry["warehouse_ids"] = connected;
  auto path = client::SaveEntry(cli.Url(), entry);
  if (!path) return cli.Fail(client::LocalFailure(path.error(), "credentials_file"));
  // --engine: the recipe for that engine on the connected catalog, fetched with the new key.
  Json recipe;
  if (!o.engine.empty()) {
    ApiClient api(cli.Url(), key, std::string("tablemere-cli/") + TABLEMERE_VERSION);
    Call call{.path = "/v1/connection", .query = {{"engine", o.engine}}};
    const Json& warehouses = client::ListOf(client::FieldOf(answer, "connection"), "warehouses");
    if (!warehouses.empty()) {
      call.query.emplace_back("warehouse_id", client::StringOf(warehouses[0], "warehouse_id"));
    }
    auto conn = Request(api, call);
    if (!conn) return cli.Fail(conn.error());
    recipe = *conn;
  }
  if (!o.show_key) answer.erase("api_key");
  answer["api_key_saved_to"] = *path;
  if (!recipe.is_null()) answer["recipe"] = recipe;
  cli.Say("Connected to " + cli.Url() + " as " + who + ". The key is saved in " + *path + ".");
  if (!cli.Human()) {
    cli.Print(answer);
    return 0;
  }
  if (o.show_key) std::cout << answer.value("api_key", "") << "\n";
  for (const char* field : {"sql", "python"}) {
    if (recipe.contains(field) && recipe[field].is_string()) {
      std::cout << "\n" << recipe[field].get<std::string>();
    }
  }
  return 0;
}

int TablemereLogin(const Cli& cli, const LoginOptions& o) {
  ApiClient open(cli.Url(), "", std::string("tablemere-cli/") + TABLEMERE_VERSION);
  DeviceStart start;
  start.hostname = Hostname();
  start.client_name = o.name.empty() ? start.hostname : o.name;
  start.requested_level = o.level;
  auto api = cli.Api();
  for (const auto& c : o.catalogs) start.warehouse_ids.push_back(c);
  auto started = Request(open, Call{.method = "POST",
                                    .path = "/v1/auth/device",
                                    .body = start.ToJson(),
                                    .authenticated = false});
  if (!started) return cli.Fail(started.error());
  const Json& s = *started;
  std::string link = s.value("verification_uri_complete", s.value("verification_uri", ""));
  std::cerr << "Open " << link << "\nand check the code " << s.value("user_code", "") << " (valid "
            << s.value("expires_in", 0) / 60 << " minutes).\n"
            << std::flush;
  MaybeOpenBrowser(link);
  int interval = std::max(1, s.value("interval", 5));
  const std::string device_code = s.value("device_code", "");
  while (true) {
    std::this_thread::sleep_for(std::chrono::seconds(interval));
    auto polled = Request(open, Call{.method = "POST",
                                     .path = "/v1/auth/device/token",
                                     .body = Json{{"device_code", device_code}},
                                     .authenticated = false});
    if (polled) {
      std::string who = (*polled)["connection"].value("name", start.client_name);
      return Finish(cli, o, *polled, who);
    }
    const std::string code = polled.error().code();
    if (code == "authorization_pending") continue;
    if (code == "slow_down") {
      interval += 5;
      continue;
    }
    return cli.Fail(polled.error());
  }
}

// The device flow at an external issuer (RFC 8628 against its endpoints), then an API key
// of the person minted with the issuer's token.
int IssuerLogin(const Cli& cli, const LoginOptions& o) {
  ApiClient open(cli.Url(), "", std::string("tablemere-cli/") + TABLEMERE_VERSION);
  auto config = Request(open, Call{.path = "/v1/auth/config", .authenticated = false});
  if (!config) return cli.Fail(config.error());
  Json chosen;
  for (const auto& i : (*config)["external_issuers"]) {
    if (o.issuer.empty() || i.value("issuer", "") == o.issuer) {
      chosen = i;
      break;
    }
  }
  if (chosen.is_null()) {
    return cli.Fail(client::LocalFailure(
        "issuer_not_found",
        o.issuer.empty() ? "This deployment trusts no external issuer"
                         : "This deployment does not trust the issuer " + o.issuer,
        "GET /v1/auth/config lists the trusted issuers"));
  }
  std::string device_endpoint = chosen["device_authorization_endpoint"].is_string()
                                    ? chosen["device_authorization_endpoint"].get<std::string>()
                                    : "";
  std::string token_endpoint =
      chosen["token_endpoint"].is_string() ? chosen["token_endpoint"].get<std::string>() : "";
  std::string client_id =
      chosen["client_id"].is_string() ? chosen["client_id"].get<std::string>() : "";
  if (device_endpoint.empty() || token_endpoint.empty() || client_id.empty()) {
    return cli.Fail(client::LocalFailure(
        "issuer_without_device_flow",
        "The issuer " + chosen.value("issuer", "") +
            " offers no device authorisation endpoint "
            "or has no public client configured",
        "Log in through the account page, or configure the issuer's client_id"));
  }
  auto started = client::PostForm(device_endpoint,
                                  {{"client_id", client_id}, {"scope", "openid email profile"}});
  if (!started) return cli.Fail(started.error());
  const Json& s = *started;
  std::string link = s.value("verification_uri_complete", s.value("verification_uri", ""));
  std::cerr << "Open " << link << "\nand enter the code " << s.value("user_code", "") << ".\n"
            << std::flush;
  MaybeOpenBrowser(link);
  int interval = std::max(1, s.value("interval", 5));
  std::string token;
  while (token.empty()) {
    std::this_thread::sleep_for(std::chrono::seconds(interval));
    auto polled = client::PostForm(token_endpoint,
                                   {{"grant_type", "urn:ietf:params:oauth:grant-type:device_code"},
                                    {"device_code", s.value("device_code", "")},
                                    {"client_id", client_id}});
    if (polled) {
      token = polled->value("id_token", polled->value("access_token", ""));
      break;
    }
    std::string error = polled.error().code();
    if (error == "authorization_pending") continue;
    if (error == "slow_down") {
      interval += 5;
      continue;
    }
    return cli.Fail(polled.error());
  }
  ApiClient as_person(cli.Url(), token, std::string("tablemere-cli/") + TABLEMERE_VERSION);
  if (o.accept_terms) {
    auto terms = Request(as_person, Call{.path = "/v1/terms"});
    if (!terms) return cli.Fail(terms.error());
    auto accepted =
        Request(as_person, Call{.method = "POST",
                                .path = "/v1/terms/accept",
                                .body = Json{{"version", (*terms).value("current_version", "")}}});
    if (!accepted) return cli.Fail(accepted.error());
  }
  api::wire::CreateApiKey key{o.label.empty() ? "cli " + Hostname() : o.label};
  auto issued =
      Request(as_person, Call{.method = "POST", .path = "/v1/api-keys", .body = key.ToJson()});
  if (!issued) return cli.Fail(issued.error());
  return Finish(cli, o, *issued, chosen.value("issuer", ""));
}

// --with-key / --key-file: an API key the person already holds (the answer of the
// one-call signup, a key made in the account page) is checked against the server and
// saved like a login's, without ever being on a command line or in shell history.
int AdoptKey(const Cli& cli, const LoginOptions& o) {
  std::string key;
  if (!o.key_file.empty()) {
    auto read = client::ReadKeyFile(o.key_file);
    if (!read) return cli.Fail(client::LocalFailure(read.error(), "key_file"));
    key = *read;
  } else {
    std::string line;
    while (key.empty() && std::getline(std::cin, line)) {
      const size_t start = line.find_first_not_of(" \t\r");
      if (start != std::string::npos) {
        key = line.substr(start, line.find_last_not_of(" \t\r") - start + 1);
      }
    }
  }
  if (key.empty()) {
    return cli.Fail(client::LocalFailure(
        "missing_credential", "No API key on standard input; nothing was saved",
        "Pipe the key in: tablemere login --with-key < file-holding-the-key (or --key-file "
        "FILE)"));
  }
  ApiClient api(cli.Url(), key, std::string("tablemere-cli/") + TABLEMERE_VERSION);
  auto me = Request(api, Call{.path = "/v1/usage"});
  if (!me) return cli.Fail(me.error());
  const std::string principal = client::StringOf(*me, "principal_id");
  const std::string kind = client::StringOf(*me, "kind");
  Json entry = {{"api_key", key}, {"principal_id", principal}, {"kind", kind}};
  if (key.starts_with("al_live_")) {
    const size_t end = key.find('_', 8);
    if (end != std::string::npos) entry["key_id"] = key.substr(8, end - 8);
  }
  auto path = client::SaveEntry(cli.Url(), entry);
  if (!path) return cli.Fail(client::LocalFailure(path.error(), "credentials_file"));
  cli.Say("Saved the key of " + principal + " for " + cli.Url() + " in " + *path +
          "; every tablemere command now uses it.");
  if (!cli.Human()) {
    cli.Print(Json{{"saved", true},
                   {"url", cli.Url()},
                   {"principal_id", principal},
                   {"kind", kind},
                   {"api_key_saved_to", *path}});
  }
  return 0;
}

}  // namespace

void AddLoginCommand(CLI::App& app, Cli& cli) {
  auto* cmd = app.add_subcommand(
      "login",
      "connect this machine to your catalog: approve a code in the browser; an agent "
      "named after this machine is created with the access you approve, and its key is "
      "saved here, never printed");
  auto o = std::make_shared<LoginOptions>();
  auto* issuer = cmd->add_option("--issuer", o->issuer,
                                 "log in through an external OpenID Connect issuer instead (the "
                                 "first configured one, or the one named)");
  issuer->expected(0, 1);
  cmd->add_option("--label", o->label, "API key label on the --issuer path");
  cmd->add_option(
      "--name", o->name,
      "the agent's name shown on the consent screen (default: this machine's hostname)");
  cmd->add_option("--level", o->level, "the access to ask for (default write)")
      ->check(CLI::IsMember({"read", "write"}));
  cmd->add_option(
      "--catalog,--warehouse", o->catalogs,
      "connect to this catalog (repeatable; default: the organisation's default catalog)");
  cmd->add_flag("--new", o->fresh, "start a new authorisation even when the saved key still works");
  cmd->add_option("--engine", o->engine);
  cmd->add_flag("--save", o->save, "kept for compatibility: the key is always saved");
  cmd->add_flag("--show-key", o->show_key, "print the API key as well");
  cmd->add_flag("--accept-terms", o->accept_terms,
                "accept the Terms of Service on first login (--issuer path)");
  auto* with_key = cmd->add_flag(
      "--with-key", o->with_key,
      "save an API key you already hold (e.g. from the one-call POST /v1/signup), read from "
      "standard input: tablemere login --with-key < key.txt; checked with the server first");
  auto* key_file =
      cmd->add_option("--key-file", o->key_file, "as --with-key, the key read from this file");
  with_key->excludes(key_file);
  cmd->callback([&cli, o, issuer] {
    o->issuer_given = issuer->count() > 0;
    cli.action = [&cli, o] {
      if (o->with_key || !o->key_file.empty()) return AdoptKey(cli, *o);
      // A saved key that still works needs no new login (a saved api_key that is not a
      // string is no key).
      if (!o->fresh) {
        auto saved = client::SavedEntry(cli.Url());
        const std::string saved_key = saved ? client::StringOf(*saved, "api_key") : "";
        if (!saved_key.empty()) {
          ApiClient api(cli.Url(), saved_key, std::string("tablemere-cli/") + TABLEMERE_VERSION);
          auto me = Request(api, Call{.path = "/v1/usage"});
          if (me) {
            std::string key_id = client::StringOf(*saved, "key_id");
            cli.Say("Still connected to " + cli.Url() + " (key " +
                    (key_id.empty() ? client::MaskKey(saved_key) : key_id) +
                    "). Use --new for a new authorisation.");
            if (!cli.Human()) {
              cli.Print(Json{{"connected", true},
                             {"still_connected", true},
                             {"url", cli.Url()},
                             {"principal_id", client::StringOf(*saved, "principal_id")}});
            }
            return 0;
          }
        }
      }
      // The new key is saved at the end: a credentials file that cannot take it is
      // refused now, before a key is minted that could then be neither saved nor shown.
      if (auto creds = client::LoadCredentials(); !creds) {
        return cli.Fail(client::LocalFailure(creds.error(), "credentials_file"));
      }
      return o->issuer_given ? IssuerLogin(cli, *o) : TablemereLogin(cli, *o);
    };
  });
}

}  // namespace tablemere::cli
