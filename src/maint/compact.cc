#include "maint/compact.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/util/thread_pool.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>
#include <parquet/statistics.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <unordered_set>

#include "maint/parquet_files.h"

namespace tablemere::maint {
namespace {

using Json = nlohmann::json;

// Writes the rows of `batch` that `dropped_rows` (sorted indices into the batch) does not
// name, as slices between them.
arrow::Status WriteKept(parquet::arrow::FileWriter& writer, const arrow::RecordBatch& batch,
                        const std::vector<int64_t>& dropped_rows) {
  int64_t from = 0;
  for (int64_t row : dropped_rows) {
    if (row > from) ARROW_RETURN_NOT_OK(writer.WriteRecordBatch(*batch.Slice(from, row - from)));
    from = row + 1;
  }
  if (from < batch.num_rows())
    ARROW_RETURN_NOT_OK(writer.WriteRecordBatch(*batch.Slice(from, batch.num_rows() - from)));
  return arrow::Status::OK();
}

// The Iceberg field id Parquet stored with a top-level column, or -1.
int FieldIdOf(const arrow::Field& field) {
  if (!field.metadata()) return -1;
  auto id = field.metadata()->Get("PARQUET:field_id");
  if (!id.ok()) return -1;
  try {
    return std::stoi(*id);
  } catch (const std::exception&) {
    return -1;
  }
}

// One field that holds both `a` and `b`: the same name, field id (PARQUET:field_id, where
// the reader puts it and the writer takes it from) and type, nullable if either is. Writers
// disagree on nullability alone: Spark declares a column required in a file whose rows
// had no null. Anything else differing is an error.
Result<std::shared_ptr<arrow::Field>> Unify(const arrow::Field& a, const arrow::Field& b,
                                            bool wrapper);

// `top`: a top-level column, the only place Conformed widens values; below it a widening
// would only relabel the buffers, so it is refused there.
Result<std::shared_ptr<arrow::DataType>> UnifyType(const std::shared_ptr<arrow::DataType>& a,
                                                   const std::shared_ptr<arrow::DataType>& b,
                                                   bool top = false) {
  // Iceberg's type promotions: int to long, float to double, a decimal's precision.
  const auto promoted = [&](arrow::Type::type narrow, arrow::Type::type wide) {
    return (a->id() == narrow && b->id() == wide) || (a->id() == wide && b->id() == narrow);
  };
  if (top && promoted(arrow::Type::INT32, arrow::Type::INT64)) return arrow::int64();
  if (top && promoted(arrow::Type::FLOAT, arrow::Type::DOUBLE)) return arrow::float64();
  if (a->id() == arrow::Type::DECIMAL128 && b->id() == arrow::Type::DECIMAL128) {
    const auto& da = static_cast<const arrow::Decimal128Type&>(*a);
    const auto& db = static_cast<const arrow::Decimal128Type&>(*b);
    if (da.scale() == db.scale()) return da.precision() >= db.precision() ? a : b;
  }
  if (a->id() != b->id() || a->num_fields() != b->num_fields()) {
    return Fail(ErrorCode::kInvalidInput, a->ToString() + " against " + b->ToString());
  }
  if (a->num_fields() == 0) {
    if (!a->Equals(*b)) {
      return Fail(ErrorCode::kInvalidInput, a->ToString() + " against " + b->ToString());
    }
    return a;
  }
  std::vector<std::shared_ptr<arrow::Field>> children;
  for (int i = 0; i < a->num_fields(); i++) {
    // A list's element and a map's entries are wrappers whose names writers choose.
    const bool wrapper = a->id() != arrow::Type::STRUCT;
    TM_ASSIGN(auto child, Unify(*a->field(i), *b->field(i), wrapper));
    children.push_back(std::move(child));
  }
  switch (a->id()) {
    case arrow::Type::STRUCT:
      return arrow::struct_(children);
    case arrow::Type::LIST:
      return arrow::list(children[0]);
    case arrow::Type::LARGE_LIST:
      return arrow::large_list(children[0]);
    case arrow::Type::MAP: {
      const auto& entries = children[0]->type();
      if (entries->num_fields() != 2) break;
      return std::shared_ptr<arrow::DataType>(
          std::make_shared<arrow::MapType>(entries->field(0), entries->field(1),
                                           static_cast<const arrow::MapType&>(*a).keys_sorted()));
    }
    default:
      break;
  }
  if (!a->Equals(*b)) {
    return Fail(ErrorCode::kInvalidInput, a->ToString() + " against " + b->ToString());
  }
  return a;
}

Result<std::shared_ptr<arrow::Field>> Unify(const arrow::Field& a, const arrow::Field& b,
                                            bool wrapper) {
  // Fields with Iceberg ids match by id (a nested field may have been renamed since);
  // others by name, unless they only wrap (a list's element, a map's entries).
  const bool same = FieldIdOf(a) >= 0 || FieldIdOf(b) >= 0 ? FieldIdOf(a) == FieldIdOf(b)
                                                           : wrapper || a.name() == b.name();
  if (!same) return Fail(ErrorCode::kInvalidInput, a.ToString() + " against " + b.ToString());
  TM_ASSIGN(auto type, UnifyType(a.type(), b.type()));
  return arrow::field(a.name(), type, a.nullable() || b.nullable(), a.metadata());
}

// Format v3's row lineage columns: written explicitly into a rewritten file, so every row
// keeps the id and last-updated sequence number it had (the spec's reserved field ids).
constexpr int kRowIdField = 2147483540, kLastUpdatedField = 2147483539;
bool IsLineageField(int id) { return id == kRowIdField || id == kLastUpdatedField; }

// Where an input's rows' lineage comes from when the file does not hold it (or holds
// null): its first row id plus the row's position, and its data sequence number. A file
// without a first row id (written before the table became v3) has no row ids to keep.
struct Lineage {
  std::optional<int64_t> first_row_id;
  int64_t sequence = 0;
};

// The output's schema: the table's current top-level fields (`fields`: [{"id", "name"}])
// in its order and with its names, each as the inputs hold it (nullable if any input is
// or lacks it; promoted to the widest type). A field no input holds is left out (readers
// take it as null), as are the inputs' columns the table has dropped. Every input column
// must carry its Iceberg field id: the columns are matched by id, never by name.
Result<std::shared_ptr<arrow::Schema>> TargetSchema(
    const std::vector<protocol::SchemaField>& fields,
    const std::vector<std::shared_ptr<arrow::Schema>>& inputs) {
  for (const auto& input : inputs) {
    for (const auto& f : input->fields()) {
      if (FieldIdOf(*f) < 0) {
        return Fail(ErrorCode::kInvalidInput, "column " + f->name() + " has no Iceberg field id");
      }
    }
  }
  std::vector<std::shared_ptr<arrow::Field>> out;
  for (const auto& f : fields) {
    const int id = f.id;
    std::shared_ptr<arrow::Field> merged;
    bool missing = false;
    for (const auto& input : inputs) {
      std::shared_ptr<arrow::Field> here;
      for (const auto& candidate : input->fields()) {
        if (FieldIdOf(*candidate) == id) here = candidate;
      }
      if (!here) {
        missing = true;
        continue;
      }
      if (!merged) {
        merged = here;
        continue;
      }
      auto type = UnifyType(merged->type(), here->type(), /*top=*/true);
      if (!type) {
        return Fail(ErrorCode::kInvalidInput,
                    "field " + std::to_string(id) + ": " + type.error().message);
      }
      merged = arrow::field(merged->name(), *type, merged->nullable() || here->nullable(),
                            merged->metadata());
    }
    if (!merged && IsLineageField(id)) {
      merged = arrow::field(f.name, arrow::int64(), true,
                            arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(id)}));
    }
    if (!merged) continue;
    out.push_back(
        arrow::field(f.name, merged->type(), merged->nullable() || missing, merged->metadata()));
  }
  // No schema-level metadata: a writer's embedded copy of its schema (iceberg.schema)
  // would not describe the merged file.
  return arrow::schema(std::move(out));
}

// `data` seen as `type`, which differs from its own only in nullability (see Unify).
std::shared_ptr<arrow::ArrayData> Retyped(const std::shared_ptr<arrow::ArrayData>& data,
                                          const std::shared_ptr<arrow::DataType>& type) {
  auto out = data->Copy();
  out->type = type;
  for (size_t i = 0; i < out->child_data.size() && static_cast<int>(i) < type->num_fields(); i++) {
    out->child_data[i] = Retyped(out->child_data[i], type->field(static_cast<int>(i))->type());
  }
  return out;
}

// `values` widened to `type` (int to long, float to double).
template <typename Builder, typename Array>
Result<std::shared_ptr<arrow::Array>> Widened(const Array& values) {
  Builder builder;
  TM_ARROW_TRY(builder.Reserve(values.length()), "widen");
  for (int64_t i = 0; i < values.length(); i++) {
    if (values.IsNull(i)) {
      builder.UnsafeAppendNull();
    } else {
      builder.UnsafeAppend(values.Value(i));
    }
  }
  std::shared_ptr<arrow::Array> out;
  TM_ARROW_TRY(builder.Finish(&out), "widen");
  return out;
}

// A column as `type`, which it is up to nullability or one of Iceberg's promotions.
Result<std::shared_ptr<arrow::Array>> Conformed(const std::shared_ptr<arrow::Array>& column,
                                                const std::shared_ptr<arrow::DataType>& type) {
  const auto from = column->type_id(), to = type->id();
  if (from == arrow::Type::INT32 && to == arrow::Type::INT64) {
    return Widened<arrow::Int64Builder>(static_cast<const arrow::Int32Array&>(*column));
  }
  if (from == arrow::Type::FLOAT && to == arrow::Type::DOUBLE) {
    return Widened<arrow::DoubleBuilder>(static_cast<const arrow::FloatArray&>(*column));
  }
  // The same layout otherwise: a decimal's 16 bytes at any precision, nested nullability.
  return arrow::MakeArray(Retyped(column->data(), type));
}

// A lineage column of a batch whose first row is the file's row `first_row`: the values
// the file holds, and where it holds none (or null), the inherited ones.
Result<std::shared_ptr<arrow::Array>> LineageColumn(int id, const arrow::Array* held,
                                                    const Lineage& lineage, int64_t first_row,
                                                    int64_t rows) {
  if (held && held->type_id() != arrow::Type::INT64) {
    return Fail(ErrorCode::kInvalidInput,
                "row lineage column " + std::to_string(id) + " is " + held->type()->ToString());
  }
  const auto* values = static_cast<const arrow::Int64Array*>(held);
  arrow::Int64Builder builder;
  TM_ARROW_TRY(builder.Reserve(rows), "lineage");
  for (int64_t i = 0; i < rows; i++) {
    if (values && !values->IsNull(i)) {
      builder.UnsafeAppend(values->Value(i));
    } else if (id == kLastUpdatedField) {
      builder.UnsafeAppend(lineage.sequence);
    } else if (lineage.first_row_id) {
      builder.UnsafeAppend(*lineage.first_row_id + first_row + i);
    } else {
      builder.UnsafeAppendNull();
    }
  }
  std::shared_ptr<arrow::Array> out;
  TM_ARROW_TRY(builder.Finish(&out), "lineage");
  return out;
}

// A batch of one input in the output's schema: its columns matched by field id, widened
// where the table promoted them, and null where the file predates them. Row lineage
// columns (when the schema has them) are filled in from `lineage` where the file has
// no value; `first_row` is the batch's first row's position in its file.
Result<std::shared_ptr<arrow::RecordBatch>> Conform(const arrow::RecordBatch& batch,
                                                    const std::shared_ptr<arrow::Schema>& schema,
                                                    const Lineage& lineage, int64_t first_row) {
  std::vector<std::shared_ptr<arrow::Array>> columns;
  for (const auto& field : schema->fields()) {
    const int id = FieldIdOf(*field);
    std::shared_ptr<arrow::Array> column;
    for (int c = 0; c < batch.num_columns(); c++) {
      if (FieldIdOf(*batch.schema()->field(c)) == id) column = batch.column(c);
    }
    if (IsLineageField(id)) {
      TM_ASSIGN(auto filled, LineageColumn(id, column.get(), lineage, first_row, batch.num_rows()));
      columns.push_back(std::move(filled));
      continue;
    }
    if (!column) {
      auto nulls = arrow::MakeArrayOfNull(field->type(), batch.num_rows());
      if (!nulls.ok()) return Fail(FromArrow(nulls.status(), "nulls"));
      columns.push_back(*nulls);
      continue;
    }
    TM_ASSIGN(auto conformed, Conformed(column, field->type()));
    columns.push_back(std::move(conformed));
  }
  return arrow::RecordBatch::Make(schema, batch.num_rows(), std::move(columns));
}

// Appends each row's value of `array` to its key in `keys`, in one encoding per Iceberg
// type family, so an equality delete written before a type promotion (int to long, float
// to double) still matches: integers as 64-bit, floating point as a double's bits (NaN in
// one spelling, -0.0 apart from 0.0, as Java's Double.equals has it), strings and binary
// length-prefixed, and null as its own tag (a null in an equality delete matches null).
// kInvalidInput for a type equality deletes cannot name here (nested columns).
Result<void> AppendKeys(const arrow::Array& array, std::vector<std::string>& keys) {
  auto put = [&](int64_t i, char tag, const void* bytes, size_t n) {
    keys[static_cast<size_t>(i)].push_back(tag);
    keys[static_cast<size_t>(i)].append(static_cast<const char*>(bytes), n);
  };
  auto integers = [&](const auto& a, char tag) {
    for (int64_t i = 0; i < a.length(); i++) {
      if (a.IsNull(i)) {
        put(i, 'n', nullptr, 0);
        continue;
      }
      const auto v = static_cast<int64_t>(a.Value(i));
      put(i, tag, &v, sizeof v);
    }
  };
  auto floating = [&](const auto& a) {
    for (int64_t i = 0; i < a.length(); i++) {
      if (a.IsNull(i)) {
        put(i, 'n', nullptr, 0);
        continue;
      }
      double v = static_cast<double>(a.Value(i));
      if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
      put(i, 'f', &v, sizeof v);
    }
  };
  auto bytes = [&](const auto& a) {
    for (int64_t i = 0; i < a.length(); i++) {
      if (a.IsNull(i)) {
        put(i, 'n', nullptr, 0);
        continue;
      }
      const std::string_view v = a.GetView(i);
      const auto n = static_cast<uint32_t>(v.size());
      put(i, 's', &n, sizeof n);
      keys[static_cast<size_t>(i)].append(v.data(), v.size());
    }
  };
  using arrow::Type;
  switch (array.type_id()) {
    case Type::INT8:
      integers(static_cast<const arrow::Int8Array&>(array), 'i');
      break;
    case Type::INT16:
      integers(static_cast<const arrow::Int16Array&>(array), 'i');
      break;
    case Type::INT32:
      integers(static_cast<const arrow::Int32Array&>(array), 'i');
      break;
    case Type::INT64:
      integers(static_cast<const arrow::Int64Array&>(array), 'i');
      break;
    case Type::DATE32:
      integers(static_cast<const arrow::Date32Array&>(array), 'd');
      break;
    case Type::TIME64:
      integers(static_cast<const arrow::Time64Array&>(array), 't');
      break;
    case Type::TIMESTAMP: {
      const auto& ts = static_cast<const arrow::TimestampArray&>(array);
      const auto& type = static_cast<const arrow::TimestampType&>(*array.type());
      // The unit is part of the tag: micros and nanos never compare equal by accident.
      integers(ts, static_cast<char>('0' + static_cast<int>(type.unit())));
      break;
    }
    case Type::BOOL: {
      const auto& b = static_cast<const arrow::BooleanArray&>(array);
      for (int64_t i = 0; i < b.length(); i++) {
        if (b.IsNull(i)) {
          put(i, 'n', nullptr, 0);
          continue;
        }
        const char v = b.Value(i) ? 1 : 0;
        put(i, 'b', &v, 1);
      }
      break;
    }
    case Type::FLOAT:
      floating(static_cast<const arrow::FloatArray&>(array));
      break;
    case Type::DOUBLE:
      floating(static_cast<const arrow::DoubleArray&>(array));
      break;
    case Type::STRING:
      bytes(static_cast<const arrow::StringArray&>(array));
      break;
    case Type::LARGE_STRING:
      bytes(static_cast<const arrow::LargeStringArray&>(array));
      break;
    case Type::BINARY:
      bytes(static_cast<const arrow::BinaryArray&>(array));
      break;
    case Type::LARGE_BINARY:
      bytes(static_cast<const arrow::LargeBinaryArray&>(array));
      break;
    case Type::FIXED_SIZE_BINARY:
      bytes(static_cast<const arrow::FixedSizeBinaryArray&>(array));
      break;
    case Type::DECIMAL128: {
      // The unscaled value: a table's decimal keeps its scale (only precision widens).
      const auto& d = static_cast<const arrow::Decimal128Array&>(array);
      for (int64_t i = 0; i < d.length(); i++) {
        if (d.IsNull(i)) {
          put(i, 'n', nullptr, 0);
          continue;
        }
        put(i, 'D', d.GetValue(i), 16);
      }
      break;
    }
    default:
      return Fail(ErrorCode::kInvalidInput, "an equality delete names a column of type " +
                                                array.type()->ToString() +
                                                ", which compaction does not compare yet");
  }
  return {};
}

// The key of every row of `batch` over the columns with `ids`, in that order. A column the
// file does not have (added after it was written) is null in each of its rows.
Result<std::vector<std::string>> KeysOf(const arrow::RecordBatch& batch,
                                        const std::vector<int>& ids) {
  std::vector<std::string> keys(static_cast<size_t>(batch.num_rows()));
  for (int id : ids) {
    int column = -1;
    for (int c = 0; c < batch.num_columns(); c++) {
      if (FieldIdOf(*batch.schema()->field(c)) == id) column = c;
    }
    if (column < 0) {
      for (auto& k : keys) k.push_back('n');
      continue;
    }
    TM_TRY(AppendKeys(*batch.column(column), keys));
  }
  return keys;
}

// An equality delete file: the equality field ids and the set of their deleted keys.
struct EqualityDeletes {
  std::vector<int> ids;
  std::unordered_set<std::string> keys;
};

// A position delete file's rows: data file path (canonical) -> deleted row positions.
Result<std::map<std::string, std::vector<int64_t>>> ReadPositionDeletes(const std::string& path) {
  std::map<std::string, std::vector<int64_t>> out;
  TM_TRY(ForEachPositionDelete(path, [&](std::string_view file, int64_t pos) {
    out[Canonical(std::string(file))].push_back(pos);
  }));
  return out;
}

// An equality delete file's keys over `ids`. Every id must be one of its columns.
Result<EqualityDeletes> ReadEqualityDeletes(const std::string& path, std::vector<int> ids) {
  if (ids.empty()) return Fail(ErrorCode::kInvalidInput, path + " names no equality field");
  std::unique_ptr<parquet::arrow::FileReader> holder;
  TM_ASSIGN(auto batches, OpenBatches(path, holder));
  for (int id : ids) {
    bool found = false;
    for (const auto& field : batches->schema()->fields()) found = found || FieldIdOf(*field) == id;
    if (!found) {
      return Fail(ErrorCode::kInvalidInput,
                  path + " has no column with equality field id " + std::to_string(id));
    }
  }
  EqualityDeletes out{std::move(ids), {}};
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    TM_ARROW_TRY(batches->ReadNext(&batch), path);
    if (!batch) break;
    TM_ASSIGN(auto keys, KeysOf(*batch, out.ids));
    for (auto& k : keys) out.keys.insert(std::move(k));
  }
  return out;
}

// Whether every index of `indices` is below `bound`.
bool AllBelow(const std::vector<size_t>& indices, size_t bound) {
  return std::all_of(indices.begin(), indices.end(), [&](size_t i) { return i < bound; });
}

}  // namespace

Result<protocol::CompactAnswer> CompactFiles(const protocol::CompactPlan& plan) {
  if (plan.inputs.empty() || plan.output.empty()) {
    return Fail(ErrorCode::kInvalidInput, "a plan needs inputs and an output");
  }
  const int threads = plan.max_threads;
  TM_ARROW_TRY(arrow::SetCpuThreadPoolCapacity(std::max(1, threads)), "threads");
  TM_ARROW_TRY(arrow::io::SetIOThreadPoolCapacity(std::max(1, threads)), "threads");
  std::shared_ptr<arrow::Schema> schema;
  protocol::CompactAnswer answer;
  int64_t& rows_read = answer.rows_read;
  int64_t& rows_deleted = answer.rows_deleted;
  int64_t& rows_deleted_by_equality = answer.rows_deleted_by_equality;
  // Delete files, read once each.
  std::vector<std::map<std::string, std::vector<int64_t>>> deletes;
  for (const auto& d : plan.position_deletes) {
    TM_ASSIGN(auto rows, ReadPositionDeletes(d));
    deletes.push_back(std::move(rows));
  }
  std::vector<EqualityDeletes> equality;
  for (const auto& d : plan.equality_deletes) {
    TM_ASSIGN(auto keys, ReadEqualityDeletes(d.path, std::vector<int>(d.equality_ids.begin(),
                                                                      d.equality_ids.end())));
    equality.push_back(std::move(keys));
  }
  // The output's schema, from every input's footer before a row is read.
  if (plan.schema.empty()) return Fail(ErrorCode::kInvalidInput, "a plan needs the table's schema");
  std::vector<protocol::SchemaField> fields = plan.schema;
  if (plan.row_lineage) {
    fields.push_back({kRowIdField, "_row_id"});
    fields.push_back({kLastUpdatedField, "_last_updated_sequence_number"});
  }
  std::vector<std::shared_ptr<arrow::Schema>> input_schemas;
  for (const auto& input : plan.inputs) {
    std::unique_ptr<parquet::arrow::FileReader> holder;
    TM_ASSIGN(auto batches, OpenBatches(input.path, holder));
    input_schemas.push_back(batches->schema());
  }
  auto target = TargetSchema(fields, input_schemas);
  if (!target) {
    return Fail(ErrorCode::kInvalidInput,
                "the bin's files do not fit the table's schema: " + target.error().message);
  }
  schema = *target;
  if (schema->num_fields() == 0) {
    return Fail(ErrorCode::kInvalidInput, "the bin's files hold none of the table's columns");
  }
  // Removed unless finished: a bin that fails halfway leaves nothing behind.
  TM_ASSIGN(ParquetOutput out, ParquetOutput::Open(schema, plan.output));
  for (const auto& input : plan.inputs) {
    const std::string& path = input.path;
    const auto& position_files = input.position_delete_files;
    const auto& equality_files = input.equality_delete_files;
    if (!AllBelow(position_files, deletes.size()) || !AllBelow(equality_files, equality.size())) {
      return Fail(ErrorCode::kInvalidInput, "no such delete file");
    }
    std::vector<int64_t> deleted = input.deleted_positions;
    const std::string data_path = Canonical(input.data_path);
    for (size_t index : position_files) {
      auto it = deletes[index].find(data_path);
      if (it != deletes[index].end()) {
        deleted.insert(deleted.end(), it->second.begin(), it->second.end());
      }
    }
    Lineage lineage;
    if (plan.row_lineage) lineage = {input.first_row_id, input.data_sequence_number};
    std::sort(deleted.begin(), deleted.end());
    deleted.erase(std::unique(deleted.begin(), deleted.end()), deleted.end());
    std::unique_ptr<parquet::arrow::FileReader> holder;
    auto opened_batches = OpenBatches(path, holder);
    if (!opened_batches) return Fail(opened_batches.error());
    auto batches = *opened_batches;
    int64_t row = 0;
    const int64_t offset = rows_read - rows_deleted;  // where its first kept row lands
    std::vector<int64_t> dropped_positions;
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      TM_ARROW_TRY(batches->ReadNext(&batch), path);
      if (!batch) break;
      const int64_t end = row + batch->num_rows();
      // The batch's rows that a position delete names, then those an equality delete's
      // key matches (each key computed once per set of equality ids).
      std::vector<char> drop(static_cast<size_t>(batch->num_rows()), 0);
      for (auto it = std::lower_bound(deleted.begin(), deleted.end(), row);
           it != deleted.end() && *it < end; ++it) {
        drop[static_cast<size_t>(*it - row)] = 1;
      }
      std::map<std::vector<int>, std::vector<std::string>> keys_by_ids;
      for (size_t index : equality_files) {
        const EqualityDeletes& eq = equality[index];
        auto keys = keys_by_ids.find(eq.ids);
        if (keys == keys_by_ids.end()) {
          auto made = KeysOf(*batch, eq.ids);
          if (!made) return Fail(made.error());
          keys = keys_by_ids.emplace(eq.ids, std::move(*made)).first;
        }
        for (size_t i = 0; i < drop.size(); i++) {
          if (!drop[i] && eq.keys.count(keys->second[i])) {
            drop[i] = 1;
            rows_deleted_by_equality++;
          }
        }
      }
      std::vector<int64_t> dropped_rows;
      for (size_t i = 0; i < drop.size(); i++) {
        if (drop[i]) dropped_rows.push_back(static_cast<int64_t>(i));
      }
      rows_deleted += static_cast<int64_t>(dropped_rows.size());
      for (int64_t r : dropped_rows) dropped_positions.push_back(row + r);
      auto conformed = Conform(*batch, schema, lineage, row);
      if (!conformed) return Fail(conformed.error());
      TM_ARROW_TRY(WriteKept(out.writer(), **conformed, dropped_rows), out.partial());
      row = end;
    }
    rows_read += row;
    answer.row_map.push_back({input.data_path, offset, row, std::move(dropped_positions)});
  }
  TM_ASSIGN(answer.file, out.Finish());
  return answer;
}

}  // namespace tablemere::maint
