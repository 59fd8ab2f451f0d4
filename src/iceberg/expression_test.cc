// The expression model, the transforms and the evaluators, against the rules and the
// values the Iceberg spec gives: Appendix B's bucket hashes, the transforms' definitions,
// the REST spec's Expression JSON (in the shapes PyIceberg 0.12 sends), and the
// inclusive-metrics and projection rules (a file or partition is skipped only when no row
// in it can match; null and NaN never satisfy a comparison).
#include <gtest/gtest.h>

#include <limits>

#include "iceberg/evaluators.h"

namespace tablemere::iceberg {
namespace {

using Json = nlohmann::json;

const std::vector<SchemaField>& Fields() {
  static const auto fields = *FlattenSchema(Json::parse(R"j({"type":"struct","fields":[
    {"id":1,"name":"id","type":"long","required":true},
    {"id":2,"name":"city","type":"string","required":false},
    {"id":3,"name":"score","type":"double","required":false},
    {"id":4,"name":"day","type":"date","required":false},
    {"id":5,"name":"ts","type":"timestamptz","required":false},
    {"id":6,"name":"price","type":"decimal(9, 2)","required":false},
    {"id":7,"name":"n","type":"int","required":false},
    {"id":8,"name":"address","type":{"type":"struct","fields":[
      {"id":9,"name":"zip","type":"string","required":false}]},"required":false},
    {"id":10,"name":"tags","type":{"type":"list","element-id":11,"element":"string","element-required":false},"required":false}]})j"));
  return fields;
}

ExpressionPtr Bound(const std::string& json, bool case_sensitive = true) {
  auto parsed = ParseExpression(Json::parse(json));
  EXPECT_TRUE(parsed) << json << ": " << (parsed ? "" : parsed.error().message);
  auto bound = Bind(*parsed, Fields(), case_sensitive);
  EXPECT_TRUE(bound) << json << ": " << (bound ? "" : bound.error().message);
  return RewriteNot(*bound);
}

std::string BindError(const std::string& json, bool case_sensitive = true) {
  auto parsed = ParseExpression(Json::parse(json));
  if (!parsed) return parsed.error().message;
  auto bound = Bind(*parsed, Fields(), case_sensitive);
  return bound ? "" : bound.error().message;
}

std::string LE(int64_t v, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; i++)
    out.push_back(static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff));
  return out;
}

TEST(Transforms, BucketHashesAreTheSpecsAppendixB) {
  EXPECT_EQ(BucketHash(Literal::Of(TypeId::kInt, 34)), 2017239379);
  EXPECT_EQ(BucketHash(Literal::Of(TypeId::kLong, 34)), 2017239379);
  EXPECT_EQ(BucketHash(Literal::Decimal(4, 2, 1420)), -500754589);
  EXPECT_EQ(BucketHash(Literal::Of(TypeId::kDate, 17486)), -653330422);        // 2017-11-16
  EXPECT_EQ(BucketHash(Literal::Of(TypeId::kTime, 81068000000)), -662762989);  // 22:31:08
  EXPECT_EQ(BucketHash(Literal::Of(TypeId::kTimestamp, 1510871468000000)), -2047944441);
  EXPECT_EQ(BucketHash(Literal::Of(TypeId::kTimestampNs, 1510871468000000000)), -2047944441);
  EXPECT_EQ(BucketHash(Literal::Bytes({TypeId::kString}, "iceberg")), 1210000089);
  auto uuid = LiteralFromJson({TypeId::kUuid}, "f79c3e09-677c-4bbd-a479-3f349cb785e7");
  ASSERT_TRUE(uuid);
  EXPECT_EQ(BucketHash(*uuid), 1488055340);
  EXPECT_EQ(BucketHash(Literal::Bytes({TypeId::kBinary}, std::string("\0\1\2\3", 4))), -188683207);
}

TEST(Transforms, ApplyAsTheSpecDefinesThem) {
  auto apply = [](const char* t, const Literal& v) { return Apply(Transform::Parse(t), v); };
  const Literal ts = Literal::Of(TypeId::kTimestampTz, 1510871468000000);  // 2017-11-16T22:31:08
  EXPECT_EQ(apply("year", ts)->AsInt(), 47);
  EXPECT_EQ(apply("month", ts)->AsInt(), 574);
  EXPECT_EQ(apply("day", ts)->AsInt(), 17486);
  EXPECT_EQ(apply("hour", ts)->AsInt(), 419686);
  // Before 1970 the transforms floor: one microsecond before the epoch is 1969.
  const Literal before = Literal::Of(TypeId::kTimestamp, -1);
  EXPECT_EQ(apply("year", before)->AsInt(), -1);
  EXPECT_EQ(apply("month", before)->AsInt(), -1);
  EXPECT_EQ(apply("day", before)->AsInt(), -1);
  EXPECT_EQ(apply("hour", before)->AsInt(), -1);
  EXPECT_EQ(apply("month", Literal::Of(TypeId::kDate, 17486))->AsInt(), 574);
  EXPECT_EQ(apply("truncate[10]", Literal::Of(TypeId::kInt, 1))->AsInt(), 0);
  EXPECT_EQ(apply("truncate[10]", Literal::Of(TypeId::kInt, -1))->AsInt(), -10);
  EXPECT_TRUE(apply("truncate[50]", Literal::Decimal(9, 2, 1065))->AsUnscaled() == 1050);
  EXPECT_EQ(apply("truncate[3]", Literal::Bytes({TypeId::kString}, "iceberg"))->AsBytes(), "ice");
  // Code points, not bytes.
  EXPECT_EQ(apply("truncate[2]", Literal::Bytes({TypeId::kString}, "\xc3\xa9t\xc3\xa9"))->AsBytes(),
            "\xc3\xa9t");
  EXPECT_EQ(apply("bucket[16]", Literal::Of(TypeId::kInt, 34))->AsInt(), 2017239379 % 16);
  EXPECT_FALSE(apply("bucket[16]", Literal::Floating(TypeId::kDouble, 1.0)));
  EXPECT_FALSE(apply("hour", Literal::Of(TypeId::kDate, 1)));
  EXPECT_EQ(Transform::Parse("zorder").kind, Transform::Kind::kOther);
}

TEST(Expression, ParsesWhatPyIcebergSendsAndWritesItBack) {
  const char* shapes[] = {
      R"({"term":"id","type":"eq","value":5})",
      R"({"type":"and","left":{"term":"score","type":"gt","value":1.5},"right":{"term":"day","type":"lt-eq","value":"2024-01-02"}})",
      R"({"type":"or","left":{"term":"city","type":"is-null"},"right":{"term":"score","type":"not-nan"}})",
      R"({"term":"city","type":"in","values":["a","b"]})",
      R"({"type":"not","child":{"term":"city","type":"starts-with","value":"ab"}})",
      R"({"term":"ts","type":"eq","value":"2024-01-01T02:03:04+00:00"})",
      R"({"term":"price","type":"eq","value":"12.30"})",
      R"({"term":"address.zip","type":"not-eq","value":"0150"})",
      R"({"term":{"type":"reference","term":"n"},"type":"not-in","values":[1,2]})",
  };
  for (const char* shape : shapes) {
    auto parsed = ParseExpression(Json::parse(shape));
    ASSERT_TRUE(parsed) << shape;
    auto bound = Bind(*parsed, Fields(), true);
    ASSERT_TRUE(bound) << shape << ": " << bound.error().message;
    // Written back, it parses and binds to the same thing.
    Json written = ToJson(*bound);
    auto again = Bind(*ParseExpression(written), Fields(), true);
    ASSERT_TRUE(again) << written.dump();
    EXPECT_EQ(ToJson(*again), written) << shape;
  }
  EXPECT_EQ(ToJson(Bound(R"({"term":"ts","type":"lt","value":"2024-01-01T02:03:04+02:00"})")),
            Json::parse(R"({"term":"ts","type":"lt","value":"2024-01-01T00:03:04.000000+00:00"})"));
  EXPECT_EQ(ToJson(Bound(R"({"term":"price","type":"gt","value":"7.5"})"))["value"], "7.50");
  // Iceberg Java writes unbound dates and timestamps as numbers (Spark's pushed filters).
  EXPECT_EQ(ToJson(Bound(R"({"term":"day","type":"eq","value":20463})"))["value"], "2026-01-10");
  EXPECT_EQ(ToJson(Bound(R"({"term":"ts","type":"lt","value":86400000001})"))["value"],
            "1970-01-02T00:00:00.000001+00:00");
  // A number binds to a decimal column rounded half up, as Java's BigDecimal.setScale.
  EXPECT_EQ(ToJson(Bound(R"({"term":"price","type":"eq","value":1.235})"))["value"], "1.24");
  EXPECT_EQ(ToJson(Bound(R"({"term":"price","type":"eq","value":-1.234})"))["value"], "-1.23");
  EXPECT_EQ(ToJson(Bound(R"({"term":"price","type":"eq","value":3})"))["value"], "3.00");
  EXPECT_EQ(ToJson(Bound(R"(true)")), Json(true));
  EXPECT_EQ(ToJson(Bound(R"({"type":"false"})")), Json(false));
}

TEST(Expression, BindingErrorsNameTheColumn) {
  EXPECT_NE(BindError(R"({"term":"nope","type":"eq","value":1})").find("'nope'"),
            std::string::npos);
  EXPECT_NE(BindError(R"({"term":"id","type":"eq","value":"x"})").find("'id'"), std::string::npos);
  EXPECT_NE(BindError(R"({"term":"day","type":"eq","value":1.5})").find("date"), std::string::npos);
  EXPECT_NE(BindError(R"({"term":"day","type":"eq","value":true})").find("date"),
            std::string::npos);
  EXPECT_NE(BindError(R"({"term":"day","type":"eq","value":"2024-02-30"})"), "");
  EXPECT_NE(BindError(R"({"term":"price","type":"eq","value":"1.234"})").find("scale"),
            std::string::npos);
  EXPECT_NE(BindError(R"({"term":"city","type":"is-nan"})"), "");
  EXPECT_NE(BindError(R"({"term":"score","type":"starts-with","value":"1"})"), "");
  EXPECT_NE(BindError(R"({"term":"tags","type":"eq","value":"x"})"), "");  // a list
  EXPECT_NE(BindError(R"({"term":"CITY","type":"eq","value":"x"})"), "");
  EXPECT_EQ(BindError(R"({"term":"CITY","type":"eq","value":"x"})", false), "");
  EXPECT_NE(BindError(R"({"type":"bogus"})"), "");
  EXPECT_NE(
      BindError(
          R"({"term":{"type":"transform","transform":"day","term":"ts"},"type":"eq","value":1})"),
      "");
}

TEST(Expression, BindingFoldsWhatTheSchemaDecides) {
  // id is required: never null.
  EXPECT_EQ(Bound(R"({"term":"id","type":"is-null"})")->op, Op::kFalse);
  EXPECT_EQ(Bound(R"({"type":"not","child":{"term":"id","type":"is-null"}})")->op, Op::kTrue);
  // A long beyond an int column's range.
  EXPECT_EQ(Bound(R"({"term":"n","type":"lt","value":10000000000})")->op, Op::kTrue);
  EXPECT_EQ(Bound(R"({"term":"n","type":"eq","value":10000000000})")->op, Op::kFalse);
  // not pushed down to the predicates.
  auto e = Bound(
      R"({"type":"not","child":{"type":"and","left":{"term":"n","type":"lt","value":3},"right":{"term":"city","type":"in","values":["a"]}}})");
  ASSERT_EQ(e->op, Op::kOr);
  EXPECT_EQ(e->left->op, Op::kGtEq);
  EXPECT_EQ(e->right->op, Op::kNotIn);
}

DataFile File(int64_t records) {
  DataFile f;
  f.record_count = records;
  return f;
}

TEST(Metrics, BoundsRuleFilesOut) {
  DataFile f = File(10);
  f.value_counts = {{1, 10}, {2, 10}};
  f.null_value_counts = {{1, 0}, {2, 2}};
  f.lower_bounds = {{1, LE(5, 8)}, {2, "b"}};
  f.upper_bounds = {{1, LE(9, 8)}, {2, "m"}};
  auto might = [&](const char* j) { return MetricsMightMatch(Bound(j), f); };
  EXPECT_TRUE(might(R"({"term":"id","type":"eq","value":5})"));
  EXPECT_FALSE(might(R"({"term":"id","type":"eq","value":4})"));
  EXPECT_FALSE(might(R"({"term":"id","type":"lt","value":5})"));
  EXPECT_TRUE(might(R"({"term":"id","type":"lt-eq","value":5})"));
  EXPECT_FALSE(might(R"({"term":"id","type":"gt","value":9})"));
  EXPECT_TRUE(might(R"({"term":"id","type":"gt-eq","value":9})"));
  EXPECT_FALSE(might(R"({"term":"id","type":"in","values":[1,2,10]})"));
  EXPECT_TRUE(might(R"({"term":"id","type":"in","values":[1,7]})"));
  EXPECT_TRUE(might(R"({"term":"id","type":"not-eq","value":5})"));
  EXPECT_FALSE(might(R"({"term":"city","type":"starts-with","value":"z"})"));
  EXPECT_FALSE(might(R"({"term":"city","type":"starts-with","value":"a"})"));
  EXPECT_TRUE(might(R"({"term":"city","type":"starts-with","value":"ca"})"));
  EXPECT_TRUE(might(R"({"term":"city","type":"is-null"})"));
  EXPECT_FALSE(might(
      R"({"type":"and","left":{"term":"id","type":"eq","value":4},"right":{"term":"city","type":"is-null"}})"));
  EXPECT_TRUE(might(
      R"({"type":"or","left":{"term":"id","type":"eq","value":4},"right":{"term":"city","type":"is-null"}})"));
  // A column the file has no metrics for (added later): rows might match.
  EXPECT_TRUE(might(R"({"term":"n","type":"eq","value":1})"));
  // An empty file holds no row.
  EXPECT_FALSE(MetricsMightMatch(Bound(R"({"term":"n","type":"eq","value":1})"), File(0)));
}

TEST(Metrics, NullsAndNaNsAsTheSpecTreatsThem) {
  DataFile f = File(4);
  f.value_counts = {{2, 4}, {3, 4}};
  f.null_value_counts = {{2, 4}, {3, 0}};
  f.nan_value_counts = {{3, 4}};
  auto might = [&](const char* j) { return MetricsMightMatch(Bound(j), f); };
  // city is all null: no comparison holds, null tests do.
  EXPECT_FALSE(might(R"({"term":"city","type":"eq","value":"a"})"));
  EXPECT_FALSE(might(R"({"term":"city","type":"not-null"})"));
  EXPECT_TRUE(might(R"({"term":"city","type":"is-null"})"));
  EXPECT_TRUE(might(R"({"term":"city","type":"not-starts-with","value":"a"})"));
  // score is all NaN.
  EXPECT_FALSE(might(R"({"term":"score","type":"gt","value":0})"));
  EXPECT_FALSE(might(R"({"term":"score","type":"not-nan"})"));
  EXPECT_TRUE(might(R"({"term":"score","type":"is-nan"})"));
  EXPECT_FALSE(might(R"({"term":"score","type":"is-null"})"));
  // A NaN lower bound says nothing of the other values.
  DataFile g = File(3);
  g.lower_bounds = {{3, std::string("\0\0\0\0\0\0\xf8\x7f", 8)}};  // NaN
  g.upper_bounds = {{3, LE(std::bit_cast<int64_t>(2.0), 8)}};
  EXPECT_TRUE(MetricsMightMatch(Bound(R"({"term":"score","type":"lt","value":1.0})"), g));
  EXPECT_FALSE(MetricsMightMatch(Bound(R"({"term":"score","type":"gt","value":2.0})"), g));
  // No NaN in the file: is-nan cannot match.
  g.nan_value_counts = {{3, 0}};
  EXPECT_FALSE(MetricsMightMatch(Bound(R"({"term":"score","type":"is-nan"})"), g));
}

PartitionSpec Spec(const char* json) { return *ParsePartitionSpec(Json::parse(json)); }

TEST(Projection, TimeTransformsWidenStrictComparisons) {
  auto spec = Spec(
      R"({"spec-id":1,"fields":[{"source-id":5,"field-id":1000,"name":"ts_day","transform":"day"}]})");
  // ts < 2024-01-02T00:00:00Z is day <= 2024-01-01.
  auto p = ProjectInclusive(
      Bound(R"({"term":"ts","type":"lt","value":"2024-01-02T00:00:00+00:00"})"), spec, Fields());
  ASSERT_EQ(p->op, Op::kLtEq);
  EXPECT_EQ(p->literals[0].ToString(), "2024-01-01");
  std::vector<std::optional<Literal>> jan1 = {Literal::Of(TypeId::kDate, 19723)};
  std::vector<std::optional<Literal>> jan2 = {Literal::Of(TypeId::kDate, 19724)};
  EXPECT_TRUE(PartitionMightMatch(p, jan1));
  EXPECT_FALSE(PartitionMightMatch(p, jan2));
  auto eq = ProjectInclusive(
      Bound(R"({"term":"ts","type":"eq","value":"2024-01-02T10:00:00+00:00"})"), spec, Fields());
  EXPECT_FALSE(PartitionMightMatch(eq, jan1));
  EXPECT_TRUE(PartitionMightMatch(eq, jan2));
  // A null partition holds only null timestamps.
  std::vector<std::optional<Literal>> none = {std::nullopt};
  EXPECT_FALSE(PartitionMightMatch(eq, none));
  EXPECT_TRUE(PartitionMightMatch(
      ProjectInclusive(Bound(R"({"term":"ts","type":"is-null"})"), spec, Fields()), none));
  // not-eq projects nothing through a time transform.
  EXPECT_EQ(ProjectInclusive(
                Bound(R"({"term":"ts","type":"not-eq","value":"2024-01-02T10:00:00+00:00"})"), spec,
                Fields())
                ->op,
            Op::kTrue);
}

TEST(Projection, BucketTruncateIdentityAndVoid) {
  auto spec = Spec(R"({"spec-id":2,"fields":[
    {"source-id":1,"field-id":1000,"name":"id_bucket","transform":"bucket[16]"},
    {"source-id":2,"field-id":1001,"name":"city_trunc","transform":"truncate[2]"},
    {"source-id":7,"field-id":1002,"name":"n","transform":"identity"},
    {"source-id":3,"field-id":1003,"name":"gone","transform":"void"}]})");
  std::vector<std::optional<Literal>> part = {
      Literal::Of(TypeId::kInt, *BucketHash(Literal::Of(TypeId::kLong, 34)) % 16),
      Literal::Bytes({TypeId::kString}, "os"), Literal::Of(TypeId::kInt, 3), std::nullopt};
  auto might = [&](const char* j) {
    return PartitionMightMatch(ProjectInclusive(Bound(j), spec, Fields()), part);
  };
  EXPECT_TRUE(might(R"({"term":"id","type":"eq","value":34})"));
  EXPECT_FALSE(might(R"({"term":"id","type":"eq","value":35})"));
  EXPECT_TRUE(might(R"({"term":"id","type":"lt","value":0})"));  // bucket: no order
  EXPECT_TRUE(might(R"({"term":"city","type":"eq","value":"oslo"})"));
  EXPECT_FALSE(might(R"({"term":"city","type":"eq","value":"lima"})"));
  EXPECT_TRUE(might(R"({"term":"city","type":"starts-with","value":"o"})"));
  EXPECT_FALSE(might(R"({"term":"city","type":"starts-with","value":"l"})"));
  EXPECT_TRUE(might(R"({"term":"city","type":"starts-with","value":"osl"})"));
  EXPECT_FALSE(might(R"({"term":"city","type":"gt","value":"p"})"));
  EXPECT_TRUE(might(R"({"term":"city","type":"lt","value":"osz"})"));
  EXPECT_FALSE(might(R"({"term":"n","type":"not-eq","value":3})"));
  EXPECT_FALSE(might(R"({"term":"n","type":"not-in","values":[3,4]})"));
  // A void field is null for every row: it rules nothing out.
  EXPECT_TRUE(might(R"({"term":"score","type":"not-null"})"));
}

TEST(Projection, ManifestSummariesRuleManifestsOut) {
  auto spec = Spec(
      R"({"spec-id":0,"fields":[{"source-id":2,"field-id":1000,"name":"city","transform":"identity"}]})");
  std::vector<PartitionField> types = {{"city", 1000, {TypeId::kString}}};
  FieldSummary s;
  s.contains_null = false;
  s.lower_bound = "Lima";
  s.upper_bound = "Oslo";
  auto might = [&](const char* j) {
    return SummariesMightMatch(ProjectInclusive(Bound(j), spec, Fields()), {s}, types);
  };
  EXPECT_TRUE(might(R"({"term":"city","type":"eq","value":"Oslo"})"));
  EXPECT_FALSE(might(R"({"term":"city","type":"eq","value":"Paris"})"));
  EXPECT_FALSE(might(R"({"term":"city","type":"is-null"})"));
  EXPECT_TRUE(might(R"({"term":"city","type":"not-null"})"));
  s.contains_null = true;
  s.lower_bound.reset();
  s.upper_bound.reset();
  EXPECT_FALSE(might(R"({"term":"city","type":"eq","value":"Oslo"})"));  // only nulls
  EXPECT_TRUE(might(R"({"term":"city","type":"is-null"})"));
}

TEST(Residual, IdentityPartitionsDecideTheirPredicates) {
  auto spec = Spec(
      R"({"spec-id":0,"fields":[{"source-id":2,"field-id":1000,"name":"city","transform":"identity"},
    {"source-id":5,"field-id":1001,"name":"ts_day","transform":"day"}]})");
  std::vector<std::optional<Literal>> part = {Literal::Bytes({TypeId::kString}, "Oslo"),
                                              Literal::Of(TypeId::kDate, 19723)};
  auto filter = Bound(
      R"({"type":"and","left":{"term":"city","type":"eq","value":"Oslo"},"right":{"term":"id","type":"gt","value":3}})");
  EXPECT_EQ(ToJson(Residual(filter, spec, part)),
            Json::parse(R"({"term":"id","type":"gt","value":3})"));
  auto other = Bound(
      R"({"type":"or","left":{"term":"city","type":"eq","value":"Lima"},"right":{"term":"id","type":"gt","value":3}})");
  EXPECT_EQ(ToJson(Residual(other, spec, part)),
            Json::parse(R"({"term":"id","type":"gt","value":3})"));
  // A day partition rules out a timestamp in another day, and keeps one inside.
  auto ts = Bound(R"({"term":"ts","type":"gt-eq","value":"2024-01-03T00:00:00+00:00"})");
  EXPECT_EQ(Residual(ts, spec, part)->op, Op::kFalse);
  auto inside = Bound(R"({"term":"ts","type":"gt-eq","value":"2024-01-01T12:00:00+00:00"})");
  EXPECT_EQ(Residual(inside, spec, part)->op, Op::kGtEq);
}

}  // namespace
}  // namespace tablemere::iceberg
