#include "objectstore/local_disk.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "sqlite/sqlite.h"

namespace tablemere::objectstore {
namespace {

class LocalDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tm-objstore-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    store_ = OpenLocalDiskStore(dir_.string(), clock_, random_).value();
    ASSERT_TRUE(store_->OpenBucket("b").has_value());
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Put(const std::string& key, const std::string& data) {
    auto w = store_->BeginPut("b", key).value();
    ASSERT_TRUE(w->Write(data.data(), data.size()).has_value());
    ObjectInfo info;
    ASSERT_TRUE(w->Commit(info).has_value());
  }
  std::string ReadAll(const std::string& key) {
    auto r = store_->Get("b", key, 0, std::nullopt, nullptr).value();
    std::string out(1024, '\0');
    size_t n = r->Read(out.data(), out.size()).value();
    out.resize(n);
    return out;
  }
  std::filesystem::path dir_;
  SystemClock clock_;
  SystemRandom random_;
  std::unique_ptr<ObjectStore> store_;
};

TEST_F(LocalDiskTest, PutGetOverwriteDelete) {
  Put("k", "hello");
  EXPECT_EQ(ReadAll("k"), "hello");
  EXPECT_EQ(store_->Head("b", "k")->etag, "5d41402abc4b2a76b9719d911017c592");
  Put("k", "bye");
  EXPECT_EQ(ReadAll("k"), "bye");
  ASSERT_TRUE(store_->Delete("b", "k").has_value());
  EXPECT_EQ(store_->Head("b", "k").error().Detail("store_failure"), "NoSuchKey");
  EXPECT_EQ(store_->Head("zz", "k").error().Detail("store_failure"), "NoSuchBucket");
}

TEST_F(LocalDiskTest, UncommittedWriteIsInvisible) {
  auto w = store_->BeginPut("b", "pending").value();
  ASSERT_TRUE(w->Write("abc", 3).has_value());
  EXPECT_FALSE(store_->Head("b", "pending").has_value());
  w->Abort();
  EXPECT_FALSE(store_->Head("b", "pending").has_value());
}

TEST_F(LocalDiskTest, ListingFollowsByteOrderWithDelimiterAndPaging) {
  for (std::string k : {"a/1", "a/2", "b", "c/x/y", "c/z", "d", "\xc3\xbc"}) Put(k, "x");
  ListOptions opts;
  opts.delimiter = "/";
  auto all = store_->List("b", opts).value();
  std::vector<std::string> keys;
  for (auto& o : all.objects) keys.push_back(o.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"b", "d", "\xc3\xbc"}));
  EXPECT_EQ(all.common_prefixes, (std::vector<std::string>{"a/", "c/"}));
  // Page through two entries at a time, CPs and keys interleaved in order.
  std::vector<std::string> seen;
  opts.max_keys = 2;
  std::string marker;
  for (int i = 0; i < 10; i++) {
    opts.continuation = marker;
    auto page = store_->List("b", opts).value();
    for (auto& cp : page.common_prefixes) seen.push_back(cp);
    for (auto& o : page.objects) seen.push_back(o.key);
    if (!page.truncated) break;
    marker = page.next_marker;
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"a/", "b", "c/", "d", "\xc3\xbc"}));
  ListOptions pre;
  pre.prefix = "c/";
  pre.delimiter = "/";
  auto c = store_->List("b", pre).value();
  EXPECT_EQ(c.common_prefixes, (std::vector<std::string>{"c/x/"}));
  ASSERT_EQ(c.objects.size(), 1u);
  EXPECT_EQ(c.objects[0].key, "c/z");
}

TEST_F(LocalDiskTest, MultipartCompleteAndAbort) {
  ObjectInfo pending;
  auto up = store_->CreateUpload("b", "big", pending).value();
  for (int n : {2, 1}) {
    auto w = store_->BeginPart("b", up.upload_id, n).value();
    std::string data = n == 1 ? "first-" : "second";
    ASSERT_TRUE(w->Write(data.data(), data.size()).has_value());
    ASSERT_TRUE(w->Commit(ObjectInfo{}).has_value());
  }
  EXPECT_EQ(store_->ListParts("b", up.upload_id)->size(), 2u);
  ObjectInfo fin;
  fin.key = "big";
  fin.etag = "x-2";
  ASSERT_TRUE(store_->CompleteUpload("b", up.upload_id, {1, 2}, fin).has_value());
  EXPECT_EQ(ReadAll("big"), "first-second");
  EXPECT_EQ(store_->Head("b", "big")->part_sizes, (std::vector<uint64_t>{6, 6}));
  EXPECT_EQ(store_->GetUpload("b", up.upload_id).error().Detail("store_failure"), "NoSuchUpload");
  auto up2 = store_->CreateUpload("b", "gone", pending).value();
  ASSERT_TRUE(store_->AbortUpload("b", up2.upload_id).has_value());
  EXPECT_FALSE(store_->ListParts("b", up2.upload_id).has_value());
}

// Large reads are filled ahead on a helper thread and lent without a copy; every byte
// must still arrive once, in order, whatever slices the consumer asks for.
TEST_F(LocalDiskTest, LargeReadsArriveWholeAndInOrder) {
  std::string data(20 * 1024 * 1024 + 123, '\0');
  for (size_t i = 0; i < data.size(); i++) data[i] = static_cast<char>((i * 131 + i / 4096) & 0xff);
  Put("large", data);
  // Whole object through Next, with slice sizes that straddle the helper's chunks.
  auto whole = store_->Get("b", "large", 0, std::nullopt, nullptr).value();
  std::string got;
  const size_t slices[] = {1, 4095, 1 << 20, 3 << 20, 77777};
  for (size_t i = 0;; i++) {
    auto view = whole->Next(slices[i % 5]).value();
    if (view.empty()) break;
    got.append(view);
  }
  EXPECT_TRUE(got == data);
  // A range through Read, starting mid-chunk.
  const uint64_t offset = 5 * 1024 * 1024 + 17;
  const uint64_t length = 9 * 1024 * 1024 + 5;
  auto range = store_->Get("b", "large", offset, length, nullptr).value();
  std::string part;
  std::string buf(300000, '\0');
  while (true) {
    size_t n = range->Read(buf.data(), buf.size()).value();
    if (n == 0) break;
    part.append(buf.data(), n);
  }
  EXPECT_TRUE(part == data.substr(offset, length));
  // Abandoned part-way: the helper must stop cleanly.
  auto abandoned = store_->Get("b", "large", 0, std::nullopt, nullptr).value();
  EXPECT_EQ(abandoned->Next(1000).value().size(), 1000u);
  abandoned.reset();
}

// A blob cut short under a large read fails the read, and keeps failing it, instead of
// waiting for bytes that will not come.
TEST_F(LocalDiskTest, LargeReadOfATruncatedBlobFailsAndStaysFailed) {
  Put("cut", std::string(12 * 1024 * 1024, 'c'));
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_ / "blobs")) {
    if (entry.is_regular_file() && entry.file_size() == 12u * 1024 * 1024) {
      std::filesystem::resize_file(entry.path(), 1024 * 1024);
    }
  }
  auto reader = store_->Get("b", "cut", 0, std::nullopt, nullptr).value();
  uint64_t got = 0;
  Result<std::string_view> view = std::string_view();
  while (true) {
    view = reader->Next(256 * 1024);
    if (!view || view->empty()) break;
    got += view->size();
  }
  ASSERT_FALSE(view.has_value());
  EXPECT_LT(got, 12u * 1024 * 1024);
  EXPECT_FALSE(reader->Next(1024).has_value());
  std::string buf(1024, '\0');
  EXPECT_FALSE(reader->Read(buf.data(), buf.size()).has_value());
}

// An index written before objects remembered their part sizes opens, and its objects
// read as written in one piece.
TEST_F(LocalDiskTest, IndexWithoutPartSizesIsUpgraded) {
  store_.reset();
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
  {
    auto db = sqlite::Db::Open((dir_ / "index.db").string(), true).value();
    ASSERT_TRUE(db->Exec("CREATE TABLE buckets (name TEXT PRIMARY KEY, created_ms INTEGER NOT "
                         "NULL); CREATE TABLE objects (bucket TEXT NOT NULL, key TEXT NOT NULL, "
                         "blob TEXT NOT NULL, size INTEGER NOT NULL, etag TEXT NOT NULL, "
                         "modified_ms INTEGER NOT NULL, headers TEXT NOT NULL, checksums TEXT "
                         "NOT NULL, PRIMARY KEY (bucket, key)) WITHOUT ROWID; INSERT INTO buckets "
                         "VALUES('b', 1); INSERT INTO objects VALUES('b', 'old', 'blob', 3, "
                         "'e-2', 1, '{}', '{}');")
                    .has_value());
  }
  store_ = OpenLocalDiskStore(dir_.string(), clock_, random_).value();
  auto old = store_->Head("b", "old");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->etag, "e-2");
  EXPECT_TRUE(old->part_sizes.empty());
  Put("new", "abc");
  EXPECT_EQ(ReadAll("new"), "abc");
}

// ListUploads stops at the first key past the prefix; the statement must still be
// reset, or the reader connection keeps that snapshot and later writes stay invisible.
TEST_F(LocalDiskTest, ListUploadsByPrefixDoesNotHideLaterWrites) {
  ObjectInfo pending;
  ASSERT_TRUE(store_->CreateUpload("b", "a", pending).has_value());
  ASSERT_TRUE(store_->CreateUpload("b", "z", pending).has_value());
  auto uploads = store_->ListUploads("b", "a").value();
  ASSERT_EQ(uploads.size(), 1u);
  Put("fresh", "new");
  EXPECT_EQ(ReadAll("fresh"), "new");
  ASSERT_TRUE(store_->Delete("b", "fresh").has_value());
  EXPECT_FALSE(store_->Head("b", "fresh").has_value());
}

TEST_F(LocalDiskTest, CloseBucketRemovesUnfinishedUploadParts) {
  auto count_blobs = [&] {
    size_t n = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir_ / "blobs")) {
      if (e.is_regular_file()) n++;
    }
    return n;
  };
  ObjectInfo pending;
  auto up = store_->CreateUpload("b", "k", pending).value();
  auto w = store_->BeginPart("b", up.upload_id, 1).value();
  ASSERT_TRUE(w->Write("part", 4).has_value());
  ASSERT_TRUE(w->Commit(ObjectInfo{}).has_value());
  EXPECT_EQ(count_blobs(), 1u);
  ASSERT_TRUE(store_->CloseBucket("b").has_value());
  EXPECT_EQ(count_blobs(), 0u);
}

TEST_F(LocalDiskTest, CloseBucketRequiresEmpty) {
  Put("k", "v");
  EXPECT_EQ(store_->CloseBucket("b").error().Detail("store_failure"), "BucketNotEmpty");
  ASSERT_TRUE(store_->Delete("b", "k").has_value());
  EXPECT_TRUE(store_->CloseBucket("b").has_value());
}

// A failed directory sync in a group commit fails that batch and every later write
// (sticky), and the object it would have published stays invisible.
TEST_F(LocalDiskTest, FailedDirectorySyncIsSticky) {
  bool fail_sync = false;
  store_.reset();
  store_ = OpenLocalDiskStore(dir_.string(), clock_, random_,
                              LocalDiskFaults{.directory_fsync =
                                                  [&](int fd) {
                                                    if (fail_sync) return -1;
                                                    return ::fsync(fd);
                                                  }})
               .value();
  Put("before", "ok");
  ObjectInfo pending;
  auto up = store_->CreateUpload("b", "big", pending).value();
  auto w = store_->BeginPart("b", up.upload_id, 1).value();
  ASSERT_TRUE(w->Write("part", 4).has_value());
  ASSERT_TRUE(w->Commit(ObjectInfo{}).has_value());
  fail_sync = true;
  ObjectInfo fin;
  fin.key = "big";
  auto done = store_->CompleteUpload("b", up.upload_id, {1}, fin);
  ASSERT_FALSE(done.has_value());
  EXPECT_EQ(done.error().code, ErrorCode::kUnavailable);
  EXPECT_FALSE(store_->Head("b", "big").has_value());
  // The disk "recovers", but the store does not trust it until reopened.
  fail_sync = false;
  auto later = store_->BeginPut("b", "after").value();
  ASSERT_TRUE(later->Write("x", 1).has_value());
  EXPECT_FALSE(later->Commit(ObjectInfo{}).has_value());
  EXPECT_FALSE(store_->Delete("b", "before").has_value());
  EXPECT_EQ(ReadAll("before"), "ok");
  store_.reset();
  store_ = OpenLocalDiskStore(dir_.string(), clock_, random_).value();
  Put("after", "y");
  EXPECT_EQ(ReadAll("after"), "y");
}

}  // namespace
}  // namespace tablemere::objectstore

namespace tablemere::objectstore {
namespace {

size_t BlobFiles(const std::filesystem::path& root) {
  size_t n = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(root / "blobs")) {
    n += e.is_regular_file() ? 1 : 0;
  }
  return n;
}

// Objects up to the inline limit (128 KiB) are kept in the index; larger ones in files.
constexpr size_t kLarge = 200 * 1024;

int64_t InlineRows(const std::filesystem::path& root) {
  auto db = sqlite::Db::Open((root / "index.db").string(), false).value();
  auto* st = db->Prepare("SELECT COUNT(*) FROM inline_blobs").value();
  EXPECT_TRUE(st->Bind({}).Step().value());
  int64_t n = st->Int(0);
  st->Bind({});
  return n;
}

std::string ReadWhole(ObjectStore& store, const std::string& key, uint64_t offset = 0,
                      std::optional<uint64_t> length = std::nullopt) {
  auto r = store.Get("b", key, offset, length, nullptr).value();
  std::string out, buf(64 * 1024, '\0');
  while (size_t n = r->Read(buf.data(), buf.size()).value()) out.append(buf.data(), n);
  return out;
}

// What the index snapshot names is in the backup, whole, even when it is overwritten or
// deleted while the backup runs: the bytes' deletion waits for Finish. Small objects
// travel inside the index copy, large ones as linked files.
TEST_F(LocalDiskTest, ABackupKeepsWhatItsSnapshotNamesThroughDeletes) {
  std::string v1(kLarge, '1'), v2(kLarge, '2'), gone(kLarge, 'g');
  Put("kept", v1);
  Put("gone", gone);
  Put("small-kept", "small one");
  Put("small-gone", "small and deleted");
  auto backup_dir = dir_.string() + "-backup";
  std::filesystem::remove_all(backup_dir);
  auto backup = store_->BeginBackup(backup_dir).value();
  ASSERT_TRUE(backup->Snapshot().has_value());
  Put("kept", v2);  // after the snapshot: not in the backup
  ASSERT_TRUE(store_->Delete("b", "gone").has_value());
  Put("small-kept", "small two");
  ASSERT_TRUE(store_->Delete("b", "small-gone").has_value());
  Put("new", std::string(kLarge, 'n'));
  ASSERT_TRUE(backup->Finish().has_value());
  EXPECT_EQ(BlobFiles(backup_dir), 2u);
  EXPECT_EQ(BlobFiles(dir_), 2u);  // the deferred deletions ran: "kept" v2 and "new"
  backup.reset();

  // The backup is a store of its own, as of the snapshot.
  auto restored = OpenLocalDiskStore(backup_dir, clock_, random_).value();
  EXPECT_EQ(ReadWhole(*restored, "kept"), v1);
  EXPECT_EQ(ReadWhole(*restored, "gone"), gone);
  EXPECT_EQ(ReadWhole(*restored, "small-kept"), "small one");
  EXPECT_EQ(ReadWhole(*restored, "small-gone"), "small and deleted");
  EXPECT_EQ(restored->Head("b", "new").error().Detail("store_failure"), "NoSuchKey");
  restored.reset();
  std::filesystem::remove_all(backup_dir);
}

// A small object is one row in the index, with no file; replacing or deleting it frees
// its bytes in the same transaction, whichever kind of object replaces it.
TEST_F(LocalDiskTest, SmallObjectsLiveInTheIndexAndLeaveNothingBehind) {
  std::string small = "0123456789abcdef";
  Put("k", small);
  EXPECT_EQ(BlobFiles(dir_), 0u);
  EXPECT_EQ(InlineRows(dir_), 1);
  EXPECT_EQ(store_->Head("b", "k")->size, small.size());
  EXPECT_EQ(store_->Head("b", "k")->etag, "4032af8d61035123906e58e067140cc5");
  EXPECT_EQ(ReadWhole(*store_, "k", 3, 4), "3456");
  EXPECT_EQ(ReadWhole(*store_, "k", 10), "abcdef");

  Put("k", "replaced");
  EXPECT_EQ(InlineRows(dir_), 1);
  EXPECT_EQ(ReadWhole(*store_, "k"), "replaced");

  // Of unknown size, growing past the limit: moved into a file on the way.
  std::string large(kLarge, 'L');
  large[kLarge - 1] = 'Z';
  Put("k", large);
  EXPECT_EQ(InlineRows(dir_), 0);
  EXPECT_EQ(BlobFiles(dir_), 1u);
  EXPECT_EQ(ReadWhole(*store_, "k"), large);
  EXPECT_EQ(store_->Head("b", "k")->size, kLarge);

  Put("k", small);
  EXPECT_EQ(BlobFiles(dir_), 0u);
  EXPECT_EQ(InlineRows(dir_), 1);

  // Durable and readable across a reopen.
  Put("empty", "");
  store_.reset();
  store_ = OpenLocalDiskStore(dir_.string(), clock_, random_).value();
  EXPECT_EQ(ReadWhole(*store_, "k"), small);
  EXPECT_EQ(ReadWhole(*store_, "empty"), "");
  EXPECT_EQ(store_->Head("b", "empty")->etag, "d41d8cd98f00b204e9800998ecf8427e");

  ASSERT_TRUE(store_->Delete("b", "k").has_value());
  ASSERT_TRUE(store_->Delete("b", "empty").has_value());
  EXPECT_EQ(InlineRows(dir_), 0);
  EXPECT_EQ(store_->Head("b", "k").error().Detail("store_failure"), "NoSuchKey");
}

// Commits do not checkpoint the write-ahead log themselves (that would stall a group
// commit behind megabytes of writes and a sync of the index file); a helper thread does,
// so the index file receives the pages while the log stays bounded.
TEST_F(LocalDiskTest, TheLogIsCheckpointedByTheHelper) {
  const std::string body(16 * 1024, 'w');
  for (int i = 0; i < 400; i++) Put("w" + std::to_string(i), body);  // ~6.5 MB of pages
  const auto index = dir_ / "index.db";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::filesystem::file_size(index) < 4u * 1024 * 1024 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GE(std::filesystem::file_size(index), 4u * 1024 * 1024);
  EXPECT_LT(std::filesystem::file_size(dir_ / "index.db-wal"), 40u * 1024 * 1024);
  EXPECT_EQ(ReadWhole(*store_, "w0"), body);
  EXPECT_EQ(ReadWhole(*store_, "w399"), body);
}

// A declared size holds for small objects too, and a failed conditional write of a small
// object leaves neither its bytes nor a changed object.
TEST_F(LocalDiskTest, SmallObjectsKeepSizesAndConditions) {
  auto w = store_->BeginPut("b", "sized", {}, uint64_t{4}).value();
  EXPECT_FALSE(w->Write("12345", 5).has_value());
  EXPECT_EQ(store_->Head("b", "sized").error().Detail("store_failure"), "NoSuchKey");

  Put("c", "first");
  PutConditions only_new;
  only_new.if_none_match = true;
  auto cond = store_->BeginPut("b", "c", only_new).value();
  ASSERT_TRUE(cond->Write("second", 6).has_value());
  auto done = cond->Commit(ObjectInfo{});
  ASSERT_FALSE(done.has_value());
  EXPECT_EQ(done.error().Detail("store_failure"), "PreconditionFailed");
  EXPECT_EQ(ReadWhole(*store_, "c"), "first");
  EXPECT_EQ(InlineRows(dir_), 1);

  // A declared small body for a missing bucket is refused when published (its bucket is
  // looked up then, not before), and leaves nothing; larger ones are refused at once.
  auto orphan = store_->BeginPut("zz", "k", {}, uint64_t{3});
  if (orphan) {
    ASSERT_TRUE((*orphan)->Write("abc", 3).has_value());
    auto published = (*orphan)->Commit(ObjectInfo{});
    ASSERT_FALSE(published.has_value());
    EXPECT_EQ(published.error().Detail("store_failure"), "NoSuchBucket");
  } else {
    EXPECT_EQ(orphan.error().Detail("store_failure"), "NoSuchBucket");
  }
  auto large = store_->BeginPut("zz", "k", {}, uint64_t{1} << 20);
  ASSERT_FALSE(large.has_value());
  EXPECT_EQ(large.error().Detail("store_failure"), "NoSuchBucket");
  EXPECT_EQ(InlineRows(dir_), 1);

  // A copy of a small object is small too.
  ASSERT_TRUE(store_->Copy("b", "c", "b", "c2", std::nullopt).has_value());
  EXPECT_EQ(ReadWhole(*store_, "c2"), "first");
  EXPECT_EQ(InlineRows(dir_), 2);
  EXPECT_EQ(BlobFiles(dir_), 0u);
}

}  // namespace
}  // namespace tablemere::objectstore
