// A route table: (method, path pattern) → handler, with {name} segments captured.
// Patterns match raw path segments; captured values are percent-decoded.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "http/message.h"

namespace tablemere::http {

using PathParams = std::map<std::string, std::string>;
using RouteHandler = std::function<Response(Request&, const PathParams&)>;

class Router {
 public:
  // `pattern` like "/v1/{prefix}/namespaces/{namespace}". Later routes do not shadow
  // earlier ones: the first match in insertion order wins.
  void Add(std::string method, std::string pattern, RouteHandler handler);

  struct Match {
    const RouteHandler* handler = nullptr;
    PathParams params;
    bool path_known = false;  // some route matched the path but not the method
  };
  Match Find(const std::string& method, const std::string& raw_path) const;

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    RouteHandler handler;
  };
  std::vector<Route> routes_;
};

}  // namespace tablemere::http
