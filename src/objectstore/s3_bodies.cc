#include "objectstore/s3_bodies.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tablemere::objectstore {

// ---- ChunkQueue, SendInBackground ----

void ChunkQueue::Push(const char* data, size_t size) {
  chunks_.emplace_back(data, size);
  queued_ += size;
}

std::string_view ChunkQueue::Front(size_t max) const {
  if (chunks_.empty()) return {};
  const std::string& front = chunks_.front();
  return std::string_view(front.data() + offset_, std::min(max, front.size() - offset_));
}

void ChunkQueue::Consume(size_t n) {
  offset_ += n;
  queued_ -= n;
  if (offset_ == chunks_.front().size()) {
    chunks_.pop_front();
    offset_ = 0;
  }
}

std::thread SendInBackground(S3Http& http, const S3Call& call, std::mutex& mu,
                             std::condition_variable& cv, Result<S3Answer>& answer, bool& done) {
  return std::thread([&http, &call, &mu, &cv, &answer, &done] {
    auto got = http.Send(call);
    std::lock_guard lock(mu);
    answer = std::move(got);
    done = true;
    cv.notify_all();
  });
}

// ---- SpoolWriter ----

SpoolWriter::SpoolWriter(int fd, Finish finish, bool reports_replaced)
    : fd_(fd),
      finish_(std::move(finish)),
      reports_replaced_(reports_replaced),
      md5_(crypto::DigestAlgorithm::kMd5) {}

SpoolWriter::~SpoolWriter() { Abort(); }

Result<void> SpoolWriter::Write(const char* data, size_t size) {
  if (fd_ < 0) return Fail(ErrorCode::kUnavailable, "writer closed");
  md5_.Update(data, size);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd_, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Abort();
      return Fail(ErrorCode::kUnavailable,
                  std::string("The upload spool could not be written: ") + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  written_ += size;
  return {};
}

Result<ObjectInfo> SpoolWriter::Commit(ObjectInfo info) {
  if (fd_ < 0) return Fail(ErrorCode::kUnavailable, "writer closed");
  auto result = finish_(fd_, written_, md5_.Finish(), std::move(info));
  Abort();
  return result;
}

void SpoolWriter::Abort() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

// ---- StreamWriter ----

StreamWriter::StreamWriter(S3Http& http, S3Call call, uint64_t size, Finish finish)
    : call_(std::move(call)),
      size_(size),
      finish_(std::move(finish)),
      md5_(crypto::DigestAlgorithm::kMd5) {
  call_.pull = [this](char* out, size_t want) { return Pull(out, want); };
  call_.pull_size = size_;
  thread_ = SendInBackground(http, call_, mu_, cv_, answer_, done_);
}

StreamWriter::~StreamWriter() { Abort(); }

long StreamWriter::Pull(char* out, size_t want) {
  std::unique_lock lock(mu_);
  while (true) {
    if (aborted_) return -1;
    // The last byte waits for Release: without it the store cannot complete the object.
    const uint64_t allowed = released_ ? size_ : size_ - 1;
    if (!chunks_.empty() && delivered_ < allowed) {
      std::string_view front = chunks_.Front(std::min<uint64_t>(want, allowed - delivered_));
      std::memcpy(out, front.data(), front.size());
      chunks_.Consume(front.size());
      delivered_ += front.size();
      cv_.notify_all();
      return static_cast<long>(front.size());
    }
    cv_.wait(lock);
  }
}

Result<void> StreamWriter::Write(const char* data, size_t size) {
  if (size == 0) return {};
  std::unique_lock lock(mu_);
  if (aborted_ || committed_) return Fail(ErrorCode::kUnavailable, "writer closed");
  if (received_ + size > size_) {
    return Fail(ErrorCode::kInvalidInput,
                "The body is longer than the declared " + std::to_string(size_) + " bytes");
  }
  cv_.wait(lock, [&] { return chunks_.queued() < kWindow || done_ || aborted_; });
  if (done_) {
    // The store ended the request before the body did: refused, timed out or gone.
    if (!answer_) return Fail(answer_.error());
    return Fail(Error{
        ErrorCode::kUnavailable,
        "The S3 backend ended the upload early (HTTP " + std::to_string(answer_->status) + ")",
        {}}.With("backend", "refused"));
  }
  if (aborted_) return Fail(ErrorCode::kUnavailable, "writer closed");
  md5_.Update(data, size);
  chunks_.Push(data, size);
  received_ += size;
  cv_.notify_all();
  return {};
}

Result<S3Answer> StreamWriter::Release() {
  {
    std::lock_guard lock(mu_);
    released_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  return answer_;
}

Result<ObjectInfo> StreamWriter::Commit(ObjectInfo info) {
  {
    std::lock_guard lock(mu_);
    if (aborted_ || committed_) return Fail(ErrorCode::kUnavailable, "writer closed");
    committed_ = true;
  }
  if (received_ != size_) {
    Abort();
    return Fail(ErrorCode::kInvalidInput,
                "The body's length differs from the declared " + std::to_string(size_) + " bytes");
  }
  auto result = finish_(*this, md5_.Finish(), std::move(info));
  Abort();  // when `finish` failed before Release: the store never gets the last byte
  return result;
}

void StreamWriter::Abort() {
  {
    std::lock_guard lock(mu_);
    if (!released_) aborted_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// ---- StreamReader ----

StreamReader::StreamReader(S3Http& http, S3Call call,
                           std::function<Error(const S3Answer&)> describe_failure)
    : call_(std::move(call)), describe_failure_(std::move(describe_failure)) {
  call_.on_headers = [this](long status, const std::map<std::string, std::string>& headers) {
    std::lock_guard lock(mu_);
    status_ = status;
    headers_ = headers;
    ready_ = true;
    cv_.notify_all();
  };
  call_.sink = [this](const char* data, size_t size) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return cancelled_ || chunks_.queued() < kWindow; });
    if (cancelled_) return false;
    chunks_.Push(data, size);
    cv_.notify_all();
    return true;
  };
  thread_ = SendInBackground(http, call_, mu_, cv_, answer_, done_);
}

StreamReader::~StreamReader() {
  {
    std::lock_guard lock(mu_);
    cancelled_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

Result<std::map<std::string, std::string>> StreamReader::Start() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return ready_ || done_; });
  if (ready_) return headers_;
  if (!answer_) return Fail(answer_.error());
  return Fail(describe_failure_(*answer_));
}

bool StreamReader::Await(std::unique_lock<std::mutex>& lock, std::optional<Error>& end) {
  if (lent_ > 0) {
    chunks_.Consume(lent_);
    lent_ = 0;
    cv_.notify_all();
  }
  cv_.wait(lock, [&] { return !chunks_.empty() || done_; });
  if (!chunks_.empty()) return true;
  if (!answer_) {
    end = answer_.error();
  } else if (answer_->status < 200 || answer_->status >= 300) {
    end = describe_failure_(*answer_);
  }
  return false;
}

Result<size_t> StreamReader::Read(char* buffer, size_t size) {
  std::unique_lock lock(mu_);
  std::optional<Error> end;
  if (!Await(lock, end)) {
    if (end) return Fail(*end);
    return 0;
  }
  std::string_view front = chunks_.Front(size);
  std::memcpy(buffer, front.data(), front.size());
  chunks_.Consume(front.size());
  cv_.notify_all();
  return front.size();
}

Result<std::string_view> StreamReader::Next(size_t max) {
  std::unique_lock lock(mu_);
  std::optional<Error> end;
  if (!Await(lock, end)) {
    if (end) return Fail(*end);
    return std::string_view();
  }
  std::string_view front = chunks_.Front(max);
  lent_ = front.size();
  return front;
}

}  // namespace tablemere::objectstore
