// One route binder for every path-routed adapter (control API, Iceberg REST, Lakekeeper):
// authenticate → parse → call the service → map the Error once → render. An adapter gives
// it its authenticator (what a credential on that listener proves) and its one error
// renderer (the protocol's error format), then binds handlers that only parse, call one
// service method and render a success.
//
// `Tag` is what the adapter's error renderer needs to know about the route beyond the
// Error itself: the Iceberg adapters map a NotFound to NoSuchTable or NoSuchNamespace by
// the route's subject. The control API has none (std::monostate).
//
// The S3 adapter is the one adapter not bound here: S3 names its operations by method,
// bucket-or-key and query subresource (?uploads, ?tagging, ?delete…) rather than by path
// pattern, so it keeps its own table of matchers (api/s3/s3_api.cc) with the same phases.
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <variant>

#include "common/result.h"
#include "http/message.h"
#include "http/router.h"

namespace tablemere::api {

template <typename Principal, typename Tag = std::monostate>
class RouteBinder {
 public:
  // The principal a request's credential proves. The path parameters are passed because
  // a credential may be valid only for the resource the path names (a warehouse prefix).
  using Authenticate =
      std::function<Result<Principal>(const http::Request&, const http::PathParams&)>;
  using RenderError = std::function<http::Response(const http::Request&, const Error&, Tag)>;
  using OpenHandler =
      std::function<Result<http::Response>(http::Request&, const http::PathParams&)>;
  using AuthedHandler = std::function<Result<http::Response>(
      http::Request&, const http::PathParams&, const Principal&)>;

  RouteBinder(Authenticate authenticate, RenderError render_error)
      : authenticate_(std::move(authenticate)), render_error_(std::move(render_error)) {}

  // A route anyone may call.
  void Open(std::string method, std::string pattern, OpenHandler handler, Tag tag = {}) {
    router_.Add(std::move(method), std::move(pattern),
                [this, tag, handler = std::move(handler)](http::Request& req,
                                                          const http::PathParams& params) {
                  return Finish(req, handler(req, params), tag);
                });
  }

  // A route whose handler receives the authenticated principal. A failed authentication
  // renders through the route's tag like any other failure.
  void Authed(std::string method, std::string pattern, AuthedHandler handler, Tag tag = {}) {
    router_.Add(std::move(method), std::move(pattern),
                [this, tag, handler = std::move(handler)](http::Request& req,
                                                          const http::PathParams& params) {
                  auto principal = authenticate_(req, params);
                  if (!principal) return render_error_(req, principal.error(), tag);
                  return Finish(req, handler(req, params, *principal), tag);
                });
  }

  // Routes the request. An unknown path is kNotFound with detail code `route_not_found`,
  // a known path with another method kInvalidInput with code `method_not_allowed` and
  // http_status 405; an exception escaping a handler is kInternal. All three render
  // through the adapter's error renderer, so every answer is in the protocol's format.
  // A HEAD answer never carries a body.
  http::Response Dispatch(http::Request& req) const {
    http::Response resp = Route(req);
    if (req.method == "HEAD") {
      resp.body.clear();
      resp.body_shared.reset();
      resp.body_tail.clear();
    }
    return resp;
  }

 private:
  http::Response Route(http::Request& req) const {
    auto match = router_.Find(req.method, req.path);
    if (match.handler) {
      try {
        return (*match.handler)(req, match.params);
      } catch (const std::exception&) {
        return render_error_(req, Error{ErrorCode::kInternal, "internal error", {}}, Tag{});
      }
    }
    Error e{match.path_known ? ErrorCode::kInvalidInput : ErrorCode::kNotFound,
            match.path_known ? "Method " + req.method + " is not allowed on " + req.path
                             : "No route for " + req.method + " " + req.path,
            {}};
    e.With("code", match.path_known ? "method_not_allowed" : "route_not_found");
    if (match.path_known) e.With("http_status", "405");
    return render_error_(req, e, Tag{});
  }

  http::Response Finish(const http::Request& req, Result<http::Response> result,
                        const Tag& tag) const {
    return result ? std::move(*result) : render_error_(req, result.error(), tag);
  }

  Authenticate authenticate_;
  RenderError render_error_;
  http::Router router_;
};

}  // namespace tablemere::api
