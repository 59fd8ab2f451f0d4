#include "iceberg/transforms.h"

#include <chrono>
#include <cstring>

namespace tablemere::iceberg {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t FloorMod(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

bool IsTemporal(TypeId t) {
  return t == TypeId::kDate || t == TypeId::kTimestamp || t == TypeId::kTimestampTz ||
         t == TypeId::kTimestampNs || t == TypeId::kTimestampTzNs;
}

// Microseconds (nanoseconds for the _ns types) per day of a timestamp type; 0 for date.
int64_t PerDay(TypeId t) {
  if (t == TypeId::kTimestampNs || t == TypeId::kTimestampTzNs) return 86'400'000'000'000;
  if (t == TypeId::kDate) return 0;
  return 86'400'000'000;
}

std::string LittleEndianLong(int64_t v) {
  std::string out(8, '\0');
  auto u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; i++) out[i] = static_cast<char>((u >> (8 * i)) & 0xff);
  return out;
}

uint32_t Rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

}  // namespace

Transform Transform::Parse(std::string_view name) {
  Transform t;
  t.name = std::string(name);
  auto param = [&](std::string_view prefix) -> int32_t {
    if (!name.starts_with(prefix) || !name.ends_with("]")) return -1;
    std::string_view digits = name.substr(prefix.size(), name.size() - prefix.size() - 1);
    if (digits.empty() || digits.size() > 9) return -1;
    int32_t v = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return -1;
      v = v * 10 + (c - '0');
    }
    return v > 0 ? v : -1;
  };
  if (name == "identity")
    t.kind = Kind::kIdentity;
  else if (name == "year")
    t.kind = Kind::kYear;
  else if (name == "month")
    t.kind = Kind::kMonth;
  else if (name == "day")
    t.kind = Kind::kDay;
  else if (name == "hour")
    t.kind = Kind::kHour;
  else if (name == "void")
    t.kind = Kind::kVoid;
  else if (int32_t n = param("bucket["); n > 0)
    t = {Kind::kBucket, n, t.name};
  else if (int32_t w = param("truncate["); w > 0)
    t = {Kind::kTruncate, w, t.name};
  else
    t.kind = Kind::kOther;
  return t;
}

std::optional<PrimitiveType> ResultType(const Transform& t, const PrimitiveType& source) {
  const TypeId id = source.id;
  switch (t.kind) {
    case Transform::Kind::kIdentity:
      return source;
    case Transform::Kind::kBucket:
      if (IsFloating(id) || id == TypeId::kBoolean) return std::nullopt;
      return PrimitiveType{TypeId::kInt};
    case Transform::Kind::kTruncate:
      if (id == TypeId::kInt || id == TypeId::kLong || id == TypeId::kDecimal ||
          id == TypeId::kString || id == TypeId::kBinary) {
        return source;
      }
      return std::nullopt;
    case Transform::Kind::kYear:
    case Transform::Kind::kMonth:
      if (!IsTemporal(id)) return std::nullopt;
      return PrimitiveType{TypeId::kInt};
    case Transform::Kind::kDay:
      if (!IsTemporal(id)) return std::nullopt;
      return PrimitiveType{TypeId::kDate};
    case Transform::Kind::kHour:
      if (!IsTemporal(id) || id == TypeId::kDate) return std::nullopt;
      return PrimitiveType{TypeId::kInt};
    default:
      return std::nullopt;
  }
}

uint32_t Murmur3(std::string_view data) {
  constexpr uint32_t c1 = 0xcc9e2d51, c2 = 0x1b873593;
  uint32_t h = 0;
  const size_t blocks = data.size() / 4;
  for (size_t i = 0; i < blocks; i++) {
    uint32_t k = 0;
    for (int b = 0; b < 4; b++) {
      k |= static_cast<uint32_t>(static_cast<unsigned char>(data[i * 4 + b])) << (8 * b);
    }
    k *= c1;
    k = Rotl(k, 15);
    k *= c2;
    h ^= k;
    h = Rotl(h, 13);
    h = h * 5 + 0xe6546b64;
  }
  uint32_t k = 0;
  const size_t tail = blocks * 4;
  switch (data.size() & 3) {
    case 3:
      k ^= static_cast<uint32_t>(static_cast<unsigned char>(data[tail + 2])) << 16;
      [[fallthrough]];
    case 2:
      k ^= static_cast<uint32_t>(static_cast<unsigned char>(data[tail + 1])) << 8;
      [[fallthrough]];
    case 1:
      k ^= static_cast<uint32_t>(static_cast<unsigned char>(data[tail]));
      k *= c1;
      k = Rotl(k, 15);
      k *= c2;
      h ^= k;
  }
  h ^= static_cast<uint32_t>(data.size());
  h ^= h >> 16;
  h *= 0x85ebca6b;
  h ^= h >> 13;
  h *= 0xc2b2ae35;
  h ^= h >> 16;
  return h;
}

std::optional<int32_t> BucketHash(const Literal& v) {
  const TypeId id = v.type.id;
  if (id == TypeId::kTimestampNs || id == TypeId::kTimestampTzNs) {
    // Nanosecond timestamps hash as their microseconds, so a column widened from
    // microseconds keeps its buckets.
    return static_cast<int32_t>(Murmur3(LittleEndianLong(FloorDiv(v.AsInt(), 1000))));
  }
  if (IsIntegral(id)) return static_cast<int32_t>(Murmur3(LittleEndianLong(v.AsInt())));
  if (id == TypeId::kDecimal || IsBytes(id)) return static_cast<int32_t>(Murmur3(ToBound(v)));
  return std::nullopt;
}

std::optional<Literal> Apply(const Transform& t, const Literal& v) {
  const TypeId id = v.type.id;
  auto result = ResultType(t, v.type);
  if (!result) return std::nullopt;
  switch (t.kind) {
    case Transform::Kind::kIdentity:
      return v;
    case Transform::Kind::kBucket: {
      auto h = BucketHash(v);
      if (!h) return std::nullopt;
      return Literal::Of(TypeId::kInt, (*h & 0x7fffffff) % t.param);
    }
    case Transform::Kind::kTruncate: {
      if (id == TypeId::kInt || id == TypeId::kLong) {
        return Literal::Of(id, v.AsInt() - FloorMod(v.AsInt(), t.param));
      }
      if (id == TypeId::kDecimal) {
        Int128 u = v.AsUnscaled(), w = t.param;
        Int128 mod = ((u % w) + w) % w;
        return Literal::Decimal(v.type.precision, v.type.scale, u - mod);
      }
      const std::string& s = v.AsBytes();
      if (id == TypeId::kBinary)
        return Literal::Bytes(v.type, s.substr(0, static_cast<size_t>(t.param)));
      // Strings truncate to W code points.
      size_t at = 0;
      for (int32_t n = 0; n < t.param && at < s.size(); n++) {
        at++;
        while (at < s.size() && (static_cast<unsigned char>(s[at]) & 0xc0) == 0x80) at++;
      }
      return Literal::Bytes(v.type, s.substr(0, at));
    }
    default:
      break;
  }
  // Time transforms: from days (dates) or from µs/ns since the epoch.
  const int64_t per_day = PerDay(id);
  if (t.kind == Transform::Kind::kHour) {
    return Literal::Of(TypeId::kInt, FloorDiv(v.AsInt(), per_day / 24));
  }
  const int64_t days = per_day == 0 ? v.AsInt() : FloorDiv(v.AsInt(), per_day);
  if (t.kind == Transform::Kind::kDay) return Literal::Of(TypeId::kDate, days);
  std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{days}}};
  const int64_t years = static_cast<int>(ymd.year()) - 1970;
  if (t.kind == Transform::Kind::kYear) return Literal::Of(TypeId::kInt, years);
  return Literal::Of(TypeId::kInt, years * 12 + static_cast<unsigned>(ymd.month()) - 1);
}

}  // namespace tablemere::iceberg
