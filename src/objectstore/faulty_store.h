// A fault-injecting ObjectStore for tests: it sits in front of any other store (as
// leveldb's EnvWrapper sits in front of an Env) and passes every call through, except
// the ones a test has told it to fail, slow down or cut short. It lets code above the
// store (the S3 service, the catalog, maintenance) be tested against the failures a
// real disk or a remote S3 produces, without breaking a real disk or a real network.
//
// The contract:
//  - An injected failure of a store method happens before the call reaches the wrapped
//    store, so the call had no effect there. Its error is kUnavailable unless the test
//    chose another, and carries the detail "injected_fault" = the operation's name.
//  - Writers (BeginPut, BeginPart) are wrapped too. An injected Write failure aborts the
//    wrapped writer (a writer that hit an I/O error is dead): that Write and every later
//    Write or Commit of it fail. An injected Commit failure is a failed sync: the wrapped
//    writer is aborted, Commit answers kUnavailable and nothing is published, so the
//    object (or part) that was there before is still there and a new one never appears.
//  - Readers (Get) are wrapped too. An injected read failure, or reaching the cut of
//    ReadFaults with an error, fails that call and every later call of the reader.
//  - Latency is spent through the sleep function given at construction, before the call
//    is made (and before deciding whether it fails), so a test can pass a fake sleep
//    that advances a fake clock instead of sleeping.
//  - The wrapper itself is thread-safe, as every ObjectStore is; rules and the sleep
//    function are called without its lock held and may be called concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "objectstore/object_store.h"

namespace tablemere::objectstore {

// Every call a FaultyStore can fault: the ObjectStore methods, then the calls on the
// writers and readers they return.
enum class StoreOp {
  kOpenBucket,
  kCloseBucket,
  kBeginPut,
  kHead,
  kGet,
  kSetObjectAttributes,
  kDelete,
  kCopy,
  kList,
  kCreateUpload,
  kGetUpload,
  kBeginPart,
  kListParts,
  kCompleteUpload,
  kAbortUpload,
  kListUploads,
  kWrite,   // ObjectWriter::Write, of an object or a part
  kCommit,  // ObjectWriter::Commit, of an object or a part
  kRead,    // ObjectReader::Read or Next
};
inline constexpr size_t kStoreOpCount = static_cast<size_t>(StoreOp::kRead) + 1;

// "CreateBucket", "Commit", …
const char* StoreOpName(StoreOp op);

// What a fault rule is told about a call. Fields a call does not name are empty; the
// calls of a writer or reader repeat what the BeginPut, BeginPart or Get named.
struct StoreCall {
  StoreOp op = StoreOp::kHead;
  std::string bucket;  // Copy: the destination
  // The object's key; Copy: the destination's; CompleteUpload: final_info.key; List and
  // ListUploads: the prefix.
  std::string key;
  std::string upload_id;
  int part_number = 0;
  std::string source_bucket;  // Copy only
  std::string source_key;     // Copy only
};

// Answers the error to fail `call` with, or nullopt to let it through.
using FaultRule = std::function<std::optional<Error>(const StoreCall& call)>;

// How the readers that Get returns misbehave.
struct ReadFaults {
  // Each Read or Next answers at most this many bytes (0: no limit). A short read is
  // legal for a ByteSource; a caller that assumes a full buffer is not.
  size_t max_bytes_per_call = 0;
  // The reader stops after this many bytes of its range: with kUnavailable, and every
  // later call failing, when `cut_with_error`; otherwise with a premature end (Read
  // answers 0), as a dropped connection that nobody noticed would.
  std::optional<uint64_t> cut_after_bytes;
  bool cut_with_error = true;
  // Which Gets are affected; empty: all.
  std::function<bool(const StoreCall& get)> only_if;
};

class FaultyStore final : public ObjectStore {
 public:
  // Spends `millis` of latency; empty: really sleeps.
  using SleepFn = std::function<void(int64_t millis)>;

  explicit FaultyStore(std::unique_ptr<ObjectStore> base, SleepFn sleep = {});
  ~FaultyStore() override;
  FaultyStore(const FaultyStore&) = delete;
  FaultyStore& operator=(const FaultyStore&) = delete;

  // The wrapped store, for looking behind the faults (e.g. that nothing was published).
  ObjectStore& base() { return *base_; }

  // The next `count` calls of `op` fail with `error` (default: kUnavailable). Counted
  // failures are used up before any rule is asked.
  void FailNext(StoreOp op, int count = 1, std::optional<Error> error = std::nullopt);
  // Asks `rule` about every later call; rules are asked in the order they were added and
  // the first error wins. Returns an id for RemoveRule.
  int AddRule(FaultRule rule);
  void RemoveRule(int id);
  // Every later call of `op` first spends `millis` (0: none).
  void SetLatency(StoreOp op, int64_t millis);
  // Readers opened by later Gets behave as `faults` says; open readers keep theirs.
  void SetReadFaults(ReadFaults faults);
  // Removes every fault, latency and read fault; the call counts are kept.
  void Clear();
  // How many calls of `op` were made through this wrapper, failed ones included.
  uint64_t Calls(StoreOp op) const;

  // ---- ObjectStore (defaults as in ObjectStore, for callers holding a FaultyStore) ----
  Result<void> OpenBucket(const std::string& bucket) override;
  Result<void> CloseBucket(const std::string& bucket) override;
  Result<std::unique_ptr<ObjectWriter>> BeginPut(
      const std::string& bucket, const std::string& key, PutConditions conditions = {},
      std::optional<uint64_t> size = std::nullopt,
      std::optional<std::map<std::string, std::string>> headers = std::nullopt) override;
  Result<ObjectInfo> Head(const std::string& bucket, const std::string& key) override;
  Result<std::unique_ptr<ObjectReader>> Get(const std::string& bucket, const std::string& key,
                                            uint64_t offset, std::optional<uint64_t> length,
                                            ObjectInfo* info) override;
  Result<ObjectInfo> SetObjectAttributes(const std::string& bucket, const std::string& key,
                                         const AttributeChange& change) override;
  Result<void> Delete(const std::string& bucket, const std::string& key) override;
  Result<ObjectInfo> Copy(const std::string& src_bucket, const std::string& src_key,
                          const std::string& dst_bucket, const std::string& dst_key,
                          std::optional<ObjectInfo> replace_metadata) override;
  Result<ListResult> List(const std::string& bucket, const ListOptions& options) override;
  Result<UploadInfo> CreateUpload(const std::string& bucket, const std::string& key,
                                  ObjectInfo pending) override;
  Result<UploadInfo> GetUpload(const std::string& bucket, const std::string& upload_id) override;
  Result<std::unique_ptr<ObjectWriter>> BeginPart(
      const std::string& bucket, const std::string& upload_id, int part_number,
      std::optional<uint64_t> size = std::nullopt) override;
  Result<std::vector<PartInfo>> ListParts(const std::string& bucket,
                                          const std::string& upload_id) override;
  Result<ObjectInfo> CompleteUpload(const std::string& bucket, const std::string& upload_id,
                                    const std::vector<int>& part_numbers, ObjectInfo final_info,
                                    PutConditions conditions = {}) override;
  Result<void> AbortUpload(const std::string& bucket, const std::string& upload_id) override;
  Result<std::vector<UploadInfo>> ListUploads(const std::string& bucket,
                                              const std::string& prefix) override;
  // A limit, not a call to the store's data: answered by the wrapped store, never faulted.
  size_t MaxKeyBytes(const std::string& bucket) const override;
  bool ListsInByteOrder() const override;
  // Read once at start, never faulted.
  Result<std::vector<BucketInfo>> LegacyBuckets() override { return base_->LegacyBuckets(); }

  // The fault settings, shared with the writers and readers handed out, which may
  // outlive this wrapper.
  class State;

 private:
  std::unique_ptr<ObjectStore> base_;
  std::shared_ptr<State> state_;
};

}  // namespace tablemere::objectstore
