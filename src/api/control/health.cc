// GET /healthz (the state database and the catalog answer) and GET /livez (the process
// serves HTTP; touches nothing: also the benchmarks' trivial-endpoint reference).
#include "api/control/routes.h"
#include "identity/signing_keys.h"

namespace tablemere::api::control {

void BindHealth(Binder& b, Context& ctx) {
  b.Open("GET", "/livez", [](Request&, const PathParams&) -> Result<Response> {
    return Response::Json(200, R"({"ok":true})");
  });
  b.Open("GET", "/healthz", [&ctx](Request&, const PathParams&) -> Result<Response> {
    bool state = ctx.options.state_ok ? ctx.options.state_ok() : true;
    bool catalog = ctx.options.catalog_ok ? ctx.options.catalog_ok() : true;
    Json body = {{"ok", state && catalog},
                 {"state_ok", state},
                 {"catalog_ok", catalog},
                 {"issuer", ctx.accounts.urls().api},
                 {"kid", ctx.accounts.auth().signing_keys()
                             ? Json(ctx.accounts.auth().signing_keys()->CurrentKid())
                             : Json(nullptr)}};
    return Response::Json(state && catalog ? 200 : 503, body.dump());
  });
}

}  // namespace tablemere::api::control
