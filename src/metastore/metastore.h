// The metastore interface: all durable state except object bytes. Narrow stores per
// subsystem; the SQLite backend implements them all (PostgreSQL later, same contract).
// Every method is atomic and thread-safe. Errors: kNotFound, kAlreadyExists, kConflict
// (a lost compare-and-swap), kUnavailable (the database failed).
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

class AccountStore {
 public:
  virtual ~AccountStore() = default;
  // Creates a human, their key, an organisation they administer, a project and a
  // warehouse (with a write grant) in one transaction. kAlreadyExists when the email is
  // taken or the handle is.
  virtual Result<void> CreateSignup(const Principal& human, const ApiKey& key,
                                    const Organization& org, const Project& project,
                                    const Warehouse& warehouse) = 0;
  // Creates an agent with its key and grants in one transaction (kAlreadyExists: name).
  virtual Result<void> CreateAgent(const Principal& agent, const ApiKey& key,
                                   const std::vector<Grant>& grants) = 0;
  virtual Result<ApiKey> FindApiKey(const std::string& key_id) = 0;
  // Another key for an existing principal.
  virtual Result<void> CreateApiKey(const ApiKey& key) = 0;
  // The principal's keys, oldest first, revoked ones included.
  virtual Result<std::vector<ApiKey>> ApiKeysOf(const std::string& principal_id) = 0;
  // Revokes one of the principal's keys at `at_ms`; kNotFound when the key is not the
  // principal's. Revoking a revoked key keeps its first revocation time.
  virtual Result<ApiKey> RevokeApiKey(const std::string& principal_id, const std::string& key_id,
                                      int64_t at_ms) = 0;
  // Whether an organisation holds this handle.
  virtual Result<bool> HandleTaken(const std::string& handle) = 0;
  virtual Result<Principal> FindPrincipal(const std::string& principal_id) = 0;
  // Organisations the principal belongs to, with its role (agents: their own org).
  virtual Result<std::vector<std::pair<Organization, std::string>>> OrgsOf(
      const std::string& principal_id) = 0;
  virtual Result<std::vector<Warehouse>> WarehousesOfOrg(const std::string& org_id) = 0;
  virtual Result<Warehouse> FindWarehouse(const std::string& warehouse_id) = 0;
  virtual Result<std::vector<Grant>> GrantsOf(const std::string& principal_id) = 0;
  virtual Result<std::vector<Project>> ProjectsOfOrg(const std::string& org_id) = 0;
  virtual Result<Project> FindProject(const std::string& project_id) = 0;
  // Creates a project and, when given, the idempotency record of the call, together.
  // kAlreadyExists (reason "name") when the organisation has a project of that name;
  // kConflict (reason "idempotency_key") when the caller used the key before.
  virtual Result<void> CreateProject(const Project& project,
                                     const std::optional<IdempotencyRecord>& idempotency) = 0;
  virtual Result<std::optional<IdempotencyRecord>> FindIdempotency(const std::string& principal_id,
                                                                   const std::string& key) = 0;
  // Bumps the generation; returns the new warehouse record.
  virtual Result<Warehouse> RotateWarehouse(const std::string& warehouse_id) = 0;
  // Records/reads/clears who created an operator bucket ("user:<access key>").
  virtual Result<void> SetBucketOwner(const std::string& bucket, const std::string& owner) = 0;
  virtual Result<std::string> BucketOwner(const std::string& bucket) = 0;
  virtual Result<void> ClearBucketOwner(const std::string& bucket) = 0;
};

// A compare-and-swap that lost its race: kConflict with this reason, so callers tell a
// moved pointer (retry) from other conflicts without reading messages.
inline constexpr char kStalePointer[] = "stale_pointer";
inline Error StalePointer() {
  return Error{ErrorCode::kConflict, "the table was changed concurrently", {}}.With("reason",
                                                                                    kStalePointer);
}
inline bool IsStalePointer(const Error& e) {
  return e.code == ErrorCode::kConflict && e.Detail("reason") == kStalePointer;
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
  // so a crash can never drop a table without its purge.
  using DropFollowUp = std::function<std::optional<NewTask>(const TableEntry&)>;
  virtual Result<TableEntry> DropEntry(const std::string& warehouse_id,
                                       const std::vector<std::string>& ns, const std::string& name,
                                       const std::string& kind,
                                       const DropFollowUp& follow_up = nullptr) = 0;
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
  // Leases the oldest runnable task for `lease_ms`; nullopt when there is none.
  virtual Result<std::optional<Task>> Claim(int64_t lease_ms) = 0;
  virtual Result<void> Complete(int64_t task_id) = 0;
  // Makes the task runnable again after `delay_ms`.
  virtual Result<void> Retry(int64_t task_id, int64_t delay_ms) = 0;
  // Every queued task of `kind` (runnable, leased or delayed), oldest first.
  virtual Result<std::vector<Task>> ListOfKind(const std::string& kind) = 0;
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

class Metastore {
 public:
  virtual ~Metastore() = default;
  virtual AccountStore& accounts() = 0;
  virtual CatalogStore& catalog() = 0;
  virtual TaskStore& tasks() = 0;
  virtual AuditStore& audit() = 0;
  virtual Result<void> Ping() = 0;
};

// Opens the SQLite metastore at `path` and applies pending migrations.
Result<std::unique_ptr<Metastore>> OpenSqliteMetastore(const std::string& path, const Clock& clock);

}  // namespace tablemere::metastore
