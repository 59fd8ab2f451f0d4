// OrgService: organisations (GET/PATCH /v1/orgs…), their claimed email domains, their
// members and invitations.
#include <nlohmann/json.hpp>

#include "accounts/org_service.h"

#include "accounts/credentials.h"
#include "accounts/errors.h"
#include "accounts/input_checks.h"
#include "accounts/org_rules.h"
#include "common/crypto.h"
#include "common/strings.h"

namespace tablemere::accounts {
namespace {

using metastore::PrincipalKind;
using metastore::Role;

// An invitation is redeemable for a week (API reference).
constexpr int64_t kInvitationMs = 7LL * 24 * 3600 * 1000;
// Random bytes in an invitation token: unguessable, and only its hash is stored.
constexpr size_t kInvitationTokenBytes = 24;

// Mail providers whose addresses anyone can get: owning one proves nothing about an
// organisation, so their domains are never claimable.
const std::vector<std::string>& PublicMailDomains() {
  static const std::vector<std::string> kDomains = {
      "gmail.com",    "googlemail.com", "outlook.com", "hotmail.com", "live.com", "msn.com",
      "yahoo.com",    "ymail.com",      "icloud.com",  "me.com",      "mac.com",  "aol.com",
      "proton.me",    "protonmail.com", "pm.me",       "gmx.com",     "gmx.de",   "gmx.net",
      "web.de",       "mail.com",       "yandex.com",  "yandex.ru",   "zoho.com", "fastmail.com",
      "tutanota.com", "hey.com",        "qq.com",      "163.com"};
  return kDomains;
}

}  // namespace

Result<OrgView> OrgService::ViewOf(MyOrg mine) {
  OrgView v{std::move(mine.org), mine.role, {}, 0};
  TM_ASSIGN(v.domains, meta_.memberships().DomainsOf(v.org.id));
  TM_ASSIGN(auto members, ActiveMembers(v.org.id));
  v.members = static_cast<int>(members.size());
  return v;
}

Result<std::vector<MemberView>> OrgService::ActiveMembers(const OrgId& org) {
  TM_ASSIGN(auto members, meta_.orgs().MembersOf(org));
  std::vector<MemberView> out;
  for (auto& m : members) {
    TM_ASSIGN(auto p, meta_.principals().FindPrincipal(m.principal_id));
    // A revoked agent (suspended, its keys revoked) can no longer act: it is no member.
    if (p.kind == PrincipalKind::kAgent && p.suspended) continue;
    out.push_back(MemberView{std::move(m), std::move(p)});
  }
  return out;
}

Result<std::vector<OrgView>> OrgService::OrgViews(const Caller& caller) {
  TM_ASSIGN(auto orgs, meta_.orgs().OrgsOf(caller.principal.id));
  std::vector<OrgView> out;
  for (auto& [o, role] : orgs) {
    TM_ASSIGN(auto v, ViewOf(MyOrg{std::move(o), role}));
    out.push_back(std::move(v));
  }
  return out;
}

Result<OrgView> OrgService::UpdateOrg(const Caller& caller, const std::string& org,
                                      const OrgUpdate& update, const std::string& request_id) {
  TM_ASSIGN(auto mine, access_.ResolveOrg(caller, org));
  if (mine.role != Role::kAdmin) return Fail(AdminOnly("changes it"));
  std::optional<std::string> name;
  if (update.name) {
    TM_ASSIGN(name, CheckName(*update.name));
  }
  // The row is read and written in one transaction: a concurrent change to a field this
  // update leaves alone (a released domain switching domain join off) stands.
  metastore::Organization next;
  TM_TRY(metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    TM_ASSIGN(next, txn.orgs().FindOrg(mine.org.id));
    if (name) next.name = *name;
    if (update.domain_join) {
      TM_ASSIGN(auto domains, txn.memberships().DomainsOf(next.id));
      if (*update.domain_join && domains.empty()) {
        return Fail(
            Coded(ErrorCode::kInvalidInput, "no_domain", "Domain join needs a claimed domain")
                .With("field", "domain_join")
                .With("remedy", "tablemere org domain --domain <your company's domain>"));
      }
      next.domain_join = *update.domain_join;
    }
    TM_TRY(txn.orgs().UpdateOrg(next));
    return audit_.RecordIn(
        txn, metastore::AuditEvent{
                 0, 0, caller.principal.id, next.id, "org.update", "org", next.id, request_id,
                 nlohmann::json{{"name", next.name}, {"domain_join", next.domain_join}}.dump()});
  }));
  return ViewOf(MyOrg{std::move(next), mine.role});
}

Result<OrgView> OrgService::ClaimDomain(const Caller& caller, const std::string& org,
                                        const std::string& raw_domain,
                                        const std::string& request_id) {
  TM_ASSIGN(auto mine, access_.ResolveOrg(caller, org));
  if (mine.role != Role::kAdmin) return Fail(AdminOnly("claims domains"));
  std::string domain = ToLower(Trim(raw_domain));
  if (domain.empty() || domain.find('.') == std::string::npos ||
      domain.find('@') != std::string::npos) {
    return Fail(Coded(ErrorCode::kInvalidInput, "invalid_value", "domain is like yourcompany.com")
                    .With("field", "domain"));
  }
  for (const auto& d : PublicMailDomains()) {
    if (d == domain) {
      return Fail(Coded(ErrorCode::kInvalidInput, "public_mail_domain",
                        domain + " is a public mail provider; anyone can have an address there")
                      .With("field", "domain"));
    }
  }
  // The proof is the caller's own verified address on the domain.
  if (caller.principal.kind != PrincipalKind::kHuman ||
      DomainOf(caller.principal.email) != domain) {
    return Fail(Coded(ErrorCode::kPermissionDenied, "domain_not_yours",
                      "Your verified address is not on " + domain)
                    .With("remedy", "An admin whose own address is on the domain claims it."));
  }
  auto claimed =
      metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
        TM_TRY(txn.memberships().ClaimDomain(
            {domain, mine.org.id, "email:" + caller.principal.email, clock_.NowMillis()}));
        return audit_.RecordIn(
            txn, metastore::AuditEvent{0, 0, caller.principal.id, mine.org.id, "org.domain_claim",
                                       "org", mine.org.id, request_id,
                                       nlohmann::json{{"domain", domain}}.dump()});
      });
  if (!claimed && claimed.error().code == ErrorCode::kAlreadyExists) {
    return Fail(Coded(ErrorCode::kConflict, "domain_claimed",
                      domain + " belongs to an organisation already"));
  }
  TM_TRY(claimed);
  return ViewOf(std::move(mine));
}

Result<OrgView> OrgService::ReleaseDomain(const Caller& caller, const std::string& org,
                                          const std::string& raw_domain,
                                          const std::string& request_id) {
  TM_ASSIGN(auto mine, access_.ResolveOrg(caller, org));
  if (mine.role != Role::kAdmin) return Fail(AdminOnly("releases domains"));
  std::string domain = ToLower(raw_domain);
  auto released =
      metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
        TM_TRY(txn.memberships().ReleaseDomain(mine.org.id, domain));
        // Domain join switches itself off when no domain is left.
        TM_ASSIGN(auto left, txn.memberships().DomainsOf(mine.org.id));
        TM_ASSIGN(mine.org, txn.orgs().FindOrg(mine.org.id));  // as of this transaction
        if (left.empty() && mine.org.domain_join) {
          mine.org.domain_join = false;
          TM_TRY(txn.orgs().UpdateOrg(mine.org));
        }
        return audit_.RecordIn(
            txn, metastore::AuditEvent{0, 0, caller.principal.id, mine.org.id, "org.domain_release",
                                       "org", mine.org.id, request_id,
                                       nlohmann::json{{"domain", domain}}.dump()});
      });
  if (!released && released.error().code == ErrorCode::kNotFound) {
    return Fail(Coded(ErrorCode::kNotFound, "domain_not_found",
                      "The organisation has not claimed " + domain));
  }
  TM_TRY(released);
  return ViewOf(std::move(mine));
}

// ------------------------------------------------------------------ members

Result<std::vector<MemberView>> OrgService::Members(const Caller& caller, const std::string& org) {
  TM_ASSIGN(auto mine, access_.ResolveOrg(caller, org));
  return ActiveMembers(mine.org.id);
}

Result<int> HumanAdmins(metastore::Stores& stores, const OrgId& org) {
  TM_ASSIGN(auto members, stores.orgs().MembersOf(org));
  int admins = 0;
  for (const auto& m : members) {
    // Tokens never count for last-admin protection.
    if (m.role == Role::kAdmin && m.kind == PrincipalKind::kHuman) admins++;
  }
  return admins;
}

Result<MemberView> OrgService::SetMemberRole(const Caller& caller, const std::string& org,
                                             const std::string& member_id,
                                             const std::string& role_text,
                                             const std::string& request_id) {
  auto role = metastore::ParseRole(role_text);
  if (!role) {
    return Fail(Coded(ErrorCode::kInvalidInput, "invalid_value", "role must be admin or member")
                    .With("field", "role"));
  }
  TM_ASSIGN(auto mine, access_.ResolveOrg(caller, org));
  if (mine.role != Role::kAdmin) return Fail(AdminOnly("changes roles"));
  MemberView out;
  auto changed =
      metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
        TM_ASSIGN(auto members, txn.orgs().MembersOf(mine.org.id));
        const metastore::Membership* m = nullptr;
        for (const auto& candidate : members) {
          if (candidate.principal_id.str() == member_id) m = &candidate;
        }
        if (m == nullptr) {
          return Fail(Coded(ErrorCode::kNotFound, "member_not_found",
                            "No member " + member_id + " in this organisation")
                          .With("remedy", "tablemere org members lists them."));
        }
        TM_ASSIGN(out.principal, txn.principals().FindPrincipal(m->principal_id));
        out.membership = *m;
        out.membership.role = *role;
        TM_TRY(txn.orgs().PutMember(out.membership));
        if (out.principal.kind == PrincipalKind::kAgent) {
          out.principal.role = *role;  // an agent's own record carries its role too
          TM_TRY(txn.principals().UpdatePrincipal(out.principal));
        }
        TM_ASSIGN(int admins, HumanAdmins(txn, mine.org.id));
        if (admins == 0) {
          return Fail(
              Coded(ErrorCode::kConflict, "last_admin", "An organisation keeps at least one admin")
                  .With("remedy", "Make someone else an admin first."));
        }
        return audit_.RecordIn(
            txn, metastore::AuditEvent{0, 0, caller.principal.id, mine.org.id, "org.member_role",
                                       "principal", m->principal_id, request_id,
                                       nlohmann::json{{"role", metastore::Name(*role)},
                                                      {"previous_role", metastore::Name(m->role)}}
                                           .dump()});
      });
  TM_TRY(changed);
  return out;
}

Result<RemovedMember> OrgService::RemoveMember(const Caller& caller, const std::string& org,
                                               const std::string& member_id,
                                               const std::string& request_id) {
  TM_ASSIGN(auto mine, access_.ResolveOrg(caller, org));
  const bool self = caller.principal.id.str() == member_id;
  if (!self && mine.role != Role::kAdmin) return Fail(AdminOnly("removes members"));
  RemovedMember out{mine.org.id, PrincipalId(member_id), self};
  TM_TRY(metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    auto removed = txn.orgs().RemoveMember(mine.org.id, out.principal_id);
    if (!removed && removed.error().code == ErrorCode::kNotFound) {
      return Fail(Coded(ErrorCode::kNotFound, "member_not_found",
                        "No member " + member_id + " in this organisation")
                      .With("remedy", "tablemere org members lists them."));
    }
    TM_TRY(removed);
    TM_ASSIGN(int admins, HumanAdmins(txn, mine.org.id));
    if (admins == 0) {
      return Fail(Coded(ErrorCode::kConflict, "last_admin",
                        "The last admin can neither leave nor be removed")
                      .With("remedy", "Make someone else an admin first."));
    }
    return audit_.RecordIn(
        txn, metastore::AuditEvent{0, 0, caller.principal.id, mine.org.id, "org.member_remove",
                                   "principal", member_id, request_id,
                                   nlohmann::json{{"left", self}}.dump()});
  }));
  return out;
}

// ------------------------------------------------------------------ invitations

Result<IssuedInvitation> OrgService::Invite(const Caller& caller, const std::string& org,
                                            const std::string& email, const std::string& role_text,
                                            const std::string& request_id) {
  TM_ASSIGN(auto mine, access_.ResolveOrg(caller, org));
  if (mine.role != Role::kAdmin) return Fail(AdminOnly("invites"));
  if (!ValidEmail(email)) {
    return Fail(Coded(ErrorCode::kInvalidInput, "invalid_value", "email is not a valid address")
                    .With("field", "email"));
  }
  auto role = role_text.empty() ? std::optional(Role::kMember) : metastore::ParseRole(role_text);
  if (!role) {
    return Fail(Coded(ErrorCode::kInvalidInput, "invalid_value", "role must be member or admin")
                    .With("field", "role"));
  }
  IssuedInvitation out;
  out.token = "inv_" + crypto::Base64UrlEncode(random_.Bytes(kInvitationTokenBytes));
  int64_t now = clock_.NowMillis();
  out.invitation =
      metastore::Invitation{HashApiSecret(out.token), mine.org.id, ToLower(email),      *role,
                            caller.principal.id,      now,         now + kInvitationMs, 0};
  TM_TRY(metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    TM_TRY(txn.memberships().CreateInvitation(out.invitation));
    return audit_.RecordIn(
        txn,
        metastore::AuditEvent{
            0, 0, caller.principal.id, mine.org.id, "org.invite", "org", mine.org.id, request_id,
            nlohmann::json{{"email", out.invitation.email}, {"role", metastore::Name(*role)}}
                .dump()});
  }));
  return out;
}

Result<OrgView> OrgService::AcceptInvitation(const Caller& caller, const std::string& token,
                                             const std::string& request_id) {
  auto not_found = [] {
    return Fail(
        Coded(ErrorCode::kNotFound, "invitation_not_found", "No open invitation with this token"));
  };
  if (token.empty()) return not_found();
  auto found = meta_.memberships().FindInvitation(HashApiSecret(token));
  if (!found) {
    if (found.error().code == ErrorCode::kNotFound) return not_found();
    return Fail(found.error());
  }
  const metastore::Invitation& inv = *found;
  if (inv.accepted_ms != 0) return not_found();
  if (inv.expires_ms <= clock_.NowMillis()) {
    return Fail(Coded(ErrorCode::kNotFound, "invitation_expired", "The invitation has expired")
                    .With("remedy", "Ask an admin of the organisation for a new one."));
  }
  if (caller.principal.kind != PrincipalKind::kHuman ||
      ToLower(caller.principal.email) != inv.email) {
    return Fail(Coded(ErrorCode::kPermissionDenied, "invitation_for_someone_else",
                      "The invitation is for another address"));
  }
  TM_TRY(metastore::InTransaction(meta_, [&](metastore::WriteTransaction& txn) -> Result<void> {
    TM_TRY(ApplyInvitation(txn, caller.principal.id, inv));
    return audit_.RecordIn(
        txn, metastore::AuditEvent{0, 0, caller.principal.id, inv.org_id, "org.invitation_accept",
                                   "org", inv.org_id, request_id, "{}"});
  }));
  TM_ASSIGN(auto org, meta_.orgs().FindOrg(inv.org_id));
  TM_ASSIGN(auto role, access_.RoleIn(caller, org.id));
  return ViewOf(MyOrg{std::move(org), role.value_or(inv.role)});
}

Result<void> OrgService::ApplyInvitation(metastore::Stores& stores, const PrincipalId& who,
                                         const metastore::Invitation& inv) {
  auto accepted = stores.memberships().AcceptInvitation(inv.token_hash, clock_.NowMillis());
  if (!accepted && accepted.error().code == ErrorCode::kConflict) {
    return Fail(
        Coded(ErrorCode::kNotFound, "invitation_not_found", "No open invitation with this token"));
  }
  TM_TRY(accepted);
  // A member already keeps the higher of its role and the invited one.
  TM_ASSIGN(auto members, stores.orgs().MembersOf(inv.org_id));
  Role role = inv.role;
  for (const auto& m : members) {
    if (m.principal_id == who && m.role == Role::kAdmin) role = Role::kAdmin;
  }
  return stores.orgs().PutMember({inv.org_id, who, role, clock_.NowMillis(), "invitation"});
}

}  // namespace tablemere::accounts
