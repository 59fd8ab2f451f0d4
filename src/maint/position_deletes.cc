#include "maint/position_deletes.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/crypto.h"
#include "maint/parquet_files.h"

namespace tablemere::maint {
namespace {

// The reserved field ids of a position delete file's columns.
constexpr int kFilePathId = 2147483546, kPosId = 2147483545;

std::shared_ptr<arrow::Field> WithId(std::shared_ptr<arrow::Field> field, int id) {
  return field->WithMetadata(arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(id)}));
}

// Position delete rows being collected for one output file: each data file named once, as
// the first row to name it spelled it (s3a:// and s3://, the same file, stay one).
class PositionRows {
 public:
  void Add(std::string_view file, int64_t pos) {
    auto [index, added] = file_index_.emplace(Canonical(std::string(file)), spellings_.size());
    if (added) spellings_.emplace_back(file);
    rows_.emplace_back(index->second, pos);
  }

  // Writes them to `output`, sorted by file_path then pos and each once, as the spec asks
  // (no file when there is none: record_count 0), and answers the file's metrics with
  // exact file_path bounds (readers skip a delete file for a data file outside them, so
  // they are never truncated), and the data files it names.
  Result<protocol::DeletesWritten> Write(const std::string& output) {
    std::vector<size_t> order(spellings_.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return spellings_[a] < spellings_[b]; });
    std::vector<size_t> rank(spellings_.size());
    for (size_t i = 0; i < order.size(); i++) rank[order[i]] = i;
    for (auto& r : rows_) r.first = rank[r.first];
    std::sort(rows_.begin(), rows_.end());
    rows_.erase(std::unique(rows_.begin(), rows_.end()), rows_.end());
    protocol::DeletesWritten written;
    if (!rows_.empty()) {
      arrow::StringBuilder paths;
      arrow::Int64Builder positions;
      TM_ARROW_TRY(paths.Reserve(static_cast<int64_t>(rows_.size())), "file_path");
      TM_ARROW_TRY(positions.Reserve(static_cast<int64_t>(rows_.size())), "pos");
      for (const auto& [file, pos] : rows_) {
        TM_ARROW_TRY(paths.Append(spellings_[order[file]]), "file_path");
        TM_ARROW_TRY(positions.Append(pos), "pos");
      }
      std::shared_ptr<arrow::Array> path_array, pos_array;
      TM_ARROW_TRY(paths.Finish(&path_array), "file_path");
      TM_ARROW_TRY(positions.Finish(&pos_array), "pos");
      auto schema =
          arrow::schema({WithId(arrow::field("file_path", arrow::utf8(), false), kFilePathId),
                         WithId(arrow::field("pos", arrow::int64(), false), kPosId)});
      auto batch = arrow::RecordBatch::Make(schema, static_cast<int64_t>(rows_.size()),
                                            {path_array, pos_array});
      TM_ASSIGN(ParquetOutput out, ParquetOutput::Open(schema, output));
      TM_ARROW_TRY(out.writer().WriteRecordBatch(*batch), out.partial());
      TM_ASSIGN(written.file, out.Finish());
      written.file.lower_bounds[kFilePathId] = spellings_[order[rows_.front().first]];
      written.file.upper_bounds[kFilePathId] = spellings_[order[rows_.back().first]];
    }
    written.referenced_data_files = static_cast<int64_t>(spellings_.size());
    if (spellings_.size() == 1) written.referenced_data_file = spellings_.front();
    return written;
  }

  int64_t size() const { return static_cast<int64_t>(rows_.size()); }

 private:
  std::vector<std::string> spellings_;
  std::unordered_map<std::string, size_t> file_index_;  // canonical path -> spellings_ index
  std::vector<std::pair<size_t, int64_t>> rows_;        // (file, pos)
};

// Position delete files with columns other than file_path and pos (the optional deleted
// `row`) are not rewritten: that column would be lost.
Result<void> OnlyPathAndPos(const std::string& path) {
  std::unique_ptr<parquet::arrow::FileReader> holder;
  TM_ASSIGN(auto batches, OpenBatches(path, holder));
  for (const auto& field : batches->schema()->fields()) {
    if (field->name() != "file_path" && field->name() != "pos") {
      return Fail(ErrorCode::kInvalidInput, path + " has a column besides file_path and pos (" +
                                                field->name() + "); it is not rewritten");
    }
  }
  return {};
}

}  // namespace

Result<protocol::RewriteDeletesAnswer> RewritePositionDeletes(
    const protocol::RewriteDeletesPlan& plan) {
  if (plan.inputs.empty() || plan.output.empty()) {
    return Fail(ErrorCode::kInvalidInput, "a plan needs inputs, live files and an output");
  }
  std::unordered_map<std::string, int64_t> live;  // canonical path -> data sequence number
  for (const auto& f : plan.live) live[Canonical(f.path)] = f.sequence;
  PositionRows rows;
  int64_t rows_read = 0;
  for (const auto& input : plan.inputs) {
    const std::string& path = input.path;
    const int64_t sequence = input.sequence;
    TM_TRY(OnlyPathAndPos(path));
    TM_TRY(ForEachPositionDelete(path, [&](std::string_view file, int64_t pos) {
      rows_read++;
      auto it = live.find(Canonical(std::string(file)));
      if (it != live.end() && it->second <= sequence) rows.Add(file, pos);
    }));
  }
  protocol::RewriteDeletesAnswer answer;
  TM_ASSIGN(answer.written, rows.Write(plan.output));
  answer.rows_read = rows_read;
  answer.rows_dropped = rows_read - answer.written.file.record_count;
  return answer;
}

Result<protocol::TranslateDeletesAnswer> TranslatePositionDeletes(
    const protocol::TranslateDeletesPlan& plan) {
  const bool has_input = !plan.input.empty();
  if (plan.output.empty() || has_input == !plan.removed_files.empty()) {
    return Fail(ErrorCode::kInvalidInput,
                "a plan needs an output, and an input or removed files, not both");
  }
  using Move = protocol::RowMove;
  std::unordered_map<std::string, const Move*> moves;  // canonical path -> where its rows went
  for (const auto& [from, move] : plan.moves) moves.emplace(Canonical(from), &move);
  PositionRows rows;
  int64_t rows_read = 0, rows_moved = 0;
  std::string out_of_range;
  // Row `pos` of a moved file, re-aimed (or left out when the compaction deleted it).
  auto move_row = [&](const Move& m, std::string_view file, int64_t pos) {
    if (pos < 0 || pos >= m.rows) {
      out_of_range = std::string(file) + " has no row " + std::to_string(pos);
      return;
    }
    const auto moved = m.Moved(pos);
    if (!moved) return;  // the compaction deleted it already
    rows.Add(m.to, *moved);
    rows_moved++;
  };
  if (has_input) {
    const std::string& input = plan.input;
    TM_TRY(OnlyPathAndPos(input));
    TM_TRY(ForEachPositionDelete(input, [&](std::string_view file, int64_t pos) {
      rows_read++;
      auto it = moves.find(Canonical(std::string(file)));
      if (it == moves.end()) {
        rows.Add(file, pos);
      } else {
        move_row(*it->second, file, pos);
      }
    }));
  }
  // Files removed whole (copy-on-write): every row they still had, at its new place.
  for (const auto& path : plan.removed_files) {
    auto it = moves.find(Canonical(path));
    if (it == moves.end()) {
      return Fail(ErrorCode::kInvalidInput, path + " was not moved by the compaction");
    }
    for (int64_t pos = 0; pos < it->second->rows; pos++) move_row(*it->second, path, pos);
  }
  if (!out_of_range.empty()) return Fail(ErrorCode::kInvalidInput, out_of_range);
  protocol::TranslateDeletesAnswer answer;
  TM_ASSIGN(answer.written, rows.Write(plan.output));
  answer.rows_read = rows_read;
  answer.rows_moved = rows_moved;
  answer.rows_dropped = has_input ? rows_read - answer.written.file.record_count : 0;
  return answer;
}

}  // namespace tablemere::maint
