#include "objectstore/faulty_store.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace tablemere::objectstore {
namespace {

constexpr std::array<const char*, kStoreOpCount> kOpNames = {"OpenBucket",  "CloseBucket",
                                                             "BeginPut",    "Head",
                                                             "Get",         "SetObjectAttributes",
                                                             "Delete",      "Copy",
                                                             "List",        "CreateUpload",
                                                             "GetUpload",   "BeginPart",
                                                             "ListParts",   "CompleteUpload",
                                                             "AbortUpload", "ListUploads",
                                                             "Write",       "Commit",
                                                             "Read"};

constexpr char kInjectedDetail[] = "injected_fault";

size_t Index(StoreOp op) { return static_cast<size_t>(op); }

Error Injected(StoreOp op, std::optional<Error> chosen) {
  Error error = chosen ? std::move(*chosen)
                       : Error{ErrorCode::kUnavailable,
                               std::string("injected fault: ") + StoreOpName(op) + " failed",
                               {}};
  // The detail lets a test tell an injected failure from a real one in what it gets back.
  if (error.Detail(kInjectedDetail).empty()) error.With(kInjectedDetail, StoreOpName(op));
  return error;
}

}  // namespace

const char* StoreOpName(StoreOp op) { return kOpNames[Index(op)]; }

class FaultyStore::State {
 public:
  explicit State(SleepFn sleep)
      : sleep_(sleep ? std::move(sleep) : SleepFn([](int64_t millis) {
          std::this_thread::sleep_for(std::chrono::milliseconds(millis));
        })) {}

  // Counts `call`, spends its latency and answers its injected failure, if it has one.
  Result<void> Enter(const StoreCall& call) {
    const size_t i = Index(call.op);
    calls_[i].fetch_add(1, std::memory_order_relaxed);
    int64_t latency = 0;
    {
      std::lock_guard lock(mu_);
      latency = latency_ms_[i];
    }
    if (latency > 0) sleep_(latency);
    std::vector<std::shared_ptr<const FaultRule>> rules;
    {
      std::lock_guard lock(mu_);
      Counted& counted = fail_next_[i];
      if (counted.count > 0) {
        counted.count--;
        return Fail(Injected(call.op, counted.error));
      }
      rules.reserve(rules_.size());
      for (const auto& [id, rule] : rules_) rules.push_back(rule);
    }
    // Outside the lock: a rule may itself call into the wrapper (e.g. Calls()).
    for (const auto& rule : rules) {
      if (auto error = (*rule)(call)) return Fail(Injected(call.op, std::move(error)));
    }
    return {};
  }

  void FailNext(StoreOp op, int count, std::optional<Error> error) {
    std::lock_guard lock(mu_);
    fail_next_[Index(op)] = Counted{std::max(count, 0), std::move(error)};
  }
  int AddRule(FaultRule rule) {
    std::lock_guard lock(mu_);
    int id = next_rule_id_++;
    rules_[id] = std::make_shared<const FaultRule>(std::move(rule));
    return id;
  }
  void RemoveRule(int id) {
    std::lock_guard lock(mu_);
    rules_.erase(id);
  }
  void SetLatency(StoreOp op, int64_t millis) {
    std::lock_guard lock(mu_);
    latency_ms_[Index(op)] = std::max<int64_t>(millis, 0);
  }
  void SetReadFaults(ReadFaults faults) {
    std::lock_guard lock(mu_);
    read_faults_ = std::move(faults);
  }
  // The read faults for the reader of `get`, if any apply to it.
  std::optional<ReadFaults> ReadFaultsFor(const StoreCall& get) {
    std::optional<ReadFaults> faults;
    {
      std::lock_guard lock(mu_);
      faults = read_faults_;
    }
    if (faults && faults->only_if && !faults->only_if(get)) return std::nullopt;
    return faults;
  }
  void Clear() {
    std::lock_guard lock(mu_);
    fail_next_ = {};
    rules_.clear();
    latency_ms_ = {};
    read_faults_.reset();
  }
  uint64_t Calls(StoreOp op) const { return calls_[Index(op)].load(std::memory_order_relaxed); }

 private:
  struct Counted {
    int count = 0;
    std::optional<Error> error;
  };

  const SleepFn sleep_;
  std::array<std::atomic<uint64_t>, kStoreOpCount> calls_{};
  std::mutex mu_;
  // Protected by mu_.
  std::array<Counted, kStoreOpCount> fail_next_{};
  std::array<int64_t, kStoreOpCount> latency_ms_{};
  std::map<int, std::shared_ptr<const FaultRule>> rules_;  // by id, so in the order added
  int next_rule_id_ = 1;
  std::optional<ReadFaults> read_faults_;
};

namespace {

// A writer whose Write and Commit pass the fault gate first. After an injected failure
// it is dead: the wrapped writer was aborted and every later call fails.
class FaultyWriter final : public ObjectWriter {
 public:
  FaultyWriter(std::shared_ptr<FaultyStore::State> state, std::unique_ptr<ObjectWriter> base,
               StoreCall call)
      : state_(std::move(state)), base_(std::move(base)), call_(std::move(call)) {}

  Result<void> Write(const char* data, size_t size) override {
    TM_TRY(Gate(StoreOp::kWrite));
    return base_->Write(data, size);
  }
  Result<ObjectInfo> Commit(ObjectInfo info) override {
    TM_TRY(Gate(StoreOp::kCommit));
    return base_->Commit(std::move(info));
  }
  void Abort() override { base_->Abort(); }
  uint64_t bytes_written() const override { return base_->bytes_written(); }
  bool ReportsReplaced() const override { return base_->ReportsReplaced(); }

 private:
  Result<void> Gate(StoreOp op) {
    if (dead_) return Fail(*dead_);
    call_.op = op;
    auto entered = state_->Enter(call_);
    if (!entered) {
      // Aborted before anything is published: a failed Commit is a failed sync, whose
      // object must never appear.
      base_->Abort();
      dead_ = entered.error();
    }
    return entered;
  }

  std::shared_ptr<FaultyStore::State> state_;
  std::unique_ptr<ObjectWriter> base_;
  StoreCall call_;
  std::optional<Error> dead_;
};

// A reader whose calls pass the fault gate first, trimmed and cut as ReadFaults says.
class FaultyReader final : public ObjectReader {
 public:
  // `range_length`: the bytes the wrapped reader will deliver, so a cut at or past its
  // end is no cut at all.
  FaultyReader(std::shared_ptr<FaultyStore::State> state, std::unique_ptr<ObjectReader> base,
               StoreCall call, std::optional<ReadFaults> faults, uint64_t range_length)
      : state_(std::move(state)), base_(std::move(base)), call_(std::move(call)) {
    call_.op = StoreOp::kRead;
    if (faults) {
      max_per_call_ = faults->max_bytes_per_call;
      if (faults->cut_after_bytes && *faults->cut_after_bytes < range_length) {
        cut_ = *faults->cut_after_bytes;
        cut_with_error_ = faults->cut_with_error;
      }
    }
  }

  Result<size_t> Read(char* buffer, size_t size) override {
    TM_ASSIGN(size_t allowed, Admit(size));
    if (allowed == 0) return size_t{0};
    TM_ASSIGN(size_t n, base_->Read(buffer, allowed));
    delivered_ += n;
    return n;
  }

  Result<std::string_view> Next(size_t max) override {
    TM_ASSIGN(size_t allowed, Admit(max));
    if (allowed == 0) return std::string_view();
    TM_ASSIGN(std::string_view view, base_->Next(allowed));
    delivered_ += view.size();
    return view;
  }

 private:
  // How many of the `want` bytes asked for this call may be read; 0 at a silent cut.
  Result<size_t> Admit(size_t want) {
    if (failed_) return Fail(*failed_);
    if (auto entered = state_->Enter(call_); !entered) {
      failed_ = entered.error();
      return Fail(*failed_);
    }
    if (max_per_call_ > 0) want = std::min(want, max_per_call_);
    if (cut_) {
      const uint64_t left = *cut_ - std::min(*cut_, delivered_);
      if (left == 0 && want > 0) {
        if (!cut_with_error_) return size_t{0};
        failed_ = Injected(StoreOp::kRead, Error{ErrorCode::kUnavailable,
                                                 "injected fault: the read was cut after " +
                                                     std::to_string(*cut_) + " bytes",
                                                 {}});
        return Fail(*failed_);
      }
      want = static_cast<size_t>(std::min<uint64_t>(want, left));
    }
    return want;
  }

  std::shared_ptr<FaultyStore::State> state_;
  std::unique_ptr<ObjectReader> base_;
  StoreCall call_;
  size_t max_per_call_ = 0;
  std::optional<uint64_t> cut_;
  bool cut_with_error_ = true;
  uint64_t delivered_ = 0;
  std::optional<Error> failed_;
};

StoreCall Call(StoreOp op, const std::string& bucket, const std::string& key = {},
               const std::string& upload_id = {}, int part_number = 0) {
  StoreCall call;
  call.op = op;
  call.bucket = bucket;
  call.key = key;
  call.upload_id = upload_id;
  call.part_number = part_number;
  return call;
}

}  // namespace

FaultyStore::FaultyStore(std::unique_ptr<ObjectStore> base, SleepFn sleep)
    : base_(std::move(base)), state_(std::make_shared<State>(std::move(sleep))) {}

FaultyStore::~FaultyStore() = default;

void FaultyStore::FailNext(StoreOp op, int count, std::optional<Error> error) {
  state_->FailNext(op, count, std::move(error));
}
int FaultyStore::AddRule(FaultRule rule) { return state_->AddRule(std::move(rule)); }
void FaultyStore::RemoveRule(int id) { state_->RemoveRule(id); }
void FaultyStore::SetLatency(StoreOp op, int64_t millis) { state_->SetLatency(op, millis); }
void FaultyStore::SetReadFaults(ReadFaults faults) { state_->SetReadFaults(std::move(faults)); }
void FaultyStore::Clear() { state_->Clear(); }
uint64_t FaultyStore::Calls(StoreOp op) const { return state_->Calls(op); }

Result<void> FaultyStore::OpenBucket(const std::string& bucket) {
  TM_TRY(state_->Enter(Call(StoreOp::kOpenBucket, bucket)));
  return base_->OpenBucket(bucket);
}

Result<void> FaultyStore::CloseBucket(const std::string& bucket) {
  TM_TRY(state_->Enter(Call(StoreOp::kCloseBucket, bucket)));
  return base_->CloseBucket(bucket);
}

Result<std::unique_ptr<ObjectWriter>> FaultyStore::BeginPut(
    const std::string& bucket, const std::string& key, PutConditions conditions,
    std::optional<uint64_t> size, std::optional<std::map<std::string, std::string>> headers) {
  StoreCall call = Call(StoreOp::kBeginPut, bucket, key);
  TM_TRY(state_->Enter(call));
  TM_ASSIGN(auto writer,
            base_->BeginPut(bucket, key, std::move(conditions), size, std::move(headers)));
  return std::unique_ptr<ObjectWriter>(
      std::make_unique<FaultyWriter>(state_, std::move(writer), std::move(call)));
}

Result<ObjectInfo> FaultyStore::Head(const std::string& bucket, const std::string& key) {
  TM_TRY(state_->Enter(Call(StoreOp::kHead, bucket, key)));
  return base_->Head(bucket, key);
}

Result<std::unique_ptr<ObjectReader>> FaultyStore::Get(const std::string& bucket,
                                                       const std::string& key, uint64_t offset,
                                                       std::optional<uint64_t> length,
                                                       ObjectInfo* info) {
  StoreCall call = Call(StoreOp::kGet, bucket, key);
  TM_TRY(state_->Enter(call));
  // The object's size is needed to tell a cut inside the range from its natural end.
  ObjectInfo found;
  TM_ASSIGN(auto reader, base_->Get(bucket, key, offset, length, &found));
  const uint64_t rest = found.size > offset ? found.size - offset : 0;
  const uint64_t range_length = length ? std::min(*length, rest) : rest;
  std::optional<ReadFaults> faults = state_->ReadFaultsFor(call);
  if (info) *info = std::move(found);
  return std::unique_ptr<ObjectReader>(std::make_unique<FaultyReader>(
      state_, std::move(reader), std::move(call), std::move(faults), range_length));
}

Result<ObjectInfo> FaultyStore::SetObjectAttributes(const std::string& bucket,
                                                    const std::string& key,
                                                    const AttributeChange& change) {
  TM_TRY(state_->Enter(Call(StoreOp::kSetObjectAttributes, bucket, key)));
  return base_->SetObjectAttributes(bucket, key, change);
}

Result<void> FaultyStore::Delete(const std::string& bucket, const std::string& key) {
  TM_TRY(state_->Enter(Call(StoreOp::kDelete, bucket, key)));
  return base_->Delete(bucket, key);
}

Result<ObjectInfo> FaultyStore::Copy(const std::string& src_bucket, const std::string& src_key,
                                     const std::string& dst_bucket, const std::string& dst_key,
                                     std::optional<ObjectInfo> replace_metadata) {
  StoreCall call = Call(StoreOp::kCopy, dst_bucket, dst_key);
  call.source_bucket = src_bucket;
  call.source_key = src_key;
  TM_TRY(state_->Enter(call));
  return base_->Copy(src_bucket, src_key, dst_bucket, dst_key, std::move(replace_metadata));
}

Result<ListResult> FaultyStore::List(const std::string& bucket, const ListOptions& options) {
  TM_TRY(state_->Enter(Call(StoreOp::kList, bucket, options.prefix)));
  return base_->List(bucket, options);
}

Result<UploadInfo> FaultyStore::CreateUpload(const std::string& bucket, const std::string& key,
                                             ObjectInfo pending) {
  TM_TRY(state_->Enter(Call(StoreOp::kCreateUpload, bucket, key)));
  return base_->CreateUpload(bucket, key, std::move(pending));
}

Result<UploadInfo> FaultyStore::GetUpload(const std::string& bucket, const std::string& upload_id) {
  TM_TRY(state_->Enter(Call(StoreOp::kGetUpload, bucket, "", upload_id)));
  return base_->GetUpload(bucket, upload_id);
}

Result<std::unique_ptr<ObjectWriter>> FaultyStore::BeginPart(const std::string& bucket,
                                                             const std::string& upload_id,
                                                             int part_number,
                                                             std::optional<uint64_t> size) {
  StoreCall call = Call(StoreOp::kBeginPart, bucket, "", upload_id, part_number);
  TM_TRY(state_->Enter(call));
  TM_ASSIGN(auto writer, base_->BeginPart(bucket, upload_id, part_number, size));
  return std::unique_ptr<ObjectWriter>(
      std::make_unique<FaultyWriter>(state_, std::move(writer), std::move(call)));
}

Result<std::vector<PartInfo>> FaultyStore::ListParts(const std::string& bucket,
                                                     const std::string& upload_id) {
  TM_TRY(state_->Enter(Call(StoreOp::kListParts, bucket, "", upload_id)));
  return base_->ListParts(bucket, upload_id);
}

Result<ObjectInfo> FaultyStore::CompleteUpload(const std::string& bucket,
                                               const std::string& upload_id,
                                               const std::vector<int>& part_numbers,
                                               ObjectInfo final_info, PutConditions conditions) {
  TM_TRY(state_->Enter(Call(StoreOp::kCompleteUpload, bucket, final_info.key, upload_id)));
  return base_->CompleteUpload(bucket, upload_id, part_numbers, std::move(final_info),
                               std::move(conditions));
}

Result<void> FaultyStore::AbortUpload(const std::string& bucket, const std::string& upload_id) {
  TM_TRY(state_->Enter(Call(StoreOp::kAbortUpload, bucket, "", upload_id)));
  return base_->AbortUpload(bucket, upload_id);
}

Result<std::vector<UploadInfo>> FaultyStore::ListUploads(const std::string& bucket,
                                                         const std::string& prefix) {
  TM_TRY(state_->Enter(Call(StoreOp::kListUploads, bucket, prefix)));
  return base_->ListUploads(bucket, prefix);
}

bool FaultyStore::ListsInByteOrder() const { return base_->ListsInByteOrder(); }

size_t FaultyStore::MaxKeyBytes(const std::string& bucket) const {
  return base_->MaxKeyBytes(bucket);
}

}  // namespace tablemere::objectstore
