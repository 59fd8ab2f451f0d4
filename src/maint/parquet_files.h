// The Parquet pieces the worker's jobs share: Arrow errors as Results, reading a file's
// record batches, position delete rows by column name, and a written file's Iceberg
// metrics from its footer. Internal to tablemere-maint (Arrow stays out of the server).
#pragma once

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/metadata.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "maintenance/worker_protocol.h"

namespace tablemere::maint {

namespace protocol = maintenance::protocol;

Error FromArrow(const arrow::Status& s, const std::string& what);

#define TM_ARROW_TRY(expr, what)                                                       \
  do {                                                                                 \
    ::arrow::Status _st = (expr);                                                      \
    if (!_st.ok()) return ::tablemere::Fail(::tablemere::maint::FromArrow(_st, what)); \
  } while (0)

// Hadoop's spellings of S3 name the same file as s3:// (as the server compares them).
std::string Canonical(std::string path);

// A Parquet file's record batches, read one at a time; `holder` keeps the reader alive.
Result<std::shared_ptr<arrow::RecordBatchReader>> OpenBatches(
    const std::string& path, std::unique_ptr<parquet::arrow::FileReader>& holder);

// Calls `row(file_path, pos)` for each row of a position delete file, as written (not
// canonical). Columns are found by name (file_path, pos): DuckDB 1.5 writes them under
// other field ids. Rows with a null in either are skipped.
Result<void> ForEachPositionDelete(const std::string& path,
                                   const std::function<void(std::string_view, int64_t)>& row);

// The Iceberg metrics of a written file, from its footer.
protocol::FileMetrics Metrics(const parquet::FileMetaData& meta, int64_t file_size);

// A Parquet file being written (zstd, row groups of up to 1 Mi rows). It is written beside
// its final name and renamed when whole, so a killed worker leaves no file the server could
// mistake for its output; a file never finished is removed when this is destroyed.
class ParquetOutput {
 public:
  static Result<ParquetOutput> Open(const std::shared_ptr<arrow::Schema>& schema,
                                    const std::string& output);
  ParquetOutput(ParquetOutput&&) = default;
  ParquetOutput& operator=(ParquetOutput&&) = default;
  ~ParquetOutput();

  parquet::arrow::FileWriter& writer() { return *writer_; }
  const std::string& partial() const { return partial_; }
  // Closes, renames and answers the file's metrics (see Metrics).
  Result<protocol::FileMetrics> Finish();

 private:
  ParquetOutput() = default;
  std::string output_, partial_;
  std::shared_ptr<arrow::io::FileOutputStream> sink_;
  std::unique_ptr<parquet::arrow::FileWriter> writer_;
  bool finished_ = false;
};

}  // namespace tablemere::maint
