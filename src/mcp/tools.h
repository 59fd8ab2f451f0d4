// The tool table of the MCP server: one entry per tool, with its input schema, its
// annotations and its handler (arguments → one or a few API calls).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "client/outcome.h"

namespace tablemere::mcp {

using client::Json;

struct Tool {
  std::string name;
  std::string description;
  Json input_schema;
  bool read_only = false;
  bool destructive = false;
  std::function<client::Outcome(const client::ApiClient&, const Json& args)> run;
};

const std::vector<Tool>& Tools();

}  // namespace tablemere::mcp
