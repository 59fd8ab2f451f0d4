// A pull-based stream of bytes, the one shape shared by object-store readers and HTTP
// response bodies, so storage backends need no HTTP types.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "common/result.h"

namespace tablemere {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `size` bytes; returns 0 at the end.
  virtual Result<size_t> Read(char* buffer, size_t size) = 0;

  // The next bytes (at most `max`) as a view that stays valid until the next call;
  // empty at the end. This default reads into a buffer the source keeps; a source that
  // already holds its bytes (or fills buffers ahead on another thread) overrides it and
  // lends them, so the consumer sends them without another copy.
  virtual Result<std::string_view> Next(size_t max) {
    if (scratch_size_ < max) {
      scratch_ = std::make_unique_for_overwrite<char[]>(max);
      scratch_size_ = max;
    }
    TM_ASSIGN(size_t n, Read(scratch_.get(), max));
    return std::string_view(scratch_.get(), n);
  }

 private:
  std::unique_ptr<char[]> scratch_;
  size_t scratch_size_ = 0;
};

}  // namespace tablemere
