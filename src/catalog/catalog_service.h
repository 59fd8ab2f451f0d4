// The Iceberg catalog: namespaces, tables, commits (optimistic compare-and-swap of the
// metadata pointer, atomic across tables), drops with background purge, and the
// vending of table-scoped storage sessions. Wire-neutral: the REST adapter maps
// requests to these calls and results to the Iceberg JSON shapes.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "accounts/credentials.h"
#include "catalog/catalog_support.h"
#include "catalog/catalog_tokens.h"
#include "catalog/commit_rebaser.h"
#include "catalog/drop_record.h"
#include "common/clock.h"
#include "iceberg/table_metadata.h"
#include "metastore/metastore.h"
#include "objectstore/object_store.h"
#include "storage/access.h"
#include "storage/session_token.h"

namespace tablemere::catalog {

struct LoadedTable {
  std::string metadata_location;  // "" for a staged create
  // The metadata document, serialized. It stays text from the metastore to the wire:
  // parsing and re-serialising a table with 100 snapshots (~50 KB) cost more than all
  // the rest of a loadTable together.
  std::string metadata_json;
  // When set, the document is this shared (cached) text instead of metadata_json:
  // loadTable then serves it without a copy.
  std::shared_ptr<const std::string> shared_metadata;
  const std::string& metadata_text() const {
    return shared_metadata ? *shared_metadata : metadata_json;
  }
  std::map<std::string, std::string> config;
  std::vector<StorageCredential> credentials;
};

// The head of the table a request names, read with its warehouse while the caller was
// authenticated (one read of the metastore), for LoadTable to use instead of reading again.
struct TableHead {
  TableIdent ident;
  std::optional<metastore::TableEntry> entry;  // nullopt: no entry of that name
};

// A verified caller and its warehouse, as every catalog request needs them.
struct AuthenticatedCaller {
  CatalogPrincipal principal;
  metastore::Warehouse warehouse;
  std::optional<TableHead> table_head;  // when authentication was asked to read one
};

struct TokenGrant {
  std::string access_token;
  int64_t expires_in = 0;
};

// Who sent a change: a client (through the REST API) or the server's own maintenance.
// Only a client's commit is rebased over maintenance, and only a client's schedules it.
enum class CommitOrigin { kClient, kMaintenance };

struct TableChange {
  TableIdent ident;
  Json requirements;  // array
  Json updates;       // array
  // The server's own commits only (maintenance): checked on every attempt against the
  // metadata the updates applied to and their result; an error refuses the commit. No
  // client request sets it.
  std::function<Result<void>(const Json& base, const Json& next)> guard;
  CommitOrigin origin = CommitOrigin::kClient;
};

struct CatalogOptions {
  std::string s3_url;             // public S3 endpoint vended to engines
  int64_t session_seconds = 900;  // vended storage session lifetime
  int commit_retries = 4;         // server-side retries of a lost CAS
};

class CatalogService {
 public:
  CatalogService(metastore::Metastore& meta, objectstore::ObjectStore& objects, const Clock& clock,
                 Random& random, const storage::SessionSealer& sealer,
                 const accounts::IdentitySecrets& secrets, const CatalogTokens& tokens,
                 CatalogOptions options);

  // ---- authentication (kUnauthenticated with detail oauth_error on failure)
  Result<TokenGrant> ClientCredentials(const std::string& client_id, const std::string& secret);
  Result<TokenGrant> ExchangeToken(const std::string& subject_token);
  // Verifies a bearer token and that its warehouse credential is still current.
  Result<CatalogPrincipal> Authenticate(const std::string& bearer);

  // ---- warehouse / prefix
  // Accepts "w-<id>", "s3://w-<id>/", the id, or "" (the token's own warehouse).
  // kPermissionDenied when it is not the caller's warehouse, kNotFound when unknown.
  Result<metastore::Warehouse> Warehouse(const CatalogPrincipal& caller, const std::string& name);
  // Authenticate then Warehouse, with one metastore lookup instead of two (the lookup
  // that checks the generation also yields the warehouse). Same errors as the pair.
  // `table`, when given, is read along with the warehouse (AuthenticatedCaller::table_head).
  Result<AuthenticatedCaller> AuthenticateFor(const std::string& bearer, const std::string& name,
                                              const TableIdent* table = nullptr);
  // A caller without a token: an anonymous read-only principal when `name` names a
  // published warehouse; kUnauthenticated otherwise (an unknown or private warehouse
  // answers the same, so names are not probed).
  Result<AuthenticatedCaller> AuthenticateAnonymous(const std::string& name);
  static std::string PrefixOf(const metastore::Warehouse& w) {
    return storage::TableBucketName(w.id);
  }
  // The warehouse's files and vended sessions, shared with the view and generic-table
  // services.
  WarehouseFiles& files() { return files_; }
  metastore::Metastore& metastore() { return meta_; }
  // Fails (kConflict) when `location` overlaps a generic table's base location, as
  // `stores` (the metastore, or a create's transaction) sees them: that table's sessions may
  // write and delete anything there.
  Result<void> CheckOutsideGenericTables(metastore::Stores& stores, const metastore::Warehouse& w,
                                         const std::string& location);
  // Fails when an entry other than `self` has a location overlapping `location`.
  Result<void> CheckLocationFree(metastore::Stores& stores, const metastore::Warehouse& w,
                                 const TableIdent& self, const std::string& location);
  // A step a caller adds to the transaction that creates an entry (the control API's
  // Idempotency-Key record); its failure undoes the create.
  using AlsoInCreate =
      std::function<Result<void>(metastore::Stores&, const metastore::TableEntry&)>;
  // Creates `entry` (a table, view or generic table) in one transaction with `check`, which
  // reads through the transaction: two creates at overlapping locations cannot both pass
  // their checks. kAlreadyExists when the name is taken; `check`'s and `also`'s errors as
  // they are.
  Result<void> CreateEntry(const metastore::TableEntry& entry,
                           const std::function<Result<void>(metastore::Stores&)>& check,
                           const AlsoInCreate& also = {});

  // ---- namespaces
  Result<std::vector<Namespace>> ListNamespaces(const metastore::Warehouse& w,
                                                const Namespace& parent);
  Result<Json> CreateNamespace(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                               const Namespace& ns, const Json& properties);
  Result<Json> LoadNamespace(const metastore::Warehouse& w, const Namespace& ns);  // properties
  Result<void> DropNamespace(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                             const Namespace& ns);
  // Returns {updated, removed, missing}.
  Result<Json> UpdateNamespaceProperties(const CatalogPrincipal& caller,
                                         const metastore::Warehouse& w, const Namespace& ns,
                                         const std::vector<std::string>& removals,
                                         const Json& updates);

  // ---- tables
  Result<std::vector<TableIdent>> ListTables(const metastore::Warehouse& w, const Namespace& ns);
  // `also` runs in the transaction that creates the table (not for a staged create).
  Result<LoadedTable> CreateTable(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                                  const Namespace& ns, const Json& request, bool vend,
                                  const AlsoInCreate& also = {});
  // `head`: the table's head as authentication read it (used when it is of `ident`).
  Result<LoadedTable> LoadTable(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                                const TableIdent& ident, bool vend, bool refs_only,
                                const TableHead* head = nullptr);
  Result<LoadedTable> RegisterTable(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                                    const Namespace& ns, const std::string& name,
                                    const std::string& metadata_location, bool overwrite);
  // One table (`changes.size() == 1`) or a multi-table transaction; all or nothing.
  // Told of every table a client commit changed, after it is published (never of
  // maintenance's own commits), so maintenance can follow the writes. Set before serving.
  using CommitObserver = std::function<void(const metastore::Warehouse&, const TableIdent&)>;
  void SetCommitObserver(CommitObserver observer) { commit_observer_ = std::move(observer); }
  // What re-applies a client commit on a head maintenance moved (src/maintenance's
  // WorkerRebaser); without one such commits are answered 409. Set before serving.
  void SetCommitRebaser(CommitRebaser* rebaser) { rebaser_ = rebaser; }
  Result<std::vector<LoadedTable>> Commit(const CatalogPrincipal& caller,
                                          const metastore::Warehouse& w,
                                          const std::vector<TableChange>& changes);
  Result<void> DropTable(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                         const TableIdent& ident, bool purge);
  Result<void> RenameTable(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                           const TableIdent& from, const TableIdent& to);
  Result<std::vector<StorageCredential>> TableCredentials(const CatalogPrincipal& caller,
                                                          const metastore::Warehouse& w,
                                                          const TableIdent& ident);

  // ---- version hints (version_hints.cc). A published warehouse's tables are read without
  // a catalog (DuckDB's iceberg_scan of the table's directory, PyIceberg's StaticTable), and
  // those readers find the current metadata file through
  // <location>/metadata/version-hint.text, which holds its name without ".metadata.json".
  // Kept current after every commit, create and register while the warehouse is
  // published; orphan cleanup leaves it. Writes every table's hint (at publishing) and
  // returns how many were written; a table whose metadata lies outside its location's
  // metadata/ folder gets none.
  Result<int> WriteVersionHints(const metastore::Warehouse& w);
  // The hint's location for a table, or "" when it can have none.
  static std::string VersionHintLocation(const std::string& location,
                                         const std::string& metadata_location);

 private:
  // Brings one table's hint up to date when `w` is published; a failure is logged (the
  // commit stands) and the next commit or publish writes it again.
  void KeepVersionHint(const metastore::Warehouse& w, const Namespace& ns, const std::string& name);
  Result<bool> WriteVersionHint(const metastore::Warehouse& w, const Namespace& ns,
                                const std::string& name);
  CommitObserver commit_observer_;
  CommitRebaser* rebaser_ = nullptr;
  // How long after the last session for a dropped table ends its purge starts: a request
  // signed just before the expiry may still be arriving.
  static constexpr int64_t kPurgeGraceMs = 2000;
  static std::string RefreshEndpoint(const metastore::Warehouse& w, const TableIdent& ident);
  // The newest drop of `ident` by the caller within one session lifetime, if any (read
  // from the drop's task row; see drop_record.h).
  Result<std::optional<DropRecord>> RecentDropBy(const CatalogPrincipal& caller,
                                                 const TableIdent& ident);
  std::string DefaultLocation(const metastore::Warehouse& w, const TableIdent& ident) const;
  // DefaultLocation, or a suffixed sibling when objects already live there (a renamed
  // table's directory, or a dropped one's files awaiting their purge task).
  Result<std::string> FreeDefaultLocation(const metastore::Warehouse& w, const TableIdent& ident);
  // Fails when another entry's location overlaps `prefix` (a key ending in '/').
  Result<void> CheckSolePrefix(const metastore::Warehouse& w, const TableIdent& self,
                               const std::string& prefix);
  Result<std::string> KeyOf(const metastore::Warehouse& w, const std::string& location) const {
    return files_.KeyOf(w, location);
  }
  Result<Json> ReadMetadataFile(const metastore::Warehouse& w, const std::string& location);
  // `location` is the table's (its metadata's "location").
  void AttachCredentials(LoadedTable& table, const CatalogPrincipal& caller,
                         const metastore::Warehouse& w, const TableIdent& ident,
                         const std::string& location, bool vend);

  metastore::Metastore& meta_;
  objectstore::ObjectStore& objects_;
  const Clock& clock_;
  Random& random_;
  const storage::SessionSealer& sealer_;
  const accounts::IdentitySecrets& secrets_;
  const CatalogTokens& tokens_;
  CatalogOptions options_;
  WarehouseFiles files_;

  // Metadata documents by metadata location. A location names an immutable file, so an
  // entry never goes stale; loadTable then reads only the small pointer row. Bounded by
  // total size (kMetadataCacheBytes), cleared wholesale when full.
  std::shared_ptr<const std::string> CachedMetadata(const std::string& location);
  void CacheMetadata(const std::string& location, const std::string& text);
  static constexpr size_t kMetadataCacheBytes = 64 * 1024 * 1024;
  std::mutex metadata_cache_mu_;
  std::unordered_map<std::string, std::shared_ptr<const std::string>> metadata_cache_;
  size_t metadata_cache_bytes_ = 0;  // protected by metadata_cache_mu_
};

// "a\x1fb" and "a%1Fb" → {"a", "b"}; empty parts are invalid.
Result<Namespace> ParseNamespace(const std::string& text);

}  // namespace tablemere::catalog
