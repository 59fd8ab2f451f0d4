// A pull-based stream of bytes, the one shape shared by object-store readers and HTTP
// response bodies, so storage backends need no HTTP types.
#pragma once

#include <cstddef>

#include "common/result.h"

namespace tablemere {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `size` bytes; returns 0 at the end.
  virtual Result<size_t> Read(char* buffer, size_t size) = 0;
};

}  // namespace tablemere
