#include <gtest/gtest.h>
#include <zstd.h>

#include <type_traits>

#include "avro/container.h"
#include "avro/encoding.h"

namespace tablemere::avro {
namespace {

const char* kManifestFileSchema = R"({
  "type": "record", "name": "manifest_file", "fields": [
    {"name": "manifest_path", "type": "string", "field-id": 500},
    {"name": "manifest_length", "type": "long", "field-id": 501},
    {"name": "content", "type": "int", "field-id": 517},
    {"name": "partitions", "type": ["null", {"type": "array", "element-id": 508, "items": {
      "type": "record", "name": "r508", "fields": [
        {"name": "contains_null", "type": "boolean", "field-id": 509},
        {"name": "lower_bound", "type": ["null", "bytes"], "field-id": 510}]}}],
     "default": null, "field-id": 507},
    {"name": "key_metadata", "type": ["null", {"type": "fixed", "name": "k16", "size": 4}],
     "field-id": 519},
    {"name": "tags", "type": {"type": "map", "values": "double"}},
    {"name": "kind", "type": {"type": "enum", "name": "kind", "symbols": ["DATA", "DELETES"]}},
    {"name": "ratio", "type": "float"}]})";

Value Sample(int n) {
  std::vector<Value> parts;
  for (int i = 0; i < n % 3; i++) {
    parts.push_back(
        Value::Record({Value::Bool(i % 2 == 0),
                       i == 0 ? Value::Union(0, Value::Null())
                              : Value::Union(1, Value::Bytes(std::string("\0\xff", 2)))}));
  }
  return Value::Record({Value::String("s3://w/t/metadata/m" + std::to_string(n) + ".avro"),
                        Value::Long(int64_t{1} << (n % 60)), Value::Int(n % 2),
                        n % 4 == 0 ? Value::Union(0, Value::Null())
                                   : Value::Union(1, Value::Array(std::move(parts))),
                        Value::Union(1, Value::Fixed("abcd")),
                        Value::Map({{"x", Value::Double(0.5 * n)}}), Value::Enum(n % 2),
                        Value::Float(1.25f)});
}

TEST(Avro, ZigZagVarintsAsTheSpecWritesThem) {
  auto enc = [](int64_t v) {
    std::string out;
    EncodeLong(v, out);
    return out;
  };
  EXPECT_EQ(enc(0), std::string("\x00", 1));
  EXPECT_EQ(enc(-1), "\x01");
  EXPECT_EQ(enc(1), "\x02");
  EXPECT_EQ(enc(64), "\x80\x01");
  EXPECT_EQ(enc(-65), "\x81\x01");
  for (int64_t v : {int64_t{0}, int64_t{-1}, INT64_MAX, INT64_MIN, int64_t{123456789}}) {
    std::string s = enc(v);
    Decoder d(s);
    EXPECT_EQ(*d.Long(), v);
  }
}

TEST(Avro, SchemaKeepsIcebergAttributes) {
  auto schema = ParseSchema(std::string(kManifestFileSchema));
  ASSERT_TRUE(schema) << schema.error().message;
  EXPECT_EQ(schema->root->fields.size(), 8u);
  EXPECT_EQ(schema->root->fields[2].attributes["field-id"], 517);
  EXPECT_EQ(schema->json["fields"][3]["type"][1]["element-id"], 508);
  EXPECT_FALSE(ParseSchema(std::string(R"({"type": "record", "name": "x"})")));
  EXPECT_FALSE(ParseSchema(std::string(R"("no_such_type")")));
}

class ContainerRoundTrip : public ::testing::TestWithParam<Codec> {};

TEST_P(ContainerRoundTrip, RecordsAndMetadataSurvive) {
  Container c;
  c.schema = *ParseSchema(std::string(kManifestFileSchema));
  c.codec = GetParam();
  c.metadata = {{"format-version", "2"}, {"content", "data"}, {"schema", "{\"a\":1}"}};
  for (int i = 0; i < 1000; i++) c.records.push_back(Sample(i));
  auto bytes = WriteContainer(c, std::string(16, 'S'), 300);
  ASSERT_TRUE(bytes) << bytes.error().message;
  auto back = ReadContainer(*bytes);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->codec, c.codec);
  EXPECT_EQ(back->metadata, c.metadata);
  EXPECT_EQ(back->schema.json, c.schema.json);
  ASSERT_EQ(back->records.size(), c.records.size());
  for (size_t i = 0; i < c.records.size(); i += 37) {
    EXPECT_EQ(ToJson(*back->schema.root, back->records[i]), ToJson(*c.schema.root, c.records[i]));
  }
  // Any byte cut off the end is refused, never read as fewer records.
  EXPECT_FALSE(ReadContainer(std::string_view(*bytes).substr(0, bytes->size() - 1)));
}

INSTANTIATE_TEST_SUITE_P(Codecs, ContainerRoundTrip,
                         ::testing::Values(Codec::kNull, Codec::kDeflate, Codec::kSnappy,
                                           Codec::kZstd));

TEST(Avro, CorruptFilesAreRefused) {
  Container c;
  c.schema = *ParseSchema(std::string(R"({"type": "record", "name": "r", "fields": [
      {"name": "a", "type": "string"}]})"));
  c.codec = Codec::kDeflate;
  c.records = {Value::Record({Value::String("hello")})};
  std::string bytes = *WriteContainer(c, std::string(16, 'Z'));
  EXPECT_FALSE(ReadContainer("not avro"));
  std::string bad_sync = bytes;
  bad_sync[bad_sync.size() - 1] ^= 1;
  EXPECT_FALSE(ReadContainer(bad_sync));
  // Header metadata that is not UTF-8 (a mutated manifest's, as a fuzz found: the worker
  // aborted rendering it as JSON) is refused where it is read.
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"iceberg.schema", "{\"x\": \"\xC0\xAF\"}"}, {"bad\xFF", "1"}}) {
    Container odd = c;
    odd.metadata = {{key, value}};
    auto read = ReadContainer(*WriteContainer(odd, std::string(16, 'Z')));
    ASSERT_FALSE(read);
    EXPECT_NE(read.error().message.find("UTF-8"), std::string::npos);
  }
  // A record whose value does not match the schema is not written.
  c.records = {Value::Record({Value::Long(5)})};
  EXPECT_FALSE(WriteContainer(c, std::string(16, 'Z')));
  // A string claiming more bytes than there are.
  // The decoder views its input: a temporary string cannot be handed to it.
  static_assert(!std::is_constructible_v<Decoder, std::string&&>);
  static_assert(std::is_constructible_v<Decoder, const std::string&>);
  const std::string short_string(
      "\x7f"
      "ab",
      3);
  Decoder d(short_string);
  EXPECT_FALSE(d.Read(*ParseSchema(std::string("\"string\""))->root));
  // A string that is not UTF-8 (an overlong '/'), as a mutated manifest may hold.
  const std::string not_utf8("\x04\xC0\xAF", 3);
  Decoder d2(not_utf8);
  auto read = d2.Read(*ParseSchema(std::string("\"string\""))->root);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("UTF-8"), std::string::npos);
  // The same bytes are fine where the schema says bytes.
  Decoder d3(not_utf8);
  EXPECT_TRUE(d3.Read(*ParseSchema(std::string("\"bytes\""))->root));
}

// The header of a container with `schema` and the null codec, sync "ZZZ…".
std::string Header(const std::string& schema) {
  Container c;
  c.schema = *ParseSchema(schema);
  return *WriteContainer(c, std::string(16, 'Z'));
}

TEST(Avro, HostileCountsAreBoundedEvenForZeroWidthValues) {
  // A block claiming 2^62 records of a schema that takes no bytes: refused, not decoded
  // until memory runs out.
  std::string bytes = Header(R"({"type": "record", "name": "r", "fields": [
      {"name": "a", "type": "null"}]})");
  EncodeLong(int64_t{1} << 62, bytes);
  EncodeLong(0, bytes);
  bytes += std::string(16, 'Z');
  auto r = ReadContainer(bytes);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("more records"), std::string::npos) << r.error().message;
  // An array of nulls claiming INT64_MIN items (negated: undefined) is refused.
  std::string data;
  EncodeLong(INT64_MIN, data);
  Decoder d(data);
  EXPECT_FALSE(d.Read(*ParseSchema(std::string(R"({"type": "array", "items": "null"})"))->root));
  // So is a huge array of nulls.
  data.clear();
  EncodeLong(kMaxZeroWidthCount + 1, data);
  data += '\0';
  Decoder d2(data);
  EXPECT_FALSE(d2.Read(*ParseSchema(std::string(R"({"type": "array", "items": "null"})"))->root));
  // And the value budget stops a file of many small values: four values allowed, a
  // record of two longs twice is six (the records and their fields).
  data.clear();
  for (int i = 0; i < 4; i++) EncodeLong(i, data);
  int64_t budget = 4;
  Decoder d3(data, &budget);
  auto pair = *ParseSchema(std::string(R"({"type": "record", "name": "p", "fields": [
      {"name": "a", "type": "long"}, {"name": "b", "type": "long"}]})"));
  EXPECT_TRUE(d3.Read(*pair.root));
  auto second = d3.Read(*pair.root);
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("more values"), std::string::npos);
}

TEST(Avro, StreamedZstdBlocksLargerThanTheBufferDecodeWhole) {
  // A frame without its content size (as streaming writers leave it), well over 64 KiB.
  std::string text;
  for (int i = 0; text.size() < (1u << 20); i++) text += "row " + std::to_string(i * 7919) + ";";
  Container c;
  c.schema = *ParseSchema(std::string("\"string\""));
  c.codec = Codec::kZstd;
  c.records = {Value::String(text)};
  std::string plain;
  ASSERT_TRUE(Encode(*c.schema.root, c.records[0], plain));
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  std::string frame(ZSTD_compressBound(plain.size()), '\0');
  ZSTD_inBuffer in{plain.data(), plain.size(), 0};
  ZSTD_outBuffer out{frame.data(), frame.size(), 0};
  ASSERT_EQ(ZSTD_compressStream2(cctx, &out, &in, ZSTD_e_end), 0u);
  ZSTD_freeCCtx(cctx);
  frame.resize(out.pos);
  ASSERT_EQ(ZSTD_getFrameContentSize(frame.data(), frame.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  Container header = c;
  header.records.clear();
  std::string bytes = *WriteContainer(header, std::string(16, 'Z'));
  EncodeLong(1, bytes);
  EncodeLong(static_cast<int64_t>(frame.size()), bytes);
  bytes += frame;
  bytes += std::string(16, 'Z');
  auto r = ReadContainer(bytes);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->records.size(), 1u);
  EXPECT_EQ(r->records[0].s, text);
  // The same frame cut short is refused, not read as a shorter string.
  std::string cut = *WriteContainer(header, std::string(16, 'Z'));
  EncodeLong(1, cut);
  EncodeLong(static_cast<int64_t>(frame.size() / 2), cut);
  cut += frame.substr(0, frame.size() / 2);
  cut += std::string(16, 'Z');
  EXPECT_FALSE(ReadContainer(cut));
}

TEST(Avro, JsonRoundTripsToTheSameBytes) {
  auto schema = *ParseSchema(std::string(kManifestFileSchema));
  for (int n = 0; n < 12; n++) {
    Value v = Sample(n);
    std::string a, b;
    ASSERT_TRUE(Encode(*schema.root, v, a));
    auto back = FromJson(*schema.root, ToJson(*schema.root, v));
    ASSERT_TRUE(back) << back.error().message;
    ASSERT_TRUE(Encode(*schema.root, *back, b));
    EXPECT_EQ(a, b) << n;
  }
  // A missing nullable field is null; a missing required one, or a wrong type, names where.
  nlohmann::json j = ToJson(*schema.root, Sample(1));
  j.erase("partitions");
  EXPECT_TRUE(FromJson(*schema.root, j));
  j.erase("manifest_path");
  auto missing = FromJson(*schema.root, j);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("manifest_path"), std::string::npos);
  j = ToJson(*schema.root, Sample(1));
  j["key_metadata"] = "abc";  // odd hex
  EXPECT_FALSE(FromJson(*schema.root, j));
}

TEST(Avro, SchemaNamesOfTheWrongTypeAreNotFatal) {
  // A name that is a number must not throw out of the parser.
  auto s = ParseSchema(std::string(R"({"type": "record", "name": 5, "fields": []})"));
  EXPECT_TRUE(s || !s.error().message.empty());
}

}  // namespace
}  // namespace tablemere::avro
