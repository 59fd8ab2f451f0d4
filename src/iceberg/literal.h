// Iceberg's primitive types and typed values of them: partition values read from
// manifests, column bounds (Iceberg's single-value binary serialization) and, for scan
// planning, the literals of a filter expression. Pure; no I/O.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "common/result.h"

namespace tablemere::avro {
struct Node;
struct Value;
}  // namespace tablemere::avro

namespace tablemere::iceberg {

enum class TypeId {
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kDecimal,
  kDate,
  kTime,
  kTimestamp,
  kTimestampTz,
  kTimestampNs,
  kTimestampTzNs,
  kString,
  kUuid,
  kFixed,
  kBinary,
};

struct PrimitiveType {
  TypeId id = TypeId::kLong;
  int precision = 0, scale = 0;  // decimal(P, S)
  int length = 0;                // fixed[L]

  // From the name the table schema JSON uses ("long", "decimal(9, 2)", "fixed[16]",
  // "timestamptz_ns", …). Errors: kInvalidInput naming it (a nested type is not one).
  static Result<PrimitiveType> Parse(std::string_view name);
  std::string Name() const;
  bool operator==(const PrimitiveType&) const = default;
};

// Whether values of `t` are held as int64 (int, long, date, time, timestamps), as double
// (float, double) or as bytes (string, uuid, fixed, binary).
bool IsIntegral(TypeId t);
bool IsFloating(TypeId t);
bool IsBytes(TypeId t);

using Int128 = __int128;

// A non-null value of a primitive type: bool for boolean; int64 for int, long, date (days),
// time (µs), timestamps (µs, or ns for the _ns types); double for float and double; the
// unscaled Int128 for decimal; bytes for string (UTF-8), uuid (16 bytes, big-endian),
// fixed and binary. Null is the absence of a Literal (std::optional).
struct Literal {
  PrimitiveType type;
  std::variant<bool, int64_t, double, Int128, std::string> value;

  static Literal Bool(bool v) { return {{TypeId::kBoolean}, v}; }
  static Literal Of(TypeId t, int64_t v) { return {{t}, v}; }
  static Literal Floating(TypeId t, double v) { return {{t}, v}; }
  static Literal Decimal(int precision, int scale, Int128 unscaled) {
    return {{TypeId::kDecimal, precision, scale}, unscaled};
  }
  static Literal Bytes(PrimitiveType t, std::string v) { return {t, std::move(v)}; }

  bool AsBool() const { return std::get<bool>(value); }
  int64_t AsInt() const { return std::get<int64_t>(value); }
  double AsDouble() const { return std::get<double>(value); }
  Int128 AsUnscaled() const { return std::get<Int128>(value); }
  const std::string& AsBytes() const { return std::get<std::string>(value); }
  bool IsNaN() const;

  // For messages and tests: 42, 1.5, "Oslo", 2024-01-31, 12.50, hex for binary.
  std::string ToString() const;
  bool operator==(const Literal& other) const;
};

// Iceberg's order of two values of one type: numbers by value (float and double as Java's
// compare: -0 before 0, NaN after +infinity), strings and bytes by unsigned bytes (for
// UTF-8, code point order), uuids as unsigned 128-bit numbers. The integer types (int,
// long, date, time, timestamps) compare with each other by value; other values of
// different types are not ordered (the caller converts first): unordered.
std::partial_ordering Compare(const Literal& a, const Literal& b);

// Iceberg's single-value binary serialization (bounds in manifests, partition summaries):
// little-endian for numbers, the unscaled two's complement big-endian for decimals, raw
// bytes otherwise. Errors: kInvalidInput for bytes of the wrong length or a string that
// is not UTF-8.
Result<Literal> FromBound(const PrimitiveType& type, std::string_view bytes);
std::string ToBound(const Literal& literal);

// The Iceberg type an Avro node of a manifest's partition record stands for (its logical
// type decides: date, time-micros, timestamp-micros, timestamp-nanos, decimal, uuid).
Result<PrimitiveType> FromAvro(const avro::Node& node);
// A value of that node (not a union: unwrap first) as a Literal of that type.
Result<Literal> FromAvro(const PrimitiveType& type, const avro::Value& value);

}  // namespace tablemere::iceberg
