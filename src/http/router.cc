#include "http/router.h"

#include "common/strings.h"

namespace tablemere::http {

namespace {
std::vector<std::string> Segments(const std::string& path) {
  std::vector<std::string> parts = Split(path, '/');
  if (!parts.empty() && parts.front().empty()) parts.erase(parts.begin());
  return parts;
}
}  // namespace

void Router::Add(std::string method, std::string pattern, RouteHandler handler) {
  routes_.push_back(Route{std::move(method), Segments(pattern), std::move(handler)});
}

Router::Match Router::Find(const std::string& method, const std::string& raw_path) const {
  Match match;
  std::vector<std::string> parts = Segments(raw_path);
  for (const Route& route : routes_) {
    if (route.segments.size() != parts.size()) continue;
    PathParams params;
    bool ok = true;
    for (size_t i = 0; i < parts.size() && ok; i++) {
      const std::string& seg = route.segments[i];
      if (seg.size() > 2 && seg.front() == '{' && seg.back() == '}') {
        auto decoded = UrlDecode(parts[i]);
        if (!decoded || decoded->empty())
          ok = false;
        else
          params[seg.substr(1, seg.size() - 2)] = *decoded;
      } else if (seg != parts[i]) {
        ok = false;
      }
    }
    if (!ok) continue;
    match.path_known = true;
    if (route.method == method) {
      match.handler = &route.handler;
      match.params = std::move(params);
      return match;
    }
  }
  return match;
}

}  // namespace tablemere::http
