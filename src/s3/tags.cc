#include "s3/tags.h"

#include "common/strings.h"
#include "s3/errors.h"

namespace tablemere::s3 {
namespace {

Error InvalidTag(const std::string& message) {
  return S3Error(ErrorCode::kInvalidInput, "InvalidTag", message);
}

// S3 counts characters, not bytes: UTF-8 continuation bytes are not counted.
size_t Utf8Length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

Result<std::map<std::string, std::string>> ValidateTags(const TagList& tags, TagTarget target) {
  const size_t limit = target == TagTarget::kObject ? kMaxObjectTags : kMaxBucketTags;
  if (tags.size() > limit) {
    return Fail(InvalidTag(std::string(target == TagTarget::kObject ? "Object" : "Bucket") +
                           " tags cannot be greater than " + std::to_string(limit)));
  }
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : tags) {
    if (key.empty()) return Fail(InvalidTag("The TagKey you have provided is invalid"));
    if (Utf8Length(key) > kMaxTagKeyLength) {
      return Fail(InvalidTag("The TagKey you have provided is too long, max " +
                             std::to_string(kMaxTagKeyLength)));
    }
    if (Utf8Length(value) > kMaxTagValueLength) {
      return Fail(InvalidTag("The TagValue you have provided is too long, max " +
                             std::to_string(kMaxTagValueLength)));
    }
    if (ToLower(key).starts_with("aws:")) {
      return Fail(InvalidTag("Your TagKey cannot be prefixed with aws:"));
    }
    if (!out.emplace(key, value).second) {
      return Fail(InvalidTag("Cannot provide multiple Tags with the same key"));
    }
  }
  return out;
}

Result<TagList> ParseTaggingHeader(const std::string& header) {
  auto pairs = ParseQuery(header);
  if (!pairs)
    return Fail(
        InvalidArgument("The header 'x-amz-tagging' shall be encoded as UTF-8 "
                        "then URLEncoded URL query parameters without tag name "
                        "duplicates."));
  TagList out;
  for (auto& [k, v] : *pairs) out.emplace_back(std::move(k), std::move(v));
  return out;
}

}  // namespace tablemere::s3
