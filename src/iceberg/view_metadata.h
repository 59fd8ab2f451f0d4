// The Iceberg view-metadata model: building initial metadata from a createView
// request, checking commit requirements and applying view updates, per the Iceberg
// view spec and the REST catalog's CommitViewRequest semantics (reference: Java
// ViewMetadata.Builder).
//
// Like table metadata, view metadata is held as a JSON document so fields we do not
// interpret round-trip unchanged. This library is pure: no I/O, time is passed in.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "common/result.h"
#include "iceberg/table_metadata.h"

namespace tablemere::iceberg {

// Builds format-v1 view metadata for a createView request body
// ({name, location?, schema, view-version, properties?}). The schema becomes schema 0
// (fresh field ids are assigned when the client's are absent, as for tables), the
// view version becomes version 1 on schema 0 (timestamp-ms defaults to now) and the
// version log gets its first entry. `location` wins over the request's location.
// Errors: kInvalidInput with a message naming the field.
Result<Json> NewViewMetadata(const Json& create_request, const std::string& location,
                             const std::string& view_uuid, int64_t now_millis);

// Checks one view requirement ({"type": "assert-view-uuid", "uuid": …}) against the
// current metadata. Failure is kConflict with the reference message
// ("Requirement failed: view UUID does not match: …"); an unknown or malformed
// requirement is kInvalidInput.
Result<void> CheckViewRequirement(const Json& current, const Json& requirement);

// Applies the updates array in order to `base` (an empty object for a create).
// Implements every view update of the REST spec (assign-uuid, upgrade-format-version,
// add-schema, set-location, set-properties, remove-properties, add-view-version,
// set-current-view-version). add-view-version reuses the id of an identical version
// (ignoring id and timestamp) and accepts schema-id -1 for the schema last added in
// this batch; set-current-view-version accepts -1 for the version last added. A
// change of current version appends to version-log; versions beyond
// version.history.num-entries (default 10) expire, never the current one or one
// added in this batch. Unknown or malformed updates are kInvalidInput.
Result<Json> ApplyViewUpdates(Json base, const Json& updates, int64_t now_millis);

}  // namespace tablemere::iceberg
