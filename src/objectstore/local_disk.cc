// Durability: each object's bytes go to a file with a fresh unique name, which the
// writer fdatasyncs, with its directory, on the request's own thread (so concurrent
// requests' syncs overlap); the index row that makes it visible is committed by a
// group-commit leader, which first fsyncs any directory a batched write names. Because
// the blob name is unique and only reachable through the index, the index commit is the
// atomic publish: a killed server leaves at most an unreferenced file, never a partial
// object, and an acknowledged write is on disk.
//
// Small objects (at most kInlineLimit bytes) skip the file: their bytes go into the index
// itself, in the same group commit as their row. SQLite's write-ahead log is then the
// append-only segment they are packed into, and one fsync of it makes a whole group of
// small objects durable, where a file each costs its own fdatasync and directory sync.
// Freed space is reused by SQLite (the row is deleted in the transaction that drops or
// replaces the object, so nothing is left to collect), and backups carry them with the
// index.
#include "objectstore/local_disk.h"

#include <fcntl.h>
#include <semaphore.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <system_error>
#include <thread>

#include "common/crypto.h"
#include "common/strings.h"
#include "objectstore/small_objects.h"
#include "sqlite/reader_pool.h"
#include "sqlite/sqlite.h"

namespace tablemere::objectstore {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS buckets (name TEXT PRIMARY KEY, created_ms INTEGER NOT NULL,
  attrs TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS objects (
  bucket TEXT NOT NULL, key TEXT NOT NULL, blob TEXT NOT NULL, size INTEGER NOT NULL,
  etag TEXT NOT NULL, modified_ms INTEGER NOT NULL, headers TEXT NOT NULL, checksums TEXT NOT NULL,
  part_sizes TEXT NOT NULL DEFAULT '', attrs TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (bucket, key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS uploads (
  upload_id TEXT PRIMARY KEY, bucket TEXT NOT NULL, key TEXT NOT NULL, initiated_ms INTEGER NOT NULL,
  headers TEXT NOT NULL, checksums TEXT NOT NULL, attrs TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS uploads_by_bucket ON uploads(bucket, key);
CREATE TABLE IF NOT EXISTS inline_blobs (id INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS parts (
  upload_id TEXT NOT NULL, part_number INTEGER NOT NULL, blob TEXT NOT NULL, size INTEGER NOT NULL,
  etag TEXT NOT NULL, modified_ms INTEGER NOT NULL, checksums TEXT NOT NULL,
  PRIMARY KEY (upload_id, part_number)) WITHOUT ROWID;
)sql";

// Read connections to the index: lookups and small objects' bytes are read on any of
// them at once (one shared connection had every GET wait for the one before).
constexpr int kReaders = 4;

// Largest number of index writes folded into one group commit.
constexpr size_t kMaxBatch = 256;

// Objects up to this size are kept in the index (see the top of this file). Iceberg's
// metadata files, manifest lists and most manifests are below it. Larger objects would
// make the one group-commit thread copy much more per batch, and SQLite writes WAL pages
// twice (log, then checkpoint), so they keep their own file.
constexpr uint64_t kInlineLimit = 128 * 1024;
// The write-ahead log is checkpointed into the index by a helper thread once it holds
// this many pages, so no commit waits for a checkpoint's writes and syncs; if the helper
// falls behind to the second figure, the group-commit leader checkpoints itself.
constexpr int kCheckpointPages = 1000;
constexpr int kCheckpointInlinePages = 8000;

// An inline object's blob name: this prefix, then its inline_blobs id.
constexpr std::string_view kInlinePrefix = "inline:";
bool IsInline(std::string_view blob) { return blob.starts_with(kInlinePrefix); }
std::optional<int64_t> InlineId(std::string_view blob) {
  if (!IsInline(blob)) return std::nullopt;
  return ParseInt(std::string(blob.substr(kInlinePrefix.size())));
}

Error NoSuchBucket(const std::string& bucket) {
  return StoreError(StoreFailure::kNoSuchBucket, ErrorCode::kNotFound,
                    "The specified bucket does not exist")
      .With("resource", bucket);
}
Error NoSuchKey() {
  return StoreError(StoreFailure::kNoSuchKey, ErrorCode::kNotFound,
                    "The specified key does not exist.");
}
Error NoSuchUpload() {
  return StoreError(StoreFailure::kNoSuchUpload, ErrorCode::kNotFound,
                    "The specified multipart upload does not exist. The upload ID may be invalid, "
                    "or the upload may have been aborted or completed.");
}
Error IoError(const std::string& what) {
  return Error{ErrorCode::kUnavailable, "storage I/O failed: " + what, {}};
}

std::string MapToJson(const std::map<std::string, std::string>& m) { return Json(m).dump(); }
std::map<std::string, std::string> JsonToMap(const std::string& s) {
  // Non-throwing: a value that is not a string (a corrupt row) is skipped, not thrown.
  auto j = Json::parse(s, nullptr, false);
  std::map<std::string, std::string> out;
  if (!j.is_object()) return out;
  for (const auto& [k, v] : j.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

// An object's or bucket's attributes in one JSON column: {"tags": {…}, "acl": "…",
// "cors": "…", "version": "…", "lock": [mode, until], "hold": "…"}; '' (rows written
// before attributes existed) reads as none.
std::string AttrsToJson(const std::map<std::string, std::string>& tags, const std::string& acl,
                        const std::string& cors, const ObjectInfo* object = nullptr) {
  Json j = Json::object();
  if (!tags.empty()) j["tags"] = tags;
  if (!acl.empty()) j["acl"] = acl;
  if (!cors.empty()) j["cors"] = cors;
  if (object && !object->version_id.empty()) j["version"] = object->version_id;
  if (object && !object->lock_mode.empty()) {
    j["lock"] = Json::array({object->lock_mode, object->lock_until_ms});
  }
  if (object && !object->legal_hold.empty()) j["hold"] = object->legal_hold;
  return j.empty() ? std::string() : j.dump();
}
std::string AttrsToJson(const ObjectInfo& object) {
  return AttrsToJson(object.tags, object.acl, "", &object);
}
struct Attrs {
  std::map<std::string, std::string> tags;
  std::string acl, cors, version, lock_mode, legal_hold;
  int64_t lock_until_ms = 0;
  void ApplyTo(ObjectInfo& info) && {
    info.tags = std::move(tags);
    info.acl = std::move(acl);
    info.version_id = std::move(version);
    info.lock_mode = std::move(lock_mode);
    info.lock_until_ms = lock_until_ms;
    info.legal_hold = std::move(legal_hold);
  }
};
Attrs JsonToAttrs(const std::string& s) {
  Attrs a;
  if (s.empty()) return a;
  auto j = Json::parse(s, nullptr, false);
  if (!j.is_object()) return a;
  if (auto t = j.find("tags"); t != j.end() && t->is_object()) {
    for (const auto& [k, v] : t->items()) {
      if (v.is_string()) a.tags[k] = v.get<std::string>();
    }
  }
  if (auto v = j.find("acl"); v != j.end() && v->is_string()) a.acl = v->get<std::string>();
  if (auto v = j.find("cors"); v != j.end() && v->is_string()) a.cors = v->get<std::string>();
  if (auto v = j.find("version"); v != j.end() && v->is_string()) {
    a.version = v->get<std::string>();
  }
  if (auto v = j.find("lock"); v != j.end() && v->is_array() && v->size() == 2 &&
                               (*v)[0].is_string() && (*v)[1].is_number_integer()) {
    a.lock_mode = (*v)[0].get<std::string>();
    a.lock_until_ms = (*v)[1].get<int64_t>();
  }
  if (auto v = j.find("hold"); v != j.end() && v->is_string()) a.legal_hold = v->get<std::string>();
  return a;
}

// Part sizes, with each part's checksum when there is one: "size[:checksum],…" (base64
// has neither ',' nor ':'). A size that does not parse marks the row corrupt.
std::string EncodeParts(const ObjectInfo& info) {
  std::string out;
  for (size_t i = 0; i < info.part_sizes.size(); i++) {
    if (i) out += ",";
    out += std::to_string(info.part_sizes[i]);
    if (i < info.part_checksums.size() && !info.part_checksums[i].empty()) {
      out += ":" + info.part_checksums[i];
    }
  }
  return out;
}
Result<void> DecodeParts(const std::string& text, ObjectInfo& info) {
  bool any_checksum = false;
  for (const auto& item : Split(text, ',')) {
    if (item.empty()) continue;
    size_t colon = item.find(':');
    auto size = ParseInt(item.substr(0, colon));
    if (!size || *size < 0) {
      return Fail(Error{ErrorCode::kInternal, "corrupt part list in the object index", {}});
    }
    info.part_sizes.push_back(static_cast<uint64_t>(*size));
    info.part_checksums.push_back(colon == std::string::npos ? "" : item.substr(colon + 1));
    any_checksum = any_checksum || colon != std::string::npos;
  }
  if (!any_checksum) info.part_checksums.clear();
  return {};
}

class FileReader final : public ObjectReader {
 public:
  FileReader(int fd, uint64_t offset, uint64_t length)
      : fd_(fd), offset_(offset), length_(length) {}
  ~FileReader() override { ::close(fd_); }
  Result<size_t> Read(char* buffer, size_t size) override {
    if (pos_ >= length_) return size_t{0};
    size_t want = static_cast<size_t>(std::min<uint64_t>(size, length_ - pos_));
    ssize_t n = ::pread(fd_, buffer, want, static_cast<off_t>(offset_ + pos_));
    if (n < 0) return Fail(IoError("read"));
    pos_ += static_cast<uint64_t>(n);
    return static_cast<size_t>(n);
  }

 private:
  int fd_;
  uint64_t offset_;
  uint64_t length_;
  uint64_t pos_ = 0;
};

// Reads of at least this many bytes are read ahead by a helper thread, in chunks of
// kReadAheadChunk, at most kReadAheadDepth chunks (the one being sent included) in
// hand. Measured on 2 cores: a deeper look-ahead lets the helper take all the reading
// onto the core the client also needs (8 deep: ~0.65x of loopback; 2 deep: ~0.89x).
constexpr uint64_t kReadAheadThreshold = 8 * 1024 * 1024;
constexpr size_t kReadAheadChunk = 512 * 1024;
constexpr size_t kReadAheadDepth = 2;

// Fills `size` bytes at `at` from `fd`; a short file is an error (the index promised
// more bytes than the blob holds).
Result<void> PreadFully(int fd, char* out, size_t size, uint64_t at) {
  while (size > 0) {
    ssize_t n = ::pread(fd, out, size, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Fail(IoError(std::string("read: ") + std::strerror(errno)));
    if (n == 0) return Fail(IoError("read: object file is shorter than its index entry"));
    out += n;
    size -= static_cast<size_t>(n);
    at += static_cast<uint64_t>(n);
  }
  return {};
}

// A large read, shared between the consumer and a helper thread. Copying from the page
// cache is about a third of a large GET's CPU on the sending thread; the helper fills
// buffers ahead on the other core, and lends them (Next) so they are sent without a
// further copy. When the helper has not started the chunk the consumer needs next, the
// consumer reads that chunk itself rather than wait, so a busy or descheduled helper
// never slows a read below a plain pread loop. The work divides itself between the
// cores as they have room.
class ReadAheadFileReader final : public ObjectReader {
 public:
  ReadAheadFileReader(int fd, uint64_t offset, uint64_t length)
      : fd_(fd),
        offset_(offset),
        length_(length),
        chunks_(static_cast<size_t>((length + kReadAheadChunk - 1) / kReadAheadChunk)) {
    for (auto& slot : slots_) slot.data = std::make_unique_for_overwrite<char[]>(kReadAheadChunk);
    helper_ = std::thread([this] { HelperLoop(); });
  }
  ~ReadAheadFileReader() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    helper_.join();
    ::close(fd_);
  }
  ReadAheadFileReader(const ReadAheadFileReader&) = delete;
  ReadAheadFileReader& operator=(const ReadAheadFileReader&) = delete;

  Result<std::string_view> Next(size_t max) override {
    if (failed_) return Fail(*failed_);  // a failed read stays failed
    if (current_ < chunks_ && pos_in_chunk_ == ChunkSize(current_)) Release();
    if (current_ >= chunks_ || max == 0) return std::string_view();
    if (pos_in_chunk_ == 0) {
      if (auto acquired = Acquire(current_); !acquired) {
        failed_ = acquired.error();
        return Fail(acquired.error());
      }
    }
    Slot& slot = slots_[current_ % kReadAheadDepth];
    size_t n = std::min(max, ChunkSize(current_) - pos_in_chunk_);
    std::string_view view(slot.data.get() + pos_in_chunk_, n);
    pos_in_chunk_ += n;
    return view;
  }

  Result<size_t> Read(char* buffer, size_t size) override {
    TM_ASSIGN(std::string_view view, Next(size));
    if (!view.empty()) std::memcpy(buffer, view.data(), view.size());
    return view.size();
  }

 private:
  struct Slot {
    std::unique_ptr<char[]> data;
    size_t chunk = SIZE_MAX;  // the chunk whose bytes are ready here
    std::optional<Error> error;
  };

  size_t ChunkSize(size_t chunk) const {
    return static_cast<size_t>(
        std::min<uint64_t>(kReadAheadChunk, length_ - uint64_t{chunk} * kReadAheadChunk));
  }
  Result<void> Fill(size_t chunk) {
    return PreadFully(fd_, slots_[chunk % kReadAheadDepth].data.get(), ChunkSize(chunk),
                      offset_ + uint64_t{chunk} * kReadAheadChunk);
  }

  // Waits for `chunk` from the helper, or reads it here when nobody has claimed it.
  Result<void> Acquire(size_t chunk) {
    Slot& slot = slots_[chunk % kReadAheadDepth];
    {
      std::unique_lock lock(mu_);
      if (next_claim_ > chunk) {
        cv_.wait(lock, [&] { return slot.chunk == chunk; });
        if (slot.error) return Fail(*slot.error);
        return {};
      }
      next_claim_ = chunk + 1;
    }
    return Fill(chunk);
  }

  // The current chunk has been handed out whole; its buffer may be refilled.
  void Release() {
    {
      std::lock_guard lock(mu_);
      released_ = ++current_;
    }
    pos_in_chunk_ = 0;
    cv_.notify_all();
  }

  void HelperLoop() {
    while (true) {
      size_t chunk;
      {
        std::unique_lock lock(mu_);
        // Chunk j may use its slot once the chunk K before it has been released.
        cv_.wait(lock, [&] {
          return stopping_ || next_claim_ >= chunks_ || next_claim_ < released_ + kReadAheadDepth;
        });
        if (stopping_ || next_claim_ >= chunks_) return;
        chunk = next_claim_++;
      }
      auto filled = Fill(chunk);
      {
        std::lock_guard lock(mu_);
        Slot& slot = slots_[chunk % kReadAheadDepth];
        slot.error = filled ? std::nullopt : std::optional<Error>(filled.error());
        slot.chunk = chunk;
      }
      cv_.notify_all();
    }
  }

  const int fd_;
  const uint64_t offset_;
  const uint64_t length_;
  const size_t chunks_;
  std::array<Slot, kReadAheadDepth> slots_;
  std::thread helper_;
  // The consumer's position and first failure (consumer thread only).
  size_t current_ = 0;
  size_t pos_in_chunk_ = 0;
  std::optional<Error> failed_;
  // Shared, protected by mu_ (slot.chunk and slot.error too).
  std::mutex mu_;
  std::condition_variable cv_;
  size_t next_claim_ = 0;  // first chunk nobody has claimed
  size_t released_ = 0;    // chunks whose buffers are free again
  bool stopping_ = false;
};

// Takes ownership of `fd`. Large reads get a read-ahead helper; when no thread can be
// started (thread or memory limits), the plain reader serves them instead.
std::unique_ptr<ObjectReader> MakeReader(int fd, uint64_t offset, uint64_t length) {
  if (length >= kReadAheadThreshold) {
    try {
      return std::make_unique<ReadAheadFileReader>(fd, offset, length);
    } catch (const std::system_error&) {
      // The constructor did not complete, so `fd` is still open and still ours.
    } catch (const std::bad_alloc&) {
    }
  }
  return std::make_unique<FileReader>(fd, offset, length);
}

// Objects larger than this are hashed by a helper thread while the request thread
// receives and writes: MD5 (~600 MB/s, the slowest stage of a PUT) then has a core to
// itself, and the socket and page-cache copies run on the other.
constexpr uint64_t kPipelineThreshold = 8 * 1024 * 1024;
// Size of the buffers handed to the helper thread, and how many may be queued.
constexpr size_t kPipelineChunk = 4 * 1024 * 1024;
constexpr size_t kPipelineDepth = 4;
// Dirty data is pushed to the disk every this many bytes, so the final fdatasync is short.
constexpr uint64_t kWritebackEvery = 32 * 1024 * 1024;

Result<void> WriteFully(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(IoError(std::string("write: ") + std::strerror(errno)));
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return {};
}

// fsync of a directory, so a file just created in it keeps its name after a crash.
Result<void> SyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Fail(IoError("open " + dir));
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Fail(IoError("fsync " + dir));
  return {};
}

// Feeds an MD5 digest on a helper thread: a bounded queue of copied buffers, recycled so
// a large upload does not fault in fresh pages for every chunk.
class DigestPipeline {
 public:
  // Continues `digest`, which may already hold the start of the object.
  explicit DigestPipeline(crypto::Digest digest)
      : digest_(std::move(digest)), thread_([this] { Run(); }) {}
  ~DigestPipeline() { (void)Finish(); }

  void Push(const char* data, size_t size) {
    while (size > 0) {
      if (current_.capacity() < kPipelineChunk) current_ = TakeFreeBuffer();
      size_t n = std::min(size, kPipelineChunk - current_.size());
      current_.append(data, n);
      data += n;
      size -= n;
      if (current_.size() == kPipelineChunk) Flush();
    }
  }

  // Hashes what is left, stops the helper and returns the raw digest.
  std::string Finish() {
    if (!finished_) {
      if (!current_.empty()) Flush();
      {
        std::lock_guard lock(mu_);
        done_ = true;
      }
      cv_.notify_all();
      if (thread_.joinable()) thread_.join();
      finished_ = true;
      result_ = digest_.Finish();
    }
    return result_;
  }

 private:
  std::string TakeFreeBuffer() {
    std::string buffer;
    {
      std::lock_guard lock(mu_);
      if (!free_.empty()) {
        buffer = std::move(free_.back());
        free_.pop_back();
      }
    }
    buffer.clear();
    buffer.reserve(kPipelineChunk);
    return buffer;
  }

  void Flush() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return queue_.size() < kPipelineDepth; });
    queue_.push_back(std::move(current_));
    current_ = std::string();
    cv_.notify_all();
  }

  void Run() {
    while (true) {
      std::string chunk;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !queue_.empty() || done_; });
        if (queue_.empty()) return;
        chunk = std::move(queue_.front());
        queue_.pop_front();
      }
      cv_.notify_all();
      digest_.Update(chunk.data(), chunk.size());
      std::lock_guard lock(mu_);
      free_.push_back(std::move(chunk));
    }
  }

  crypto::Digest digest_;  // used only by the helper until it is joined
  std::string current_;    // filled by the producer only
  bool finished_ = false;
  std::string result_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;  // protected by mu_
  std::vector<std::string> free_;  // protected by mu_
  bool done_ = false;              // protected by mu_
  std::thread thread_;             // last: starts after the state above exists
};

class FileWriter final : public ObjectWriter {
 public:
  // Publishes the durable file `blob` (its index row); called by Commit.
  using CommitFn = std::function<Result<ObjectInfo>(const std::string& blob, ObjectInfo info)>;
  // `reports_replaced`: `commit` fills ObjectInfo::replaced (an object's put, not a part).
  FileWriter(std::string blob, std::string dir, std::string path, int fd, CommitFn commit,
             bool reports_replaced)
      : blob_(std::move(blob)),
        dir_(std::move(dir)),
        path_(std::move(path)),
        fd_(fd),
        commit_(std::move(commit)),
        reports_replaced_(reports_replaced),
        md5_(crypto::DigestAlgorithm::kMd5) {}
  ~FileWriter() override { Abort(); }

  Result<void> Write(const char* data, size_t size) override {
    if (fd_ < 0) return Fail(IoError("writer closed"));
    if (!hasher_ && written_ + size > kPipelineThreshold) {
      hasher_ = std::make_unique<DigestPipeline>(std::move(md5_));
    }
    // Queued for hashing first, so the helper works while this thread writes.
    if (hasher_) {
      hasher_->Push(data, size);
    } else {
      md5_.Update(data, size);
    }
    TM_TRY(WriteFully(fd_, data, size));
    written_ += size;
    if (written_ - writeback_started_ >= kWritebackEvery) {
      ::sync_file_range(fd_, static_cast<off_t>(writeback_started_),
                        static_cast<off_t>(written_ - writeback_started_), SYNC_FILE_RANGE_WRITE);
      writeback_started_ = written_;
    }
    return {};
  }

  Result<ObjectInfo> Commit(ObjectInfo info) override {
    if (fd_ < 0) return Fail(IoError("writer closed"));
    std::string digest = hasher_ ? hasher_->Finish() : md5_.Finish();
    hasher_.reset();
    // Synced here, on the request's own thread: concurrent syncs overlap in the device
    // queue (and share journal commits where there is a journal), whereas a group-commit
    // leader syncing a batch's files one after another waited for each in turn (16 new
    // files: ~1.7 ms concurrently against 3-9 ms in turn, on this ext4).
    if (::fdatasync(fd_) != 0) {
      Abort();
      return Fail(IoError("fdatasync"));
    }
    if (auto dir = SyncDirectory(dir_); !dir) {
      Abort();
      return Fail(dir.error());
    }
    info.size = written_;
    info.etag = crypto::HexEncode(digest);
    auto result = commit_(blob_, std::move(info));
    ::close(fd_);
    fd_ = -1;
    if (result) {
      committed_ = true;
    } else {
      ::unlink(path_.c_str());
    }
    return result;
  }

  void Abort() override {
    if (committed_) return;
    hasher_.reset();
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
    if (!path_.empty()) ::unlink(path_.c_str());
    path_.clear();
  }
  uint64_t bytes_written() const override { return written_; }
  bool ReportsReplaced() const override { return reports_replaced_; }

 private:
  std::string blob_;
  std::string dir_;
  std::string path_;
  int fd_;
  CommitFn commit_;
  bool reports_replaced_;
  crypto::Digest md5_;  // until hasher_ takes it over
  std::unique_ptr<DigestPipeline> hasher_;
  uint64_t written_ = 0;
  uint64_t writeback_started_ = 0;
  bool committed_ = false;
};

class LocalDiskStore final : public ObjectStore {
 public:
  LocalDiskStore(std::string root, const Clock& clock, Random& random,
                 std::unique_ptr<sqlite::Db> writer, std::unique_ptr<sqlite::ReaderPool> readers,
                 std::unique_ptr<sqlite::Db> checkpointer, LocalDiskFaults faults)
      : root_(std::move(root)),
        clock_(clock),
        random_(random),
        directory_fsync_(faults.directory_fsync ? std::move(faults.directory_fsync)
                                                : std::function<int(int)>(::fsync)),
        writer_db_(std::move(writer)),
        readers_(std::move(readers)),
        checkpoint_db_(std::move(checkpointer)) {
    writer_db_->OnWalCommit([this](int pages) {
      if (pages >= kCheckpointInlinePages) checkpoint_inline_ = true;
      if (pages < kCheckpointPages) return;
      {
        std::lock_guard lock(checkpoint_mu_);
        checkpoint_wanted_ = true;
      }
      checkpoint_cv_.notify_one();
    });
    checkpointer_ = std::thread([this] { CheckpointLoop(); });
  }
  ~LocalDiskStore() override {
    {
      std::lock_guard lock(checkpoint_mu_);
      checkpoint_stopping_ = true;
    }
    checkpoint_cv_.notify_one();
    checkpointer_.join();
  }
  LocalDiskStore(const LocalDiskStore&) = delete;
  LocalDiskStore& operator=(const LocalDiskStore&) = delete;

  // A checkpoint that fails (a write or sync of the index file) loses nothing: the log
  // keeps every commit until a checkpoint completes, and the next one writes the pages
  // again.
  void CheckpointLoop() {
    while (true) {
      {
        std::unique_lock lock(checkpoint_mu_);
        checkpoint_cv_.wait(lock, [&] { return checkpoint_wanted_ || checkpoint_stopping_; });
        if (checkpoint_stopping_) return;
        checkpoint_wanted_ = false;
      }
      (void)checkpoint_db_->Exec("PRAGMA wal_checkpoint(PASSIVE)");
    }
  }

  // ---- bucket spaces ----
  Result<void> OpenBucket(const std::string& bucket) override {
    return IndexWrite({}, [&](sqlite::Db& db) -> Result<void> {
      TM_ASSIGN(auto* st,
                db.Prepare("INSERT OR IGNORE INTO buckets(name, created_ms) VALUES(?, ?)"));
      return st->Bind({bucket, clock_.NowMillis()}).Run();
    });
  }

  Result<void> CloseBucket(const std::string& bucket) override {
    std::vector<std::string> dropped;
    TM_TRY(IndexWrite({}, [&](sqlite::Db& db) -> Result<void> {
      TM_ASSIGN(auto* probe, db.Prepare("SELECT 1 FROM objects WHERE bucket = ? LIMIT 1"));
      TM_ASSIGN(bool has, probe->Bind({bucket}).Step());
      probe->Bind({});  // a statement left on its row would hold a read snapshot open
      if (has) {
        return Fail(StoreError(StoreFailure::kBucketNotEmpty, ErrorCode::kConflict,
                               "The bucket you tried to delete is not empty"));
      }
      TM_ASSIGN(auto* uploads, db.Prepare("SELECT upload_id FROM uploads WHERE bucket = ?"));
      uploads->Bind({bucket});
      std::vector<std::string> ids;
      while (true) {
        TM_ASSIGN(bool row, uploads->Step());
        if (!row) break;
        ids.push_back(uploads->Text(0));
      }
      // Unfinished uploads go with the bucket; their part files are removed after the
      // commit, as AbortUpload does, instead of being left unreferenced on disk.
      std::vector<std::string> parts;
      for (const auto& id : ids) TM_TRY(DeleteUploadRows(db, id, &parts));
      TM_ASSIGN(auto* del, db.Prepare("DELETE FROM buckets WHERE name = ?"));
      TM_TRY(del->Bind({bucket}).Run());
      dropped = std::move(parts);
      return {};
    }));
    for (const auto& b : dropped) UnlinkBlob(b);
    return {};
  }

  // Buckets (with their attributes) were registered here before the metastore kept them.
  Result<std::unique_ptr<ObjectBackup>> BeginBackup(const std::string& dir) override;

  // ---- deferred deletion of blobs while a backup holds them (see ObjectBackup).
  void HoldBlobs() {
    std::lock_guard lock(hold_mu_);
    holds_++;
  }
  void ReleaseBlobs() {
    std::vector<std::string> deferred;
    {
      std::lock_guard lock(hold_mu_);
      if (--holds_ == 0) deferred.swap(deferred_);
    }
    for (const auto& b : deferred) ::unlink(BlobPath(b).c_str());
  }
  // A blob no index row names any more. Its row left the index before this call, so a
  // backup whose hold began later cannot name it; one whose hold began earlier may.
  void UnlinkBlob(const std::string& blob) {
    if (IsInline(blob)) return;  // its row went with the transaction that dropped it
    {
      std::lock_guard lock(hold_mu_);
      if (holds_ > 0) {
        deferred_.push_back(blob);
        return;
      }
    }
    ::unlink(BlobPath(blob).c_str());
  }
  const std::string& root() const { return root_; }
  std::string BlobPathOf(const std::string& blob) const { return BlobPath(blob); }

  Result<std::vector<BucketInfo>> LegacyBuckets() override {
    sqlite::ReaderPool::Lease reader = readers_->Borrow();
    TM_ASSIGN(auto* st, reader.db().Prepare("SELECT name FROM buckets ORDER BY name"));
    st->Bind({});
    std::vector<std::string> names;
    while (true) {
      TM_ASSIGN(bool row, st->Step());
      if (!row) break;
      names.push_back(st->Text(0));
    }
    std::vector<BucketInfo> out;
    for (const auto& name : names) {
      TM_ASSIGN(BucketInfo info, FindBucket(reader.db(), name));
      out.push_back(std::move(info));
    }
    return out;
  }

  Result<ObjectInfo> SetObjectAttributes(const std::string& bucket, const std::string& key,
                                         const AttributeChange& change) override {
    ObjectInfo info;
    TM_TRY(IndexWrite({}, [&](sqlite::Db& db) -> Result<void> {
      std::string blob;
      TM_ASSIGN(info, FindObject(db, bucket, key, &blob));
      ApplyObjectChange(change, info);
      TM_ASSIGN(auto* st, db.Prepare("UPDATE objects SET attrs = ? WHERE bucket = ? AND key = ?"));
      return st->Bind({AttrsToJson(info), bucket, key}).Run();
    }));
    return info;
  }

  // ---- objects ----
  Result<std::unique_ptr<ObjectWriter>> BeginPut(
      const std::string& bucket, const std::string& key, PutConditions conditions,
      std::optional<uint64_t> size,
      std::optional<std::map<std::string, std::string>> /*headers: written at Commit*/) override {
    // A missing bucket is found before the body is received, except for declared small
    // bodies: their publishing transaction checks the bucket anyway, and a lookup of its
    // own was 4% of a small PUT's server time.
    if (!size || *size > kInlineLimit) {
      sqlite::ReaderPool::Lease reader = readers_->Borrow();
      TM_TRY(FindBucket(reader.db(), bucket));
    }
    auto publish_file = [this, bucket, key, conditions](const std::string& blob, ObjectInfo info) {
      return PublishObject(bucket, key, blob, conditions, std::move(info));
    };
    if (size && *size > kInlineLimit) return NewWriter(size, std::move(publish_file), true);
    // Small, or of unknown size: held in memory, and moved into a file if it outgrows
    // the limit.
    auto writer = std::make_unique<SmallObjectWriter>(
        kInlineLimit,
        [this, bucket, key, conditions](std::string bytes, ObjectInfo info) {
          return PublishInlineObject(bucket, key, std::move(bytes), conditions, std::move(info));
        },
        [this, publish_file] { return NewWriter(std::nullopt, publish_file, true); }, true);
    return HoldToSize(std::move(writer), size);
  }

  Result<ObjectInfo> Head(const std::string& bucket, const std::string& key) override {
    sqlite::ReaderPool::Lease reader = readers_->Borrow();
    std::string blob;
    return FindObject(reader.db(), bucket, key, &blob);
  }

  Result<std::unique_ptr<ObjectReader>> Get(const std::string& bucket, const std::string& key,
                                            uint64_t offset, std::optional<uint64_t> length,
                                            ObjectInfo* info) override {
    // A concurrent overwrite may unlink the blob between lookup and open; look again.
    for (int attempt = 0; attempt < 3; attempt++) {
      std::string blob;
      ObjectInfo found;
      std::optional<std::string> bytes;
      {
        sqlite::ReaderPool::Lease reader = readers_->Borrow();
        TM_ASSIGN(found, FindObject(reader.db(), bucket, key, &blob));
        if (auto id = InlineId(blob)) {
          TM_ASSIGN(bytes, ReadInline(reader.db(), *id, offset, length));
          if (!bytes) continue;  // replaced since the lookup
        }
      }
      if (bytes) {
        if (info) *info = std::move(found);
        return std::unique_ptr<ObjectReader>(std::make_unique<MemoryReader>(std::move(*bytes)));
      }
      int fd = ::open(BlobPath(blob).c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        if (errno == ENOENT) continue;
        return Fail(IoError("open"));
      }
      uint64_t len = length ? *length : (found.size > offset ? found.size - offset : 0);
      if (info) *info = std::move(found);
      return MakeReader(fd, offset, len);
    }
    return Fail(NoSuchKey());
  }

  Result<void> Delete(const std::string& bucket, const std::string& key) override {
    std::string old_blob;
    TM_TRY(IndexWrite({}, [&](sqlite::Db& db) -> Result<void> {
      TM_TRY(FindBucket(db, bucket));
      TM_ASSIGN(auto* sel, db.Prepare("SELECT blob FROM objects WHERE bucket = ? AND key = ?"));
      TM_ASSIGN(bool row, sel->Bind({bucket, key}).Step());
      if (!row) return {};
      old_blob = sel->Text(0);
      sel->Bind({});
      TM_ASSIGN(auto* del, db.Prepare("DELETE FROM objects WHERE bucket = ? AND key = ?"));
      TM_TRY(del->Bind({bucket, key}).Run());
      return DropInline(db, old_blob);
    }));
    if (!old_blob.empty()) UnlinkBlob(old_blob);
    return {};
  }

  Result<ObjectInfo> Copy(const std::string& src_bucket, const std::string& src_key,
                          const std::string& dst_bucket, const std::string& dst_key,
                          std::optional<ObjectInfo> replace_metadata) override {
    ObjectInfo src_info;
    TM_ASSIGN(auto reader, Get(src_bucket, src_key, 0, std::nullopt, &src_info));
    TM_ASSIGN(auto writer,
              BeginPut(dst_bucket, dst_key, PutConditions{}, std::nullopt, std::nullopt));
    std::string buf(1 << 20, '\0');
    while (true) {
      TM_ASSIGN(size_t n, reader->Read(buf.data(), buf.size()));
      if (n == 0) break;
      TM_TRY(writer->Write(buf.data(), n));
    }
    ObjectInfo info = replace_metadata ? std::move(*replace_metadata) : src_info;
    if (!replace_metadata) info.checksums = src_info.checksums;
    info.part_sizes.clear();  // a copy is written in one piece
    info.part_checksums.clear();
    return writer->Commit(std::move(info));
  }

  Result<ListResult> List(const std::string& bucket, const ListOptions& options) override {
    sqlite::ReaderPool::Lease reader = readers_->Borrow();
    TM_TRY(FindBucket(reader.db(), bucket));
    ListResult result;
    int max_keys = std::max(0, std::min(options.max_keys, 1000));
    if (max_keys == 0) return result;
    // Start at the later of the prefix and the marker; keys are compared as bytes.
    std::string cursor = options.prefix;
    bool exclusive = false;
    if (!options.start_after.empty() && options.start_after >= cursor) {
      cursor = options.start_after;
      exclusive = true;
    }
    if (!options.continuation.empty() && options.continuation >= cursor) {
      cursor = options.continuation;
      exclusive = true;
      if (!options.delimiter.empty() && cursor.ends_with(options.delimiter) &&
          cursor.find(options.delimiter, options.prefix.size()) ==
              cursor.size() - options.delimiter.size()) {
        std::string next = cursor;
        while (!next.empty() && static_cast<unsigned char>(next.back()) == 0xff) next.pop_back();
        if (next.empty()) return result;
        next.back() = static_cast<char>(static_cast<unsigned char>(next.back()) + 1);
        cursor = next;
        exclusive = false;
      }
    }
    TM_ASSIGN(auto* st, reader.db().Prepare(
                            "SELECT key, size, etag, modified_ms, headers, checksums FROM objects "
                            "WHERE bucket = ? AND key >= ? ORDER BY key LIMIT 1001"));
    int count = 0;
    while (true) {
      st->Bind({bucket, cursor});
      bool advanced = false;
      std::string skip_to;
      while (true) {
        TM_ASSIGN(bool row, st->Step());
        if (!row) break;
        std::string key = st->Text(0);
        if (exclusive && key == cursor) continue;
        if (!key.starts_with(options.prefix)) break;
        advanced = true;
        if (count == max_keys) {
          result.truncated = true;
          st->Bind({});
          return result;
        }
        if (!options.delimiter.empty()) {
          size_t d = key.find(options.delimiter, options.prefix.size());
          if (d != std::string::npos) {
            std::string cp = key.substr(0, d + options.delimiter.size());
            result.common_prefixes.push_back(cp);
            result.next_marker = cp;
            count++;
            skip_to = cp;
            break;
          }
        }
        ObjectInfo info;
        info.key = key;
        info.size = static_cast<uint64_t>(st->Int(1));
        info.etag = st->Text(2);
        info.last_modified_ms = st->Int(3);
        info.headers = JsonToMap(st->Text(4));
        info.checksums = JsonToMap(st->Text(5));
        result.next_marker = key;
        result.objects.push_back(std::move(info));
        count++;
        cursor = key;
        exclusive = true;
      }
      st->Bind({});
      if (!skip_to.empty()) {
        // Jump past every key under the common prefix: the smallest string greater than
        // all strings starting with it.
        std::string next = skip_to;
        while (!next.empty() && static_cast<unsigned char>(next.back()) == 0xff) next.pop_back();
        if (next.empty()) break;
        next.back() = static_cast<char>(static_cast<unsigned char>(next.back()) + 1);
        cursor = next;
        exclusive = false;
        continue;
      }
      if (!advanced) break;
    }
    return result;
  }

  // ---- multipart ----
  Result<UploadInfo> CreateUpload(const std::string& bucket, const std::string& key,
                                  ObjectInfo pending) override {
    UploadInfo upload;
    upload.upload_id = crypto::Base64UrlEncode(random_.Bytes(24));
    upload.key = key;
    upload.initiated_ms = clock_.NowMillis();
    upload.pending = std::move(pending);
    TM_TRY(IndexWrite({}, [&](sqlite::Db& db) -> Result<void> {
      TM_TRY(FindBucket(db, bucket));
      TM_ASSIGN(auto* st, db.Prepare("INSERT INTO uploads(upload_id, bucket, key, initiated_ms, "
                                     "headers, checksums, attrs) VALUES(?, ?, ?, ?, ?, ?, ?)"));
      return st
          ->Bind({upload.upload_id, bucket, key, upload.initiated_ms,
                  MapToJson(upload.pending.headers), MapToJson(upload.pending.checksums),
                  AttrsToJson(upload.pending)})
          .Run();
    }));
    return upload;
  }

  Result<UploadInfo> GetUpload(const std::string& bucket, const std::string& upload_id) override {
    sqlite::ReaderPool::Lease reader = readers_->Borrow();
    return FindUpload(reader.db(), bucket, upload_id);
  }

  Result<std::unique_ptr<ObjectWriter>> BeginPart(const std::string& bucket,
                                                  const std::string& upload_id, int part_number,
                                                  std::optional<uint64_t> size) override {
    {
      sqlite::ReaderPool::Lease reader = readers_->Borrow();
      TM_TRY(FindUpload(reader.db(), bucket, upload_id));
    }
    return NewWriter(
        size, [this, bucket, upload_id, part_number](const std::string& blob, ObjectInfo info) {
          return PublishPart(bucket, upload_id, part_number, blob, std::move(info));
        });
  }

  Result<std::vector<PartInfo>> ListParts(const std::string& bucket,
                                          const std::string& upload_id) override {
    sqlite::ReaderPool::Lease reader = readers_->Borrow();
    TM_TRY(FindUpload(reader.db(), bucket, upload_id));
    return ReadParts(reader.db(), upload_id, nullptr);
  }

  Result<ObjectInfo> CompleteUpload(const std::string& bucket, const std::string& upload_id,
                                    const std::vector<int>& part_numbers, ObjectInfo final_info,
                                    PutConditions conditions) override {
    std::map<int, std::string> blobs;
    std::vector<PartInfo> parts;
    {
      sqlite::ReaderPool::Lease reader = readers_->Borrow();
      TM_TRY(FindUpload(reader.db(), bucket, upload_id));
      TM_ASSIGN(parts, ReadParts(reader.db(), upload_id, &blobs));
    }
    std::map<int, PartInfo> by_number;
    for (auto& p : parts) by_number[p.part_number] = p;
    std::string blob;
    uint64_t size = 0;
    if (part_numbers.size() == 1) {
      // One part: the part's file becomes the object's file, no copy.
      auto it = blobs.find(part_numbers[0]);
      if (it == blobs.end()) return Fail(InvalidPart());
      blob = it->second;
      size = by_number[part_numbers[0]].size;
    } else {
      TM_ASSIGN(blob, ConcatenateParts(part_numbers, blobs, &size));
    }
    final_info.size = size;
    final_info.part_sizes.clear();
    for (int n : part_numbers) final_info.part_sizes.push_back(by_number[n].size);
    std::string old_blob;
    std::vector<std::string> dropped;
    auto published = IndexWrite({BlobDir(blob)}, [&](sqlite::Db& db) -> Result<void> {
      TM_TRY(FindUpload(db, bucket, upload_id));
      TM_TRY(CheckConditions(db, bucket, final_info.key, conditions));
      TM_TRY(UpsertObject(db, bucket, final_info.key, blob, final_info, &old_blob));
      return DeleteUploadRows(db, upload_id, &dropped);
    });
    if (!published) {
      // A concatenated file belongs to nobody yet; a single part's file stays the part's.
      if (part_numbers.size() > 1) UnlinkBlob(blob);
      return Fail(published.error());
    }
    if (!old_blob.empty() && old_blob != blob) UnlinkBlob(old_blob);
    for (const auto& b : dropped) {
      if (b != blob) UnlinkBlob(b);
    }
    final_info.last_modified_ms = clock_.NowMillis();
    return final_info;
  }

  Result<void> AbortUpload(const std::string& bucket, const std::string& upload_id) override {
    std::vector<std::string> dropped;
    TM_TRY(IndexWrite({}, [&](sqlite::Db& db) -> Result<void> {
      TM_TRY(FindUpload(db, bucket, upload_id));
      return DeleteUploadRows(db, upload_id, &dropped);
    }));
    for (const auto& b : dropped) UnlinkBlob(b);
    return {};
  }

  Result<std::vector<UploadInfo>> ListUploads(const std::string& bucket,
                                              const std::string& prefix) override {
    sqlite::ReaderPool::Lease reader = readers_->Borrow();
    TM_TRY(FindBucket(reader.db(), bucket));
    TM_ASSIGN(auto* st, reader.db().Prepare(
                            "SELECT upload_id, key, initiated_ms, headers, checksums FROM uploads "
                            "WHERE bucket = ? AND key >= ? ORDER BY key, initiated_ms"));
    st->Bind({bucket, prefix});
    std::vector<UploadInfo> out;
    while (true) {
      TM_ASSIGN(bool row, st->Step());
      if (!row) break;
      std::string key = st->Text(1);
      if (!key.starts_with(prefix)) break;
      UploadInfo u;
      u.upload_id = st->Text(0);
      u.key = key;
      u.initiated_ms = st->Int(2);
      u.pending.headers = JsonToMap(st->Text(3));
      u.pending.checksums = JsonToMap(st->Text(4));
      out.push_back(std::move(u));
    }
    // Leaving the loop early (past the prefix) keeps the statement active, which would
    // pin this connection's read snapshot and hide every later write from readers.
    st->Bind({});
    return out;
  }

  Result<void> Init() {
    std::error_code ec;
    fs::create_directories(root_ + "/blobs", ec);
    if (ec) return Fail(IoError("create " + root_ + ": " + ec.message()));
    TM_TRY(writer_db_->Exec(kSchema));
    // Indexes made before a column existed gain it, empty: objects without part sizes
    // answer partNumber as single-part objects; rows without attributes have none.
    TM_TRY(AddColumnIfMissing("objects", "part_sizes"));
    TM_TRY(AddColumnIfMissing("objects", "attrs"));
    TM_TRY(AddColumnIfMissing("uploads", "attrs"));
    return AddColumnIfMissing("buckets", "attrs");
  }

  Result<void> AddColumnIfMissing(const std::string& table, const std::string& column) {
    TM_ASSIGN(auto* has, writer_db_->Prepare("SELECT COUNT(*) FROM pragma_table_info(?) "
                                             "WHERE name = ?"));
    TM_ASSIGN(bool row, has->Bind({table, column}).Step());
    bool present = row && has->Int(0) > 0;
    has->Bind({});
    if (present) return {};
    return writer_db_->Exec("ALTER TABLE " + table + " ADD COLUMN " + column +
                            " TEXT NOT NULL DEFAULT ''");
  }

 private:
  static Error InvalidPart() {
    return StoreError(StoreFailure::kInvalidPart, ErrorCode::kConflict,
                      "One or more of the specified parts could not be found. The part may not "
                      "have been uploaded, or the specified entity tag may not match the part's "
                      "entity tag.");
  }

  std::string BlobDir(const std::string& blob) const {
    return root_ + "/blobs/" + blob.substr(0, 2);
  }
  std::string BlobPath(const std::string& blob) const { return BlobDir(blob) + "/" + blob; }

  Result<std::unique_ptr<ObjectWriter>> NewWriter(std::optional<uint64_t> size,
                                                  FileWriter::CommitFn commit,
                                                  bool reports_replaced = false) {
    std::string blob = crypto::HexEncode(random_.Bytes(16));
    std::string dir = BlobDir(blob);
    std::error_code ec;
    fs::create_directories(dir, ec);
    std::string path = dir + "/" + blob;
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
    if (fd < 0) return Fail(IoError(std::string("create blob: ") + std::strerror(errno)));
    return HoldToSize(
        std::make_unique<FileWriter>(blob, dir, path, fd, std::move(commit), reports_replaced),
        size);
  }

  // Inside the publishing transaction: concurrent conditional writers serialise here.
  Result<void> CheckConditions(sqlite::Db& db, const std::string& bucket, const std::string& key,
                               const PutConditions& conditions) {
    if (!conditions.if_none_match && !conditions.if_match) return {};
    std::string current_blob;
    auto current = FindObject(db, bucket, key, &current_blob);
    if (!current && current.error().code != ErrorCode::kNotFound) return Fail(current.error());
    auto failed = [] {
      return Fail(StoreError(StoreFailure::kPreconditionFailed, ErrorCode::kConflict,
                             "At least one of the pre-conditions you specified did not hold"));
    };
    if (conditions.if_none_match && current) return failed();
    if (conditions.if_match) {
      if (!current) return Fail(NoSuchKey());
      if (*conditions.if_match != "*" && *conditions.if_match != current->etag) return failed();
    }
    return {};
  }

  // The writer has made the file and its name durable; only the index row is left.
  Result<ObjectInfo> PublishObject(const std::string& bucket, const std::string& key,
                                   const std::string& blob, const PutConditions& conditions,
                                   ObjectInfo info) {
    return Publish(bucket, key, conditions, std::move(info),
                   [&](sqlite::Db&) -> Result<std::string> { return blob; });
  }

  // A small object's bytes and row, in one transaction of the group commit.
  Result<ObjectInfo> PublishInlineObject(const std::string& bucket, const std::string& key,
                                         std::string bytes, const PutConditions& conditions,
                                         ObjectInfo info) {
    return Publish(bucket, key, conditions, std::move(info),
                   [&](sqlite::Db& db) -> Result<std::string> {
                     TM_ASSIGN(auto* ins, db.PrepareNative("INSERT INTO inline_blobs(data) "
                                                           "VALUES(?) RETURNING id"));
                     TM_ASSIGN(bool row, ins->Bind({}).BindBlob(1, bytes).Step());
                     if (!row) return Fail(IoError("inline object id"));
                     std::string blob = std::string(kInlinePrefix) + std::to_string(ins->Int(0));
                     TM_TRY(ins->Run());  // finish the statement so its insert completes
                     return blob;
                   });
  }

  // The object's row, naming the blob `blob_of` gives inside the publishing transaction.
  Result<ObjectInfo> Publish(const std::string& bucket, const std::string& key,
                             const PutConditions& conditions, ObjectInfo info,
                             const std::function<Result<std::string>(sqlite::Db&)>& blob_of) {
    info.key = key;
    info.last_modified_ms = clock_.NowMillis();
    std::string old_blob;
    Replaced replaced;
    TM_TRY(IndexWrite({}, [&](sqlite::Db& db) -> Result<void> {
      TM_TRY(FindBucket(db, bucket));
      TM_TRY(CheckConditions(db, bucket, key, conditions));
      TM_ASSIGN(std::string blob, blob_of(db));
      return UpsertObject(db, bucket, key, blob, info, &old_blob, &replaced);
    }));
    if (!old_blob.empty()) UnlinkBlob(old_blob);
    info.replaced = replaced;
    return info;
  }

  // Inside an index transaction: the inline bytes of a blob no row names any more.
  Result<void> DropInline(sqlite::Db& db, const std::string& blob) {
    auto id = InlineId(blob);
    if (!id) return {};
    TM_ASSIGN(auto* del, db.Prepare("DELETE FROM inline_blobs WHERE id = ?"));
    return del->Bind({*id}).Run();
  }

  // The bytes [offset, offset + length) of an inline blob; nullopt when it is gone.
  Result<std::optional<std::string>> ReadInline(sqlite::Db& db, int64_t id, uint64_t offset,
                                                std::optional<uint64_t> length) {
    TM_ASSIGN(auto* st, db.Prepare("SELECT substr(data, ?, ?) FROM inline_blobs WHERE id = ?"));
    // substr takes a 32-bit length; inline blobs are far smaller.
    int64_t len = static_cast<int64_t>(std::min<uint64_t>(length.value_or(INT32_MAX), INT32_MAX));
    int64_t from = static_cast<int64_t>(std::min<uint64_t>(offset, INT32_MAX - 1)) + 1;
    TM_ASSIGN(bool row, st->Bind({from, len, id}).Step());
    if (!row) return std::optional<std::string>();
    std::string bytes = st->Text(0);
    st->Bind({});
    return std::optional<std::string>(std::move(bytes));
  }

  Result<ObjectInfo> PublishPart(const std::string& bucket, const std::string& upload_id,
                                 int part_number, const std::string& blob, ObjectInfo info) {
    info.last_modified_ms = clock_.NowMillis();
    std::string old_blob;
    TM_TRY(IndexWrite({}, [&](sqlite::Db& db) -> Result<void> {
      TM_TRY(FindUpload(db, bucket, upload_id));
      TM_ASSIGN(auto* sel,
                db.Prepare("SELECT blob FROM parts WHERE upload_id = ? AND part_number = ?"));
      TM_ASSIGN(bool row, sel->Bind({upload_id, int64_t{part_number}}).Step());
      if (row) old_blob = sel->Text(0);
      sel->Bind({});
      TM_ASSIGN(auto* st, db.Prepare("INSERT OR REPLACE INTO parts VALUES(?, ?, ?, ?, ?, ?, ?)"));
      return st
          ->Bind({upload_id, int64_t{part_number}, blob, static_cast<int64_t>(info.size), info.etag,
                  info.last_modified_ms, MapToJson(info.checksums)})
          .Run();
    }));
    if (!old_blob.empty()) UnlinkBlob(old_blob);
    return info;
  }

  Result<std::string> ConcatenateParts(const std::vector<int>& part_numbers,
                                       const std::map<int, std::string>& blobs, uint64_t* size) {
    std::string blob = crypto::HexEncode(random_.Bytes(16));
    std::error_code ec;
    fs::create_directories(BlobDir(blob), ec);
    std::string path = BlobPath(blob);
    int out = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
    if (out < 0) return Fail(IoError("create blob"));
    auto fail = [&](const std::string& what) {
      ::close(out);
      ::unlink(path.c_str());
      return Fail(IoError(what));
    };
    *size = 0;
    for (int n : part_numbers) {
      auto it = blobs.find(n);
      if (it == blobs.end()) {
        ::close(out);
        ::unlink(path.c_str());
        return Fail(InvalidPart());
      }
      int in = ::open(BlobPath(it->second).c_str(), O_RDONLY | O_CLOEXEC);
      if (in < 0) return fail("open part");
      struct stat st {};
      ::fstat(in, &st);
      uint64_t left = static_cast<uint64_t>(st.st_size);
      while (left > 0) {
        ssize_t c = ::copy_file_range(in, nullptr, out, nullptr, left, 0);
        if (c <= 0) {
          ::close(in);
          return fail("copy part");
        }
        left -= static_cast<uint64_t>(c);
      }
      ::close(in);
      *size += static_cast<uint64_t>(st.st_size);
    }
    if (::fdatasync(out) != 0) return fail("fdatasync");
    ::close(out);
    return blob;
  }

  Result<BucketInfo> FindBucket(sqlite::Db& db, const std::string& bucket) {
    TM_ASSIGN(auto* st, db.Prepare("SELECT created_ms, attrs FROM buckets WHERE name = ?"));
    TM_ASSIGN(bool row, st->Bind({bucket}).Step());
    if (!row) return Fail(NoSuchBucket(bucket));
    BucketInfo info{bucket, st->Int(0), {}, {}, {}};
    Attrs attrs = JsonToAttrs(st->Text(1));
    st->Bind({});
    info.tags = std::move(attrs.tags);
    info.acl = std::move(attrs.acl);
    info.cors = std::move(attrs.cors);
    return info;
  }

  Result<ObjectInfo> FindObject(sqlite::Db& db, const std::string& bucket, const std::string& key,
                                std::string* blob) {
    TM_ASSIGN(auto* st,
              db.Prepare("SELECT blob, size, etag, modified_ms, headers, checksums, part_sizes, "
                         "attrs FROM objects WHERE bucket = ? AND key = ?"));
    TM_ASSIGN(bool row, st->Bind({bucket, key}).Step());
    if (!row) {
      TM_TRY(FindBucket(db, bucket));
      return Fail(NoSuchKey());
    }
    ObjectInfo info;
    info.key = key;
    *blob = st->Text(0);
    info.size = static_cast<uint64_t>(st->Int(1));
    info.etag = st->Text(2);
    info.last_modified_ms = st->Int(3);
    info.headers = JsonToMap(st->Text(4));
    info.checksums = JsonToMap(st->Text(5));
    auto parts = DecodeParts(st->Text(6), info);
    Attrs attrs = JsonToAttrs(st->Text(7));
    st->Bind({});
    TM_TRY(parts);
    std::move(attrs).ApplyTo(info);
    return info;
  }

  Result<UploadInfo> FindUpload(sqlite::Db& db, const std::string& bucket,
                                const std::string& upload_id) {
    TM_ASSIGN(auto* st, db.Prepare("SELECT key, initiated_ms, headers, checksums, attrs FROM "
                                   "uploads WHERE upload_id = ? AND bucket = ?"));
    TM_ASSIGN(bool row, st->Bind({upload_id, bucket}).Step());
    if (!row) {
      TM_TRY(FindBucket(db, bucket));
      return Fail(NoSuchUpload());
    }
    UploadInfo u;
    u.upload_id = upload_id;
    u.key = st->Text(0);
    u.initiated_ms = st->Int(1);
    u.pending.headers = JsonToMap(st->Text(2));
    u.pending.checksums = JsonToMap(st->Text(3));
    JsonToAttrs(st->Text(4)).ApplyTo(u.pending);
    st->Bind({});
    return u;
  }

  Result<std::vector<PartInfo>> ReadParts(sqlite::Db& db, const std::string& upload_id,
                                          std::map<int, std::string>* blobs) {
    TM_ASSIGN(auto* st, db.Prepare("SELECT part_number, blob, size, etag, modified_ms, checksums "
                                   "FROM parts WHERE upload_id = ? ORDER BY part_number"));
    st->Bind({upload_id});
    std::vector<PartInfo> out;
    while (true) {
      TM_ASSIGN(bool row, st->Step());
      if (!row) break;
      PartInfo p;
      p.part_number = static_cast<int>(st->Int(0));
      if (blobs) (*blobs)[p.part_number] = st->Text(1);
      p.size = static_cast<uint64_t>(st->Int(2));
      p.etag = st->Text(3);
      p.last_modified_ms = st->Int(4);
      p.checksums = JsonToMap(st->Text(5));
      out.push_back(std::move(p));
    }
    return out;
  }

  Result<void> UpsertObject(sqlite::Db& db, const std::string& bucket, const std::string& key,
                            const std::string& blob, const ObjectInfo& info, std::string* old_blob,
                            Replaced* replaced = nullptr) {
    TM_ASSIGN(auto* sel, db.Prepare("SELECT blob, size FROM objects WHERE bucket = ? AND key = ?"));
    TM_ASSIGN(bool row, sel->Bind({bucket, key}).Step());
    if (row) *old_blob = sel->Text(0);
    if (replaced) *replaced = row ? Replaced{true, static_cast<uint64_t>(sel->Int(1))} : Replaced{};
    sel->Bind({});
    if (*old_blob != blob) TM_TRY(DropInline(db, *old_blob));
    TM_ASSIGN(auto* st, db.Prepare("INSERT OR REPLACE INTO objects(bucket, key, blob, size, etag, "
                                   "modified_ms, headers, checksums, part_sizes, attrs) "
                                   "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    return st
        ->Bind({bucket, key, blob, static_cast<int64_t>(info.size), info.etag,
                info.last_modified_ms ? info.last_modified_ms : clock_.NowMillis(),
                MapToJson(info.headers), MapToJson(info.checksums), EncodeParts(info),
                AttrsToJson(info)})
        .Run();
  }

  Result<void> DeleteUploadRows(sqlite::Db& db, const std::string& upload_id,
                                std::vector<std::string>* dropped_blobs) {
    TM_ASSIGN(auto* sel, db.Prepare("SELECT blob FROM parts WHERE upload_id = ?"));
    sel->Bind({upload_id});
    while (true) {
      TM_ASSIGN(bool row, sel->Step());
      if (!row) break;
      if (dropped_blobs) dropped_blobs->push_back(sel->Text(0));
    }
    TM_ASSIGN(auto* dp, db.Prepare("DELETE FROM parts WHERE upload_id = ?"));
    TM_TRY(dp->Bind({upload_id}).Run());
    TM_ASSIGN(auto* du, db.Prepare("DELETE FROM uploads WHERE upload_id = ?"));
    return du->Bind({upload_id}).Run();
  }

  // A POSIX semaphore, not std::binary_semaphore: libstdc++'s spins with sched_yield
  // before it sleeps, which on a busy 2-core machine measured more involuntary context
  // switches than the shared condition variable it replaced. glibc's sem_post is safe
  // against the woken thread destroying the semaphore at once.
  class Wakeup {
   public:
    Wakeup() { ::sem_init(&sem_, 0, 0); }
    ~Wakeup() { ::sem_destroy(&sem_); }
    Wakeup(const Wakeup&) = delete;
    Wakeup& operator=(const Wakeup&) = delete;
    void Wait() {
      while (::sem_wait(&sem_) != 0) {  // only EINTR
      }
    }
    void Post() { ::sem_post(&sem_); }

   private:
    sem_t sem_;
  };

  // Group commit: concurrent index writes are folded into one SQLite transaction (one
  // WAL fsync), each inside its own savepoint so one failure does not undo the others.
  // Each waiter sleeps on its own semaphore and is woken exactly once: with its result,
  // or to lead the next group. (One shared condition variable woke every waiter after
  // each commit, and they then queued again on its mutex: a fifth of the server's
  // context switches under 16 writers.)
  struct PendingWrite {
    std::set<std::string> dirs;
    std::function<Result<void>(sqlite::Db&)> op;
    std::optional<Result<void>> result;  // set under queue_mu_, before `wake`
    bool lead = false;                   // set under queue_mu_, before `wake`
    Wakeup wake;
  };

  Result<void> IndexWrite(std::set<std::string> dirs_to_sync,
                          std::function<Result<void>(sqlite::Db&)> op) {
    PendingWrite write{std::move(dirs_to_sync), std::move(op)};
    {
      std::lock_guard lock(queue_mu_);
      queue_.push_back(&write);
      if (!leader_active_) leader_active_ = write.lead = true;
    }
    if (!write.lead) {
      write.wake.Wait();
      if (write.result) return std::move(*write.result);
    }
    // Leading: the group is taken from the queue's front, which holds this write.
    std::vector<PendingWrite*> batch;
    {
      std::lock_guard lock(queue_mu_);
      while (!queue_.empty() && batch.size() < kMaxBatch) {
        batch.push_back(queue_.front());
        queue_.pop_front();
      }
    }
    std::vector<Result<void>> results = RunBatch(batch);
    PendingWrite* next_leader = nullptr;
    {
      // Results are published only now, after COMMIT: a waiter must never answer its
      // client before its write is durable and visible.
      std::lock_guard lock(queue_mu_);
      for (size_t i = 0; i < batch.size(); i++) batch[i]->result = std::move(results[i]);
      if (queue_.empty()) {
        leader_active_ = false;
      } else {
        next_leader = queue_.front();
        next_leader->lead = true;
      }
    }
    // Woken outside the lock, so none of them has to wait for it. A woken waiter may
    // return and destroy its PendingWrite at once: nothing here touches one after waking
    // it, and this write's own result is taken out first.
    Result<void> mine = std::move(*write.result);
    if (next_leader) next_leader->wake.Post();
    for (auto* w : batch) {
      if (w != &write) w->wake.Post();
    }
    return mine;
  }

  std::vector<Result<void>> RunBatch(const std::vector<PendingWrite*>& batch) {
    std::vector<Result<void>> results;
    auto fail_all = [&](const Error& error) {
      for (size_t i = 0; i < batch.size(); i++) results.push_back(std::unexpected(error));
      return results;
    };
    // A failed sync is sticky: after it the kernel may have dropped the dirty pages and
    // cleared the error, so a later sync that "succeeds" proves nothing (as leveldb keeps
    // background errors). Every later write fails until the store is reopened.
    if (sync_failure_) return fail_all(*sync_failure_);
    std::set<std::string> dirs;
    for (auto* w : batch) dirs.insert(w->dirs.begin(), w->dirs.end());
    for (const auto& dir : dirs) {
      int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) return fail_all(IoError("open " + dir));
      int rc = directory_fsync_(fd);
      ::close(fd);
      if (rc != 0) {
        sync_failure_ = IoError("fsync " + dir + " (writes refused until restart)");
        return fail_all(*sync_failure_);
      }
    }
    sqlite::Db& db = *writer_db_;
    if (checkpoint_inline_.exchange(false)) (void)db.Exec("PRAGMA wal_checkpoint(PASSIVE)");
    auto begin = db.Exec("BEGIN IMMEDIATE");
    if (!begin) {
      for (size_t i = 0; i < batch.size(); i++) results.push_back(std::unexpected(begin.error()));
      return results;
    }
    for (size_t i = 0; i < batch.size(); i++) {
      PendingWrite* w = batch[i];
      (void)db.Exec("SAVEPOINT w");
      auto r = w->op(db);
      if (r) {
        (void)db.Exec("RELEASE w");
      } else {
        (void)db.Exec("ROLLBACK TO w; RELEASE w");
      }
      results.push_back(std::move(r));
    }
    auto commit = db.Exec("COMMIT");
    if (!commit) {
      (void)db.Exec("ROLLBACK");
      for (auto& r : results) {
        if (r) r = std::unexpected(commit.error());
      }
    }
    return results;
  }

  std::string root_;
  const Clock& clock_;
  Random& random_;
  const std::function<int(int)> directory_fsync_;
  // State below is used only by the group-commit leader (one at a time, handed over
  // under queue_mu_).
  std::unique_ptr<sqlite::Db> writer_db_;
  std::optional<Error> sync_failure_;

  std::unique_ptr<sqlite::ReaderPool> readers_;  // lends its connections to any thread

  std::atomic<bool> checkpoint_inline_ = false;  // set by the WAL hook, used by the leader
  std::unique_ptr<sqlite::Db> checkpoint_db_;    // the checkpointer thread's
  std::mutex checkpoint_mu_;
  std::condition_variable checkpoint_cv_;
  bool checkpoint_wanted_ = false;    // protected by checkpoint_mu_
  bool checkpoint_stopping_ = false;  // protected by checkpoint_mu_
  std::thread checkpointer_;          // started last, in the constructor

  std::mutex hold_mu_;
  int holds_ = 0;                      // protected by hold_mu_
  std::vector<std::string> deferred_;  // protected by hold_mu_

  // State below is protected by queue_mu_.
  std::mutex queue_mu_;
  std::deque<PendingWrite*> queue_;
  bool leader_active_ = false;
};

// A backup of the local disk: the index copied by SQLite's online backup, then every blob
// it names hard-linked into the backup (copied and synced when the backup is on another
// file system), blobs' deletion deferred from the start to the end.
class LocalDiskBackup final : public ObjectBackup {
 public:
  LocalDiskBackup(LocalDiskStore& store, std::string dir) : store_(store), dir_(std::move(dir)) {
    store_.HoldBlobs();
  }
  ~LocalDiskBackup() override {
    if (held_) store_.ReleaseBlobs();
  }

  Result<void> Snapshot() override {
    std::error_code ec;
    fs::create_directories(dir_ + "/blobs", ec);
    if (ec) return Fail(IoError("create " + dir_ + ": " + ec.message()));
    TM_ASSIGN(auto source, sqlite::Db::Open(store_.root() + "/index.db", true));
    return source->BackupTo(dir_ + "/index.db");
  }

  Result<int64_t> Finish() override {
    TM_ASSIGN(auto copy, sqlite::Db::Open(dir_ + "/index.db", true));
    TM_ASSIGN(auto blobs, sql::Query(*copy, "SELECT blob FROM objects UNION SELECT blob FROM parts",
                                     {}, [](sql::Statement& st) { return st.Text(0); }));
    copy.reset();
    for (const auto& blob : blobs) {
      if (!IsInline(blob)) TM_TRY(Keep(blob));  // inline bytes came with the index
    }
    // The links' directory entries, and any copies, reach the disk before success.
    int dir = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    bool synced = dir >= 0 && ::syncfs(dir) == 0;
    if (dir >= 0) ::close(dir);
    if (!synced) return Fail(IoError("sync " + dir_));
    held_ = false;
    store_.ReleaseBlobs();
    return static_cast<int64_t>(blobs.size());
  }

 private:
  Result<void> Keep(const std::string& blob) {
    std::string from = store_.BlobPathOf(blob);
    std::string to_dir = dir_ + "/blobs/" + blob.substr(0, 2);
    std::string to = to_dir + "/" + blob;
    std::error_code ec;
    fs::create_directories(to_dir, ec);
    if (ec) return Fail(IoError("create " + to_dir + ": " + ec.message()));
    if (::link(from.c_str(), to.c_str()) == 0 || errno == EEXIST) return {};
    if (errno != EXDEV) {
      return Fail(IoError("link " + from + " into the backup: " + std::strerror(errno)));
    }
    fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
    if (ec) return Fail(IoError("copy " + from + " into the backup: " + ec.message()));
    int fd = ::open(to.c_str(), O_RDONLY | O_CLOEXEC);
    bool synced = fd >= 0 && ::fsync(fd) == 0;
    if (fd >= 0) ::close(fd);
    if (!synced) return Fail(IoError("sync " + to));
    return {};
  }

  LocalDiskStore& store_;
  const std::string dir_;
  bool held_ = true;
};

Result<std::unique_ptr<ObjectBackup>> LocalDiskStore::BeginBackup(const std::string& dir) {
  return std::unique_ptr<ObjectBackup>(std::make_unique<LocalDiskBackup>(*this, dir));
}

}  // namespace

Result<std::unique_ptr<ObjectStore>> OpenLocalDiskStore(const std::string& root, const Clock& clock,
                                                        Random& random, LocalDiskFaults faults) {
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return Fail(IoError("create " + root + ": " + ec.message()));
  TM_ASSIGN(auto writer, sqlite::Db::Open(root + "/index.db", true));
  TM_TRY(writer->Exec(kSchema));
  TM_ASSIGN(auto readers, sqlite::ReaderPool::Open(root + "/index.db", kReaders));
  TM_ASSIGN(auto checkpointer, sqlite::Db::Open(root + "/index.db", true));
  auto store =
      std::make_unique<LocalDiskStore>(root, clock, random, std::move(writer), std::move(readers),
                                       std::move(checkpointer), std::move(faults));
  TM_TRY(store->Init());
  return std::unique_ptr<ObjectStore>(std::move(store));
}

}  // namespace tablemere::objectstore
