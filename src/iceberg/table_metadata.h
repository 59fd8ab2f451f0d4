// The Iceberg table-metadata model: building initial metadata, checking commit
// requirements and applying metadata updates, per the Iceberg spec and the REST
// catalog's UpdateTableRequest semantics (reference: Java TableMetadata.Builder).
//
// Metadata is held as a JSON document because the spec defines it as JSON and every
// field we do not interpret (format-v3 additions, engine extensions) must round-trip
// unchanged. This library is pure: no I/O, time is passed in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "common/result.h"

namespace tablemere::iceberg {

using Json = nlohmann::json;

// Builds format-v1/v2/v3 metadata for a createTable request body
// ({name, location?, schema, partition-spec?, write-order?, properties?}).
// Assigns fresh field ids as the reference does when the client's ids are absent,
// keeps them otherwise. Errors: kInvalidInput with a message naming the field.
Result<Json> NewTableMetadata(const Json& create_request, const std::string& location,
                              const std::string& table_uuid, int64_t now_millis);

// Checks one requirement ({"type": "assert-…", …}) against the current metadata
// (`current` is nullptr when the table does not exist). Failure is kConflict with the
// reference message ("Requirement failed: …"); an unknown type is kInvalidInput.
Result<void> CheckRequirement(const Json* current, const Json& requirement);

// Applies the updates array in order to `base` (an empty object for a create).
// Implements every format-v2/v3 update type of the REST spec, with -1 meaning
// "the last one added" for set-current-schema, set-default-spec and
// set-default-sort-order. Maintains last-updated-ms, snapshot-log, metadata-log is
// left to the caller (it needs the previous file location). Unknown update types
// and malformed updates are kInvalidInput; a stale sequence number is kConflict.
Result<Json> ApplyUpdates(Json base, const Json& updates, int64_t now_millis);

// The snapshot of stored metadata `metadata` with id `id`, or nullptr.
const Json* FindSnapshot(const Json& metadata, int64_t id);
// A member of a stored document that is an integer, or nullopt.
std::optional<int64_t> IntMember(const Json& object, const std::string& key);
// A count of a snapshot summary (Iceberg writes them as strings of digits), or nullopt.
std::optional<int64_t> SummaryCount(const Json& summary, const std::string& key);

// Appends {timestamp-ms, metadata-file} for the previous metadata file and trims the
// log to write.metadata.previous-versions-max (default 100).
void AppendMetadataLog(Json& metadata, const std::string& previous_location,
                       int64_t previous_last_updated_ms);

}  // namespace tablemere::iceberg
