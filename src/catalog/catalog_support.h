// What the catalog's services share: identifier helpers, the write check, and the
// warehouse's files — metadata documents in the table bucket and the storage sessions
// vended for a location.
#pragma once

#include <atomic>

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/catalog_tokens.h"
#include "common/clock.h"
#include "common/result.h"
#include "metastore/types.h"
#include "objectstore/object_store.h"
#include "storage/access.h"
#include "storage/session_token.h"

namespace tablemere::catalog {

using Json = nlohmann::json;
using Namespace = std::vector<std::string>;

struct TableIdent {
  Namespace ns;
  std::string name;
};

struct StorageCredential {
  std::string prefix;  // "s3://w-…/ns/t/"
  std::map<std::string, std::string> config;
};

std::string JoinPath(const Namespace& ns);    // "a/b"
std::string JoinDots(const Namespace& ns);    // "a.b"
std::string JoinNsWire(const Namespace& ns);  // "a\x1f" "b"
bool ValidName(const std::string& name);
Error BadRequest(const std::string& message);
Error Forbidden(const std::string& message);
// The read-only identity may read but never change the catalog; over quota, a warehouse
// takes only drops (RequireDelete), which free space.
Result<void> RequireWrite(const CatalogPrincipal& caller);
Result<void> RequireDelete(const CatalogPrincipal& caller);
// "Table"/"View"/"Generic table" for an entry kind, for messages.
std::string KindNoun(const std::string& kind);
// A name that is taken, in the reference implementation's words (Iceberg Java's
// catalogs; engines show them and tools match on them): "Table already exists: ns.t"
// when `existing_kind` is the kind asked for, else "View with same name already
// exists: ns.t". The detail "existing_kind" names what is there.
Error NameTaken(const std::string& wanted_kind, const std::string& existing_kind,
                const TableIdent& ident);
// "Cannot rename ns.a to ns.b. View already exists".
Error RenameTargetTaken(const TableIdent& from, const TableIdent& to,
                        const std::string& existing_kind);
// A document the catalog stored itself (an entry's metadata, a generic table's record),
// parsed without throwing: a stored document that is not a JSON object is corruption,
// kInternal naming `what` ("table ns.t"), never a client's 400.
Result<Json> ParseStored(const std::string& text, const std::string& what);
// A stored member read without throwing: `fallback` when absent or null, kInternal
// naming `what` and the member when it has another type.
Result<std::string> StoredString(const Json& doc, const std::string& key,
                                 const std::string& fallback, const std::string& what);
Result<int64_t> StoredInt(const Json& doc, const std::string& key, int64_t fallback,
                          const std::string& what);
Result<bool> StoredBool(const Json& doc, const std::string& key, bool fallback,
                        const std::string& what);
// The version number of ".../metadata/00042-<uuid>.metadata.json", or -1.
int VersionOf(const std::string& metadata_location);

class WarehouseFiles {
 public:
  WarehouseFiles(objectstore::ObjectStore& objects, const Clock& clock, Random& random,
                 const storage::SessionSealer& sealer, std::string s3_url, int64_t session_seconds)
      : objects_(objects),
        clock_(clock),
        random_(random),
        sealer_(sealer),
        s3_url_(std::move(s3_url)),
        session_seconds_(session_seconds) {}

  static std::string Bucket(const metastore::Warehouse& w) {
    return storage::TableBucketName(w.id);
  }
  static std::string Root(const metastore::Warehouse& w) { return "s3://" + Bucket(w) + "/"; }
  // The object key of a location inside the warehouse's table bucket; kInvalidInput when
  // the location is elsewhere.
  Result<std::string> KeyOf(const metastore::Warehouse& w, const std::string& location) const;
  // Whether any object exists below `location` + "/".
  Result<bool> Occupied(const metastore::Warehouse& w, const std::string& location);
  // Writes `<location>/metadata/<version:05d>-<uuid>.metadata.json`; returns its location.
  Result<std::string> WriteMetadata(const metastore::Warehouse& w, const std::string& location,
                                    int version, const Json& document);
  // Deletes a file this catalog wrote and no pointer references (a commit that lost its
  // race). Best effort: what is left is an orphan, never a visible file.
  void DiscardUnreferenced(const metastore::Warehouse& w, const std::string& location);
  // Reads a JSON document; kInvalidInput when it is missing or not JSON.
  Result<Json> ReadJson(const metastore::Warehouse& w, const std::string& location);
  // Reads a whole file of at most `max_bytes`. Errors: kNotFound, kInvalidInput (larger).
  Result<std::string> ReadBytes(const metastore::Warehouse& w, const std::string& location,
                                size_t max_bytes);
  // Every object below `location` + "/" (all pages).
  Result<std::vector<objectstore::ObjectInfo>> ListUnder(const metastore::Warehouse& w,
                                                         const std::string& location);
  // Hadoop's spellings of S3 (`s3a://`, `s3n://`) name the same object as `s3://`: the
  // one spelling locations are compared and resolved in.
  static std::string Canonical(std::string location);
  // The location of an object key of the warehouse's table bucket.
  static std::string LocationOf(const metastore::Warehouse& w, const std::string& key) {
    return Root(w) + key;
  }
  // Writes a whole file of the table bucket (a manifest, a manifest list). Nothing is
  // visible until it is complete.
  Result<void> WriteBytes(const metastore::Warehouse& w, const std::string& location,
                          std::string_view bytes, const std::string& content_type);
  // Copies a file of the table bucket to a local file, streaming; returns its size.
  Result<int64_t> CopyToFile(const metastore::Warehouse& w, const std::string& location,
                             const std::string& path);
  // Uploads a local file to the table bucket, streaming; returns its size.
  Result<int64_t> PutFile(const metastore::Warehouse& w, const std::string& location,
                          const std::string& path);
  // Deletes a file of the warehouse's table bucket (kNotFound when it is not there).
  Result<void> Delete(const metastore::Warehouse& w, const std::string& location);
  // The endpoint and region every client needs (no secrets).
  std::map<std::string, std::string> BaseConfig() const;
  // A session scoped to `location` (read-only when the caller is); `format` ("" for
  // Iceberg) decides which files it may write there. A session sealed for the same
  // scope is handed out again while most of its lifetime remains (see
  // kSessionReuseNumerator); its expiry is reported as sealed. `not_after_ms` (0: none)
  // caps the expiry; a capped session is sealed afresh. Thread-safe.
  StorageCredential Vend(const CatalogPrincipal& caller, const metastore::Warehouse& w,
                         const std::string& location, const std::string& refresh_endpoint,
                         const std::string& format, int64_t not_after_ms = 0);
  int64_t session_seconds() const { return session_seconds_; }

  // What the metrics page reports, counted by the commit loop and by Vend.
  struct Counters {
    std::atomic<uint64_t> commits{0};
    std::atomic<uint64_t> commit_conflicts{0};
    std::atomic<uint64_t> commit_rebases{0};  // client commits rebased over maintenance
    std::atomic<uint64_t> vended_sessions{0};
  };
  Counters& counters() { return counters_; }

 private:
  // Everything a sealed session depends on but its expiry: (warehouse, generation,
  // prefix, read-only, format). The generation makes rotation start a fresh session.
  using SessionScope = std::tuple<std::string, int64_t, std::string, bool, std::string>;

  // A session is reused only while at least this share of its lifetime remains, so each
  // caller still gets most of a full lifetime, while loadTable under load seals one
  // session per table every quarter lifetime instead of one per request.
  static constexpr int64_t kSessionReuseNumerator = 3;
  static constexpr int64_t kSessionReuseDenominator = 4;
  // Scopes remembered at once: about one per table being read concurrently; past it the
  // cache is emptied, which costs only a reseal per table.
  static constexpr size_t kMaxCachedSessions = 4096;

  storage::IssuedSession SessionFor(const storage::SessionGrant& grant);

  objectstore::ObjectStore& objects_;
  const Clock& clock_;
  Random& random_;
  const storage::SessionSealer& sealer_;
  Counters counters_;
  std::string s3_url_;
  int64_t session_seconds_;

  // State below is protected by sessions_mu_.
  std::mutex sessions_mu_;
  std::map<SessionScope, storage::IssuedSession> sessions_;
};

}  // namespace tablemere::catalog
