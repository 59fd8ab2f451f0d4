// Organisations (GET/PATCH /v1/orgs…), their claimed email domains, their members and
// invitations (orgs.cc).
#pragma once

#include <string>
#include <vector>

#include "accounts/access_service.h"
#include "accounts/audit_recorder.h"
#include "accounts/caller.h"
#include "common/clock.h"
#include "common/result.h"
#include "metastore/metastore.h"

namespace tablemere::accounts {

struct OrgView {
  metastore::Organization org;
  metastore::Role role = metastore::Role::kMember;  // the caller's
  std::vector<metastore::OrgDomain> domains;
  int members = 0;
};

struct OrgUpdate {
  std::optional<std::string> name;
  std::optional<bool> domain_join;
};

struct MemberView {
  metastore::Membership membership;
  metastore::Principal principal;
};

struct RemovedMember {
  OrgId org_id;
  PrincipalId principal_id;
  bool left = false;  // the caller removed itself
};

struct IssuedInvitation {
  metastore::Invitation invitation;
  std::string token;  // shown once
};

// Every call that names an organisation answers kNotFound (org_not_found) when it is not
// one of the caller's, and the admin-only ones kPermissionDenied (insufficient_role).
class OrgService {
 public:
  OrgService(metastore::Metastore& meta, const Clock& clock, Random& random, AuditRecorder& audit,
             AccessService& access)
      : meta_(meta), clock_(clock), random_(random), audit_(audit), access_(access) {}

  Result<std::vector<OrgView>> OrgViews(const Caller& caller);
  // Errors: kInvalidInput (no_domain, invalid_value name).
  Result<OrgView> UpdateOrg(const Caller& caller, const std::string& org, const OrgUpdate& update,
                            const std::string& request_id);
  // Errors: kInvalidInput (public_mail_domain), kPermissionDenied (domain_not_yours),
  // kConflict (domain_claimed).
  Result<OrgView> ClaimDomain(const Caller& caller, const std::string& org,
                              const std::string& domain, const std::string& request_id);
  // Errors: kNotFound (domain_not_found).
  Result<OrgView> ReleaseDomain(const Caller& caller, const std::string& org,
                                const std::string& domain, const std::string& request_id);
  Result<std::vector<MemberView>> Members(const Caller& caller, const std::string& org);
  // Errors: kNotFound (member_not_found), kConflict (last_admin).
  Result<MemberView> SetMemberRole(const Caller& caller, const std::string& org,
                                   const std::string& member_id, const std::string& role,
                                   const std::string& request_id);
  Result<RemovedMember> RemoveMember(const Caller& caller, const std::string& org,
                                     const std::string& member_id, const std::string& request_id);
  Result<IssuedInvitation> Invite(const Caller& caller, const std::string& org,
                                  const std::string& email, const std::string& role,
                                  const std::string& request_id);
  // Errors: kNotFound (invitation_not_found; invitation_expired as 410),
  // kPermissionDenied (invitation_for_someone_else).
  Result<OrgView> AcceptInvitation(const Caller& caller, const std::string& token,
                                   const std::string& request_id);
  // Joins `who` to the invitation's organisation and marks it accepted, in `stores` (the
  // transaction that creates or accepts for `who`).
  Result<void> ApplyInvitation(metastore::Stores& stores, const PrincipalId& who,
                               const metastore::Invitation& invitation);
  // The organisation's members with their principals, without revoked agents.
  Result<std::vector<MemberView>> ActiveMembers(const OrgId& org);

 private:
  Result<OrgView> ViewOf(MyOrg mine);

  metastore::Metastore& meta_;
  const Clock& clock_;
  Random& random_;
  AuditRecorder& audit_;
  AccessService& access_;
};

}  // namespace tablemere::accounts
