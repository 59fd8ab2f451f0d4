// tablemere mcp install | run. `run` serves the MCP server from this same binary over
// stdio; `install` writes a host's configuration to start it ("command": the absolute path
// of this binary, "args": ["mcp", "run"]). The key is never printed, and never put on a
// command line, where any local user can read it (/proc/<pid>/cmdline):
//  - Claude Desktop: the key in the entry's env, in the config file written here (0600);
//  - Claude Code, user and local scope: `claude mcp add-json` gets TABLEMERE_API_KEY_FILE,
//    the path of a 0600 file holding the key (add-json takes its JSON only as an argument);
//  - Claude Code, project scope: the shared, usually committed .mcp.json gets no secret at
//    all, only "${TABLEMERE_API_KEY}", which Claude Code expands from its environment.
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

constexpr const char* kKeyEnv = "TABLEMERE_API_KEY";
constexpr const char* kKeyFileEnv = "TABLEMERE_API_KEY_FILE";
// What a project's .mcp.json holds instead of the key (Claude Code's ${VAR} expansion).
constexpr const char* kKeyReference = "${TABLEMERE_API_KEY}";

// The host's entry; `key_var` (TABLEMERE_API_KEY or TABLEMERE_API_KEY_FILE) set to `value`.
Json Entry(const std::string& url, const std::string& key_var, const std::string& value) {
  return {{"command", SelfPath()},
          {"args", Json::array({"mcp", "run"})},
          {"env", {{"TABLEMERE_URL", url}, {key_var, value}}}};
}

// `s` as one POSIX shell word.
std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Where a project-scope install says, on stderr, that the key must be in the environment.
void ExplainKeyReference() {
  std::cerr << "The project's .mcp.json holds no key: its entry reads " << kKeyReference
            << ", which Claude Code expands from its own environment. Set " << kKeyEnv
            << " (export " << kKeyEnv
            << "=<your key>) wherever Claude Code is started in this project.\n";
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
  std::error_code dir_error;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), dir_error);
  if (dir_error) return failure("Cannot create the directory of");
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
  // Claude Code's project scope writes no key, so it needs none to install.
  const bool shared = o.client == "claude-code" && o.scope == "project";
  if (key.empty() && !shared) {
    return cli.Fail(
        client::LocalFailure("missing_credential", "No API key for " + url,
                             "tablemere login (or signup --save) saves one; or pass --api-key"));
  }
  if (o.print) {
    Json entry =
        shared ? Entry(url, kKeyEnv, kKeyReference) : Entry(url, kKeyEnv, client::MaskKey(key));
    std::cout << Json{{"mcpServers", {{o.name, entry}}}}.dump(2) << "\n";
    return 0;
  }
  if (o.client == "claude-desktop") {
    auto path = InstallDesktop(o.name, Entry(url, kKeyEnv, key));
    if (!path) return cli.Fail(path.error());
    cli.Say("Added the MCP server '" + o.name + "' to " + *path + " (key " + client::MaskKey(key) +
            "). Restart Claude Desktop to load it.");
    if (!cli.Human())
      cli.Print(Json{{"installed", true}, {"client", o.client}, {"path", *path}, {"name", o.name}});
    return 0;
  }
  // Claude Code: an entry holding no secret, so it may go on claude's command line.
  Json entry;
  std::string key_file;
  if (shared) {
    entry = Entry(url, kKeyEnv, kKeyReference);
  } else {
    auto file = client::SaveKeyFile(key);
    if (!file) return cli.Fail(client::LocalFailure(file.error(), "key_file"));
    key_file = *file;
    entry = Entry(url, kKeyFileEnv, key_file);
  }
  const std::string key_note =
      shared ? std::string("key from $") + kKeyEnv
             : "key " + client::MaskKey(key) + " in " + key_file + ", mode 0600";
  std::string claude = OnPath("claude");
  if (claude.empty()) {
    std::cout << "Claude Code's `claude` is not on PATH. Run this once it is (" << key_note
              << "; the command holds no secret):\n\n"
              << "claude mcp add-json --scope " << o.scope << " " << ShellQuote(o.name) << " "
              << ShellQuote(entry.dump()) << "\n";
    if (shared) ExplainKeyReference();
    return 0;
  }
  int rc = RunClaude(claude, {"mcp", "add-json", "--scope", o.scope, o.name, entry.dump()});
  if (rc != 0) {
    return cli.Fail(client::LocalFailure("claude_failed",
                                         "claude mcp add-json exited with " + std::to_string(rc)));
  }
  cli.Say("Added the MCP server '" + o.name + "' to Claude Code (" + o.scope + " scope, " +
          key_note + ").");
  if (shared) ExplainKeyReference();
  if (!cli.Human()) {
    Json answer = {{"installed", true}, {"client", o.client}, {"scope", o.scope}, {"name", o.name}};
    if (shared) {
      answer["api_key_env"] = kKeyEnv;
    } else {
      answer["api_key_file"] = key_file;
    }
    cli.Print(answer);
  }
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
      "--api-key, TABLEMERE_API_KEY or the credentials file and is never printed nor put on "
      "a command line (Claude Code: a 0600 key file, TABLEMERE_API_KEY_FILE; with --scope "
      "project, no key in .mcp.json but ${TABLEMERE_API_KEY})");
  install
      ->add_option("--client", o->client,
                   "which host's configuration to write (default claude-code)")
      ->check(CLI::IsMember({"claude-code", "claude-desktop"}));
  install->add_option("--url", o->url,
                      "API base URL the server will talk to and whose saved key is used");
  install->add_option("--from", o->from, "kept for compatibility: the server is this binary");
  install->add_option("--name", o->name, "the server's name in the host (default: tablemere)");
  install
      ->add_option("--scope", o->scope,
                   "Claude Code only: user (default), local or project (the shared .mcp.json: "
                   "it names ${TABLEMERE_API_KEY}, set that variable where Claude Code runs)")
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
      // The key, with the precedence of every other command (whoami's): the global
      // --api-key a host passes, TABLEMERE_API_KEY, the file TABLEMERE_API_KEY_FILE names
      // (what `mcp install` configures for Claude Code), then the credentials file's key
      // for this URL (what signup, recover and login --save wrote).
      const std::string url = client::ResolveUrl(r->url.empty() ? cli.url_flag : r->url);
      std::string key = cli.key_flag;
      if (const char* env_key = std::getenv(kKeyEnv); key.empty() && env_key) key = env_key;
      if (const char* file = std::getenv(kKeyFileEnv); key.empty() && file && *file) {
        auto read = client::ReadKeyFile(file);
        if (read) {
          key = *read;
        } else {
          std::cerr << "tablemere mcp: " << read.error().message
                    << "; every tool will answer missing_credential\n";
        }
      }
      if (key.empty()) key = client::ResolveKey("", url);
      mcp::McpOptions options{url, key};
      return mcp::Serve(options, std::cin, std::cout);
    };
  });
}

}  // namespace tablemere::cli
