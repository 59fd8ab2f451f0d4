#include "web/static_site.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace tablemere::web {
namespace {

namespace fs = std::filesystem;

class StaticSiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("tm-web-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_ / "assets");
    Write("index.html", "<!doctype html><p>page</p>");
    Write("terms.html", "terms");
    Write("privacy.html", "privacy");
    Write("assets/app-ABC.js", "console.log(1)");
    Write("assets/duckdb.wasm", std::string("\0asm", 4));
    Write("assets/duckdb.wasm.gz", "gzipped");
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& rel, const std::string& body) {
    std::ofstream(root_ / rel, std::ios::binary) << body;
  }
  std::unique_ptr<StaticSite> Site() {
    auto site = StaticSite::Open({root_.string(), {"http://127.0.0.1:9000"}});
    EXPECT_TRUE(site.has_value()) << site.error().message;
    return std::move(*site);
  }
  static http::Request Get(std::string path, std::string accept_encoding = "") {
    http::Request r;
    r.method = "GET";
    r.path = std::move(path);
    if (!accept_encoding.empty()) r.headers.Set("Accept-Encoding", accept_encoding);
    return r;
  }
  static std::string Body(http::Response& r) {
    std::string out;
    char buf[64];
    while (r.stream) {
      auto n = r.stream->Read(buf, sizeof buf);
      EXPECT_TRUE(n.has_value());
      if (!n || *n == 0) break;
      out.append(buf, *n);
    }
    return out;
  }
  fs::path root_;
};

TEST_F(StaticSiteTest, OwnsOnlyThePagesPaths) {
  EXPECT_TRUE(StaticSite::Owns("/app"));
  EXPECT_TRUE(StaticSite::Owns("/app/device"));
  EXPECT_TRUE(StaticSite::Owns("/terms"));
  EXPECT_TRUE(StaticSite::Owns("/privacy"));
  EXPECT_FALSE(StaticSite::Owns("/apple"));
  EXPECT_FALSE(StaticSite::Owns("/v1/usage"));
}

TEST_F(StaticSiteTest, PageRoutesServeIndexWithThePolicy) {
  auto site = Site();
  for (const char* path : {"/app/", "/app/device", "/app/welcome"}) {
    auto r = site->Handle(Get(path));
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(Body(r), "<!doctype html><p>page</p>");
    EXPECT_EQ(r.headers.GetOr("Content-Type", ""), "text/html; charset=utf-8");
    std::string csp = r.headers.GetOr("Content-Security-Policy", "");
    EXPECT_NE(csp.find("script-src 'self' 'wasm-unsafe-eval'"), std::string::npos) << csp;
    EXPECT_NE(csp.find("connect-src 'self' http://127.0.0.1:9000;"), std::string::npos) << csp;
    EXPECT_EQ(r.headers.GetOr("Cache-Control", ""), "no-cache");
  }
  auto terms = site->Handle(Get("/terms"));
  EXPECT_EQ(Body(terms), "terms");
  auto privacy = site->Handle(Get("/privacy"));
  EXPECT_EQ(Body(privacy), "privacy");
}

TEST_F(StaticSiteTest, AssetsHaveTheirTypesAndPrecompressedVariants) {
  auto site = Site();
  auto js = site->Handle(Get("/app/assets/app-ABC.js", "gzip, br"));
  EXPECT_EQ(js.headers.GetOr("Content-Type", ""), "text/javascript; charset=utf-8");
  EXPECT_FALSE(js.headers.Has("Content-Encoding"));  // no .gz beside it
  EXPECT_EQ(js.headers.GetOr("Cache-Control", ""), "public, max-age=31536000, immutable");
  auto plain = site->Handle(Get("/app/assets/duckdb.wasm"));
  EXPECT_EQ(plain.headers.GetOr("Content-Type", ""), "application/wasm");
  EXPECT_EQ(Body(plain), std::string("\0asm", 4));
  auto gz = site->Handle(Get("/app/assets/duckdb.wasm", "gzip"));
  EXPECT_EQ(gz.headers.GetOr("Content-Encoding", ""), "gzip");
  EXPECT_EQ(gz.stream_length, 7u);
  EXPECT_EQ(Body(gz), "gzipped");
  auto refused = site->Handle(Get("/app/assets/duckdb.wasm", "gzip;q=0"));
  EXPECT_FALSE(refused.headers.Has("Content-Encoding"));
}

TEST_F(StaticSiteTest, MissingFilesTraversalAndWritesAreRefused) {
  auto site = Site();
  EXPECT_EQ(site->Handle(Get("/app/assets/nope.js")).status, 404);
  EXPECT_EQ(site->Handle(Get("/app/../index.html")).status, 404);
  EXPECT_EQ(site->Handle(Get("/app/assets/duckdb.wasm.gz")).status, 404);
  auto post = Get("/app/");
  post.method = "POST";
  auto r = site->Handle(post);
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers.GetOr("Allow", ""), "GET, HEAD");
}

TEST_F(StaticSiteTest, ValidatorsAndRedirect) {
  auto site = Site();
  auto first = site->Handle(Get("/app/"));
  std::string etag = first.headers.GetOr("ETag", "");
  ASSERT_FALSE(etag.empty());
  auto again = Get("/app/");
  again.headers.Set("If-None-Match", etag);
  EXPECT_EQ(site->Handle(again).status, 304);
  auto bare = Get("/app");
  bare.query = "user_code=ABCD-EFGH";
  auto moved = site->Handle(bare);
  EXPECT_EQ(moved.status, 301);
  EXPECT_EQ(moved.headers.GetOr("Location", ""), "/app/?user_code=ABCD-EFGH");
}

TEST_F(StaticSiteTest, AFolderWithoutIndexIsRefused) {
  fs::remove(root_ / "index.html");
  auto site = StaticSite::Open({root_.string(), {}});
  ASSERT_FALSE(site.has_value());
  EXPECT_EQ(site.error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace tablemere::web
