#include "objectstore/object_store.h"

#include <array>

namespace tablemere::objectstore {
namespace {

constexpr char kDetailKey[] = "store_failure";
// Index = the enum's value; the names only travel inside one process's Error details.
constexpr std::array<const char*, 7> kNames = {
    "NoSuchBucket",   "NoSuchKey",   "NoSuchUpload",      "BucketExists",
    "BucketNotEmpty", "InvalidPart", "PreconditionFailed"};

// Holds a writer to the size its caller declared.
class SizedWriter final : public ObjectWriter {
 public:
  SizedWriter(std::unique_ptr<ObjectWriter> inner, uint64_t size)
      : inner_(std::move(inner)), size_(size) {}
  Result<void> Write(const char* data, size_t size) override {
    if (size > size_ - inner_->bytes_written()) {
      inner_->Abort();
      return Fail(SizeMismatch());
    }
    return inner_->Write(data, size);
  }
  Result<ObjectInfo> Commit(ObjectInfo info) override {
    if (inner_->bytes_written() != size_) {
      inner_->Abort();
      return Fail(SizeMismatch());
    }
    return inner_->Commit(std::move(info));
  }
  void Abort() override { inner_->Abort(); }
  uint64_t bytes_written() const override { return inner_->bytes_written(); }
  bool ReportsReplaced() const override { return inner_->ReportsReplaced(); }

 private:
  Error SizeMismatch() const {
    return Error{ErrorCode::kInvalidInput,
                 "The body's length differs from the declared " + std::to_string(size_) + " bytes",
                 {}};
  }
  std::unique_ptr<ObjectWriter> inner_;
  uint64_t size_;
};

}  // namespace

std::unique_ptr<ObjectWriter> HoldToSize(std::unique_ptr<ObjectWriter> writer,
                                         std::optional<uint64_t> size) {
  if (!size) return writer;
  return std::make_unique<SizedWriter>(std::move(writer), *size);
}

Error StoreError(StoreFailure reason, ErrorCode code, std::string message) {
  return Error{code, std::move(message), {}}.With(kDetailKey, kNames[static_cast<size_t>(reason)]);
}

std::optional<StoreFailure> FailureOf(const Error& error) {
  std::string name = error.Detail(kDetailKey);
  for (size_t i = 0; i < kNames.size(); i++) {
    if (name == kNames[i]) return static_cast<StoreFailure>(i);
  }
  return std::nullopt;
}

std::string EncodePublicAccessBlock(const std::optional<PublicAccessBlock>& block) {
  if (!block) return "";
  std::string out;
  for (bool on : {block->block_public_acls, block->ignore_public_acls, block->block_public_policy,
                  block->restrict_public_buckets}) {
    out += on ? '1' : '0';
  }
  return out;
}

std::optional<PublicAccessBlock> DecodePublicAccessBlock(const std::string& text) {
  if (text.size() != 4) return std::nullopt;
  return PublicAccessBlock{text[0] == '1', text[1] == '1', text[2] == '1', text[3] == '1'};
}

}  // namespace tablemere::objectstore
