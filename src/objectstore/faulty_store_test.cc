#include "objectstore/faulty_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "metastore/metastore.h"
#include "objectstore/local_disk.h"
#include "objectstore/registered_store.h"
#include "sqlite/sqlite.h"

namespace tablemere::objectstore {
namespace {

namespace fs = std::filesystem;

// Time that passes only when the fake sleep spends it.
class ManualClock final : public Clock {
 public:
  int64_t NowMillis() const override { return now_ms_.load(); }
  void Advance(int64_t millis) { now_ms_ += millis; }

 private:
  std::atomic<int64_t> now_ms_{1'700'000'000'000};
};

bool Injected(const Error& error) { return !error.Detail("injected_fault").empty(); }

class FaultyStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tm-faulty-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    auto base = OpenLocalDiskStore(dir_.string(), clock_, random_);
    ASSERT_TRUE(base.has_value()) << base.error().message;
    store_ = std::make_unique<FaultyStore>(std::move(*base), [this](int64_t millis) {
      slept_ms_ += millis;
      clock_.Advance(millis);
    });
    ASSERT_TRUE(store_->OpenBucket("b").has_value());
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  Result<ObjectInfo> Put(ObjectStore& store, const std::string& key, const std::string& body) {
    TM_ASSIGN(auto writer, store.BeginPut("b", key));
    TM_TRY(writer->Write(body.data(), body.size()));
    return writer->Commit(ObjectInfo{});
  }
  // Reads through `reader` with buffers of `chunk`, noting the largest piece handed back.
  static Result<std::string> Drain(ObjectReader& reader, size_t chunk, size_t* largest = nullptr) {
    std::string out;
    std::string buffer(chunk, '\0');
    while (true) {
      TM_ASSIGN(size_t n, reader.Read(buffer.data(), buffer.size()));
      if (n == 0) return out;
      if (largest) *largest = std::max(*largest, n);
      out.append(buffer.data(), n);
    }
  }
  Result<std::string> Body(ObjectStore& store, const std::string& key) {
    TM_ASSIGN(auto reader, store.Get("b", key, 0, std::nullopt, nullptr));
    return Drain(*reader, 4096);
  }
  // Stored object bytes: files, and small objects' rows in the index.
  size_t StoredBlobs() const {
    size_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir_ / "blobs")) {
      if (e.is_regular_file()) n++;
    }
    auto db = sqlite::Db::Open((dir_ / "index.db").string(), false).value();
    auto* st = db->Prepare("SELECT COUNT(*) FROM inline_blobs").value();
    EXPECT_TRUE(st->Bind({}).Step().value());
    n += static_cast<size_t>(st->Int(0));
    st->Bind({});
    return n;
  }

  fs::path dir_;
  ManualClock clock_;
  SystemRandom random_;
  std::atomic<int64_t> slept_ms_{0};
  std::unique_ptr<FaultyStore> store_;
};

TEST_F(FaultyStoreTest, WithoutFaultsEverythingPassesThrough) {
  ASSERT_TRUE(Put(*store_, "k", "hello").has_value());
  EXPECT_EQ(Body(*store_, "k").value_or("<error>"), "hello");
  EXPECT_EQ(store_->Head("b", "k")->etag, "5d41402abc4b2a76b9719d911017c592");
  auto upload = store_->CreateUpload("b", "mp", ObjectInfo{}).value();
  auto part = store_->BeginPart("b", upload.upload_id, 1).value();
  ASSERT_TRUE(part->Write("part", 4).has_value());
  ASSERT_TRUE(part->Commit(ObjectInfo{}).has_value());
  ObjectInfo final_info;
  final_info.key = "mp";
  ASSERT_TRUE(store_->CompleteUpload("b", upload.upload_id, {1}, final_info).has_value());
  EXPECT_EQ(store_->List("b", ListOptions{})->objects.size(), 2u);
  EXPECT_EQ(store_->Calls(StoreOp::kBeginPut), 1u);
  EXPECT_EQ(store_->Calls(StoreOp::kCommit), 2u);  // the object's and the part's
  EXPECT_EQ(store_->Calls(StoreOp::kGet), 1u);
  EXPECT_GE(store_->Calls(StoreOp::kRead), 2u);
  EXPECT_EQ(slept_ms_, 0);
}

TEST_F(FaultyStoreTest, FailNextFailsThatManyCallsBeforeTheyReachTheStore) {
  ASSERT_TRUE(Put(*store_, "k", "v").has_value());
  store_->FailNext(StoreOp::kHead, 2);
  for (int i = 0; i < 2; i++) {
    auto head = store_->Head("b", "k");
    ASSERT_FALSE(head.has_value());
    EXPECT_EQ(head.error().code, ErrorCode::kUnavailable);
    EXPECT_EQ(head.error().Detail("injected_fault"), "Head");
  }
  EXPECT_TRUE(store_->Head("b", "k").has_value());
  EXPECT_EQ(store_->Calls(StoreOp::kHead), 3u);

  // A failed call had no effect on the wrapped store.
  store_->FailNext(StoreOp::kDelete);
  EXPECT_FALSE(store_->Delete("b", "k").has_value());
  EXPECT_EQ(Body(store_->base(), "k").value_or("<gone>"), "v");
  store_->FailNext(StoreOp::kOpenBucket);
  EXPECT_FALSE(store_->OpenBucket("other").has_value());
  auto unopened = store_->base().List("other", ListOptions{});
  ASSERT_FALSE(unopened.has_value());
  EXPECT_EQ(FailureOf(unopened.error()), StoreFailure::kNoSuchBucket);

  // The error can be chosen: here a lost race, as a concurrent writer would cause.
  store_->FailNext(StoreOp::kDelete, 1,
                   StoreError(StoreFailure::kPreconditionFailed, ErrorCode::kConflict, "raced"));
  auto raced = store_->Delete("b", "k");
  ASSERT_FALSE(raced.has_value());
  EXPECT_EQ(FailureOf(raced.error()), StoreFailure::kPreconditionFailed);
  EXPECT_TRUE(Injected(raced.error()));
  EXPECT_TRUE(store_->Delete("b", "k").has_value());
}

TEST_F(FaultyStoreTest, RulesFailTheCallsTheyMatch) {
  int id = store_->AddRule([](const StoreCall& call) -> std::optional<Error> {
    if (call.op == StoreOp::kBeginPut && call.key.starts_with("tmp/")) {
      return Error{ErrorCode::kPermissionDenied, "no tmp", {}};
    }
    return std::nullopt;
  });
  auto refused = store_->BeginPut("b", "tmp/x");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(refused.error().Detail("injected_fault"), "BeginPut");
  EXPECT_TRUE(Put(*store_, "keep/x", "ok").has_value());
  store_->RemoveRule(id);
  EXPECT_TRUE(Put(*store_, "tmp/x", "ok").has_value());

  // Writers carry what their BeginPart named: fail only part 2's commit.
  store_->AddRule([](const StoreCall& call) -> std::optional<Error> {
    if (call.op == StoreOp::kCommit && call.part_number == 2) {
      return Error{ErrorCode::kUnavailable, "disk full", {}};
    }
    return std::nullopt;
  });
  auto upload = store_->CreateUpload("b", "mp", ObjectInfo{}).value();
  for (int n : {1, 2, 3}) {
    auto writer = store_->BeginPart("b", upload.upload_id, n).value();
    ASSERT_TRUE(writer->Write("part", 4).has_value());
    EXPECT_EQ(writer->Commit(ObjectInfo{}).has_value(), n != 2) << "part " << n;
  }
  auto parts = store_->ListParts("b", upload.upload_id).value();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].part_number, 1);
  EXPECT_EQ(parts[1].part_number, 3);
}

// The failed sync: Commit answers kUnavailable, nothing is published, and the store goes
// on working (unlike a real failed fsync in the local store, which is sticky).
TEST_F(FaultyStoreTest, FailedCommitPublishesNothingAndTheStoreStillWorks) {
  ASSERT_TRUE(Put(*store_, "k", "v1").has_value());
  store_->FailNext(StoreOp::kCommit, 2);
  auto replaced = Put(*store_, "k", "v2");
  ASSERT_FALSE(replaced.has_value());
  EXPECT_EQ(replaced.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(replaced.error().Detail("injected_fault"), "Commit");
  auto fresh = Put(*store_, "fresh", "new");
  ASSERT_FALSE(fresh.has_value());
  // Neither through the wrapper nor behind it.
  for (ObjectStore* s : {static_cast<ObjectStore*>(store_.get()), &store_->base()}) {
    EXPECT_EQ(Body(*s, "k").value_or("<error>"), "v1");
    EXPECT_FALSE(s->Head("b", "fresh").has_value());
    auto listing = s->List("b", ListOptions{}).value();
    ASSERT_EQ(listing.objects.size(), 1u);
    EXPECT_EQ(listing.objects[0].key, "k");
  }
  EXPECT_EQ(StoredBlobs(), 1u) << "an aborted commit left its bytes behind";

  // The faults are used up: the same writes now succeed.
  ASSERT_TRUE(Put(*store_, "k", "v3").has_value());
  ASSERT_TRUE(Put(*store_, "fresh", "new").has_value());
  EXPECT_EQ(Body(store_->base(), "k").value_or("<error>"), "v3");
  EXPECT_EQ(Body(store_->base(), "fresh").value_or("<error>"), "new");

  // A writer whose commit failed stays failed.
  store_->FailNext(StoreOp::kCommit);
  auto writer = store_->BeginPut("b", "late").value();
  ASSERT_TRUE(writer->Write("x", 1).has_value());
  EXPECT_FALSE(writer->Commit(ObjectInfo{}).has_value());
  EXPECT_FALSE(writer->Commit(ObjectInfo{}).has_value());
  EXPECT_FALSE(writer->Write("y", 1).has_value());
  EXPECT_FALSE(store_->Head("b", "late").has_value());
}

TEST_F(FaultyStoreTest, FailedWriteAbortsTheWriter) {
  store_->FailNext(StoreOp::kWrite);
  auto writer = store_->BeginPut("b", "k").value();
  auto first = writer->Write("abc", 3);
  ASSERT_FALSE(first.has_value());
  EXPECT_EQ(first.error().Detail("injected_fault"), "Write");
  EXPECT_EQ(StoredBlobs(), 0u) << "the wrapped writer was not aborted";
  EXPECT_FALSE(writer->Write("def", 3).has_value());
  EXPECT_FALSE(writer->Commit(ObjectInfo{}).has_value());
  EXPECT_FALSE(store_->base().Head("b", "k").has_value());
  EXPECT_TRUE(Put(*store_, "k", "fine").has_value());
}

TEST_F(FaultyStoreTest, ShortReadsStillDeliverEveryByte) {
  std::string body(10000, '\0');
  for (size_t i = 0; i < body.size(); i++) body[i] = static_cast<char>(i * 7);
  ASSERT_TRUE(Put(*store_, "k", body).has_value());
  store_->SetReadFaults(ReadFaults{.max_bytes_per_call = 7});
  auto reader = store_->Get("b", "k", 0, std::nullopt, nullptr).value();
  size_t largest = 0;
  auto read = Drain(*reader, 1000, &largest);
  ASSERT_TRUE(read.has_value());
  EXPECT_TRUE(*read == body);
  EXPECT_EQ(largest, 7u);
  // Next is trimmed the same way.
  auto viewed = store_->Get("b", "k", 100, 50, nullptr).value();
  std::string pieces;
  while (true) {
    auto view = viewed->Next(1000);
    ASSERT_TRUE(view.has_value());
    if (view->empty()) break;
    EXPECT_LE(view->size(), 7u);
    pieces.append(*view);
  }
  EXPECT_EQ(pieces, body.substr(100, 50));
}

TEST_F(FaultyStoreTest, CutReadsEndEarly) {
  const std::string body(1000, 'x');
  ASSERT_TRUE(Put(*store_, "k", body).has_value());

  store_->SetReadFaults(ReadFaults{.cut_after_bytes = 100});
  auto cut = store_->Get("b", "k", 0, std::nullopt, nullptr).value();
  std::string got;
  std::string buffer(64, '\0');
  Result<size_t> n = size_t{0};
  while ((n = cut->Read(buffer.data(), buffer.size())) && *n > 0) got.append(buffer.data(), *n);
  ASSERT_FALSE(n.has_value()) << "a cut read ended cleanly";
  EXPECT_EQ(got.size(), 100u);
  EXPECT_EQ(n.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(n.error().Detail("injected_fault"), "Read");
  EXPECT_FALSE(cut->Read(buffer.data(), buffer.size()).has_value()) << "a failed read recovered";
  EXPECT_FALSE(cut->Next(10).has_value());

  // Without an error: a premature end that only the byte count reveals.
  store_->SetReadFaults(ReadFaults{.cut_after_bytes = 100, .cut_with_error = false});
  auto silent = store_->Get("b", "k", 0, std::nullopt, nullptr).value();
  auto short_body = Drain(*silent, 64);
  ASSERT_TRUE(short_body.has_value());
  EXPECT_EQ(short_body->size(), 100u);

  // A cut at or past the end of the range is no cut.
  store_->SetReadFaults(ReadFaults{.cut_after_bytes = 20});
  auto range = store_->Get("b", "k", 10, 20, nullptr).value();
  EXPECT_EQ(Drain(*range, 64).value_or("<error>"), body.substr(10, 20));

  // Only the Gets the filter picks; readers already open keep what they had.
  auto opened_before = store_->Get("b", "k", 0, std::nullopt, nullptr).value();
  ASSERT_TRUE(Put(*store_, "other", body).has_value());
  store_->SetReadFaults(ReadFaults{.max_bytes_per_call = 1,
                                   .only_if = [](const StoreCall& get) { return get.key == "k"; }});
  size_t largest = 0;
  auto other = store_->Get("b", "other", 0, std::nullopt, nullptr).value();
  EXPECT_EQ(Drain(*other, 64, &largest).value_or("<error>"), body);
  EXPECT_EQ(largest, 64u);
  EXPECT_FALSE(Drain(*opened_before, 64).has_value()) << "opened under a cut at 20 bytes";
  largest = 0;
  auto picked = store_->Get("b", "k", 0, std::nullopt, nullptr).value();
  EXPECT_EQ(Drain(*picked, 64, &largest).value_or("<error>"), body);
  EXPECT_EQ(largest, 1u);
}

TEST_F(FaultyStoreTest, InjectedReadFailureIsSticky) {
  ASSERT_TRUE(Put(*store_, "k", "hello").has_value());
  auto reader = store_->Get("b", "k", 0, std::nullopt, nullptr).value();
  store_->FailNext(StoreOp::kRead);
  char buffer[16];
  EXPECT_FALSE(reader->Read(buffer, sizeof buffer).has_value());
  EXPECT_FALSE(reader->Read(buffer, sizeof buffer).has_value());
  // A fresh reader is fine: the fault was used up.
  EXPECT_EQ(Body(*store_, "k").value_or("<error>"), "hello");
}

TEST_F(FaultyStoreTest, LatencyIsSpentThroughTheSleepFunction) {
  constexpr int64_t kHour = 3'600'000;
  store_->SetLatency(StoreOp::kHead, 250);
  store_->SetLatency(StoreOp::kCommit, kHour);
  const auto real_start = std::chrono::steady_clock::now();
  ASSERT_TRUE(Put(*store_, "k", "v").has_value());
  EXPECT_FALSE(store_->Head("b", "missing").has_value());
  EXPECT_TRUE(store_->Head("b", "k").has_value());
  EXPECT_EQ(slept_ms_, kHour + 2 * 250);
  // The store saw the time pass: the commit happened an hour in.
  EXPECT_GE(store_->Head("b", "k")->last_modified_ms, 1'700'000'000'000 + kHour);
  EXPECT_LT(std::chrono::steady_clock::now() - real_start, std::chrono::seconds(10))
      << "latency was slept for real";
  // A slow failure: the delay is spent, then the call fails.
  store_->FailNext(StoreOp::kHead);
  const int64_t before = slept_ms_;
  EXPECT_FALSE(store_->Head("b", "k").has_value());
  EXPECT_EQ(slept_ms_ - before, 250);
  store_->SetLatency(StoreOp::kHead, 0);
  EXPECT_TRUE(store_->Head("b", "k").has_value());
  EXPECT_EQ(slept_ms_ - before, 250);
}

TEST_F(FaultyStoreTest, ClearRemovesEveryFault) {
  ASSERT_TRUE(Put(*store_, "k", "value").has_value());
  store_->FailNext(StoreOp::kGet, 5);
  store_->AddRule([](const StoreCall&) -> std::optional<Error> {
    return Error{ErrorCode::kUnavailable, "everything fails", {}};
  });
  store_->SetLatency(StoreOp::kGet, 10);
  store_->SetReadFaults(ReadFaults{.cut_after_bytes = 1});
  EXPECT_FALSE(store_->Head("b", "k").has_value());
  const uint64_t heads = store_->Calls(StoreOp::kHead);
  store_->Clear();
  const int64_t slept = slept_ms_;
  EXPECT_EQ(Body(*store_, "k").value_or("<error>"), "value");
  EXPECT_TRUE(store_->Head("b", "k").has_value());
  EXPECT_EQ(slept_ms_, slept);
  EXPECT_EQ(store_->Calls(StoreOp::kHead), heads + 1) << "Clear must keep the counts";
}

// Code above the store sees the faults as it would see real ones: a bucket deletion that
// fails part-way is finished by a retry.
TEST_F(FaultyStoreTest, DeleteBucketWithContentsRecoversOnRetry) {
  for (std::string k : {"a", "b", "c", "d"}) ASSERT_TRUE(Put(*store_, k, k).has_value());
  auto meta = metastore::OpenSqliteMetastore((dir_ / "state.db").string(), clock_);
  ASSERT_TRUE(meta.has_value()) << meta.error().message;
  FaultyStore& faulty = *store_;
  RegisteredStore store(std::move(store_), (*meta)->buckets(), clock_);
  ASSERT_EQ(store.ImportLegacyBuckets().value_or(-1), 1);  // "b", opened in SetUp

  faulty.FailNext(StoreOp::kDelete);
  auto failed = DeleteBucketWithContents(store, "b");
  ASSERT_FALSE(failed.has_value());
  EXPECT_TRUE(Injected(failed.error()));
  EXPECT_TRUE(store.HeadBucket("b").has_value());
  auto retried = DeleteBucketWithContents(store, "b");
  ASSERT_TRUE(retried.has_value()) << retried.error().message;
  EXPECT_EQ(retried->objects, 4u);
  EXPECT_FALSE(store.HeadBucket("b").has_value());
  auto closed = faulty.base().List("b", ListOptions{});
  ASSERT_FALSE(closed.has_value());
  EXPECT_EQ(FailureOf(closed.error()), StoreFailure::kNoSuchBucket);
}

// The registry counts each bucket's bytes and objects as they are written, replaced,
// copied and deleted, without ever listing the store; a write whose replaced size could
// not be read marks the bucket for a listing instead of guessing.
TEST_F(FaultyStoreTest, UsageIsCountedAsObjectsChangeWithoutListing) {
  auto meta = metastore::OpenSqliteMetastore((dir_ / "state.db").string(), clock_);
  ASSERT_TRUE(meta.has_value()) << meta.error().message;
  FaultyStore& faulty = *store_;
  RegisteredStore store(std::move(store_), (*meta)->buckets(), clock_);
  ASSERT_TRUE(store.CreateBucket("u").has_value());
  auto usage = [&] {
    EXPECT_TRUE(store.FlushUsage().has_value());
    return (*meta)->buckets().FindBucket("u").value().usage;
  };
  // Usage starts unreconciled: the first metering lists the bucket once.
  EXPECT_EQ(usage().reconciled_ms, 0);
  ASSERT_TRUE((*meta)->buckets().ReconcileUsage("u", 0, 0, 1).has_value());

  auto put = [&](const std::string& key, size_t size) {
    auto writer = store.BeginPut("u", key);
    ASSERT_TRUE(writer.has_value()) << writer.error().message;
    std::string body(size, 'x');
    ASSERT_TRUE((*writer)->Write(body.data(), body.size()).has_value());
    ASSERT_TRUE((*writer)->Commit(ObjectInfo{}).has_value());
  };
  const uint64_t heads = faulty.Calls(StoreOp::kHead);
  put("a", 100);
  put("b", 50);
  put("a", 30);  // replaces 100 bytes
  // The local disk says what each put replaced: no HEAD before a put.
  EXPECT_EQ(faulty.Calls(StoreOp::kHead), heads);
  {
    auto aborted = store.BeginPut("u", "never");
    ASSERT_TRUE(aborted.has_value());
    ASSERT_TRUE((*aborted)->Write("zz", 2).has_value());
    (*aborted)->Abort();
  }
  ASSERT_TRUE(store.Copy("u", "b", "u", "c", std::nullopt).has_value());
  ASSERT_TRUE(store.Delete("u", "b").has_value());
  ASSERT_TRUE(store.Delete("u", "missing").has_value());
  auto upload = store.CreateUpload("u", "a", ObjectInfo{});
  ASSERT_TRUE(upload.has_value());
  auto part = store.BeginPart("u", upload->upload_id, 1);
  ASSERT_TRUE(part.has_value());
  ASSERT_TRUE((*part)->Write("0123456789", 10).has_value());
  ASSERT_TRUE((*part)->Commit(ObjectInfo{}).has_value());
  ASSERT_TRUE(store.CompleteUpload("u", upload->upload_id, {1}, ObjectInfo{}).has_value());

  metastore::BucketUsage counted = usage();
  EXPECT_EQ(counted.bytes, 10 + 50);  // a (10, completed over 30) and c (50)
  EXPECT_EQ(counted.objects, 2);
  EXPECT_EQ(counted.reconciled_ms, 1);
  EXPECT_EQ(faulty.Calls(StoreOp::kList), 0u);

  // A deleted size unreadable: nothing subtracted, and the bucket is due for a listing.
  faulty.FailNext(StoreOp::kHead);
  ASSERT_TRUE(store.Delete("u", "c").has_value());
  counted = usage();
  EXPECT_EQ(counted.reconciled_ms, 0);
  EXPECT_EQ(counted.objects, 2);
}

// Many threads through one wrapper: every counted failure is used exactly once.
TEST_F(FaultyStoreTest, FaultsAreThreadSafe) {
  constexpr int kThreads = 8, kPerThread = 25, kFailures = 30;
  store_->FailNext(StoreOp::kCommit, kFailures);
  std::atomic<int> ok{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; i++) {
        const std::string key = "t" + std::to_string(t) + "-" + std::to_string(i);
        (Put(*store_, key, key) ? ok : failed)++;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failed, kFailures);
  EXPECT_EQ(ok, kThreads * kPerThread - kFailures);
  EXPECT_EQ(store_->base().List("b", ListOptions{})->objects.size(),
            static_cast<size_t>(ok.load()));
}

}  // namespace
}  // namespace tablemere::objectstore
