#include "common/key_ring.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/crypto.h"

namespace tablemere {
namespace {

class KeyRingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("tm-keyring-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& bytes) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::filesystem::path dir_;
};

// A replica's key file, raw or hex, derives the same keys as the key it holds.
TEST_F(KeyRingTest, ASharedKeyFileReadsAsRawBytesOrHex) {
  std::string created_path = (dir_ / "created").string();
  auto created = KeyRing::LoadOrCreate(created_path).value();
  std::ifstream in(created_path, std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(raw.size(), 32u);
  std::string hex = crypto::HexEncode(raw);
  auto from_raw = KeyRing::Load(Write("raw", raw)).value();
  auto from_hex = KeyRing::Load(Write("hex", hex + "\n")).value();
  EXPECT_EQ(from_raw.Derive("x"), from_hex.Derive("x"));
  EXPECT_EQ(from_raw.Derive("x"), created.Derive("x"));
  EXPECT_NE(from_raw.Derive("x"), from_raw.Derive("y"));
}

TEST_F(KeyRingTest, AMissingOrMalformedKeyFileIsRefusedWithTheFix) {
  auto missing = KeyRing::Load((dir_ / "absent").string());
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("openssl rand -hex 32"), std::string::npos);
  EXPECT_FALSE(KeyRing::Load(Write("short", "abcd")).has_value());
  EXPECT_FALSE(KeyRing::Load(Write("nothex", std::string(64, 'z'))).has_value());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "absent"));  // never created
}

}  // namespace
}  // namespace tablemere
