#include "iceberg/json_access.h"

#include <limits>

#include "common/strings.h"

namespace tablemere::iceberg {

std::unexpected<Error> Invalid(std::string message) {
  return Fail(ErrorCode::kInvalidInput, std::move(message));
}

std::unexpected<Error> RuleBroken(std::string message) {
  return std::unexpected(Error{ErrorCode::kInvalidInput, std::move(message), {}}.With(
      "iceberg_type", "IllegalArgumentException"));
}

std::string Str(int64_t v) { return std::to_string(v); }

bool IsInt(const Json& v) {
  if (v.is_number_unsigned()) {
    return v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  }
  return v.is_number_integer();
}

int64_t AsInt(const Json& v) {
  return v.is_number_unsigned() ? static_cast<int64_t>(v.get<uint64_t>()) : v.get<int64_t>();
}

const Json* Member(const Json& obj, const std::string& key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string FieldError(const std::string& context, const std::string& key, const char* expected) {
  return "Invalid " + context + ": '" + key + "' must be " + expected;
}

Result<int64_t> RequireInt(const Json& obj, const std::string& key, const std::string& context) {
  const Json* v = Member(obj, key);
  if (v == nullptr || !IsInt(*v)) return Invalid(FieldError(context, key, "an integer"));
  return AsInt(*v);
}

Result<std::optional<int64_t>> OptionalInt(const Json& obj, const std::string& key,
                                           const std::string& context) {
  const Json* v = Member(obj, key);
  if (v == nullptr) return std::optional<int64_t>();
  if (!IsInt(*v)) return Invalid(FieldError(context, key, "an integer"));
  return std::optional<int64_t>(AsInt(*v));
}

Result<std::string> RequireString(const Json& obj, const std::string& key,
                                  const std::string& context) {
  const Json* v = Member(obj, key);
  if (v == nullptr || !v->is_string()) return Invalid(FieldError(context, key, "a string"));
  return v->get<std::string>();
}

Result<const Json*> RequireObject(const Json& obj, const std::string& key,
                                  const std::string& context) {
  const Json* v = Member(obj, key);
  if (v == nullptr || !v->is_object()) return Invalid(FieldError(context, key, "an object"));
  return v;
}

Result<const Json*> RequireArray(const Json& obj, const std::string& key,
                                 const std::string& context) {
  const Json* v = Member(obj, key);
  if (v == nullptr || !v->is_array()) return Invalid(FieldError(context, key, "an array"));
  return v;
}

namespace {
Json& PropertiesOf(Json& m) {
  if (!m.contains("properties") || !m["properties"].is_object()) m["properties"] = Json::object();
  return m["properties"];
}
}  // namespace

Result<void> ApplySetLocation(Json& m, const Json& u) {
  TM_ASSIGN(std::string location, RequireString(u, "location", "set-location"));
  while (location.ends_with("/")) location.pop_back();
  if (location.empty()) return Invalid("Invalid set-location: 'location' must not be empty");
  m["location"] = location;
  return {};
}

Result<void> ApplyAssignUuid(Json& m, const Json& u, const char* uuid_field, const char* kind) {
  TM_ASSIGN(std::string uuid, RequireString(u, "uuid", "assign-uuid"));
  if (uuid.empty()) return Invalid("Cannot set uuid to an empty string");
  const Json* current = Member(m, uuid_field);
  if (current != nullptr && current->is_string()) {
    if (!EqualsIgnoreCase(current->get<std::string>(), uuid)) {
      return Invalid(std::string("Cannot reassign ") + kind +
                     " UUID: " + current->get<std::string>() + " != " + uuid);
    }
    return {};
  }
  m[uuid_field] = uuid;
  return {};
}

Result<void> ApplySetProperties(Json& m, const Json& u) {
  // "updated" is the pre-1.0 spelling; "updates" wins when both are present.
  const char* key =
      Member(u, "updates") == nullptr && Member(u, "updated") != nullptr ? "updated" : "updates";
  TM_ASSIGN(const Json* updates, RequireObject(u, key, "set-properties"));
  for (const auto& [k, v] : updates->items()) {
    if (!v.is_string()) {
      return Invalid("Invalid set-properties: value of '" + k + "' must be a string");
    }
  }
  Json& props = PropertiesOf(m);
  for (const auto& [k, v] : updates->items()) props[k] = v;
  return {};
}

Result<void> ApplyRemoveProperties(Json& m, const Json& u) {
  const char* key =
      Member(u, "removals") == nullptr && Member(u, "removed") != nullptr ? "removed" : "removals";
  TM_ASSIGN(const Json* removals, RequireArray(u, key, "remove-properties"));
  for (const Json& k : *removals) {
    if (!k.is_string()) return Invalid(FieldError("remove-properties", key, "an array of strings"));
  }
  Json& props = PropertiesOf(m);
  for (const Json& k : *removals) props.erase(k.get<std::string>());
  return {};
}

}  // namespace tablemere::iceberg
