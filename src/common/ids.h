// Strong ids: a warehouse id cannot be passed where a principal id is expected. Built
// explicitly from text (a parsed path, a database column); read as text wherever a
// string is wanted (SQL parameters, JSON, bucket names), which keeps the wire and
// storage layers unchanged while the type checks the calls between modules.
#pragma once

#include <compare>
#include <functional>
#include <string>
#include <utility>

namespace tablemere {

template <typename Tag>
class StrongId {
 public:
  StrongId() = default;
  explicit StrongId(std::string value) : value_(std::move(value)) {}
  const std::string& str() const { return value_; }
  operator const std::string&() const { return value_; }  // NOLINT: read as text
  bool empty() const { return value_.empty(); }
  auto operator<=>(const StrongId&) const = default;
  bool operator==(const StrongId&) const = default;
  // Text from a request or a foreign record compares with an id of any kind.
  friend bool operator==(const StrongId& id, const std::string& text) { return id.value_ == text; }
  // Names built from ids ("w-" + id, "s3://…/" + id).
  friend std::string operator+(std::string prefix, const StrongId& id) {
    return std::move(prefix) + id.value_;
  }
  friend std::string operator+(const StrongId& id, const std::string& suffix) {
    return id.value_ + suffix;
  }

 private:
  std::string value_;
};

struct PrincipalIdTag {};
struct OrgIdTag {};
struct ProjectIdTag {};
struct WarehouseIdTag {};

using PrincipalId = StrongId<PrincipalIdTag>;  // "p_…" humans, "a_…" agents
using OrgId = StrongId<OrgIdTag>;              // "o_…"
using ProjectId = StrongId<ProjectIdTag>;      // "pr_…"
using WarehouseId = StrongId<WarehouseIdTag>;  // a uuid; buckets w-<id>, b-<id>

}  // namespace tablemere

template <typename Tag>
struct std::hash<tablemere::StrongId<Tag>> {
  size_t operator()(const tablemere::StrongId<Tag>& id) const {
    return std::hash<std::string>()(id.str());
  }
};
