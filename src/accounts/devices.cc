#include "accounts/devices.h"

#include <nlohmann/json.hpp>

#include "accounts/errors.h"
#include "common/crypto.h"
#include "common/strings.h"

namespace tablemere::accounts {
namespace {

using Json = nlohmann::json;
using metastore::Level;
using metastore::PrincipalKind;

// RFC 8628's usual figures: codes live 15 minutes, the CLI polls every 5 s.
constexpr int64_t kDeviceTtlMs = 15 * 60 * 1000;
constexpr int kIntervalS = 5;
constexpr int kSlowDownStepS = 5;
// Starting device logins costs nothing to the caller: 60 an hour per address.
constexpr int kStartsPerHour = 60;
constexpr int64_t kHourMs = 3600 * 1000;
// User codes: 8 letters from 20 consonants (no vowels, so no words; no 0/O, 1/I/L, 5/S
// or 2/Z confusions), about 2^34.6 codes, against the 15 minutes a code lives.
constexpr char kAlphabet[] = "BCDFGHJKLMNPQRTVWXYZ";
constexpr size_t kAlphabetSize = sizeof(kAlphabet) - 1;

Error DeviceNotFound() {
  return Coded(ErrorCode::kNotFound, "device_code_not_found",
               "No pending login has this code (mistyped, expired or already decided)")
      .With("remedy", "Run tablemere login again for a new code.");
}

std::string NewUserCode(Random& random) {
  std::string out;
  while (out.size() < 8) {
    unsigned char b = static_cast<unsigned char>(random.Bytes(1)[0]);
    // Reject the top of the byte range so every letter is equally likely.
    if (b >= 256 - (256 % kAlphabetSize)) continue;
    out.push_back(kAlphabet[b % kAlphabetSize]);
  }
  return out.substr(0, 4) + "-" + out.substr(4);
}

// Accepts the code as people type it: any case, with or without the dash or spaces.
std::optional<std::string> NormaliseUserCode(const std::string& typed) {
  std::string letters;
  for (char c : typed) {
    if (c == '-' || c == ' ') continue;
    char u = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (std::string_view(kAlphabet).find(u) == std::string_view::npos) return std::nullopt;
    letters.push_back(u);
  }
  if (letters.size() != 8) return std::nullopt;
  return letters.substr(0, 4) + "-" + letters.substr(4);
}

std::string HashDeviceCode(const std::string& code) {
  return crypto::HexEncode(crypto::Sha256(code));
}

// A compare-and-set of a grant's status: losing the race is `lost`; any other failure
// (the database) stays what it is.
Result<void> Lost(Result<void> updated, Error lost) {
  if (!updated && updated.error().code == ErrorCode::kConflict) return Fail(std::move(lost));
  return updated;
}

Result<void> HumanOnly(const Caller& caller) {
  if (caller.principal.kind == PrincipalKind::kHuman) return {};
  return Fail(Coded(ErrorCode::kPermissionDenied, "forbidden",
                    "Only a person approves a login: an agent approving would hand out a key of "
                    "its own"));
}

}  // namespace

Result<DeviceStarted> DeviceFlow::Start(const DeviceRequest& r) {
  auto level = r.requested_level.empty() ? std::optional(Level::kWrite)
                                         : metastore::ParseLevel(r.requested_level);
  if (!level || *level == Level::kNone) {
    return Fail(Coded(ErrorCode::kInvalidInput, "invalid_value", "requested_level is read or write")
                    .With("field", "requested_level"));
  }
  const int64_t now = clock_.NowMillis();
  TM_ASSIGN(auto decision,
            meta_.verification().TakeRate("device:" + r.address, kStartsPerHour, kHourMs, now));
  if (!decision.allowed) {
    return Fail(
        Coded(ErrorCode::kRateLimited, "rate_limited", "Too many logins started; wait.")
            .With("retry_after_seconds", std::to_string((decision.retry_after_ms + 999) / 1000)));
  }
  DeviceStarted out;
  out.device_code = "dc_" + crypto::Base64UrlEncode(random_.Bytes(32));
  std::string hostname = r.hostname.empty() ? "unknown-host" : r.hostname;
  out.grant = metastore::DeviceGrant{HashDeviceCode(out.device_code),
                                     "",
                                     r.client.empty() ? "cli" : r.client,
                                     hostname,
                                     r.client_name.empty() ? hostname : r.client_name,
                                     *level,
                                     Json(r.warehouse_ids).dump(),
                                     now,
                                     now + kDeviceTtlMs,
                                     kIntervalS,
                                     0,
                                     "pending",
                                     PrincipalId(),
                                     PrincipalId()};
  // A user code collides rarely; draw again then.
  for (int attempt = 0;; attempt++) {
    out.grant.user_code = NewUserCode(random_);
    auto created = meta_.devices().CreateDevice(out.grant);
    if (created) break;
    if (created.error().code != ErrorCode::kAlreadyExists || attempt == 8) {
      return Fail(created.error());
    }
  }
  return out;
}

Result<metastore::DeviceGrant> DeviceFlow::OpenGrant(const std::string& typed) {
  auto code = NormaliseUserCode(typed);
  if (!code) return Fail(DeviceNotFound());
  auto grant = meta_.devices().DeviceByUserCode(*code);
  if (!grant) {
    if (grant.error().code == ErrorCode::kNotFound) return Fail(DeviceNotFound());
    return Fail(grant.error());
  }
  if (grant->status != "pending" || grant->expires_ms <= clock_.NowMillis()) {
    return Fail(DeviceNotFound());
  }
  return *grant;
}

Result<DevicePending> DeviceFlow::Plan(const Caller& caller, const metastore::DeviceGrant& grant,
                                       std::optional<Level> level,
                                       const std::vector<std::string>& chosen) {
  TM_TRY(HumanOnly(caller));
  DevicePending plan{grant, {}, grant.requested_level, {}};
  // Lowering only: "read" may replace "write", never the reverse.
  if (level && metastore::AtLeast(grant.requested_level, *level)) plan.level = *level;
  std::vector<std::string> wanted = chosen;
  if (wanted.empty()) {
    Json asked = Json::parse(grant.warehouse_ids_json, nullptr, false);
    if (asked.is_array()) {
      for (const auto& w : asked) {
        if (w.is_string()) wanted.push_back(w.get<std::string>());
      }
    }
  }
  // The organisation: the one the warehouses belong to, or the approver's only one.
  TM_ASSIGN(auto orgs, access_.Orgs(caller));
  if (wanted.empty()) {
    if (orgs.size() != 1) {
      return Fail(Coded(ErrorCode::kConflict, "org_required",
                        "You belong to several organisations: choose the warehouses")
                      .With("remedy", "Send warehouse_ids with the approval."));
    }
    TM_ASSIGN(auto def, access_.DefaultWarehouse(caller));
    wanted.push_back(def.warehouse.id);
  }
  for (const auto& w : wanted) {
    auto mine = access_.Access(caller, w, /*include_unheld=*/true);
    if (!mine) return Fail(mine.error());
    if (mine->level == Level::kNone) {
      return Fail(Coded(ErrorCode::kPermissionDenied, "forbidden",
                        "You hold nothing on warehouse " + mine->warehouse.name)
                      .With("remedy", "Approve only warehouses you hold read or write on."));
    }
    if (!plan.org.id.empty() && plan.org.id != mine->warehouse.org_id) {
      return Fail(Coded(ErrorCode::kConflict, "org_required",
                        "The warehouses belong to different organisations"));
    }
    if (plan.org.id.empty()) {
      for (const auto& [o, role] : orgs) {
        if (o.id == mine->warehouse.org_id) plan.org = o;
      }
    }
    DeviceWarehouse dw{mine->warehouse, plan.level, *mine, false};
    if (!metastore::AtLeast(mine->level, plan.level)) {
      dw.level = mine->level;  // capped by the approver's own level
      dw.capped = true;
    }
    plan.warehouses.push_back(std::move(dw));
  }
  return plan;
}

Result<DevicePending> DeviceFlow::Pending(const Caller& caller, const std::string& user_code) {
  TM_TRY(HumanOnly(caller));
  TM_ASSIGN(auto grant, OpenGrant(user_code));
  return Plan(caller, grant, std::nullopt, {});
}

Result<DeviceApproved> DeviceFlow::Approve(const Caller& caller, const DeviceApproval& approval,
                                           const std::string& request_id) {
  TM_TRY(HumanOnly(caller));
  TM_ASSIGN(auto grant, OpenGrant(approval.user_code));
  if (approval.deny) {
    metastore::DeviceGrant next = grant;
    next.status = "denied";
    next.approved_by = caller.principal.id;
    TM_TRY(Lost(meta_.devices().UpdateDevice(next, "pending"), DeviceNotFound()));
    return DeviceApproved{false, next, std::nullopt, {}};
  }
  std::optional<Level> level;
  if (approval.level) {
    level = metastore::ParseLevel(*approval.level);
    if (!level || *level == Level::kNone) {
      return Fail(Coded(ErrorCode::kInvalidInput, "invalid_value", "level is read or write")
                      .With("field", "level"));
    }
  }
  TM_ASSIGN(auto plan, Plan(caller, grant, level, approval.warehouse_ids));
  // ---- the agent: member role, exactly the approved (capped) grants, its key at the poll
  std::vector<AgentGrantRequest> grants;
  for (const auto& w : plan.warehouses) {
    grants.push_back({w.warehouse.id, metastore::Name(w.level)});
  }
  // The agent and the grant's decision in one transaction: an approval that loses to a
  // concurrent decision (a second tab, a denial) leaves no agent behind.
  metastore::DeviceGrant next = grant;
  next.status = "approved";
  next.approved_by = caller.principal.id;
  const auto decide = [&](metastore::Stores& stores, const AgentResult& made) -> Result<void> {
    next.agent_id = made.agent.id;
    TM_TRY(Lost(stores.devices().UpdateDevice(next, "pending"), DeviceNotFound()));
    return audit_.RecordIn(
        stores,
        {0, 0, caller.principal.id, plan.org.id, "device.approve", "agent", made.agent.id,
         request_id, Json{{"user_code", grant.user_code}, {"hostname", grant.hostname}}.dump()});
  };
  std::string name = grant.client_name;
  std::optional<AgentResult> agent;
  for (int suffix = 1; !agent; suffix++) {
    auto created = agents_.CreateAgent(caller, plan.org.id, name, "member", grants,
                                       /*with_key=*/false, decide);
    if (created) {
      agent = std::move(*created);
    } else if (created.error().code == ErrorCode::kAlreadyExists && suffix < 50) {
      name = grant.client_name + "-" + std::to_string(suffix + 1);
    } else {
      return Fail(created.error());
    }
  }
  return DeviceApproved{true, next, std::move(agent), plan.org};
}

Result<DeviceToken> DeviceFlow::Poll(const std::string& device_code) {
  auto answer = [](const char* code, const std::string& message) {
    return Fail(Coded(ErrorCode::kInvalidInput, code, message));
  };
  auto grant = meta_.devices().DeviceByCodeHash(HashDeviceCode(device_code));
  if (!grant) {
    if (grant.error().code != ErrorCode::kNotFound) return Fail(grant.error());
    return answer("invalid_grant", "Unknown device code");
  }
  const int64_t now = clock_.NowMillis();
  if (grant->status == "consumed") return answer("invalid_grant", "This login was completed");
  if (grant->status == "denied") return answer("access_denied", "The login was refused");
  if (grant->expires_ms <= now) return answer("expired_token", "The code expired; log in again");
  if (grant->status == "pending") {
    metastore::DeviceGrant next = *grant;
    const bool too_fast =
        grant->last_poll_ms != 0 && now - grant->last_poll_ms < int64_t{grant->interval_s} * 1000;
    if (too_fast) next.interval_s += kSlowDownStepS;
    next.last_poll_ms = now;
    // A concurrent decision moves the grant on; the next poll reads it.
    auto polled = meta_.devices().UpdateDevice(next, "pending");
    if (!polled && polled.error().code != ErrorCode::kConflict) return Fail(polled.error());
    if (too_fast) {
      return Fail(Coded(ErrorCode::kInvalidInput, "slow_down", "Polling too fast")
                      .With("interval", std::to_string(next.interval_s)));
    }
    return answer("authorization_pending", "Waiting for a person to approve the code");
  }
  // ---- approved: the agent's key, once
  TM_ASSIGN(auto agent, meta_.principals().FindPrincipal(grant->agent_id));
  DeviceToken out{api_keys_.Mint(agent.id, "cli " + grant->hostname), {}};
  metastore::DeviceGrant next = *grant;
  next.status = "consumed";
  TM_TRY(metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    TM_TRY(Lost(txn.devices().UpdateDevice(next, "approved"),
                Coded(ErrorCode::kInvalidInput, "invalid_grant", "This login was completed")));
    return txn.principals().CreateApiKey(out.key.record);
  }));
  TM_ASSIGN(out.agent.agent, meta_.principals().FindPrincipal(agent.id));
  TM_ASSIGN(auto grants, meta_.warehouses().GrantsOf(agent.id));
  for (const auto& g : grants) {
    TM_ASSIGN(auto w, meta_.warehouses().FindWarehouse(g.warehouse_id));
    out.agent.grants.emplace_back(g, w.name);
  }
  auto creator = meta_.principals().FindPrincipal(agent.created_by);
  if (creator) out.agent.created_by_display = creator->display_name;
  return out;
}

}  // namespace tablemere::accounts
