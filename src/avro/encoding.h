// Avro's binary encoding of one value of a schema node (zig-zag varints, length-prefixed
// strings, blocked arrays and maps), with every length and count checked against what is
// left of the input.
#pragma once

#include <string>
#include <string_view>

#include "avro/schema.h"

namespace tablemere::avro {

// The most values one file may decode to. A value of a zero-width schema (null, an
// empty record) takes no input byte, so the input's size alone cannot bound a hostile
// count; this does (a large manifest decodes to a few million values).
inline constexpr int64_t kMaxValues = 16'000'000;

// The fewest bytes a value of `node` encodes to (0 for null and records of nulls).
size_t MinWidth(const Node& node);
// The most values of zero width one block may claim: such a count is not bounded by the
// input's size, and no real file has any.
inline constexpr int64_t kMaxZeroWidthCount = 1 << 16;
// Whether `count` values of `node` can be in `remaining` bytes.
bool CountFits(const Node& node, int64_t count, size_t remaining);

// Reads values from a byte span; every read checks the bounds. `budget`, shared by the
// decoders of one file, is how many values may still be decoded.
class Decoder {
 public:
  // `data` is viewed, not copied: it must outlive the decoder (a temporary string would
  // not, hence the deleted overload).
  explicit Decoder(std::string_view data, int64_t* budget = nullptr)
      : data_(data), budget_(budget) {}
  explicit Decoder(std::string&& data, int64_t* budget = nullptr) = delete;
  Result<int64_t> Long();
  Result<std::string_view> Bytes(size_t n);
  Result<Value> Read(const Node& node, int depth = 0);
  size_t remaining() const { return data_.size() - pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
  int64_t own_budget_ = kMaxValues;
  int64_t* budget_;
};

// Appends the encoding of `value` (which must match `node`) to `out`. Errors:
// kInvalidInput naming the mismatch.
Result<void> Encode(const Node& node, const Value& value, std::string& out);
void EncodeLong(int64_t v, std::string& out);

}  // namespace tablemere::avro
