// Accounts: the control plane's services, one per resource, wired together. Each names
// what it uses in its constructor; this class owns them and the values they share, and
// hands each out to the transport layer.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accounts/access_service.h"
#include "accounts/agent_service.h"
#include "accounts/api_key_service.h"
#include "accounts/audit_recorder.h"
#include "accounts/audit_trail.h"
#include "accounts/authenticator.h"
#include "accounts/caller.h"
#include "accounts/credentials.h"
#include "accounts/errors.h"
#include "accounts/grant_service.h"
#include "accounts/idempotency_records.h"
#include "accounts/limits.h"
#include "accounts/operator_service.h"
#include "accounts/org_service.h"
#include "accounts/project_service.h"
#include "accounts/recipes.h"
#include "accounts/request_origins.h"
#include "accounts/signup_service.h"
#include "accounts/terms_service.h"
#include "accounts/usage_service.h"
#include "accounts/warehouse_service.h"
#include "common/clock.h"
#include "common/result.h"
#include "metastore/metastore.h"
#include "objectstore/registered_store.h"

namespace tablemere::accounts {

class AccountService {
 public:
  AccountService(metastore::Metastore& meta, objectstore::RegisteredStore& objects,
                 const Clock& clock, Random& random, const IdentitySecrets& secrets,
                 PublicUrls urls, bool unverified_signup_allowed,
                 identity::SigningKeys* signing_keys = nullptr);

  // Signup, accounts, onboarding and handle checks.
  SignupService& signup() { return signup_; }
  // Authenticating callers and issuing their access tokens.
  Authenticator& auth() { return auth_; }
  // Organisations, warehouses and the caller's level on them.
  AccessService& access() { return access_; }
  // Organisations: their domains, members and invitations.
  OrgService& orgs() { return orgs_; }
  // Agents (tokens) of an organisation.
  AgentService& agents() { return agents_; }
  // API keys: minting, and a caller's own (and the operator's revocation).
  ApiKeyService& api_keys() { return api_keys_; }
  // Projects, and the warehouses of one with the caller's level on each.
  ProjectService& projects() { return projects_; }
  // Creating, deleting, publishing and rotating warehouses.
  WarehouseService& warehouses() { return warehouses_; }
  // Grants on a warehouse.
  GrantService& grants() { return grants_; }
  // The connection recipes engines run, and the warehouse identities' secrets.
  Recipes& recipes() { return recipes_; }
  // Idempotency-Key records of the create routes.
  IdempotencyRecords& idempotency() { return idempotency_; }
  // Storage usage, metering and the storage quota.
  UsageService& usage() { return usage_; }
  // The Terms and deleting one's own account.
  TermsService& terms() { return terms_; }
  // Suspending principals (the operator's internal routes).
  OperatorService& operator_actions() { return operator_; }
  // Recording audit events (failures to record are reported: an action must not silently
  // go unaudited), and reading them as a caller may.
  AuditRecorder& audit() { return audit_; }
  AuditTrail& audit_trail() { return audit_trail_; }
  // The addresses of the requests being served, which audit events record (the control
  // API notes each request's while serving it).
  RequestOrigins& request_origins() { return request_origins_; }

  const PublicUrls& urls() const { return urls_; }
  const Limits& limits() const { return limits_; }
  const Clock& clock() const { return clock_; }

 private:
  metastore::Metastore& meta_;
  objectstore::RegisteredStore& objects_;
  const Clock& clock_;
  Random& random_;
  const IdentitySecrets& secrets_;
  PublicUrls urls_;
  Limits limits_;
  RequestOrigins request_origins_;
  AccessService access_{meta_};
  AuditRecorder audit_{meta_, clock_, request_origins_};
  AuditTrail audit_trail_{meta_, access_};
  OrgService orgs_{meta_, clock_, random_, audit_, access_};
  UsageService usage_{meta_, objects_, clock_, limits_, audit_};
  TermsService terms_{meta_, clock_, audit_};
  ApiKeyService api_keys_{meta_, clock_, random_, audit_};
  AgentService agents_{meta_, clock_, random_, audit_, access_, api_keys_};
  IdempotencyRecords idempotency_{meta_, clock_};
  ProjectService projects_{meta_, clock_, random_, limits_, audit_, access_, idempotency_};
  WarehouseService warehouses_{meta_,  objects_, clock_, random_,   limits_,
                               audit_, access_,  usage_, projects_, idempotency_};
  GrantService grants_{meta_, clock_, audit_, access_, orgs_};
  Recipes recipes_{secrets_, urls_};
  OperatorService operator_{meta_, audit_};
  SignupService signup_;
  Authenticator auth_;
};

}  // namespace tablemere::accounts
