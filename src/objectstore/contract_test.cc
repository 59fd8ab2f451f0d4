// The ObjectStore contract (objectstore/object_store.h), as one suite that runs unchanged
// against every backend, each behind the RegisteredStore the server puts in front of it
// (buckets registered in a real SQLite metastore of the test's own). A backend joins by
// adding its factory to Backends(); a test
// here that fails for one backend and passes for another is a difference between them
// that the code above the store would otherwise find in production.
//
// Backends may keep state between tests (a remote S3 lives for the whole run), so every
// test works in buckets of its own with random names and never expects a store to be
// empty, and nothing is cleaned up: the local store is a temporary directory and the
// SeaweedFS behind the S3 backend is thrown away when the run ends.

// The S3 backend joins Backends() in the build with TABLEMERE_HAVE_S3_STORE (the binary
// objectstore_s3_contract_test), against a SeaweedFS started for the run.

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/crypto.h"
#include "metastore/metastore.h"
#include "objectstore/local_disk.h"
#include "objectstore/object_store.h"
#include "objectstore/registered_store.h"

#if TABLEMERE_HAVE_S3_STORE
#include "objectstore/s3_store.h"
#include "objectstore/shared_key_locks.h"
#include "objectstore/testing/seaweed.h"
#endif

namespace tablemere::objectstore {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------
// The backends

struct Backend {
  std::string name;  // the test-name suffix: letters and digits only
  // Opens a store for one test; `temp_dir` is the test's own empty directory, removed
  // after it. Answers nullptr (after ADD_FAILURE with the reason) when it cannot.
  std::function<std::unique_ptr<ObjectStore>(const std::string& temp_dir)> open;
};

void PrintTo(const Backend& backend, std::ostream* os) { *os << backend.name; }

// Stores keep references to these, so they live for the whole run.
SystemClock& TestClock() {
  static SystemClock clock;
  return clock;
}
SystemRandom& TestRandom() {
  static SystemRandom random;
  return random;
}

#if TABLEMERE_HAVE_S3_STORE
// One SeaweedFS for the whole run: it takes seconds to start, and each test's buckets of
// its own keep the tests apart. Started by the first S3 test (on the main thread, which
// it then dies with) and killed, its directory removed, when the test binary exits.
Result<objectstore::testing::SeaweedProcess*> SharedSeaweed() {
  static Result<std::unique_ptr<objectstore::testing::SeaweedProcess>> process =
      objectstore::testing::SeaweedProcess::Start();
  if (!process) return Fail(process.error());
  return process->get();
}

// `enforce_here`: the server checks conditional writes itself, as in front of a store that
// ignores them (SeaweedFS honours them, so this variant is how that path is tested).
Backend S3Backend(bool enforce_here) {
  return {enforce_here ? "S3OnSeaweedFSConditionsHere" : "S3OnSeaweedFS",
          [enforce_here](const std::string& temp_dir) -> std::unique_ptr<ObjectStore> {
            auto weed = SharedSeaweed();
            if (!weed) {
              ADD_FAILURE() << "SeaweedFS did not start: " << weed.error().message;
              return nullptr;
            }
            S3StoreConfig config;
            config.endpoint = (*weed)->endpoint();
            config.bucket = (*weed)->bucket();
            config.root = "contract";
            config.access_key = (*weed)->access_key();
            config.secret_key = (*weed)->secret_key();
            config.spool_dir = temp_dir + "/spool";
            config.enforce_conditions_here = enforce_here;
            std::error_code ec;
            fs::create_directories(config.spool_dir, ec);
            auto store = OpenS3Store(config, TestClock(), TestRandom());
            if (!store) {
              ADD_FAILURE() << "OpenS3Store: " << store.error().message;
              return nullptr;
            }
            return std::move(*store);
          }};
}
#endif

std::vector<Backend> Backends() {
  std::vector<Backend> backends;
  backends.push_back({"LocalDisk", [](const std::string& temp_dir) -> std::unique_ptr<ObjectStore> {
                        auto store =
                            OpenLocalDiskStore(temp_dir + "/store", TestClock(), TestRandom());
                        if (!store) {
                          ADD_FAILURE() << "OpenLocalDiskStore: " << store.error().message;
                          return nullptr;
                        }
                        return std::move(*store);
                      }});
#if TABLEMERE_HAVE_S3_STORE
  backends.push_back(S3Backend(false));
  backends.push_back(S3Backend(true));
#endif
  return backends;
}

// ---------------------------------------------------------------------------------------
// Outcomes, compared as text so that a failed expectation says what happened

const char* FailureName(StoreFailure failure) {
  switch (failure) {
    case StoreFailure::kNoSuchBucket:
      return "NoSuchBucket";
    case StoreFailure::kNoSuchKey:
      return "NoSuchKey";
    case StoreFailure::kNoSuchUpload:
      return "NoSuchUpload";
    case StoreFailure::kBucketExists:
      return "BucketExists";
    case StoreFailure::kBucketNotEmpty:
      return "BucketNotEmpty";
    case StoreFailure::kInvalidPart:
      return "InvalidPart";
    case StoreFailure::kPreconditionFailed:
      return "PreconditionFailed";
  }
  return "?";
}

// The ErrorCode object_store.h pairs with each reason.
ErrorCode DocumentedCode(StoreFailure failure) {
  switch (failure) {
    case StoreFailure::kNoSuchBucket:
    case StoreFailure::kNoSuchKey:
    case StoreFailure::kNoSuchUpload:
      return ErrorCode::kNotFound;
    case StoreFailure::kBucketExists:
      return ErrorCode::kAlreadyExists;
    case StoreFailure::kBucketNotEmpty:
    case StoreFailure::kInvalidPart:
    case StoreFailure::kPreconditionFailed:
      return ErrorCode::kConflict;
  }
  return ErrorCode::kInternal;
}

// "ok"; a StoreFailure's name ("NoSuchKey"), with a note when its ErrorCode is not the
// documented one; or, for other errors, the ErrorCode's name ("invalid_input").
template <typename T>
std::string Outcome(const Result<T>& result) {
  if (result) return "ok";
  const Error& error = result.error();
  if (auto failure = FailureOf(error)) {
    std::string name = FailureName(*failure);
    if (error.code != DocumentedCode(*failure)) {
      name += std::string(" with code ") + ErrorCodeName(error.code) +
              " (documented: " + ErrorCodeName(DocumentedCode(*failure)) + ")";
    }
    return name;
  }
  return ErrorCodeName(error.code);
}

// `writers` threads put `key` with If-None-Match: * through `store_for(writer)`, each
// writing its own body ("writer-<n>") and all committing at once; each one's Outcome.
std::vector<std::string> RaceCreates(const std::function<ObjectStore&(int)>& store_for,
                                     const std::string& bucket, const std::string& key,
                                     int writers) {
  std::vector<std::string> outcomes(writers);
  std::latch ready(writers);
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; w++) {
    threads.emplace_back([&, w] {
      PutConditions absent;
      absent.if_none_match = true;
      const std::string body = "writer-" + std::to_string(w);
      auto writer = store_for(w).BeginPut(bucket, key, absent);
      if (writer) (void)(*writer)->Write(body.data(), body.size());
      ready.arrive_and_wait();  // every writer commits at once
      outcomes[w] = writer ? Outcome((*writer)->Commit(ObjectInfo{})) : Outcome(writer);
    });
  }
  for (auto& t : threads) t.join();
  return outcomes;
}

template <typename T>
std::string Describe(const Result<T>& result) {
  if (result) return "ok";
  std::string out = std::string(ErrorCodeName(result.error().code)) + ": " + result.error().message;
  for (const auto& [key, value] : result.error().detail) out += " [" + key + "=" + value + "]";
  return out;
}

#define CT_CHECK_OK(check, expr)                                                   \
  do {                                                                             \
    const auto& ct_result_ = (expr);                                               \
    check(ct_result_.has_value()) << #expr << " failed: " << Describe(ct_result_); \
  } while (0)
#define ASSERT_OK(expr) CT_CHECK_OK(ASSERT_TRUE, expr)
#define EXPECT_OK(expr) CT_CHECK_OK(EXPECT_TRUE, expr)
#define ASSERT_OK_AND_ASSIGN(lhs, expr) CT_ASSIGN_IMPL(TM_CONCAT(ct_assign_, __LINE__), lhs, expr)
#define CT_ASSIGN_IMPL(tmp, lhs, expr)                                   \
  auto tmp = (expr);                                                     \
  ASSERT_TRUE(tmp.has_value()) << #expr << " failed: " << Describe(tmp); \
  lhs = std::move(*tmp)
#define EXPECT_OUTCOME(expr, expected)                                                 \
  do {                                                                                 \
    const auto& ct_result_ = (expr);                                                   \
    EXPECT_EQ(Outcome(ct_result_), expected) << #expr << ": " << Describe(ct_result_); \
  } while (0)

// ---------------------------------------------------------------------------------------
// Bodies

std::string Md5Hex(std::string_view data) { return crypto::HexEncode(crypto::Md5(data)); }

// S3's etag for an object completed from `parts`: the MD5 of the parts' raw MD5s, "-N".
std::string MultipartEtag(const std::vector<std::string>& parts) {
  std::string digests;
  for (const auto& part : parts) digests += crypto::Md5(part);
  return Md5Hex(digests) + "-" + std::to_string(parts.size());
}

// CRC32 (IEEE, as S3's x-amz-checksum-crc32), big-endian, base64.
std::string Crc32Base64(std::string_view data) {
  uLong crc =
      crc32(0L, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size()));
  std::string raw = {static_cast<char>((crc >> 24) & 0xff), static_cast<char>((crc >> 16) & 0xff),
                     static_cast<char>((crc >> 8) & 0xff), static_cast<char>(crc & 0xff)};
  return crypto::Base64Encode(raw);
}

// `size` bytes that differ from place to place, so misplaced or repeated pieces show.
std::string Pattern(size_t size, uint32_t seed) {
  std::string out(size, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (auto& c : out) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 16);
  }
  return out;
}

// Every part but the last must be this large, as S3 (and SeaweedFS) insist and the S3
// service above the store enforces (s3/service.h): smaller ones are never completed.
constexpr size_t kMinPartSize = 5 * 1024 * 1024;

std::string RandomHex(size_t bytes) { return crypto::HexEncode(TestRandom().Bytes(bytes)); }

// A listing's objects and common prefixes together, in byte order.
std::vector<std::string> Entries(const ListResult& page) {
  std::vector<std::string> out;
  for (const auto& o : page.objects) out.push_back(o.key);
  out.insert(out.end(), page.common_prefixes.begin(), page.common_prefixes.end());
  std::sort(out.begin(), out.end());
  return out;
}
std::vector<std::string> Keys(const ListResult& page) {
  std::vector<std::string> out;
  for (const auto& o : page.objects) out.push_back(o.key);
  return out;
}

// ---------------------------------------------------------------------------------------
// The fixture

class ObjectStoreContract : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tm-contract-" + std::to_string(::getpid()) + "-" + RandomHex(6));
    fs::create_directories(dir_);
    auto meta = metastore::OpenSqliteMetastore((dir_ / "state.db").string(), TestClock());
    ASSERT_TRUE(meta.has_value()) << meta.error().message;
    meta_ = std::move(*meta);
    auto backend = GetParam().open(dir_.string());
    ASSERT_NE(backend, nullptr) << "the " << GetParam().name << " backend did not open";
    store_ = std::make_unique<RegisteredStore>(std::move(backend), meta_->buckets(), TestClock());
    bucket_ = FreshBucketName();
    ASSERT_OK(store_->CreateBucket(bucket_));
  }

  void TearDown() override {
    store_.reset();
    meta_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // A bucket name no test has used: S3-valid (lower-case letters, digits, '-').
  static std::string FreshBucketName() { return "ct-" + RandomHex(8); }

  // Writes `body` in pieces, as a request body arrives, and commits.
  Result<ObjectInfo> PutIn(const std::string& bucket, const std::string& key, std::string_view body,
                           ObjectInfo info = {}, PutConditions conditions = {},
                           std::optional<uint64_t> size = std::nullopt) {
    TM_ASSIGN(auto writer, store_->BeginPut(bucket, key, std::move(conditions), size));
    constexpr size_t kPiece = 1024 * 1024 + 7;
    for (size_t at = 0; at < body.size(); at += kPiece) {
      TM_TRY(writer->Write(body.data() + at, std::min(kPiece, body.size() - at)));
    }
    return writer->Commit(std::move(info));
  }
  Result<ObjectInfo> Put(const std::string& key, std::string_view body, ObjectInfo info = {},
                         PutConditions conditions = {}) {
    return PutIn(bucket_, key, body, std::move(info), std::move(conditions));
  }

  // Writers for many keys at once: listings need more keys than one writer puts quickly.
  Result<void> PutMany(const std::string& bucket, const std::vector<std::string>& keys) {
    constexpr size_t kThreads = 8;
    std::mutex mu;
    std::optional<Error> first_error;
    std::vector<std::thread> threads;
    for (size_t t = 0; t < kThreads; t++) {
      threads.emplace_back([&, t] {
        for (size_t i = t; i < keys.size(); i += kThreads) {
          auto put = PutIn(bucket, keys[i], keys[i]);
          if (!put) {
            std::lock_guard lock(mu);
            if (!first_error) first_error = put.error();
            return;
          }
        }
      });
    }
    for (auto& t : threads) t.join();
    if (first_error) return Fail(*first_error);
    return {};
  }

  static Result<std::string> ReadAll(ObjectReader& reader) {
    std::string out;
    while (true) {
      TM_ASSIGN(std::string_view view, reader.Next(256 * 1024));
      if (view.empty()) return out;
      out.append(view);
    }
  }
  Result<std::string> GetBody(const std::string& bucket, const std::string& key,
                              uint64_t offset = 0, std::optional<uint64_t> length = std::nullopt,
                              ObjectInfo* info = nullptr) {
    TM_ASSIGN(auto reader, store_->Get(bucket, key, offset, length, info));
    return ReadAll(*reader);
  }
  Result<std::string> Body(const std::string& key) { return GetBody(bucket_, key); }

  Result<ObjectInfo> PutPart(const std::string& upload_id, int part_number, std::string_view body,
                             std::optional<uint64_t> size = std::nullopt) {
    TM_ASSIGN(auto writer, store_->BeginPart(bucket_, upload_id, part_number, size));
    TM_TRY(writer->Write(body.data(), body.size()));
    return writer->Commit(ObjectInfo{});
  }

  // Every entry of a listing, page after page, checking each page against the contract:
  // at most max_keys entries, and a truncated page's next_marker is its last entry.
  struct Listing {
    std::vector<std::string> entries;  // keys and common prefixes, in the order listed
    std::vector<size_t> page_sizes;
  };
  Result<Listing> ListAll(const std::string& bucket, ListOptions options) {
    Listing out;
    for (int page = 0; page < 100000; page++) {
      TM_ASSIGN(ListResult result, store_->List(bucket, options));
      std::vector<std::string> entries = Entries(result);
      if (entries.size() > static_cast<size_t>(options.max_keys)) {
        return Fail(ErrorCode::kInternal, "a page of " + std::to_string(entries.size()) +
                                              " entries for max_keys " +
                                              std::to_string(options.max_keys));
      }
      out.entries.insert(out.entries.end(), entries.begin(), entries.end());
      out.page_sizes.push_back(entries.size());
      if (!result.truncated) return out;
      if (entries.empty() || result.next_marker != entries.back()) {
        return Fail(ErrorCode::kInternal, "a truncated page's next_marker \"" + result.next_marker +
                                              "\" is not its last entry \"" +
                                              (entries.empty() ? std::string() : entries.back()) +
                                              "\"");
      }
      options.continuation = result.next_marker;
    }
    return Fail(ErrorCode::kInternal, "the listing never ended");
  }

  fs::path dir_;
  std::unique_ptr<metastore::Metastore> meta_;
  std::unique_ptr<RegisteredStore> store_;
  std::string bucket_;  // created for each test
};

// ---------------------------------------------------------------------------------------
// Buckets

TEST_P(ObjectStoreContract, CreatingABucketTwiceIsBucketExists) {
  EXPECT_OUTCOME(store_->CreateBucket(bucket_), "BucketExists");
  EXPECT_OK(store_->HeadBucket(bucket_));
}

TEST_P(ObjectStoreContract, HeadBucketAndListBuckets) {
  ASSERT_OK_AND_ASSIGN(BucketInfo info, store_->HeadBucket(bucket_));
  EXPECT_EQ(info.name, bucket_);
  EXPECT_GT(info.created_ms, 0);
  const std::string other = FreshBucketName();
  EXPECT_OUTCOME(store_->HeadBucket(other), "NoSuchBucket");
  ASSERT_OK(store_->CreateBucket(other));
  ASSERT_OK_AND_ASSIGN(auto buckets, store_->ListBuckets());
  // Other tests' buckets may be there too; ours must be, once each.
  size_t ours = 0, others = 0;
  for (const auto& b : buckets) {
    if (b.name == bucket_) ours++;
    if (b.name == other) others++;
  }
  EXPECT_EQ(ours, 1u);
  EXPECT_EQ(others, 1u);
}

TEST_P(ObjectStoreContract, DeleteBucketOnlyWhenEmpty) {
  ASSERT_OK(Put("k", "v"));
  EXPECT_OUTCOME(store_->DeleteBucket(bucket_), "BucketNotEmpty");
  EXPECT_OK(store_->HeadBucket(bucket_));
  EXPECT_EQ(Body("k").value_or("<gone>"), "v");
  ASSERT_OK(store_->Delete(bucket_, "k"));
  ASSERT_OK(store_->DeleteBucket(bucket_));
  EXPECT_OUTCOME(store_->HeadBucket(bucket_), "NoSuchBucket");
  ASSERT_OK_AND_ASSIGN(auto buckets, store_->ListBuckets());
  for (const auto& b : buckets) EXPECT_NE(b.name, bucket_);
  EXPECT_OUTCOME(store_->DeleteBucket(bucket_), "NoSuchBucket");
  EXPECT_OUTCOME(store_->DeleteBucket(FreshBucketName()), "NoSuchBucket");
  // The name can be used again, for a bucket that starts empty.
  ASSERT_OK(store_->CreateBucket(bucket_));
  ASSERT_OK_AND_ASSIGN(ListResult listing, store_->List(bucket_, ListOptions{}));
  EXPECT_TRUE(listing.objects.empty());
}

// The backend's own part: room for a bucket's objects, opened idempotently and closed
// only when empty, whatever the registry says.
TEST_P(ObjectStoreContract, BackendBucketSpacesOpenTwiceAndCloseOnlyWhenEmpty) {
  ObjectStore& backend = store_->backend();
  const std::string space = FreshBucketName();
  ASSERT_OK(backend.OpenBucket(space));
  ASSERT_OK(backend.OpenBucket(space));
  ASSERT_OK_AND_ASSIGN(auto writer, backend.BeginPut(space, "k"));
  ASSERT_OK(writer->Write("v", 1));
  ASSERT_OK(writer->Commit(ObjectInfo{}));
  EXPECT_OUTCOME(backend.CloseBucket(space), "BucketNotEmpty");
  ASSERT_OK_AND_ASSIGN(auto reader, backend.Get(space, "k", 0, std::nullopt, nullptr));
  ASSERT_OK_AND_ASSIGN(std::string body, ReadAll(*reader));
  EXPECT_EQ(body, "v");
  ASSERT_OK(backend.Delete(space, "k"));
  ASSERT_OK_AND_ASSIGN(UploadInfo open_upload, backend.CreateUpload(space, "u", ObjectInfo{}));
  ASSERT_OK(backend.CloseBucket(space));  // an open upload goes with it
  ASSERT_OK(backend.CloseBucket(space));  // closed already: success
  const std::string gone = Outcome(backend.GetUpload(space, open_upload.upload_id));
  EXPECT_TRUE(gone == "NoSuchUpload" || gone == "NoSuchBucket") << gone;
  // Never registered, so the store in front of the backend does not know it.
  EXPECT_OUTCOME(store_->List(space, ListOptions{}), "NoSuchBucket");
}

TEST_P(ObjectStoreContract, BucketAttributesRoundTrip) {
  const std::string cors =
      "<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET"
      "</AllowedMethod></CORSRule></CORSConfiguration>";
  AttributeChange all;
  all.tags = std::map<std::string, std::string>{{"team", "data"}, {"cost-center", "42"}};
  all.acl = "public-read";
  all.cors = cors;
  ASSERT_OK_AND_ASSIGN(BucketInfo changed, store_->SetBucketAttributes(bucket_, all));
  EXPECT_EQ(changed.tags, *all.tags);
  EXPECT_EQ(changed.acl, "public-read");
  EXPECT_EQ(changed.cors, cors);
  ASSERT_OK_AND_ASSIGN(BucketInfo head, store_->HeadBucket(bucket_));
  EXPECT_EQ(head.tags, *all.tags);
  EXPECT_EQ(head.acl, "public-read");
  EXPECT_EQ(head.cors, cors);

  // Only the fields set change.
  AttributeChange acl_only;
  acl_only.acl = "";
  ASSERT_OK(store_->SetBucketAttributes(bucket_, acl_only));
  ASSERT_OK_AND_ASSIGN(head, store_->HeadBucket(bucket_));
  EXPECT_EQ(head.acl, "");
  EXPECT_EQ(head.tags, *all.tags);
  EXPECT_EQ(head.cors, cors);

  AttributeChange clear;
  clear.tags = std::map<std::string, std::string>{};
  clear.cors = "";
  ASSERT_OK(store_->SetBucketAttributes(bucket_, clear));
  ASSERT_OK_AND_ASSIGN(head, store_->HeadBucket(bucket_));
  EXPECT_TRUE(head.tags.empty());
  EXPECT_EQ(head.cors, "");

  EXPECT_OUTCOME(store_->SetBucketAttributes(FreshBucketName(), all), "NoSuchBucket");
}

// ---------------------------------------------------------------------------------------
// Writing: visibility, replacement, declared sizes

TEST_P(ObjectStoreContract, NothingIsVisibleBeforeCommit) {
  ASSERT_OK_AND_ASSIGN(auto writer, store_->BeginPut(bucket_, "pending"));
  ASSERT_OK(writer->Write("pending", 7));
  EXPECT_EQ(writer->bytes_written(), 7u);
  EXPECT_OUTCOME(store_->Head(bucket_, "pending"), "NoSuchKey");
  EXPECT_OUTCOME(store_->Get(bucket_, "pending", 0, std::nullopt, nullptr), "NoSuchKey");
  ASSERT_OK_AND_ASSIGN(ListResult before, store_->List(bucket_, ListOptions{}));
  EXPECT_TRUE(before.objects.empty());

  ASSERT_OK_AND_ASSIGN(ObjectInfo committed, writer->Commit(ObjectInfo{}));
  EXPECT_EQ(committed.size, 7u);
  EXPECT_EQ(committed.etag, Md5Hex("pending"));
  ASSERT_OK_AND_ASSIGN(ObjectInfo head, store_->Head(bucket_, "pending"));
  EXPECT_EQ(head.key, "pending");
  EXPECT_EQ(head.size, 7u);
  EXPECT_GT(head.last_modified_ms, 0);
  EXPECT_EQ(Body("pending").value_or("<error>"), "pending");
  ASSERT_OK_AND_ASSIGN(ListResult after, store_->List(bucket_, ListOptions{}));
  EXPECT_EQ(Keys(after), std::vector<std::string>{"pending"});
  ASSERT_EQ(after.objects.size(), 1u);
  EXPECT_EQ(after.objects[0].size, 7u);
  EXPECT_EQ(after.objects[0].etag, Md5Hex("pending"));
}

TEST_P(ObjectStoreContract, AbortLeavesNothing) {
  {
    ASSERT_OK_AND_ASSIGN(auto writer, store_->BeginPut(bucket_, "aborted"));
    ASSERT_OK(writer->Write("doomed", 6));
    writer->Abort();
  }
  {
    // Destroyed without Commit: an implied Abort.
    ASSERT_OK_AND_ASSIGN(auto writer, store_->BeginPut(bucket_, "dropped"));
    ASSERT_OK(writer->Write("doomed", 6));
  }
  EXPECT_OUTCOME(store_->Head(bucket_, "aborted"), "NoSuchKey");
  EXPECT_OUTCOME(store_->Head(bucket_, "dropped"), "NoSuchKey");
  ASSERT_OK_AND_ASSIGN(ListResult listing, store_->List(bucket_, ListOptions{}));
  EXPECT_TRUE(listing.objects.empty());

  // An aborted replacement leaves the object it would have replaced.
  ASSERT_OK(Put("kept", "original"));
  ASSERT_OK_AND_ASSIGN(auto writer, store_->BeginPut(bucket_, "kept"));
  ASSERT_OK(writer->Write("replacement", 11));
  writer->Abort();
  EXPECT_EQ(Body("kept").value_or("<error>"), "original");
}

TEST_P(ObjectStoreContract, CommitReplacesTheWholeObject) {
  ObjectInfo typed;
  typed.headers = {{"Content-Type", "text/plain"}, {"x-amz-meta-version", "1"}};
  ASSERT_OK_AND_ASSIGN(ObjectInfo first, Put("k", "first version", typed));
  ASSERT_OK_AND_ASSIGN(ObjectInfo second, Put("k", "second"));
  EXPECT_NE(first.etag, second.etag);
  EXPECT_EQ(Body("k").value_or("<error>"), "second");
  ASSERT_OK_AND_ASSIGN(ObjectInfo head, store_->Head(bucket_, "k"));
  EXPECT_EQ(head.size, 6u);
  EXPECT_EQ(head.etag, Md5Hex("second"));
  // The replacement's metadata replaces the old, too.
  EXPECT_EQ(head.headers.count("x-amz-meta-version"), 0u);
  ASSERT_OK_AND_ASSIGN(ListResult listing, store_->List(bucket_, ListOptions{}));
  EXPECT_EQ(Keys(listing), std::vector<std::string>{"k"});
}

// A writer that says it reports what its put replaced reports it truly: nothing for a
// new key, the old object's size for an overwrite. (Usage counting relies on it instead
// of reading the key's size before every put.)
TEST_P(ObjectStoreContract, APutThatReportsWhatItReplacedIsRight) {
  ObjectStore& backend = store_->backend();
  auto put = [&](const std::string& body) -> Result<ObjectInfo> {
    TM_ASSIGN(auto writer, backend.BeginPut(bucket_, "r", {}, body.size(), {}));
    const bool reports = writer->ReportsReplaced();
    TM_TRY(writer->Write(body.data(), body.size()));
    TM_ASSIGN(ObjectInfo stored, writer->Commit(ObjectInfo{}));
    if (reports && !stored.replaced) return Fail(ErrorCode::kInternal, "said it would report");
    if (!reports) stored.replaced.reset();
    return stored;
  };
  ASSERT_OK_AND_ASSIGN(ObjectInfo first, put("12345"));
  if (first.replaced) {
    EXPECT_FALSE(first.replaced->existed);
  }
  ASSERT_OK_AND_ASSIGN(ObjectInfo second, put("abc"));
  if (second.replaced) {
    EXPECT_TRUE(second.replaced->existed);
    EXPECT_EQ(second.replaced->size, 5u);
  }
  ASSERT_OK_AND_ASSIGN(std::string body, Body("r"));
  EXPECT_EQ(body, "abc");
  // Both backends report small puts where the store tells (the S3 one when its store
  // honours conditions); one that must check conditions itself does not.
  if (GetParam().name != "S3OnSeaweedFSConditionsHere") {
    EXPECT_TRUE(first.replaced.has_value());
    EXPECT_TRUE(second.replaced.has_value());
  }
}

TEST_P(ObjectStoreContract, EtagIsTheUnquotedMd5Hex) {
  ASSERT_OK_AND_ASSIGN(ObjectInfo hello, Put("hello", "hello"));
  EXPECT_EQ(hello.etag, "5d41402abc4b2a76b9719d911017c592");
  ASSERT_OK_AND_ASSIGN(ObjectInfo empty, Put("empty", ""));
  EXPECT_EQ(empty.etag, "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(empty.size, 0u);
  EXPECT_EQ(Body("empty").value_or("<error>"), "");
  const std::string body = Pattern(100 * 1000, 1);
  ASSERT_OK_AND_ASSIGN(ObjectInfo committed, Put("pattern", body));
  EXPECT_EQ(committed.etag, Md5Hex(body));
  ASSERT_OK_AND_ASSIGN(ObjectInfo head, store_->Head(bucket_, "pattern"));
  EXPECT_EQ(head.etag, Md5Hex(body));
  ObjectInfo got;
  ASSERT_OK(GetBody(bucket_, "pattern", 0, std::nullopt, &got));
  EXPECT_EQ(got.etag, Md5Hex(body));
  EXPECT_EQ(got.size, body.size());
}

TEST_P(ObjectStoreContract, DeclaredSizeRefusesExtraBytes) {
  ASSERT_OK(Put("k", "old"));
  ASSERT_OK_AND_ASSIGN(auto writer, store_->BeginPut(bucket_, "k", {}, 5));
  ASSERT_OK(writer->Write("abc", 3));
  EXPECT_OUTCOME(writer->Write("def", 3), "invalid_input");
  EXPECT_FALSE(writer->Commit(ObjectInfo{}).has_value()) << "a put past its size was published";
  EXPECT_EQ(Body("k").value_or("<error>"), "old");

  ASSERT_OK_AND_ASSIGN(auto fresh, store_->BeginPut(bucket_, "fresh", {}, 2));
  EXPECT_OUTCOME(fresh->Write("xyz", 3), "invalid_input");
  EXPECT_FALSE(fresh->Commit(ObjectInfo{}).has_value());
  EXPECT_OUTCOME(store_->Head(bucket_, "fresh"), "NoSuchKey");
}

TEST_P(ObjectStoreContract, DeclaredSizeShortBodyFailsCommit) {
  ASSERT_OK(Put("k", "old"));
  ASSERT_OK_AND_ASSIGN(auto writer, store_->BeginPut(bucket_, "k", {}, 10));
  ASSERT_OK(writer->Write("abcd", 4));
  EXPECT_OUTCOME(writer->Commit(ObjectInfo{}), "invalid_input");
  EXPECT_EQ(Body("k").value_or("<error>"), "old");

  ASSERT_OK_AND_ASSIGN(auto fresh, store_->BeginPut(bucket_, "fresh", {}, 10));
  ASSERT_OK(fresh->Write("abcd", 4));
  EXPECT_OUTCOME(fresh->Commit(ObjectInfo{}), "invalid_input");
  EXPECT_OUTCOME(store_->Head(bucket_, "fresh"), "NoSuchKey");
  ASSERT_OK_AND_ASSIGN(ListResult listing, store_->List(bucket_, ListOptions{}));
  EXPECT_EQ(Keys(listing), std::vector<std::string>{"k"});
}

TEST_P(ObjectStoreContract, DeclaredSizeMetExactlyCommits) {
  ASSERT_OK_AND_ASSIGN(ObjectInfo five, PutIn(bucket_, "five", "12345", {}, {}, 5));
  EXPECT_EQ(five.size, 5u);
  EXPECT_EQ(Body("five").value_or("<error>"), "12345");
  ASSERT_OK_AND_ASSIGN(ObjectInfo zero, PutIn(bucket_, "zero", "", {}, {}, 0));
  EXPECT_EQ(zero.size, 0u);
  EXPECT_EQ(zero.etag, Md5Hex(""));
}

// ---------------------------------------------------------------------------------------
// Conditional writes

TEST_P(ObjectStoreContract, IfNoneMatchRefusesAnExistingKey) {
  PutConditions absent;
  absent.if_none_match = true;
  ASSERT_OK(Put("k", "first", {}, absent));
  EXPECT_OUTCOME(Put("k", "second", {}, absent), "PreconditionFailed");
  EXPECT_EQ(Body("k").value_or("<error>"), "first");
}

TEST_P(ObjectStoreContract, IfMatchNeedsTheCurrentEtag) {
  ASSERT_OK_AND_ASSIGN(ObjectInfo v1, Put("k", "v1"));
  PutConditions wrong;
  wrong.if_match = Md5Hex("something else");
  EXPECT_OUTCOME(Put("k", "never", {}, wrong), "PreconditionFailed");
  PutConditions current;
  current.if_match = v1.etag;
  ASSERT_OK_AND_ASSIGN(ObjectInfo v2, Put("k", "v2", {}, current));
  // v1's etag is stale now.
  EXPECT_OUTCOME(Put("k", "never", {}, current), "PreconditionFailed");
  PutConditions any;
  any.if_match = "*";
  ASSERT_OK(Put("k", "v3", {}, any));
  EXPECT_EQ(Body("k").value_or("<error>"), "v3");
  // On a missing key the header promises kNoSuchKey, for an etag and for "*".
  EXPECT_OUTCOME(Put("missing", "never", {}, current), "NoSuchKey");
  EXPECT_OUTCOME(Put("missing", "never", {}, any), "NoSuchKey");
  EXPECT_OUTCOME(store_->Head(bucket_, "missing"), "NoSuchKey");
  (void)v2;
}

// Conditions are checked when the object is published, not when the write begins.
TEST_P(ObjectStoreContract, ConditionsAreCheckedAtCommit) {
  PutConditions absent;
  absent.if_none_match = true;
  ASSERT_OK_AND_ASSIGN(auto a, store_->BeginPut(bucket_, "k", absent));
  ASSERT_OK_AND_ASSIGN(auto b, store_->BeginPut(bucket_, "k", absent));
  ASSERT_OK(a->Write("a", 1));
  ASSERT_OK(b->Write("b", 1));
  ASSERT_OK(a->Commit(ObjectInfo{}));
  EXPECT_OUTCOME(b->Commit(ObjectInfo{}), "PreconditionFailed");
  EXPECT_EQ(Body("k").value_or("<error>"), "a");

  PutConditions current;
  current.if_match = Md5Hex("a");
  ASSERT_OK_AND_ASSIGN(auto c, store_->BeginPut(bucket_, "k", current));
  ASSERT_OK(c->Write("c", 1));
  ASSERT_OK(Put("k", "changed meanwhile"));
  EXPECT_OUTCOME(c->Commit(ObjectInfo{}), "PreconditionFailed");
  EXPECT_EQ(Body("k").value_or("<error>"), "changed meanwhile");
}

TEST_P(ObjectStoreContract, ConcurrentIfNoneMatchWritersExactlyOneWins) {
  constexpr int kWriters = 8;
  for (int round = 0; round < 4; round++) {
    const std::string key = "race-" + std::to_string(round);
    auto outcomes =
        RaceCreates([&](int) -> ObjectStore& { return *store_; }, bucket_, key, kWriters);
    int winners = 0, refused = 0, winner = -1;
    for (int w = 0; w < kWriters; w++) {
      if (outcomes[w] == "ok") {
        winners++;
        winner = w;
      } else if (outcomes[w] == "PreconditionFailed") {
        refused++;
      } else {
        ADD_FAILURE() << "writer " << w << ": " << outcomes[w];
      }
    }
    EXPECT_EQ(winners, 1) << "round " << round;
    EXPECT_EQ(refused, kWriters - 1) << "round " << round;
    if (winners == 1) {
      EXPECT_EQ(Body(key).value_or("<error>"), "writer-" + std::to_string(winner));
    }
  }
}

// ---------------------------------------------------------------------------------------
// Metadata

TEST_P(ObjectStoreContract, MetadataIsStoredAndReturned) {
  const std::string body = "col_a,col_b\n1,2\n";
  ObjectInfo info;
  info.headers = {{"Content-Type", "text/csv"},
                  {"Cache-Control", "max-age=60"},
                  {"Content-Disposition", "attachment; filename=\"data.csv\""},
                  {"Content-Language", "en"},
                  {"x-amz-meta-owner", "alice"},
                  {"x-amz-meta-pipeline", "nightly"}};
  info.checksums = {{"CRC32", Crc32Base64(body)}, {"type", "FULL_OBJECT"}};
  info.tags = {{"project", "lake"}, {"tier", "hot"}};
  info.acl = "public-read";
  ASSERT_OK_AND_ASSIGN(ObjectInfo committed, Put("data.csv", body, info));
  EXPECT_EQ(committed.headers, info.headers);
  EXPECT_EQ(committed.checksums, info.checksums);
  EXPECT_EQ(committed.tags, info.tags);
  EXPECT_EQ(committed.acl, info.acl);

  ASSERT_OK_AND_ASSIGN(ObjectInfo head, store_->Head(bucket_, "data.csv"));
  EXPECT_EQ(head.headers, info.headers);
  EXPECT_EQ(head.checksums, info.checksums);
  EXPECT_EQ(head.tags, info.tags);
  EXPECT_EQ(head.acl, "public-read");
  EXPECT_TRUE(head.part_sizes.empty());
  EXPECT_EQ(head.size, body.size());

  ObjectInfo got;
  ASSERT_OK_AND_ASSIGN(std::string read, GetBody(bucket_, "data.csv", 0, std::nullopt, &got));
  EXPECT_EQ(read, body);
  EXPECT_EQ(got.headers, info.headers);
  EXPECT_EQ(got.checksums, info.checksums);
  EXPECT_EQ(got.tags, info.tags);
  EXPECT_EQ(got.acl, "public-read");
}

TEST_P(ObjectStoreContract, ObjectAttributesChangeInPlace) {
  ObjectInfo info;
  info.headers = {{"Content-Type", "text/plain"}};
  info.tags = {{"a", "1"}};
  info.acl = "public-read";
  ASSERT_OK_AND_ASSIGN(ObjectInfo before, Put("k", "body", info));

  AttributeChange tags;
  tags.tags = std::map<std::string, std::string>{{"b", "2"}, {"c", "3"}};
  ASSERT_OK_AND_ASSIGN(ObjectInfo changed, store_->SetObjectAttributes(bucket_, "k", tags));
  EXPECT_EQ(changed.tags, *tags.tags);
  EXPECT_EQ(changed.acl, "public-read");
  ASSERT_OK_AND_ASSIGN(ObjectInfo head, store_->Head(bucket_, "k"));
  EXPECT_EQ(head.tags, *tags.tags);
  EXPECT_EQ(head.acl, "public-read");
  EXPECT_EQ(head.headers, info.headers);
  EXPECT_EQ(head.etag, before.etag);
  EXPECT_EQ(Body("k").value_or("<error>"), "body");

  AttributeChange acl;
  acl.acl = "";
  ASSERT_OK(store_->SetObjectAttributes(bucket_, "k", acl));
  ASSERT_OK_AND_ASSIGN(head, store_->Head(bucket_, "k"));
  EXPECT_EQ(head.acl, "");
  EXPECT_EQ(head.tags, *tags.tags);

  EXPECT_OUTCOME(store_->SetObjectAttributes(bucket_, "missing", tags), "NoSuchKey");
}

// ---------------------------------------------------------------------------------------
// Reading, deleting, copying

TEST_P(ObjectStoreContract, RangedGet) {
  const std::string body = Pattern(1000, 2);
  ASSERT_OK(Put("k", body));
  ObjectInfo info;
  EXPECT_EQ(GetBody(bucket_, "k", 100, 50, &info).value_or("<error>"), body.substr(100, 50));
  EXPECT_EQ(info.size, 1000u) << "a range's info describes the whole object";
  EXPECT_EQ(info.etag, Md5Hex(body));
  EXPECT_EQ(GetBody(bucket_, "k", 990).value_or("<error>"), body.substr(990));
  EXPECT_EQ(GetBody(bucket_, "k", 0, 1).value_or("<error>"), body.substr(0, 1));
  EXPECT_EQ(GetBody(bucket_, "k", 999, 1).value_or("<error>"), body.substr(999));
  EXPECT_EQ(GetBody(bucket_, "k", 0, 1000).value_or("<error>"), body);
  EXPECT_OUTCOME(store_->Get(bucket_, "missing", 0, std::nullopt, nullptr), "NoSuchKey");
  EXPECT_OUTCOME(store_->Get(FreshBucketName(), "k", 0, std::nullopt, nullptr), "NoSuchBucket");
  EXPECT_OUTCOME(store_->Head(FreshBucketName(), "k"), "NoSuchBucket");
}

TEST_P(ObjectStoreContract, DeleteOfAMissingKeySucceeds) {
  EXPECT_OK(store_->Delete(bucket_, "never-there"));
  ASSERT_OK(Put("k", "v"));
  ASSERT_OK(store_->Delete(bucket_, "k"));
  EXPECT_OUTCOME(store_->Head(bucket_, "k"), "NoSuchKey");
  ASSERT_OK_AND_ASSIGN(ListResult listing, store_->List(bucket_, ListOptions{}));
  EXPECT_TRUE(listing.objects.empty());
  EXPECT_OK(store_->Delete(bucket_, "k"));
  EXPECT_OUTCOME(store_->Delete(FreshBucketName(), "k"), "NoSuchBucket");
}

TEST_P(ObjectStoreContract, CopyKeepsTheSourceMetadata) {
  const std::string body = Pattern(5000, 3);
  ObjectInfo info;
  info.headers = {{"Content-Type", "application/octet-stream"}, {"x-amz-meta-origin", "src"}};
  info.checksums = {{"CRC32", Crc32Base64(body)}, {"type", "FULL_OBJECT"}};
  info.tags = {{"k", "v"}};
  info.acl = "public-read";
  ASSERT_OK(Put("src", body, info));
  const std::string other = FreshBucketName();
  ASSERT_OK(store_->CreateBucket(other));

  ASSERT_OK_AND_ASSIGN(ObjectInfo copied, store_->Copy(bucket_, "src", other, "dst", std::nullopt));
  EXPECT_EQ(copied.etag, Md5Hex(body));
  EXPECT_EQ(copied.size, body.size());
  EXPECT_EQ(GetBody(other, "dst").value_or("<error>"), body);
  ASSERT_OK_AND_ASSIGN(ObjectInfo head, store_->Head(other, "dst"));
  EXPECT_EQ(head.etag, Md5Hex(body));
  EXPECT_EQ(head.headers, info.headers);
  EXPECT_EQ(head.checksums, info.checksums);
  EXPECT_EQ(head.tags, info.tags);
  EXPECT_EQ(head.acl, info.acl);
  // The source is untouched.
  EXPECT_EQ(Body("src").value_or("<error>"), body);
  ASSERT_OK_AND_ASSIGN(ObjectInfo src, store_->Head(bucket_, "src"));
  EXPECT_EQ(src.headers, info.headers);

  EXPECT_OUTCOME(store_->Copy(bucket_, "missing", other, "x", std::nullopt), "NoSuchKey");
  EXPECT_OUTCOME(store_->Copy(bucket_, "src", FreshBucketName(), "x", std::nullopt),
                 "NoSuchBucket");
  EXPECT_OUTCOME(store_->Head(other, "x"), "NoSuchKey");
}

TEST_P(ObjectStoreContract, CopyWithReplacedMetadata) {
  const std::string body = Pattern(5000, 4);
  ObjectInfo info;
  info.headers = {{"Content-Type", "text/plain"}, {"x-amz-meta-old", "1"}};
  info.tags = {{"old", "tag"}};
  info.acl = "public-read";
  ASSERT_OK(Put("src", body, info));

  ObjectInfo replaced;
  replaced.headers = {{"Content-Type", "application/json"}, {"x-amz-meta-new", "2"}};
  replaced.checksums = {{"CRC32", Crc32Base64(body)}, {"type", "FULL_OBJECT"}};
  replaced.tags = {{"new", "tag"}};
  replaced.acl = "";
  ASSERT_OK_AND_ASSIGN(ObjectInfo copied, store_->Copy(bucket_, "src", bucket_, "dst", replaced));
  EXPECT_EQ(copied.etag, Md5Hex(body));
  ASSERT_OK_AND_ASSIGN(ObjectInfo head, store_->Head(bucket_, "dst"));
  EXPECT_EQ(head.headers, replaced.headers);
  EXPECT_EQ(head.checksums, replaced.checksums);
  EXPECT_EQ(head.tags, replaced.tags);
  EXPECT_EQ(head.acl, "");
  EXPECT_EQ(Body("dst").value_or("<error>"), body);

  // Onto itself: how S3 clients change an object's metadata. The bytes stay.
  ASSERT_OK(store_->Copy(bucket_, "src", bucket_, "src", replaced));
  ASSERT_OK_AND_ASSIGN(ObjectInfo self, store_->Head(bucket_, "src"));
  EXPECT_EQ(self.headers, replaced.headers);
  EXPECT_EQ(self.etag, Md5Hex(body));
  EXPECT_EQ(Body("src").value_or("<error>"), body);
}

// ---------------------------------------------------------------------------------------
// Listing

// The S3 layer refuses keys longer than MaxKeyBytes; every key up to it must work.
TEST_P(ObjectStoreContract, KeysOfMaxKeyBytesWork) {
  const size_t max = store_->MaxKeyBytes(bucket_);
  ASSERT_GT(max, 100u);
  ASSERT_LE(max, 1024u) << "S3's own limit is 1024 bytes";
  // Exactly `max` bytes, in segments of 100: a backend that keeps keys as file paths
  // may hold each segment as one name, and names are limited apart from keys.
  std::string key = "long";
  while (key.size() < max) {
    key += '/';
    const size_t n = std::min<size_t>(100, max - key.size());
    if (n == 0) {
      key.back() = 'k';  // no room for a segment after the '/'
      break;
    }
    key += std::string(n, 'k');
  }
  ASSERT_EQ(key.size(), max);
  ASSERT_OK(Put(key, "long key"));
  EXPECT_EQ(Body(key).value_or("<error>"), "long key");
  ListOptions under;
  under.prefix = "long/";
  ASSERT_OK_AND_ASSIGN(ListResult listing, store_->List(bucket_, under));
  EXPECT_EQ(Keys(listing), std::vector<std::string>{key});
  ASSERT_OK(store_->Delete(bucket_, key));
  EXPECT_OUTCOME(store_->Head(bucket_, key), "NoSuchKey");
}

TEST_P(ObjectStoreContract, ListIsInByteOrder) {
  // Upper case before lower, ' ' and '-' before '/', UTF-8 after ASCII: bytes, not
  // locale or code points of another encoding.
  std::vector<std::string> keys = {"b",
                                   "a",
                                   "A",
                                   "a/b",
                                   "a-b",
                                   "a b",
                                   "ab",
                                   "Z",
                                   "0",
                                   "~tilde",
                                   "a.b",
                                   "\xc3\xa9t\xc3\xa9",
                                   "\xe2\x82\xac",
                                   "a%2Fb",
                                   "aa"};
  for (const auto& k : keys) ASSERT_OK(Put(k, k));
  std::sort(keys.begin(), keys.end());  // std::string compares its chars as unsigned bytes
  ASSERT_OK_AND_ASSIGN(ListResult listing, store_->List(bucket_, ListOptions{}));
  if (store_->ListsInByteOrder()) {
    EXPECT_EQ(Keys(listing), keys);
  } else {
    // A store that says it lists in its own order still lists every key exactly once.
    std::vector<std::string> listed = Keys(listing);
    std::sort(listed.begin(), listed.end());
    EXPECT_EQ(listed, keys);
  }
  EXPECT_TRUE(listing.common_prefixes.empty());
  EXPECT_FALSE(listing.truncated);
  for (const auto& o : listing.objects) {
    EXPECT_EQ(o.size, o.key.size()) << o.key;
    EXPECT_EQ(o.etag, Md5Hex(o.key)) << o.key;
  }
}

TEST_P(ObjectStoreContract, ListByPrefix) {
  for (std::string k : {"logs/2024/a", "logs/2024/b", "logs/2025/c", "logsx", "other"}) {
    ASSERT_OK(Put(k, k));
  }
  auto keys_under = [&](const std::string& prefix) -> std::vector<std::string> {
    ListOptions options;
    options.prefix = prefix;
    auto listing = store_->List(bucket_, options);
    if (!listing) return {"<error: " + listing.error().message + ">"};
    return Keys(*listing);
  };
  EXPECT_EQ(keys_under("logs/"),
            (std::vector<std::string>{"logs/2024/a", "logs/2024/b", "logs/2025/c"}));
  EXPECT_EQ(keys_under("logs"),
            (std::vector<std::string>{"logs/2024/a", "logs/2024/b", "logs/2025/c", "logsx"}));
  EXPECT_EQ(keys_under("logs/2024/b"), (std::vector<std::string>{"logs/2024/b"}));
  EXPECT_EQ(keys_under("other"), (std::vector<std::string>{"other"}));
  EXPECT_EQ(keys_under("nothing"), (std::vector<std::string>{}));
  EXPECT_OUTCOME(store_->List(FreshBucketName(), ListOptions{}), "NoSuchBucket");
}

TEST_P(ObjectStoreContract, ListWithDelimiterRollsUpCommonPrefixes) {
  for (std::string k : {"a.txt", "dir1/x", "dir1/y", "dir1/sub/z", "dir2/q", "z.txt"}) {
    ASSERT_OK(Put(k, k));
  }
  ListOptions top;
  top.delimiter = "/";
  ASSERT_OK_AND_ASSIGN(ListResult root, store_->List(bucket_, top));
  EXPECT_EQ(Keys(root), (std::vector<std::string>{"a.txt", "z.txt"}));
  EXPECT_EQ(root.common_prefixes, (std::vector<std::string>{"dir1/", "dir2/"}));
  EXPECT_FALSE(root.truncated);

  ListOptions inside;
  inside.prefix = "dir1/";
  inside.delimiter = "/";
  ASSERT_OK_AND_ASSIGN(ListResult dir1, store_->List(bucket_, inside));
  EXPECT_EQ(Keys(dir1), (std::vector<std::string>{"dir1/x", "dir1/y"}));
  EXPECT_EQ(dir1.common_prefixes, (std::vector<std::string>{"dir1/sub/"}));

  // A prefix that is not a whole "directory": the delimiter is searched after it.
  ListOptions partial;
  partial.prefix = "dir";
  partial.delimiter = "/";
  ASSERT_OK_AND_ASSIGN(ListResult dirs, store_->List(bucket_, partial));
  EXPECT_TRUE(dirs.objects.empty());
  EXPECT_EQ(dirs.common_prefixes, (std::vector<std::string>{"dir1/", "dir2/"}));

  // Any string is a delimiter, not only "/".
  ListOptions dotted;
  dotted.delimiter = ".";
  ASSERT_OK_AND_ASSIGN(ListResult dots, store_->List(bucket_, dotted));
  EXPECT_EQ(Keys(dots), (std::vector<std::string>{"dir1/sub/z", "dir1/x", "dir1/y", "dir2/q"}));
  EXPECT_EQ(dots.common_prefixes, (std::vector<std::string>{"a.", "z."}));
}

TEST_P(ObjectStoreContract, ListStartsAfterAKey) {
  for (std::string k : {"a", "b", "c", "d", "p/1", "p/2", "p/3"}) ASSERT_OK(Put(k, k));
  auto keys_after = [&](const std::string& prefix,
                        const std::string& start_after) -> std::vector<std::string> {
    ListOptions options;
    options.prefix = prefix;
    options.start_after = start_after;
    auto listing = store_->List(bucket_, options);
    if (!listing) return {"<error: " + listing.error().message + ">"};
    return Keys(*listing);
  };
  EXPECT_EQ(keys_after("", "b"), (std::vector<std::string>{"c", "d", "p/1", "p/2", "p/3"}));
  EXPECT_EQ(keys_after("", "bb"), (std::vector<std::string>{"c", "d", "p/1", "p/2", "p/3"}));
  EXPECT_EQ(keys_after("", "p/3"), (std::vector<std::string>{}));
  EXPECT_EQ(keys_after("", "zzz"), (std::vector<std::string>{}));
  EXPECT_EQ(keys_after("p/", "a"), (std::vector<std::string>{"p/1", "p/2", "p/3"}));
  EXPECT_EQ(keys_after("p/", "p/1"), (std::vector<std::string>{"p/2", "p/3"}));
  EXPECT_EQ(keys_after("p/", "q"), (std::vector<std::string>{}));
}

TEST_P(ObjectStoreContract, ListPagesWithMaxKeys) {
  std::vector<std::string> keys;
  for (int i = 0; i < 7; i++) keys.push_back("k" + std::to_string(i));
  for (const auto& k : keys) ASSERT_OK(Put(k, k));

  ListOptions three;
  three.max_keys = 3;
  ASSERT_OK_AND_ASSIGN(ListResult first, store_->List(bucket_, three));
  EXPECT_EQ(Keys(first), (std::vector<std::string>{"k0", "k1", "k2"}));
  EXPECT_TRUE(first.truncated);
  EXPECT_EQ(first.next_marker, "k2");
  three.continuation = first.next_marker;
  ASSERT_OK_AND_ASSIGN(ListResult second, store_->List(bucket_, three));
  EXPECT_EQ(Keys(second), (std::vector<std::string>{"k3", "k4", "k5"}));
  EXPECT_TRUE(second.truncated);
  three.continuation = second.next_marker;
  ASSERT_OK_AND_ASSIGN(ListResult last, store_->List(bucket_, three));
  EXPECT_EQ(Keys(last), (std::vector<std::string>{"k6"}));
  EXPECT_FALSE(last.truncated);

  // A page that ends exactly at the last key is not truncated.
  ListOptions seven;
  seven.max_keys = 7;
  ASSERT_OK_AND_ASSIGN(ListResult exact, store_->List(bucket_, seven));
  EXPECT_EQ(Keys(exact), keys);
  EXPECT_FALSE(exact.truncated);

  ListOptions one;
  one.max_keys = 1;
  ASSERT_OK_AND_ASSIGN(Listing paged, ListAll(bucket_, one));
  EXPECT_EQ(paged.entries, keys);
  EXPECT_EQ(paged.page_sizes.size(), 7u);

  // start_after stays in force on every page.
  ListOptions after;
  after.max_keys = 2;
  after.start_after = "k3";
  ASSERT_OK_AND_ASSIGN(Listing rest, ListAll(bucket_, after));
  EXPECT_EQ(rest.entries, (std::vector<std::string>{"k4", "k5", "k6"}));
}

// A continuation that is a common prefix resumes after every key under it.
TEST_P(ObjectStoreContract, ListPagesThroughCommonPrefixes) {
  for (std::string k : {"a", "b/1", "b/2", "b/3", "c/1", "c/2", "d"}) ASSERT_OK(Put(k, k));
  ListOptions two;
  two.delimiter = "/";
  two.max_keys = 2;
  ASSERT_OK_AND_ASSIGN(ListResult first, store_->List(bucket_, two));
  EXPECT_EQ(Entries(first), (std::vector<std::string>{"a", "b/"}));
  EXPECT_TRUE(first.truncated);
  EXPECT_EQ(first.next_marker, "b/");
  two.continuation = first.next_marker;
  ASSERT_OK_AND_ASSIGN(ListResult second, store_->List(bucket_, two));
  EXPECT_EQ(Entries(second), (std::vector<std::string>{"c/", "d"}));
  EXPECT_FALSE(second.truncated);

  ListOptions resume;
  resume.delimiter = "/";
  resume.continuation = "b/";
  ASSERT_OK_AND_ASSIGN(ListResult after_b, store_->List(bucket_, resume));
  EXPECT_EQ(Keys(after_b), (std::vector<std::string>{"d"}));
  EXPECT_EQ(after_b.common_prefixes, (std::vector<std::string>{"c/"}));

  ListOptions one;
  one.delimiter = "/";
  one.max_keys = 1;
  ASSERT_OK_AND_ASSIGN(Listing paged, ListAll(bucket_, one));
  EXPECT_EQ(paged.entries, (std::vector<std::string>{"a", "b/", "c/", "d"}));
}

TEST_P(ObjectStoreContract, LargeListingSeesEveryKeyOnce) {
  // 25 "directories" of 100 keys: more than two full pages of the default 1000.
  std::vector<std::string> keys;
  for (int d = 0; d < 25; d++) {
    for (int k = 0; k < 100; k++) {
      char name[32];
      std::snprintf(name, sizeof name, "d%02d/k%03d", d, k);
      keys.push_back(name);
    }
  }
  ASSERT_OK(PutMany(bucket_, keys));

  ASSERT_OK_AND_ASSIGN(Listing all, ListAll(bucket_, ListOptions{}));
  EXPECT_EQ(all.page_sizes, (std::vector<size_t>{1000, 1000, 500}));
  EXPECT_EQ(all.entries.size(), keys.size());
  EXPECT_TRUE(all.entries == keys) << "keys missing, repeated or out of order";
  EXPECT_EQ(std::set<std::string>(all.entries.begin(), all.entries.end()).size(), keys.size());

  ListOptions odd;
  odd.max_keys = 333;
  ASSERT_OK_AND_ASSIGN(Listing odd_pages, ListAll(bucket_, odd));
  EXPECT_TRUE(odd_pages.entries == keys) << "keys missing, repeated or out of order";
  EXPECT_EQ(odd_pages.page_sizes.size(), 8u);

  std::vector<std::string> dirs;
  for (int d = 0; d < 25; d++) dirs.push_back(keys[d * 100].substr(0, 4));
  ListOptions rolled;
  rolled.delimiter = "/";
  ASSERT_OK_AND_ASSIGN(ListResult top, store_->List(bucket_, rolled));
  EXPECT_EQ(top.common_prefixes, dirs);
  EXPECT_TRUE(top.objects.empty());
  EXPECT_FALSE(top.truncated);
  rolled.max_keys = 10;
  ASSERT_OK_AND_ASSIGN(Listing dir_pages, ListAll(bucket_, rolled));
  EXPECT_EQ(dir_pages.entries, dirs);
  EXPECT_EQ(dir_pages.page_sizes, (std::vector<size_t>{10, 10, 5}));

  ListOptions one_dir;
  one_dir.prefix = "d07/";
  one_dir.max_keys = 30;
  ASSERT_OK_AND_ASSIGN(Listing d07, ListAll(bucket_, one_dir));
  EXPECT_EQ(d07.entries, std::vector<std::string>(keys.begin() + 700, keys.begin() + 800));
}

// ---------------------------------------------------------------------------------------
// Multipart uploads

TEST_P(ObjectStoreContract, MultipartPartsOutOfOrderAndReplaced) {
  ObjectInfo pending;
  pending.headers = {{"Content-Type", "application/octet-stream"}, {"x-amz-meta-purpose", "test"}};
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, store_->CreateUpload(bucket_, "mp/object", pending));
  EXPECT_FALSE(upload.upload_id.empty());
  EXPECT_EQ(upload.key, "mp/object");
  ASSERT_OK_AND_ASSIGN(UploadInfo got, store_->GetUpload(bucket_, upload.upload_id));
  EXPECT_EQ(got.key, "mp/object");
  EXPECT_EQ(got.pending.headers, pending.headers);

  const std::string p1 = Pattern(kMinPartSize + 100, 11), p2 = Pattern(kMinPartSize + 200, 12),
                    p2b = Pattern(kMinPartSize + 250, 13), p3 = Pattern(300, 14);
  // Out of order, as parallel uploaders send them.
  ASSERT_OK_AND_ASSIGN(ObjectInfo c3, PutPart(upload.upload_id, 3, p3));
  EXPECT_EQ(c3.size, p3.size());
  EXPECT_EQ(c3.etag, Md5Hex(p3));
  ASSERT_OK(PutPart(upload.upload_id, 1, p1));
  ASSERT_OK(PutPart(upload.upload_id, 2, p2));
  ASSERT_OK(PutPart(upload.upload_id, 2, p2b));  // replaces the first part 2

  ASSERT_OK_AND_ASSIGN(auto parts, store_->ListParts(bucket_, upload.upload_id));
  std::string listed;
  for (const auto& p : parts) {
    listed += " #" + std::to_string(p.part_number) + ":" + std::to_string(p.size);
  }
  ASSERT_EQ(parts.size(), 3u) << "parts listed:" << listed;
  const std::vector<std::string> bodies = {p1, p2b, p3};
  for (size_t i = 0; i < 3; i++) {
    EXPECT_EQ(parts[i].part_number, static_cast<int>(i + 1));
    EXPECT_EQ(parts[i].size, bodies[i].size());
    EXPECT_EQ(parts[i].etag, Md5Hex(bodies[i]));
  }
  EXPECT_OUTCOME(store_->Head(bucket_, "mp/object"), "NoSuchKey");

  ObjectInfo final_info = got.pending;
  final_info.key = "mp/object";
  final_info.etag = MultipartEtag(bodies);
  ASSERT_OK_AND_ASSIGN(ObjectInfo done,
                       store_->CompleteUpload(bucket_, upload.upload_id, {1, 2, 3}, final_info));
  const std::vector<uint64_t> sizes = {p1.size(), p2b.size(), p3.size()};
  EXPECT_EQ(done.size, p1.size() + p2b.size() + p3.size());
  EXPECT_EQ(done.part_sizes, sizes);
  ASSERT_OK_AND_ASSIGN(ObjectInfo head, store_->Head(bucket_, "mp/object"));
  EXPECT_EQ(head.size, done.size);
  EXPECT_EQ(head.part_sizes, sizes);
  EXPECT_EQ(head.etag, MultipartEtag(bodies));
  EXPECT_EQ(head.headers, pending.headers);
  EXPECT_TRUE(Body("mp/object").value_or("<error>") == p1 + p2b + p3)
      << "the parts were joined wrongly";
  // A range across a part boundary.
  EXPECT_EQ(GetBody(bucket_, "mp/object", p1.size() - 10, 20).value_or("<error>"),
            (p1 + p2b).substr(p1.size() - 10, 20));

  EXPECT_OUTCOME(store_->GetUpload(bucket_, upload.upload_id), "NoSuchUpload");
  EXPECT_OUTCOME(store_->ListParts(bucket_, upload.upload_id), "NoSuchUpload");
  ASSERT_OK_AND_ASSIGN(auto uploads, store_->ListUploads(bucket_, ""));
  EXPECT_TRUE(uploads.empty());
}

TEST_P(ObjectStoreContract, CompleteWithASubsetOfParts) {
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, store_->CreateUpload(bucket_, "subset", ObjectInfo{}));
  std::vector<std::string> bodies;
  for (int n = 1; n <= 4; n++) {
    // Part 2 is completed as a part before another, so it has the minimum size.
    bodies.push_back(Pattern(n == 2 ? kMinPartSize : 64 + n, 20 + n));
    ASSERT_OK(PutPart(upload.upload_id, n, bodies.back()));
  }
  ObjectInfo final_info;
  final_info.key = "subset";
  final_info.etag = MultipartEtag({bodies[1], bodies[3]});
  ASSERT_OK_AND_ASSIGN(ObjectInfo done,
                       store_->CompleteUpload(bucket_, upload.upload_id, {2, 4}, final_info));
  EXPECT_EQ(done.part_sizes, (std::vector<uint64_t>{bodies[1].size(), bodies[3].size()}));
  EXPECT_EQ(done.size, bodies[1].size() + bodies[3].size());
  EXPECT_TRUE(Body("subset").value_or("<error>") == bodies[1] + bodies[3]) << "wrong parts joined";
  ASSERT_OK_AND_ASSIGN(ObjectInfo head, store_->Head(bucket_, "subset"));
  EXPECT_EQ(head.part_sizes, done.part_sizes);
  EXPECT_EQ(head.etag, final_info.etag);
  EXPECT_OUTCOME(store_->GetUpload(bucket_, upload.upload_id), "NoSuchUpload");
}

TEST_P(ObjectStoreContract, CompleteWithAMissingPartIsInvalidPart) {
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, store_->CreateUpload(bucket_, "gappy", ObjectInfo{}));
  const std::string p1 = Pattern(kMinPartSize, 31), p2 = Pattern(20, 32);
  ASSERT_OK(PutPart(upload.upload_id, 1, p1));
  ASSERT_OK(PutPart(upload.upload_id, 2, p2));
  ObjectInfo final_info;
  final_info.key = "gappy";
  final_info.etag = MultipartEtag({p1, p2, "?"});
  EXPECT_OUTCOME(store_->CompleteUpload(bucket_, upload.upload_id, {1, 2, 3}, final_info),
                 "InvalidPart");
  final_info.etag = MultipartEtag({"?"});
  EXPECT_OUTCOME(store_->CompleteUpload(bucket_, upload.upload_id, {5}, final_info), "InvalidPart");
  EXPECT_OUTCOME(store_->Head(bucket_, "gappy"), "NoSuchKey");
  // The upload survives a refused completion, and can still be completed.
  EXPECT_OK(store_->GetUpload(bucket_, upload.upload_id));
  final_info.etag = MultipartEtag({p1, p2});
  ASSERT_OK(store_->CompleteUpload(bucket_, upload.upload_id, {1, 2}, final_info));
  EXPECT_TRUE(Body("gappy").value_or("<error>") == p1 + p2) << "the parts were joined wrongly";
}

TEST_P(ObjectStoreContract, CompleteUploadChecksConditions) {
  ASSERT_OK_AND_ASSIGN(ObjectInfo existing, Put("k", "existing"));
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, store_->CreateUpload(bucket_, "k", ObjectInfo{}));
  const std::string part = Pattern(50, 41);
  ASSERT_OK(PutPart(upload.upload_id, 1, part));
  ObjectInfo final_info;
  final_info.key = "k";
  final_info.etag = MultipartEtag({part});
  PutConditions absent;
  absent.if_none_match = true;
  EXPECT_OUTCOME(store_->CompleteUpload(bucket_, upload.upload_id, {1}, final_info, absent),
                 "PreconditionFailed");
  EXPECT_EQ(Body("k").value_or("<error>"), "existing");
  PutConditions stale;
  stale.if_match = Md5Hex("not the current object");
  EXPECT_OUTCOME(store_->CompleteUpload(bucket_, upload.upload_id, {1}, final_info, stale),
                 "PreconditionFailed");
  PutConditions current;
  current.if_match = existing.etag;
  ASSERT_OK(store_->CompleteUpload(bucket_, upload.upload_id, {1}, final_info, current));
  EXPECT_EQ(Body("k").value_or("<error>"), part);
}

TEST_P(ObjectStoreContract, AbortUploadDiscardsIt) {
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, store_->CreateUpload(bucket_, "aborted", ObjectInfo{}));
  ASSERT_OK(PutPart(upload.upload_id, 1, "part"));
  ASSERT_OK(store_->AbortUpload(bucket_, upload.upload_id));
  EXPECT_OUTCOME(store_->GetUpload(bucket_, upload.upload_id), "NoSuchUpload");
  EXPECT_OUTCOME(store_->ListParts(bucket_, upload.upload_id), "NoSuchUpload");
  EXPECT_OUTCOME(store_->BeginPart(bucket_, upload.upload_id, 2), "NoSuchUpload");
  ObjectInfo final_info;
  final_info.key = "aborted";
  EXPECT_OUTCOME(store_->CompleteUpload(bucket_, upload.upload_id, {1}, final_info),
                 "NoSuchUpload");
  EXPECT_OUTCOME(store_->AbortUpload(bucket_, upload.upload_id), "NoSuchUpload");
  EXPECT_OUTCOME(store_->Head(bucket_, "aborted"), "NoSuchKey");
  ASSERT_OK_AND_ASSIGN(auto uploads, store_->ListUploads(bucket_, ""));
  EXPECT_TRUE(uploads.empty());
}

TEST_P(ObjectStoreContract, PartDeclaredSize) {
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, store_->CreateUpload(bucket_, "sized", ObjectInfo{}));
  EXPECT_OUTCOME(PutPart(upload.upload_id, 1, "abcd", 10), "invalid_input");
  ASSERT_OK_AND_ASSIGN(auto writer, store_->BeginPart(bucket_, upload.upload_id, 2, 2));
  EXPECT_OUTCOME(writer->Write("abcd", 4), "invalid_input");
  EXPECT_FALSE(writer->Commit(ObjectInfo{}).has_value());
  ASSERT_OK_AND_ASSIGN(auto none, store_->ListParts(bucket_, upload.upload_id));
  EXPECT_TRUE(none.empty()) << "a part of the wrong size was stored";
  ASSERT_OK(PutPart(upload.upload_id, 3, "abcd", 4));
  ASSERT_OK_AND_ASSIGN(auto parts, store_->ListParts(bucket_, upload.upload_id));
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].part_number, 3);
}

TEST_P(ObjectStoreContract, ListUploadsByPrefix) {
  std::multiset<std::pair<std::string, std::string>> logs, all;
  for (std::string key : {"logs/a", "logs/a", "logs/b", "data/x"}) {
    ASSERT_OK_AND_ASSIGN(UploadInfo u, store_->CreateUpload(bucket_, key, ObjectInfo{}));
    all.insert({key, u.upload_id});
    if (key.starts_with("logs/")) logs.insert({key, u.upload_id});
  }
  auto listed = [&](const std::string& prefix) {
    std::multiset<std::pair<std::string, std::string>> out;
    auto uploads = store_->ListUploads(bucket_, prefix);
    if (!uploads) {
      ADD_FAILURE() << "ListUploads(" << prefix << "): " << uploads.error().message;
      return out;
    }
    for (const auto& u : *uploads) out.insert({u.key, u.upload_id});
    return out;
  };
  EXPECT_EQ(listed("logs/"), logs);
  EXPECT_EQ(listed(""), all);
  EXPECT_EQ(listed("data/").size(), 1u);
  EXPECT_TRUE(listed("nothing/").empty());
  EXPECT_EQ(all.size(), 4u);
  std::set<std::string> ids;
  for (const auto& [key, id] : all) ids.insert(id);
  EXPECT_EQ(ids.size(), 4u) << "upload ids must be distinct, even for one key";
  EXPECT_OUTCOME(store_->ListUploads(FreshBucketName(), ""), "NoSuchBucket");
}

TEST_P(ObjectStoreContract, UnknownUploadIsNoSuchUpload) {
  const std::string unknown = "no-such-upload-" + RandomHex(8);
  EXPECT_OUTCOME(store_->GetUpload(bucket_, unknown), "NoSuchUpload");
  EXPECT_OUTCOME(store_->ListParts(bucket_, unknown), "NoSuchUpload");
  EXPECT_OUTCOME(store_->BeginPart(bucket_, unknown, 1), "NoSuchUpload");
  ObjectInfo final_info;
  final_info.key = "k";
  EXPECT_OUTCOME(store_->CompleteUpload(bucket_, unknown, {1}, final_info), "NoSuchUpload");
  EXPECT_OUTCOME(store_->AbortUpload(bucket_, unknown), "NoSuchUpload");
  // An upload belongs to its bucket.
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, store_->CreateUpload(bucket_, "k", ObjectInfo{}));
  const std::string other = FreshBucketName();
  ASSERT_OK(store_->CreateBucket(other));
  EXPECT_OUTCOME(store_->GetUpload(other, upload.upload_id), "NoSuchUpload");
  EXPECT_OUTCOME(store_->CreateUpload(FreshBucketName(), "k", ObjectInfo{}), "NoSuchBucket");
}

// ---------------------------------------------------------------------------------------
// Large objects, whole buckets

TEST_P(ObjectStoreContract, MultiMebibyteObjectRoundTrips) {
  // Past the sizes where backends switch strategy (local disk: 8 MiB for read-ahead and
  // hashing on a helper thread; S3: multi-chunk bodies).
  const std::string body = Pattern(9 * 1024 * 1024 + 123, 51);
  ASSERT_OK_AND_ASSIGN(ObjectInfo committed, PutIn(bucket_, "large", body, {}, {}, body.size()));
  EXPECT_EQ(committed.size, body.size());
  EXPECT_EQ(committed.etag, Md5Hex(body));
  ASSERT_OK_AND_ASSIGN(std::string whole, Body("large"));
  EXPECT_TRUE(whole == body) << "the large object read back differs (" << whole.size() << " bytes)";
  const uint64_t offset = 4 * 1024 * 1024 + 5, length = 3 * 1024 * 1024 + 1;
  ASSERT_OK_AND_ASSIGN(std::string range, GetBody(bucket_, "large", offset, length));
  EXPECT_TRUE(range == body.substr(offset, length)) << "the range read back differs";
}

// Size and headers known before the body: a remote backend streams it to its store,
// holding the end back until Commit (object_store.h). Same contract as a spooled put.
TEST_P(ObjectStoreContract, StreamedPutStoresHeadersAndCommitInfo) {
  const std::string body = Pattern(3 * 1024 * 1024 + 17, 61);
  const std::map<std::string, std::string> headers = {{"Content-Type", "application/x-parquet"},
                                                      {"x-amz-meta-writer", "contract"}};
  ASSERT_OK(Put("streamed", "older version, with other tags", [] {
    ObjectInfo i;
    i.tags = {{"old", "yes"}};
    return i;
  }()));
  ASSERT_OK_AND_ASSIGN(auto writer,
                       store_->BeginPut(bucket_, "streamed", {}, body.size(), headers));
  for (size_t at = 0; at < body.size(); at += 700 * 1024) {
    ASSERT_OK(writer->Write(body.data() + at, std::min<size_t>(700 * 1024, body.size() - at)));
  }
  // Until Commit the old version is what readers see.
  EXPECT_EQ(Body("streamed").value_or("<error>"), "older version, with other tags");
  ObjectInfo info;
  info.headers = headers;
  info.tags = {{"team", "lake"}};
  info.acl = "public-read";
  info.checksums = {{"CRC32", Crc32Base64(body)}, {"type", "FULL_OBJECT"}};
  ASSERT_OK_AND_ASSIGN(ObjectInfo committed, writer->Commit(info));
  EXPECT_EQ(committed.etag, Md5Hex(body));
  EXPECT_EQ(committed.size, body.size());
  ASSERT_OK_AND_ASSIGN(ObjectInfo head, store_->Head(bucket_, "streamed"));
  EXPECT_EQ(head.etag, Md5Hex(body));
  EXPECT_EQ(head.headers["Content-Type"], "application/x-parquet");
  EXPECT_EQ(head.headers["x-amz-meta-writer"], "contract");
  EXPECT_EQ(head.tags, info.tags);
  EXPECT_EQ(head.acl, "public-read");
  EXPECT_EQ(head.checksums["CRC32"], Crc32Base64(body));
  ASSERT_OK_AND_ASSIGN(std::string back, Body("streamed"));
  EXPECT_TRUE(back == body) << "the streamed object read back differs";
}

TEST_P(ObjectStoreContract, StreamedPutAbortedShortOrRefusedLeavesNothing) {
  const std::string body = Pattern(2 * 1024 * 1024 + 3, 62);
  const std::map<std::string, std::string> headers = {{"Content-Type", "text/plain"}};
  ASSERT_OK(Put("kept", "original"));
  for (const char* key : {"kept", "fresh"}) {
    {  // every byte written, then aborted (a body that failed verification)
      ASSERT_OK_AND_ASSIGN(auto writer, store_->BeginPut(bucket_, key, {}, body.size(), headers));
      ASSERT_OK(writer->Write(body.data(), body.size()));
      writer->Abort();
    }
    {  // dropped half-way (a client gone)
      ASSERT_OK_AND_ASSIGN(auto writer, store_->BeginPut(bucket_, key, {}, body.size(), headers));
      ASSERT_OK(writer->Write(body.data(), body.size() / 2));
    }
    {  // short at Commit
      ASSERT_OK_AND_ASSIGN(auto writer, store_->BeginPut(bucket_, key, {}, body.size(), headers));
      ASSERT_OK(writer->Write(body.data(), body.size() - 1));
      ObjectInfo info;
      info.headers = headers;
      EXPECT_OUTCOME(writer->Commit(info), "invalid_input");
    }
    {  // a condition that no longer holds at Commit
      PutConditions absent;
      absent.if_none_match = true;
      if (std::string(key) == "fresh") ASSERT_OK(Put("fresh", "arrived first"));
      ASSERT_OK_AND_ASSIGN(auto writer,
                           store_->BeginPut(bucket_, key, absent, body.size(), headers));
      ASSERT_OK(writer->Write(body.data(), body.size()));
      ObjectInfo info;
      info.headers = headers;
      EXPECT_OUTCOME(writer->Commit(info), "PreconditionFailed");
    }
  }
  EXPECT_EQ(Body("kept").value_or("<error>"), "original");
  EXPECT_EQ(Body("fresh").value_or("<error>"), "arrived first");
}

TEST_P(ObjectStoreContract, StreamedPartsCompleteAndAbortedPartsLeaveNothing) {
  const std::string one = Pattern(5 * 1024 * 1024, 63), two = Pattern(1024 * 1024 + 9, 64);
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, store_->CreateUpload(bucket_, "mp", ObjectInfo{}));
  {  // aborted after every byte: no part
    ASSERT_OK_AND_ASSIGN(auto writer, store_->BeginPart(bucket_, upload.upload_id, 1, one.size()));
    ASSERT_OK(writer->Write(one.data(), one.size()));
    writer->Abort();
  }
  ASSERT_OK_AND_ASSIGN(auto none, store_->ListParts(bucket_, upload.upload_id));
  EXPECT_TRUE(none.empty());
  ASSERT_OK_AND_ASSIGN(ObjectInfo p1, PutPart(upload.upload_id, 1, one, one.size()));
  ASSERT_OK_AND_ASSIGN(ObjectInfo p2, PutPart(upload.upload_id, 2, two, two.size()));
  EXPECT_EQ(p1.etag, Md5Hex(one));
  EXPECT_EQ(p2.etag, Md5Hex(two));
  ObjectInfo final_info;
  final_info.key = "mp";
  final_info.etag = MultipartEtag({one, two});  // the layer above computes it
  ASSERT_OK(store_->CompleteUpload(bucket_, upload.upload_id, {1, 2}, final_info));
  ASSERT_OK_AND_ASSIGN(ObjectInfo head, store_->Head(bucket_, "mp"));
  EXPECT_EQ(head.etag, MultipartEtag({one, two}));
  EXPECT_EQ(head.size, one.size() + two.size());
  ASSERT_OK_AND_ASSIGN(std::string back, Body("mp"));
  EXPECT_TRUE(back == one + two) << "the completed object differs";
}

TEST_P(ObjectStoreContract, DeleteBucketWithContentsEmptiesAndDeletesIt) {
  // A bucket whose name extends ours: a backend keeping buckets as key prefixes must not
  // let one reach into the other.
  const std::string doomed = bucket_ + "x";
  ASSERT_OK(store_->CreateBucket(doomed));
  ASSERT_OK(PutIn(doomed, "a", "1"));
  ASSERT_OK(PutIn(doomed, "dir/b", "0123456789"));
  ASSERT_OK(PutIn(doomed, "dir/sub/c", std::string(100, 'c')));
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, store_->CreateUpload(doomed, "open", ObjectInfo{}));
  ASSERT_OK_AND_ASSIGN(auto writer, store_->BeginPart(doomed, upload.upload_id, 1));
  ASSERT_OK(writer->Write("part", 4));
  ASSERT_OK(writer->Commit(ObjectInfo{}));
  ASSERT_OK(Put("a", "ours"));
  ASSERT_OK_AND_ASSIGN(ListResult ours, store_->List(bucket_, ListOptions{}));
  EXPECT_EQ(Keys(ours), std::vector<std::string>{"a"});

  ASSERT_OK_AND_ASSIGN(EmptiedBucket emptied, DeleteBucketWithContents(*store_, doomed));
  EXPECT_EQ(emptied.objects, 3u);
  EXPECT_EQ(emptied.bytes, 111u);
  EXPECT_OUTCOME(store_->HeadBucket(doomed), "NoSuchBucket");
  ASSERT_OK_AND_ASSIGN(auto buckets, store_->ListBuckets());
  for (const auto& b : buckets) EXPECT_NE(b.name, doomed);
  // A retried deletion of a bucket already gone succeeds.
  ASSERT_OK_AND_ASSIGN(EmptiedBucket again, DeleteBucketWithContents(*store_, doomed));
  EXPECT_EQ(again.objects, 0u);
  // Made again, the bucket has none of the old objects or uploads.
  ASSERT_OK(store_->CreateBucket(doomed));
  ASSERT_OK_AND_ASSIGN(ListResult reborn, store_->List(doomed, ListOptions{}));
  EXPECT_TRUE(reborn.objects.empty());
  ASSERT_OK_AND_ASSIGN(auto uploads, store_->ListUploads(doomed, ""));
  EXPECT_TRUE(uploads.empty());
  EXPECT_OUTCOME(store_->GetUpload(doomed, upload.upload_id), "NoSuchUpload");
  // The neighbour is untouched.
  EXPECT_EQ(Body("a").value_or("<error>"), "ours");
}

INSTANTIATE_TEST_SUITE_P(Backends, ObjectStoreContract, ::testing::ValuesIn(Backends()),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return info.param.name;
                         });

#if TABLEMERE_HAVE_S3_STORE
// Two servers in front of one store that ignores conditions (as the ConditionsHere
// variant has the server assume), sharing the metastore's key locks as replicas do:
// If-None-Match writers racing through both still see exactly one winner, and an
// If-Match writer never overwrites a version it did not name.
TEST(S3BackendReplicas, ConditionalWritesAreExactAcrossServersSharingKeyLocks) {
  auto weed = SharedSeaweed();
  ASSERT_TRUE(weed.has_value()) << weed.error().message;
  const fs::path dir = fs::temp_directory_path() /
                       ("tm-replicas-" + std::to_string(::getpid()) + "-" + RandomHex(6));
  fs::create_directories(dir / "spool");
  auto meta = metastore::OpenSqliteMetastore((dir / "state.db").string(), TestClock());
  ASSERT_TRUE(meta.has_value()) << meta.error().message;
  MetastoreKeyLocks locks((*meta)->key_locks(), TestClock());
  S3StoreConfig config;
  config.endpoint = (*weed)->endpoint();
  config.bucket = (*weed)->bucket();
  config.root = "replicas-" + RandomHex(6);
  config.access_key = (*weed)->access_key();
  config.secret_key = (*weed)->secret_key();
  config.spool_dir = (dir / "spool").string();
  config.enforce_conditions_here = true;
  config.shared_locks = &locks;
  std::vector<std::unique_ptr<ObjectStore>> servers;
  for (int i = 0; i < 2; i++) {
    auto store = OpenS3Store(config, TestClock(), TestRandom());
    ASSERT_TRUE(store.has_value()) << store.error().message;
    ASSERT_TRUE((*store)->OpenBucket("r").has_value());
    servers.push_back(std::move(*store));
  }
  constexpr int kWriters = 8;
  for (int round = 0; round < 4; round++) {
    const std::string key = "race-" + std::to_string(round);
    auto outcomes =
        RaceCreates([&](int w) -> ObjectStore& { return *servers[w % 2]; }, "r", key, kWriters);
    EXPECT_EQ(std::count(outcomes.begin(), outcomes.end(), "ok"), 1) << "round " << round;
    EXPECT_EQ(std::count(outcomes.begin(), outcomes.end(), "PreconditionFailed"), kWriters - 1)
        << "round " << round;
  }
  // No lock outlives its write.
  for (int round = 0; round < 4; round++) {
    const std::string locked = config.root + "/r/race-" + std::to_string(round);
    EXPECT_TRUE(
        (*meta)->key_locks().TryLock(locked, "test", TestClock().NowMillis(), 1).value_or(false))
        << locked << " is still locked";
  }
  servers.clear();
  std::error_code ec;
  fs::remove_all(dir, ec);
}
#endif

}  // namespace
}  // namespace tablemere::objectstore
