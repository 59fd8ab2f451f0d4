// The CLI's shared state and output rules. Each command group registers its subcommands
// from its own file (account_commands.cc, org_commands.cc, catalog_commands.cc,
// login_command.cc, mcp_commands.cc); a subcommand's callback stores the action to run,
// and main runs it after the whole command line parsed, so a malformed line (exit 6)
// never sends anything.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "client/api_client.h"
#include "client/outcome.h"

namespace tablemere::cli {

using client::Json;

// A human table: the rows under `list_key` of the answer ("" = the answer is the list),
// one column per field. A column's key may be "a.b" for a nested field.
struct Column {
  std::string header, key;
};
struct Table {
  std::string list_key;
  std::vector<Column> columns;
};

class Cli {
 public:
  // Global flags, accepted before or after the subcommand.
  std::string url_flag, key_flag;
  bool json = false, human = false;
  // What the chosen subcommand does; returns the exit code.
  std::function<int()> action;

  std::string Url() const;
  client::ApiClient Api() const;
  // Human output: --human, or a terminal on stdout without --json.
  bool Human() const;

  // Prints a successful answer (JSON, or the table / a key-value listing) and returns 0;
  // prints a failure's envelope verbatim to stderr and returns its exit class.
  int Show(const client::Outcome& outcome, const Table& table = {}) const;
  int Fail(const client::Failure& failure) const;
  // Prints `answer` as Show does, for answers assembled here.
  void Print(const Json& answer, const Table& table = {}) const;
  // A message for people: stdout in human mode, stderr otherwise (stdout stays JSON).
  void Say(const std::string& line) const;
};

// The exit code of a malformed command line.
inline constexpr int kUsageExit = static_cast<int>(client::ExitClass::kUsage);

void AddAccountCommands(CLI::App& app, Cli& cli);
void AddOrgCommands(CLI::App& app, Cli& cli);
void AddCatalogCommands(CLI::App& app, Cli& cli);
void AddLoginCommand(CLI::App& app, Cli& cli);
void AddMcpCommands(CLI::App& app, Cli& cli);

// Adds --idempotency-key to a mutating command.
CLI::Option* AddIdempotencyKey(CLI::App* cmd, std::string& key);

// ---- the catalog commands' shared arguments (catalog_commands.cc, publish_commands.cc)
extern const char* const kCatalogHelp;
// Adds the required --catalog (alias --warehouse): an id or a name.
CLI::Option* AddCatalogOption(CLI::App* cmd, std::string& value);
// Runs `fn` with the catalog resolved to its warehouse JSON ({warehouse_id, name, …}) and
// shows its outcome.
int WithCatalog(const Cli& cli, const std::string& catalog,
                const std::function<client::Outcome(const client::ApiClient&, const Json&)>& fn,
                const Table& table = {});
// "/v1/warehouses/{warehouse_id}" + tail.
std::string WarehousePath(const Json& w, const std::string& tail = "");
// catalog publish, unpublish and public-url, under the catalog group.
void AddPublishCommands(CLI::App* group, Cli& cli);

}  // namespace tablemere::cli
