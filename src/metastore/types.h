// Records kept in the metastore. Plain data; the services give them meaning.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ids.h"

namespace tablemere::metastore {

// Closed sets stored as text columns; Name() gives the stored and wire spelling and
// Parse*() the reverse (nullopt for anything else, so a bad row or request is refused).
enum class PrincipalKind { kHuman, kAgent };
enum class Role { kAdmin, kMember };
enum class Level { kNone, kRead, kWrite };

const char* Name(PrincipalKind kind);
const char* Name(Role role);
const char* Name(Level level);
std::optional<PrincipalKind> ParsePrincipalKind(std::string_view text);
// "owner" is accepted as an alias of admin for one version (API reference), never returned.
std::optional<Role> ParseRole(std::string_view text);
std::optional<Level> ParseLevel(std::string_view text);
// read < write; none below both.
inline bool AtLeast(Level held, Level wanted) {
  return static_cast<int>(held) >= static_cast<int>(wanted);
}

struct Principal {
  PrincipalId id;  // "p_…" / "a_…"
  PrincipalKind kind = PrincipalKind::kHuman;
  std::string email;  // humans
  std::string display_name;
  OrgId org_id;               // agents: the organisation that owns them
  Role role = Role::kMember;  // agents: their organisation role
  PrincipalId created_by;     // agents: creating principal
  int64_t created_ms = 0;
  bool suspended = false;
};

struct ApiKey {
  std::string key_id;
  PrincipalId principal_id;
  std::string secret_hash;  // hex SHA-256 of the secret; the secret is never stored
  int64_t created_ms = 0;
  bool revoked = false;
  std::string label;         // the caller's name for it ("ci"); "" for a signup's first key
  int64_t revoked_ms = 0;    // 0 while live
  int64_t last_used_ms = 0;  // to the minute (recorded at most once a minute); 0: never
};

struct Organization {
  OrgId id;
  std::string name;
  std::string handle;
  int64_t created_ms = 0;
  std::string status = "active";  // "pending" until a form signup is verified
  bool domain_join = false;       // people on a claimed domain may join
};

struct Membership {
  OrgId org_id;
  PrincipalId principal_id;
  Role role = Role::kMember;
  int64_t created_ms = 0;
  std::string joined_via;  // "signup" | "invitation" | "domain" | "agent" | …
  // Read from the member's principal (MembersOf); not written by PutMember.
  PrincipalKind kind = PrincipalKind::kHuman;
};

// An email domain an organisation claimed; one organisation per domain.
struct OrgDomain {
  std::string domain;  // lowercase
  OrgId org_id;
  std::string verified_via;  // "email:<the claimer's address>"
  int64_t created_ms = 0;
};

// An invitation to join an organisation. Only the hash of its token is kept.
struct Invitation {
  std::string token_hash;
  OrgId org_id;
  std::string email;  // lowercase
  Role role = Role::kMember;
  PrincipalId invited_by;
  int64_t created_ms = 0;
  int64_t expires_ms = 0;
  int64_t accepted_ms = 0;  // 0 while open
};

// A code mailed to an address (signup, recovery), kept as a keyed hash; `sealed_code`
// holds it encrypted only on development stacks without mail (the internal route reads
// it). `payload_json` carries what the start call asked for (workspace, form fields).
struct PendingCode {
  std::string purpose;  // "signup" | "recover"
  std::string email;    // lowercase
  std::string code_hash;
  std::string sealed_code;
  std::string payload_json = "{}";
  int64_t created_ms = 0;
  int64_t expires_ms = 0;
  int attempts = 0;  // wrong codes so far
};

// A person's password: an argon2id hash in its encoded form (parameters and salt
// included); the password itself is never stored.
struct PasswordRecord {
  PrincipalId principal_id;
  std::string hash;
  int64_t changed_ms = 0;
};

// A login session (POST /v1/auth/login and friends). Only hashes of refresh tokens are
// kept: the current one, and the one it replaced (presenting that again revokes the
// session: a stolen token was used).
struct Session {
  std::string id;  // "s_…"
  PrincipalId principal_id;
  std::string refresh_hash;
  std::string previous_refresh_hash;
  int64_t created_ms = 0;
  int64_t last_used_ms = 0;
  int64_t expires_ms = 0;  // slides with each refresh
  int64_t revoked_ms = 0;  // 0 while live
  std::string user_agent;
  std::string ip;
};

// A mailed link token (set-password after the signup form, password reset), kept as a
// hash; `sealed_token` only on development stacks without mail. Spent once.
struct LoginLink {
  std::string token_hash;
  std::string purpose;  // "set_password" | "reset_password"
  std::string email;    // lowercase
  std::string sealed_token;
  std::string payload_json = "{}";
  int64_t created_ms = 0;
  int64_t expires_ms = 0;
  int64_t used_ms = 0;  // 0 while unspent
};

// An RFC 8628 device authorisation: the CLI polls with the device code (kept hashed),
// a person approves the user code.
struct DeviceGrant {
  std::string device_code_hash;
  std::string user_code;  // "XXXX-XXXX"
  std::string client;
  std::string hostname;
  std::string client_name;
  Level requested_level = Level::kWrite;
  std::string warehouse_ids_json = "[]";  // what the CLI asked for
  int64_t created_ms = 0;
  int64_t expires_ms = 0;
  int interval_s = 5;
  int64_t last_poll_ms = 0;
  std::string status = "pending";  // pending | approved | denied | consumed
  PrincipalId agent_id;            // set on approval
  PrincipalId approved_by;
};

// One measurement of a warehouse's footprint (its table and blob buckets).
struct UsageSample {
  WarehouseId warehouse_id;
  int64_t at_ms = 0;
  int64_t table_bytes = 0;
  int64_t table_objects = 0;
  int64_t blob_bytes = 0;
  int64_t blob_objects = 0;
  // The S3 traffic of both buckets as cumulative counters of the process that took the
  // sample (-1: none); `counter_epoch` names that process's counters, so a restart (the
  // counters start again from zero) is told from traffic.
  int64_t requests = -1;
  int64_t requests_failed = -1;
  int64_t bytes_in = -1;
  int64_t bytes_out = -1;
  std::string counter_epoch;
};

// What a rate limit decided.
struct RateDecision {
  bool allowed = true;
  int count = 0;               // events in the window, this one included when allowed
  int64_t retry_after_ms = 0;  // when refused: until the oldest event leaves the window
};

// One acceptance of a Terms version.
struct TermsAcceptance {
  PrincipalId principal_id;
  std::string version;
  int64_t accepted_ms = 0;
  std::string via;  // "signup" | "accept"
};

struct Project {
  ProjectId id;
  OrgId org_id;
  std::string name;
  int64_t created_ms = 0;
};

// A POST that carried an Idempotency-Key: which resource the first call created, so a
// replay answers with it and the key is refused on any other endpoint.
struct IdempotencyRecord {
  PrincipalId principal_id;
  std::string key;
  std::string endpoint;  // "POST /v1/projects"
  std::string resource_id;
  int64_t created_ms = 0;
  // SHA-256 (hex) of the first request's canonical body: the same key with another body
  // is refused, not replayed. "" for records kept before it was recorded (replayed).
  std::string request_hash;
};

struct Warehouse {
  WarehouseId id;  // uuid; buckets are w-<id> and b-<id>, identities t-<id>[-ro]
  ProjectId project_id;
  OrgId org_id;
  std::string name;
  int64_t credential_generation = 1;  // bumped by rotation; old secrets/tokens die
  int64_t created_ms = 0;
  int64_t published_ms = 0;  // when it was made public (anonymous reads); 0: private
  // When the quota enforcement pass made its buckets read-only (the organisation is over
  // its storage limit); 0: writable. Deletes stay allowed, so space can be freed.
  int64_t read_only_ms = 0;
  // When its REST catalog was opened for anonymous list and load (an opt-in beyond the
  // storage-level publishing); 0: the catalog needs a token. Only while published.
  int64_t catalog_public_ms = 0;
};

// An explicit grant. Level kNone records a membership read an admin revoked.
struct Grant {
  WarehouseId warehouse_id;
  PrincipalId principal_id;
  Level level = Level::kRead;
  PrincipalId granted_by;
  int64_t granted_ms = 0;
};

struct Namespace {
  std::string warehouse_id;
  std::vector<std::string> levels;
  std::string properties_json = "{}";
};

// A catalog entry: an Iceberg table, a view, or a generic (Lakekeeper) table.
struct TableEntry {
  std::string warehouse_id;
  std::vector<std::string> namespace_levels;
  std::string name;
  std::string kind;  // "table" | "view" | "generic"
  std::string uuid;
  std::string location;           // "s3://w-…/ns/name"
  std::string metadata_location;  // current metadata file (tables and views)
  std::string metadata_json;      // current metadata document (or generic-table record)
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
};

// One compare-and-swap of a table's metadata pointer.
struct MetadataSwap {
  std::string warehouse_id;
  std::vector<std::string> namespace_levels;
  std::string name;
  std::string expected_metadata_location;  // "" for a create
  TableEntry replacement;                  // full new row
};

// Who did what: one audit event. `detail_json` is an object.
struct AuditEvent {
  int64_t id = 0;
  int64_t at_ms = 0;
  std::string principal_id;  // a principal, or a warehouse identity (t-<uuid>) for catalog calls
  std::string org_id;
  std::string action;       // "credentials.vend", "warehouse.rotate", …
  std::string target_type;  // "generic_table", "warehouse", …
  std::string target_id;
  std::string request_id;
  std::string detail_json = "{}";
  std::string ip;  // the caller's address; "" when the event has no request behind it
};

// A task to enqueue together with another write (in the same transaction).
struct NewTask {
  std::string kind;
  std::string payload_json;
  // How long after the enqueueing transaction the task becomes runnable: a drop's
  // purge waits out the sessions a client may still be purging with.
  int64_t delay_ms = 0;
};

struct Task {
  int64_t id = 0;
  std::string kind;  // "purge_prefix"
  std::string payload_json;
  int attempts = 0;  // earlier claims
  // This claim's number (attempts after claiming): fences Complete and Retry, so a worker
  // whose lease ran out and was taken over cannot record a result.
  int claim = 0;
};

// A bucket's stored bytes and objects, counted as objects are written and deleted and
// corrected by a listing now and then (`reconciled_ms`: the last one; 0: never, or a
// write whose size change was unknown since).
struct BucketUsage {
  int64_t bytes = 0;
  int64_t objects = 0;
  int64_t reconciled_ms = 0;
};

// An S3 bucket as the S3 front end knows it: registered here, whichever object store
// holds its bytes, so every replica sees the same buckets and attributes.
struct S3Bucket {
  std::string name;
  int64_t created_ms = 0;
  std::string acl;   // canned ACL; "" is private
  std::string cors;  // the CORS configuration as S3 XML; "" when none
  std::map<std::string, std::string> tags;
  BucketUsage usage;     // read-only here: changed by AddUsage and ReconcileUsage
  std::string location;  // the LocationConstraint it was created with; "" is the server's region
  // The PublicAccessBlock switches, encoded as objectstore::EncodePublicAccessBlock does;
  // "" when the bucket has none.
  std::string public_access_block;
  std::string versioning;  // "" (never enabled), "Enabled" or "Suspended"
  // The object lock configuration, encoded as objectstore::EncodeObjectLock does; "" none.
  std::string object_lock;
};

// A version of an S3 object that is not its current one (the current version is the
// object under its own key in the object store), or a delete marker (current when it
// is the newest and no object is under the key).
struct ObjectVersion {
  std::string bucket;
  std::string key;
  std::string version_id;  // "null" for the null version
  int64_t seq = 0;         // newer versions of a key have larger numbers (set by AddVersion)
  bool delete_marker = false;
  uint64_t size = 0;
  std::string etag;  // unquoted
  int64_t modified_ms = 0;
};

// A change to a bucket's usage counters.
struct UsageDelta {
  std::string bucket;
  int64_t bytes = 0;
  int64_t objects = 0;
  bool uncertain = false;  // a write whose size change is unknown: relist the bucket
};

// A change to a bucket's attributes; each set field replaces the old value.
struct S3BucketChange {
  std::optional<std::string> acl;
  std::optional<std::string> cors;
  std::optional<std::map<std::string, std::string>> tags;
  std::optional<std::string> public_access_block;  // "" removes it
  std::optional<std::string> versioning;
  std::optional<std::string> object_lock;
};

}  // namespace tablemere::metastore
