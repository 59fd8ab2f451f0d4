// The Model Context Protocol server of `tablemere mcp run`: JSON-RPC 2.0 over stdio
// (newline-delimited messages), serving the control API as tools. Each call is one or a
// few requests to the API made now with the key from the environment; nothing is cached
// and the key never appears in a result, a log or an error.
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

namespace tablemere::mcp {

struct McpOptions {
  std::string url;      // the API; "" = TABLEMERE_URL or the default
  std::string api_key;  // as `tablemere mcp run` resolved it: the flag, the environment,
                        // the key file, or the credentials file's key for the URL
                        // ("" = every tool answers missing_credential)
};

// Serves requests from `in` until it closes; returns the process exit code.
int Serve(const McpOptions& options, std::istream& in, std::ostream& out);

// Every tool as tools/list gives it: [{name, description, inputSchema, annotations}].
nlohmann::json ToolList();

// The protocol revisions this server speaks, oldest first.
const std::vector<std::string>& SupportedProtocolVersions();

}  // namespace tablemere::mcp
