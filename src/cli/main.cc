// tablemere: the command-line client and MCP server of the control API. It talks to the
// server only through the public HTTP API (libcurl), with the api/wire request structs.
// Command groups live in their own files; see cli.h.
#include <iostream>

#include "cli/cli.h"

int main(int argc, char** argv) {
  using tablemere::cli::Cli;
  Cli cli;
  CLI::App app{"Tablemere: an open lakehouse you control.", "tablemere"};
  app.set_version_flag("--version", std::string("tablemere ") + TABLEMERE_VERSION);
  app.require_subcommand(1);
  app.fallthrough();
  app.add_option("--url", cli.url_flag,
                 "API base URL (env TABLEMERE_URL, default http://localhost:8080)");
  app.add_option("--api-key", cli.key_flag, "API key (env TABLEMERE_API_KEY)");
  app.add_flag("--json", cli.json, "force JSON output");
  app.add_flag("--human", cli.human, "force human-readable output");
  app.footer(
      "Output is JSON when piped and a table on a terminal. Anywhere a project_id or a "
      "catalog's warehouse_id is accepted, the name works too.\nExit codes, one meaning "
      "each:\n  0 ok\n  1 invalid input: fix the values, do not retry (also a name matching "
      "several catalogs, and a call this server does not have)\n  2 limit, conflict or "
      "permission: a real quota, a real 409, or a 403 (your key may not do this: ask for "
      "access, or change the plan)\n  3 auth: key missing, wrong, revoked or suspended\n  4 "
      "not found\n  5 retry: the server, the network, or a 429 (wait retry_after_seconds "
      "from the error, then retry)\n  6 usage error: the command line is malformed\nThe "
      "server's error body goes to stderr verbatim. Without a mail server (scripts/start.sh), "
      "codes and links are written to the server's output.");
  tablemere::cli::AddAccountCommands(app, cli);
  tablemere::cli::AddLoginCommand(app, cli);
  tablemere::cli::AddOrgCommands(app, cli);
  tablemere::cli::AddCatalogCommands(app, cli);
  tablemere::cli::AddMcpCommands(app, cli);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : tablemere::cli::kUsageExit;
  }
  if (!cli.action) return tablemere::cli::kUsageExit;
  // Whatever a command meets (an answer of a shape it did not expect, a file system
  // error), the process ends with one line on stderr and exit 1, never an abort.
  try {
    return cli.action();
  } catch (const std::exception& e) {
    return cli.Fail(tablemere::client::LocalFailure("client_error",
                                                    std::string("Unexpected error: ") + e.what()));
  } catch (...) {
    return cli.Fail(tablemere::client::LocalFailure("client_error", "Unexpected error"));
  }
}
