// Records kept in the metastore. Plain data; the services give them meaning.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tablemere::metastore {

struct Principal {
  std::string id;     // "p_…" / "a_…"
  std::string kind;   // "human" | "agent"
  std::string email;  // humans
  std::string display_name;
  std::string org_id;      // agents: the organisation that owns them
  std::string role;        // agents: "admin" | "member"
  std::string created_by;  // agents: creating principal
  int64_t created_ms = 0;
  bool suspended = false;
};

struct ApiKey {
  std::string key_id;
  std::string principal_id;
  std::string secret_hash;  // hex SHA-256 of the secret; the secret is never stored
  int64_t created_ms = 0;
  bool revoked = false;
  std::string label;       // the caller's name for it ("ci"); "" for a signup's first key
  int64_t revoked_ms = 0;  // 0 while live
};

struct Organization {
  std::string id;
  std::string name;
  std::string handle;
  int64_t created_ms = 0;
};

struct Membership {
  std::string org_id;
  std::string principal_id;
  std::string role;  // "admin" | "member"
};

struct Project {
  std::string id;
  std::string org_id;
  std::string name;
  int64_t created_ms = 0;
};

// A POST that carried an Idempotency-Key: which resource the first call created, so a
// replay answers with it and the key is refused on any other endpoint.
struct IdempotencyRecord {
  std::string principal_id;
  std::string key;
  std::string endpoint;  // "POST /v1/projects"
  std::string resource_id;
  int64_t created_ms = 0;
};

struct Warehouse {
  std::string id;  // uuid; buckets are w-<id> and b-<id>, identities t-<id>[-ro]
  std::string project_id;
  std::string org_id;
  std::string name;
  int64_t credential_generation = 1;  // bumped by rotation; old secrets/tokens die
  int64_t created_ms = 0;
};

struct Grant {
  std::string warehouse_id;
  std::string principal_id;
  std::string level;  // "read" | "write"
  std::string granted_by;
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
  int attempts = 0;
};

}  // namespace tablemere::metastore
