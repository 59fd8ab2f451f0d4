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

Result<EmptiedBucket> DeleteBucketWithContents(ObjectStore& store, const std::string& bucket) {
  EmptiedBucket out;
  auto gone = [](const Error& e) { return FailureOf(e) == StoreFailure::kNoSuchBucket; };
  auto uploads = store.ListUploads(bucket, "");
  if (!uploads) return gone(uploads.error()) ? Result<EmptiedBucket>(out) : Fail(uploads.error());
  for (const auto& u : *uploads) {
    auto aborted = store.AbortUpload(bucket, u.upload_id);
    if (!aborted && !(aborted.error().code == ErrorCode::kNotFound)) return Fail(aborted.error());
  }
  while (true) {
    ListOptions opts;
    opts.max_keys = 1000;
    auto page = store.List(bucket, opts);
    if (!page) return gone(page.error()) ? Result<EmptiedBucket>(out) : Fail(page.error());
    for (const auto& o : page->objects) {
      auto deleted = store.Delete(bucket, o.key);
      if (!deleted && deleted.error().code != ErrorCode::kNotFound) return Fail(deleted.error());
      out.objects++;
      out.bytes += o.size;
    }
    if (!page->truncated) break;
  }
  auto deleted = store.DeleteBucket(bucket);
  if (!deleted && !gone(deleted.error())) return Fail(deleted.error());
  return out;
}

}  // namespace tablemere::objectstore
