#include "maint/parquet_files.h"

#include <arrow/io/file.h>
#include <parquet/schema.h>
#include <parquet/statistics.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>

#include "common/crypto.h"

namespace tablemere::maint {

Error FromArrow(const arrow::Status& s, const std::string& what) {
  return Error{ErrorCode::kInvalidInput, what + ": " + s.ToString(), {}};
}

namespace {

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

}  // namespace

protocol::FileMetrics Metrics(const parquet::FileMetaData& meta, int64_t file_size) {
  std::map<int, ColumnMetrics> columns;
  protocol::FileMetrics out;
  out.record_count = meta.num_rows();
  out.file_size_in_bytes = file_size;
  std::vector<int64_t>& split_offsets = out.split_offsets;
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
  for (const auto& [id, m] : columns) {
    out.column_sizes[id] = m.size;
    if (m.values > 0 || m.seen) {
      out.value_counts[id] = m.values;
      out.null_value_counts[id] = m.nulls;
    }
    if (!m.bounds || !m.seen || m.kind == BoundKind::kNone) continue;
    if (m.kind == BoundKind::kBytes &&
        (m.lower.size() > kMaxBytesBound || m.upper.size() > kMaxBytesBound)) {
      continue;
    }
    out.lower_bounds[id] = m.lower;
    out.upper_bounds[id] = m.upper;
  }
  return out;
}

std::string Canonical(std::string path) {
  for (const char* scheme : {"s3a://", "s3n://"}) {
    if (path.starts_with(scheme)) return "s3://" + path.substr(6);
  }
  return path;
}

// A Parquet file's record batches, read one at a time.
Result<std::shared_ptr<arrow::RecordBatchReader>> OpenBatches(
    const std::string& path, std::unique_ptr<parquet::arrow::FileReader>& holder) {
  auto file = arrow::io::ReadableFile::Open(path);
  if (!file.ok()) return Fail(FromArrow(file.status(), path));
  auto reader = parquet::arrow::OpenFile(*file, arrow::default_memory_pool());
  if (!reader.ok()) return Fail(FromArrow(reader.status(), path));
  holder = std::move(*reader);
  auto batches = holder->GetRecordBatchReader();
  if (!batches.ok()) return Fail(FromArrow(batches.status(), path));
  return std::shared_ptr<arrow::RecordBatchReader>(std::move(*batches));
}

Result<void> ForEachPositionDelete(const std::string& path,
                                   const std::function<void(std::string_view, int64_t)>& row) {
  std::unique_ptr<parquet::arrow::FileReader> holder;
  TM_ASSIGN(auto batches, OpenBatches(path, holder));
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    TM_ARROW_TRY(batches->ReadNext(&batch), path);
    if (!batch) break;
    auto paths = batch->GetColumnByName("file_path");
    auto pos = std::dynamic_pointer_cast<arrow::Int64Array>(batch->GetColumnByName("pos"));
    if (!paths || !pos) {
      return Fail(ErrorCode::kInvalidInput,
                  path + " is not a position delete file (no string file_path, long pos)");
    }
    auto each = [&](const auto& strings) {
      for (int64_t i = 0; i < strings.length(); i++) {
        if (strings.IsNull(i) || pos->IsNull(i)) continue;
        row(strings.GetView(i), pos->Value(i));
      }
    };
    if (auto utf8 = std::dynamic_pointer_cast<arrow::StringArray>(paths)) {
      each(*utf8);
    } else if (auto large = std::dynamic_pointer_cast<arrow::LargeStringArray>(paths)) {
      each(*large);
    } else {
      return Fail(ErrorCode::kInvalidInput, path + ": file_path is not a string column");
    }
  }
  return {};
}

Result<ParquetOutput> ParquetOutput::Open(const std::shared_ptr<arrow::Schema>& schema,
                                          const std::string& output) {
  ParquetOutput out;
  out.output_ = output;
  out.partial_ = output + ".partial";
  auto opened = arrow::io::FileOutputStream::Open(out.partial_);
  if (!opened.ok()) return Fail(FromArrow(opened.status(), out.partial_));
  out.sink_ = *opened;
  auto props = parquet::WriterProperties::Builder()
                   .compression(arrow::Compression::ZSTD)
                   ->max_row_group_length(1 << 20)
                   ->build();
  auto made =
      parquet::arrow::FileWriter::Open(*schema, arrow::default_memory_pool(), out.sink_, props);
  if (!made.ok()) return Fail(FromArrow(made.status(), out.partial_));
  out.writer_ = std::move(*made);
  return out;
}

ParquetOutput::~ParquetOutput() {
  if (finished_ || partial_.empty()) return;
  if (writer_) (void)writer_->Close();
  std::error_code ignored;
  std::filesystem::remove(partial_, ignored);
}

Result<protocol::FileMetrics> ParquetOutput::Finish() {
  TM_ARROW_TRY(writer_->Close(), partial_);
  TM_ARROW_TRY(sink_->Close(), partial_);
  std::error_code ec;
  const auto size = static_cast<int64_t>(std::filesystem::file_size(partial_, ec));
  if (ec) return Fail(ErrorCode::kInternal, partial_ + ": " + ec.message());
  std::filesystem::rename(partial_, output_, ec);
  if (ec) return Fail(ErrorCode::kInternal, output_ + ": " + ec.message());
  finished_ = true;
  return Metrics(*writer_->metadata(), size);
}

}  // namespace tablemere::maint
