// The CLI's device login (RFC 8628, POST /v1/auth/device…): the CLI asks for a code pair,
// a person holding the user code approves it with its own credential (or denies it), and
// the CLI's polls then receive the key of a NEW agent holding exactly the approved grants,
// capped by the approver's own level on each warehouse. The key is minted at that poll, so
// no secret waits in the database.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "accounts/access_service.h"
#include "accounts/agent_service.h"
#include "accounts/api_key_service.h"
#include "accounts/audit_recorder.h"
#include "accounts/caller.h"
#include "common/clock.h"
#include "metastore/metastore.h"

namespace tablemere::accounts {

struct DeviceRequest {
  std::string client = "cli";
  std::string hostname;
  std::string client_name;
  std::string requested_level;  // "" = write
  std::vector<std::string> warehouse_ids;
  std::string address;  // the caller's, for the rate limit
};

struct DeviceStarted {
  std::string device_code;  // shown to the CLI only
  metastore::DeviceGrant grant;
};

struct DeviceWarehouse {
  metastore::Warehouse warehouse;
  metastore::Level level = metastore::Level::kNone;  // what the agent would hold
  WarehouseAccess mine;                              // the approver's
  bool capped = false;
};

struct DevicePending {
  metastore::DeviceGrant grant;
  metastore::Organization org;
  metastore::Level level = metastore::Level::kNone;
  std::vector<DeviceWarehouse> warehouses;
};

struct DeviceApproval {
  std::string user_code;
  std::optional<std::string> level;  // lowers the requested level, never raises it
  std::vector<std::string> warehouse_ids;
  bool deny = false;
};

struct DeviceApproved {
  bool approved = false;
  metastore::DeviceGrant grant;
  std::optional<AgentResult> agent;
  metastore::Organization org;
};

struct DeviceToken {
  IssuedApiKey key;
  AgentView agent;
};

class DeviceFlow {
 public:
  DeviceFlow(metastore::Metastore& meta, const Clock& clock, Random& random, AuditRecorder& audit,
             AccessService& access, AgentService& agents, ApiKeyService& api_keys)
      : meta_(meta),
        clock_(clock),
        random_(random),
        audit_(audit),
        access_(access),
        agents_(agents),
        api_keys_(api_keys) {}

  // Errors: kInvalidInput (invalid_value), kRateLimited (60 an hour per caller address).
  Result<DeviceStarted> Start(const DeviceRequest& request);
  // Humans only. Errors: kNotFound (device_code_not_found), kPermissionDenied (forbidden:
  // an agent), kConflict (org_required).
  Result<DevicePending> Pending(const Caller& caller, const std::string& user_code);
  // Errors as Pending, and kNotFound (warehouse_not_found), kPermissionDenied (forbidden:
  // a warehouse the approver holds nothing on).
  Result<DeviceApproved> Approve(const Caller& caller, const DeviceApproval& approval,
                                 const std::string& request_id);
  // The RFC's answers travel as error codes (kInvalidInput): authorization_pending,
  // slow_down (the interval grows by 5 s), expired_token, access_denied, invalid_grant.
  Result<DeviceToken> Poll(const std::string& device_code);

 private:
  Result<metastore::DeviceGrant> OpenGrant(const std::string& user_code);
  // The approver's organisation for this grant and the warehouses it would hold.
  Result<DevicePending> Plan(const Caller& caller, const metastore::DeviceGrant& grant,
                             std::optional<metastore::Level> level,
                             const std::vector<std::string>& warehouse_ids);

  metastore::Metastore& meta_;
  const Clock& clock_;
  Random& random_;
  AuditRecorder& audit_;
  AccessService& access_;
  AgentService& agents_;
  ApiKeyService& api_keys_;
};

}  // namespace tablemere::accounts
