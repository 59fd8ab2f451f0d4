#include "objectstore/object_store.h"

#include <array>

namespace tablemere::objectstore {
namespace {

constexpr char kDetailKey[] = "store_failure";
// Index = the enum's value; the names only travel inside one process's Error details.
constexpr std::array<const char*, 7> kNames = {
    "NoSuchBucket",   "NoSuchKey",   "NoSuchUpload",      "BucketExists",
    "BucketNotEmpty", "InvalidPart", "PreconditionFailed"};

}  // namespace

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

}  // namespace tablemere::objectstore
