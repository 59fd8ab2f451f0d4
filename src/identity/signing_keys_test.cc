#include "identity/signing_keys.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "common/crypto.h"

namespace tablemere::identity {
namespace {

class FakeClock final : public Clock {
 public:
  int64_t NowMillis() const override { return now; }
  std::atomic<int64_t> now{1'800'000'000'000};
};

class SigningKeysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tm-jwt-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    keys_ = SigningKeys::Open(dir_.string(), clock_).value();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Claims ClaimsFor(const std::string& sub, int64_t ttl_s = 900) {
    int64_t now = clock_.now / 1000;
    return Claims{"http://api", sub, now, now + ttl_s, {{"kind", "human"}}};
  }
  FakeClock clock_;
  std::filesystem::path dir_;
  std::unique_ptr<SigningKeys> keys_;
};

TEST_F(SigningKeysTest, IssuedTokensVerify) {
  std::string token = keys_->Issue(ClaimsFor("p_1")).value();
  auto c = keys_->Verify(token, "http://api");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->subject, "p_1");
  EXPECT_EQ(c->extra.at("kind"), "human");
}

TEST_F(SigningKeysTest, RefusalsAreTyped) {
  std::string token = keys_->Issue(ClaimsFor("p_1")).value();
  auto reason = [&](const std::string& t, const char* iss = "http://api") {
    auto r = keys_->Verify(t, iss);
    return r ? std::string("accepted") : r.error().Detail("reason");
  };
  size_t dot1 = token.find('.'), dot2 = token.rfind('.');
  // Another payload under the same signature.
  std::string forged_payload = crypto::Base64UrlEncode(
      nlohmann::json{{"iss", "http://api"}, {"sub", "p_admin"}, {"exp", 9999999999}}.dump());
  EXPECT_EQ(reason(token.substr(0, dot1 + 1) + forged_payload + token.substr(dot2)),
            "bad_signature");
  // alg none and HS256 are refused before any key is looked at.
  for (const char* alg : {"none", "HS256"}) {
    std::string header =
        crypto::Base64UrlEncode(nlohmann::json{{"alg", alg}, {"kid", keys_->CurrentKid()}}.dump());
    EXPECT_EQ(reason(header + token.substr(dot1)), "malformed") << alg;
  }
  EXPECT_EQ(reason("not-a-jwt"), "malformed");
  EXPECT_EQ(reason(token, "http://other"), "wrong_issuer");
  clock_.now += 931'000;  // 900 s lifetime + 30 s leeway, plus one
  EXPECT_EQ(reason(token), "expired");
}

TEST_F(SigningKeysTest, RotationKeepsThePreviousKeyForItsTokens) {
  std::string old_token = keys_->Issue(ClaimsFor("p_1")).value();
  std::string old_kid = keys_->CurrentKid();
  ASSERT_TRUE(keys_->Rotate(900'000).has_value());
  EXPECT_NE(keys_->CurrentKid(), old_kid);
  EXPECT_EQ(nlohmann::json::parse(keys_->JwksJson())["keys"].size(), 2u);
  EXPECT_TRUE(keys_->Verify(old_token, "http://api").has_value());
  clock_.now += 901'000;
  EXPECT_EQ(nlohmann::json::parse(keys_->JwksJson())["keys"].size(), 1u);
  EXPECT_EQ(keys_->Verify(old_token, "http://api").error().Detail("reason"), "unknown_kid");
}

TEST_F(SigningKeysTest, KeysPersistWithMode0600) {
  std::string token = keys_->Issue(ClaimsFor("p_1")).value();
  std::string kid = keys_->CurrentKid();
  keys_.reset();
  keys_ = SigningKeys::Open(dir_.string(), clock_).value();
  EXPECT_EQ(keys_->CurrentKid(), kid);
  EXPECT_TRUE(keys_->Verify(token, "http://api").has_value());
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "current.pem").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(SigningKeysTest, CorruptKeyFileIsAnError) {
  keys_.reset();
  {
    std::ofstream out(dir_ / "current.pem", std::ios::trunc);
    out << "garbage";
  }
  auto reopened = SigningKeys::Open(dir_.string(), clock_);
  ASSERT_FALSE(reopened.has_value());
  EXPECT_EQ(reopened.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(reopened.error().message.find("current.pem"), std::string::npos);
}

TEST_F(SigningKeysTest, JwksCarriesTheRsaPublicKey) {
  auto jwks = nlohmann::json::parse(keys_->JwksJson());
  ASSERT_EQ(jwks["keys"].size(), 1u);
  auto k = jwks["keys"][0];
  EXPECT_EQ(k["kty"], "RSA");
  EXPECT_EQ(k["alg"], "RS256");
  EXPECT_EQ(k["e"], "AQAB");                                                    // 65537
  EXPECT_EQ(crypto::Base64UrlDecode(k["n"].get<std::string>())->size(), 256u);  // 2048 bits
}

}  // namespace
}  // namespace tablemere::identity

namespace tablemere::identity {
namespace {

// A key set shared by several servers (the metastore's, in production): versioned
// compare-and-set in memory.
class SharedStore final : public KeySetStore {
 public:
  struct State {
    std::mutex mu;
    std::optional<KeySetRecord> record;
    int64_t version = 0;
  };
  explicit SharedStore(std::shared_ptr<State> state) : state_(std::move(state)) {}
  Result<std::optional<std::pair<KeySetRecord, int64_t>>> Load() override {
    std::lock_guard lock(state_->mu);
    if (!state_->record) return std::nullopt;
    return std::pair{*state_->record, state_->version};
  }
  Result<bool> Store(const KeySetRecord& next, int64_t expected) override {
    std::lock_guard lock(state_->mu);
    if (state_->version != expected) return false;
    state_->record = next;
    state_->version++;
    return true;
  }
  bool Shared() const override { return true; }
  std::string Where(bool) const override { return "shared"; }

 private:
  std::shared_ptr<State> state_;
};

TEST(SharedSigningKeysTest, ServersOnOneStoreAgreeAndFollowARotation) {
  FakeClock clock;
  auto state = std::make_shared<SharedStore::State>();
  std::unique_ptr<SigningKeys> a, b;
  std::thread ta(
      [&] { a = SigningKeys::Open(std::make_unique<SharedStore>(state), clock).value(); });
  std::thread tb(
      [&] { b = SigningKeys::Open(std::make_unique<SharedStore>(state), clock).value(); });
  ta.join();
  tb.join();
  EXPECT_EQ(a->CurrentKid(), b->CurrentKid());  // one created the set, the other adopted it
  int64_t now = clock.now / 1000;
  Claims claims{"http://api", "p_1", now, now + 900, {}};
  std::string before = a->Issue(claims).value();
  EXPECT_TRUE(b->Verify(before, "http://api").has_value());

  ASSERT_TRUE(a->Rotate(900'000).has_value());
  clock.now += SigningKeys::kForcedRefreshMs;
  std::string after = a->Issue(claims).value();
  // b has not reread the set, yet accepts the token of the new key and keeps the old one.
  auto verified = b->Verify(after, "http://api");
  ASSERT_TRUE(verified.has_value()) << verified.error().message;
  EXPECT_TRUE(b->Verify(before, "http://api").has_value());
  EXPECT_EQ(b->CurrentKid(), a->CurrentKid());
  EXPECT_EQ(nlohmann::json::parse(b->JwksJson())["keys"].size(), 2u);
  // A made-up key id is refused, whatever is reread.
  std::string forged =
      crypto::Base64UrlEncode(nlohmann::json{{"alg", "RS256"}, {"kid", "made-up"}}.dump()) +
      after.substr(after.find('.'));
  EXPECT_EQ(b->Verify(forged, "http://api").error().Detail("reason"), "unknown_kid");
}

}  // namespace
}  // namespace tablemere::identity
