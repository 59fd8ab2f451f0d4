#include "iceberg/table_metadata.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tablemere::iceberg {
namespace {

constexpr int64_t kNow = 5000;
constexpr const char* kUuid = "9c12d441-03fe-4693-9a96-a0705ddf69c1";

// A v2 table with one append (snapshot 100, sequence number 1) on main.
Json BaseV2() {
  return Json::parse(R"({
    "format-version": 2,
    "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
    "location": "s3://bucket/wh/ns/t",
    "last-sequence-number": 1,
    "last-updated-ms": 1000,
    "last-column-id": 2,
    "current-schema-id": 0,
    "schemas": [{"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "required": true, "type": "long"},
        {"id": 2, "name": "data", "required": false, "type": "string"}]}],
    "default-spec-id": 0,
    "partition-specs": [{"spec-id": 0, "fields": []}],
    "last-partition-id": 999,
    "default-sort-order-id": 0,
    "sort-orders": [{"order-id": 0, "fields": []}],
    "properties": {"owner": "alice"},
    "current-snapshot-id": 100,
    "refs": {"main": {"snapshot-id": 100, "type": "branch"}},
    "snapshots": [{"snapshot-id": 100, "sequence-number": 1, "timestamp-ms": 900,
                   "manifest-list": "s3://bucket/wh/ns/t/metadata/snap-100.avro",
                   "summary": {"operation": "append"}, "schema-id": 0}],
    "statistics": [],
    "partition-statistics": [],
    "snapshot-log": [{"timestamp-ms": 900, "snapshot-id": 100}],
    "metadata-log": []
  })");
}

// A v3 table as another writer might produce it, with fields this server does not
// interpret (top level, in a snapshot, in a ref, in a schema field).
Json BaseV3WithExtras() {
  return Json::parse(R"({
    "format-version": 3,
    "table-uuid": "0195b3c5-7c7a-7d7e-8a1b-1234567890ab",
    "location": "s3://bucket/wh/ns/v3",
    "last-sequence-number": 1,
    "last-updated-ms": 1000,
    "last-column-id": 2,
    "next-row-id": 10,
    "current-schema-id": 0,
    "schemas": [{"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "required": true, "type": "long",
         "initial-default": 0, "write-default": 0},
        {"id": 2, "name": "v", "required": false, "type": "variant"}]}],
    "default-spec-id": 0,
    "partition-specs": [{"spec-id": 0, "fields": []}],
    "last-partition-id": 999,
    "default-sort-order-id": 0,
    "sort-orders": [{"order-id": 0, "fields": []}],
    "properties": {},
    "current-snapshot-id": 100,
    "refs": {"main": {"snapshot-id": 100, "type": "branch", "x-ref-extra": true}},
    "snapshots": [{"snapshot-id": 100, "sequence-number": 1, "timestamp-ms": 900,
                   "manifest-list": "s3://b/snap-100.avro", "summary": {"operation": "append"},
                   "schema-id": 0, "first-row-id": 0, "added-rows": 10, "key-id": "k1",
                   "x-snapshot-extra": {"a": [1, 2]}}],
    "encryption-keys": [{"key-id": "k1", "encrypted-key-metadata": "AAAA"}],
    "statistics": [],
    "partition-statistics": [],
    "snapshot-log": [{"timestamp-ms": 900, "snapshot-id": 100}],
    "metadata-log": [{"timestamp-ms": 800, "metadata-file": "s3://b/00000-a.metadata.json"}],
    "x-vendor-extension": {"nested": [1, {"deep": null}]}
  })");
}

Json Updates(const char* text) { return Json::parse(text); }

Json MustApply(const Json& base, const Json& updates) {
  Result<Json> r = ApplyUpdates(base, updates, kNow);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : Json();
}

Error MustFail(const Json& base, const Json& updates) {
  Result<Json> r = ApplyUpdates(base, updates, kNow);
  EXPECT_FALSE(r.has_value()) << "unexpectedly applied: " << updates.dump();
  return r ? Error{} : r.error();
}

Json Snapshot(int64_t id, std::optional<int64_t> parent, int64_t seq, int64_t ts) {
  Json s = {{"snapshot-id", id},
            {"sequence-number", seq},
            {"timestamp-ms", ts},
            {"manifest-list", "s3://bucket/wh/ns/t/metadata/snap-" + std::to_string(id) + ".avro"},
            {"summary", {{"operation", "append"}}},
            {"schema-id", 0}};
  if (parent) s["parent-snapshot-id"] = *parent;
  return s;
}

Json AddSnapshot(Json snapshot) { return {{"action", "add-snapshot"}, {"snapshot", snapshot}}; }
Json SetMain(int64_t id) {
  return {{"action", "set-snapshot-ref"},
          {"ref-name", "main"},
          {"type", "branch"},
          {"snapshot-id", id}};
}

// ---------------------------------------------------------------------------
// NewTableMetadata

TEST(NewTableMetadataTest, ASourceIdOutsideTheSentSchemaIsRefused) {
  // Source id 1 is not in the client's schema; after renumbering it would be "a".
  Json req = Json::parse(R"({"name": "t",
    "schema": {"type": "struct", "fields": [{"id": 5, "name": "a", "required": true, "type": "int"}]},
    "partition-spec": {"fields": [{"source-id": 1, "transform": "identity", "name": "p"}]}})");
  Result<Json> r = NewTableMetadata(req, "s3://bucket/wh/ns/t", kUuid, kNow);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidInput);
  EXPECT_NE(r.error().message.find("source column"), std::string::npos) << r.error().message;
}

// The client's ids are replaced by fresh ones in the reference's order (every field of
// a struct, then each field's nested type), and the identifier, partition and sort
// source ids follow them.
TEST(NewTableMetadataTest, AssignsFreshIdsAndInitialisesEveryField) {
  Json req = Json::parse(R"({
    "name": "t",
    "schema": {"type": "struct", "fields": [
      {"id": 11, "name": "id", "required": true, "type": "long"},
      {"id": 12, "name": "point", "required": false, "type": {"type": "struct", "fields": [
          {"id": 13, "name": "x", "required": true, "type": "double"}]}},
      {"id": 14, "name": "tags", "required": false,
       "type": {"type": "list", "element-id": 17, "element": "string", "element-required": true}},
      {"id": 15, "name": "attrs", "required": false,
       "type": {"type": "map", "key-id": 18, "key": "string", "value-id": 19,
                "value": {"type": "list", "element-id": 20, "element": "int",
                          "element-required": false},
                "value-required": false}}],
      "identifier-field-ids": [11]},
    "partition-spec": {"fields": [{"source-id": 11, "transform": "bucket[16]", "name": "id_bucket"}]},
    "write-order": {"order-id": 7, "fields": [
        {"source-id": 12, "transform": "identity", "direction": "asc", "null-order": "nulls-first"}]},
    "properties": {"format-version": "2", "owner": "bob"}
  })");
  Result<Json> r = NewTableMetadata(req, "s3://bucket/wh/ns/t/", kUuid, kNow);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const Json& m = *r;
  EXPECT_EQ(m["format-version"], 2);
  EXPECT_EQ(m["table-uuid"], kUuid);
  EXPECT_EQ(m["location"], "s3://bucket/wh/ns/t");
  EXPECT_EQ(m["last-updated-ms"], kNow);
  EXPECT_EQ(m["last-sequence-number"], 0);
  EXPECT_EQ(m["last-column-id"], 9);  // nested list element inside a map value
  EXPECT_EQ(m["current-schema-id"], 0);
  EXPECT_EQ(m["schemas"][0]["schema-id"], 0);
  const Json& fields = m["schemas"][0]["fields"];
  EXPECT_EQ(fields[0]["id"], 1);
  EXPECT_EQ(fields[3]["id"], 4);
  EXPECT_EQ(fields[1]["type"]["fields"][0]["id"], 5);
  EXPECT_EQ(fields[2]["type"]["element-id"], 6);
  EXPECT_EQ(fields[3]["type"]["key-id"], 7);
  EXPECT_EQ(fields[3]["type"]["value-id"], 8);
  EXPECT_EQ(fields[3]["type"]["value"]["element-id"], 9);
  EXPECT_EQ(m["schemas"][0]["identifier-field-ids"], Json::array({1}));
  EXPECT_EQ(m["partition-specs"][0]["fields"][0]["source-id"], 1);
  EXPECT_EQ(m["sort-orders"][0]["fields"][0]["source-id"], 2);
  EXPECT_EQ(m["default-spec-id"], 0);
  EXPECT_EQ(m["partition-specs"][0]["spec-id"], 0);
  EXPECT_EQ(m["partition-specs"][0]["fields"][0]["field-id"], 1000);
  EXPECT_EQ(m["last-partition-id"], 1000);
  EXPECT_EQ(m["default-sort-order-id"], 1);
  EXPECT_EQ(m["sort-orders"][0]["order-id"], 1);
  EXPECT_EQ(m["properties"], Json({{"owner", "bob"}, {"write.parquet.compression-codec", "zstd"}}));
  EXPECT_TRUE(m["current-snapshot-id"].is_null());
  EXPECT_EQ(m["snapshots"], Json::array());
  EXPECT_EQ(m["snapshot-log"], Json::array());
  EXPECT_EQ(m["metadata-log"], Json::array());
  EXPECT_EQ(m["refs"], Json::object());
  EXPECT_EQ(m["statistics"], Json::array());
  EXPECT_EQ(m["partition-statistics"], Json::array());
  EXPECT_FALSE(m.contains("next-row-id"));
  EXPECT_FALSE(m.contains("schema"));  // v1-only field
}

TEST(NewTableMetadataTest, DefaultsToV2UnpartitionedUnsorted) {
  Json req = {{"name", "t"},
              {"location", "s3://b/loc"},
              {"schema",
               {{"type", "struct"},
                {"fields", {{{"id", 1}, {"name", "a"}, {"required", false}, {"type", "int"}}}}}}};
  Result<Json> r = NewTableMetadata(req, "", kUuid, kNow);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ((*r)["format-version"], 2);
  EXPECT_EQ((*r)["location"], "s3://b/loc");
  EXPECT_EQ((*r)["partition-specs"], Json::parse(R"([{"spec-id":0,"fields":[]}])"));
  EXPECT_EQ((*r)["last-partition-id"], 999);
  EXPECT_EQ((*r)["sort-orders"], Json::parse(R"([{"order-id":0,"fields":[]}])"));
  EXPECT_EQ((*r)["default-sort-order-id"], 0);
  // Iceberg Java's one persisted default (TableMetadata.persistedProperties).
  EXPECT_EQ((*r)["properties"], Json::parse(R"({"write.parquet.compression-codec":"zstd"})"));
}

TEST(NewTableMetadataTest, TheClientsCompressionCodecWinsOverTheDefault) {
  Json req = {{"name", "t"},
              {"properties", {{"write.parquet.compression-codec", "snappy"}, {"owner", "ann"}}},
              {"schema",
               {{"type", "struct"},
                {"fields", {{{"id", 1}, {"name", "a"}, {"required", false}, {"type", "int"}}}}}}};
  Result<Json> r = NewTableMetadata(req, "s3://b/t", kUuid, kNow);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ((*r)["properties"],
            Json::parse(R"({"write.parquet.compression-codec":"snappy","owner":"ann"})"));
}

TEST(NewTableMetadataTest, V3AddsNextRowIdAndV1AddsLegacyFields) {
  Json schema = {{"type", "struct"},
                 {"fields", {{{"id", 1}, {"name", "a"}, {"required", false}, {"type", "int"}}}}};
  Json req = {{"name", "t"}, {"schema", schema}, {"properties", {{"format-version", "3"}}}};
  Result<Json> v3 = NewTableMetadata(req, "s3://b/t", kUuid, kNow);
  ASSERT_TRUE(v3.has_value());
  EXPECT_EQ((*v3)["format-version"], 3);
  EXPECT_EQ((*v3)["next-row-id"], 0);

  req["properties"]["format-version"] = "1";
  Result<Json> v1 = NewTableMetadata(req, "s3://b/t", kUuid, kNow);
  ASSERT_TRUE(v1.has_value());
  EXPECT_EQ((*v1)["format-version"], 1);
  EXPECT_EQ((*v1)["schema"]["fields"], schema["fields"]);
  EXPECT_EQ((*v1)["partition-spec"], Json::array());
}

TEST(NewTableMetadataTest, AssignsFreshIdsWhenMissing) {
  Json req = Json::parse(R"({
    "name": "t",
    "schema": {"type": "struct", "fields": [
      {"name": "a", "required": true, "type": {"type": "struct", "fields": [
          {"name": "x", "required": true, "type": "int"}]}},
      {"name": "b", "required": false,
       "type": {"type": "map", "key": "string", "value": "long", "value-required": false}}]}
  })");
  Result<Json> r = NewTableMetadata(req, "s3://b/t", kUuid, kNow);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const Json& fields = (*r)["schemas"][0]["fields"];
  // Struct fields first (a=1, b=2), then nested types in order.
  EXPECT_EQ(fields[0]["id"], 1);
  EXPECT_EQ(fields[1]["id"], 2);
  EXPECT_EQ(fields[0]["type"]["fields"][0]["id"], 3);
  EXPECT_EQ(fields[1]["type"]["key-id"], 4);
  EXPECT_EQ(fields[1]["type"]["value-id"], 5);
  EXPECT_EQ((*r)["last-column-id"], 5);
}

TEST(NewTableMetadataTest, RejectsBadRequests) {
  Json schema = {{"type", "struct"},
                 {"fields", {{{"id", 1}, {"name", "a"}, {"required", false}, {"type", "int"}}}}};
  struct Case {
    const char* name;
    Json request;
    std::string location;
    std::string message_part;
  } cases[] = {
      {"no schema", {{"name", "t"}}, "s3://b/t", "'schema' is required"},
      {"no location", {{"name", "t"}, {"schema", schema}}, "", "location is required"},
      {"bad version",
       {{"name", "t"}, {"schema", schema}, {"properties", {{"format-version", "4"}}}},
       "s3://b/t",
       "Unsupported format version: v4"},
      {"unknown partition source",
       {{"name", "t"},
        {"schema", schema},
        {"partition-spec",
         {{"fields", {{{"source-id", 9}, {"transform", "identity"}, {"name", "p"}}}}}}},
       "s3://b/t",
       "Cannot find source column"},
      {"duplicate ids",
       {{"name", "t"},
        {"schema",
         {{"type", "struct"},
          {"fields",
           {{{"id", 1}, {"name", "a"}, {"required", false}, {"type", "int"}},
            {{"id", 1}, {"name", "b"}, {"required", false}, {"type", "int"}}}}}}},
       "s3://b/t",
       "duplicate field id 1"},
      {"unknown primitive",
       {{"name", "t"},
        {"schema",
         {{"type", "struct"},
          {"fields", {{{"id", 1}, {"name", "a"}, {"required", false}, {"type", "integr"}}}}}}},
       "s3://b/t",
       "Cannot parse type string to primitive: integr"},
      {"decimal without its precision",
       {{"name", "t"},
        {"schema",
         {{"type", "struct"},
          {"fields", {{{"id", 1}, {"name", "a"}, {"required", false}, {"type", "decimal"}}}}}}},
       "s3://b/t",
       "Cannot parse type string to primitive: decimal"},
  };
  for (const Case& c : cases) {
    Result<Json> r = NewTableMetadata(c.request, c.location, kUuid, kNow);
    ASSERT_FALSE(r.has_value()) << c.name;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidInput) << c.name;
    EXPECT_NE(r.error().message.find(c.message_part), std::string::npos)
        << c.name << ": " << r.error().message;
  }
}

TEST(NewTableMetadataTest, EveryIcebergPrimitiveIsAccepted) {
  for (const char* type :
       {"boolean",     "int",          "long",           "float",
        "double",      "date",         "time",           "timestamp",
        "timestamptz", "timestamp_ns", "timestamptz_ns", "string",
        "uuid",        "binary",       "fixed[16]",      "decimal(38, 10)",
        "variant",     "unknown",      "geometry",       "geography(OGC:CRS84)"}) {
    Json request = {
        {"name", "t"},
        {"schema",
         {{"type", "struct"},
          {"fields", {{{"id", 1}, {"name", "a"}, {"required", false}, {"type", type}}}}}}};
    EXPECT_TRUE(NewTableMetadata(request, "s3://b/t", kUuid, kNow).has_value()) << type;
  }
}

// ---------------------------------------------------------------------------
// CheckRequirement

TEST(CheckRequirementTest, ReferenceMessages) {
  Json base = BaseV2();
  base["refs"]["v1"] = {{"snapshot-id", 100}, {"type", "tag"}};
  struct Case {
    const char* requirement;
    std::optional<std::string> failure;  // nullopt = passes
  } cases[] = {
      {R"({"type":"assert-create"})", "Requirement failed: table already exists"},
      {R"({"type":"assert-table-uuid","uuid":"9C12D441-03FE-4693-9A96-A0705DDF69C1"})",
       std::nullopt},
      {R"({"type":"assert-table-uuid","uuid":"other"})",
       "Requirement failed: UUID does not match: expected 9c12d441-03fe-4693-9a96-a0705ddf69c1 "
       "!= other"},
      {R"({"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":100})", std::nullopt},
      {R"({"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":101})",
       "Requirement failed: branch main has changed: expected id 101 != 100"},
      {R"({"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null})",
       "Requirement failed: branch main was created concurrently"},
      {R"({"type":"assert-ref-snapshot-id","ref":"v1","snapshot-id":7})",
       "Requirement failed: tag v1 has changed: expected id 7 != 100"},
      {R"({"type":"assert-ref-snapshot-id","ref":"dev","snapshot-id":5})",
       "Requirement failed: branch or tag dev is missing, expected 5"},
      {R"({"type":"assert-ref-snapshot-id","ref":"dev","snapshot-id":null})", std::nullopt},
      {R"({"type":"assert-last-assigned-field-id","last-assigned-field-id":2})", std::nullopt},
      {R"({"type":"assert-last-assigned-field-id","last-assigned-field-id":3})",
       "Requirement failed: last assigned field id changed: expected id 3 != 2"},
      {R"({"type":"assert-current-schema-id","current-schema-id":0})", std::nullopt},
      {R"({"type":"assert-current-schema-id","current-schema-id":1})",
       "Requirement failed: current schema changed: expected id 1 != 0"},
      {R"({"type":"assert-last-assigned-partition-id","last-assigned-partition-id":999})",
       std::nullopt},
      {R"({"type":"assert-last-assigned-partition-id","last-assigned-partition-id":1000})",
       "Requirement failed: last assigned partition id changed: expected id 1000 != 999"},
      {R"({"type":"assert-default-spec-id","default-spec-id":0})", std::nullopt},
      {R"({"type":"assert-default-spec-id","default-spec-id":1})",
       "Requirement failed: default partition spec changed: expected id 1 != 0"},
      {R"({"type":"assert-default-sort-order-id","default-sort-order-id":0})", std::nullopt},
      {R"({"type":"assert-default-sort-order-id","default-sort-order-id":1})",
       "Requirement failed: default sort order changed: expected id 1 != 0"},
  };
  for (const Case& c : cases) {
    Result<void> r = CheckRequirement(&base, Json::parse(c.requirement));
    if (!c.failure) {
      EXPECT_TRUE(r.has_value()) << c.requirement << ": " << r.error().message;
      continue;
    }
    ASSERT_FALSE(r.has_value()) << c.requirement;
    EXPECT_EQ(r.error().code, ErrorCode::kConflict) << c.requirement;
    EXPECT_EQ(r.error().message, *c.failure);
  }
}

TEST(CheckRequirementTest, OldV1WithoutRefsTreatsCurrentSnapshotAsMain) {
  Json base = BaseV2();
  base["format-version"] = 1;
  base.erase("refs");
  EXPECT_TRUE(
      CheckRequirement(
          &base, Json::parse(R"({"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":100})"))
          .has_value());
  Result<void> r = CheckRequirement(
      &base, Json::parse(R"({"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null})"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "Requirement failed: branch main was created concurrently");

  Json m = MustApply(base, Json::array({AddSnapshot(Snapshot(101, 100, 0, 4000)), SetMain(101)}));
  EXPECT_EQ(m["refs"]["main"]["snapshot-id"], 101);
  EXPECT_EQ(m["current-snapshot-id"], 101);
  EXPECT_EQ(m["schema"], base["schemas"][0]);  // v1 readers need the legacy field
}

TEST(CheckRequirementTest, MissingTable) {
  EXPECT_TRUE(CheckRequirement(nullptr, Json::parse(R"({"type":"assert-create"})")).has_value());
  // The reference guards these two with `base != null`.
  EXPECT_TRUE(
      CheckRequirement(
          nullptr,
          Json::parse(R"({"type":"assert-last-assigned-field-id","last-assigned-field-id":3})"))
          .has_value());
  Result<void> r =
      CheckRequirement(nullptr, Json::parse(R"({"type":"assert-table-uuid","uuid":"u"})"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kConflict);
  EXPECT_EQ(r.error().message, "Requirement failed: table does not exist");
}

TEST(CheckRequirementTest, MalformedOrUnknownIsInvalidInput) {
  Json base = BaseV2();
  for (const char* text : {R"({"type":"assert-everything"})", R"({"uuid":"x"})", R"([])",
                           R"({"type":"assert-table-uuid"})",
                           R"({"type":"assert-current-schema-id","current-schema-id":"0"})",
                           R"({"type":"assert-ref-snapshot-id","snapshot-id":1})"}) {
    Result<void> r = CheckRequirement(&base, Json::parse(text));
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidInput) << text;
  }
}

// ---------------------------------------------------------------------------
// ApplyUpdates: table-level fields

TEST(ApplyUpdatesTest, EmptyUpdateListLeavesMetadataUntouched) {
  Json base = BaseV2();
  EXPECT_EQ(MustApply(base, Json::array()), base);
}

TEST(ApplyUpdatesTest, AssignUuid) {
  Json same = MustApply(
      BaseV2(),
      Updates(R"([{"action":"assign-uuid","uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1"}])"));
  EXPECT_EQ(same["table-uuid"], kUuid);
  EXPECT_EQ(same["last-updated-ms"], kNow);
  Error e = MustFail(BaseV2(), Updates(R"([{"action":"assign-uuid","uuid":"other"}])"));
  EXPECT_EQ(e.code, ErrorCode::kInvalidInput);
}

TEST(ApplyUpdatesTest, UpgradeFormatVersion) {
  Json v3 =
      MustApply(BaseV2(), Updates(R"([{"action":"upgrade-format-version","format-version":3}])"));
  EXPECT_EQ(v3["format-version"], 3);
  EXPECT_EQ(v3["next-row-id"], 0);

  Error down = MustFail(v3, Updates(R"([{"action":"upgrade-format-version","format-version":2}])"));
  EXPECT_EQ(down.code, ErrorCode::kInvalidInput);
  EXPECT_EQ(down.message, "Cannot downgrade v3 table to v2");
  Error unsupported =
      MustFail(v3, Updates(R"([{"action":"upgrade-format-version","format-version":4}])"));
  EXPECT_EQ(unsupported.code, ErrorCode::kInvalidInput);
}

TEST(ApplyUpdatesTest, UpgradeFromV1DropsLegacyFields) {
  Json v1 = BaseV2();
  v1["format-version"] = 1;
  v1["schema"] = v1["schemas"][0];
  v1["partition-spec"] = Json::array();
  Json touched = MustApply(v1, Updates(R"([{"action":"set-properties","updates":{"k":"v"}}])"));
  EXPECT_EQ(touched["schema"], v1["schemas"][0]);
  Json up = MustApply(v1, Updates(R"([{"action":"upgrade-format-version","format-version":2}])"));
  EXPECT_EQ(up["format-version"], 2);
  EXPECT_FALSE(up.contains("schema"));
  EXPECT_FALSE(up.contains("partition-spec"));
}

TEST(ApplyUpdatesTest, LocationAndProperties) {
  Json m = MustApply(BaseV2(), Updates(R"([
    {"action":"set-location","location":"s3://other/place/"},
    {"action":"set-properties","updates":{"a":"1","b":"2"}},
    {"action":"remove-properties","removals":["owner","missing"]},
    {"action":"set-properties","updated":{"c":"3"}},
    {"action":"remove-properties","removed":["a"]}
  ])"));
  EXPECT_EQ(m["location"], "s3://other/place");
  EXPECT_EQ(m["properties"], Json({{"b", "2"}, {"c", "3"}}));

  Error e = MustFail(BaseV2(), Updates(R"([{"action":"set-properties","updates":{"a":1}}])"));
  EXPECT_EQ(e.code, ErrorCode::kInvalidInput);
}

TEST(ApplyUpdatesTest, UnknownOrMalformedUpdatesAreInvalidInput) {
  for (const char* text : {R"([{"action":"drop-everything"}])", R"([{"uuid":"x"}])", R"([42])",
                           R"([{"action":"add-view-version","view-version":{}}])",
                           R"([{"action":"set-current-schema"}])",
                           R"([{"action":"add-schema","schema":{"fields":[{"name":"x"}]}}])",
                           R"({"action":"set-location"})"}) {
    Error e = MustFail(BaseV2(), Json::parse(text));
    EXPECT_EQ(e.code, ErrorCode::kInvalidInput) << text;
  }
}

// ---------------------------------------------------------------------------
// Schemas, specs, sort orders

TEST(ApplyUpdatesTest, AddSchemaAssignsIdAndLastColumnId) {
  Json m = MustApply(BaseV2(), Updates(R"([
    {"action":"add-schema","schema":{"type":"struct","schema-id":42,"fields":[
        {"id":1,"name":"id","required":true,"type":"long"},
        {"id":2,"name":"data","required":false,"type":"string"},
        {"id":3,"name":"tags","required":false,
         "type":{"type":"list","element-id":4,"element":"string","element-required":false}}]}},
    {"action":"set-current-schema","schema-id":-1}
  ])"));
  EXPECT_EQ(m["schemas"].size(), 2u);
  EXPECT_EQ(m["schemas"][1]["schema-id"], 1);
  EXPECT_EQ(m["current-schema-id"], 1);
  EXPECT_EQ(m["last-column-id"], 4);
}

TEST(ApplyUpdatesTest, AddSchemaReusesIdenticalSchema) {
  Json m = MustApply(BaseV2(), Updates(R"([
    {"action":"add-schema","schema":{"type":"struct","schema-id":5,"fields":[
        {"id":1,"name":"id","required":true,"type":"long"},
        {"id":2,"name":"data","required":false,"type":"string"}]}}
  ])"));
  EXPECT_EQ(m["schemas"].size(), 1u);
  // Not added by this batch, so -1 has nothing to refer to.
  Error e = MustFail(BaseV2(), Updates(R"([
    {"action":"add-schema","schema":{"type":"struct","fields":[
        {"id":1,"name":"id","required":true,"type":"long"},
        {"id":2,"name":"data","required":false,"type":"string"}]}},
    {"action":"set-current-schema","schema-id":-1}
  ])"));
  EXPECT_EQ(e.message, "Cannot set last added schema: no schema has been added");
}

TEST(ApplyUpdatesTest, SchemaErrors) {
  struct Case {
    const char* updates;
    const char* message;
  } cases[] = {
      {R"([{"action":"set-current-schema","schema-id":-1}])",
       "Cannot set last added schema: no schema has been added"},
      {R"([{"action":"set-current-schema","schema-id":7}])",
       "Cannot set current schema to unknown schema: 7"},
      {R"([{"action":"remove-schemas","schema-ids":[0]}])", "Cannot remove the current schema"},
  };
  for (const Case& c : cases) {
    Error e = MustFail(BaseV2(), Json::parse(c.updates));
    EXPECT_EQ(e.code, ErrorCode::kInvalidInput) << c.updates;
    EXPECT_EQ(e.message, c.message);
  }
}

TEST(ApplyUpdatesTest, AddSchemaLowerLastColumnIdKeepsCurrent) {
  Json m = MustApply(BaseV2(), Updates(R"([
    {"action":"add-schema","last-column-id":1,"schema":{"type":"struct","fields":[
        {"id":1,"name":"id","required":true,"type":"long"}]}}
  ])"));
  EXPECT_EQ(m["last-column-id"], 2);
}

TEST(ApplyUpdatesTest, RemoveSchemas) {
  Json m = MustApply(BaseV2(), Updates(R"([
    {"action":"add-schema","schema":{"type":"struct","fields":[
        {"id":1,"name":"id","required":true,"type":"long"}]}},
    {"action":"remove-schemas","schema-ids":[1]}
  ])"));
  EXPECT_EQ(m["schemas"].size(), 1u);
  EXPECT_EQ(m["last-column-id"], 2);
}

TEST(ApplyUpdatesTest, AddSpecAssignsIdsAndSetsDefault) {
  Json m = MustApply(BaseV2(), Updates(R"([
    {"action":"add-spec","spec":{"fields":[
        {"source-id":1,"transform":"bucket[4]","name":"id_bucket"}]}},
    {"action":"set-default-spec","spec-id":-1},
    {"action":"add-spec","spec":{"fields":[
        {"source-id":1,"transform":"bucket[4]","name":"id_bucket"},
        {"source-id":2,"transform":"identity","name":"data"}]}}
  ])"));
  EXPECT_EQ(m["partition-specs"].size(), 3u);
  EXPECT_EQ(m["partition-specs"][1]["spec-id"], 1);
  EXPECT_EQ(m["partition-specs"][1]["fields"][0]["field-id"], 1000);
  EXPECT_EQ(m["default-spec-id"], 1);
  // The same (source, transform) keeps its field id in a later spec.
  EXPECT_EQ(m["partition-specs"][2]["spec-id"], 2);
  EXPECT_EQ(m["partition-specs"][2]["fields"][0]["field-id"], 1000);
  EXPECT_EQ(m["partition-specs"][2]["fields"][1]["field-id"], 1001);
  EXPECT_EQ(m["last-partition-id"], 1001);
}

TEST(ApplyUpdatesTest, AddSpecReusesCompatibleSpec) {
  Json m = MustApply(BaseV2(), Updates(R"([
    {"action":"add-spec","spec":{"spec-id":9,"fields":[]}}
  ])"));
  EXPECT_EQ(m["partition-specs"].size(), 1u);
  Error e = MustFail(BaseV2(), Updates(R"([
    {"action":"add-spec","spec":{"fields":[]}},
    {"action":"set-default-spec","spec-id":-1}
  ])"));
  EXPECT_EQ(e.message, "Cannot set last added spec: no spec has been added");
}

TEST(ApplyUpdatesTest, SpecErrorsAndRemoval) {
  Error unknown_source = MustFail(BaseV2(), Updates(R"([
    {"action":"add-spec","spec":{"fields":[{"source-id":9,"transform":"identity","name":"x"}]}}
  ])"));
  EXPECT_EQ(unknown_source.code, ErrorCode::kInvalidInput);
  Error remove_default = MustFail(BaseV2(), Updates(R"([
    {"action":"remove-partition-specs","spec-ids":[0]}
  ])"));
  EXPECT_EQ(remove_default.message, "Cannot remove the default partition spec");
  Json m = MustApply(BaseV2(), Updates(R"([
    {"action":"add-spec","spec":{"fields":[{"source-id":1,"transform":"identity","name":"id"}]}},
    {"action":"remove-partition-specs","spec-ids":[1]}
  ])"));
  EXPECT_EQ(m["partition-specs"].size(), 1u);
  EXPECT_EQ(m["last-partition-id"], 1000);  // ids are never reused
}

TEST(ApplyUpdatesTest, SortOrders) {
  Json m = MustApply(BaseV2(), Updates(R"([
    {"action":"add-sort-order","sort-order":{"order-id":0,"fields":[
        {"source-id":1,"transform":"identity","direction":"desc","null-order":"nulls-last"}]}},
    {"action":"set-default-sort-order","sort-order-id":-1},
    {"action":"add-sort-order","sort-order":{"order-id":5,"fields":[
        {"source-id":1,"transform":"identity","direction":"desc","null-order":"nulls-last"}]}},
    {"action":"add-sort-order","sort-order":{"order-id":3,"fields":[]}}
  ])"));
  EXPECT_EQ(m["sort-orders"].size(), 2u);
  EXPECT_EQ(m["sort-orders"][1]["order-id"], 1);
  EXPECT_EQ(m["default-sort-order-id"], 1);

  Error none =
      MustFail(BaseV2(), Updates(R"([{"action":"set-default-sort-order","sort-order-id":-1}])"));
  EXPECT_EQ(none.message, "Cannot set last added sort order: no sort order has been added");
  Error bad = MustFail(BaseV2(), Updates(R"([{"action":"add-sort-order","sort-order":{"fields":[
        {"source-id":1,"transform":"identity","direction":"up","null-order":"nulls-last"}]}}])"));
  EXPECT_EQ(bad.code, ErrorCode::kInvalidInput);
}

// ---------------------------------------------------------------------------
// Snapshots and refs

TEST(ApplyUpdatesTest, AppendAdvancesSequenceAndSnapshotLog) {
  Json s = Snapshot(101, 100, 2, 4000);
  s["x-engine-field"] = "kept";
  Json m = MustApply(BaseV2(), Json::array({AddSnapshot(s), SetMain(101)}));
  EXPECT_EQ(m["last-sequence-number"], 2);
  EXPECT_EQ(m["current-snapshot-id"], 101);
  EXPECT_EQ(m["refs"]["main"], Json({{"snapshot-id", 101}, {"type", "branch"}}));
  EXPECT_EQ(m["snapshots"].size(), 2u);
  EXPECT_EQ(m["snapshots"][1], s);
  EXPECT_EQ(m["snapshot-log"].back(), Json({{"timestamp-ms", 4000}, {"snapshot-id", 101}}));
  EXPECT_EQ(m["last-updated-ms"], kNow);
}

TEST(ApplyUpdatesTest, StaleSequenceNumberIsConflict) {
  Error e =
      MustFail(BaseV2(), Json::array({AddSnapshot(Snapshot(101, 100, 1, 4000)), SetMain(101)}));
  EXPECT_EQ(e.code, ErrorCode::kConflict);
  EXPECT_NE(e.message.find("Cannot add snapshot with sequence number 1 older than last sequence "
                           "number 1"),
            std::string::npos)
      << e.message;
}

TEST(ApplyUpdatesTest, SnapshotErrors) {
  Error duplicate =
      MustFail(BaseV2(), Json::array({AddSnapshot(Snapshot(100, std::nullopt, 5, 1))}));
  EXPECT_EQ(duplicate.code, ErrorCode::kInvalidInput);
  EXPECT_EQ(duplicate.message, "Snapshot already exists for id: 100");
  Error unknown = MustFail(BaseV2(), Json::array({SetMain(555)}));
  EXPECT_EQ(unknown.message, "Cannot set main to unknown snapshot: 555");
  Error main_tag = MustFail(BaseV2(), Updates(R"([
    {"action":"set-snapshot-ref","ref-name":"main","type":"tag","snapshot-id":100}])"));
  EXPECT_EQ(main_tag.message, "Cannot set main to a tag, it must be a branch");
  Json no_manifest = Snapshot(101, 100, 2, 1);
  no_manifest.erase("manifest-list");
  EXPECT_EQ(MustFail(BaseV2(), Json::array({AddSnapshot(no_manifest)})).code,
            ErrorCode::kInvalidInput);
}

TEST(ApplyUpdatesTest, RollbackLogsNowAndTagsKeepRetention) {
  Json m =
      MustApply(BaseV2(), Json::array({AddSnapshot(Snapshot(101, 100, 2, 4000)), SetMain(101)}));
  m["last-updated-ms"] = 4500;
  Json back = MustApply(m, Updates(R"([
    {"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":100},
    {"action":"set-snapshot-ref","ref-name":"v1","type":"tag","snapshot-id":101,"max-ref-age-ms":86400000},
    {"action":"set-snapshot-ref","ref-name":"audit","type":"branch","snapshot-id":101,
     "min-snapshots-to-keep":3,"max-snapshot-age-ms":1000}
  ])"));
  EXPECT_EQ(back["current-snapshot-id"], 100);
  EXPECT_EQ(back["snapshot-log"].back(), Json({{"timestamp-ms", kNow}, {"snapshot-id", 100}}));
  EXPECT_EQ(back["refs"]["v1"],
            Json::parse(R"({"snapshot-id":101,"type":"tag","max-ref-age-ms":86400000})"));
  EXPECT_EQ(back["refs"]["audit"]["min-snapshots-to-keep"], 3);
  EXPECT_EQ(back["refs"]["audit"]["max-snapshot-age-ms"], 1000);

  Error tag_min = MustFail(m, Updates(R"([
    {"action":"set-snapshot-ref","ref-name":"t","type":"tag","snapshot-id":100,"min-snapshots-to-keep":1}])"));
  EXPECT_EQ(tag_min.message, "Tags do not support setting minSnapshotsToKeep");
}

TEST(ApplyUpdatesTest, SettingTheSameRefIsNoOpForTheLog) {
  Json m = MustApply(BaseV2(), Json::array({SetMain(100)}));
  EXPECT_EQ(m["snapshot-log"], BaseV2()["snapshot-log"]);
}

TEST(ApplyUpdatesTest, IntermediateSnapshotsLeaveTheLog) {
  Json m =
      MustApply(BaseV2(), Json::array({AddSnapshot(Snapshot(101, 100, 2, 4000)), SetMain(101),
                                       AddSnapshot(Snapshot(102, 101, 3, 4100)), SetMain(102)}));
  EXPECT_EQ(m["snapshot-log"], Json::parse(R"([{"timestamp-ms":900,"snapshot-id":100},
                                                {"timestamp-ms":4100,"snapshot-id":102}])"));
  EXPECT_EQ(m["last-sequence-number"], 3);
}

TEST(ApplyUpdatesTest, RemoveSnapshotsDropsRefsStatisticsAndOlderHistory) {
  Json m =
      MustApply(BaseV2(), Json::array({AddSnapshot(Snapshot(101, 100, 2, 4000)), SetMain(101)}));
  m = MustApply(m, Updates(R"([
    {"action":"set-snapshot-ref","ref-name":"old","type":"tag","snapshot-id":100},
    {"action":"set-statistics","snapshot-id":100,"statistics":{"snapshot-id":100,
      "statistics-path":"s3://b/stats-100.puffin","file-size-in-bytes":10,
      "file-footer-size-in-bytes":5,"blob-metadata":[]}},
    {"action":"set-statistics","statistics":{"snapshot-id":101,
      "statistics-path":"s3://b/stats-101.puffin","file-size-in-bytes":10,
      "file-footer-size-in-bytes":5,"blob-metadata":[]}},
    {"action":"set-partition-statistics","partition-statistics":{"snapshot-id":100,
      "statistics-path":"s3://b/pstats-100.parquet","file-size-in-bytes":10}}
  ])"));
  ASSERT_EQ(m["statistics"].size(), 2u);
  ASSERT_EQ(m["partition-statistics"].size(), 1u);

  Json r = MustApply(m, Updates(R"([{"action":"remove-snapshots","snapshot-ids":[100]}])"));
  EXPECT_EQ(r["snapshots"].size(), 1u);
  EXPECT_EQ(r["snapshots"][0]["snapshot-id"], 101);
  EXPECT_FALSE(r["refs"].contains("old"));
  EXPECT_EQ(r["refs"]["main"]["snapshot-id"], 101);
  EXPECT_EQ(r["statistics"].size(), 1u);
  EXPECT_EQ(r["statistics"][0]["snapshot-id"], 101);
  EXPECT_EQ(r["partition-statistics"], Json::array());
  EXPECT_EQ(r["snapshot-log"], Json::parse(R"([{"timestamp-ms":4000,"snapshot-id":101}])"));

  Json gone = MustApply(m, Updates(R"([{"action":"remove-snapshots","snapshot-ids":[101]}])"));
  EXPECT_FALSE(gone["refs"].contains("main"));
  EXPECT_TRUE(gone["current-snapshot-id"].is_null());
}

TEST(ApplyUpdatesTest, StatisticsReplaceAndRemove) {
  Json m = MustApply(BaseV2(), Updates(R"([
    {"action":"set-statistics","statistics":{"snapshot-id":100,"statistics-path":"a",
      "file-size-in-bytes":1,"file-footer-size-in-bytes":1,"blob-metadata":[]}},
    {"action":"set-statistics","statistics":{"snapshot-id":100,"statistics-path":"b",
      "file-size-in-bytes":1,"file-footer-size-in-bytes":1,"blob-metadata":[]}},
    {"action":"set-partition-statistics","partition-statistics":{"snapshot-id":100,
      "statistics-path":"p","file-size-in-bytes":1}}
  ])"));
  ASSERT_EQ(m["statistics"].size(), 1u);
  EXPECT_EQ(m["statistics"][0]["statistics-path"], "b");
  m = MustApply(m, Updates(R"([{"action":"remove-statistics","snapshot-id":100},
                               {"action":"remove-partition-statistics","snapshot-id":100}])"));
  EXPECT_EQ(m["statistics"], Json::array());
  EXPECT_EQ(m["partition-statistics"], Json::array());
}

TEST(ApplyUpdatesTest, RemoveMainRef) {
  Json m = MustApply(BaseV2(), Updates(R"([{"action":"remove-snapshot-ref","ref-name":"main"}])"));
  EXPECT_TRUE(m["current-snapshot-id"].is_null());
  EXPECT_EQ(m["refs"], Json::object());
  EXPECT_EQ(m["snapshots"].size(), 1u);
}

TEST(ApplyUpdatesTest, EncryptionKeysAndRowLineage) {
  Json m = MustApply(BaseV2(), Updates(R"([
    {"action":"add-encryption-key","encryption-key":{"key-id":"k1","encrypted-key-metadata":"AAAA"}},
    {"action":"add-encryption-key","encryption-key":{"key-id":"k1","encrypted-key-metadata":"BBBB"}},
    {"action":"add-encryption-key","encryption-key":{"key-id":"k2","encrypted-key-metadata":"CCCC"}},
    {"action":"remove-encryption-key","key-id":"k2"}
  ])"));
  EXPECT_EQ(m["encryption-keys"],
            Json::parse(R"([{"key-id":"k1","encrypted-key-metadata":"AAAA"}])"));

  EXPECT_EQ(MustFail(BaseV2(), Updates(R"([{"action":"enable-row-lineage"}])")).code,
            ErrorCode::kInvalidInput);
  MustApply(BaseV3WithExtras(), Updates(R"([{"action":"enable-row-lineage"}])"));
}

// ---------------------------------------------------------------------------
// Format v3

TEST(ApplyUpdatesTest, V3RowLineage) {
  Json s = Snapshot(101, 100, 2, 4000);
  s["first-row-id"] = 10;
  s["added-rows"] = 25;
  Json m = MustApply(BaseV3WithExtras(), Json::array({AddSnapshot(s), SetMain(101)}));
  EXPECT_EQ(m["next-row-id"], 35);

  Json missing = Snapshot(101, 100, 2, 4000);
  Error e = MustFail(BaseV3WithExtras(), Json::array({AddSnapshot(missing)}));
  EXPECT_EQ(e.code, ErrorCode::kInvalidInput);
  EXPECT_EQ(e.message, "Cannot add a snapshot: first-row-id is null");

  Json behind = s;
  behind["first-row-id"] = 5;
  Error stale = MustFail(BaseV3WithExtras(), Json::array({AddSnapshot(behind)}));
  EXPECT_EQ(stale.code, ErrorCode::kConflict);
  EXPECT_NE(stale.message.find("first-row-id is behind table next-row-id: 5 < 10"),
            std::string::npos);
}

TEST(ApplyUpdatesTest, V3UnknownFieldsRoundTrip) {
  Json base = BaseV3WithExtras();
  EXPECT_EQ(MustApply(base, Json::array()), base);

  Json m = MustApply(base, Updates(R"([{"action":"set-properties","updates":{"k":"v"}}])"));
  Json expected = base;
  expected["properties"]["k"] = "v";
  expected["last-updated-ms"] = kNow;
  EXPECT_EQ(m, expected);
}

// ---------------------------------------------------------------------------
// Creates through ApplyUpdates

Json CreateSchema() {
  return Json::parse(R"({"type":"struct","schema-id":0,"fields":[
      {"id":1,"name":"id","required":false,"type":"long"},
      {"id":2,"name":"name","required":false,"type":"string"}]})");
}

TEST(ApplyUpdatesTest, DuckDbStyleCreate) {
  Json updates = Json::array({
      {{"action", "assign-uuid"}, {"uuid", kUuid}},
      {{"action", "upgrade-format-version"}, {"format-version", 2}},
      {{"action", "add-schema"}, {"schema", CreateSchema()}, {"last-column-id", 2}},
      {{"action", "add-spec"}, {"spec", {{"spec-id", 0}, {"fields", Json::array()}}}},
      {{"action", "set-default-spec"}, {"spec-id", 0}},
      {{"action", "add-sort-order"}, {"sort-order", {{"order-id", 0}, {"fields", Json::array()}}}},
      {{"action", "set-default-sort-order"}, {"sort-order-id", 0}},
      {{"action", "set-location"}, {"location", "s3://bucket/wh/ns/ctas"}},
      {{"action", "set-properties"}, {"updates", {{"created-by", "duckdb"}}}},
      AddSnapshot(Snapshot(7001, std::nullopt, 1, 4200)),
      SetMain(7001),
      {{"action", "set-current-schema"}, {"schema-id", 0}},
  });
  ASSERT_TRUE(CheckRequirement(nullptr, Json::parse(R"({"type":"assert-create"})")).has_value());
  Json m = MustApply(Json::object(), updates);
  EXPECT_EQ(m["format-version"], 2);
  EXPECT_EQ(m["table-uuid"], kUuid);
  EXPECT_EQ(m["location"], "s3://bucket/wh/ns/ctas");
  EXPECT_EQ(m["current-schema-id"], 0);
  EXPECT_EQ(m["schemas"].size(), 1u);
  EXPECT_EQ(m["last-column-id"], 2);
  EXPECT_EQ(m["partition-specs"], Json::parse(R"([{"spec-id":0,"fields":[]}])"));
  EXPECT_EQ(m["last-partition-id"], 999);
  EXPECT_EQ(m["sort-orders"], Json::parse(R"([{"order-id":0,"fields":[]}])"));
  EXPECT_EQ(m["properties"], Json({{"created-by", "duckdb"}}));
  EXPECT_EQ(m["current-snapshot-id"], 7001);
  EXPECT_EQ(m["last-sequence-number"], 1);
  EXPECT_EQ(m["snapshot-log"], Json::parse(R"([{"timestamp-ms":4200,"snapshot-id":7001}])"));
  EXPECT_EQ(m["metadata-log"], Json::array());
  EXPECT_EQ(m["statistics"], Json::array());
  EXPECT_EQ(m["partition-statistics"], Json::array());
  EXPECT_EQ(m["last-updated-ms"], kNow);
}

TEST(ApplyUpdatesTest, PyIcebergStyleCreateWithLastAdded) {
  Json updates = Json::array({
      {{"action", "assign-uuid"}, {"uuid", kUuid}},
      {{"action", "upgrade-format-version"}, {"format-version", 3}},
      {{"action", "add-schema"}, {"schema", CreateSchema()}},
      {{"action", "set-current-schema"}, {"schema-id", -1}},
      {{"action", "add-spec"},
       {"spec",
        {{"spec-id", 0},
         {"fields",
          {{{"source-id", 1},
            {"field-id", 1000},
            {"transform", "bucket[8]"},
            {"name", "id_bucket"}}}}}}},
      {{"action", "set-default-spec"}, {"spec-id", -1}},
      {{"action", "add-sort-order"},
       {"sort-order",
        {{"order-id", 1},
         {"fields",
          {{{"source-id", 2},
            {"transform", "identity"},
            {"direction", "asc"},
            {"null-order", "nulls-first"}}}}}}},
      {{"action", "set-default-sort-order"}, {"sort-order-id", -1}},
      {{"action", "set-location"}, {"location", "s3://bucket/wh/ns/py"}},
      {{"action", "set-properties"}, {"updates", {{"write.parquet.compression-codec", "zstd"}}}},
  });
  Json m = MustApply(Json::object(), updates);
  EXPECT_EQ(m["format-version"], 3);
  EXPECT_EQ(m["next-row-id"], 0);
  EXPECT_EQ(m["current-schema-id"], 0);
  EXPECT_EQ(m["default-spec-id"], 0);
  EXPECT_EQ(m["partition-specs"][0]["fields"][0]["field-id"], 1000);
  EXPECT_EQ(m["last-partition-id"], 1000);
  EXPECT_EQ(m["default-sort-order-id"], 1);
  EXPECT_EQ(m["sort-orders"][0]["order-id"], 1);
  EXPECT_TRUE(m["current-snapshot-id"].is_null());
  EXPECT_EQ(m["refs"], Json::object());
  EXPECT_EQ(m["snapshots"], Json::array());
}

TEST(ApplyUpdatesTest, CreateNeedsUuidLocationAndSchema) {
  Json schema_only = Json::array({{{"action", "assign-uuid"}, {"uuid", kUuid}},
                                  {{"action", "add-schema"}, {"schema", CreateSchema()}}});
  Error no_location = MustFail(Json::object(), schema_only);
  EXPECT_EQ(no_location.code, ErrorCode::kInvalidInput);
  EXPECT_EQ(no_location.message, "location is required");

  Json no_uuid = Json::array({{{"action", "add-schema"}, {"schema", CreateSchema()}},
                              {{"action", "set-location"}, {"location", "s3://b/t"}}});
  EXPECT_EQ(MustFail(Json::object(), no_uuid).code, ErrorCode::kInvalidInput);

  Json no_schema = Json::array({{{"action", "assign-uuid"}, {"uuid", kUuid}},
                                {{"action", "set-location"}, {"location", "s3://b/t"}}});
  EXPECT_EQ(MustFail(Json::object(), no_schema).code, ErrorCode::kInvalidInput);

  // Without add-spec / add-sort-order the table is unpartitioned and unsorted.
  Json minimal = schema_only;
  minimal.push_back({{"action", "set-location"}, {"location", "s3://b/t"}});
  Json m = MustApply(Json::object(), minimal);
  EXPECT_EQ(m["format-version"], 2);
  EXPECT_EQ(m["partition-specs"], Json::parse(R"([{"spec-id":0,"fields":[]}])"));
  EXPECT_EQ(m["sort-orders"], Json::parse(R"([{"order-id":0,"fields":[]}])"));
}

// ---------------------------------------------------------------------------
// AppendMetadataLog

TEST(AppendMetadataLogTest, AppendsAndTrims) {
  Json m = BaseV2();
  AppendMetadataLog(m, "s3://b/00000-a.metadata.json", 1000);
  EXPECT_EQ(
      m["metadata-log"],
      Json::parse(R"([{"timestamp-ms":1000,"metadata-file":"s3://b/00000-a.metadata.json"}])"));

  m["properties"]["write.metadata.previous-versions-max"] = "2";
  AppendMetadataLog(m, "s3://b/00001-b.metadata.json", 2000);
  AppendMetadataLog(m, "s3://b/00002-c.metadata.json", 3000);
  ASSERT_EQ(m["metadata-log"].size(), 2u);
  EXPECT_EQ(m["metadata-log"][0]["metadata-file"], "s3://b/00001-b.metadata.json");
  EXPECT_EQ(m["metadata-log"][1]["metadata-file"], "s3://b/00002-c.metadata.json");

  m["properties"]["write.metadata.previous-versions-max"] = "0";  // minimum is 1
  AppendMetadataLog(m, "s3://b/00003-d.metadata.json", 4000);
  ASSERT_EQ(m["metadata-log"].size(), 1u);
  EXPECT_EQ(m["metadata-log"][0]["timestamp-ms"], 4000);
}

}  // namespace
}  // namespace tablemere::iceberg
