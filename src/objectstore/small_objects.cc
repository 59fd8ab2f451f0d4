#include "objectstore/small_objects.h"

#include <algorithm>
#include <cstring>

#include "common/crypto.h"

namespace tablemere::objectstore {
namespace {

Error Closed() { return Error{ErrorCode::kUnavailable, "storage I/O failed: writer closed", {}}; }

}  // namespace

Result<void> SmallObjectWriter::Write(const char* data, size_t size) {
  if (closed_) return Fail(Closed());
  if (spilled_) {
    TM_TRY(spilled_->Write(data, size));
    written_ += size;
    return {};
  }
  if (bytes_.size() + size <= limit_) {
    bytes_.append(data, size);
    written_ += size;
    return {};
  }
  // Outgrown: what is held so far goes first into the writer that takes over.
  auto opened = spill_();
  if (!opened) {
    Abort();
    return Fail(opened.error());
  }
  spilled_ = std::move(*opened);
  std::string held = std::move(bytes_);
  bytes_ = std::string();
  if (!held.empty()) TM_TRY(spilled_->Write(held.data(), held.size()));
  TM_TRY(spilled_->Write(data, size));
  written_ += size;
  return {};
}

Result<ObjectInfo> SmallObjectWriter::Commit(ObjectInfo info) {
  if (closed_) return Fail(Closed());
  closed_ = true;
  if (spilled_) return spilled_->Commit(std::move(info));
  crypto::Digest md5(crypto::DigestAlgorithm::kMd5);
  md5.Update(bytes_.data(), bytes_.size());
  info.size = bytes_.size();
  info.etag = crypto::HexEncode(md5.Finish());
  std::string bytes = std::move(bytes_);
  bytes_ = std::string();
  return publish_(std::move(bytes), std::move(info));
}

void SmallObjectWriter::Abort() {
  if (spilled_ && !closed_) spilled_->Abort();
  closed_ = true;
  bytes_ = std::string();
}

Result<size_t> MemoryReader::Read(char* buffer, size_t size) {
  size_t n = std::min(size, bytes_.size() - pos_);
  if (n) std::memcpy(buffer, bytes_.data() + pos_, n);
  pos_ += n;
  return n;
}

Result<std::string_view> MemoryReader::Next(size_t max) {
  size_t n = std::min(max, bytes_.size() - pos_);
  std::string_view view(bytes_.data() + pos_, n);
  pos_ += n;
  return view;
}

}  // namespace tablemere::objectstore
