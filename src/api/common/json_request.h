// Reading JSON requests the same way in every JSON adapter: the body as an object under
// a size limit, the query as a map, and typed fields that refuse the wrong JSON type
// with a field error instead of reading it as absent.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "api/wire/fields.h"
#include "common/result.h"
#include "http/message.h"

namespace tablemere::api {

// What an empty body means: the control API reads it as {} (every field absent); the
// catalog protocols require a document, so there it is invalid_json like any other.
enum class EmptyBody { kEmptyObject, kInvalid };

// The body as a JSON object. Errors: kInvalidInput (invalid_json), kInvalidInput
// (body_too_large) beyond `max_bytes`.
Result<Json> ParseJsonObject(http::Request& req, size_t max_bytes,
                             EmptyBody empty = EmptyBody::kEmptyObject);
// The query string as a map (the first of repeated names wins).
std::map<std::string, std::string> QueryMap(const http::Request& req);
}  // namespace tablemere::api
