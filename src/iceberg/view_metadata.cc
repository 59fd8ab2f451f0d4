#include "iceberg/view_metadata.h"

#include "iceberg/json_access.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace tablemere::iceberg {
namespace {

// Views have one format version (ViewMetadata.SUPPORTED_VIEW_FORMAT_VERSION).
constexpr int64_t kViewFormatVersion = 1;
constexpr int64_t kInitialSchemaId = 0;
constexpr int64_t kInitialVersionId = 1;
constexpr int64_t kLastAdded = -1;
constexpr int64_t kNoId = std::numeric_limits<int64_t>::min();
constexpr const char* kVersionHistorySize = "version.history.num-entries";
constexpr int64_t kDefaultVersionHistorySize = 10;
constexpr const char* kDropDialectAllowed = "replace.drop-dialect.allowed";

// Update actions that exist only for tables; the reference answers them with
// "Cannot apply update … to a view".
const std::set<std::string>& TableOnlyActions() {
  static const std::set<std::string> kActions = {
      "set-current-schema",
      "add-spec",
      "set-default-spec",
      "add-sort-order",
      "set-default-sort-order",
      "add-snapshot",
      "set-snapshot-ref",
      "remove-snapshots",
      "remove-snapshot-ref",
      "set-statistics",
      "remove-statistics",
      "set-partition-statistics",
      "remove-partition-statistics",
      "remove-partition-specs",
      "remove-schemas",
      "add-encryption-key",
      "set-encryption-key",
      "remove-encryption-key",
      "enable-row-lineage",
  };
  return kActions;
}

// ---------------------------------------------------------------------------
// JSON access beyond the shared helpers in json_access.h.

// A string → string map (properties, summary); absent is empty.
Result<Json> OptionalStringMap(const Json& obj, const std::string& key,
                               const std::string& context) {
  const Json* v = Member(obj, key);
  if (v == nullptr) return Json::object();
  if (!v->is_object()) return Invalid(FieldError(context, key, "an object"));
  for (const auto& [k, value] : v->items()) {
    if (!value.is_string()) {
      return Invalid("Invalid " + context + " '" + key + "': value of '" + k +
                     "' must be a string");
    }
  }
  return *v;
}

std::string StringOr(const Json& obj, const std::string& key, const std::string& fallback = "") {
  const Json* v = Member(obj, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : fallback;
}

int64_t IntOr(const Json& obj, const std::string& key, int64_t fallback) {
  const Json* v = Member(obj, key);
  return v != nullptr && IsInt(*v) ? AsInt(*v) : fallback;
}

// The member, or `fallback` when absent or null (for comparisons of stored and new
// versions, where an absent summary equals an empty one).
Json MemberOr(const Json& obj, const std::string& key, Json fallback) {
  const Json* v = Member(obj, key);
  return v != nullptr ? *v : std::move(fallback);
}

Json* FindById(Json& arr, const std::string& id_key, int64_t id) {
  if (!arr.is_array()) return nullptr;
  for (Json& e : arr) {
    if (IntOr(e, id_key, kNoId) == id) return &e;
  }
  return nullptr;
}

// Iceberg locations never keep a trailing slash (LocationUtil.stripTrailingSlash).
std::string StripTrailingSlash(std::string location) {
  while (location.size() > 1 && location.back() == '/' && !EndsWith(location, "://")) {
    location.pop_back();
  }
  return location;
}

std::string JoinSorted(const std::set<std::string>& items) {
  std::string out = "[";
  for (const std::string& item : items) {
    if (out.size() > 1) out += ", ";
    out += item;
  }
  return out + "]";
}

// ---------------------------------------------------------------------------
// Schemas. Views store schemas exactly as tables do, so validation and fresh-id
// assignment go through the table model rather than a second copy of it.

// Validates `schema` and returns it as stored (type struct; the schema-id is the
// caller's to set), its field ids treated as `ids` says. Views keep the client's ids
// (the reference's ViewMetadata.Builder does not renumber them).
Result<Json> NormalizeSchema(const Json& schema, FieldIds ids) {
  TM_ASSIGN(PreparedSchema prepared, PrepareSchema(schema, ids));
  prepared.schema.erase("schema-id");
  return std::move(prepared.schema);
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
// View versions

// Lower-cased dialects of a version's SQL representations.
std::set<std::string> SqlDialects(const Json& version) {
  std::set<std::string> dialects;
  if (const Json* reps = Member(version, "representations"); reps != nullptr && reps->is_array()) {
    for (const Json& r : *reps) {
      if (ToLower(StringOr(r, "type")) == "sql") dialects.insert(ToLower(StringOr(r, "dialect")));
    }
  }
  return dialects;
}

// Validates a client's view version and returns it as stored: summary and
// default-namespace present, SQL representation types spelled "sql", a null
// default-catalog dropped, timestamp-ms defaulted to now. Unknown members are kept.
// A create takes version-id and schema-id from the server, so they are optional then.
Result<Json> ParseViewVersion(const Json& in, bool for_create, int64_t now) {
  const std::string ctx = "view version";
  if (!in.is_object()) return Invalid("Invalid view version: must be an object");
  Json v = in;
  if (for_create) {
    TM_TRY(OptionalInt(in, "version-id", ctx));
    TM_TRY(OptionalInt(in, "schema-id", ctx));
  } else {
    TM_TRY(RequireInt(in, "version-id", ctx));
    TM_TRY(RequireInt(in, "schema-id", ctx));
  }
  TM_ASSIGN(std::optional<int64_t> timestamp, OptionalInt(in, "timestamp-ms", ctx));
  v["timestamp-ms"] = timestamp.value_or(now);
  TM_ASSIGN(v["summary"], OptionalStringMap(in, "summary", ctx));

  const Json* reps = Member(in, "representations");
  if (reps == nullptr || !reps->is_array() || reps->empty()) {
    return Invalid("Invalid view version: 'representations' must be a non-empty array");
  }
  Json stored_reps = Json::array();
  std::set<std::string> dialects;
  std::set<std::string> unsupported;
  for (const Json& r : *reps) {
    if (!r.is_object()) return Invalid("Invalid view representation: must be an object");
    TM_ASSIGN(std::string type, RequireString(r, "type", "view representation"));
    type = ToLower(type);
    Json rep = r;
    if (type == "sql") {
      TM_TRY(RequireString(r, "sql", "SQL view representation"));
      TM_ASSIGN(std::string dialect, RequireString(r, "dialect", "SQL view representation"));
      if (!dialects.insert(ToLower(dialect)).second) {
        return RuleBroken("Invalid view version: Cannot add multiple queries for dialect " +
                          ToLower(dialect));
      }
      rep["type"] = "sql";
    } else {
      unsupported.insert(type);
    }
    stored_reps.push_back(std::move(rep));
  }
  // The reference's createView only builds SQL views; a replace keeps unknown kinds.
  if (for_create && !unsupported.empty()) {
    return Invalid("Found unsupported view representations: " + JoinSorted(unsupported));
  }
  v["representations"] = std::move(stored_reps);

  if (const Json* ns = Member(in, "default-namespace")) {
    if (!ns->is_array())
      return Invalid(FieldError(ctx, "default-namespace", "an array of strings"));
    for (const Json& level : *ns) {
      if (!level.is_string()) {
        return Invalid(FieldError(ctx, "default-namespace", "an array of strings"));
      }
    }
  } else {
    v["default-namespace"] = Json::array();  // Namespace.empty()
  }
  if (const Json* catalog = Member(in, "default-catalog")) {
    if (!catalog->is_string()) return Invalid(FieldError(ctx, "default-catalog", "a string"));
  } else {
    v.erase("default-catalog");
  }
  return v;
}

// ViewMetadata.Builder.sameViewVersion: versions that behave the same, ignoring the
// version id and the timestamp.
bool SameViewVersion(const Json& a, const Json& b) {
  return MemberOr(a, "summary", Json::object()) == MemberOr(b, "summary", Json::object()) &&
         MemberOr(a, "representations", Json::array()) ==
             MemberOr(b, "representations", Json::array()) &&
         MemberOr(a, "default-catalog", nullptr) == MemberOr(b, "default-catalog", nullptr) &&
         MemberOr(a, "default-namespace", Json::array()) ==
             MemberOr(b, "default-namespace", Json::array()) &&
         IntOr(a, "schema-id", kNoId) == IntOr(b, "schema-id", kNoId);
}

// version.history.num-entries, which must be a positive integer.
Result<int64_t> VersionHistorySize(const Json& metadata) {
  const Json* props = Member(metadata, "properties");
  const Json* v = props != nullptr ? Member(*props, kVersionHistorySize) : nullptr;
  if (v == nullptr) return kDefaultVersionHistorySize;
  std::string raw = v->is_string() ? v->get<std::string>() : v->dump();
  std::optional<int64_t> parsed = v->is_string() ? ParseInt(raw) : std::nullopt;
  if (!parsed || *parsed <= 0) {
    return Invalid(std::string(kVersionHistorySize) + " must be positive but was " + raw);
  }
  return *parsed;
}

// ---------------------------------------------------------------------------
// The update builder: mirrors ViewMetadata.Builder on the JSON document in place.

class ViewBuilder {
 public:
  ViewBuilder(Json metadata, bool creating, int64_t format_version, int64_t now_millis)
      : m_(std::move(metadata)),
        creating_(creating),
        format_version_(format_version),
        now_(now_millis) {
    m_["format-version"] = format_version_;
    if (creating_) {
      for (const char* key : {"schemas", "versions", "version-log"}) {
        if (!m_.contains(key)) m_[key] = Json::array();
      }
      if (!m_.contains("properties")) m_["properties"] = Json::object();
    } else if (const Json* current = FindById(Array("versions"), "version-id",
                                              IntOr(m_, "current-version-id", kNoId))) {
      previous_version_ = *current;
    }
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

  Result<void> UpgradeFormatVersion(const Json& u);
  Result<void> AddSchema(const Json& u);
  Result<void> SetLocation(const Json& u);
  Result<void> SetProperties(const Json& u);
  Result<void> RemoveProperties(const Json& u);
  Result<void> AddViewVersion(const Json& u);
  Result<void> SetCurrentViewVersion(const Json& u);
  Result<void> ExpireVersions(int64_t current_version_id);

  Json m_;
  bool creating_;
  int64_t format_version_;
  int64_t now_;
  // The base's current version: a replace may not drop its SQL dialects.
  std::optional<Json> previous_version_;
  // "-1 = last added" resolves against this batch, as in the reference.
  std::optional<int64_t> last_added_schema_;
  std::optional<int64_t> last_added_version_;
  std::set<int64_t> added_versions_;
  // The reference records one version-log entry per commit, for the final current
  // version.
  std::optional<Json> history_entry_;
};

Result<void> ViewBuilder::Apply(const Json& u) {
  if (!u.is_object()) return Invalid("Invalid view update: must be an object");
  TM_ASSIGN(std::string action, RequireString(u, "action", "view update"));
  if (action == "assign-uuid") return ApplyAssignUuid(m_, u, "view-uuid", "view");
  if (action == "upgrade-format-version") return UpgradeFormatVersion(u);
  if (action == "add-schema") return AddSchema(u);
  if (action == "set-location") return SetLocation(u);
  if (action == "set-properties") return SetProperties(u);
  if (action == "remove-properties") return RemoveProperties(u);
  if (action == "add-view-version") return AddViewVersion(u);
  if (action == "set-current-view-version") return SetCurrentViewVersion(u);
  if (TableOnlyActions().count(action)) {
    return Invalid("Cannot apply update " + action + " to a view");
  }
  return Invalid("Unknown view update action: " + action);
}

Result<void> ViewBuilder::UpgradeFormatVersion(const Json& u) {
  TM_ASSIGN(int64_t version, RequireInt(u, "format-version", "upgrade-format-version"));
  if (version < format_version_) {
    return Invalid("Cannot downgrade v" + Str(format_version_) + " view to v" + Str(version));
  }
  if (version > kViewFormatVersion) {
    return Invalid("Cannot upgrade view to unsupported format version: v" + Str(version) +
                   " (supported: v" + Str(kViewFormatVersion) + ")");
  }
  format_version_ = version;
  m_["format-version"] = version;
  return {};
}

Result<void> ViewBuilder::AddSchema(const Json& u) {
  TM_ASSIGN(const Json* schema, RequireObject(u, "schema", "add-schema"));
  // Deprecated and meaningless for views; checked only for its type.
  TM_TRY(OptionalInt(u, "last-column-id", "add-schema"));
  TM_ASSIGN(Json stored, NormalizeSchema(*schema, FieldIds::kRequire));

  // Reuse the id of an identical schema, else one past the highest id (the client's
  // schema-id is not used).
  Json& schemas = Array("schemas");
  int64_t schema_id = kInitialSchemaId;
  for (const Json& s : schemas) {
    int64_t id = IntOr(s, "schema-id", kInitialSchemaId);
    if (SameSchema(s, stored)) {
      // The reference leaves "last added" alone here, which fails a later -1 when
      // nothing was added yet; that case means this schema, so it is accepted.
      if (!last_added_schema_) last_added_schema_ = id;
      return {};
    }
    if (id >= schema_id) schema_id = id + 1;
  }
  stored["schema-id"] = schema_id;
  schemas.push_back(std::move(stored));
  last_added_schema_ = schema_id;
  return {};
}

Result<void> ViewBuilder::SetLocation(const Json& u) { return ApplySetLocation(m_, u); }

Result<void> ViewBuilder::SetProperties(const Json& u) { return ApplySetProperties(m_, u); }

Result<void> ViewBuilder::RemoveProperties(const Json& u) { return ApplyRemoveProperties(m_, u); }

Result<void> ViewBuilder::AddViewVersion(const Json& u) {
  TM_ASSIGN(const Json* input, RequireObject(u, "view-version", "add-view-version"));
  TM_ASSIGN(Json version, ParseViewVersion(*input, false, now_));

  int64_t schema_id = IntOr(version, "schema-id", kNoId);
  if (schema_id == kLastAdded) {
    if (!last_added_schema_)
      return Invalid("Cannot set last added schema: no schema has been added");
    schema_id = *last_added_schema_;
    version["schema-id"] = schema_id;
  }
  if (FindById(Array("schemas"), "schema-id", schema_id) == nullptr) {
    return Invalid("Cannot add version with unknown schema: " + Str(schema_id));
  }

  // Reuse the id of an identical version, else the client's id bumped past every
  // existing one.
  Json& versions = Array("versions");
  int64_t version_id = IntOr(version, "version-id", kInitialVersionId);
  for (const Json& existing : versions) {
    int64_t id = IntOr(existing, "version-id", kNoId);
    if (SameViewVersion(existing, version)) {
      // The reference forgets "last added" when the version predates this batch, so a
      // later -1 fails there; here -1 then means this version.
      last_added_version_ = id;
      return {};
    }
    if (id >= version_id) version_id = id + 1;
  }
  version["version-id"] = version_id;
  versions.push_back(std::move(version));
  added_versions_.insert(version_id);
  last_added_version_ = version_id;
  return {};
}

Result<void> ViewBuilder::SetCurrentViewVersion(const Json& u) {
  TM_ASSIGN(int64_t id, RequireInt(u, "view-version-id", "set-current-view-version"));
  if (id == kLastAdded) {
    if (!last_added_version_) {
      return Invalid("Cannot set last version id: no current version id has been set");
    }
    id = *last_added_version_;
  }
  if (id == IntOr(m_, "current-version-id", kNoId)) return {};
  const Json* version = FindById(Array("versions"), "version-id", id);
  if (version == nullptr) {
    return Invalid("Cannot set current version to unknown version: " + Str(id));
  }
  m_["current-version-id"] = id;
  // A version added in this batch became current when it was written; re-activating
  // an older one happens now.
  int64_t when = added_versions_.count(id) ? IntOr(*version, "timestamp-ms", now_) : now_;
  history_entry_ = Json{{"timestamp-ms", when}, {"version-id", id}};
  return {};
}

// Keeps the newest version.history.num-entries versions (by id, which is assigned
// sequentially), always including the current version and those added in this batch,
// and drops version-log entries up to and including the last one for an expired
// version (ViewMetadata.Builder.expireVersions / updateHistory).
Result<void> ViewBuilder::ExpireVersions(int64_t current_version_id) {
  TM_ASSIGN(int64_t history_size, VersionHistorySize(m_));
  std::set<int64_t> must_keep = added_versions_;
  must_keep.insert(current_version_id);
  size_t to_keep = std::max(must_keep.size(), static_cast<size_t>(history_size));
  Json& versions = Array("versions");
  if (versions.size() <= to_keep) return {};

  std::vector<int64_t> ids;
  for (const Json& v : versions) ids.push_back(IntOr(v, "version-id", kNoId));
  std::sort(ids.begin(), ids.end(), std::greater<>());
  std::set<int64_t> retained = {current_version_id};
  for (int64_t id : ids) {
    if (retained.size() >= to_keep) break;
    retained.insert(id);
  }

  Json kept = Json::array();
  for (Json& v : versions) {
    if (retained.count(IntOr(v, "version-id", kNoId))) kept.push_back(std::move(v));
  }
  versions = std::move(kept);

  Json& log = Array("version-log");
  Json kept_log = Json::array();
  for (Json& entry : log) {
    if (retained.count(IntOr(entry, "version-id", kNoId))) {
      kept_log.push_back(std::move(entry));
    } else {
      kept_log = Json::array();  // history before an unknown version is meaningless
    }
  }
  log = std::move(kept_log);
  return {};
}

Result<Json> ViewBuilder::Finish() {
  const Json* uuid = Member(m_, "view-uuid");
  if (creating_ && (uuid == nullptr || !uuid->is_string() || uuid->get<std::string>().empty())) {
    return Invalid("view-uuid is required: a create must send assign-uuid");
  }
  const Json* location = Member(m_, "location");
  if (location == nullptr || !location->is_string() || location->get<std::string>().empty()) {
    return Invalid("Invalid location: null");
  }
  Json& versions = Array("versions");
  if (versions.empty()) return Invalid("Invalid view: no versions were added");
  int64_t current_id = IntOr(m_, "current-version-id", kNoId);
  const Json* current = FindById(versions, "version-id", current_id);
  if (current == nullptr) {
    return Invalid("Cannot find current version " +
                   (current_id == kNoId ? std::string("null") : Str(current_id)) +
                   " in view versions");
  }

  if (history_entry_) Array("version-log").push_back(std::move(*history_entry_));

  const Json* props = Member(m_, "properties");
  const Json* drop = props != nullptr ? Member(*props, kDropDialectAllowed) : nullptr;
  bool drop_allowed =
      drop != nullptr && drop->is_string() && EqualsIgnoreCase(drop->get<std::string>(), "true");
  if (previous_version_ && !drop_allowed) {
    std::set<std::string> before = SqlDialects(*previous_version_);
    std::set<std::string> after = SqlDialects(*current);
    if (!std::includes(after.begin(), after.end(), before.begin(), before.end())) {
      return Invalid(std::string("Cannot replace view due to loss of view dialects (") +
                     kDropDialectAllowed + "=false):\nPrevious dialects: " + JoinSorted(before) +
                     "\nNew dialects: " + JoinSorted(after));
    }
  }

  TM_TRY(ExpireVersions(current_id));
  return std::move(m_);
}

}  // namespace

Result<Json> NewViewMetadata(const Json& create_request, const std::string& location,
                             const std::string& view_uuid, int64_t now_millis) {
  const std::string ctx = "create view request";
  if (!create_request.is_object()) {
    return Invalid("Invalid create view request: must be a JSON object");
  }
  if (view_uuid.empty()) return Invalid("Invalid create view request: view-uuid is required");

  TM_ASSIGN(Json properties, OptionalStringMap(create_request, "properties", ctx));

  const Json* schema_in = Member(create_request, "schema");
  if (schema_in == nullptr || !schema_in->is_object()) {
    return Invalid("Invalid create view request: 'schema' is required");
  }
  TM_ASSIGN(Json schema, NormalizeSchema(*schema_in, FieldIds::kFillMissing));
  schema["schema-id"] = kInitialSchemaId;

  const Json* version_in = Member(create_request, "view-version");
  if (version_in == nullptr || !version_in->is_object()) {
    return Invalid("Invalid create view request: 'view-version' is required");
  }
  TM_ASSIGN(Json version, ParseViewVersion(*version_in, true, now_millis));
  // The spec: the server's ids replace the client's.
  version["version-id"] = kInitialVersionId;
  version["schema-id"] = kInitialSchemaId;

  std::string view_location = location;
  if (view_location.empty()) view_location = StringOr(create_request, "location");
  view_location = StripTrailingSlash(std::move(view_location));
  if (view_location.empty()) return Invalid("location is required");

  Json m = Json::object();
  m["format-version"] = kViewFormatVersion;
  m["view-uuid"] = view_uuid;
  m["location"] = view_location;
  m["schemas"] = Json::array({std::move(schema)});
  m["current-version-id"] = kInitialVersionId;
  m["version-log"] = Json::array(
      {Json{{"timestamp-ms", version["timestamp-ms"]}, {"version-id", kInitialVersionId}}});
  m["versions"] = Json::array({std::move(version)});
  m["properties"] = std::move(properties);
  TM_TRY(VersionHistorySize(m));
  return m;
}

Result<void> CheckViewRequirement(const Json& current, const Json& requirement) {
  if (!requirement.is_object()) return Invalid("Invalid view requirement: must be an object");
  TM_ASSIGN(std::string type, RequireString(requirement, "type", "view requirement"));
  if (type == "assert-view-uuid") {
    TM_ASSIGN(std::string uuid, RequireString(requirement, "uuid", type));
    std::string actual = StringOr(current, "view-uuid", "null");
    if (!EqualsIgnoreCase(actual, uuid)) {
      // Argument order (the view's, then the requested) is the reference's.
      return Fail(ErrorCode::kConflict, "Requirement failed: view UUID does not match: expected " +
                                            actual + " != " + uuid);
    }
    return {};
  }
  return Invalid("Unknown view requirement type: " + type);
}

Result<Json> ApplyViewUpdates(Json base, const Json& updates, int64_t now_millis) {
  if (!updates.is_array()) return Invalid("Invalid view updates: must be an array");
  if (base.is_null()) base = Json::object();
  if (!base.is_object()) return Invalid("Invalid view metadata: must be an object");

  const bool creating = Member(base, "format-version") == nullptr;
  if (!creating && updates.empty()) return base;  // nothing to do; keep it byte-identical
  int64_t format_version = kViewFormatVersion;
  if (!creating) {
    const Json* v = Member(base, "format-version");
    if (!IsInt(*v)) return Invalid("Invalid view metadata: 'format-version' must be an integer");
    format_version = AsInt(*v);
  }

  ViewBuilder builder(std::move(base), creating, format_version, now_millis);
  for (const Json& update : updates) TM_TRY(builder.Apply(update));
  return builder.Finish();
}

}  // namespace tablemere::iceberg
