// GET /v1/audit: who did what, the caller's own or (admins) the organisation's.
#include <ctime>

#include "api/control/routes.h"
#include "common/strings.h"

namespace tablemere::api::control {
namespace {

// Events are kept 400 days (API reference).
constexpr int kRetentionDays = 400;

// "24h", "7d", "30m" or an ISO-8601 instant → epoch millis; 0 when absent.
Result<int64_t> ParseSince(const std::string& since, int64_t now) {
  if (since.empty()) return int64_t{0};
  char unit = since.back();
  auto n = ParseInt(since.substr(0, since.size() - 1));
  if (n && *n >= 0 && (unit == 'm' || unit == 'h' || unit == 'd')) {
    int64_t ms = *n * (unit == 'm' ? 60'000 : unit == 'h' ? 3'600'000 : 86'400'000);
    return now - ms;
  }
  std::tm tm{};
  if (strptime(since.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) != nullptr) {
    return static_cast<int64_t>(timegm(&tm)) * 1000;
  }
  return Fail(
      Error{ErrorCode::kInvalidInput, "since must be like 24h, 7d, 30m or an ISO-8601 time", {}}
          .With("code", "invalid_value")
          .With("field", "since"));
}

}  // namespace

void BindAudit(Binder& b, Context& ctx) {
  b.Authed(
      "GET", "/v1/audit",
      [&ctx](Request& req, const PathParams&, const accounts::Caller& caller) -> Result<Response> {
        auto q = QueryMap(req);
        int limit = 100;
        if (q.count("limit")) {
          auto n = ParseInt(q["limit"]);
          if (!n || *n < 1 || *n > 1000) {
            return Fail(Error{ErrorCode::kInvalidInput, "limit must be 1..1000", {}}
                            .With("code", "invalid_value")
                            .With("field", "limit"));
          }
          limit = static_cast<int>(*n);
        }
        int64_t now = SystemClock().NowMillis();
        TM_ASSIGN(int64_t since, ParseSince(q["since"], now));
        since = std::max(since, now - int64_t{kRetentionDays} * 86'400'000);
        TM_ASSIGN(auto events, ctx.accounts.audit_trail().Events(caller, q["org_id"], q["action"],
                                                                 since, limit));
        Json list = Json::array();
        for (const auto& e : events) {
          Json detail = Json::parse(e.detail_json, nullptr, false);
          list.push_back({{"id", e.id},
                          {"ts", FormatIso8601(e.at_ms)},
                          {"principal_id", e.principal_id},
                          {"org_id", e.org_id},
                          {"action", e.action},
                          {"target_type", e.target_type},
                          {"target_id", e.target_id},
                          {"ip", e.ip.empty() ? Json(nullptr) : Json(e.ip)},
                          {"request_id", e.request_id},
                          {"detail", detail.is_object() ? detail : Json::object()}});
        }
        auto or_null = [&](const char* k) { return q[k].empty() ? Json(nullptr) : Json(q[k]); };
        Json out = {{"events", list},
                    {"count", list.size()},
                    {"limit", limit},
                    {"scope", q["org_id"].empty() ? "own" : "organization"},
                    {"org_id", or_null("org_id")},
                    {"since", or_null("since")},
                    {"action", or_null("action")},
                    {"retention_days", kRetentionDays}};
        return Response::Json(200, out.dump());
      });
}

}  // namespace tablemere::api::control
