// Unit tests of the client's pure parts: exit classes, key masking, URL and key
// precedence, the credentials file, and the typed confirmation.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "client/outcome.h"
#include "client/settings.h"

namespace tablemere::client {
namespace {

Failure Http(int status, const std::string& code) {
  return Failure{status, Json{{"error", {{"code", code}, {"message", "m"}}}}, ""};
}

TEST(ExitClass, FollowsStatusAndCode) {
  EXPECT_EQ(ClassOf(Http(400, "invalid_value")), ExitClass::kInvalidInput);
  EXPECT_EQ(ClassOf(Http(410, "code_expired")), ExitClass::kInvalidInput);
  EXPECT_EQ(ClassOf(Http(401, "invalid_code")), ExitClass::kInvalidInput);
  EXPECT_EQ(ClassOf(Http(401, "invalid_api_key")), ExitClass::kAuth);
  EXPECT_EQ(ClassOf(Http(403, "forbidden")), ExitClass::kAuth);
  EXPECT_EQ(ClassOf(Http(403, "quota_exceeded")), ExitClass::kLimitOrConflict);
  EXPECT_EQ(ClassOf(Http(404, "warehouse_not_found")), ExitClass::kNotFound);
  EXPECT_EQ(ClassOf(Http(409, "already_exists")), ExitClass::kLimitOrConflict);
  EXPECT_EQ(ClassOf(Http(429, "rate_limited")), ExitClass::kLimitOrConflict);
  EXPECT_EQ(ClassOf(Http(500, "internal")), ExitClass::kRetry);
  EXPECT_EQ(ClassOf(Http(503, "unavailable")), ExitClass::kRetry);
  EXPECT_EQ(ClassOf(LocalFailure("unreachable", "m")), ExitClass::kRetry);
  EXPECT_EQ(ClassOf(LocalFailure("missing_credential", "m")), ExitClass::kAuth);
  EXPECT_EQ(ClassOf(LocalFailure("ambiguous_name", "m")), ExitClass::kLimitOrConflict);
  EXPECT_EQ(ClassOf(LocalFailure("issuer_not_found", "m")), ExitClass::kNotFound);
  EXPECT_EQ(ClassOf(LocalFailure("invalid_value", "m")), ExitClass::kInvalidInput);
}

TEST(MaskKey, KeepsOnlyTheKeyId) {
  EXPECT_EQ(MaskKey("al_live_abc123_sec_ret"), "al_live_abc123_********");
  EXPECT_EQ(MaskKey("something-else"), "********");
  EXPECT_EQ(MaskKey("al_live_nosecret"), "********");
}

TEST(Confirmation, NeedsTheExactNameUnlessTheApiJudges) {
  Json w = {{"warehouse_id", "w1"}, {"name", "lake"}};
  EXPECT_FALSE(CheckConfirmation(w, "lake").has_value());
  auto refused = CheckConfirmation(w, "Lake");
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->code(), "confirmation_required");
  EXPECT_EQ(refused->envelope["error"]["confirm_with"], "lake");
  EXPECT_FALSE(CheckConfirmation(Json{{"warehouse_id", "x"}, {"unresolved", true}}, "y"));
}

class SettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("tm-client-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    ::setenv("HOME", dir_.c_str(), 1);
    ::setenv("TABLEMERE_CREDENTIALS", (dir_ / "cfg" / "credentials.json").c_str(), 1);
    for (const char* v : {"TABLEMERE_URL", "AGENTLAKE_URL", "TABLEMERE_API_KEY",
                          "AGENTLAKE_API_KEY", "AGENTLAKE_CREDENTIALS"}) {
      ::unsetenv(v);
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(SettingsTest, UrlPrecedence) {
  EXPECT_EQ(ResolveUrl(""), kDefaultUrl);
  ::setenv("AGENTLAKE_URL", "http://old/", 1);
  EXPECT_EQ(ResolveUrl(""), "http://old");
  ::setenv("TABLEMERE_URL", "http://new", 1);
  EXPECT_EQ(ResolveUrl(""), "http://new");
  EXPECT_EQ(ResolveUrl("http://flag//"), "http://flag");
}

TEST_F(SettingsTest, SavedKeysAreKeyedByUrlAndPrivate) {
  ASSERT_TRUE(SaveEntry("http://a/", Json{{"api_key", "al_live_a_1"}}));
  ASSERT_TRUE(SaveEntry("http://b", Json{{"api_key", "al_live_b_2"}}));
  EXPECT_EQ(ResolveKey("", "http://a"), "al_live_a_1");
  EXPECT_EQ(ResolveKey("", "http://b"), "al_live_b_2");
  EXPECT_EQ(ResolveKey("", "http://c"), "");
  EXPECT_EQ(ResolveKey("al_live_flag_3", "http://a"), "al_live_flag_3");
  ::setenv("TABLEMERE_API_KEY", "al_live_env_4", 1);
  EXPECT_EQ(ResolveKey("", "http://a"), "al_live_env_4");
  struct stat st {};
  ASSERT_EQ(::stat(CredentialsPath().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((dir_ / "cfg").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(SettingsTest, TheOldFileIsReadNeverWritten) {
  auto old = dir_ / ".config" / "agentlake" / "credentials.json";
  std::filesystem::create_directories(old.parent_path());
  std::ofstream(old) << R"({"http://a": {"api_key": "al_live_old_1"}})";
  EXPECT_EQ(ResolveKey("", "http://a"), "al_live_old_1");
  ASSERT_TRUE(SaveEntry("http://b", Json{{"api_key", "al_live_b_2"}}));
  std::ifstream in(old);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text.find("al_live_b_2"), std::string::npos);
}

}  // namespace
}  // namespace tablemere::client
