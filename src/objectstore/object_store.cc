#include "objectstore/object_store.h"

#include <array>
#include <cstdlib>

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

void ApplyObjectChange(const AttributeChange& change, ObjectInfo& info) {
  if (change.tags) info.tags = *change.tags;
  if (change.acl) info.acl = *change.acl;
  if (change.retention) {
    info.lock_mode = change.retention->first;
    info.lock_until_ms = change.retention->second;
  }
  if (change.legal_hold) info.legal_hold = *change.legal_hold;
}

bool LockedAt(const ObjectInfo& info, int64_t now_ms) {
  return info.legal_hold == "ON" || (!info.lock_mode.empty() && info.lock_until_ms > now_ms);
}

std::string EncodeObjectLock(const std::optional<ObjectLockConfig>& config) {
  if (!config) return "";
  if (config->default_mode.empty()) return "Enabled";
  return "Enabled|" + config->default_mode + "|" + std::to_string(config->days) + "|" +
         std::to_string(config->years);
}

std::optional<ObjectLockConfig> DecodeObjectLock(const std::string& text) {
  if (!text.starts_with("Enabled")) return std::nullopt;
  ObjectLockConfig config;
  const size_t a = text.find('|');
  if (a == std::string::npos) return config;
  const size_t b = text.find('|', a + 1);
  const size_t c = b == std::string::npos ? std::string::npos : text.find('|', b + 1);
  if (c == std::string::npos) return config;
  config.default_mode = text.substr(a + 1, b - a - 1);
  config.days = std::atoi(text.substr(b + 1, c - b - 1).c_str());
  config.years = std::atoi(text.substr(c + 1).c_str());
  return config;
}

}  // namespace tablemere::objectstore
