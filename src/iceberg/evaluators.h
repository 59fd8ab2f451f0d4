// What scan planning asks of a bound row filter (expression.h, nots rewritten away):
// whether a data file's column metrics allow a matching row, the filter's inclusive
// projection onto a partition spec, whether a manifest's partition summaries or a file's
// partition tuple allow a match of that projection, and the residual filter a task still
// needs once its partition is known. Iceberg's rules: a predicate on a column of only
// nulls or only NaNs matches nothing but null or NaN tests; bounds of NaN prove nothing;
// where metrics are missing, rows might match. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "iceberg/expression.h"
#include "iceberg/manifest.h"
#include "iceberg/transforms.h"

namespace tablemere::iceberg {

struct PartitionSpecField {
  int32_t source_id = 0, field_id = 0;
  std::string name;
  Transform transform;
};

struct PartitionSpec {
  int32_t spec_id = 0;
  std::vector<PartitionSpecField> fields;
};

// A spec from table metadata's "partition-specs". Errors: kInvalidInput.
Result<PartitionSpec> ParsePartitionSpec(const nlohmann::json& spec);

// Whether `file`'s metrics allow a row matching `filter` (true when they cannot tell).
bool MetricsMightMatch(const ExpressionPtr& filter, const DataFile& file);

// The inclusive projection of `filter` onto `spec` for the table's `fields`: an expression
// over the partition tuple (a predicate's field id is the partition field's position),
// true wherever the partition decides nothing. A partition that fails it holds no
// matching row.
ExpressionPtr ProjectInclusive(const ExpressionPtr& filter, const PartitionSpec& spec,
                               const std::vector<SchemaField>& fields);

// Whether a manifest whose list entry summarises its partitions as `summaries` may hold
// a file matching `projected`; `types` are its partition fields' types.
bool SummariesMightMatch(const ExpressionPtr& projected, const std::vector<FieldSummary>& summaries,
                         const std::vector<PartitionField>& types);

// Whether a partition tuple satisfies `projected` (true when it cannot tell: a NaN).
bool PartitionMightMatch(const ExpressionPtr& projected,
                         const std::vector<std::optional<Literal>>& partition);

// What of `filter` a reader must still apply to the rows of a file in `partition` of
// `spec`: predicates an identity partition decides become true or false.
ExpressionPtr Residual(const ExpressionPtr& filter, const PartitionSpec& spec,
                       const std::vector<std::optional<Literal>>& partition);

}  // namespace tablemere::iceberg
