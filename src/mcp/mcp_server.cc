// JSON-RPC 2.0 over stdio, one message per line (the MCP stdio transport): initialize
// with version negotiation, ping, tools/list and tools/call; notifications get no answer.
#include "mcp/mcp_server.h"

#include <algorithm>
#include <iostream>

#include "client/settings.h"
#include "mcp/tools.h"

namespace tablemere::mcp {
namespace {

using client::Json;

constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;

// The deepest nesting of arrays and objects a message may have. Real MCP messages stay
// under ten; nlohmann::json copies, compares and dumps values recursively, so a line of
// 100,000 nested arrays would overflow the stack once parsed (see NestingDepth).
constexpr int kMaxDepth = 64;

// The deepest nesting of [ and { in `text`, counting only brackets outside strings (a
// string's escapes skipped, so "\"[" opens nothing). Run on the raw bytes before parsing,
// so a message too deep is refused without ever being built as a json value; the count
// is exact for valid JSON, and invalid JSON fails the parse after anyway. (A parser
// callback could only drop the deep part, answering a message other than the one sent.)
int NestingDepth(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); i++) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        i++;  // the escaped character, whatever it is
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      depth--;
    }
  }
  return deepest;
}

// A request id JSON-RPC allows: a string, a number or null.
bool ValidId(const Json& id) { return id.is_string() || id.is_number() || id.is_null(); }

// The id to answer a message with: its own when it has a valid one, else null.
Json IdOf(const Json& msg) {
  if (!msg.is_object()) return Json();
  auto it = msg.find("id");
  return it != msg.end() && ValidId(*it) ? *it : Json();
}

Json RpcError(const Json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

Json RpcResult(const Json& id, Json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

Json TextResult(const Json& payload, bool is_error) {
  return {{"content", Json::array({{{"type", "text"}, {"text", payload.dump(2)}}})},
          {"isError", is_error}};
}

class Server {
 public:
  explicit Server(const McpOptions& o)
      : api_(client::ResolveUrl(o.url), o.api_key,
             std::string("tablemere-mcp/") + TABLEMERE_VERSION) {}

  // The answer to one message, or null for a notification. Whatever a message holds, the
  // server answers and keeps serving: a type error anywhere is an internal-error reply.
  Json Handle(const Json& msg) {
    try {
      return Dispatch(msg);
    } catch (const std::exception&) {
      return RpcError(IdOf(msg), kInternalError, "Internal error");
    }
  }

 private:
  Json Dispatch(const Json& msg) {
    if (!msg.is_object() || !msg.contains("jsonrpc") || msg["jsonrpc"] != "2.0" ||
        !msg.contains("method") || !msg["method"].is_string()) {
      return RpcError(IdOf(msg), kInvalidRequest, "Not a JSON-RPC 2.0 request");
    }
    if (msg.contains("id") && !ValidId(msg["id"])) {
      return RpcError(Json(), kInvalidRequest, "The id must be a string, a number or null");
    }
    const bool notification = !msg.contains("id");
    const Json id = notification ? Json() : msg["id"];
    const std::string method = msg["method"];
    const Json params = msg.value("params", Json::object());
    if (notification) return Json();  // notifications/initialized, cancelled, …
    if (method == "initialize") return RpcResult(id, Initialize(params));
    if (method == "ping") return RpcResult(id, Json::object());
    if (method == "tools/list") return RpcResult(id, {{"tools", ToolList()}});
    if (method == "tools/call") return Call(id, params);
    return RpcError(id, kMethodNotFound, "Method not found: " + method);
  }

  // The client's version when this server speaks it, else the latest this server speaks
  // (the client then decides whether it can continue).
  static Json Initialize(const Json& params) {
    const auto& versions = SupportedProtocolVersions();
    std::string version = versions.back();
    if (params.is_object() && params.contains("protocolVersion") &&
        params["protocolVersion"].is_string()) {
      std::string asked = params["protocolVersion"];
      for (const auto& v : versions) {
        if (v == asked) version = asked;
      }
    }
    return {{"protocolVersion", version},
            {"capabilities", {{"tools", {{"listChanged", false}}}}},
            {"serverInfo", {{"name", "tablemere"}, {"version", TABLEMERE_VERSION}}},
            {"instructions",
             "Tablemere's control plane as tools: catalogs, connection recipes, short-lived "
             "table credentials, grants, tokens, members, usage, audit, Terms. Query data with "
             "your own engine from the `connection` recipe. Errors carry a code and a remedy."}};
  }

  Json Call(const Json& id, const Json& params) {
    if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
      return RpcError(id, kInvalidParams, "tools/call needs a tool name");
    }
    const std::string name = params["name"];
    Json args = params.value("arguments", Json::object());
    if (args.is_null()) args = Json::object();
    if (!args.is_object()) return RpcError(id, kInvalidParams, "arguments must be an object");
    for (const auto& tool : Tools()) {
      if (tool.name != name) continue;
      client::Outcome outcome = tool.run(api_, args);
      if (outcome) return RpcResult(id, TextResult(*outcome, false));
      Json envelope = outcome.error().envelope;
      if (outcome.error().http_status != 0) envelope["http_status"] = outcome.error().http_status;
      return RpcResult(id, TextResult(envelope, true));
    }
    return RpcError(id, kInvalidParams, "Unknown tool: " + name);
  }

  client::ApiClient api_;
};

}  // namespace

const std::vector<std::string>& SupportedProtocolVersions() {
  static const std::vector<std::string> versions = {"2024-11-05", "2025-03-26", "2025-06-18",
                                                    "2025-11-25", "2026-07-28"};
  return versions;
}

Json ToolList() {
  Json list = Json::array();
  for (const auto& t : Tools()) {
    Json annotations = {{"readOnlyHint", t.read_only}};
    if (!t.read_only) annotations["destructiveHint"] = t.destructive;
    list.push_back({{"name", t.name},
                    {"description", t.description},
                    {"inputSchema", t.input_schema},
                    {"annotations", annotations}});
  }
  return list;
}

int Serve(const McpOptions& options, std::istream& in, std::ostream& out) {
  Server server(options);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Json msg;
    Json answer;
    if (NestingDepth(line) > kMaxDepth) {
      answer = RpcError(Json(), kParseError,
                        "Parse error: nested deeper than " + std::to_string(kMaxDepth) + " levels");
    } else if (msg = Json::parse(line, nullptr, false); msg.is_discarded()) {
      answer = RpcError(Json(), kParseError, "Parse error");
    } else if (msg.is_array()) {
      // A batch (2025-03-26 only): answered as a batch of the requests' answers.
      answer = Json::array();
      for (const auto& m : msg) {
        Json a = server.Handle(m);
        if (!a.is_null()) answer.push_back(a);
      }
      if (answer.empty()) continue;
    } else {
      answer = server.Handle(msg);
      if (answer.is_null()) continue;
    }
    out << answer.dump() << "\n" << std::flush;
  }
  return 0;
}

}  // namespace tablemere::mcp
