#include "api/iceberg/scan_planning_wire.h"

#include <algorithm>
#include <cctype>

#include "api/iceberg/error_model.h"
#include "api/iceberg/rest_common.h"
#include "common/crypto.h"

namespace tablemere::api::iceberg {
namespace {

using Json = nlohmann::json;
namespace ib = tablemere::iceberg;

const char* ContentName(ib::FileContent c) {
  switch (c) {
    case ib::FileContent::kData:
      return "data";
    case ib::FileContent::kPositionDeletes:
      return "position-deletes";
    case ib::FileContent::kEqualityDeletes:
      return "equality-deletes";
  }
  return "data";
}

std::string LowerFormat(std::string f) {
  for (auto& c : f) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return f;
}

Json CountMap(const std::map<int32_t, int64_t>& m, const std::vector<ib::SchemaField>& stats) {
  Json keys = Json::array(), values = Json::array();
  for (const auto& f : stats) {
    auto it = m.find(f.id);
    if (it == m.end()) continue;
    keys.push_back(f.id);
    values.push_back(it->second);
  }
  return {{"keys", std::move(keys)}, {"values", std::move(values)}};
}

// Bounds as the column's typed JSON; a bound that does not decode as its column's type
// (a column promoted since, say) is left out.
Json ValueMap(const std::map<int32_t, std::string>& m, const std::vector<ib::SchemaField>& stats) {
  Json keys = Json::array(), values = Json::array();
  for (const auto& f : stats) {
    auto it = m.find(f.id);
    if (it == m.end()) continue;
    auto literal = ib::FromBound(f.type, it->second);
    if (!literal || literal->IsNaN()) continue;
    keys.push_back(f.id);
    values.push_back(ib::ToJson(*literal));
  }
  return {{"keys", std::move(keys)}, {"values", std::move(values)}};
}

Json ContentFileJson(const ib::DataFile& f, int32_t spec_id,
                     const std::vector<ib::SchemaField>& stats, NullPartitions nulls) {
  Json partition = Json::array();
  for (const auto& v : f.partition) partition.push_back(v ? ib::ToJson(*v) : Json());
  if (nulls == NullPartitions::kAsEmptyTuple &&
      std::any_of(f.partition.begin(), f.partition.end(), [](const auto& v) { return !v; })) {
    partition = Json::array();
  }
  Json j = {{"spec-id", spec_id},
            {"partition", std::move(partition)},
            {"content", ContentName(f.content)},
            {"file-path", f.path},
            {"file-format", LowerFormat(f.format)},
            {"file-size-in-bytes", f.file_size_in_bytes},
            {"record-count", f.record_count}};
  if (f.key_metadata) j["key-metadata"] = crypto::HexEncode(*f.key_metadata);
  if (!f.split_offsets.empty()) j["split-offsets"] = f.split_offsets;
  if (f.sort_order_id) j["sort-order-id"] = *f.sort_order_id;
  switch (f.content) {
    case ib::FileContent::kData:
      if (f.first_row_id) j["first-row-id"] = *f.first_row_id;
      if (!stats.empty()) {
        j["column-sizes"] = CountMap(f.column_sizes, stats);
        j["value-counts"] = CountMap(f.value_counts, stats);
        j["null-value-counts"] = CountMap(f.null_value_counts, stats);
        j["nan-value-counts"] = CountMap(f.nan_value_counts, stats);
        j["lower-bounds"] = ValueMap(f.lower_bounds, stats);
        j["upper-bounds"] = ValueMap(f.upper_bounds, stats);
      }
      break;
    case ib::FileContent::kPositionDeletes:
      if (f.referenced_data_file) j["referenced-data-file"] = *f.referenced_data_file;
      if (f.content_offset) j["content-offset"] = *f.content_offset;
      if (f.content_size) j["content-size-in-bytes"] = *f.content_size;
      break;
    case ib::FileContent::kEqualityDeletes:
      j["equality-ids"] = f.equality_ids;
      break;
  }
  return j;
}

}  // namespace

NullPartitions NullPartitionsFor(const std::string& user_agent) {
  return user_agent.starts_with("PyIceberg/") ? NullPartitions::kAsEmptyTuple
                                              : NullPartitions::kAsNull;
}

bool CanPoll(const std::string& user_agent) { return !user_agent.starts_with("PyIceberg/"); }

Json ScanTasksJson(const ib::ScanTasks& tasks, NullPartitions nulls) {
  Json deletes = Json::array(), file_tasks = Json::array();
  for (const auto& d : tasks.deletes)
    deletes.push_back(ContentFileJson(d.file, d.spec_id, {}, nulls));
  for (const auto& t : tasks.tasks) {
    Json task = {{"data-file", ContentFileJson(t.file, t.spec_id, tasks.stats, nulls)}};
    if (!t.deletes.empty()) task["delete-file-references"] = t.deletes;
    if (t.residual) task["residual-filter"] = ib::ToJson(t.residual);
    file_tasks.push_back(std::move(task));
  }
  Json j = {{"file-scan-tasks", std::move(file_tasks)}};
  // The spec allows delete files only beside the tasks that reference them.
  if (!deletes.empty()) j["delete-files"] = std::move(deletes);
  return j;
}

Json PlanAnswerJson(const catalog::ScanPlanAnswer& answer, NullPartitions nulls) {
  using State = metastore::ScanPlanState;
  switch (answer.state) {
    case State::kSubmitted:
      return {{"status", "submitted"}, {"plan-id", answer.plan_id}};
    case State::kCancelled:
      return {{"status", "cancelled"}};
    case State::kFailed: {
      const Error e =
          answer.failure.value_or(Error{ErrorCode::kInternal, "scan planning failed", {}});
      const ErrorType t = MapError(e, Subject::kTable);
      return {{"status", "failed"},
              {"error",
               {{"message", t.status == 500 ? "internal error" : e.message},
                {"type", t.type},
                {"code", t.status}}}};
    }
    case State::kCompleted:
      break;
  }
  Json j = ScanTasksJson(answer.tasks, nulls);
  j["status"] = "completed";
  j["plan-id"] = answer.plan_id;
  if (!answer.plan_tasks.empty()) j["plan-tasks"] = answer.plan_tasks;
  if (!answer.credentials.empty()) j["storage-credentials"] = CredentialsJson(answer.credentials);
  return j;
}

}  // namespace tablemere::api::iceberg
