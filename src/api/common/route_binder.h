// One route binder for every adapter: authenticate → parse → call the service → map the
// Error once → render. An adapter gives it its authenticator (what a credential on that
// listener proves) and its one error renderer (the protocol's error format), then binds
// handlers that only parse, call one service method and render a success.
#pragma once

#include <functional>
#include <string>

#include "common/result.h"
#include "http/message.h"
#include "http/router.h"

namespace tablemere::api {

template <typename Principal>
class RouteBinder {
 public:
  using Authenticate = std::function<Result<Principal>(const http::Request&)>;
  using RenderError = std::function<http::Response(const http::Request&, const Error&)>;
  using OpenHandler =
      std::function<Result<http::Response>(http::Request&, const http::PathParams&)>;
  using AuthedHandler = std::function<Result<http::Response>(
      http::Request&, const http::PathParams&, const Principal&)>;

  RouteBinder(Authenticate authenticate, RenderError render_error)
      : authenticate_(std::move(authenticate)), render_error_(std::move(render_error)) {}

  // A route anyone may call.
  void Open(std::string method, std::string pattern, OpenHandler handler) {
    router_.Add(
        std::move(method), std::move(pattern),
        [this, handler = std::move(handler)](http::Request& req, const http::PathParams& params) {
          return Finish(req, handler(req, params));
        });
  }

  // A route whose handler receives the authenticated principal.
  void Authed(std::string method, std::string pattern, AuthedHandler handler) {
    router_.Add(
        std::move(method), std::move(pattern),
        [this, handler = std::move(handler)](http::Request& req, const http::PathParams& params) {
          auto principal = authenticate_(req);
          if (!principal) return render_error_(req, principal.error());
          return Finish(req, handler(req, params, *principal));
        });
  }

  // Routes the request; an unknown path is `not_found`, a known path with another
  // method `method_not_allowed` (405), both through the adapter's error renderer.
  http::Response Dispatch(http::Request& req) const {
    auto match = router_.Find(req.method, req.path);
    if (match.handler) return (*match.handler)(req, match.params);
    Error e{match.path_known ? ErrorCode::kInvalidInput : ErrorCode::kNotFound,
            match.path_known ? "Method " + req.method + " is not allowed on " + req.path
                             : "No route " + req.path,
            {}};
    e.With("code", match.path_known ? "method_not_allowed" : "route_not_found");
    if (match.path_known) e.With("http_status", "405");
    return render_error_(req, e);
  }

 private:
  http::Response Finish(const http::Request& req, Result<http::Response> result) const {
    return result ? std::move(*result) : render_error_(req, result.error());
  }

  Authenticate authenticate_;
  RenderError render_error_;
  http::Router router_;
};

}  // namespace tablemere::api
