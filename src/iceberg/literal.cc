#include "iceberg/literal.h"

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "avro/schema.h"
#include "common/crypto.h"
#include "common/strings.h"

namespace tablemere::iceberg {
namespace {

std::unexpected<Error> Bad(std::string message) {
  return Fail(ErrorCode::kInvalidInput, std::move(message));
}

struct Named {
  const char* name;
  TypeId id;
};
constexpr Named kSimple[] = {
    {"boolean", TypeId::kBoolean},
    {"int", TypeId::kInt},
    {"long", TypeId::kLong},
    {"float", TypeId::kFloat},
    {"double", TypeId::kDouble},
    {"date", TypeId::kDate},
    {"time", TypeId::kTime},
    {"timestamp", TypeId::kTimestamp},
    {"timestamptz", TypeId::kTimestampTz},
    {"timestamp_ns", TypeId::kTimestampNs},
    {"timestamptz_ns", TypeId::kTimestampTzNs},
    {"string", TypeId::kString},
    {"uuid", TypeId::kUuid},
    {"binary", TypeId::kBinary},
};

std::string Trimmed(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

// A decimal digit string of at most 9 digits as an int, or -1.
int SmallNumber(const std::string& s) {
  if (s.empty() || s.size() > 9) return -1;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

template <typename T>
T LittleEndian(std::string_view bytes) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  U u = 0;
  for (size_t i = 0; i < sizeof(T); i++) {
    u |= static_cast<U>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  }
  return std::bit_cast<T>(u);
}

template <typename T>
std::string ToLittleEndian(T v) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  U u = std::bit_cast<U>(v);
  std::string out(sizeof(T), '\0');
  for (size_t i = 0; i < sizeof(T); i++) out[i] = static_cast<char>((u >> (8 * i)) & 0xff);
  return out;
}

// Two's complement big-endian bytes (1 to 16) as a signed 128-bit number.
Result<Int128> Unscaled(std::string_view bytes) {
  if (bytes.empty() || bytes.size() > 16) {
    return Bad("a decimal of " + std::to_string(bytes.size()) + " bytes");
  }
  unsigned __int128 u =
      (static_cast<unsigned char>(bytes[0]) & 0x80) ? ~static_cast<unsigned __int128>(0) : 0;
  for (char c : bytes) u = (u << 8) | static_cast<unsigned char>(c);
  return static_cast<Int128>(u);
}

// The fewest two's complement big-endian bytes that hold `v`.
std::string MinimalBigEndian(Int128 v) {
  std::string out;
  auto u = static_cast<unsigned __int128>(v);
  for (int i = 15; i >= 0; i--) out.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
  size_t skip = 0;
  while (skip + 1 < out.size()) {
    auto lead = static_cast<unsigned char>(out[skip]),
         next = static_cast<unsigned char>(out[skip + 1]);
    if ((lead == 0x00 && !(next & 0x80)) || (lead == 0xff && (next & 0x80))) {
      skip++;
    } else {
      break;
    }
  }
  return out.substr(skip);
}

std::string Int128ToString(Int128 v) {
  if (v == 0) return "0";
  bool negative = v < 0;
  auto u = negative ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string digits;
  while (u > 0) {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return (negative ? "-" : "") + digits;
}

// Java's Double.compare: -0 before 0, NaN after everything, NaN equal to NaN.
std::partial_ordering JavaOrder(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) {
    if (std::isnan(a) && std::isnan(b)) return std::partial_ordering::equivalent;
    return std::isnan(a) ? std::partial_ordering::greater : std::partial_ordering::less;
  }
  if (a == 0 && b == 0)
    return std::signbit(b) <=> std::signbit(a) == 0
               ? std::partial_ordering::equivalent
               : (std::signbit(a) ? std::partial_ordering::less : std::partial_ordering::greater);
  return a <=> b;
}

// A uuid in its text form (8-4-4-4-12 hex digits) as 16 bytes.
Result<std::string> UuidBytes(std::string_view text) {
  std::string hex;
  for (char c : text) {
    if (c != '-') hex.push_back(c);
  }
  auto raw = crypto::HexDecode(hex);
  if (hex.size() != 32 || !raw) return Bad("not a uuid: " + std::string(text));
  return *raw;
}

}  // namespace

bool IsIntegral(TypeId t) {
  switch (t) {
    case TypeId::kInt:
    case TypeId::kLong:
    case TypeId::kDate:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      return true;
    default:
      return false;
  }
}
bool IsFloating(TypeId t) { return t == TypeId::kFloat || t == TypeId::kDouble; }
bool IsBytes(TypeId t) {
  return t == TypeId::kString || t == TypeId::kUuid || t == TypeId::kFixed || t == TypeId::kBinary;
}

Result<PrimitiveType> PrimitiveType::Parse(std::string_view name) {
  std::string n = Trimmed(name);
  for (const auto& s : kSimple) {
    if (n == s.name) return PrimitiveType{s.id};
  }
  if (n.starts_with("fixed[") && n.ends_with("]")) {
    int length = SmallNumber(Trimmed(std::string_view(n).substr(6, n.size() - 7)));
    if (length > 0) return PrimitiveType{TypeId::kFixed, 0, 0, length};
  }
  if (n.starts_with("decimal(") && n.ends_with(")")) {
    std::string inner = n.substr(8, n.size() - 9);
    auto comma = inner.find(',');
    if (comma != std::string::npos) {
      int p = SmallNumber(Trimmed(std::string_view(inner).substr(0, comma)));
      int s = SmallNumber(Trimmed(std::string_view(inner).substr(comma + 1)));
      if (p >= 1 && p <= 38 && s >= 0 && s <= p) return PrimitiveType{TypeId::kDecimal, p, s};
    }
  }
  return Bad("not a primitive type: " + n);
}

std::string PrimitiveType::Name() const {
  if (id == TypeId::kDecimal) {
    return "decimal(" + std::to_string(precision) + ", " + std::to_string(scale) + ")";
  }
  if (id == TypeId::kFixed) return "fixed[" + std::to_string(length) + "]";
  for (const auto& s : kSimple) {
    if (s.id == id) return s.name;
  }
  return "?";
}

bool Literal::IsNaN() const { return IsFloating(type.id) && std::isnan(std::get<double>(value)); }

std::string Literal::ToString() const {
  switch (type.id) {
    case TypeId::kBoolean:
      return AsBool() ? "true" : "false";
    case TypeId::kFloat:
    case TypeId::kDouble: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", AsDouble());
      return buf;
    }
    case TypeId::kDecimal: {
      std::string digits = Int128ToString(AsUnscaled());
      bool negative = digits.front() == '-';
      if (negative) digits.erase(0, 1);
      if (type.scale > 0) {
        if (digits.size() <= static_cast<size_t>(type.scale)) {
          digits.insert(0, type.scale + 1 - digits.size(), '0');
        }
        digits.insert(digits.size() - type.scale, ".");
      }
      return (negative ? "-" : "") + digits;
    }
    case TypeId::kDate: {
      std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{AsInt()}}};
      char buf[32];
      std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                    static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
      return buf;
    }
    case TypeId::kString:
      return "\"" + AsBytes() + "\"";
    case TypeId::kUuid: {
      std::string hex = crypto::HexEncode(AsBytes());
      for (size_t at : {8u, 13u, 18u, 23u}) {
        if (hex.size() > at) hex.insert(at, "-");
      }
      return hex;
    }
    case TypeId::kFixed:
    case TypeId::kBinary:
      return "0x" + crypto::HexEncode(AsBytes());
    default:
      return std::to_string(AsInt());
  }
}

bool Literal::operator==(const Literal& other) const {
  return type == other.type && Compare(*this, other) == std::partial_ordering::equivalent &&
         (!IsFloating(type.id) || std::signbit(AsDouble()) == std::signbit(other.AsDouble()));
}

std::partial_ordering Compare(const Literal& a, const Literal& b) {
  // Integers compare by value across int, long and date (a partition of day(ts) is a date,
  // of year(ts) an int; a column promoted from int to long keeps int bounds).
  if (IsIntegral(a.type.id) && IsIntegral(b.type.id)) return a.AsInt() <=> b.AsInt();
  if (a.type.id != b.type.id) return std::partial_ordering::unordered;
  if (a.type.id == TypeId::kBoolean) return a.AsBool() <=> b.AsBool();
  if (IsFloating(a.type.id)) return JavaOrder(a.AsDouble(), b.AsDouble());
  if (a.type.id == TypeId::kDecimal) {
    if (a.type.scale != b.type.scale) return std::partial_ordering::unordered;
    return a.AsUnscaled() <=> b.AsUnscaled();
  }
  // Unsigned bytes: std::string compares char, which is signed here.
  const std::string &x = a.AsBytes(), &y = b.AsBytes();
  int c = std::memcmp(x.data(), y.data(), std::min(x.size(), y.size()));
  if (c != 0) return c < 0 ? std::partial_ordering::less : std::partial_ordering::greater;
  return x.size() <=> y.size();
}

Result<Literal> FromBound(const PrimitiveType& type, std::string_view bytes) {
  auto wrong = [&]() {
    return Bad("a " + type.Name() + " bound of " + std::to_string(bytes.size()) + " bytes");
  };
  switch (type.id) {
    case TypeId::kBoolean:
      if (bytes.size() != 1) return wrong();
      return Literal::Bool(bytes[0] != 0);
    case TypeId::kInt:
    case TypeId::kDate:
      if (bytes.size() != 4) return wrong();
      return Literal::Of(type.id, LittleEndian<int32_t>(bytes));
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      // A column promoted from int (or date) keeps the 4-byte bounds of its older files.
      if (bytes.size() == 4) return Literal::Of(type.id, LittleEndian<int32_t>(bytes));
      if (bytes.size() != 8) return wrong();
      return Literal::Of(type.id, LittleEndian<int64_t>(bytes));
    case TypeId::kFloat:
      if (bytes.size() != 4) return wrong();
      return Literal::Floating(type.id, LittleEndian<float>(bytes));
    case TypeId::kDouble:
      // A column promoted from float keeps 4-byte bounds.
      if (bytes.size() == 4) return Literal::Floating(type.id, LittleEndian<float>(bytes));
      if (bytes.size() != 8) return wrong();
      return Literal::Floating(type.id, LittleEndian<double>(bytes));
    case TypeId::kDecimal: {
      TM_ASSIGN(Int128 unscaled, Unscaled(bytes));
      return Literal::Decimal(type.precision, type.scale, unscaled);
    }
    case TypeId::kString:
      if (!ValidUtf8(bytes)) return Bad("a string bound that is not UTF-8");
      return Literal::Bytes(type, std::string(bytes));
    case TypeId::kUuid:
      if (bytes.size() != 16) return wrong();
      return Literal::Bytes(type, std::string(bytes));
    case TypeId::kFixed:
    case TypeId::kBinary:
      return Literal::Bytes(type, std::string(bytes));
  }
  return wrong();
}

std::string ToBound(const Literal& l) {
  switch (l.type.id) {
    case TypeId::kBoolean:
      return std::string(1, l.AsBool() ? '\1' : '\0');
    case TypeId::kInt:
    case TypeId::kDate:
      return ToLittleEndian(static_cast<int32_t>(l.AsInt()));
    case TypeId::kFloat:
      return ToLittleEndian(static_cast<float>(l.AsDouble()));
    case TypeId::kDouble:
      return ToLittleEndian(l.AsDouble());
    case TypeId::kDecimal:
      return MinimalBigEndian(l.AsUnscaled());
    default:
      if (IsIntegral(l.type.id)) return ToLittleEndian(l.AsInt());
      return l.AsBytes();
  }
}

Result<PrimitiveType> FromAvro(const avro::Node& node) {
  const std::string& logical = node.logical_type;
  switch (node.type) {
    case avro::Type::kBoolean:
      return PrimitiveType{TypeId::kBoolean};
    case avro::Type::kInt:
      return PrimitiveType{logical == "date" ? TypeId::kDate : TypeId::kInt};
    case avro::Type::kLong:
      if (logical == "time-micros") return PrimitiveType{TypeId::kTime};
      if (logical == "timestamp-micros") return PrimitiveType{TypeId::kTimestamp};
      if (logical == "timestamp-nanos") return PrimitiveType{TypeId::kTimestampNs};
      return PrimitiveType{TypeId::kLong};
    case avro::Type::kFloat:
      return PrimitiveType{TypeId::kFloat};
    case avro::Type::kDouble:
      return PrimitiveType{TypeId::kDouble};
    case avro::Type::kString:
      return PrimitiveType{logical == "uuid" ? TypeId::kUuid : TypeId::kString};
    case avro::Type::kBytes:
    case avro::Type::kFixed:
      if (logical == "decimal") {
        if (node.precision < 1 || node.precision > 38 || node.scale < 0 ||
            node.scale > node.precision) {
          return Bad("a decimal(" + std::to_string(node.precision) + ", " +
                     std::to_string(node.scale) + ") partition field");
        }
        return PrimitiveType{TypeId::kDecimal, node.precision, node.scale};
      }
      if (node.type == avro::Type::kBytes) return PrimitiveType{TypeId::kBinary};
      if (logical == "uuid" && node.size == 16) return PrimitiveType{TypeId::kUuid};
      return PrimitiveType{TypeId::kFixed, 0, 0, static_cast<int>(node.size)};
    default:
      return Bad(std::string("an Avro ") + avro::Name(node.type) + " is not a primitive value");
  }
}

Result<Literal> FromAvro(const PrimitiveType& type, const avro::Value& value) {
  if (type.id == TypeId::kBoolean) return Literal::Bool(value.b);
  if (IsIntegral(type.id)) return Literal::Of(type.id, value.i);
  if (IsFloating(type.id)) return Literal::Floating(type.id, value.d);
  if (type.id == TypeId::kDecimal) {
    TM_ASSIGN(Int128 unscaled, Unscaled(value.s));
    return Literal::Decimal(type.precision, type.scale, unscaled);
  }
  if (type.id == TypeId::kUuid && value.type == avro::Type::kString) {
    TM_ASSIGN(std::string raw, UuidBytes(value.s));
    return Literal::Bytes(type, std::move(raw));
  }
  return Literal::Bytes(type, value.s);
}

}  // namespace tablemere::iceberg
