#include "maint/compact.h"

#include <arrow/api.h>
#include <arrow/array/concatenate.h>
#include <arrow/io/file.h>
#include <arrow/util/thread_pool.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>
#include <parquet/statistics.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>

#include "common/crypto.h"

namespace tablemere::maint {
namespace {

using Json = nlohmann::json;

Error FromArrow(const arrow::Status& s, const std::string& what) {
  return Error{ErrorCode::kInvalidInput, what + ": " + s.ToString(), {}};
}

#define TM_ARROW_TRY(expr, what)                                   \
  do {                                                             \
    ::arrow::Status _st = (expr);                                  \
    if (!_st.ok()) return ::tablemere::Fail(FromArrow(_st, what)); \
  } while (0)

// Field ids live in each Arrow field's metadata (PARQUET:field_id), where the Parquet
// reader puts them and the writer takes them from: two schemas agree only if those do.
bool SameSchema(const arrow::Schema& a, const arrow::Schema& b) {
  return a.Equals(b, /*check_metadata=*/true);
}

// How a column's Parquet statistics map to Iceberg's bound encoding, or kNone when they
// do not (decimals are big-endian in Iceberg, millisecond timestamps are not Iceberg's
// unit, nested repeated leaves count differently): then no bound is reported, which
// readers treat as "might match".
enum class BoundKind { kNone, kInt32, kInt64, kFloat, kDouble, kBool, kBytes };

BoundKind KindOf(const parquet::ColumnDescriptor& col) {
  if (col.max_repetition_level() > 0) return BoundKind::kNone;
  const auto& logical = col.logical_type();
  if (logical && logical->is_decimal()) return BoundKind::kNone;
  if (logical && logical->is_timestamp()) {
    const auto& ts = static_cast<const parquet::TimestampLogicalType&>(*logical);
    if (ts.time_unit() == parquet::LogicalType::TimeUnit::MILLIS) return BoundKind::kNone;
  }
  if (logical && logical->is_time()) {
    const auto& t = static_cast<const parquet::TimeLogicalType&>(*logical);
    if (t.time_unit() == parquet::LogicalType::TimeUnit::MILLIS) return BoundKind::kNone;
  }
  switch (col.physical_type()) {
    case parquet::Type::INT32:
      return BoundKind::kInt32;
    case parquet::Type::INT64:
      return BoundKind::kInt64;
    case parquet::Type::FLOAT:
      return BoundKind::kFloat;
    case parquet::Type::DOUBLE:
      return BoundKind::kDouble;
    case parquet::Type::BOOLEAN:
      return BoundKind::kBool;
    case parquet::Type::BYTE_ARRAY:
    case parquet::Type::FIXED_LEN_BYTE_ARRAY:
      return BoundKind::kBytes;
    default:
      return BoundKind::kNone;
  }
}

template <typename T>
T Load(const std::string& b) {
  T v{};
  std::memcpy(&v, b.data(), std::min(sizeof v, b.size()));
  return v;
}

// a < b for two encoded values of one kind. Parquet's plain encoding of numbers is
// little-endian, as Iceberg's is; bytes compare unsigned, as Iceberg orders strings
// (UTF-8 byte order is code point order) and binary.
bool Less(BoundKind k, const std::string& a, const std::string& b) {
  switch (k) {
    case BoundKind::kInt32:
      return Load<int32_t>(a) < Load<int32_t>(b);
    case BoundKind::kInt64:
      return Load<int64_t>(a) < Load<int64_t>(b);
    case BoundKind::kFloat:
      return Load<float>(a) < Load<float>(b);
    case BoundKind::kDouble:
      return Load<double>(a) < Load<double>(b);
    case BoundKind::kBool:
      return Load<uint8_t>(a) < Load<uint8_t>(b);
    case BoundKind::kBytes:
      return std::lexicographical_compare(
          a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
            return static_cast<unsigned char>(x) < static_cast<unsigned char>(y);
          });
    case BoundKind::kNone:
      break;
  }
  return false;
}

// Bytes bounds longer than this are left out, as Iceberg's default metrics mode
// truncates them (a truncated upper bound would need its last byte incremented).
constexpr size_t kMaxBytesBound = 16;

struct ColumnMetrics {
  BoundKind kind = BoundKind::kNone;
  int64_t size = 0, values = 0, nulls = 0;
  bool bounds = true;  // false once a row group lacks them
  std::string lower, upper;
  bool seen = false;
};

// The metrics of a written file, from its footer.
Json Metrics(const parquet::FileMetaData& meta, int64_t file_size) {
  std::map<int, ColumnMetrics> columns;
  Json split_offsets = Json::array();
  for (int g = 0; g < meta.num_row_groups(); g++) {
    auto group = meta.RowGroup(g);
    if (group->num_columns() > 0) {
      auto first = group->ColumnChunk(0);
      split_offsets.push_back(first->has_dictionary_page() ? first->dictionary_page_offset()
                                                           : first->data_page_offset());
    }
    for (int c = 0; c < group->num_columns(); c++) {
      const parquet::ColumnDescriptor* descr = meta.schema()->Column(c);
      const int id = descr->schema_node()->field_id();
      if (id < 0) continue;
      auto chunk = group->ColumnChunk(c);
      ColumnMetrics& m = columns[id];
      m.kind = KindOf(*descr);
      m.size += chunk->total_compressed_size();
      if (descr->max_repetition_level() > 0) continue;  // counts of list items differ
      m.values += chunk->num_values();
      auto stats = chunk->statistics();
      if (!stats) {
        m.bounds = false;
        continue;
      }
      if (stats->HasNullCount()) m.nulls += stats->null_count();
      if (!stats->HasMinMax()) {
        // A chunk of nulls only has no min and max; anything else is unknown.
        if (!(stats->HasNullCount() && stats->null_count() == chunk->num_values())) {
          m.bounds = false;
        }
        continue;
      }
      std::string lo = stats->EncodeMin(), hi = stats->EncodeMax();
      if (!m.seen || Less(m.kind, lo, m.lower)) m.lower = lo;
      if (!m.seen || Less(m.kind, m.upper, hi)) m.upper = hi;
      m.seen = true;
    }
  }
  Json sizes = Json::object(), values = Json::object(), nulls = Json::object(),
       lower = Json::object(), upper = Json::object();
  for (const auto& [id, m] : columns) {
    const std::string key = std::to_string(id);
    sizes[key] = m.size;
    if (m.values > 0 || m.seen) {
      values[key] = m.values;
      nulls[key] = m.nulls;
    }
    if (!m.bounds || !m.seen || m.kind == BoundKind::kNone) continue;
    if (m.kind == BoundKind::kBytes &&
        (m.lower.size() > kMaxBytesBound || m.upper.size() > kMaxBytesBound)) {
      continue;
    }
    lower[key] = crypto::HexEncode(m.lower);
    upper[key] = crypto::HexEncode(m.upper);
  }
  return Json{{"record_count", meta.num_rows()}, {"file_size_in_bytes", file_size},
              {"column_sizes", sizes},           {"value_counts", values},
              {"null_value_counts", nulls},      {"lower_bounds", lower},
              {"upper_bounds", upper},           {"split_offsets", split_offsets}};
}

// Writes the rows of `batch` (which starts at row `first` of its file) that `deleted`
// (sorted) does not name, as slices between the deleted rows.
arrow::Status WriteKept(parquet::arrow::FileWriter& writer, const arrow::RecordBatch& batch,
                        int64_t first, const std::vector<int64_t>& deleted, int64_t& dropped) {
  const int64_t end = first + batch.num_rows();
  auto it = std::lower_bound(deleted.begin(), deleted.end(), first);
  int64_t from = first;
  for (; it != deleted.end() && *it < end; ++it) {
    if (*it > from)
      ARROW_RETURN_NOT_OK(writer.WriteRecordBatch(*batch.Slice(from - first, *it - from)));
    from = *it + 1;
    dropped++;
  }
  if (from < end)
    ARROW_RETURN_NOT_OK(writer.WriteRecordBatch(*batch.Slice(from - first, end - from)));
  return arrow::Status::OK();
}

// Hadoop's spellings of S3 name the same file as s3:// (as the server compares them).
std::string Canonical(std::string path) {
  for (const char* scheme : {"s3a://", "s3n://"}) {
    if (path.starts_with(scheme)) return "s3://" + path.substr(6);
  }
  return path;
}

// A position delete file's rows: data file path -> deleted row positions. Columns are
// found by name (file_path, pos): DuckDB 1.5 writes them under other field ids.
Result<std::map<std::string, std::vector<int64_t>>> ReadPositionDeletes(const std::string& path) {
  auto file = arrow::io::ReadableFile::Open(path);
  if (!file.ok()) return Fail(FromArrow(file.status(), path));
  auto reader = parquet::arrow::OpenFile(*file, arrow::default_memory_pool());
  if (!reader.ok()) return Fail(FromArrow(reader.status(), path));
  auto read = (*reader)->ReadTable();
  if (!read.ok()) return Fail(FromArrow(read.status(), path));
  std::shared_ptr<arrow::Table> table = *read;
  auto paths = table->GetColumnByName("file_path");
  auto positions = table->GetColumnByName("pos");
  if (!paths || !positions) {
    return Fail(ErrorCode::kInvalidInput, path + " is not a position delete file");
  }
  auto flat_paths = arrow::Concatenate(paths->chunks());
  auto flat_positions = arrow::Concatenate(positions->chunks());
  if (!flat_paths.ok() || !flat_positions.ok()) {
    return Fail(ErrorCode::kInvalidInput, path + ": cannot read its columns");
  }
  auto pos = std::dynamic_pointer_cast<arrow::Int64Array>(*flat_positions);
  if (!pos) return Fail(ErrorCode::kInvalidInput, path + ": pos is not a long column");
  std::map<std::string, std::vector<int64_t>> out;
  auto add = [&](const auto& strings) {
    for (int64_t i = 0; i < strings.length(); i++) {
      if (strings.IsNull(i) || pos->IsNull(i)) continue;
      out[Canonical(std::string(strings.GetView(i)))].push_back(pos->Value(i));
    }
  };
  if (auto utf8 = std::dynamic_pointer_cast<arrow::StringArray>(*flat_paths)) {
    add(*utf8);
  } else if (auto large = std::dynamic_pointer_cast<arrow::LargeStringArray>(*flat_paths)) {
    add(*large);
  } else {
    return Fail(ErrorCode::kInvalidInput, path + ": file_path is not a string column");
  }
  return out;
}

}  // namespace

Result<Json> CompactFiles(const Json& plan) {
  if (!plan.contains("inputs") || !plan["inputs"].is_array() || plan["inputs"].empty() ||
      !plan.contains("output") || !plan["output"].is_string()) {
    return Fail(ErrorCode::kInvalidInput, "a plan needs inputs and an output");
  }
  const int threads = plan.value("max_threads", 1);
  TM_ARROW_TRY(arrow::SetCpuThreadPoolCapacity(std::max(1, threads)), "threads");
  TM_ARROW_TRY(arrow::io::SetIOThreadPoolCapacity(std::max(1, threads)), "threads");
  const std::string output = plan["output"];
  // Written beside its final name and renamed when whole: a killed worker leaves no file
  // the server could mistake for its output.
  const std::string partial = output + ".partial";
  std::shared_ptr<arrow::Schema> schema;
  std::unique_ptr<parquet::arrow::FileWriter> writer;
  std::shared_ptr<arrow::io::FileOutputStream> sink;
  int64_t rows_read = 0, rows_deleted = 0;
  // Position delete files, read once each.
  std::vector<std::map<std::string, std::vector<int64_t>>> deletes;
  for (const auto& d : plan.value("position_deletes", Json::array())) {
    TM_ASSIGN(auto rows, ReadPositionDeletes(d.get<std::string>()));
    deletes.push_back(std::move(rows));
  }
  for (const auto& input : plan["inputs"]) {
    const std::string path = input.at("path").get<std::string>();
    std::vector<int64_t> deleted;
    for (const auto& p : input.value("deleted_positions", Json::array()))
      deleted.push_back(p.get<int64_t>());
    const std::string data_path = Canonical(input.value("data_path", ""));
    for (const auto& d : input.value("delete_files", Json::array())) {
      const auto index = d.get<size_t>();
      if (index >= deletes.size()) return Fail(ErrorCode::kInvalidInput, "no such delete file");
      auto it = deletes[index].find(data_path);
      if (it != deletes[index].end()) {
        deleted.insert(deleted.end(), it->second.begin(), it->second.end());
      }
    }
    std::sort(deleted.begin(), deleted.end());
    deleted.erase(std::unique(deleted.begin(), deleted.end()), deleted.end());
    auto file = arrow::io::ReadableFile::Open(path);
    if (!file.ok()) return Fail(FromArrow(file.status(), path));
    auto reader = parquet::arrow::OpenFile(*file, arrow::default_memory_pool());
    if (!reader.ok()) return Fail(FromArrow(reader.status(), path));
    auto batches = (*reader)->GetRecordBatchReader();
    if (!batches.ok()) return Fail(FromArrow(batches.status(), path));
    std::shared_ptr<arrow::Schema> this_schema = (*batches)->schema();
    if (!schema) {
      schema = this_schema;
      auto opened = arrow::io::FileOutputStream::Open(partial);
      if (!opened.ok()) return Fail(FromArrow(opened.status(), partial));
      sink = *opened;
      auto props = parquet::WriterProperties::Builder()
                       .compression(arrow::Compression::ZSTD)
                       ->max_row_group_length(1 << 20)
                       ->build();
      auto made =
          parquet::arrow::FileWriter::Open(*schema, arrow::default_memory_pool(), sink, props);
      if (!made.ok()) return Fail(FromArrow(made.status(), partial));
      writer = std::move(*made);
    } else if (!SameSchema(*schema, *this_schema)) {
      (void)writer->Close();
      std::filesystem::remove(partial);
      return Fail(ErrorCode::kInvalidInput, path + " has another schema than the bin's first file");
    }
    int64_t row = 0;
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      TM_ARROW_TRY((*batches)->ReadNext(&batch), path);
      if (!batch) break;
      TM_ARROW_TRY(WriteKept(*writer, *batch, row, deleted, rows_deleted), partial);
      row += batch->num_rows();
    }
    rows_read += row;
  }
  TM_ARROW_TRY(writer->Close(), partial);
  TM_ARROW_TRY(sink->Close(), partial);
  std::error_code ec;
  const auto size = static_cast<int64_t>(std::filesystem::file_size(partial, ec));
  if (ec) return Fail(ErrorCode::kInternal, partial + ": " + ec.message());
  std::filesystem::rename(partial, output, ec);
  if (ec) return Fail(ErrorCode::kInternal, output + ": " + ec.message());
  Json metrics = Metrics(*writer->metadata(), size);
  metrics["rows_read"] = rows_read;
  metrics["rows_deleted"] = rows_deleted;
  return metrics;
}

}  // namespace tablemere::maint
