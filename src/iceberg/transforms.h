// Iceberg's partition transforms (identity, bucket[N], truncate[W], year, month, day,
// hour, void) applied to literals, as scan planning projects a row filter onto a
// partition spec. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "iceberg/literal.h"

namespace tablemere::iceberg {

struct Transform {
  enum class Kind { kIdentity, kBucket, kTruncate, kYear, kMonth, kDay, kHour, kVoid, kOther };
  Kind kind = Kind::kIdentity;
  int32_t param = 0;  // bucket's N, truncate's W
  std::string name;   // as written

  // Any name: one this planner does not know is kOther (it projects nothing, so a filter
  // on it prunes nothing, which is always correct).
  static Transform Parse(std::string_view name);
  // Whether it maps null to null and only null (so null tests project through it).
  bool PreservesNull() const { return kind != Kind::kVoid && kind != Kind::kOther; }
};

// The type of the partition values `t` makes from `source`, when it applies to it.
std::optional<PrimitiveType> ResultType(const Transform& t, const PrimitiveType& source);

// `t` applied to `v` (a literal of the source type), as the partition value's literal;
// nullopt when `t` does not apply to the type.
std::optional<Literal> Apply(const Transform& t, const Literal& v);

// Iceberg's bucket hash: 32-bit Murmur3 (x86 variant, seed 0) of the value's hash bytes
// (integers as 8-byte little-endian longs, decimals as their minimal two's complement
// unscaled bytes, strings as UTF-8, uuids big-endian).
uint32_t Murmur3(std::string_view bytes);
std::optional<int32_t> BucketHash(const Literal& v);

}  // namespace tablemere::iceberg
