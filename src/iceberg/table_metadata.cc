#include "iceberg/table_metadata.h"

#include "iceberg/json_access.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace tablemere::iceberg {
namespace {

constexpr int64_t kMinFormatVersion = 1;
constexpr int64_t kMaxFormatVersion = 3;
constexpr int64_t kDefaultFormatVersion = 2;
constexpr int64_t kRowLineageFormatVersion = 3;
// Partition field ids start here so they never collide with column ids in files.
constexpr int64_t kPartitionDataIdStart = 1000;
constexpr int64_t kUnpartitionedLastAssignedId = kPartitionDataIdStart - 1;
constexpr int64_t kUnsortedOrderId = 0;
constexpr int64_t kInitialSortOrderId = 1;
constexpr int64_t kLastAdded = -1;
constexpr int64_t kDefaultPreviousVersionsMax = 100;
// Bounds recursion on client-supplied nested types.
constexpr int kMaxTypeDepth = 100;
constexpr const char* kMainBranch = "main";

// Properties the reference never persists because they are derived or control
// table creation (TableProperties.RESERVED_PROPERTIES).
const std::set<std::string>& ReservedProperties() {
  static const std::set<std::string> kReserved = {
      "format-version",           "uuid",
      "snapshot-count",           "current-snapshot-id",
      "current-snapshot-summary", "current-snapshot-timestamp-ms",
      "current-schema",           "default-partition-spec",
      "default-sort-order",
  };
  return kReserved;
}

std::unexpected<Error> Conflict(std::string message) {
  return Fail(ErrorCode::kConflict, std::move(message));
}
// The prefix is what Java's CommitFailedException carries and what the RCK matches.
std::unexpected<Error> RequirementFailed(const std::string& message) {
  return Conflict("Requirement failed: " + message);
}
// The reference wraps stale-value failures (RetryableValidationException) this way so
// clients know a refresh-and-retry will succeed.
std::unexpected<Error> RetryableFailure(const std::string& message) {
  return Conflict("Validation failed, please retry: " + message);
}

// ---------------------------------------------------------------------------
// JSON access beyond the shared helpers in json_access.h.

Result<std::vector<int64_t>> RequireIntArray(const Json& obj, const std::string& key,
                                             const std::string& context) {
  TM_ASSIGN(const Json* arr, RequireArray(obj, key, context));
  std::vector<int64_t> out;
  for (const Json& v : *arr) {
    if (!IsInt(v)) return Invalid(FieldError(context, key, "an array of integers"));
    out.push_back(AsInt(v));
  }
  return out;
}

// Json::value() throws on a type mismatch; stored documents must never crash us.
std::string StringOr(const Json& obj, const std::string& key, const std::string& fallback = "") {
  const Json* v = Member(obj, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : fallback;
}

int64_t IntOr(const Json& obj, const std::string& key, int64_t fallback) {
  const Json* v = Member(obj, key);
  return v != nullptr && IsInt(*v) ? AsInt(*v) : fallback;
}

// v1/v2 files written by Java spell "no current snapshot" as -1, newer ones as null.
std::optional<int64_t> CurrentSnapshotId(const Json& m) {
  const Json* v = Member(m, "current-snapshot-id");
  if (v == nullptr || !IsInt(*v) || AsInt(*v) == -1) return std::nullopt;
  return AsInt(*v);
}

// Old v1 writers omitted "refs"; the reference then treats the current snapshot as
// the head of main, and so do we.
Json EffectiveRefs(const Json& m) {
  if (const Json* refs = Member(m, "refs"); refs != nullptr && refs->is_object()) return *refs;
  Json refs = Json::object();
  if (std::optional<int64_t> current = CurrentSnapshotId(m)) {
    refs["main"] = Json{{"snapshot-id", *current}, {"type", "branch"}};
  }
  return refs;
}

// Finds the element of `arr` whose integer `id_key` equals `id`.
Json* FindById(Json& arr, const std::string& id_key, int64_t id) {
  if (!arr.is_array()) return nullptr;
  for (Json& e : arr) {
    if (IntOr(e, id_key, std::numeric_limits<int64_t>::min()) == id) return &e;
  }
  return nullptr;
}

// Iceberg locations never keep a trailing slash (LocationUtil.stripTrailingSlash),
// otherwise derived paths would contain "//".
std::string StripTrailingSlash(std::string location) {
  while (location.size() > 1 && location.back() == '/' && !EndsWith(location, "://")) {
    location.pop_back();
  }
  return location;
}

// ---------------------------------------------------------------------------
// Schemas

struct SchemaIndex {
  std::set<int64_t> ids;  // every field id, including nested ones
  int64_t highest = 0;
};

Result<void> IndexType(const Json& type, SchemaIndex& index, int depth);

Result<void> AddFieldId(const Json& holder, const std::string& key, SchemaIndex& index) {
  TM_ASSIGN(int64_t id, RequireInt(holder, key, "schema"));
  if (!index.ids.insert(id).second) {
    return Invalid("Invalid schema: duplicate field id " + Str(id));
  }
  index.highest = std::max(index.highest, id);
  return {};
}

Result<void> IndexStructFields(const Json& fields, SchemaIndex& index, int depth) {
  if (!fields.is_array()) return Invalid("Invalid schema: struct 'fields' must be an array");
  for (const Json& field : fields) {
    if (!field.is_object()) return Invalid("Invalid schema: a struct field must be an object");
    TM_TRY(AddFieldId(field, "id", index));
    TM_TRY(RequireString(field, "name", "schema field"));
    const Json* type = Member(field, "type");
    if (type == nullptr) return Invalid("Invalid schema field: 'type' is required");
    TM_TRY(IndexType(*type, index, depth + 1));
  }
  return {};
}

// Iceberg's primitive type names (Types.fromPrimitiveString), v1 to v3: an unknown name
// would store a table no engine can read.
bool KnownPrimitive(const std::string& t) {
  static const std::set<std::string> kNames = {
      "boolean", "int",       "long",        "float",        "double",         "date",
      "time",    "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns", "string",
      "uuid",    "binary",    "variant",     "unknown",      "geometry",       "geography"};
  if (kNames.count(t)) return true;
  auto bracketed = [&](std::string_view prefix, char open, char close) {
    return t.size() > prefix.size() + 2 && t.starts_with(prefix) && t[prefix.size()] == open &&
           t.back() == close;
  };
  return bracketed("fixed", '[', ']') || bracketed("decimal", '(', ')') ||
         bracketed("geometry", '(', ')') || bracketed("geography", '(', ')');
}

Result<void> IndexType(const Json& type, SchemaIndex& index, int depth) {
  if (depth > kMaxTypeDepth) return Invalid("Invalid schema: types are nested too deeply");
  if (type.is_string()) {
    const std::string name = type.get<std::string>();
    if (!KnownPrimitive(name)) return Invalid("Cannot parse type string to primitive: " + name);
    return {};
  }
  if (!type.is_object()) return Invalid("Invalid schema: a type must be a string or an object");
  TM_ASSIGN(std::string kind, RequireString(type, "type", "schema type"));
  if (kind == "struct") {
    TM_ASSIGN(const Json* fields, RequireArray(type, "fields", "struct type"));
    return IndexStructFields(*fields, index, depth);
  }
  if (kind == "list") {
    TM_TRY(AddFieldId(type, "element-id", index));
    const Json* element = Member(type, "element");
    if (element == nullptr) return Invalid("Invalid list type: 'element' is required");
    return IndexType(*element, index, depth + 1);
  }
  if (kind == "map") {
    TM_TRY(AddFieldId(type, "key-id", index));
    TM_TRY(AddFieldId(type, "value-id", index));
    const Json* key = Member(type, "key");
    const Json* value = Member(type, "value");
    if (key == nullptr || value == nullptr) {
      return Invalid("Invalid map type: 'key' and 'value' are required");
    }
    TM_TRY(IndexType(*key, index, depth + 1));
    return IndexType(*value, index, depth + 1);
  }
  return Invalid("Invalid schema: unknown nested type '" + kind + "'");
}

// Validates a schema object ({type: struct, fields, identifier-field-ids?}) and
// indexes its field ids.
Result<SchemaIndex> IndexSchema(const Json& schema) {
  if (!schema.is_object()) return Invalid("Invalid schema: must be an object");
  TM_ASSIGN(const Json* fields, RequireArray(schema, "fields", "schema"));
  SchemaIndex index;
  TM_TRY(IndexStructFields(*fields, index, 0));
  if (const Json* ids = Member(schema, "identifier-field-ids")) {
    if (!ids->is_array()) return Invalid(FieldError("schema", "identifier-field-ids", "an array"));
    for (const Json& id : *ids) {
      if (!IsInt(id) || index.ids.count(AsInt(id)) == 0) {
        return Invalid("Invalid schema: identifier field " + id.dump() + " does not exist");
      }
    }
  }
  return index;
}

bool HasAllIds(const Json& type, int depth) {
  if (depth > kMaxTypeDepth || !type.is_object()) return true;  // validated later
  const Json* kind = Member(type, "type");
  const Json* fields = Member(type, "fields");
  if (fields != nullptr && fields->is_array() && (kind == nullptr || *kind == "struct")) {
    for (const Json& f : *fields) {
      if (!f.is_object() || Member(f, "id") == nullptr) return false;
      if (const Json* t = Member(f, "type"); t != nullptr && !HasAllIds(*t, depth + 1)) {
        return false;
      }
    }
    return true;
  }
  if (kind != nullptr && *kind == "list") {
    const Json* element = Member(type, "element");
    return Member(type, "element-id") != nullptr &&
           (element == nullptr || HasAllIds(*element, depth + 1));
  }
  if (kind != nullptr && *kind == "map") {
    const Json* key = Member(type, "key");
    const Json* value = Member(type, "value");
    return Member(type, "key-id") != nullptr && Member(type, "value-id") != nullptr &&
           (key == nullptr || HasAllIds(*key, depth + 1)) &&
           (value == nullptr || HasAllIds(*value, depth + 1));
  }
  return true;
}

// Renumbers every field id in the order the reference uses (TypeUtil.assignFreshIds):
// all fields of a struct first, then each field's nested type. `remap` records
// old → new for ids the client did send, so spec and order source ids can follow.
void AssignFreshIds(Json& type, int64_t& last_id, std::map<int64_t, int64_t>& remap, int depth) {
  if (depth > kMaxTypeDepth || !type.is_object()) return;
  auto renumber = [&](Json& holder, const char* key) {
    int64_t fresh = ++last_id;
    if (const Json* old = Member(holder, key); old != nullptr && IsInt(*old)) {
      remap[AsInt(*old)] = fresh;
    }
    holder[key] = fresh;
  };
  Json* fields = type.contains("fields") ? &type["fields"] : nullptr;
  if (fields != nullptr && fields->is_array()) {
    for (Json& f : *fields) {
      if (f.is_object()) renumber(f, "id");
    }
    for (Json& f : *fields) {
      if (f.is_object() && f.contains("type")) AssignFreshIds(f["type"], last_id, remap, depth + 1);
    }
    return;
  }
  const Json* kind = Member(type, "type");
  if (kind != nullptr && *kind == "list") {
    renumber(type, "element-id");
    if (type.contains("element")) AssignFreshIds(type["element"], last_id, remap, depth + 1);
  } else if (kind != nullptr && *kind == "map") {
    renumber(type, "key-id");
    renumber(type, "value-id");
    if (type.contains("key")) AssignFreshIds(type["key"], last_id, remap, depth + 1);
    if (type.contains("value")) AssignFreshIds(type["value"], last_id, remap, depth + 1);
  }
}

std::set<int64_t> IdentifierIds(const Json& schema) {
  std::set<int64_t> ids;
  if (const Json* arr = Member(schema, "identifier-field-ids"); arr != nullptr && arr->is_array()) {
    for (const Json& id : *arr) {
      if (IsInt(id)) ids.insert(AsInt(id));
    }
  }
  return ids;
}

// Schema.sameSchema: same struct and same identifier fields; the schema id is ignored.
bool SameSchema(const Json& a, const Json& b) {
  const Json* fa = Member(a, "fields");
  const Json* fb = Member(b, "fields");
  if (fa == nullptr || fb == nullptr || *fa != *fb) return false;
  return IdentifierIds(a) == IdentifierIds(b);
}

// ---------------------------------------------------------------------------
// Partition specs and sort orders

// A partition or sort field references one source column ("source-id") or, for v3
// multi-argument transforms, several ("source-ids").
Result<std::vector<int64_t>> SourceIds(const Json& field, const std::string& context) {
  if (Member(field, "source-ids") != nullptr) {
    TM_ASSIGN(std::vector<int64_t> ids, RequireIntArray(field, "source-ids", context));
    if (ids.empty()) return Invalid(FieldError(context, "source-ids", "non-empty"));
    return ids;
  }
  TM_ASSIGN(int64_t id, RequireInt(field, "source-id", context));
  return std::vector<int64_t>{id};
}

// Rewrites source ids through `remap` (fresh schema ids at table creation). An id the
// client's schema did not have is refused here: left as it is, it could name an
// unrelated column once the schema is renumbered.
Result<void> RemapSourceIds(Json& field, const std::map<int64_t, int64_t>& remap,
                            const std::string& context) {
  auto map_one = [&](Json& v) -> Result<void> {
    if (!IsInt(v)) return {};  // the field parser names the type error
    auto it = remap.find(AsInt(v));
    if (it == remap.end()) {
      return Invalid("Cannot find source column for " + context + ": " + v.dump());
    }
    v = it->second;
    return {};
  };
  if (field.contains("source-id")) TM_TRY(map_one(field["source-id"]));
  if (field.contains("source-ids") && field["source-ids"].is_array()) {
    for (Json& v : field["source-ids"]) TM_TRY(map_one(v));
  }
  return {};
}

struct PartitionFieldInfo {
  Json json;
  std::vector<int64_t> sources;
  std::string transform;
  std::string name;
  std::optional<int64_t> field_id;
};

Result<std::vector<PartitionFieldInfo>> ParsePartitionFields(const Json& spec,
                                                             const std::set<int64_t>& columns) {
  std::vector<PartitionFieldInfo> out;
  const Json* fields = Member(spec, "fields");
  if (fields == nullptr) return out;  // unpartitioned
  if (!fields->is_array()) return Invalid(FieldError("partition spec", "fields", "an array"));
  std::set<std::string> names;
  std::set<int64_t> explicit_ids;
  for (const Json& f : *fields) {
    if (!f.is_object()) return Invalid("Invalid partition spec: a field must be an object");
    PartitionFieldInfo info;
    info.json = f;
    TM_ASSIGN(info.sources, SourceIds(f, "partition field"));
    TM_ASSIGN(info.transform, RequireString(f, "transform", "partition field"));
    TM_ASSIGN(info.name, RequireString(f, "name", "partition field"));
    TM_ASSIGN(info.field_id, OptionalInt(f, "field-id", "partition field"));
    for (int64_t source : info.sources) {
      if (columns.count(source) == 0) {
        return Invalid("Cannot find source column for partition field: " + f.dump());
      }
    }
    if (!names.insert(info.name).second) {
      return Invalid("Cannot use partition name more than once: " + info.name);
    }
    if (info.field_id && !explicit_ids.insert(*info.field_id).second) {
      return Invalid("Invalid partition spec: duplicate field-id " + Str(*info.field_id));
    }
    out.push_back(std::move(info));
  }
  return out;
}

Json SourceKey(const Json& field) {
  if (const Json* ids = Member(field, "source-ids")) return *ids;
  if (const Json* id = Member(field, "source-id")) return Json::array({*id});
  return Json::array();
}

// PartitionSpec.compatibleWith: same sources, transforms and names in order; field ids
// are not compared.
bool CompatibleSpec(const Json& existing, const std::vector<PartitionFieldInfo>& fields) {
  const Json* ef = Member(existing, "fields");
  size_t count = ef != nullptr && ef->is_array() ? ef->size() : 0;
  if (count != fields.size()) return false;
  for (size_t i = 0; i < count; ++i) {
    const Json& e = (*ef)[i];
    if (SourceKey(e) != SourceKey(fields[i].json) ||
        StringOr(e, "transform") != fields[i].transform || StringOr(e, "name") != fields[i].name) {
      return false;
    }
  }
  return true;
}

int64_t MaxPartitionFieldId(const Json& spec) {
  int64_t highest = kUnpartitionedLastAssignedId;
  if (const Json* fields = Member(spec, "fields"); fields != nullptr && fields->is_array()) {
    for (const Json& f : *fields) highest = std::max(highest, IntOr(f, "field-id", highest));
  }
  return highest;
}

Result<Json> ParseSortFields(const Json& order, const std::set<int64_t>& columns) {
  Json out = Json::array();
  const Json* fields = Member(order, "fields");
  if (fields == nullptr) return out;
  if (!fields->is_array()) return Invalid(FieldError("sort order", "fields", "an array"));
  for (const Json& f : *fields) {
    if (!f.is_object()) return Invalid("Invalid sort order: a field must be an object");
    TM_ASSIGN(std::vector<int64_t> sources, SourceIds(f, "sort field"));
    TM_TRY(RequireString(f, "transform", "sort field"));
    TM_ASSIGN(std::string direction, RequireString(f, "direction", "sort field"));
    TM_ASSIGN(std::string null_order, RequireString(f, "null-order", "sort field"));
    if (direction != "asc" && direction != "desc") {
      return Invalid("Invalid sort direction: " + direction);
    }
    if (null_order != "nulls-first" && null_order != "nulls-last") {
      return Invalid("Invalid null order: " + null_order);
    }
    for (int64_t source : sources) {
      if (columns.count(source) == 0) {
        return Invalid("Cannot find source column for sort field: " + f.dump());
      }
    }
    out.push_back(f);
  }
  return out;
}

// SortOrder.sameOrder: same fields (source, transform, direction, null order).
bool SameSortFields(const Json& a, const Json& b) {
  if (!a.is_array() || !b.is_array() || a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (SourceKey(a[i]) != SourceKey(b[i])) return false;
    for (const char* key : {"transform", "direction", "null-order"}) {
      const Json* va = Member(a[i], key);
      const Json* vb = Member(b[i], key);
      if ((va == nullptr) != (vb == nullptr) || (va != nullptr && *va != *vb)) return false;
    }
  }
  return true;
}

Result<int64_t> ParseFormatVersion(int64_t version) {
  if (version < kMinFormatVersion || version > kMaxFormatVersion) {
    return Invalid("Unsupported format version: v" + Str(version) + " (supported: v" +
                   Str(kMaxFormatVersion) + ")");
  }
  return version;
}

// Fills the fields every table has from birth, leaving present ones alone.
void SetMissing(Json& m, const char* key, Json value) {
  if (!m.contains(key)) m[key] = std::move(value);
}

void InitNewTableFields(Json& m) {
  SetMissing(m, "last-sequence-number", 0);
  SetMissing(m, "last-column-id", 0);
  SetMissing(m, "current-schema-id", 0);
  SetMissing(m, "schemas", Json::array());
  SetMissing(m, "default-spec-id", 0);
  SetMissing(m, "partition-specs", Json::array());
  SetMissing(m, "last-partition-id", 0);
  SetMissing(m, "default-sort-order-id", kUnsortedOrderId);
  SetMissing(m, "sort-orders", Json::array());
  SetMissing(m, "properties", Json::object());
  SetMissing(m, "current-snapshot-id", nullptr);
  SetMissing(m, "refs", Json::object());
  SetMissing(m, "snapshots", Json::array());
  SetMissing(m, "statistics", Json::array());
  SetMissing(m, "partition-statistics", Json::array());
  SetMissing(m, "snapshot-log", Json::array());
  SetMissing(m, "metadata-log", Json::array());
}

// ---------------------------------------------------------------------------
// The update builder: mirrors TableMetadata.Builder, operating on the JSON document
// in place so fields it does not interpret survive untouched.

class MetadataBuilder {
 public:
  MetadataBuilder(Json metadata, bool creating, int64_t format_version, int64_t now_millis)
      : m_(std::move(metadata)),
        creating_(creating),
        format_version_(format_version),
        now_(now_millis) {
    m_["format-version"] = format_version_;
    if (creating_) InitNewTableFields(m_);
    if (Member(m_, "refs") == nullptr) m_["refs"] = EffectiveRefs(m_);
  }

  Result<void> Apply(const Json& update);
  Result<Json> Finish();

 private:
  Json& Array(const char* key) {
    Json& v = m_[key];
    if (!v.is_array()) v = Json::array();
    return v;
  }
  Json& Object(const char* key) {
    Json& v = m_[key];
    if (!v.is_object()) v = Json::object();
    return v;
  }
  const Json* FindSnapshot(int64_t id) { return FindById(Array("snapshots"), "snapshot-id", id); }
  std::set<int64_t> CurrentSchemaColumns();
  void SetNoCurrentSnapshot() { m_["current-snapshot-id"] = nullptr; }
  void RemoveRef(const std::string& name);
  void RemoveStatisticsFor(const char* key, int64_t snapshot_id);
  Result<void> SetStatisticsEntry(const Json& update, const char* key, const std::string& action);

  Result<void> UpgradeFormatVersion(const Json& u);
  Result<void> AddSchema(const Json& u);
  Result<void> SetCurrentSchema(const Json& u);
  Result<void> AddSpec(const Json& u);
  Result<void> SetDefaultSpec(const Json& u);
  Result<void> AddSortOrder(const Json& u);
  Result<void> SetDefaultSortOrder(const Json& u);
  Result<void> AddSnapshot(const Json& u);
  Result<void> SetSnapshotRef(const Json& u);
  Result<void> RemoveSnapshots(const Json& u);
  Result<void> RemoveSnapshotRef(const Json& u);
  Result<void> SetLocation(const Json& u);
  Result<void> SetProperties(const Json& u);
  Result<void> RemoveProperties(const Json& u);
  Result<void> RemovePartitionSpecs(const Json& u);
  Result<void> RemoveSchemas(const Json& u);
  Result<void> AddEncryptionKey(const Json& u);
  Result<void> RemoveEncryptionKey(const Json& u);
  Result<void> EnableRowLineage(const Json& u);
  void CleanSnapshotLog();

  Json m_;
  bool creating_;
  int64_t format_version_;
  int64_t now_;
  bool upgraded_from_v1_ = false;

  // "-1 = last added" resolves against what this batch added, as in the reference.
  std::optional<int64_t> last_added_schema_;
  std::optional<int64_t> last_added_spec_;
  std::optional<int64_t> last_added_order_;
  std::set<int64_t> added_schemas_;
  std::set<int64_t> added_specs_;
  std::set<int64_t> added_orders_;
  std::set<int64_t> added_snapshots_;
  // Snapshots added in this batch that main pointed at; those not current at the end
  // are intermediate and leave the snapshot log.
  std::vector<int64_t> main_targets_added_;
  bool removed_snapshots_ = false;
};

Result<void> MetadataBuilder::Apply(const Json& u) {
  if (!u.is_object()) return Invalid("Invalid table update: must be an object");
  TM_ASSIGN(std::string action, RequireString(u, "action", "table update"));
  if (action == "assign-uuid") return ApplyAssignUuid(m_, u, "table-uuid", "table");
  if (action == "upgrade-format-version") return UpgradeFormatVersion(u);
  if (action == "add-schema") return AddSchema(u);
  if (action == "set-current-schema") return SetCurrentSchema(u);
  if (action == "add-spec") return AddSpec(u);
  if (action == "set-default-spec") return SetDefaultSpec(u);
  if (action == "add-sort-order") return AddSortOrder(u);
  if (action == "set-default-sort-order") return SetDefaultSortOrder(u);
  if (action == "add-snapshot") return AddSnapshot(u);
  if (action == "set-snapshot-ref") return SetSnapshotRef(u);
  if (action == "remove-snapshots") return RemoveSnapshots(u);
  if (action == "remove-snapshot-ref") return RemoveSnapshotRef(u);
  if (action == "set-location") return SetLocation(u);
  if (action == "set-properties") return SetProperties(u);
  if (action == "remove-properties") return RemoveProperties(u);
  if (action == "set-statistics") return SetStatisticsEntry(u, "statistics", action);
  if (action == "set-partition-statistics") {
    return SetStatisticsEntry(u, "partition-statistics", action);
  }
  if (action == "remove-statistics" || action == "remove-partition-statistics") {
    TM_ASSIGN(int64_t id, RequireInt(u, "snapshot-id", action));
    RemoveStatisticsFor(action == "remove-statistics" ? "statistics" : "partition-statistics", id);
    return {};
  }
  if (action == "remove-partition-specs") return RemovePartitionSpecs(u);
  if (action == "remove-schemas") return RemoveSchemas(u);
  // The spec's name is add-encryption-key; set-encryption-key is taken as a synonym.
  if (action == "add-encryption-key" || action == "set-encryption-key") return AddEncryptionKey(u);
  if (action == "remove-encryption-key") return RemoveEncryptionKey(u);
  if (action == "enable-row-lineage") return EnableRowLineage(u);
  return Invalid("Unknown table update action: " + action);
}

Result<void> MetadataBuilder::UpgradeFormatVersion(const Json& u) {
  TM_ASSIGN(int64_t version, RequireInt(u, "format-version", "upgrade-format-version"));
  if (version > kMaxFormatVersion) {
    return Invalid("Cannot upgrade table to unsupported format version: v" + Str(version) +
                   " (supported: v" + Str(kMaxFormatVersion) + ")");
  }
  if (version < format_version_) {
    return Invalid("Cannot downgrade v" + Str(format_version_) + " table to v" + Str(version));
  }
  if (version == format_version_) return {};
  if (format_version_ == 1) upgraded_from_v1_ = true;
  format_version_ = version;
  m_["format-version"] = version;
  // A table upgraded to v3 starts assigning row ids from 0 (the reference carries
  // next-row-id over, which is 0 for any pre-v3 table).
  if (format_version_ >= kRowLineageFormatVersion) SetMissing(m_, "next-row-id", 0);
  return {};
}

Result<void> MetadataBuilder::AddSchema(const Json& u) {
  TM_ASSIGN(const Json* schema, RequireObject(u, "schema", "add-schema"));
  TM_ASSIGN(SchemaIndex index, IndexSchema(*schema));
  TM_ASSIGN(std::optional<int64_t> provided, OptionalInt(u, "last-column-id", "add-schema"));
  int64_t last_column_id = IntOr(m_, "last-column-id", 0);
  // The field is deprecated. As in Iceberg Java 1.11's addSchema, a lower value than the
  // current one is not an error: the result is the max, so ids are never reused.
  int64_t new_last_column_id =
      std::max({provided.value_or(last_column_id), last_column_id, index.highest});

  // Reuse the id of an identical schema, else one past the highest id.
  Json& schemas = Array("schemas");
  int64_t schema_id = IntOr(m_, "current-schema-id", 0);
  std::optional<int64_t> existing;
  for (const Json& s : schemas) {
    int64_t id = IntOr(s, "schema-id", 0);
    if (SameSchema(s, *schema)) {
      existing = id;
      break;
    }
    if (id >= schema_id) schema_id = id + 1;
  }
  if (existing) {
    schema_id = *existing;
    if (new_last_column_id == last_column_id) {
      // Nothing changes; -1 still means this schema if this batch added it.
      last_added_schema_ =
          added_schemas_.count(schema_id) ? std::optional(schema_id) : std::nullopt;
      return {};
    }
  }
  m_["last-column-id"] = new_last_column_id;
  if (!existing) {
    Json stored = *schema;
    stored["type"] = "struct";
    stored["schema-id"] = schema_id;
    schemas.push_back(std::move(stored));
  }
  added_schemas_.insert(schema_id);
  last_added_schema_ = schema_id;
  return {};
}

Result<void> MetadataBuilder::SetCurrentSchema(const Json& u) {
  TM_ASSIGN(int64_t id, RequireInt(u, "schema-id", "set-current-schema"));
  if (id == kLastAdded) {
    if (!last_added_schema_)
      return Invalid("Cannot set last added schema: no schema has been added");
    id = *last_added_schema_;
  }
  if (id == IntOr(m_, "current-schema-id", kLastAdded)) return {};
  if (FindById(Array("schemas"), "schema-id", id) == nullptr) {
    return Invalid("Cannot set current schema to unknown schema: " + Str(id));
  }
  m_["current-schema-id"] = id;
  return {};
}

// Partition and sort fields bind against the current schema; before one is chosen
// (a create that sends set-current-schema last) any added schema's columns count.
std::set<int64_t> MetadataBuilder::CurrentSchemaColumns() {
  Json& schemas = Array("schemas");
  std::set<int64_t> columns;
  auto add = [&](const Json& schema) {
    if (auto index = IndexSchema(schema)) columns.insert(index->ids.begin(), index->ids.end());
  };
  if (const Json* current = FindById(schemas, "schema-id", IntOr(m_, "current-schema-id", -1))) {
    add(*current);
  } else {
    for (const Json& s : schemas) add(s);
  }
  return columns;
}

Result<void> MetadataBuilder::AddSpec(const Json& u) {
  TM_ASSIGN(const Json* spec, RequireObject(u, "spec", "add-spec"));
  TM_ASSIGN(std::vector<PartitionFieldInfo> fields,
            ParsePartitionFields(*spec, CurrentSchemaColumns()));

  Json& specs = Array("partition-specs");
  int64_t spec_id = 0;
  for (const Json& s : specs) {
    int64_t id = IntOr(s, "spec-id", 0);
    if (CompatibleSpec(s, fields)) {
      last_added_spec_ = added_specs_.count(id) ? std::optional(id) : std::nullopt;
      return {};
    }
    if (id >= spec_id) spec_id = id + 1;
  }

  int64_t last_partition_id = IntOr(m_, "last-partition-id", 0);
  int64_t next_id = std::max(last_partition_id, kUnpartitionedLastAssignedId);
  for (const auto& f : fields) {
    if (f.field_id) next_id = std::max(next_id, *f.field_id);
  }
  Json bound = Json::array();
  for (size_t i = 0; i < fields.size(); ++i) {
    PartitionFieldInfo f = fields[i];
    int64_t field_id;
    if (f.field_id) {
      field_id = *f.field_id;
    } else if (format_version_ == 1) {
      field_id = kPartitionDataIdStart + static_cast<int64_t>(i);
    } else {
      // v2+: a (source, transform) pair seen in any spec keeps its field id, so
      // partition values stay comparable across specs; new pairs get fresh ids.
      std::optional<int64_t> reused;
      for (const Json& s : specs) {
        const Json* sf = Member(s, "fields");
        if (sf == nullptr || !sf->is_array()) continue;
        for (const Json& e : *sf) {
          if (SourceKey(e) == SourceKey(f.json) && StringOr(e, "transform") == f.transform &&
              Member(e, "field-id") != nullptr) {
            reused = std::max(reused.value_or(0), IntOr(e, "field-id", 0));
          }
        }
      }
      field_id = reused ? *reused : ++next_id;
    }
    if (format_version_ == 1 && field_id != kPartitionDataIdStart + static_cast<int64_t>(i)) {
      return Invalid("Spec does not use sequential IDs that are required in v1: " + spec->dump());
    }
    f.json["field-id"] = field_id;
    bound.push_back(std::move(f.json));
  }

  Json stored = *spec;
  stored["spec-id"] = spec_id;
  stored["fields"] = std::move(bound);
  m_["last-partition-id"] = std::max(last_partition_id, MaxPartitionFieldId(stored));
  specs.push_back(std::move(stored));
  added_specs_.insert(spec_id);
  last_added_spec_ = spec_id;
  return {};
}

Result<void> MetadataBuilder::SetDefaultSpec(const Json& u) {
  TM_ASSIGN(int64_t id, RequireInt(u, "spec-id", "set-default-spec"));
  if (id == kLastAdded) {
    if (!last_added_spec_) return Invalid("Cannot set last added spec: no spec has been added");
    id = *last_added_spec_;
  }
  if (id == IntOr(m_, "default-spec-id", kLastAdded)) return {};
  if (FindById(Array("partition-specs"), "spec-id", id) == nullptr) {
    return Invalid("Cannot set default partition spec to unknown spec: " + Str(id));
  }
  m_["default-spec-id"] = id;
  return {};
}

Result<void> MetadataBuilder::AddSortOrder(const Json& u) {
  TM_ASSIGN(const Json* order, RequireObject(u, "sort-order", "add-sort-order"));
  TM_ASSIGN(Json fields, ParseSortFields(*order, CurrentSchemaColumns()));

  Json& orders = Array("sort-orders");
  // The client's order-id is read-only: unsorted is always 0, a known order keeps its
  // id, a new one gets one past the highest (starting at 1).
  int64_t order_id = fields.empty() ? kUnsortedOrderId : kInitialSortOrderId;
  std::optional<int64_t> existing;
  for (const Json& o : orders) {
    int64_t id = IntOr(o, "order-id", 0);
    const Json* of = Member(o, "fields");
    Json existing_fields = of != nullptr ? *of : Json::array();
    if (fields.empty() ? id == kUnsortedOrderId : SameSortFields(existing_fields, fields)) {
      existing = id;
      break;
    }
    if (!fields.empty() && id >= order_id) order_id = id + 1;
  }
  if (existing) {
    last_added_order_ = added_orders_.count(*existing) ? existing : std::nullopt;
    return {};
  }
  orders.push_back(Json{{"order-id", order_id}, {"fields", std::move(fields)}});
  added_orders_.insert(order_id);
  last_added_order_ = order_id;
  return {};
}

Result<void> MetadataBuilder::SetDefaultSortOrder(const Json& u) {
  TM_ASSIGN(int64_t id, RequireInt(u, "sort-order-id", "set-default-sort-order"));
  if (id == kLastAdded) {
    if (!last_added_order_) {
      return Invalid("Cannot set last added sort order: no sort order has been added");
    }
    id = *last_added_order_;
  }
  if (id == IntOr(m_, "default-sort-order-id", kLastAdded)) return {};
  if (FindById(Array("sort-orders"), "order-id", id) == nullptr) {
    return Invalid("Cannot set default sort order to unknown sort order: " + Str(id));
  }
  m_["default-sort-order-id"] = id;
  return {};
}

Result<void> MetadataBuilder::AddSnapshot(const Json& u) {
  TM_ASSIGN(const Json* snapshot, RequireObject(u, "snapshot", "add-snapshot"));
  const std::string ctx = "snapshot";
  TM_ASSIGN(int64_t snapshot_id, RequireInt(*snapshot, "snapshot-id", ctx));
  TM_TRY(RequireInt(*snapshot, "timestamp-ms", ctx));
  TM_ASSIGN(std::optional<int64_t> seq, OptionalInt(*snapshot, "sequence-number", ctx));
  TM_ASSIGN(std::optional<int64_t> parent, OptionalInt(*snapshot, "parent-snapshot-id", ctx));
  TM_ASSIGN(std::optional<int64_t> first_row_id, OptionalInt(*snapshot, "first-row-id", ctx));
  TM_ASSIGN(std::optional<int64_t> added_rows, OptionalInt(*snapshot, "added-rows", ctx));
  const Json* manifest_list = Member(*snapshot, "manifest-list");
  const Json* manifests = Member(*snapshot, "manifests");  // v1 embedded list
  if (!(manifest_list != nullptr && manifest_list->is_string()) &&
      !(manifests != nullptr && manifests->is_array())) {
    return Invalid(FieldError(ctx, "manifest-list", "a string"));
  }
  if (const Json* summary = Member(*snapshot, "summary");
      summary != nullptr && !summary->is_object()) {
    return Invalid(FieldError(ctx, "summary", "an object"));
  }
  if (first_row_id && *first_row_id < 0) {
    return Invalid("Invalid first-row-id (cannot be negative): " + Str(*first_row_id));
  }
  if (added_rows && *added_rows < 0) {
    return Invalid("Invalid added-rows (cannot be negative): " + Str(*added_rows));
  }
  if (first_row_id && !added_rows) {
    return Invalid("Invalid added-rows (required when first-row-id is set): null");
  }
  // Creates may send add-snapshot before set-current-schema (DuckDB), so only the
  // existence of some schema is required, as in the reference builder.
  if (Array("schemas").empty()) {
    return Invalid("Attempting to add a snapshot before a schema is added");
  }
  if (FindSnapshot(snapshot_id) != nullptr) {
    return Invalid("Snapshot already exists for id: " + Str(snapshot_id));
  }
  int64_t sequence_number = seq.value_or(0);
  int64_t last_sequence_number = IntOr(m_, "last-sequence-number", 0);
  if (format_version_ > 1 && parent && sequence_number <= last_sequence_number) {
    return RetryableFailure("Cannot add snapshot with sequence number " + Str(sequence_number) +
                            " older than last sequence number " + Str(last_sequence_number));
  }
  int64_t next_row_id = IntOr(m_, "next-row-id", 0);
  if (format_version_ >= kRowLineageFormatVersion) {
    if (!first_row_id) return Invalid("Cannot add a snapshot: first-row-id is null");
    if (*first_row_id < next_row_id) {
      return RetryableFailure("Cannot add a snapshot, first-row-id is behind table next-row-id: " +
                              Str(*first_row_id) + " < " + Str(next_row_id));
    }
  }

  // Never move last-sequence-number backwards: a parentless snapshot may carry a low
  // number, and metadata whose snapshots exceed it is unreadable by the reference.
  m_["last-sequence-number"] = std::max(last_sequence_number, sequence_number);
  if (format_version_ >= kRowLineageFormatVersion) {
    m_["next-row-id"] = next_row_id + *added_rows;
  }
  Array("snapshots").push_back(*snapshot);
  added_snapshots_.insert(snapshot_id);
  return {};
}

Result<void> MetadataBuilder::SetSnapshotRef(const Json& u) {
  const std::string ctx = "set-snapshot-ref";
  TM_ASSIGN(std::string name, RequireString(u, "ref-name", ctx));
  TM_ASSIGN(int64_t snapshot_id, RequireInt(u, "snapshot-id", ctx));
  TM_ASSIGN(std::string type, RequireString(u, "type", ctx));
  type = ToLower(type);
  if (type != "branch" && type != "tag") return Invalid("Invalid snapshot ref type: " + type);
  TM_ASSIGN(std::optional<int64_t> min_snapshots, OptionalInt(u, "min-snapshots-to-keep", ctx));
  TM_ASSIGN(std::optional<int64_t> max_snapshot_age, OptionalInt(u, "max-snapshot-age-ms", ctx));
  TM_ASSIGN(std::optional<int64_t> max_ref_age, OptionalInt(u, "max-ref-age-ms", ctx));
  if (type == "tag" && min_snapshots) {
    return Invalid("Tags do not support setting minSnapshotsToKeep");
  }
  if (type == "tag" && max_snapshot_age) {
    return Invalid("Tags do not support setting maxSnapshotAgeMs");
  }
  if (min_snapshots && *min_snapshots <= 0) {
    return Invalid("Min snapshots to keep must be greater than 0");
  }
  if (max_snapshot_age && *max_snapshot_age <= 0) {
    return Invalid("Max snapshot age must be greater than 0 ms");
  }
  if (max_ref_age && *max_ref_age <= 0) {
    return Invalid("Max reference age must be greater than 0");
  }

  Json ref = {{"snapshot-id", snapshot_id}, {"type", type}};
  if (min_snapshots) ref["min-snapshots-to-keep"] = *min_snapshots;
  if (max_snapshot_age) ref["max-snapshot-age-ms"] = *max_snapshot_age;
  if (max_ref_age) ref["max-ref-age-ms"] = *max_ref_age;

  Json& refs = Object("refs");
  if (const Json* existing = Member(refs, name); existing != nullptr && *existing == ref) {
    return {};
  }
  const Json* snapshot = FindSnapshot(snapshot_id);
  if (snapshot == nullptr) {
    return Invalid("Cannot set " + name + " to unknown snapshot: " + Str(snapshot_id));
  }
  if (name == kMainBranch) {
    if (type != "branch") return Invalid("Cannot set main to a tag, it must be a branch");
    m_["current-snapshot-id"] = snapshot_id;
    // A new snapshot became current when it was written; a rollback to an old one
    // becomes current now.
    bool added = added_snapshots_.count(snapshot_id) > 0;
    int64_t when = added ? IntOr(*snapshot, "timestamp-ms", now_) : now_;
    Array("snapshot-log").push_back(Json{{"timestamp-ms", when}, {"snapshot-id", snapshot_id}});
    if (added) main_targets_added_.push_back(snapshot_id);
  }
  refs[name] = std::move(ref);
  return {};
}

void MetadataBuilder::RemoveRef(const std::string& name) {
  if (name == kMainBranch) SetNoCurrentSnapshot();
  Object("refs").erase(name);
}

void MetadataBuilder::RemoveStatisticsFor(const char* key, int64_t snapshot_id) {
  if (!m_.contains(key) || !m_[key].is_array()) return;
  Json& arr = m_[key];
  Json kept = Json::array();
  for (Json& e : arr) {
    if (IntOr(e, "snapshot-id", std::numeric_limits<int64_t>::min()) != snapshot_id) {
      kept.push_back(std::move(e));
    }
  }
  arr = std::move(kept);
}

Result<void> MetadataBuilder::SetStatisticsEntry(const Json& u, const char* key,
                                                 const std::string& action) {
  TM_ASSIGN(const Json* file, RequireObject(u, key, action));
  // Older clients also sent the id beside the file; the file's own id wins.
  int64_t snapshot_id;
  if (Member(*file, "snapshot-id") != nullptr) {
    TM_ASSIGN(snapshot_id, RequireInt(*file, "snapshot-id", key));
  } else {
    TM_ASSIGN(snapshot_id, RequireInt(u, "snapshot-id", action));
  }
  TM_TRY(RequireString(*file, "statistics-path", key));
  Json stored = *file;
  stored["snapshot-id"] = snapshot_id;
  // One statistics file per snapshot: replace in place to keep the list order stable.
  Json& arr = Array(key);
  if (Json* existing = FindById(arr, "snapshot-id", snapshot_id)) {
    *existing = std::move(stored);
  } else {
    arr.push_back(std::move(stored));
  }
  return {};
}

Result<void> MetadataBuilder::RemoveSnapshots(const Json& u) {
  TM_ASSIGN(std::vector<int64_t> ids, RequireIntArray(u, "snapshot-ids", "remove-snapshots"));
  std::set<int64_t> to_remove(ids.begin(), ids.end());
  Json& snapshots = Array("snapshots");
  Json kept = Json::array();
  for (Json& s : snapshots) {
    int64_t id = IntOr(s, "snapshot-id", std::numeric_limits<int64_t>::min());
    if (to_remove.count(id)) {
      removed_snapshots_ = true;
      RemoveStatisticsFor("statistics", id);
      RemoveStatisticsFor("partition-statistics", id);
    } else {
      kept.push_back(std::move(s));
    }
  }
  snapshots = std::move(kept);

  // Refs may not point at missing snapshots.
  std::vector<std::string> dangling;
  for (auto& [name, ref] : Object("refs").items()) {
    if (FindSnapshot(IntOr(ref, "snapshot-id", std::numeric_limits<int64_t>::min())) == nullptr) {
      dangling.push_back(name);
    }
  }
  for (const std::string& name : dangling) RemoveRef(name);
  return {};
}

Result<void> MetadataBuilder::RemoveSnapshotRef(const Json& u) {
  TM_ASSIGN(std::string name, RequireString(u, "ref-name", "remove-snapshot-ref"));
  RemoveRef(name);
  return {};
}

Result<void> MetadataBuilder::SetLocation(const Json& u) { return ApplySetLocation(m_, u); }

Result<void> MetadataBuilder::SetProperties(const Json& u) { return ApplySetProperties(m_, u); }

Result<void> MetadataBuilder::RemoveProperties(const Json& u) {
  return ApplyRemoveProperties(m_, u);
}

Result<void> MetadataBuilder::RemovePartitionSpecs(const Json& u) {
  TM_ASSIGN(std::vector<int64_t> ids, RequireIntArray(u, "spec-ids", "remove-partition-specs"));
  std::set<int64_t> to_remove(ids.begin(), ids.end());
  if (to_remove.count(IntOr(m_, "default-spec-id", 0))) {
    return Invalid("Cannot remove the default partition spec");
  }
  Json& specs = Array("partition-specs");
  Json kept = Json::array();
  for (Json& s : specs) {
    if (!to_remove.count(IntOr(s, "spec-id", 0))) kept.push_back(std::move(s));
  }
  specs = std::move(kept);
  return {};
}

Result<void> MetadataBuilder::RemoveSchemas(const Json& u) {
  TM_ASSIGN(std::vector<int64_t> ids, RequireIntArray(u, "schema-ids", "remove-schemas"));
  std::set<int64_t> to_remove(ids.begin(), ids.end());
  if (to_remove.count(IntOr(m_, "current-schema-id", 0))) {
    return Invalid("Cannot remove the current schema");
  }
  Json& schemas = Array("schemas");
  Json kept = Json::array();
  for (Json& s : schemas) {
    if (!to_remove.count(IntOr(s, "schema-id", 0))) kept.push_back(std::move(s));
  }
  schemas = std::move(kept);
  return {};
}

Result<void> MetadataBuilder::AddEncryptionKey(const Json& u) {
  TM_ASSIGN(const Json* key, RequireObject(u, "encryption-key", "add-encryption-key"));
  TM_ASSIGN(std::string key_id, RequireString(*key, "key-id", "encryption-key"));
  TM_TRY(RequireString(*key, "encrypted-key-metadata", "encryption-key"));
  Json& keys = Array("encryption-keys");
  for (const Json& k : keys) {
    if (StringOr(k, "key-id") == key_id) return {};  // already present
  }
  keys.push_back(*key);
  return {};
}

Result<void> MetadataBuilder::RemoveEncryptionKey(const Json& u) {
  TM_ASSIGN(std::string key_id, RequireString(u, "key-id", "remove-encryption-key"));
  if (!m_.contains("encryption-keys") || !m_["encryption-keys"].is_array()) return {};
  Json& keys = m_["encryption-keys"];
  Json kept = Json::array();
  for (Json& k : keys) {
    if (StringOr(k, "key-id") != key_id) kept.push_back(std::move(k));
  }
  keys = std::move(kept);
  return {};
}

// Pre-1.10 clients sent this to turn on row lineage; in v3 it is always on.
Result<void> MetadataBuilder::EnableRowLineage(const Json&) {
  if (format_version_ < kRowLineageFormatVersion) {
    return Invalid("Cannot use row lineage with format version " + Str(format_version_) +
                   ". Only format version 3 or higher support row lineage");
  }
  return {};
}

// Mirrors the reference's updateSnapshotLog: snapshots that were current only in the
// middle of this batch are dropped, and an entry for a removed snapshot clears all
// history before it (a gap would make time travel answer with the wrong snapshot).
void MetadataBuilder::CleanSnapshotLog() {
  std::optional<int64_t> current = CurrentSnapshotId(m_);
  std::set<int64_t> intermediate;
  for (int64_t id : main_targets_added_) {
    if (!current || id != *current) intermediate.insert(id);
  }
  if (intermediate.empty() && !removed_snapshots_) return;
  Json& log = Array("snapshot-log");
  Json cleaned = Json::array();
  for (Json& entry : log) {
    int64_t id = IntOr(entry, "snapshot-id", std::numeric_limits<int64_t>::min());
    if (FindSnapshot(id) != nullptr) {
      if (!intermediate.count(id)) cleaned.push_back(std::move(entry));
    } else if (removed_snapshots_) {
      cleaned = Json::array();
    }
  }
  log = std::move(cleaned);
}

Result<Json> MetadataBuilder::Finish() {
  const Json* uuid = Member(m_, "table-uuid");
  if (creating_ && (uuid == nullptr || !uuid->is_string() || uuid->get<std::string>().empty())) {
    return Invalid("table-uuid is required: a create must send assign-uuid");
  }
  const Json* location = Member(m_, "location");
  if (location == nullptr || !location->is_string() || location->get<std::string>().empty()) {
    return Invalid("location is required");
  }

  Json& schemas = Array("schemas");
  if (schemas.empty()) return Invalid("Cannot create a table without a schema: send add-schema");
  int64_t current_schema_id = IntOr(m_, "current-schema-id", -1);
  const Json* current_schema = FindById(schemas, "schema-id", current_schema_id);
  if (current_schema == nullptr) {
    return Invalid("Current schema " + Str(current_schema_id) + " does not exist");
  }

  // A create may leave out the spec and order; the table is then unpartitioned and
  // unsorted, which is what every engine assumes.
  Json& specs = Array("partition-specs");
  if (specs.empty()) {
    specs.push_back(Json{{"spec-id", 0}, {"fields", Json::array()}});
    m_["default-spec-id"] = 0;
  }
  m_["last-partition-id"] =
      std::max(IntOr(m_, "last-partition-id", 0), kUnpartitionedLastAssignedId);
  int64_t default_spec_id = IntOr(m_, "default-spec-id", -1);
  const Json* default_spec = FindById(specs, "spec-id", default_spec_id);
  if (default_spec == nullptr) {
    return Invalid("Default partition spec " + Str(default_spec_id) + " does not exist");
  }
  Json& orders = Array("sort-orders");
  if (orders.empty()) {
    orders.push_back(Json{{"order-id", kUnsortedOrderId}, {"fields", Json::array()}});
    m_["default-sort-order-id"] = kUnsortedOrderId;
  }
  int64_t default_order_id = IntOr(m_, "default-sort-order-id", -1);
  if (FindById(orders, "order-id", default_order_id) == nullptr) {
    return Invalid("Default sort order " + Str(default_order_id) + " does not exist");
  }

  CleanSnapshotLog();

  if (format_version_ == 1) {
    // v1 readers (PyIceberg's TableMetadataV1 among them) still require the
    // single-schema and single-spec fields.
    m_["schema"] = *current_schema;
    const Json* spec_fields = Member(*default_spec, "fields");
    m_["partition-spec"] = spec_fields != nullptr ? *spec_fields : Json::array();
  } else if (upgraded_from_v1_) {
    m_.erase("schema");
    m_.erase("partition-spec");
  }
  if (format_version_ >= kRowLineageFormatVersion) SetMissing(m_, "next-row-id", 0);
  m_["last-updated-ms"] = now_;
  return std::move(m_);
}

}  // namespace

Result<PreparedSchema> PrepareSchema(const Json& schema_in, FieldIds ids) {
  if (!schema_in.is_object()) return Invalid("Invalid schema: must be an object");
  PreparedSchema out;
  out.schema = schema_in;
  Json& schema = out.schema;
  const bool complete = HasAllIds(schema, 0);
  if (!complete && ids == FieldIds::kRequire) {
    return Invalid("Invalid schema: every field, list element and map key/value needs an id");
  }
  // The client's ids are validated (no duplicates) before any renumbering, so the
  // old → new map is a function and source ids that follow it stay unambiguous.
  if (complete) TM_TRY(IndexSchema(schema));
  if (ids == FieldIds::kFresh || (!complete && ids == FieldIds::kFillMissing)) {
    int64_t last_id = 0;
    AssignFreshIds(schema, last_id, out.remap, 0);
    out.reassigned = true;
    if (schema.contains("identifier-field-ids") && schema["identifier-field-ids"].is_array()) {
      for (Json& id : schema["identifier-field-ids"]) {
        if (!IsInt(id)) continue;
        auto it = out.remap.find(AsInt(id));
        if (it == out.remap.end()) {
          return Invalid("Invalid schema: identifier field " + id.dump() + " is not a field");
        }
        id = it->second;
      }
    }
  }
  TM_TRY(IndexSchema(schema));
  schema["type"] = "struct";
  return out;
}

const Json* FindSnapshot(const Json& metadata, int64_t id) {
  const Json* snapshots = Member(metadata, "snapshots");
  if (snapshots == nullptr || !snapshots->is_array()) return nullptr;
  for (const Json& s : *snapshots) {
    if (IntOr(s, "snapshot-id", std::numeric_limits<int64_t>::min()) == id) return &s;
  }
  return nullptr;
}

std::optional<int64_t> IntMember(const Json& object, const std::string& key) {
  if (!object.is_object()) return std::nullopt;
  const Json* v = Member(object, key);
  if (v == nullptr || !IsInt(*v)) return std::nullopt;
  return AsInt(*v);
}

std::optional<int64_t> SummaryCount(const Json& summary, const std::string& key) {
  if (!summary.is_object()) return std::nullopt;
  auto it = summary.find(key);
  if (it == summary.end() || !it->is_string()) return std::nullopt;
  return ParseInt(it->get<std::string>());
}

Result<Json> NewTableMetadata(const Json& create_request, const std::string& location,
                              const std::string& table_uuid, int64_t now_millis) {
  if (!create_request.is_object()) {
    return Invalid("Invalid create table request: must be a JSON object");
  }
  if (table_uuid.empty()) return Invalid("Invalid create table request: table-uuid is required");

  // Properties; format-version selects the version and, like the other reserved
  // properties, is not persisted. As Iceberg Java's TableMetadata does for every new table
  // (persistedProperties), Parquet files are zstd unless the client says otherwise: its
  // writers (Spark, Flink) would otherwise default to gzip. No other default is written.
  int64_t format_version = kDefaultFormatVersion;
  Json properties = {{"write.parquet.compression-codec", "zstd"}};
  if (const Json* props = Member(create_request, "properties")) {
    if (!props->is_object())
      return Invalid(FieldError("create table request", "properties", "an object"));
    for (const auto& [k, v] : props->items()) {
      if (!v.is_string())
        return Invalid("Invalid table property '" + k + "': value must be a string");
      if (k == "format-version") {
        std::optional<int64_t> parsed = ParseInt(v.get<std::string>());
        if (!parsed) return Invalid("Invalid format-version property: " + v.get<std::string>());
        TM_ASSIGN(format_version, ParseFormatVersion(*parsed));
        continue;
      }
      if (ReservedProperties().count(k)) continue;
      properties[k] = v;
    }
  }

  // Schema: fresh ids from 1 whatever the client sent, as the reference does; the
  // spec and order below follow the renumbering.
  const Json* schema_in = Member(create_request, "schema");
  if (schema_in == nullptr || !schema_in->is_object()) {
    return Invalid("Invalid create table request: 'schema' is required");
  }
  TM_ASSIGN(PreparedSchema prepared, PrepareSchema(*schema_in, FieldIds::kFresh));
  Json schema = std::move(prepared.schema);
  const std::map<int64_t, int64_t>& remap = prepared.remap;
  TM_ASSIGN(SchemaIndex index, IndexSchema(schema));
  schema["schema-id"] = 0;

  // Partition spec 0.
  Json spec_fields = Json::array();
  int64_t last_partition_id = kUnpartitionedLastAssignedId;
  if (const Json* spec_in = Member(create_request, "partition-spec")) {
    if (!spec_in->is_object())
      return Invalid(FieldError("create table request", "partition-spec", "an object"));
    Json spec = *spec_in;
    if (spec.contains("fields") && spec["fields"].is_array()) {
      for (Json& f : spec["fields"]) {
        if (f.is_object()) TM_TRY(RemapSourceIds(f, remap, "partition field"));
      }
    }
    TM_ASSIGN(std::vector<PartitionFieldInfo> fields, ParsePartitionFields(spec, index.ids));
    int64_t next_id = kUnpartitionedLastAssignedId;
    for (const auto& f : fields) {
      if (f.field_id) next_id = std::max(next_id, *f.field_id);
    }
    for (size_t i = 0; i < fields.size(); ++i) {
      Json f = fields[i].json;
      int64_t field_id = fields[i].field_id ? *fields[i].field_id : ++next_id;
      if (format_version == 1 && field_id != kPartitionDataIdStart + static_cast<int64_t>(i)) {
        return Invalid("Spec does not use sequential IDs that are required in v1: " +
                       spec_in->dump());
      }
      f["field-id"] = field_id;
      last_partition_id = std::max(last_partition_id, field_id);
      spec_fields.push_back(std::move(f));
    }
  }

  // Write order: unsorted keeps id 0, a real order gets 1 (the reference's ids).
  Json order_fields = Json::array();
  if (const Json* order_in = Member(create_request, "write-order")) {
    if (!order_in->is_object())
      return Invalid(FieldError("create table request", "write-order", "an object"));
    Json order = *order_in;
    if (order.contains("fields") && order["fields"].is_array()) {
      for (Json& f : order["fields"]) {
        if (f.is_object()) TM_TRY(RemapSourceIds(f, remap, "sort field"));
      }
    }
    TM_ASSIGN(order_fields, ParseSortFields(order, index.ids));
  }
  int64_t order_id = order_fields.empty() ? kUnsortedOrderId : kInitialSortOrderId;

  std::string table_location = location;
  if (table_location.empty()) {
    if (const Json* l = Member(create_request, "location"); l != nullptr && l->is_string()) {
      table_location = l->get<std::string>();
    }
  }
  table_location = StripTrailingSlash(std::move(table_location));
  if (table_location.empty()) return Invalid("location is required");

  Json m = Json::object();
  m["format-version"] = format_version;
  m["table-uuid"] = table_uuid;
  m["location"] = table_location;
  m["last-updated-ms"] = now_millis;
  m["last-column-id"] = index.highest;
  m["current-schema-id"] = 0;
  m["schemas"] = Json::array({schema});
  m["default-spec-id"] = 0;
  m["partition-specs"] = Json::array({Json{{"spec-id", 0}, {"fields", spec_fields}}});
  m["last-partition-id"] = last_partition_id;
  m["default-sort-order-id"] = order_id;
  m["sort-orders"] = Json::array({Json{{"order-id", order_id}, {"fields", order_fields}}});
  m["properties"] = std::move(properties);
  InitNewTableFields(m);
  if (format_version == 1) {
    m["schema"] = schema;
    m["partition-spec"] = spec_fields;
  }
  if (format_version >= kRowLineageFormatVersion) m["next-row-id"] = 0;
  return m;
}

Result<void> CheckRequirement(const Json* current, const Json& requirement) {
  if (!requirement.is_object()) return Invalid("Invalid table requirement: must be an object");
  TM_ASSIGN(std::string type, RequireString(requirement, "type", "table requirement"));

  if (type == "assert-create") {
    if (current != nullptr) return RequirementFailed("table already exists");
    return {};
  }

  // Parse first so a malformed requirement is a 400 whether or not the table exists.
  struct IdCheck {
    const char* type;
    const char* request_key;
    const char* metadata_key;
    const char* what;
    bool passes_without_table;  // the reference guards these with `base != null`
  };
  static const IdCheck kIdChecks[] = {
      {"assert-last-assigned-field-id", "last-assigned-field-id", "last-column-id",
       "last assigned field id changed", true},
      {"assert-current-schema-id", "current-schema-id", "current-schema-id",
       "current schema changed", false},
      {"assert-last-assigned-partition-id", "last-assigned-partition-id", "last-partition-id",
       "last assigned partition id changed", true},
      {"assert-default-spec-id", "default-spec-id", "default-spec-id",
       "default partition spec changed", false},
      {"assert-default-sort-order-id", "default-sort-order-id", "default-sort-order-id",
       "default sort order changed", false},
  };

  if (type == "assert-table-uuid") {
    TM_ASSIGN(std::string uuid, RequireString(requirement, "uuid", type));
    if (current == nullptr) return RequirementFailed("table does not exist");
    const Json* actual = Member(*current, "table-uuid");
    std::string actual_uuid =
        actual != nullptr && actual->is_string() ? actual->get<std::string>() : "null";
    if (!EqualsIgnoreCase(actual_uuid, uuid)) {
      // Argument order (table's, then requested) is the reference's.
      return RequirementFailed("UUID does not match: expected " + actual_uuid + " != " + uuid);
    }
    return {};
  }

  if (type == "assert-ref-snapshot-id") {
    TM_ASSIGN(std::string ref_name, RequireString(requirement, "ref", type));
    // snapshot-id is required but nullable; null (or absent) means "must not exist".
    TM_ASSIGN(std::optional<int64_t> expected, OptionalInt(requirement, "snapshot-id", type));
    if (current == nullptr) return RequirementFailed("table does not exist");
    Json refs = EffectiveRefs(*current);
    const Json* ref = Member(refs, ref_name);
    if (ref != nullptr) {
      std::string ref_type = ToLower(StringOr(*ref, "type")) == "tag" ? "tag" : "branch";
      int64_t actual = IntOr(*ref, "snapshot-id", -1);
      if (!expected) {
        return RequirementFailed(ref_type + " " + ref_name + " was created concurrently");
      }
      if (*expected != actual) {
        return RequirementFailed(ref_type + " " + ref_name + " has changed: expected id " +
                                 Str(*expected) + " != " + Str(actual));
      }
      return {};
    }
    if (expected) {
      return RequirementFailed("branch or tag " + ref_name + " is missing, expected " +
                               Str(*expected));
    }
    return {};
  }

  for (const IdCheck& check : kIdChecks) {
    if (type != check.type) continue;
    TM_ASSIGN(int64_t expected, RequireInt(requirement, check.request_key, type));
    if (current == nullptr) {
      if (check.passes_without_table) return {};
      return RequirementFailed("table does not exist");
    }
    int64_t actual = IntOr(*current, check.metadata_key, -1);
    if (std::string_view(check.metadata_key) == "last-partition-id" &&
        Member(*current, "last-partition-id") == nullptr) {
      // v1 files may omit it; the reference derives it from the specs.
      actual = kUnpartitionedLastAssignedId;
      if (const Json* specs = Member(*current, "partition-specs");
          specs != nullptr && specs->is_array()) {
        for (const Json& s : *specs) actual = std::max(actual, MaxPartitionFieldId(s));
      }
    }
    if (expected != actual) {
      return RequirementFailed(std::string(check.what) + ": expected id " + Str(expected) +
                               " != " + Str(actual));
    }
    return {};
  }
  return Invalid("Unknown table requirement type: " + type);
}

Result<Json> ApplyUpdates(Json base, const Json& updates, int64_t now_millis) {
  if (!updates.is_array()) return Invalid("Invalid table updates: must be an array");
  if (base.is_null()) base = Json::object();
  if (!base.is_object()) return Invalid("Invalid table metadata: must be an object");

  // A base without format-version is a table being created (an empty object, possibly
  // pre-filled by the caller). Like the reference's buildFromEmpty, its version comes
  // from the first upgrade-format-version so that earlier updates see it.
  const bool creating = Member(base, "format-version") == nullptr;
  if (!creating && updates.empty()) return base;  // nothing to do; keep it byte-identical
  int64_t format_version = kDefaultFormatVersion;
  if (creating) {
    for (const Json& u : updates) {
      if (u.is_object() && StringOr(u, "action") == "upgrade-format-version") {
        TM_ASSIGN(int64_t requested, RequireInt(u, "format-version", "upgrade-format-version"));
        TM_ASSIGN(format_version, ParseFormatVersion(requested));
        break;
      }
    }
  } else {
    const Json* v = Member(base, "format-version");
    if (!IsInt(*v)) return Invalid("Invalid table metadata: 'format-version' must be an integer");
    format_version = AsInt(*v);
  }

  MetadataBuilder builder(std::move(base), creating, format_version, now_millis);
  for (const Json& update : updates) TM_TRY(builder.Apply(update));
  return builder.Finish();
}

void AppendMetadataLog(Json& metadata, const std::string& previous_location,
                       int64_t previous_last_updated_ms) {
  if (previous_location.empty() || !metadata.is_object()) return;
  int64_t max_entries = kDefaultPreviousVersionsMax;
  if (const Json* props = Member(metadata, "properties")) {
    const Json* v = Member(*props, "write.metadata.previous-versions-max");
    if (v != nullptr && v->is_string()) {
      if (std::optional<int64_t> parsed = ParseInt(v->get<std::string>())) max_entries = *parsed;
    }
  }
  max_entries = std::max<int64_t>(max_entries, 1);
  Json& log = metadata["metadata-log"];
  if (!log.is_array()) log = Json::array();
  log.push_back(
      Json{{"timestamp-ms", previous_last_updated_ms}, {"metadata-file", previous_location}});
  if (static_cast<int64_t>(log.size()) > max_entries) {
    log.erase(log.begin(), log.begin() + (static_cast<int64_t>(log.size()) - max_entries));
  }
}

}  // namespace tablemere::iceberg
