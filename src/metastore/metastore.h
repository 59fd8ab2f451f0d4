// The metastore interface: all durable state except object bytes. Narrow stores per
// subsystem; the SQLite backend implements them all (PostgreSQL later, same contract).
// Every method is atomic and thread-safe; a use case that writes several rows opens a
// WriteTransaction and passes it through the store calls. Errors: kNotFound,
// kAlreadyExists, kConflict (a lost compare-and-swap), kUnavailable (the database failed).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "metastore/types.h"

namespace tablemere::metastore {

// Principals (humans and agents) and their API keys.
class PrincipalStore {
 public:
  virtual ~PrincipalStore() = default;
  // kAlreadyExists (reason "email" or "agent_name").
  virtual Result<void> CreatePrincipal(const Principal& principal) = 0;
  virtual Result<Principal> FindPrincipal(const PrincipalId& id) = 0;
  // A human by email (compared case-insensitively); kNotFound when none.
  virtual Result<Principal> FindHumanByEmail(const std::string& email) = 0;
  // The agents an organisation owns, oldest first.
  virtual Result<std::vector<Principal>> AgentsOf(const OrgId& org_id) = 0;
  // Replaces the mutable fields (display_name, role, suspended, email: "" forgets it);
  // kNotFound, kAlreadyExists (an agent name or an email in use).
  virtual Result<void> UpdatePrincipal(const Principal& principal) = 0;
  virtual Result<void> CreateApiKey(const ApiKey& key) = 0;
  virtual Result<ApiKey> FindApiKey(const std::string& key_id) = 0;
  // Records a use of the key (last_used_ms).
  virtual Result<void> TouchApiKey(const std::string& key_id, int64_t at_ms) = 0;
  // The principal's keys, oldest first, revoked ones included.
  virtual Result<std::vector<ApiKey>> ApiKeysOf(const PrincipalId& principal_id) = 0;
  // Revokes one of the principal's keys at `at_ms`; kNotFound when the key is not the
  // principal's. Revoking a revoked key keeps its first revocation time.
  virtual Result<ApiKey> RevokeApiKey(const PrincipalId& principal_id, const std::string& key_id,
                                      int64_t at_ms) = 0;
  // Revokes every live key of the principal; returns how many.
  virtual Result<int> RevokeAllApiKeys(const PrincipalId& principal_id, int64_t at_ms) = 0;
};

// Organisations and who belongs to them.
class OrgStore {
 public:
  virtual ~OrgStore() = default;
  // kAlreadyExists (reason "handle").
  virtual Result<void> CreateOrg(const Organization& org) = 0;
  virtual Result<Organization> FindOrg(const OrgId& id) = 0;
  // Replaces name, status and domain_join.
  virtual Result<void> UpdateOrg(const Organization& org) = 0;
  // Whether an organisation holds this handle.
  virtual Result<bool> HandleTaken(const std::string& handle) = 0;
  // Adds the member or changes its role.
  virtual Result<void> PutMember(const Membership& membership) = 0;
  // kNotFound when the principal is not a member.
  virtual Result<void> RemoveMember(const OrgId& org_id, const PrincipalId& principal_id) = 0;
  virtual Result<std::vector<Membership>> MembersOf(const OrgId& org_id) = 0;
  // Organisations the principal belongs to, with its role, oldest first.
  virtual Result<std::vector<std::pair<Organization, Role>>> OrgsOf(
      const PrincipalId& principal_id) = 0;
};

// Claimed email domains, invitations and Terms acceptances: the membership paperwork.
class MembershipStore {
 public:
  virtual ~MembershipStore() = default;
  // kAlreadyExists (reason "domain") when any organisation holds the domain.
  virtual Result<void> ClaimDomain(const OrgDomain& domain) = 0;
  // kNotFound when the organisation does not hold it.
  virtual Result<void> ReleaseDomain(const OrgId& org_id, const std::string& domain) = 0;
  virtual Result<std::vector<OrgDomain>> DomainsOf(const OrgId& org_id) = 0;
  // Who holds a domain, if anyone.
  virtual Result<std::optional<OrgDomain>> DomainOwner(const std::string& domain) = 0;
  virtual Result<void> CreateInvitation(const Invitation& invitation) = 0;
  // kNotFound when no invitation has this token hash.
  virtual Result<Invitation> FindInvitation(const std::string& token_hash) = 0;
  // Marks it accepted; kConflict when it was accepted already (a concurrent accept).
  virtual Result<void> AcceptInvitation(const std::string& token_hash, int64_t at_ms) = 0;
  // Open, unexpired invitations for an address, oldest first.
  virtual Result<std::vector<Invitation>> OpenInvitationsFor(const std::string& email,
                                                             int64_t now_ms) = 0;
  // Records an acceptance (accepting a version again keeps the first time).
  virtual Result<void> AcceptTerms(const TermsAcceptance& acceptance) = 0;
  virtual Result<std::vector<TermsAcceptance>> TermsHistory(const PrincipalId& principal_id) = 0;
};

// Codes mailed to addresses, and the sliding-window counters of rate limits. Both live in
// the metastore so every replica sees the same codes and the same counts.
class VerificationStore {
 public:
  virtual ~VerificationStore() = default;
  // Replaces the address's pending code of that purpose.
  virtual Result<void> PutCode(const PendingCode& code) = 0;
  // kNotFound when there is none.
  virtual Result<PendingCode> FindCode(const std::string& purpose, const std::string& email) = 0;
  // Counts one wrong attempt; returns the attempts so far.
  virtual Result<int> AddCodeAttempt(const std::string& purpose, const std::string& email) = 0;
  virtual Result<void> DeleteCode(const std::string& purpose, const std::string& email) = 0;
  // Deletes the pending code if it is still the one hashed `code_hash`; whether it did.
  // Exactly one of several requests presenting the code at once spends it.
  virtual Result<bool> SpendCode(const std::string& purpose, const std::string& email,
                                 const std::string& code_hash) = 0;
  // A sliding window of `window_ms` ending at `now_ms`: when `bucket` has fewer than
  // `limit` events in it, records one more and allows; otherwise refuses (recording
  // nothing) with the time until the oldest event leaves the window.
  virtual Result<RateDecision> TakeRate(const std::string& bucket, int limit, int64_t window_ms,
                                        int64_t now_ms) = 0;
  // TakeRate whose event is a hold named `hold_id`: a failure assumed before an attempt
  // whose outcome takes time (a password hash), so attempts in flight at once count
  // against the limit too. ReleaseRate takes it back when the attempt succeeded.
  virtual Result<RateDecision> HoldRate(const std::string& bucket, int limit, int64_t window_ms,
                                        int64_t now_ms, const std::string& hold_id) = 0;
  virtual Result<void> ReleaseRate(const std::string& bucket, const std::string& hold_id) = 0;
  // The same decision as TakeRate's without recording anything.
  virtual Result<RateDecision> PeekRate(const std::string& bucket, int limit, int64_t window_ms,
                                        int64_t now_ms) = 0;
  // Records an event (a failure that counts toward a limit checked with PeekRate).
  virtual Result<void> RecordRate(const std::string& bucket, int64_t now_ms) = 0;
  // Forgets events older than `before_ms` in every bucket (windows are at most an hour, so
  // buckets that are never used again do not pile up); returns how many.
  virtual Result<int64_t> PurgeRateEvents(int64_t before_ms) = 0;
};

// Passwords, login sessions and the mailed links that set or reset a password.
class SessionStore {
 public:
  virtual ~SessionStore() = default;
  virtual Result<void> SetPassword(const PasswordRecord& record) = 0;
  // kNotFound when the principal has no password.
  virtual Result<PasswordRecord> FindPassword(const PrincipalId& principal_id) = 0;
  virtual Result<void> CreateSession(const Session& session) = 0;
  // kNotFound when none.
  virtual Result<Session> FindSession(const std::string& session_id) = 0;
  // The session whose current or previous refresh hash is `hash`; kNotFound when none.
  virtual Result<Session> SessionByRefresh(const std::string& hash) = 0;
  // Replaces the refresh hash (the old one becomes `previous`), the expiry and the last
  // use; kConflict when the stored hash is no longer `expected_hash` (a concurrent
  // refresh won).
  virtual Result<void> RotateRefresh(const std::string& session_id,
                                     const std::string& expected_hash, const std::string& new_hash,
                                     int64_t now_ms, int64_t expires_ms) = 0;
  // Marks a live session revoked; false when it was already revoked (or does not exist).
  virtual Result<bool> RevokeSession(const std::string& session_id, int64_t now_ms) = 0;
  // Revokes every live session of the principal but `keep` ("" for none); how many.
  virtual Result<int> RevokeSessionsOf(const PrincipalId& principal_id, const std::string& keep,
                                       int64_t now_ms) = 0;
  // Live (unrevoked, unexpired) sessions, newest first.
  virtual Result<std::vector<Session>> LiveSessionsOf(const PrincipalId& principal_id,
                                                      int64_t now_ms) = 0;
  virtual Result<void> PutLink(const LoginLink& link) = 0;
  // kNotFound when none.
  virtual Result<LoginLink> FindLink(const std::string& token_hash) = 0;
  // Marks an unspent link spent; kConflict when it was spent already.
  virtual Result<void> SpendLink(const std::string& token_hash, int64_t now_ms) = 0;
  // The newest unspent, unexpired link of each purpose for the address.
  virtual Result<std::vector<LoginLink>> OpenLinksFor(const std::string& email, int64_t now_ms) = 0;
};

// Device authorisations of the CLI's login (RFC 8628).
class DeviceStore {
 public:
  virtual ~DeviceStore() = default;
  // kAlreadyExists when the user code is in use (the caller draws another).
  virtual Result<void> CreateDevice(const DeviceGrant& grant) = 0;
  // kNotFound when none.
  virtual Result<DeviceGrant> DeviceByUserCode(const std::string& user_code) = 0;
  virtual Result<DeviceGrant> DeviceByCodeHash(const std::string& device_code_hash) = 0;
  // Replaces status, interval, last poll, agent and approver; kConflict when the stored
  // status is no longer `expected_status` (a concurrent decision or poll won).
  virtual Result<void> UpdateDevice(const DeviceGrant& grant,
                                    const std::string& expected_status) = 0;
};

// The last result of each maintenance job on each table (GET /v1/table's `maintenance`).
struct MaintenanceRun {
  std::string warehouse_id;
  std::vector<std::string> namespace_levels;
  std::string table;
  std::string job;  // "compact" | "expire" | "orphans"
  int64_t at_ms = 0;
  std::string result_json;  // the job's result object
};

// An object below a table's location that orphan cleanup found unreferenced: in its
// noncurrent stage it is kept, and not counted in usage, until it has been unreferenced
// for the grace period; then it is deleted.
struct NoncurrentObject {
  std::string object_key;  // in the warehouse's table bucket
  int64_t size = 0;
  int64_t found_ms = 0;  // when an orphan run first found it unreferenced
};

// A table's visit queued after client commits, shared by every server: the first and
// the latest commit since it was queued.
struct PendingVisit {
  int64_t first_ms = 0;
  int64_t last_ms = 0;
};
struct NotedCommit {
  PendingVisit visit;    // as it stands after the commit was noted
  bool started = false;  // whether noting it started the visit (and queued its task)
};

class MaintenanceStore {
 public:
  virtual ~MaintenanceStore() = default;
  // A client commit at `now_ms` to the table `key` names: the latest of its pending
  // visit, or, when none is pending, the first of a new one whose task `visit` is queued
  // in the same transaction. Exact with commits noted on other servers: one visit starts.
  virtual Result<NotedCommit> NoteCommit(const std::string& key, int64_t now_ms,
                                         const NewTask& visit) = 0;
  virtual Result<std::optional<PendingVisit>> FindPendingVisit(const std::string& key) = 0;
  // Ends the pending visit of `key` unless a commit came after `last_ms` (then false, and
  // nothing changes): a commit noted from then on starts the next visit.
  virtual Result<bool> EndPendingVisit(const std::string& key, int64_t last_ms) = 0;
  // Replaces the table's last run of `run.job`.
  virtual Result<void> RecordRun(const MaintenanceRun& run) = 0;
  // The table's last run of each job, by job name.
  virtual Result<std::vector<MaintenanceRun>> LastRuns(const std::string& warehouse_id,
                                                       const std::vector<std::string>& ns,
                                                       const std::string& table) = 0;
  // The table's noncurrent objects, as its last orphan run left them.
  virtual Result<std::vector<NoncurrentObject>> Noncurrent(const std::string& warehouse_id,
                                                           const std::vector<std::string>& ns,
                                                           const std::string& table) = 0;
  // Replaces the table's noncurrent objects with `objects`.
  virtual Result<void> ReplaceNoncurrent(const std::string& warehouse_id,
                                         const std::vector<std::string>& ns,
                                         const std::string& table,
                                         const std::vector<NoncurrentObject>& objects) = 0;
  // Every noncurrent object of the warehouse's tables (metering leaves out those that
  // are still there with that size).
  virtual Result<std::vector<NoncurrentObject>> NoncurrentOfWarehouse(
      const std::string& warehouse_id) = 0;
  // Where compaction snapshot `snapshot_id` of table `table_uuid` moved the rows of the
  // files it replaced (JSON, see table_compaction.h), for the commit rebase. Saving also
  // forgets the moves of every table saved before `forget_before_ms`.
  virtual Result<void> SaveRowMoves(const std::string& warehouse_id, const std::string& table_uuid,
                                    int64_t snapshot_id, const std::string& moves_json,
                                    int64_t now_ms, int64_t forget_before_ms) = 0;
  virtual Result<std::optional<std::string>> RowMoves(const std::string& warehouse_id,
                                                      const std::string& table_uuid,
                                                      int64_t snapshot_id) = 0;
};

// A server-side scan plan (the Iceberg REST planTableScan): what any server needs to
// answer its polls and its plan tasks. Plans expire.
enum class ScanPlanState { kSubmitted, kCompleted, kCancelled, kFailed };
struct ScanPlan {
  std::string id;  // random: knowing it is the capability to fetch the plan's tasks
  std::string warehouse_id, table_uuid;
  ScanPlanState state = ScanPlanState::kSubmitted;
  std::string body;  // the plan as the planner left it (JSON)
  int64_t created_ms = 0, expires_ms = 0;
};

class ScanPlanStore {
 public:
  virtual ~ScanPlanStore() = default;
  // Saves a new plan and forgets every plan that expired before `now_ms`.
  virtual Result<void> Create(const ScanPlan& plan, int64_t now_ms) = 0;
  // The plan, unless it expired before `now_ms` (nullopt then, and when there is none).
  virtual Result<std::optional<ScanPlan>> Find(const std::string& id, int64_t now_ms) = 0;
  // Moves a plan in state `from` to `to` with `body`; false (nothing changed) when it is
  // no longer in `from` (cancelled meanwhile) or gone.
  virtual Result<bool> Finish(const std::string& id, ScanPlanState from, ScanPlanState to,
                              const std::string& body) = 0;
  // Forgets a plan; false when there was none.
  virtual Result<bool> Remove(const std::string& id) = 0;
};

// Storage samples of warehouses (GET /v1/usage, quotas).
class UsageStore {
 public:
  virtual ~UsageStore() = default;
  virtual Result<void> RecordSample(const UsageSample& sample) = 0;
  // The newest sample of a warehouse, if any.
  virtual Result<std::optional<UsageSample>> LatestSample(const WarehouseId& warehouse_id) = 0;
  // A warehouse's samples taken at or after `since_ms`, oldest first.
  virtual Result<std::vector<UsageSample>> SamplesSince(const WarehouseId& warehouse_id,
                                                        int64_t since_ms) = 0;
  // Removes a warehouse's samples; returns how many there were.
  virtual Result<int> DeleteSamples(const WarehouseId& warehouse_id) = 0;
};

// Projects, their warehouses, and the grants on warehouses.
class WarehouseStore {
 public:
  virtual ~WarehouseStore() = default;
  // kAlreadyExists (reason "name") when the organisation has a project of that name.
  virtual Result<void> CreateProject(const Project& project) = 0;
  virtual Result<Project> FindProject(const ProjectId& id) = 0;
  virtual Result<std::vector<Project>> ProjectsOfOrg(const OrgId& org_id) = 0;
  // kAlreadyExists (reason "name") when the project has a warehouse of that name.
  virtual Result<void> CreateWarehouse(const Warehouse& warehouse) = 0;
  virtual Result<Warehouse> FindWarehouse(const WarehouseId& id) = 0;
  virtual Result<std::vector<Warehouse>> WarehousesOfOrg(const OrgId& org_id) = 0;
  // Every warehouse of the deployment, oldest first (metering).
  virtual Result<std::vector<Warehouse>> AllWarehouses() = 0;
  // Bumps the generation; returns the new warehouse record.
  virtual Result<Warehouse> RotateWarehouse(const WarehouseId& id) = 0;
  // Publishes (published_ms > 0) or unpublishes (0) a warehouse's storage, and opens
  // (catalog_public_ms > 0) or closes (0) its catalog to anonymous reads, in one update;
  // kNotFound when unknown.
  virtual Result<Warehouse> SetWarehousePublic(const WarehouseId& id, int64_t published_ms,
                                               int64_t catalog_public_ms) = 0;
  // Makes a warehouse's buckets read-only (read_only_ms > 0) or writable again (0).
  virtual Result<Warehouse> SetWarehouseReadOnly(const WarehouseId& id, int64_t read_only_ms) = 0;
  // Removes the warehouse with its grants; the caller removes its entries and files.
  virtual Result<void> DeleteWarehouse(const WarehouseId& id) = 0;
  // Creates or replaces the grant of (warehouse, principal).
  virtual Result<void> PutGrant(const Grant& grant) = 0;
  // kNotFound when there is no explicit grant.
  virtual Result<void> DeleteGrant(const WarehouseId& warehouse_id,
                                   const PrincipalId& principal_id) = 0;
  virtual Result<std::vector<Grant>> GrantsOf(const PrincipalId& principal_id) = 0;
  virtual Result<std::vector<Grant>> GrantsOn(const WarehouseId& warehouse_id) = 0;
};

// The records of POSTs that carried an Idempotency-Key.
class IdempotencyStore {
 public:
  virtual ~IdempotencyStore() = default;
  // kConflict (reason "idempotency_key") when the principal used the key before.
  virtual Result<void> PutIdempotency(const IdempotencyRecord& record) = 0;
  virtual Result<std::optional<IdempotencyRecord>> FindIdempotency(const PrincipalId& principal_id,
                                                                   const std::string& key) = 0;
};

// Who created each operator bucket ("user:<access key>").
class BucketOwnerStore {
 public:
  virtual ~BucketOwnerStore() = default;
  virtual Result<void> SetBucketOwner(const std::string& bucket, const std::string& owner) = 0;
  // kNotFound when nobody recorded one.
  virtual Result<std::string> BucketOwner(const std::string& bucket) = 0;
  virtual Result<void> ClearBucketOwner(const std::string& bucket) = 0;
};

// The S3 buckets and their attributes (the object store holds only their bytes).
class BucketStore {
 public:
  virtual ~BucketStore() = default;
  // kAlreadyExists when a bucket of that name is registered.
  virtual Result<void> AddBucket(const S3Bucket& bucket) = 0;
  // kNotFound when no bucket of that name is registered.
  virtual Result<S3Bucket> FindBucket(const std::string& name) = 0;
  // Every bucket, by name.
  virtual Result<std::vector<S3Bucket>> AllBuckets() = 0;
  // Applies `change` in one update and returns the bucket as it now is; kNotFound when
  // unknown. Concurrent changes of different attributes both stay.
  virtual Result<S3Bucket> UpdateBucket(const std::string& name, const S3BucketChange& change) = 0;
  // Unregisters the bucket with its tags; false when it was not registered.
  virtual Result<bool> RemoveBucket(const std::string& name) = 0;
  // Adds every delta to its bucket's counters, in one transaction; deltas of buckets no
  // longer registered are dropped.
  virtual Result<void> AddUsage(const std::vector<UsageDelta>& deltas) = 0;
  // Adds a listing's correction to the counters and records the listing's time (a delta,
  // so writes counted while the listing ran are kept); kNotFound when unknown.
  virtual Result<void> ReconcileUsage(const std::string& name, int64_t bytes, int64_t objects,
                                      int64_t at_ms) = 0;

  // ---- the noncurrent versions and delete markers of objects in buckets with
  // versioning (RemoveBucket drops a bucket's with it). Writers of one key are serialised
  // by the caller (a key lock), so numbering by the key's newest is exact.
  // Records `version` as the newest of its key (or, when the key already has that version
  // id, replaces it in place) and returns it with its seq.
  virtual Result<ObjectVersion> AddVersion(const ObjectVersion& version) = 0;
  // nullopt when the key has no such recorded version.
  virtual Result<std::optional<ObjectVersion>> FindVersion(const std::string& bucket,
                                                           const std::string& key,
                                                           const std::string& version_id) = 0;
  // The key's newest recorded version; nullopt when none.
  virtual Result<std::optional<ObjectVersion>> NewestVersion(const std::string& bucket,
                                                             const std::string& key) = 0;
  // False when there was no such version.
  virtual Result<bool> RemoveVersion(const std::string& bucket, const std::string& key,
                                     const std::string& version_id) = 0;
  // Up to `limit` versions of keys starting with `prefix`, by key (bytewise) and newest
  // first within a key, starting after (`after_key`, `after_seq`): keys after after_key,
  // and versions of after_key older than after_seq (none when after_seq is 0).
  virtual Result<std::vector<ObjectVersion>> ListVersions(const std::string& bucket,
                                                          const std::string& prefix,
                                                          const std::string& after_key,
                                                          int64_t after_seq, int limit) = 0;
  // How many versions and markers the bucket has recorded.
  virtual Result<int64_t> CountVersions(const std::string& bucket) = 0;
};

// Leased locks on names (object keys), shared by every server over this metastore: what
// makes a check-then-write against an object store exact across replicas.
class KeyLockStore {
 public:
  virtual ~KeyLockStore() = default;
  // Takes `key` for `holder` until `now_ms + lease_ms`, when it is free or its lease has
  // run out; false while another holder's lease runs.
  virtual Result<bool> TryLock(const std::string& key, const std::string& holder, int64_t now_ms,
                               int64_t lease_ms) = 0;
  // Releases `key` if `holder` still holds it.
  virtual Result<void> Unlock(const std::string& key, const std::string& holder) = 0;
  // Releases every lock whose holder starts with `holder_prefix` (a restarted server's
  // own, left behind by its killed predecessor); answers how many.
  virtual Result<int64_t> ReleaseHeldBy(const std::string& holder_prefix) = 0;
};

// Named values every server over this metastore must hold alike (the sealed signing
// keys), changed by compare-and-set on a version.
struct VersionedValue {
  std::string value;
  int64_t version = 0;  // > 0
};
class SharedValueStore {
 public:
  virtual ~SharedValueStore() = default;
  // nullopt when `name` was never set.
  virtual Result<std::optional<VersionedValue>> Find(const std::string& name) = 0;
  // Sets `name` to `value` (its version one more) if its version is still `expected`
  // (0: never set); false, changing nothing, when another server changed it first.
  virtual Result<bool> CompareAndSet(const std::string& name, const std::string& value,
                                     int64_t expected) = 0;
};

// A compare-and-swap that lost its race: kConflict with this reason, so callers tell a
// moved pointer (retry) from other conflicts without reading messages.
inline constexpr char kStalePointer[] = "stale_pointer";
inline Error StalePointer() {
  return Error{ErrorCode::kConflict, "the table was changed concurrently", {}}.With("conflict",
                                                                                    kStalePointer);
}
inline bool IsStalePointer(const Error& e) {
  return e.code == ErrorCode::kConflict && e.Detail("conflict") == kStalePointer;
}

class CatalogStore {
 public:
  virtual ~CatalogStore() = default;
  virtual Result<void> CreateNamespace(const Namespace& ns) = 0;
  virtual Result<Namespace> GetNamespace(const std::string& warehouse_id,
                                         const std::vector<std::string>& levels) = 0;
  // Children of `parent` (all top-level namespaces when empty), sorted.
  virtual Result<std::vector<Namespace>> ListNamespaces(const std::string& warehouse_id,
                                                        const std::vector<std::string>& parent) = 0;
  virtual Result<void> UpdateNamespaceProperties(const std::string& warehouse_id,
                                                 const std::vector<std::string>& levels,
                                                 const std::string& properties_json) = 0;
  // kConflict ("not empty") when tables, views or child namespaces remain.
  virtual Result<void> DropNamespace(const std::string& warehouse_id,
                                     const std::vector<std::string>& levels) = 0;

  virtual Result<TableEntry> GetEntry(const std::string& warehouse_id,
                                      const std::vector<std::string>& ns,
                                      const std::string& name) = 0;
  // The entry without its metadata document (metadata_json left empty): the cheap read
  // for callers that cache documents by their immutable metadata location.
  virtual Result<TableEntry> GetEntryHead(const std::string& warehouse_id,
                                          const std::vector<std::string>& ns,
                                          const std::string& name) = 0;
  // The warehouse (kNotFound when there is none) with the head of the entry `name` in it
  // (nullopt when there is none), read together: how a table route authenticates its
  // caller and finds its table in one read of the database.
  struct WarehouseAndHead {
    Warehouse warehouse;
    std::optional<TableEntry> head;
  };
  virtual Result<WarehouseAndHead> GetWarehouseAndHead(const WarehouseId& warehouse_id,
                                                       const std::vector<std::string>& ns,
                                                       const std::string& name) = 0;
  // Entries of one kind in a namespace, sorted by name.
  virtual Result<std::vector<TableEntry>> ListEntries(const std::string& warehouse_id,
                                                      const std::vector<std::string>& ns,
                                                      const std::string& kind) = 0;
  // Every entry of one kind in a warehouse, across namespaces.
  virtual Result<std::vector<TableEntry>> ListEntriesOfKind(const std::string& warehouse_id,
                                                            const std::string& kind) = 0;
  // Applies every swap or none: creates (expected "") must not collide with any entry of
  // any kind (kAlreadyExists); updates must find the expected metadata location
  // (StalePointer() otherwise, kNotFound when the entry is gone).
  virtual Result<void> SwapMetadata(const std::vector<MetadataSwap>& swaps) = 0;
  // Removes the entry; returns it. `kind` must match. `follow_up`, when given, is asked
  // for a task (given the entry being dropped) that is enqueued in the same transaction,
  // so a crash can never drop a table without its purge; an error it returns refuses the
  // drop (nothing changes), so it may also check the entry is still the one the caller
  // decided on.
  using DropFollowUp = std::function<Result<std::optional<NewTask>>(const TableEntry&)>;
  virtual Result<TableEntry> DropEntry(const std::string& warehouse_id,
                                       const std::vector<std::string>& ns, const std::string& name,
                                       const std::string& kind,
                                       const DropFollowUp& follow_up = nullptr) = 0;
  // Removes every entry and namespace of a warehouse (it is being deleted); returns how
  // many tables (entries of kind "table") there were.
  virtual Result<int> DeleteWarehouseEntries(const std::string& warehouse_id) = 0;
  virtual Result<void> RenameEntry(const std::string& warehouse_id,
                                   const std::vector<std::string>& from_ns,
                                   const std::string& from_name,
                                   const std::vector<std::string>& to_ns,
                                   const std::string& to_name, const std::string& kind) = 0;
};

// A durable task queue with leases, so any replica can run background work and a
// crash resumes it.
class TaskStore {
 public:
  virtual ~TaskStore() = default;
  virtual Result<void> Enqueue(const std::string& kind, const std::string& payload_json) = 0;
  // Enqueues a task that becomes runnable after its delay.
  virtual Result<void> EnqueueTask(const NewTask& task) = 0;
  // Enqueues `task` unless a task of its kind is queued (runnable, leased or delayed);
  // whether it did. Atomic, so of servers starting together one starts a chain of
  // recurring work (metering, the maintenance sweep) and the others find it.
  virtual Result<bool> EnqueueFirstOfKind(const NewTask& task) = 0;
  // Leases the oldest runnable task for `lease_ms`; nullopt when there is none.
  virtual Result<std::optional<Task>> Claim(int64_t lease_ms) = 0;
  // Removes the task claimed as `task`. kConflict (nothing changed) when its lease ran out
  // and another claim took it over.
  virtual Result<void> Complete(const Task& task) = 0;
  // Removes the task claimed as `task` and enqueues `next` in one transaction; kConflict
  // (nothing changed, nothing enqueued) when the lease was taken over.
  virtual Result<void> CompleteAndEnqueue(const Task& task, const NewTask& next) = 0;
  // Makes the task claimed as `task` runnable again after `delay_ms`; kConflict as above.
  virtual Result<void> Retry(const Task& task, int64_t delay_ms) = 0;
  // Every queued task of `kind` (runnable, leased or delayed), oldest first.
  virtual Result<std::vector<Task>> ListOfKind(const std::string& kind) = 0;
  // How many tasks are queued (runnable, leased or delayed).
  virtual Result<int64_t> QueueDepth() = 0;
};

class AuditStore {
 public:
  virtual ~AuditStore() = default;
  virtual Result<void> Record(const AuditEvent& event) = 0;
  // Newest first. Events of `org_id` (any principal) when it is non-empty, else those of
  // `principal_id`; `action_prefix` filters by prefix ("" for all).
  virtual Result<std::vector<AuditEvent>> List(const std::string& org_id,
                                               const std::string& principal_id,
                                               const std::string& action_prefix, int64_t since_ms,
                                               int limit) = 0;
};

// The stores, reached either through the metastore (each call is its own transaction)
// or through a WriteTransaction (every call joins it). Reads through a transaction see
// its own uncommitted writes.
class Stores {
 public:
  virtual ~Stores() = default;
  virtual PrincipalStore& principals() = 0;
  virtual OrgStore& orgs() = 0;
  virtual MembershipStore& memberships() = 0;
  virtual VerificationStore& verification() = 0;
  virtual SessionStore& sessions() = 0;
  virtual DeviceStore& devices() = 0;
  virtual UsageStore& usage() = 0;
  virtual WarehouseStore& warehouses() = 0;
  virtual IdempotencyStore& idempotency() = 0;
  virtual BucketOwnerStore& bucket_owners() = 0;
  virtual BucketStore& buckets() = 0;
  virtual KeyLockStore& key_locks() = 0;
  virtual SharedValueStore& shared_values() = 0;
  virtual CatalogStore& catalog() = 0;
  virtual TaskStore& tasks() = 0;
  virtual AuditStore& audit() = 0;
  virtual MaintenanceStore& maintenance() = 0;
  virtual ScanPlanStore& scan_plans() = 0;
};

// One request's writes, committed together or not at all: a signup's rows, an
// idempotency record with the resource it guards, an audit event with its action.
// Destroying it without Commit() rolls everything back. One write transaction runs at a
// time; while a thread holds one, that thread must write only through it (a write
// through the metastore itself fails with kInternal instead of deadlocking).
class WriteTransaction : public Stores {
 public:
  // kUnavailable when the database failed; then nothing was written.
  [[nodiscard]] virtual Result<void> Commit() = 0;
};

class Metastore : public Stores {
 public:
  // kUnavailable when the database cannot start a transaction.
  virtual Result<std::unique_ptr<WriteTransaction>> BeginWrite() = 0;
  virtual Result<void> Ping() = 0;
  // The embedded backup: copies the database as committed into a new file at `path`
  // while every write waits, and runs `while_frozen` before writes resume, so a snapshot
  // of another store taken there is of the same moment. kNotImplemented on PostgreSQL,
  // whose own tools (pg_dump) back it up.
  virtual Result<void> Backup(const std::string& path,
                              const std::function<Result<void>()>& while_frozen) = 0;
};

// Runs `fn(WriteTransaction&)` in a new transaction and commits it when fn succeeds.
template <typename F>
auto InTransaction(Metastore& meta, F&& fn) -> decltype(fn(std::declval<WriteTransaction&>())) {
  TM_ASSIGN(auto txn, meta.BeginWrite());
  auto result = fn(*txn);
  if (!result) return result;
  TM_TRY(txn->Commit());
  return result;
}

// Opens the SQLite metastore at `path` and applies pending migrations.
Result<std::unique_ptr<Metastore>> OpenSqliteMetastore(const std::string& path, const Clock& clock);

struct PostgresOptions {
  int max_connections = 16;
  // Bounds every statement, every lock wait and the wait for a free connection.
  int statement_timeout_ms = 30000;
};
// The metastore on a PostgreSQL database shared by any number of servers. `conninfo` is
// a libpq URI or key=value string (its password, if any, comes from PGPASSWORD or a
// passfile, never from here). Applies the migrations not yet applied; kUnavailable when
// the database cannot be reached.
Result<std::unique_ptr<Metastore>> OpenPostgresMetastore(const std::string& conninfo,
                                                         const PostgresOptions& options,
                                                         const Clock& clock);

}  // namespace tablemere::metastore
