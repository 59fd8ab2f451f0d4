// The Iceberg REST scan planning answers as JSON: PlanTableScanResult,
// FetchPlanningResult and FetchScanTasksResult (file scan tasks, their delete files by
// index, content files with typed partition values and, for the stats-fields asked,
// metrics as {keys, values} maps).
#pragma once

#include <nlohmann/json.hpp>

#include "catalog/scan_plan_service.h"

namespace tablemere::api::iceberg {

// How partition tuples holding a null are written: as the spec says (null in its place),
// or, for PyIceberg 0.12, whose response model admits no null partition value and fails
// the whole plan on one, as an empty tuple (PyIceberg reads a file's partition only to
// fill identity columns a file lacks, which the files it plans always have).
enum class NullPartitions { kAsNull, kAsEmptyTuple };
NullPartitions NullPartitionsFor(const std::string& user_agent);
// Whether the client follows a "submitted" plan by polling (PyIceberg 0.12 raises on one).
bool CanPoll(const std::string& user_agent);

nlohmann::json ScanTasksJson(const tablemere::iceberg::ScanTasks& tasks, NullPartitions nulls);
nlohmann::json PlanAnswerJson(const catalog::ScanPlanAnswer& answer, NullPartitions nulls);

}  // namespace tablemere::api::iceberg
