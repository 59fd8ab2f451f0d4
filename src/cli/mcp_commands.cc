// tablemere mcp install | run. `run` serves the MCP server from this same binary over
// stdio; `install` writes a host's configuration to start it ("command": the absolute path
// of this binary, "args": ["mcp", "run"]) with the key in its environment, never printed.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/cli.h"
#include "client/settings.h"
#include "common/files.h"
#include "mcp/mcp_server.h"

namespace tablemere::cli {
namespace {

struct InstallOptions {
  std::string client = "claude-code", url, from, name = "tablemere", scope = "user";
  bool print = false;
};

std::string SelfPath() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "tablemere" : p.string();
}

// The first executable `name` on PATH, or "".
std::string OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

Json Entry(const std::string& url, const std::string& key) {
  return {{"command", SelfPath()},
          {"args", Json::array({"mcp", "run"})},
          {"env", {{"TABLEMERE_URL", url}, {"TABLEMERE_API_KEY", key}}}};
}

Json Masked(Json entry) {
  auto& k = entry["env"]["TABLEMERE_API_KEY"];
  k = client::MaskKey(k.get<std::string>());
  return entry;
}

std::string DesktopConfigPath() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  std::string base =
      xdg && *xdg ? xdg : std::string(std::getenv("HOME") ? std::getenv("HOME") : "") + "/.config";
#ifdef __APPLE__
  base = std::string(std::getenv("HOME")) + "/Library/Application Support";
#endif
  return base + "/Claude/claude_desktop_config.json";
}

// Merges the entry into Claude Desktop's configuration: other servers kept, the previous
// file copied to .bak-<time> first, the result written 0600 through a rename.
std::expected<std::string, client::Failure> InstallDesktop(const std::string& name,
                                                           const Json& entry) {
  const std::string path = DesktopConfigPath();
  auto failure = [&](const std::string& what) {
    return std::unexpected(client::LocalFailure("config_write_failed", what + " " + path));
  };
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  Json config = Json::object();
  if (std::filesystem::exists(path)) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    config = Json::parse(text.str(), nullptr, false);
    if (config.is_discarded() || !config.is_object()) {
      return std::unexpected(client::LocalFailure(
          "invalid_value", path + " is not a JSON object; fix or move it, nothing was written"));
    }
    auto stamp = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
    std::error_code ec;
    std::filesystem::copy_file(path, path + ".bak-" + std::to_string(stamp),
                               std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) return failure("Cannot back up");
  }
  if (!config.contains("mcpServers") || !config["mcpServers"].is_object()) {
    config["mcpServers"] = Json::object();
  }
  config["mcpServers"][name] = entry;
  if (!WriteFileAtomically(path, config.dump(2) + "\n", 0600)) return failure("Cannot write");
  return path;
}

int RunClaude(const std::string& claude, const std::vector<std::string>& args) {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(claude.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(claude.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int Install(const Cli& cli, const InstallOptions& o) {
  const std::string url = o.url.empty() ? cli.Url() : client::ResolveUrl(o.url);
  const std::string key = client::ResolveKey(cli.key_flag, url);
  if (key.empty()) {
    return cli.Fail(
        client::LocalFailure("missing_credential", "No API key for " + url,
                             "tablemere login (or signup --save) saves one; or pass --api-key"));
  }
  Json entry = Entry(url, key);
  if (o.print) {
    std::cout << Json{{"mcpServers", {{o.name, Masked(entry)}}}}.dump(2) << "\n";
    return 0;
  }
  if (o.client == "claude-desktop") {
    auto path = InstallDesktop(o.name, entry);
    if (!path) return cli.Fail(path.error());
    cli.Say("Added the MCP server '" + o.name + "' to " + *path + " (key " + client::MaskKey(key) +
            "). Restart Claude Desktop to load it.");
    if (!cli.Human())
      cli.Print(Json{{"installed", true}, {"client", o.client}, {"path", *path}, {"name", o.name}});
    return 0;
  }
  std::string claude = OnPath("claude");
  if (claude.empty()) {
    std::cout << "Claude Code's `claude` is not on PATH. Run this once it is (the key is masked "
                 "here; the real one is in your credentials file):\n\n"
              << "claude mcp add-json --scope " << o.scope << " " << o.name << " '"
              << Masked(entry).dump() << "'\n";
    return 0;
  }
  int rc = RunClaude(claude, {"mcp", "add-json", "--scope", o.scope, o.name, entry.dump()});
  if (rc != 0) {
    return cli.Fail(client::LocalFailure("claude_failed",
                                         "claude mcp add-json exited with " + std::to_string(rc)));
  }
  cli.Say("Added the MCP server '" + o.name + "' to Claude Code (" + o.scope + " scope, key " +
          client::MaskKey(key) + ").");
  if (!cli.Human())
    cli.Print(
        Json{{"installed", true}, {"client", o.client}, {"scope", o.scope}, {"name", o.name}});
  return 0;
}

}  // namespace

void AddMcpCommands(CLI::App& app, Cli& cli) {
  auto* group = app.add_subcommand(
      "mcp",
      "the MCP server for Claude Desktop, Claude Code and other hosts: install its "
      "configuration with the saved key, or run it");
  group->require_subcommand(1);

  auto o = std::make_shared<InstallOptions>();
  auto* install = group->add_subcommand(
      "install",
      "write the mcpServers entry into a host's configuration; the key comes from "
      "--api-key, TABLEMERE_API_KEY or the credentials file and is never printed");
  install
      ->add_option("--client", o->client,
                   "which host's configuration to write (default claude-code)")
      ->check(CLI::IsMember({"claude-code", "claude-desktop"}));
  install->add_option("--url", o->url,
                      "API base URL the server will talk to and whose saved key is used");
  install->add_option("--from", o->from, "kept for compatibility: the server is this binary");
  install->add_option("--name", o->name, "the server's name in the host (default: tablemere)");
  install->add_option("--scope", o->scope, "Claude Code only: user (default), local or project")
      ->check(CLI::IsMember({"local", "user", "project"}));
  install->add_flag("--print", o->print,
                    "print the mcpServers snippet with the key MASKED instead of writing anything");
  install->callback([&cli, o] { cli.action = [&cli, o] { return Install(cli, *o); }; });

  struct RunOptions {
    std::string url, from;
    std::vector<std::string> server_args;
  };
  auto r = std::make_shared<RunOptions>();
  auto* run = group->add_subcommand(
      "run",
      "start the MCP server over stdio (for a host configured by hand: command "
      "tablemere, args mcp run)");
  run->add_option("--url", r->url, "API base URL (default: the global --url / TABLEMERE_URL)");
  run->add_option("--from", r->from, "kept for compatibility: the server is this binary");
  run->add_option("server_args", r->server_args, "passed to the server, e.g. -- --list-tools");
  run->callback([&cli, r] {
    cli.action = [&cli, r] {
      for (const auto& a : r->server_args) {
        if (a == "--list-tools") {
          std::cout << mcp::ToolList().dump(2) << "\n";
          return 0;
        }
        if (a == "--version") {
          std::cout << "tablemere-mcp " << TABLEMERE_VERSION << "\n";
          return 0;
        }
        std::cerr << "Unknown server argument " << a << " (known: --list-tools, --version)\n";
        return kUsageExit;
      }
      // The key comes from the environment only (or the global --api-key a host passes).
      const char* env_key = std::getenv("TABLEMERE_API_KEY");
      mcp::McpOptions options{r->url.empty() ? cli.url_flag : r->url,
                              !cli.key_flag.empty() ? cli.key_flag : (env_key ? env_key : "")};
      return mcp::Serve(options, std::cin, std::cout);
    };
  });
}

}  // namespace tablemere::cli
