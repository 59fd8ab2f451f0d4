// Internal to src/iceberg: typed access to JSON members with the conventions both
// metadata models use. Client input is validated strictly (kInvalidInput naming the
// field); stored metadata is read tolerantly because it was validated when written.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace tablemere::iceberg {

using Json = nlohmann::json;

std::unexpected<Error> Invalid(std::string message);
// A metadata rule the reference enforces with IllegalArgumentException in its builders
// (a 400 whose type Iceberg Java turns back into IllegalArgumentException).
std::unexpected<Error> RuleBroken(std::string message);
std::string Str(int64_t v);
// An integer that fits int64 (JSON numbers may arrive unsigned).
bool IsInt(const Json& v);
int64_t AsInt(const Json& v);
// A member that is present and not null, or nullptr.
const Json* Member(const Json& obj, const std::string& key);
std::string FieldError(const std::string& context, const std::string& key, const char* expected);
Result<int64_t> RequireInt(const Json& obj, const std::string& key, const std::string& context);
Result<std::optional<int64_t>> OptionalInt(const Json& obj, const std::string& key,
                                           const std::string& context);
Result<std::string> RequireString(const Json& obj, const std::string& key,
                                  const std::string& context);
Result<const Json*> RequireObject(const Json& obj, const std::string& key,
                                  const std::string& context);
Result<const Json*> RequireArray(const Json& obj, const std::string& key,
                                 const std::string& context);

// The updates tables and views share, applied to metadata document `m`: set-location
// (trailing slashes dropped), set-properties and remove-properties (accepting the pre-1.0
// spellings "updated"/"removed").
Result<void> ApplySetLocation(Json& m, const Json& update);
Result<void> ApplySetProperties(Json& m, const Json& update);
Result<void> ApplyRemoveProperties(Json& m, const Json& update);
// assign-uuid into `uuid_field` ("table-uuid" / "view-uuid"). Re-assigning an existing
// UUID would make every client's uuid assertion lie, so only the same UUID (a staged
// create re-sending it) is accepted; `kind` ("table" / "view") names it in the error.
Result<void> ApplyAssignUuid(Json& m, const Json& update, const char* uuid_field, const char* kind);

// A schema as both models store it (type "struct"; the schema-id is the caller's to set).
struct PreparedSchema {
  Json schema;
  bool reassigned = false;           // fresh field ids were assigned
  std::map<int64_t, int64_t> remap;  // old → new ids for the fields that had one
};

// What happens to the field ids a client sends with a schema.
enum class FieldIds {
  kRequire,      // every field, list element and map key/value must carry one; kept
  kFillMissing,  // kept when complete, else every id numbered fresh
  kFresh,        // always numbered fresh from 1, as the reference creates a table
                 // (TableMetadata.newTableMetadata → TypeUtil.assignFreshIds)
};

// Validates a schema (kInvalidInput naming the problem) and applies `ids`. With fresh
// ids, `remap` records old → new for the ids the client sent, so that identifier
// fields (remapped here) and partition and sort source ids (the caller's) follow.
// Implemented with the table model, which owns the schema walk.
Result<PreparedSchema> PrepareSchema(const Json& schema, FieldIds ids);

}  // namespace tablemere::iceberg
