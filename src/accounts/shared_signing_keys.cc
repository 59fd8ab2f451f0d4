#include "accounts/shared_signing_keys.h"

#include <nlohmann/json.hpp>

#include "common/crypto.h"

namespace tablemere::accounts {
namespace {

constexpr char kName[] = "signing-keys";
constexpr char kPurpose[] = "signing-keys-seal";

class SharedKeySetStore final : public identity::KeySetStore {
 public:
  SharedKeySetStore(metastore::SharedValueStore& values, const KeyRing& keys, Random& random)
      : values_(values), seal_key_(keys.Derive(kPurpose)), random_(random) {}

  Result<std::optional<std::pair<identity::KeySetRecord, int64_t>>> Load() override {
    TM_ASSIGN(auto found, values_.Find(kName));
    if (!found) return std::nullopt;
    auto sealed = crypto::Base64Decode(found->value);
    auto opened = sealed ? crypto::Open(seal_key_, *sealed, kName) : std::nullopt;
    if (!opened) {
      return Fail(ErrorCode::kUnavailable,
                  "the signing keys in the metastore do not open with this master key: every "
                  "server sharing the metastore needs the same --master-key-file");
    }
    auto j = nlohmann::json::parse(*opened, nullptr, false);
    if (!j.is_object()) return Fail(ErrorCode::kUnavailable, "the stored signing keys are corrupt");
    identity::KeySetRecord r{j.value("current", ""), j.value("previous", ""),
                             j.value("previous_until_ms", int64_t{0})};
    return std::pair{std::move(r), found->version};
  }

  Result<bool> Store(const identity::KeySetRecord& next, int64_t expected) override {
    std::string plain = nlohmann::json{{"current", next.current_pem},
                                       {"previous", next.previous_pem},
                                       {"previous_until_ms", next.previous_until_ms}}
                            .dump();
    std::string sealed = crypto::Seal(seal_key_, random_.Bytes(12), plain, kName);
    return values_.CompareAndSet(kName, crypto::Base64Encode(sealed), expected);
  }

  bool Shared() const override { return true; }
  std::string Where(bool current) const override {
    return std::string("the metastore's ") + (current ? "current" : "previous") + " signing key";
  }

 private:
  metastore::SharedValueStore& values_;
  const std::string seal_key_;
  Random& random_;
};

}  // namespace

std::unique_ptr<identity::KeySetStore> NewSharedKeySetStore(metastore::SharedValueStore& values,
                                                            const KeyRing& keys, Random& random) {
  return std::make_unique<SharedKeySetStore>(values, keys, random);
}

}  // namespace tablemere::accounts
