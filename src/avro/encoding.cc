#include "avro/encoding.h"

#include <cstring>

#include "common/strings.h"

namespace tablemere::avro {
namespace {

Error Corrupt(const std::string& what) {
  return Error{ErrorCode::kInvalidInput, "Avro data: " + what, {}};
}

Error Mismatch(const Node& node, const Value& value) {
  return Error{ErrorCode::kInvalidInput,
               std::string("Avro value of type ") + Name(value.type) + " for a " + Name(node.type) +
                   (node.name.empty() ? "" : " " + node.name),
               {}};
}

}  // namespace

size_t MinWidth(const Node& node) {
  switch (node.type) {
    case Type::kNull:
      return 0;
    case Type::kFloat:
      return 4;
    case Type::kDouble:
      return 8;
    case Type::kFixed:
      return node.size;
    case Type::kRecord: {
      size_t sum = 0;
      for (const auto& f : node.fields) sum += MinWidth(*f.type);
      return sum;
    }
    default:  // a varint, a length, a branch index or a block count: at least a byte
      return 1;
  }
}

bool CountFits(const Node& node, int64_t count, size_t remaining) {
  if (count < 0) return false;
  const size_t width = MinWidth(node);
  if (width == 0) return count <= kMaxZeroWidthCount;
  return static_cast<uint64_t>(count) <= remaining / width;
}

void EncodeLong(int64_t v, std::string& out) {
  uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  while (z >= 0x80) {
    out += static_cast<char>((z & 0x7f) | 0x80);
    z >>= 7;
  }
  out += static_cast<char>(z);
}

Result<int64_t> Decoder::Long() {
  uint64_t z = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos_ >= data_.size()) return Fail(Corrupt("truncated varint"));
    auto byte = static_cast<unsigned char>(data_[pos_++]);
    z |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      return static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1));
    }
  }
  return Fail(Corrupt("varint longer than 10 bytes"));
}

Result<std::string_view> Decoder::Bytes(size_t n) {
  if (n > remaining()) return Fail(Corrupt("a length beyond the end of the data"));
  std::string_view out = data_.substr(pos_, n);
  pos_ += n;
  return out;
}

Result<Value> Decoder::Read(const Node& node, int depth) {
  if (depth > 128) return Fail(Corrupt("nested too deeply"));
  int64_t& budget = budget_ ? *budget_ : own_budget_;
  if (--budget < 0) return Fail(Corrupt("more values than a manifest holds"));
  Value v;
  v.type = node.type;
  switch (node.type) {
    case Type::kNull:
      return v;
    case Type::kBoolean: {
      TM_ASSIGN(auto b, Bytes(1));
      v.b = b[0] != 0;
      return v;
    }
    case Type::kInt:
    case Type::kLong: {
      TM_ASSIGN(v.i, Long());
      if (node.type == Type::kInt && (v.i < INT32_MIN || v.i > INT32_MAX)) {
        return Fail(Corrupt("an int out of range"));
      }
      return v;
    }
    case Type::kFloat: {
      TM_ASSIGN(auto b, Bytes(4));
      float f;
      std::memcpy(&f, b.data(), 4);  // little-endian on every platform we build for
      v.d = f;
      return v;
    }
    case Type::kDouble: {
      TM_ASSIGN(auto b, Bytes(8));
      std::memcpy(&v.d, b.data(), 8);
      return v;
    }
    case Type::kBytes:
    case Type::kString: {
      TM_ASSIGN(int64_t n, Long());
      if (n < 0) return Fail(Corrupt("a negative length"));
      TM_ASSIGN(auto b, Bytes(static_cast<size_t>(n)));
      // Avro strings are UTF-8; manifests are written by clients, and a string that is not
      // would fail wherever it is rendered (as JSON), far from here.
      if (node.type == Type::kString && !ValidUtf8(b)) {
        return Fail(Corrupt("a string that is not UTF-8"));
      }
      v.s = std::string(b);
      return v;
    }
    case Type::kFixed: {
      TM_ASSIGN(auto b, Bytes(node.size));
      v.s = std::string(b);
      return v;
    }
    case Type::kEnum: {
      TM_ASSIGN(int64_t i, Long());
      if (i < 0 || static_cast<size_t>(i) >= node.symbols.size()) {
        return Fail(Corrupt("an enum index out of range"));
      }
      v.index = static_cast<size_t>(i);
      return v;
    }
    case Type::kUnion: {
      TM_ASSIGN(int64_t i, Long());
      if (i < 0 || static_cast<size_t>(i) >= node.branches.size()) {
        return Fail(Corrupt("a union branch out of range"));
      }
      v.index = static_cast<size_t>(i);
      TM_ASSIGN(Value inner, Read(*node.branches[v.index], depth + 1));
      v.items.push_back(std::move(inner));
      return v;
    }
    case Type::kRecord:
      for (const auto& f : node.fields) {
        TM_ASSIGN(Value inner, Read(*f.type, depth + 1));
        v.items.push_back(std::move(inner));
      }
      return v;
    case Type::kArray:
    case Type::kMap:
      while (true) {
        TM_ASSIGN(int64_t count, Long());
        if (count == 0) break;
        if (count < 0) {
          if (count == INT64_MIN) return Fail(Corrupt("a block count out of range"));
          count = -count;
          TM_TRY(Long());  // the block's size in bytes, for skipping
        }
        // Bound the count by the input (a map entry also has its key's length).
        if (!CountFits(*node.items, count, remaining()) ||
            (node.type == Type::kMap && static_cast<uint64_t>(count) > remaining())) {
          return Fail(Corrupt("a block count beyond the end of the data"));
        }
        for (int64_t k = 0; k < count; k++) {
          if (node.type == Type::kMap) {
            TM_ASSIGN(int64_t n, Long());
            if (n < 0) return Fail(Corrupt("a negative length"));
            TM_ASSIGN(auto key, Bytes(static_cast<size_t>(n)));
            if (!ValidUtf8(key)) return Fail(Corrupt("a map key that is not UTF-8"));
            TM_ASSIGN(Value inner, Read(*node.items, depth + 1));
            v.entries.emplace_back(std::string(key), std::move(inner));
          } else {
            TM_ASSIGN(Value inner, Read(*node.items, depth + 1));
            v.items.push_back(std::move(inner));
          }
        }
      }
      return v;
  }
  return Fail(Corrupt("an unknown type"));
}

Result<void> Encode(const Node& node, const Value& value, std::string& out) {
  if (node.type == Type::kUnion) {
    if (value.type != Type::kUnion || value.index >= node.branches.size() ||
        value.items.size() != 1) {
      // A bare value: the first branch of its type takes it (null for null, …).
      for (size_t b = 0; b < node.branches.size(); b++) {
        if (node.branches[b]->type == value.type) {
          EncodeLong(static_cast<int64_t>(b), out);
          return Encode(*node.branches[b], value, out);
        }
      }
      return Fail(Mismatch(node, value));
    }
    EncodeLong(static_cast<int64_t>(value.index), out);
    return Encode(*node.branches[value.index], value.items[0], out);
  }
  if (value.type != node.type) return Fail(Mismatch(node, value));
  switch (node.type) {
    case Type::kNull:
      return {};
    case Type::kBoolean:
      out += static_cast<char>(value.b ? 1 : 0);
      return {};
    case Type::kInt:
      if (value.i < INT32_MIN || value.i > INT32_MAX) return Fail(Mismatch(node, value));
      EncodeLong(value.i, out);
      return {};
    case Type::kLong:
      EncodeLong(value.i, out);
      return {};
    case Type::kFloat: {
      float f = static_cast<float>(value.d);
      out.append(reinterpret_cast<const char*>(&f), 4);
      return {};
    }
    case Type::kDouble:
      out.append(reinterpret_cast<const char*>(&value.d), 8);
      return {};
    case Type::kBytes:
    case Type::kString:
      EncodeLong(static_cast<int64_t>(value.s.size()), out);
      out += value.s;
      return {};
    case Type::kFixed:
      if (value.s.size() != node.size) return Fail(Mismatch(node, value));
      out += value.s;
      return {};
    case Type::kEnum:
      if (value.index >= node.symbols.size()) return Fail(Mismatch(node, value));
      EncodeLong(static_cast<int64_t>(value.index), out);
      return {};
    case Type::kRecord:
      if (value.items.size() != node.fields.size()) return Fail(Mismatch(node, value));
      for (size_t i = 0; i < node.fields.size(); i++) {
        TM_TRY(Encode(*node.fields[i].type, value.items[i], out));
      }
      return {};
    case Type::kArray:
      if (!value.items.empty()) {
        EncodeLong(static_cast<int64_t>(value.items.size()), out);
        for (const auto& item : value.items) TM_TRY(Encode(*node.items, item, out));
      }
      out += '\0';
      return {};
    case Type::kMap:
      if (!value.entries.empty()) {
        EncodeLong(static_cast<int64_t>(value.entries.size()), out);
        for (const auto& [k, v] : value.entries) {
          EncodeLong(static_cast<int64_t>(k.size()), out);
          out += k;
          TM_TRY(Encode(*node.items, v, out));
        }
      }
      out += '\0';
      return {};
    case Type::kUnion:
      break;
  }
  return Fail(Mismatch(node, value));
}

}  // namespace tablemere::avro
