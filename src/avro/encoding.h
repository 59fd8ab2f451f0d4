// Avro's binary encoding of one value of a schema node (zig-zag varints, length-prefixed
// strings, blocked arrays and maps), with every length and count checked against what is
// left of the input.
#pragma once

#include <string>
#include <string_view>

#include "avro/schema.h"

namespace tablemere::avro {

// Reads values from a byte span; every read checks the bounds.
class Decoder {
 public:
  explicit Decoder(std::string_view data) : data_(data) {}
  Result<int64_t> Long();
  Result<std::string_view> Bytes(size_t n);
  Result<Value> Read(const Node& node, int depth = 0);
  size_t remaining() const { return data_.size() - pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// Appends the encoding of `value` (which must match `node`) to `out`. Errors:
// kInvalidInput naming the mismatch.
Result<void> Encode(const Node& node, const Value& value, std::string& out);
void EncodeLong(int64_t v, std::string& out);

}  // namespace tablemere::avro
