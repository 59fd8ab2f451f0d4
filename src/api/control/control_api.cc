// The control API: the caller's API key authenticates it; every resource binds its
// routes from its own file through the one binder (routes.h).
#include "api/control/control_api.h"

#include "api/control/routes.h"
#include "common/strings.h"

namespace tablemere::api::control {

struct ControlApi::Impl {
  Context ctx;
  Binder binder;

  Impl(ControlServices s, ControlApiOptions o)
      : ctx{s.accounts, s.tables,      s.verification, s.devices,
            s.sessions, s.maintenance, std::move(o)},
        binder([this](const Request& req, const PathParams&) { return Authenticate(req); },
               [](const Request& req, const Error& e, std::monostate) {
                 return ErrorResponse(req, e);
               }) {
    BindHealth(binder, ctx);
    BindSignup(binder, ctx);
    BindConnection(binder, ctx);
    BindOrgs(binder, ctx);
    BindAgents(binder, ctx);
    BindAudit(binder, ctx);
    BindApiKeys(binder, ctx);
    BindProjects(binder, ctx);
    BindWarehouses(binder, ctx);
    BindGrants(binder, ctx);
    BindMembers(binder, ctx);
    BindTerms(binder, ctx);
    BindTables(binder, ctx);
    BindVerification(binder, ctx);
    BindInternal(binder, ctx);
    BindIdentity(binder, ctx);
    BindDevices(binder, ctx);
    BindAuth(binder, ctx);
    BindPublish(binder, ctx);
    BindOnboard(binder, ctx);
    BindUsage(binder, ctx);
  }

  Result<accounts::Caller> Authenticate(const Request& req) {
    auto auth = req.headers.Get("Authorization");
    if (!auth || !StartsWith(ToLower(*auth), "bearer ")) {
      return Fail(
          Error{ErrorCode::kUnauthenticated, "Send Authorization: Bearer <API key> (al_live_…)", {}}
              .With("code", "invalid_api_key")
              .With("remedy", "tablemere signup, or tablemere login, gives you a key"));
    }
    return ctx.accounts.auth().Authenticate(Trim(auth->substr(7)), req.remote_address);
  }
};

ControlApi::ControlApi(ControlServices services, ControlApiOptions options)
    : impl_(std::make_unique<Impl>(services, std::move(options))) {}
ControlApi::~ControlApi() = default;
http::Response ControlApi::Handle(http::Request& request) {
  // Audit events this request records carry the caller's address.
  auto noted =
      impl_->ctx.accounts.request_origins().Note(request.request_id, request.remote_address);
  return impl_->binder.Dispatch(request);
}

}  // namespace tablemere::api::control
