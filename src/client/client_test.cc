// Unit tests of the client's pure parts: exit classes, error codes of any shape, key
// masking, URL and key precedence, the credentials file, key files, and the typed
// confirmation.
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
  // A 403 is a permission the key lacks: ask for access (2), not re-authenticate (3);
  // only a suspended principal or a revoked key is an auth problem.
  EXPECT_EQ(ClassOf(Http(403, "forbidden")), ExitClass::kLimitOrConflict);
  EXPECT_EQ(ClassOf(Http(403, "insufficient_role")), ExitClass::kLimitOrConflict);
  EXPECT_EQ(ClassOf(Http(403, "principal_suspended")), ExitClass::kAuth);
  EXPECT_EQ(ClassOf(Http(403, "terms_required")), ExitClass::kInvalidInput);
  EXPECT_EQ(ClassOf(Http(403, "quota_exceeded")), ExitClass::kLimitOrConflict);
  EXPECT_EQ(ClassOf(Http(404, "warehouse_not_found")), ExitClass::kNotFound);
  EXPECT_EQ(ClassOf(Http(409, "already_exists")), ExitClass::kLimitOrConflict);
  // Throttled: safe to retry after retry_after_seconds.
  EXPECT_EQ(ClassOf(Http(429, "rate_limited")), ExitClass::kRetry);
  EXPECT_EQ(ClassOf(Http(500, "internal")), ExitClass::kRetry);
  EXPECT_EQ(ClassOf(Http(503, "unavailable")), ExitClass::kRetry);
  EXPECT_EQ(ClassOf(LocalFailure("unreachable", "m")), ExitClass::kRetry);
  EXPECT_EQ(ClassOf(LocalFailure("missing_credential", "m")), ExitClass::kAuth);
  // The caller's to fix, not to retry or re-plan: a call this server does not have, a
  // name that matches several catalogs.
  EXPECT_EQ(ClassOf(LocalFailure("route_missing", "m")), ExitClass::kInvalidInput);
  EXPECT_EQ(ClassOf(LocalFailure("ambiguous_name", "m")), ExitClass::kInvalidInput);
  EXPECT_EQ(ClassOf(Http(409, "ambiguous_name")), ExitClass::kInvalidInput);
  EXPECT_EQ(ClassOf(Http(409, "already_exists")), ExitClass::kLimitOrConflict);
  EXPECT_EQ(ClassOf(LocalFailure("issuer_not_found", "m")), ExitClass::kNotFound);
  EXPECT_EQ(ClassOf(LocalFailure("invalid_value", "m")), ExitClass::kInvalidInput);
}

TEST(FailureCode, NeverThrowsWhateverTheEnvelope) {
  // The Iceberg REST error model: an integer code, the kind in type.
  Failure iceberg{
      404,
      Json{
          {"error",
           {{"message", "Table does not exist"}, {"type", "NoSuchTableException"}, {"code", 404}}}},
      ""};
  EXPECT_EQ(iceberg.code(), "NoSuchTableException");
  EXPECT_EQ(ClassOf(iceberg), ExitClass::kNotFound);
  EXPECT_EQ((Failure{500, Json{{"error", {{"code", 500}}}}, ""}.code()), "500");
  EXPECT_EQ((Failure{409, Json{{"error", {{"code", Json::array()}}}}, ""}.code()), "");
  EXPECT_EQ((Failure{400, Json{{"error", "oops"}}, ""}.code()), "");
  EXPECT_EQ((Failure{400, Json::array({1}), ""}.code()), "");
  EXPECT_EQ((Failure{400, Json(), ""}.code()), "");
}

TEST(SafeReads, MissingOrMistypedFieldsAreNullEmptyOrNone) {
  const Json answer = {{"name", "lake"}, {"id", 7}, {"list", {1, 2}}, {"obj", {{"a", 1}}}};
  EXPECT_EQ(FieldOf(answer, "name"), "lake");
  EXPECT_TRUE(FieldOf(answer, "missing").is_null());
  EXPECT_TRUE(FieldOf(Json("text"), "name").is_null());
  EXPECT_EQ(StringOf(answer, "name"), "lake");
  EXPECT_EQ(StringOf(answer, "id"), "");
  EXPECT_EQ(StringOf(Json::array(), "name"), "");
  EXPECT_EQ(ListOf(answer, "list").size(), 2u);
  EXPECT_TRUE(ListOf(answer, "obj").empty());
  EXPECT_TRUE(ListOf(answer, "missing").empty());
  EXPECT_TRUE(ListOf(Json(), "list").is_array());
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

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

TEST_F(SettingsTest, ACorruptCredentialsFileIsRefusedAndKeptAsItIs) {
  const std::filesystem::path path = CredentialsPath();
  std::filesystem::create_directories(path.parent_path());
  for (const char* corrupt :
       {R"({"http://a": {"api_key": "al_live_a_1"}, )", "[1, 2]", "\"just a string\""}) {
    std::ofstream(path) << corrupt;
    auto saved = SaveEntry("http://b", Json{{"api_key", "al_live_b_2"}});
    ASSERT_FALSE(saved.has_value());
    EXPECT_EQ(saved.error().Detail("code"), "credentials_file_invalid");
    EXPECT_NE(saved.error().message.find(path.string()), std::string::npos)
        << saved.error().message;
    EXPECT_NE(saved.error().Detail("remedy").find("move it aside"), std::string::npos);
    EXPECT_EQ(ReadText(path), corrupt);  // nothing changed
    EXPECT_FALSE(LoadCredentials().has_value());
    // Reading keys from it still just finds none.
    EXPECT_EQ(ResolveKey("", "http://a"), "");
  }
  // Moved aside, as the remedy says: saving works again.
  std::filesystem::rename(path, path.string() + ".broken");
  ASSERT_TRUE(SaveEntry("http://b", Json{{"api_key", "al_live_b_2"}}));
  EXPECT_EQ(ResolveKey("", "http://b"), "al_live_b_2");
}

TEST_F(SettingsTest, AnUnreadableCredentialsFileIsRefused) {
  const std::filesystem::path path = CredentialsPath();
  ASSERT_TRUE(SaveEntry("http://a", Json{{"api_key", "al_live_a_1"}}));
  ::chmod(path.c_str(), 0);
  // Root reads any file whatever its mode: then the refusal comes from elsewhere below.
  if (::geteuid() != 0) {
    auto saved = SaveEntry("http://b", Json{{"api_key", "al_live_b_2"}});
    ASSERT_FALSE(saved.has_value());
    EXPECT_EQ(saved.error().Detail("code"), "credentials_file_invalid");
    EXPECT_NE(saved.error().message.find("Permission denied"), std::string::npos);
  }
  ::chmod(path.c_str(), 0600);
  EXPECT_EQ(ResolveKey("", "http://a"), "al_live_a_1");
}

TEST_F(SettingsTest, ACredentialsPathThatCannotBeReadIsRefusedAndLeftAlone) {
  // A directory where the file should be cannot be read by anyone, root included.
  const std::filesystem::path path = CredentialsPath();
  std::filesystem::create_directories(path);
  std::ofstream(path / "inside") << "x";
  auto saved = SaveEntry("http://b", Json{{"api_key", "al_live_b_2"}});
  ASSERT_FALSE(saved.has_value());
  EXPECT_EQ(saved.error().Detail("code"), "credentials_file_invalid");
  EXPECT_NE(saved.error().message.find("Is a directory"), std::string::npos)
      << saved.error().message;
  EXPECT_TRUE(std::filesystem::is_regular_file(path / "inside"));  // nothing was changed
  EXPECT_EQ(ResolveKey("", "http://b"), "");
}

TEST_F(SettingsTest, KeyFilesArePrivateAndOnePerKey) {
  auto a = SaveKeyFile("al_live_a_secret1");
  auto b = SaveKeyFile("al_live_b_secret2");
  ASSERT_TRUE(a && b);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(*SaveKeyFile("al_live_a_secret1"), *a);  // the same key, the same file
  EXPECT_EQ(std::filesystem::path(*a).parent_path(), dir_ / "cfg" / "mcp-keys");
  EXPECT_EQ(a->find("secret1"), std::string::npos);  // the name does not reveal the key
  EXPECT_EQ(*ReadKeyFile(*a), "al_live_a_secret1");
  struct stat st {};
  ASSERT_EQ(::stat(a->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((dir_ / "cfg" / "mcp-keys").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_FALSE(ReadKeyFile((dir_ / "nothing-here").string()).has_value());
  std::ofstream(dir_ / "blank") << " \n";
  EXPECT_FALSE(ReadKeyFile((dir_ / "blank").string()).has_value());
  std::ofstream(dir_ / "padded") << "  al_live_c_3 \r\n";
  EXPECT_EQ(*ReadKeyFile((dir_ / "padded").string()), "al_live_c_3");
}

}  // namespace
}  // namespace tablemere::client
