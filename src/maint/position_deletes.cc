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

using Json = nlohmann::json;

// The reserved field ids of a position delete file's columns.
constexpr int kFilePathId = 2147483546, kPosId = 2147483545;

std::shared_ptr<arrow::Field> WithId(std::shared_ptr<arrow::Field> field, int id) {
  return field->WithMetadata(arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(id)}));
}

}  // namespace

Result<Json> RewritePositionDeletes(const Json& plan) {
  if (!plan.contains("inputs") || !plan["inputs"].is_array() || plan["inputs"].empty() ||
      !plan.contains("output") || !plan["output"].is_string() || !plan.contains("live") ||
      !plan["live"].is_array()) {
    return Fail(ErrorCode::kInvalidInput, "a plan needs inputs, live files and an output");
  }
  std::unordered_map<std::string, int64_t> live;  // canonical path -> data sequence number
  for (const auto& f : plan["live"]) {
    live[Canonical(f.at("path").get<std::string>())] = f.at("sequence").get<int64_t>();
  }
  // Each data file named once, as the first input to name it spelled it; rows as (file, pos).
  std::vector<std::string> spellings;
  std::unordered_map<std::string, size_t> file_index;  // canonical path -> spellings index
  std::vector<std::pair<size_t, int64_t>> rows;
  int64_t rows_read = 0;
  for (const auto& input : plan["inputs"]) {
    const std::string path = input.at("path").get<std::string>();
    const int64_t sequence = input.at("sequence").get<int64_t>();
    {
      std::unique_ptr<parquet::arrow::FileReader> holder;
      TM_ASSIGN(auto batches, OpenBatches(path, holder));
      for (const auto& field : batches->schema()->fields()) {
        if (field->name() != "file_path" && field->name() != "pos") {
          return Fail(ErrorCode::kInvalidInput, path + " has a column besides file_path and pos (" +
                                                    field->name() + "); such files are not merged");
        }
      }
    }
    TM_TRY(ForEachPositionDelete(path, [&](std::string_view file, int64_t pos) {
      rows_read++;
      std::string canonical = Canonical(std::string(file));
      auto it = live.find(canonical);
      if (it == live.end() || it->second > sequence) return;
      auto [index, added] = file_index.emplace(std::move(canonical), spellings.size());
      if (added) spellings.emplace_back(file);
      rows.emplace_back(index->second, pos);
    }));
  }
  // Sorted by file_path, then pos; a row two inputs name is kept once.
  std::vector<size_t> order(spellings.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return spellings[a] < spellings[b]; });
  std::vector<size_t> rank(spellings.size());
  for (size_t i = 0; i < order.size(); i++) rank[order[i]] = i;
  for (auto& r : rows) r.first = rank[r.first];
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  Json metrics;
  if (rows.empty()) {
    metrics = {{"record_count", 0}};
  } else {
    arrow::StringBuilder paths;
    arrow::Int64Builder positions;
    TM_ARROW_TRY(paths.Reserve(static_cast<int64_t>(rows.size())), "file_path");
    TM_ARROW_TRY(positions.Reserve(static_cast<int64_t>(rows.size())), "pos");
    for (const auto& [file, pos] : rows) {
      TM_ARROW_TRY(paths.Append(spellings[order[file]]), "file_path");
      TM_ARROW_TRY(positions.Append(pos), "pos");
    }
    std::shared_ptr<arrow::Array> path_array, pos_array;
    TM_ARROW_TRY(paths.Finish(&path_array), "file_path");
    TM_ARROW_TRY(positions.Finish(&pos_array), "pos");
    auto schema =
        arrow::schema({WithId(arrow::field("file_path", arrow::utf8(), false), kFilePathId),
                       WithId(arrow::field("pos", arrow::int64(), false), kPosId)});
    auto batch = arrow::RecordBatch::Make(schema, static_cast<int64_t>(rows.size()),
                                          {path_array, pos_array});
    TM_ASSIGN(ParquetOutput out, ParquetOutput::Open(schema, plan["output"].get<std::string>()));
    TM_ARROW_TRY(out.writer().WriteRecordBatch(*batch), out.partial());
    TM_ASSIGN(metrics, out.Finish());
    // Exact file_path bounds: readers skip a delete file for a data file outside them.
    const std::string key = std::to_string(kFilePathId);
    metrics["lower_bounds"][key] = crypto::HexEncode(spellings[order[rows.front().first]]);
    metrics["upper_bounds"][key] = crypto::HexEncode(spellings[order[rows.back().first]]);
  }
  metrics["rows_read"] = rows_read;
  metrics["rows_dropped"] = rows_read - static_cast<int64_t>(rows.size());
  metrics["referenced_data_files"] = spellings.size();
  return metrics;
}

}  // namespace tablemere::maint
