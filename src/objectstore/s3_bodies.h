// The bodies the S3 backend moves (s3_store.cc): a PUT spooled to local disk then sent,
// a PUT streamed to the store as it arrives, and a GET streamed back. Internal to
// src/objectstore.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "common/crypto.h"
#include "objectstore/object_store.h"
#include "objectstore/s3_http.h"

namespace tablemere::objectstore {

// Bytes handed from one thread to another, guarded by the owner's mutex: appended in
// chunks, taken from the front. Elements of a deque stay put while others are appended,
// so a view of the front stays valid until that front is consumed.
class ChunkQueue {
 public:
  void Push(const char* data, size_t size);
  bool empty() const { return chunks_.empty(); }
  size_t queued() const { return queued_; }
  // The first bytes waiting (at most `max`), still queued.
  std::string_view Front(size_t max) const;
  // Removes `n` bytes (at most Front's) from the front.
  void Consume(size_t n);

 private:
  std::deque<std::string> chunks_;
  size_t offset_ = 0;  // into chunks_.front()
  size_t queued_ = 0;
};

// Runs `call` on a new thread; when it ends, stores its answer in `answer`, sets `done`
// and notifies `cv`, all under `mu`.
std::thread SendInBackground(S3Http& http, const S3Call& call, std::mutex& mu,
                             std::condition_variable& cv, Result<S3Answer>& answer, bool& done);

// A body on local disk: written by the layer above, sent once it is complete (so it can
// be sent with its Content-MD5, and a body of unknown length can be sent at all).
class SpoolWriter final : public ObjectWriter {
 public:
  using Finish = std::function<Result<ObjectInfo>(int fd, uint64_t size, const std::string& md5_raw,
                                                  ObjectInfo info)>;
  // `reports_replaced`: `finish` fills ObjectInfo::replaced.
  SpoolWriter(int fd, Finish finish, bool reports_replaced = false);
  ~SpoolWriter() override;
  Result<void> Write(const char* data, size_t size) override;
  Result<ObjectInfo> Commit(ObjectInfo info) override;
  void Abort() override;
  uint64_t bytes_written() const override { return written_; }
  bool ReportsReplaced() const override { return reports_replaced_; }

 private:
  int fd_;
  Finish finish_;
  bool reports_replaced_;
  crypto::Digest md5_;
  uint64_t written_ = 0;
};

// A body of known size sent to the store while it arrives: a helper thread runs the
// store request and pulls what Write queued (at most kWindow bytes wait between them).
// The last byte is held back until Commit's `finish` calls Release(): until then the
// store has not received the whole body and cannot store it, so a body that fails
// verification (Commit never called), a short one, or an Abort leaves nothing behind.
class StreamWriter final : public ObjectWriter {
 public:
  static constexpr size_t kWindow = 8u << 20;
  // Runs at Commit with the body's MD5: checks what must hold at publication, calls
  // Release() to let the request complete, and judges its answer.
  using Finish = std::function<Result<ObjectInfo>(StreamWriter& self, const std::string& md5_raw,
                                                  ObjectInfo info)>;
  StreamWriter(S3Http& http, S3Call call, uint64_t size, Finish finish);
  ~StreamWriter() override;
  Result<void> Write(const char* data, size_t size) override;
  Result<ObjectInfo> Commit(ObjectInfo info) override;
  void Abort() override;
  uint64_t bytes_written() const override { return received_; }
  // Sends the held-back end of the body and waits for the store's answer.
  Result<S3Answer> Release();

 private:
  long Pull(char* out, size_t size);

  S3Call call_;
  uint64_t size_;
  Finish finish_;
  crypto::Digest md5_;
  std::mutex mu_;
  std::condition_variable cv_;
  ChunkQueue chunks_;       // written, not yet pulled
  uint64_t received_ = 0;   // bytes given to Write
  uint64_t delivered_ = 0;  // bytes handed to the store request
  bool released_ = false, aborted_ = false, done_ = false, committed_ = false;
  Result<S3Answer> answer_ = S3Answer{};
  std::thread thread_;
};

// A GET's body, pulled by the reader while a helper thread receives it; at most
// kWindow bytes wait between the two.
class StreamReader final : public ObjectReader {
 public:
  static constexpr size_t kWindow = 4u << 20;
  // `describe_failure` turns a non-2xx answer into the error to report.
  StreamReader(S3Http& http, S3Call call, std::function<Error(const S3Answer&)> describe_failure);
  ~StreamReader() override;
  // Waits for the answer's headers (a 2xx) or its end; the answer when it failed.
  Result<std::map<std::string, std::string>> Start();
  Result<size_t> Read(char* buffer, size_t size) override;
  // Lends the received bytes themselves (no copy), until the next call.
  Result<std::string_view> Next(size_t max) override;

 private:
  // Under mu_: consumes what the last Next lent; waits for bytes or the end. False at
  // the end (then `end` holds the error, if the answer failed).
  bool Await(std::unique_lock<std::mutex>& lock, std::optional<Error>& end);

  S3Call call_;
  std::function<Error(const S3Answer&)> describe_failure_;
  size_t lent_ = 0;  // bytes at the front of chunks_ the last Next lent
  std::mutex mu_;
  std::condition_variable cv_;
  ChunkQueue chunks_;  // received, not yet read
  bool ready_ = false, done_ = false, cancelled_ = false;
  long status_ = 0;
  std::map<std::string, std::string> headers_;
  Result<S3Answer> answer_ = S3Answer{};
  std::thread thread_;
};

}  // namespace tablemere::objectstore
