#include "iceberg/view_metadata.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tablemere::iceberg {
namespace {

constexpr int64_t kNow = 5000;
constexpr const char* kUuid = "fa6506c3-7681-40c8-86dc-e36561f83385";

// What PyIceberg's create_view sends: model_dump_json without exclude_none, so
// optional members arrive as null; the schema carries fresh ids.
Json PyIcebergCreateRequest() {
  return Json::parse(R"({
    "name": "v",
    "location": null,
    "schema": {"type": "struct", "schema-id": 0, "identifier-field-ids": [], "fields": [
        {"id": 1, "name": "id", "type": "long", "required": true, "doc": null},
        {"id": 2, "name": "data", "type": "string", "required": false, "doc": null}]},
    "view-version": {"version-id": 1, "schema-id": 1, "timestamp-ms": 1700000000000,
                     "summary": {"engine-name": "pyiceberg"},
                     "representations": [{"type": "sql", "sql": "SELECT id, data FROM t",
                                          "dialect": "duckdb"}],
                     "default-catalog": null, "default-namespace": ["ns"]},
    "properties": {}
  })");
}

// What Spark (the Java RESTSessionCatalog) sends for CREATE VIEW.
Json SparkCreateRequest() {
  return Json::parse(R"({
    "name": "v",
    "schema": {"type": "struct", "schema-id": 0, "fields": [
        {"id": 0, "name": "id", "required": false, "type": "long"},
        {"id": 1, "name": "tags", "required": false, "type":
            {"type": "list", "element-id": 2, "element": "string", "element-required": false}}]},
    "view-version": {"version-id": 1, "timestamp-ms": 1710000000000, "schema-id": 0,
                     "summary": {"engine-version": "3.5.1", "app-id": "local-1",
                                 "engine-name": "spark",
                                 "iceberg-version": "Apache Iceberg 1.9.0"},
                     "default-catalog": "demo", "default-namespace": ["db"],
                     "representations": [{"type": "sql", "sql": "SELECT id, tags FROM db.t",
                                          "dialect": "spark"}]},
    "properties": {"create_engine_version": "Spark 3.5.1",
                   "spark.query-column-names": "id,tags",
                   "engine_version": "Spark 3.5.1"}
  })");
}

// A created view: version 1 on schema 0, as NewViewMetadata builds it.
Json BaseView() {
  Result<Json> r = NewViewMetadata(SparkCreateRequest(), "s3://b/wh/db/v", kUuid, kNow);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return r.value_or(Json::object());
}

Json Parse(const char* text) { return Json::parse(text); }

Json SqlVersion(int64_t version_id, int64_t schema_id, const std::string& sql,
                const std::string& dialect = "spark", int64_t timestamp = 2000) {
  return Json{{"version-id", version_id},
              {"schema-id", schema_id},
              {"timestamp-ms", timestamp},
              {"summary", {{"engine-name", "spark"}}},
              {"default-namespace", {"db"}},
              {"default-catalog", "demo"},
              {"representations", {{{"type", "sql"}, {"sql", sql}, {"dialect", dialect}}}}};
}

Json AddVersion(Json version) {
  return Json{{"action", "add-view-version"}, {"view-version", std::move(version)}};
}

Json SetCurrent(int64_t id) {
  return Json{{"action", "set-current-view-version"}, {"view-version-id", id}};
}

// What the Java client sends to replace a view whose schema changed.
Json ReplaceUpdates(const std::string& sql, int64_t timestamp = 2000) {
  Json schema = Parse(R"({"type": "struct", "schema-id": 1, "fields": [
      {"id": 0, "name": "id", "required": false, "type": "long"},
      {"id": 1, "name": "tags", "required": false, "type":
          {"type": "list", "element-id": 2, "element": "string", "element-required": false}},
      {"id": 3, "name": "n", "required": false, "type": "int"}]})");
  return Json::array({Json{{"action", "add-schema"}, {"schema", schema}, {"last-column-id", 3}},
                      AddVersion(SqlVersion(2, -1, sql, "spark", timestamp)), SetCurrent(-1)});
}

std::vector<int64_t> VersionIds(const Json& m) {
  std::vector<int64_t> ids;
  for (const Json& v : m["versions"]) ids.push_back(v["version-id"].get<int64_t>());
  return ids;
}

std::vector<int64_t> LogIds(const Json& m) {
  std::vector<int64_t> ids;
  for (const Json& e : m["version-log"]) ids.push_back(e["version-id"].get<int64_t>());
  return ids;
}

// ---------------------------------------------------------------------------
// NewViewMetadata

TEST(NewViewMetadataTest, PyIcebergStyleRequest) {
  Result<Json> r = NewViewMetadata(PyIcebergCreateRequest(), "s3://b/wh/ns/v/", kUuid, kNow);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  Json expected = Parse(R"({
    "format-version": 1,
    "view-uuid": "fa6506c3-7681-40c8-86dc-e36561f83385",
    "location": "s3://b/wh/ns/v",
    "schemas": [{"type": "struct", "schema-id": 0, "identifier-field-ids": [], "fields": [
        {"id": 1, "name": "id", "type": "long", "required": true, "doc": null},
        {"id": 2, "name": "data", "type": "string", "required": false, "doc": null}]}],
    "current-version-id": 1,
    "versions": [{"version-id": 1, "schema-id": 0, "timestamp-ms": 1700000000000,
                  "summary": {"engine-name": "pyiceberg"},
                  "representations": [{"type": "sql", "sql": "SELECT id, data FROM t",
                                       "dialect": "duckdb"}],
                  "default-namespace": ["ns"]}],
    "version-log": [{"timestamp-ms": 1700000000000, "version-id": 1}],
    "properties": {}
  })");
  EXPECT_EQ(*r, expected) << r->dump(2);
}

TEST(NewViewMetadataTest, SparkStyleRequestUsesRequestLocationWhenNoneGiven) {
  Json request = SparkCreateRequest();
  request["location"] = "s3://b/custom/v/";
  Result<Json> r = NewViewMetadata(request, "", kUuid, kNow);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const Json& m = *r;
  EXPECT_EQ(m["location"], "s3://b/custom/v");
  EXPECT_EQ(m["format-version"], 1);
  EXPECT_EQ(m["view-uuid"], kUuid);
  EXPECT_EQ(m["schemas"].size(), 1u);
  EXPECT_EQ(m["schemas"][0]["schema-id"], 0);
  EXPECT_EQ(m["schemas"][0]["fields"], request["schema"]["fields"]);  // client ids kept
  EXPECT_EQ(m["current-version-id"], 1);
  ASSERT_EQ(m["versions"].size(), 1u);
  Json expected_version = request["view-version"];
  EXPECT_EQ(m["versions"][0], expected_version);
  EXPECT_EQ(m["version-log"], Parse(R"([{"timestamp-ms": 1710000000000, "version-id": 1}])"));
  EXPECT_EQ(m["properties"], request["properties"]);

  // The server's location wins over the request's.
  Result<Json> pinned = NewViewMetadata(request, "s3://b/wh/db/v", kUuid, kNow);
  ASSERT_TRUE(pinned.has_value());
  EXPECT_EQ((*pinned)["location"], "s3://b/wh/db/v");
}

TEST(NewViewMetadataTest, AssignsFreshIdsAndDefaults) {
  Json request = Parse(R"({
    "name": "v",
    "schema": {"type": "struct", "fields": [
        {"name": "a", "required": false, "type": "int"},
        {"name": "m", "required": false, "type":
            {"type": "map", "key": "string", "value": "long", "value-required": false}}]},
    "view-version": {"version-id": 7, "schema-id": 3,
                     "representations": [{"type": "SQL", "sql": "SELECT 1", "dialect": "Trino"}]}
  })");
  Result<Json> r = NewViewMetadata(request, "s3://b/v", kUuid, kNow);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const Json& m = *r;
  const Json& fields = m["schemas"][0]["fields"];
  EXPECT_EQ(fields[0]["id"], 1);
  EXPECT_EQ(fields[1]["id"], 2);
  EXPECT_EQ(fields[1]["type"]["key-id"], 3);
  EXPECT_EQ(fields[1]["type"]["value-id"], 4);
  const Json& v = m["versions"][0];
  EXPECT_EQ(v["version-id"], 1);
  EXPECT_EQ(v["schema-id"], 0);
  EXPECT_EQ(v["timestamp-ms"], kNow);
  EXPECT_EQ(v["summary"], Json::object());
  EXPECT_EQ(v["default-namespace"], Json::array());
  EXPECT_EQ(v["representations"][0]["type"], "sql");
  EXPECT_EQ(v["representations"][0]["dialect"], "Trino");  // stored as sent
  EXPECT_EQ(m["version-log"], Parse(R"([{"timestamp-ms": 5000, "version-id": 1}])"));
  EXPECT_EQ(m["properties"], Json::object());
}

TEST(NewViewMetadataTest, RejectsBadRequests) {
  Json ok = SparkCreateRequest();
  auto with = [&](const std::string& pointer, Json value) {
    Json r = ok;
    r[Json::json_pointer(pointer)] = std::move(value);
    return r;
  };
  auto without = [&](const std::string& key) {
    Json r = ok;
    r.erase(key);
    return r;
  };
  struct Case {
    const char* name;
    Json request;
    std::string location;
    std::string message_part;
  } cases[] = {
      {"not an object", Json::array(), "s3://b/v", "must be a JSON object"},
      {"no schema", without("schema"), "s3://b/v", "'schema' is required"},
      {"no view-version", without("view-version"), "s3://b/v", "'view-version' is required"},
      {"view-version not an object", with("/view-version", "x"), "s3://b/v",
       "'view-version' is required"},
      {"no representations", with("/view-version/representations", nullptr), "s3://b/v",
       "'representations' must be a non-empty array"},
      {"empty representations", with("/view-version/representations", Json::array()), "s3://b/v",
       "'representations' must be a non-empty array"},
      {"representation not an object", with("/view-version/representations", {"SELECT 1"}),
       "s3://b/v", "view representation: must be an object"},
      {"representation without type",
       with("/view-version/representations", {{{"sql", "SELECT 1"}, {"dialect", "spark"}}}),
       "s3://b/v", "'type' must be a string"},
      {"sql without dialect",
       with("/view-version/representations", {{{"type", "sql"}, {"sql", "SELECT 1"}}}), "s3://b/v",
       "'dialect' must be a string"},
      {"unsupported representation",
       with("/view-version/representations", {{{"type", "substrait"}, {"plan", "…"}}}), "s3://b/v",
       "Found unsupported view representations: [substrait]"},
      {"duplicate dialect",
       with("/view-version/representations",
            {{{"type", "sql"}, {"sql", "SELECT 1"}, {"dialect", "spark"}},
             {{"type", "sql"}, {"sql", "SELECT 2"}, {"dialect", "Spark"}}}),
       "s3://b/v", "Cannot add multiple queries for dialect spark"},
      {"bad default-namespace", with("/view-version/default-namespace", "db"), "s3://b/v",
       "'default-namespace' must be an array of strings"},
      {"bad summary", with("/view-version/summary/engine-name", 3), "s3://b/v",
       "value of 'engine-name' must be a string"},
      {"bad timestamp", with("/view-version/timestamp-ms", "now"), "s3://b/v",
       "'timestamp-ms' must be an integer"},
      {"bad property", with("/properties/comment", 1), "s3://b/v",
       "value of 'comment' must be a string"},
      {"bad history size", with("/properties/version.history.num-entries", "0"), "s3://b/v",
       "version.history.num-entries must be positive but was 0"},
      {"schema without fields", with("/schema", Json::object()), "s3://b/v",
       "'fields' must be an array"},
      {"no location", ok, "", "location is required"},
  };
  for (const Case& c : cases) {
    Result<Json> r = NewViewMetadata(c.request, c.location, kUuid, kNow);
    ASSERT_FALSE(r.has_value()) << c.name;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidInput) << c.name;
    EXPECT_NE(r.error().message.find(c.message_part), std::string::npos)
        << c.name << ": " << r.error().message;
  }
  Result<Json> no_uuid = NewViewMetadata(ok, "s3://b/v", "", kNow);
  ASSERT_FALSE(no_uuid.has_value());
  EXPECT_EQ(no_uuid.error().code, ErrorCode::kInvalidInput);
}

// ---------------------------------------------------------------------------
// CheckViewRequirement

TEST(CheckViewRequirementTest, AssertViewUuid) {
  Json base = BaseView();
  struct Case {
    const char* requirement;
    std::optional<ErrorCode> code;  // nullopt = passes
    std::string message;
  } cases[] = {
      {R"({"type":"assert-view-uuid","uuid":"fa6506c3-7681-40c8-86dc-e36561f83385"})", std::nullopt,
       ""},
      {R"({"type":"assert-view-uuid","uuid":"FA6506C3-7681-40C8-86DC-E36561F83385"})", std::nullopt,
       ""},
      {R"({"type":"assert-view-uuid","uuid":"other"})", ErrorCode::kConflict,
       "Requirement failed: view UUID does not match: expected "
       "fa6506c3-7681-40c8-86dc-e36561f83385 != other"},
      {R"({"type":"assert-view-uuid"})", ErrorCode::kInvalidInput,
       "Invalid assert-view-uuid: 'uuid' must be a string"},
      {R"({"type":"assert-table-uuid","uuid":"x"})", ErrorCode::kInvalidInput,
       "Unknown view requirement type: assert-table-uuid"},
      {R"({"uuid":"x"})", ErrorCode::kInvalidInput,
       "Invalid view requirement: 'type' must be a string"},
      {R"([])", ErrorCode::kInvalidInput, "Invalid view requirement: must be an object"},
  };
  for (const auto& c : cases) {
    Result<void> r = CheckViewRequirement(base, Json::parse(c.requirement));
    if (!c.code) {
      EXPECT_TRUE(r.has_value()) << c.requirement << ": " << r.error().message;
      continue;
    }
    ASSERT_FALSE(r.has_value()) << c.requirement;
    EXPECT_EQ(r.error().code, *c.code) << c.requirement;
    EXPECT_EQ(r.error().message, c.message);
  }
}

// ---------------------------------------------------------------------------
// ApplyViewUpdates

TEST(ApplyViewUpdatesTest, EmptyUpdateListLeavesMetadataUntouched) {
  Json base = BaseView();
  Result<Json> r = ApplyViewUpdates(base, Json::array(), kNow);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, base);
}

TEST(ApplyViewUpdatesTest, ReplaceAddsSchemaAndVersionAndKeepsHistory) {
  Json base = BaseView();
  Result<Json> r =
      ApplyViewUpdates(base, ReplaceUpdates("SELECT id, tags, 1 AS n FROM db.t"), kNow);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const Json& m = *r;
  ASSERT_EQ(m["schemas"].size(), 2u);
  EXPECT_EQ(m["schemas"][1]["schema-id"], 1);
  EXPECT_EQ(m["current-version-id"], 2);
  EXPECT_EQ(VersionIds(m), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(m["versions"][0], base["versions"][0]);
  EXPECT_EQ(m["versions"][1]["schema-id"], 1);  // -1 = the schema added above
  EXPECT_EQ(m["versions"][1]["representations"][0]["sql"], "SELECT id, tags, 1 AS n FROM db.t");
  // The new version became current when it was written.
  EXPECT_EQ(m["version-log"], Parse(R"([{"timestamp-ms": 1710000000000, "version-id": 1},
                                        {"timestamp-ms": 2000, "version-id": 2}])"));

  // A second replace on the same schema reuses schema 1 and takes version 3.
  Result<Json> again =
      ApplyViewUpdates(m, ReplaceUpdates("SELECT id, tags, 2 AS n FROM db.t", 3000), kNow);
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ((*again)["schemas"].size(), 2u);
  EXPECT_EQ((*again)["current-version-id"], 3);
  EXPECT_EQ((*again)["versions"][2]["schema-id"], 1);
  EXPECT_EQ(LogIds(*again), (std::vector<int64_t>{1, 2, 3}));
}

TEST(ApplyViewUpdatesTest, IdenticalVersionIsReusedAndReactivationLogsNow) {
  Json base = BaseView();
  Result<Json> replaced = ApplyViewUpdates(base, ReplaceUpdates("SELECT 2"), kNow);
  ASSERT_TRUE(replaced.has_value()) << replaced.error().message;

  // Re-adding version 1's content (another id and timestamp) goes back to version 1.
  Json v1 = base["versions"][0];
  v1["version-id"] = 9;
  v1["timestamp-ms"] = 4000;
  Result<Json> r = ApplyViewUpdates(*replaced, Json::array({AddVersion(v1), SetCurrent(-1)}), 7000);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ((*r)["current-version-id"], 1);
  EXPECT_EQ(VersionIds(*r), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ((*r)["version-log"].back(), Parse(R"({"timestamp-ms": 7000, "version-id": 1})"));

  // Setting the current version again changes nothing.
  Result<Json> same = ApplyViewUpdates(*r, Json::array({SetCurrent(1)}), 8000);
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(*same, *r);
}

TEST(ApplyViewUpdatesTest, NewVersionIdIsClientsOrPastTheHighest) {
  Json base = BaseView();
  Result<Json> high = ApplyViewUpdates(
      base, Json::array({AddVersion(SqlVersion(5, 0, "SELECT 5")), SetCurrent(-1)}), kNow);
  ASSERT_TRUE(high.has_value()) << high.error().message;
  EXPECT_EQ((*high)["current-version-id"], 5);
  Result<Json> low = ApplyViewUpdates(
      *high, Json::array({AddVersion(SqlVersion(1, 0, "SELECT 6")), SetCurrent(-1)}), kNow);
  ASSERT_TRUE(low.has_value()) << low.error().message;
  EXPECT_EQ((*low)["current-version-id"], 6);
  EXPECT_EQ(VersionIds(*low), (std::vector<int64_t>{1, 5, 6}));
}

TEST(ApplyViewUpdatesTest, VersionsExpireKeepingTheCurrentOne) {
  Json m = BaseView();
  m["properties"]["version.history.num-entries"] = "2";
  for (int i = 2; i <= 4; ++i) {
    Json updates =
        Json::array({AddVersion(SqlVersion(i, 0, "SELECT " + std::to_string(i), "spark", 1000 * i)),
                     SetCurrent(-1)});
    Result<Json> r = ApplyViewUpdates(m, updates, kNow);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    m = *r;
  }
  EXPECT_EQ(VersionIds(m), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(m["version-log"], Parse(R"([{"timestamp-ms": 3000, "version-id": 3},
                                        {"timestamp-ms": 4000, "version-id": 4}])"));

  // Rolling back to 3 and adding 5 without making it current keeps 3 (current) and 5
  // (added now); 4 expires, and the log before its entry goes with it.
  Json updates = Json::array({SetCurrent(3), AddVersion(SqlVersion(5, 0, "SELECT 5"))});
  Result<Json> r = ApplyViewUpdates(m, updates, 9000);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(VersionIds(*r), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ((*r)["current-version-id"], 3);
  EXPECT_EQ((*r)["version-log"], Parse(R"([{"timestamp-ms": 9000, "version-id": 3}])"));

  // More versions added in one commit than the limit are all kept.
  Json many = Json::array();
  for (int i = 10; i < 14; ++i) {
    many.push_back(AddVersion(SqlVersion(i, 0, "SELECT " + std::to_string(i))));
  }
  many.push_back(SetCurrent(-1));
  Result<Json> bulk = ApplyViewUpdates(*r, many, 9000);
  ASSERT_TRUE(bulk.has_value()) << bulk.error().message;
  EXPECT_EQ(VersionIds(*bulk), (std::vector<int64_t>{10, 11, 12, 13}));
}

TEST(ApplyViewUpdatesTest, DroppingADialectNeedsTheProperty) {
  Json base = BaseView();
  Json updates = Json::array({AddVersion(SqlVersion(2, 0, "SELECT 1", "trino")), SetCurrent(-1)});
  Result<Json> r = ApplyViewUpdates(base, updates, kNow);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidInput);
  EXPECT_EQ(r.error().message,
            "Cannot replace view due to loss of view dialects "
            "(replace.drop-dialect.allowed=false):\nPrevious dialects: [spark]\n"
            "New dialects: [trino]");

  Json allowed = Json::array({Json{{"action", "set-properties"},
                                   {"updates", {{"replace.drop-dialect.allowed", "true"}}}}});
  allowed.insert(allowed.end(), updates.begin(), updates.end());
  Result<Json> ok = ApplyViewUpdates(base, allowed, kNow);
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ((*ok)["current-version-id"], 2);
}

TEST(ApplyViewUpdatesTest, LocationPropertiesUuidAndFormatVersion) {
  Json base = BaseView();
  Json updates = Parse(R"([
    {"action": "assign-uuid", "uuid": "FA6506C3-7681-40C8-86DC-E36561F83385"},
    {"action": "upgrade-format-version", "format-version": 1},
    {"action": "set-location", "location": "s3://b/moved/"},
    {"action": "set-properties", "updates": {"comment": "hello", "owner": "bob"}},
    {"action": "remove-properties", "removals": ["engine_version", "absent"]},
    {"action": "set-properties", "updated": {"legacy": "yes"}},
    {"action": "remove-properties", "removed": ["owner"]}
  ])");
  Result<Json> r = ApplyViewUpdates(base, updates, kNow);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ((*r)["view-uuid"], kUuid);
  EXPECT_EQ((*r)["format-version"], 1);
  EXPECT_EQ((*r)["location"], "s3://b/moved");
  Json props = base["properties"];
  props.erase("engine_version");
  props["comment"] = "hello";
  props["legacy"] = "yes";
  EXPECT_EQ((*r)["properties"], props);
  EXPECT_EQ((*r)["versions"], base["versions"]);
  EXPECT_EQ((*r)["version-log"], base["version-log"]);
}

TEST(ApplyViewUpdatesTest, CreateFromEmptyBase) {
  Json updates = Json::array(
      {Parse(R"({"action": "assign-uuid", "uuid": "fa6506c3-7681-40c8-86dc-e36561f83385"})"),
       Parse(R"({"action": "upgrade-format-version", "format-version": 1})"),
       Parse(R"({"action": "set-location", "location": "s3://b/v"})"),
       Json{{"action", "add-schema"}, {"schema", SparkCreateRequest()["schema"]}},
       AddVersion(SqlVersion(1, -1, "SELECT 1", "spark", 1234)), SetCurrent(-1)});
  Result<Json> r = ApplyViewUpdates(Json::object(), updates, kNow);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ((*r)["view-uuid"], kUuid);
  EXPECT_EQ((*r)["format-version"], 1);
  EXPECT_EQ((*r)["current-version-id"], 1);
  EXPECT_EQ((*r)["versions"][0]["schema-id"], 0);
  EXPECT_EQ((*r)["version-log"], Parse(R"([{"timestamp-ms": 1234, "version-id": 1}])"));
  EXPECT_EQ((*r)["properties"], Json::object());

  // A create must name the view and pick a current version.
  Result<Json> no_uuid = ApplyViewUpdates(Json::object(), Json::array({updates[2]}), kNow);
  ASSERT_FALSE(no_uuid.has_value());
  EXPECT_NE(no_uuid.error().message.find("view-uuid is required"), std::string::npos);
  Json no_current = updates;
  no_current.erase(no_current.size() - 1);
  Result<Json> r2 = ApplyViewUpdates(Json::object(), no_current, kNow);
  ASSERT_FALSE(r2.has_value());
  EXPECT_NE(r2.error().message.find("Cannot find current version null"), std::string::npos)
      << r2.error().message;
}

TEST(ApplyViewUpdatesTest, UnknownOrMalformedUpdatesAreInvalidInput) {
  Json base = BaseView();
  struct Case {
    const char* name;
    Json updates;
    std::string message_part;
  } cases[] = {
      {"not an array", Json::object(), "must be an array"},
      {"not an object", Json::array({42}), "Invalid view update: must be an object"},
      {"no action", Parse(R"([{"uuid": "x"}])"), "'action' must be a string"},
      {"unknown action", Parse(R"([{"action": "drop-everything"}])"),
       "Unknown view update action: drop-everything"},
      {"table-only action", Parse(R"([{"action": "set-current-schema", "schema-id": 0}])"),
       "Cannot apply update set-current-schema to a view"},
      {"reassign uuid", Parse(R"([{"action": "assign-uuid", "uuid": "other"}])"),
       "Cannot reassign view UUID"},
      {"upgrade to v2", Parse(R"([{"action": "upgrade-format-version", "format-version": 2}])"),
       "Cannot upgrade view to unsupported format version: v2"},
      {"downgrade", Parse(R"([{"action": "upgrade-format-version", "format-version": 0}])"),
       "Cannot downgrade v1 view to v0"},
      {"empty location", Parse(R"([{"action": "set-location", "location": ""}])"),
       "'location' must not be empty"},
      {"non-string property", Parse(R"([{"action": "set-properties", "updates": {"a": 1}}])"),
       "value of 'a' must be a string"},
      {"bad removals", Parse(R"([{"action": "remove-properties", "removals": "a"}])"),
       "'removals' must be an array"},
      {"bad history size", Parse(R"([{"action": "set-properties",
                  "updates": {"version.history.num-entries": "-1"}}])"),
       "version.history.num-entries must be positive but was -1"},
      {"schema without ids",
       Json::array(
           {Json{{"action", "add-schema"}, {"schema", Parse(R"({"type": "struct", "fields": [
                             {"name": "x", "required": false, "type": "int"}]})")}}}),
       "needs an id"},
      {"no view-version", Parse(R"([{"action": "add-view-version"}])"),
       "'view-version' must be an object"},
      {"version without schema-id", Json::array({AddVersion([] {
         Json v = SqlVersion(2, 0, "SELECT 1");
         v.erase("schema-id");
         return v;
       }())}),
       "'schema-id' must be an integer"},
      {"version on unknown schema", Json::array({AddVersion(SqlVersion(2, 7, "SELECT 1"))}),
       "Cannot add version with unknown schema: 7"},
      {"last added schema without one", Json::array({AddVersion(SqlVersion(2, -1, "SELECT 1"))}),
       "Cannot set last added schema: no schema has been added"},
      {"last added version without one", Json::array({SetCurrent(-1)}),
       "Cannot set last version id: no current version id has been set"},
      {"unknown version", Json::array({SetCurrent(42)}),
       "Cannot set current version to unknown version: 42"},
      {"duplicate dialect", Json::array({AddVersion([] {
         Json v = SqlVersion(2, 0, "SELECT 1");
         v["representations"].push_back(
             Json{{"type", "sql"}, {"sql", "SELECT 2"}, {"dialect", "SPARK"}});
         return v;
       }())}),
       "Cannot add multiple queries for dialect spark"},
  };
  for (const Case& c : cases) {
    Result<Json> r = ApplyViewUpdates(base, c.updates, kNow);
    ASSERT_FALSE(r.has_value()) << c.name;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidInput) << c.name;
    EXPECT_NE(r.error().message.find(c.message_part), std::string::npos)
        << c.name << ": " << r.error().message;
  }
}

TEST(ApplyViewUpdatesTest, AddSchemaReusesIdenticalSchema) {
  Json base = BaseView();
  // Identical to schema 0 (another client-side id): nothing is added, and -1 then
  // means that schema.
  Json same = base["schemas"][0];
  same["schema-id"] = 4;
  Json updates = Json::array({Json{{"action", "add-schema"}, {"schema", same}},
                              AddVersion(SqlVersion(2, -1, "SELECT 2")), SetCurrent(-1)});
  Result<Json> r = ApplyViewUpdates(base, updates, kNow);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ((*r)["schemas"], base["schemas"]);
  EXPECT_EQ((*r)["versions"][1]["schema-id"], 0);
}

TEST(ApplyViewUpdatesTest, UnknownFieldsRoundTrip) {
  Json base = BaseView();
  base["x-vendor-extension"] = Parse(R"({"nested": [1, {"deep": null}]})");
  base["schemas"][0]["fields"][0]["x-field-extra"] = "kept";
  base["versions"][0]["x-version-extra"] = {{"a", 1}};
  base["versions"][0]["representations"][0]["x-repr-extra"] = true;
  base["version-log"][0]["x-log-extra"] = 7;

  Json updates = ReplaceUpdates("SELECT 3");
  // The new version carries its own extension member.
  updates[1]["view-version"]["x-new-version-extra"] = "also kept";
  Result<Json> r = ApplyViewUpdates(base, updates, kNow);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ((*r)["x-vendor-extension"], base["x-vendor-extension"]);
  EXPECT_EQ((*r)["schemas"][0], base["schemas"][0]);
  EXPECT_EQ((*r)["versions"][0], base["versions"][0]);
  EXPECT_EQ((*r)["version-log"][0], base["version-log"][0]);
  EXPECT_EQ((*r)["versions"][1]["x-new-version-extra"], "also kept");

  // A property-only commit changes nothing else.
  Result<Json> props = ApplyViewUpdates(
      base, Parse(R"([{"action": "set-properties", "updates": {"k": "v"}}])"), kNow);
  ASSERT_TRUE(props.has_value()) << props.error().message;
  Json expected = base;
  expected["properties"]["k"] = "v";
  EXPECT_EQ(*props, expected);

  // Unknown members in a create request's schema and version survive too.
  Json request = SparkCreateRequest();
  request["view-version"]["x-extra"] = 1;
  request["schema"]["x-extra"] = 2;
  Result<Json> created = NewViewMetadata(request, "s3://b/v", kUuid, kNow);
  ASSERT_TRUE(created.has_value()) << created.error().message;
  EXPECT_EQ((*created)["versions"][0]["x-extra"], 1);
  EXPECT_EQ((*created)["schemas"][0]["x-extra"], 2);
}

}  // namespace
}  // namespace tablemere::iceberg
