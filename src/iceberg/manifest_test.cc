// The typed manifest model against real PyIceberg manifests (fuzz/seeds) and the spec's
// inheritance rules: an entry's snapshot id and sequence numbers come from its manifest
// when null, and a v3 data file's first row id from its manifest's, advancing by the
// record counts of the live data files before it that had none.
#include "iceberg/manifest.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

namespace tablemere::iceberg {
namespace {

avro::Container Seed(const std::string& name) {
  std::ifstream in(std::string(TM_FUZZ_SEEDS) + "/" + name, std::ios::binary);
  std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto c = avro::ReadContainer(bytes);
  EXPECT_TRUE(c) << name;
  return c ? std::move(*c) : avro::Container{};
}

// `model` (its schema and metadata) holding `entries`, written as Avro and read back.
Result<avro::Container> Rewritten(avro::Container model,
                                  const std::vector<ManifestEntry>& entries) {
  model.records.clear();
  for (const auto& e : entries) {
    TM_ASSIGN(avro::Value v, ToAvro(*model.schema.root, e));
    model.records.push_back(std::move(v));
  }
  TM_ASSIGN(std::string bytes, avro::WriteContainer(model, std::string(16, 'x')));
  return avro::ReadContainer(bytes);
}

TEST(ManifestList, ReadsWhatPyIcebergWrote) {
  auto list = ReadManifestList(Seed("pyiceberg-manifest-list-v2.avro"));
  ASSERT_TRUE(list) << list.error().message;
  ASSERT_EQ(list->size(), 2u);
  const ManifestFile& newest = (*list)[0];
  EXPECT_TRUE(newest.path.ends_with("-m0.avro"));
  EXPECT_EQ(newest.length, 4524);
  EXPECT_EQ(newest.content, ManifestContent::kData);
  EXPECT_EQ(newest.sequence_number, 2);
  EXPECT_EQ(newest.min_sequence_number, 2);
  EXPECT_EQ(newest.added_snapshot_id, 8414450411575427954);
  EXPECT_EQ(newest.added_files, 1);
  EXPECT_EQ(newest.existing_rows, 0);
  ASSERT_EQ(newest.partitions.size(), 1u);
  EXPECT_FALSE(newest.partitions[0].contains_null);
  EXPECT_EQ(newest.partitions[0].contains_nan, false);
  EXPECT_EQ(newest.partitions[0].lower_bound, "Oslo");
  const ManifestFile& older = (*list)[1];
  EXPECT_TRUE(older.partitions[0].contains_null);
  EXPECT_EQ(older.partitions[0].lower_bound, "Lima");
  EXPECT_FALSE(older.first_row_id);
}

TEST(Manifest, ReadsWhatPyIcebergWroteAndInheritsFromItsListEntry) {
  auto container = Seed("pyiceberg-manifest-v2.avro");
  ManifestFile listed;
  listed.path = "m.avro";
  listed.sequence_number = 7;
  listed.added_snapshot_id = 99;
  auto m = ReadManifest(container, listed);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->format_version, 2);
  ASSERT_EQ(m->partition_type.size(), 1u);
  EXPECT_EQ(m->partition_type[0].name, "city");
  EXPECT_EQ(m->partition_type[0].field_id, 1000);
  EXPECT_EQ(m->partition_type[0].type.id, TypeId::kString);
  ASSERT_EQ(m->entries.size(), 1u);
  const ManifestEntry& e = m->entries[0];
  EXPECT_EQ(e.status, EntryStatus::kAdded);
  EXPECT_EQ(e.snapshot_id, 3037420212531063248);  // written explicitly
  EXPECT_EQ(e.sequence_number, 7);                // null: the manifest's
  EXPECT_EQ(e.file_sequence_number, 7);
  const DataFile& d = e.file;
  EXPECT_EQ(d.content, FileContent::kData);
  EXPECT_TRUE(d.FormatIs("PARQUET"));
  EXPECT_TRUE(d.path.find("/data/city=Oslo/") != std::string::npos);
  ASSERT_EQ(d.partition.size(), 1u);
  ASSERT_TRUE(d.partition[0]);
  EXPECT_EQ(d.partition[0]->AsBytes(), "Oslo");
  EXPECT_EQ(d.record_count, 1);
  EXPECT_EQ(d.split_offsets, std::vector<int64_t>{4});
  EXPECT_EQ(d.value_counts.at(1), 1);
  auto id = FromBound({TypeId::kLong}, d.lower_bounds.at(1));
  ASSERT_TRUE(id);
  EXPECT_EQ(id->AsInt(), 4);
  EXPECT_EQ(d.lower_bounds.at(2), "Oslo");
  EXPECT_TRUE(d.nan_value_counts.empty());
  EXPECT_FALSE(d.IsDeletionVector());
}

TEST(Manifest, WritesBackWhatItRead) {
  auto container = Seed("pyiceberg-manifest-v2.avro");
  ManifestFile listed;
  listed.sequence_number = 3;
  auto m = ReadManifest(container, listed);
  ASSERT_TRUE(m);
  auto reread = Rewritten(container, m->entries);
  ASSERT_TRUE(reread) << reread.error().message;
  // Read under another list entry: the inherited fields were written explicitly.
  ManifestFile elsewhere;
  elsewhere.sequence_number = 11;
  auto again = ReadManifest(*reread, elsewhere);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *m);

  auto list = Seed("pyiceberg-manifest-list-v2.avro");
  auto files = ReadManifestList(list);
  ASSERT_TRUE(files);
  for (const auto& f : *files) {
    auto v = ToAvro(*list.schema.root, f);
    ASSERT_TRUE(v) << v.error().message;
    EXPECT_EQ(avro::ToJson(*list.schema.root, *v),
              avro::ToJson(*list.schema.root, list.records[&f - files->data()]));
  }
}

// A v3 manifest with the fields v3 adds and a partition of every transform result type
// that needs care (date, decimal as fixed, uuid, a void field's null).
constexpr char kV3Schema[] = R"({"type":"record","name":"manifest_entry","fields":[
 {"name":"status","type":"int","field-id":0},
 {"name":"snapshot_id","type":["null","long"],"default":null,"field-id":1},
 {"name":"sequence_number","type":["null","long"],"default":null,"field-id":3},
 {"name":"file_sequence_number","type":["null","long"],"default":null,"field-id":4},
 {"name":"data_file","field-id":2,"type":{"type":"record","name":"r2","fields":[
  {"name":"content","type":"int","field-id":134},
  {"name":"file_path","type":"string","field-id":100},
  {"name":"file_format","type":"string","field-id":101},
  {"name":"partition","field-id":102,"type":{"type":"record","name":"r102","fields":[
   {"name":"day","type":["null",{"type":"int","logicalType":"date"}],"field-id":1000},
   {"name":"price","type":["null",{"type":"fixed","name":"f1001","size":5,"logicalType":"decimal","precision":9,"scale":2}],"field-id":1001},
   {"name":"id","type":["null",{"type":"fixed","name":"f1002","size":16,"logicalType":"uuid"}],"field-id":1002},
   {"name":"gone","type":["null","int"],"field-id":1003}]}},
  {"name":"record_count","type":"long","field-id":103},
  {"name":"file_size_in_bytes","type":"long","field-id":104},
  {"name":"lower_bounds","field-id":125,"type":["null",{"type":"array","logicalType":"map","items":{
    "type":"record","name":"k126_v127","fields":[{"name":"key","type":"int","field-id":126},
    {"name":"value","type":"bytes","field-id":127}]}}],"default":null},
  {"name":"equality_ids","type":["null",{"type":"array","items":"int","element-id":136}],"default":null,"field-id":135},
  {"name":"first_row_id","type":["null","long"],"default":null,"field-id":142},
  {"name":"referenced_data_file","type":["null","string"],"default":null,"field-id":143},
  {"name":"content_offset","type":["null","long"],"default":null,"field-id":144},
  {"name":"content_size_in_bytes","type":["null","long"],"default":null,"field-id":145}]}}]})";

ManifestEntry Entry(EntryStatus status, FileContent content, int64_t records) {
  ManifestEntry e;
  e.status = status;
  e.snapshot_id = 5;
  e.sequence_number = e.file_sequence_number = 4;
  e.file.content = content;
  e.file.path = "s3://b/t/data/" + std::to_string(records) + ".parquet";
  e.file.format = "PARQUET";
  e.file.record_count = records;
  e.file.file_size_in_bytes = 100;
  e.file.partition = {Literal::Of(TypeId::kDate, 19723), Literal::Decimal(9, 2, -1250),
                      Literal::Bytes({TypeId::kUuid}, std::string(16, '\x7e')), std::nullopt};
  return e;
}

TEST(Manifest, V3FirstRowIdsAreInheritedInOrder) {
  auto schema = avro::ParseSchema(std::string(kV3Schema));
  ASSERT_TRUE(schema) << schema.error().message;
  std::vector<ManifestEntry> entries = {
      Entry(EntryStatus::kAdded, FileContent::kData, 10),
      Entry(EntryStatus::kDeleted, FileContent::kData, 1000),  // not live: no row ids
      Entry(EntryStatus::kExisting, FileContent::kData, 3),
      Entry(EntryStatus::kAdded, FileContent::kData, 7),
  };
  entries[2].file.first_row_id = 500;  // kept, and not counted
  ManifestEntry dv = Entry(EntryStatus::kAdded, FileContent::kPositionDeletes, 2);
  dv.file.format = "puffin";
  dv.file.referenced_data_file = entries[0].file.path;
  dv.file.content_offset = 4;
  dv.file.content_size = 40;
  dv.file.lower_bounds = {{2147483546, entries[0].file.path}};
  entries.push_back(dv);
  avro::Container c;
  c.schema = *schema;
  c.metadata = {{"format-version", "3"}, {"content", "data"}};
  auto reread = Rewritten(c, entries);
  ASSERT_TRUE(reread) << reread.error().message;
  ManifestFile listed;
  listed.first_row_id = 100;
  auto m = ReadManifest(*reread, listed);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->format_version, 3);
  ASSERT_EQ(m->entries.size(), 5u);
  EXPECT_EQ(m->entries[0].file.first_row_id, 100);
  EXPECT_FALSE(m->entries[1].file.first_row_id);
  EXPECT_EQ(m->entries[2].file.first_row_id, 500);
  EXPECT_EQ(m->entries[3].file.first_row_id, 110);
  EXPECT_FALSE(m->entries[4].file.first_row_id);
  EXPECT_TRUE(m->entries[4].file.IsDeletionVector());
  EXPECT_EQ(m->entries[4].file.referenced_data_file, entries[0].file.path);
  EXPECT_EQ(m->entries[4].file.content_size, 40);
  // Typed partition values survived Avro: a date, a decimal in a 5-byte fixed, a uuid.
  ASSERT_EQ(m->partition_type.size(), 4u);
  EXPECT_EQ(m->partition_type[1].type, (PrimitiveType{TypeId::kDecimal, 9, 2}));
  EXPECT_EQ(m->partition_type[2].type.id, TypeId::kUuid);
  EXPECT_EQ(m->entries[0].file.partition, entries[0].file.partition);
  EXPECT_EQ(m->entries[0].file.partition[1]->ToString(), "-12.50");
}

// The spec's manifest list field_summary: contains_null, contains_nan, and bounds over
// the other values in the single-value serialization (strings as UTF-8 bytes, doubles
// little-endian, decimals as the unscaled value's shortest two's-complement big-endian).
TEST(Manifest, PartitionSummariesFollowTheSpec) {
  const std::vector<PartitionField> type = {{"city", 1000, {TypeId::kString}},
                                            {"score", 1001, {TypeId::kDouble}},
                                            {"price", 1002, {TypeId::kDecimal, 9, 2}},
                                            {"none", 1003, {TypeId::kLong}}};
  using P = std::vector<std::optional<Literal>>;
  const P a = {Literal::Bytes({TypeId::kString}, "Oslo"), Literal::Floating(TypeId::kDouble, 2.5),
               Literal::Decimal(9, 2, 120), std::nullopt};
  const P b = {std::nullopt, Literal::Floating(TypeId::kDouble, std::nan("")),
               Literal::Decimal(9, 2, -300), std::nullopt};
  const P c = {Literal::Bytes({TypeId::kString}, "Lima"), Literal::Floating(TypeId::kDouble, 1.0),
               Literal::Decimal(9, 2, 50), std::nullopt};
  const auto s = SummarizePartitions(type, {&a, &b, &c});
  ASSERT_EQ(s.size(), 4u);
  EXPECT_TRUE(s[0].contains_null);
  EXPECT_EQ(s[0].contains_nan, false);
  EXPECT_EQ(s[0].lower_bound, "Lima");
  EXPECT_EQ(s[0].upper_bound, "Oslo");
  EXPECT_FALSE(s[1].contains_null);
  EXPECT_EQ(s[1].contains_nan, true);
  double one = 1.0, two_and_a_half = 2.5;
  EXPECT_EQ(s[1].lower_bound, std::string(reinterpret_cast<const char*>(&one), 8));
  EXPECT_EQ(s[1].upper_bound, std::string(reinterpret_cast<const char*>(&two_and_a_half), 8));
  EXPECT_EQ(s[2].lower_bound, std::string("\xfe\xd4", 2));  // -3.00: unscaled -300
  EXPECT_EQ(s[2].upper_bound, std::string("\x78", 1));      // 1.20: unscaled 120
  EXPECT_TRUE(s[3].contains_null);
  EXPECT_FALSE(s[3].lower_bound);
  EXPECT_FALSE(s[3].upper_bound);
}

TEST(Manifest, RefusesWhatIsNotOne) {
  auto list = Seed("pyiceberg-manifest-list-v2.avro");
  EXPECT_FALSE(ReadManifest(list, ManifestFile{}));
  auto manifest = Seed("pyiceberg-manifest-v2.avro");
  EXPECT_FALSE(ReadManifestList(manifest));
  // An entry status Iceberg does not have.
  avro::Container bad = manifest;
  bad.records[0].items[0] = avro::Value::Int(3);
  auto m = ReadManifest(bad, ManifestFile{});
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("entry status 3"), std::string::npos);
  // A required field the entry has no value for.
  ManifestEntry e;
  e.file.partition = {std::nullopt};
  auto v = ToAvro(*manifest.schema.root, e);
  ASSERT_TRUE(v);  // file_path "" is a value; a null partition field is allowed
  EXPECT_FALSE(ToAvro(*avro::ParseSchema(std::string(kV3Schema))->root, e));  // 1 of 4 fields
}

}  // namespace
}  // namespace tablemere::iceberg
