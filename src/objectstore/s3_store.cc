// The S3 backend. Layout inside the backend bucket (all under `<root>/`):
//   <bucket>/<key>                       an object, byte for byte, with its HTTP headers
//   .tablemere/extras/<bucket>/<key>     what S3 keeps beside a multipart object (part sizes and
//                                        checksums, tags, ACL), tied to the object's etag
//   .tablemere/uploads/<bucket>/<id>     an open multipart upload (our id → the backend's)
//   .tablemere/uploads/<bucket>/<id>.parts/<n>  a part's checksums, when it had one
// An object written in one piece carries its extras in one user-metadata header
// (x-amz-meta-tablemere) unless they are too long for one, then in the extras file.
// Bodies are spooled to local disk, verified by the layer above, and only then sent with
// their length and MD5, so nothing unverified ever reaches the backend.
#include "objectstore/s3_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <thread>

#include "common/crypto.h"
#include "common/strings.h"
#include "objectstore/s3_bodies.h"
#include "objectstore/s3_http.h"

namespace tablemere::objectstore {
namespace {

using Json = nlohmann::json;

constexpr char kExtrasHeader[] = "x-amz-meta-tablemere";
constexpr char kExtrasElsewhere[] = "file";
constexpr size_t kMaxInlineExtras = 1024;  // S3 allows 2 KB of user metadata in all
// Bodies of known size at least this large stream to the store (StreamWriter); smaller
// ones are spooled, sent with their Content-MD5, and cost one extra local copy at most.
constexpr uint64_t kStreamFrom = 1u << 20;
// The largest UTF-8 code point: appended to a common prefix, it sorts after every key
// under it, so a listing resumed from it skips them.
constexpr char kAfterEverything[] = "\xF4\x8F\xBF\xBF";
// Response headers an object keeps (stored as the backend keeps them).
constexpr std::array<std::pair<const char*, const char*>, 6> kStoredHeaders = {{
    {"content-type", "Content-Type"},
    {"content-encoding", "Content-Encoding"},
    {"cache-control", "Cache-Control"},
    {"content-disposition", "Content-Disposition"},
    {"content-language", "Content-Language"},
    {"expires", "Expires"},
}};

Error Unavailable(const std::string& what, const S3Answer& a) {
  auto [code, message] = S3ErrorOf(a.body);
  std::string detail = "HTTP " + std::to_string(a.status);
  if (!code.empty()) detail += " " + code;
  if (!message.empty()) detail += ": " + message;
  return Error{
      ErrorCode::kUnavailable, "The S3 backend refused to " + what + " (" + detail + ")", {}}
      .With("backend", "refused");
}

// The StoreFailure an answer stands for, or kUnavailable for anything the backend should
// not have said to a correct request of ours.
Error FailureFrom(const std::string& what, const S3Answer& a) {
  auto [code, message] = S3ErrorOf(a.body);
  if (a.status == 404 && (code == "NoSuchKey" || (code.empty() && what != "list"))) {
    return StoreError(StoreFailure::kNoSuchKey, ErrorCode::kNotFound, "The key does not exist");
  }
  if (a.status == 404 && code == "NoSuchUpload") {
    return StoreError(StoreFailure::kNoSuchUpload, ErrorCode::kNotFound,
                      "The upload does not exist");
  }
  if (a.status == 412 || code == "PreconditionFailed") {
    return StoreError(StoreFailure::kPreconditionFailed, ErrorCode::kConflict,
                      "At least one of the pre-conditions you specified did not hold");
  }
  if (code == "InvalidPart" || code == "InvalidPartOrder") {
    return StoreError(StoreFailure::kInvalidPart, ErrorCode::kConflict,
                      "One or more of the specified parts could not be found");
  }
  if (a.status == 416) return Error{ErrorCode::kInvalidInput, "The range is not satisfiable", {}};
  return Unavailable(what, a);
}

bool Ok(const S3Answer& a) { return a.status >= 200 && a.status < 300; }

std::string Unquote(std::string etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return etag;
}

int64_t ParseIsoMillis(const std::string& text) {
  int y, mo, d, h, mi;
  double s;
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%lf", &y, &mo, &d, &h, &mi, &s) != 6) return 0;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = static_cast<int>(s);
  return static_cast<int64_t>(timegm(&tm)) * 1000 +
         static_cast<int64_t>((s - static_cast<int>(s)) * 1000);
}

// What an object keeps beyond its bytes and headers.
struct Extras {
  std::map<std::string, std::string> checksums;
  std::vector<uint64_t> part_sizes;
  std::vector<std::string> part_checksums;
  std::map<std::string, std::string> tags;
  std::string acl;
  std::string version_id;
  std::string lock_mode;
  int64_t lock_until_ms = 0;
  std::string legal_hold;
  bool Empty() const {
    return checksums.empty() && part_sizes.empty() && tags.empty() && acl.empty() &&
           version_id.empty() && lock_mode.empty() && legal_hold.empty();
  }
};

Json ExtrasJson(const Extras& e) {
  Json j = Json::object();
  if (!e.checksums.empty()) j["c"] = e.checksums;
  if (!e.part_sizes.empty()) j["p"] = e.part_sizes;
  if (!e.part_checksums.empty()) j["q"] = e.part_checksums;
  if (!e.tags.empty()) j["t"] = e.tags;
  if (!e.acl.empty()) j["a"] = e.acl;
  if (!e.version_id.empty()) j["v"] = e.version_id;
  if (!e.lock_mode.empty()) j["l"] = Json::array({e.lock_mode, e.lock_until_ms});
  if (!e.legal_hold.empty()) j["h"] = e.legal_hold;
  return j;
}

Extras ExtrasOf(const Json& j) {
  Extras e;
  if (!j.is_object()) return e;
  try {
    if (j.contains("c")) e.checksums = j["c"].get<std::map<std::string, std::string>>();
    if (j.contains("p")) e.part_sizes = j["p"].get<std::vector<uint64_t>>();
    if (j.contains("q")) e.part_checksums = j["q"].get<std::vector<std::string>>();
    if (j.contains("t")) e.tags = j["t"].get<std::map<std::string, std::string>>();
    if (j.contains("a")) e.acl = j["a"].get<std::string>();
    if (j.contains("v")) e.version_id = j["v"].get<std::string>();
    if (j.contains("l")) {
      e.lock_mode = j["l"].at(0).get<std::string>();
      e.lock_until_ms = j["l"].at(1).get<int64_t>();
    }
    if (j.contains("h")) e.legal_hold = j["h"].get<std::string>();
  } catch (const Json::exception&) {
    return Extras{};  // written by us; a damaged entry reads as none rather than failing reads
  }
  return e;
}

Extras ExtrasFromInfo(const ObjectInfo& info) {
  return Extras{info.checksums,  info.part_sizes, info.part_checksums, info.tags,      info.acl,
                info.version_id, info.lock_mode,  info.lock_until_ms,  info.legal_hold};
}

void ApplyExtras(const Extras& e, ObjectInfo& info) {
  info.checksums = e.checksums;
  info.part_sizes = e.part_sizes;
  info.part_checksums = e.part_checksums;
  info.tags = e.tags;
  info.acl = e.acl;
  info.version_id = e.version_id;
  info.lock_mode = e.lock_mode;
  info.lock_until_ms = e.lock_until_ms;
  info.legal_hold = e.legal_hold;
}

// The request headers that store `info`'s HTTP headers on the backend.
void AddStoredHeaders(const ObjectInfo& info, std::vector<std::pair<std::string, std::string>>& h) {
  bool typed = false;
  for (const auto& [name, value] : info.headers) {
    if (EqualsIgnoreCase(name, kExtrasHeader)) continue;
    typed |= EqualsIgnoreCase(name, "content-type");
    h.push_back({name, value});
  }
  // S3's default, sent explicitly: a backend would otherwise store its own default.
  if (!typed) h.push_back({"Content-Type", "binary/octet-stream"});
}

class EmptyReader final : public ObjectReader {
 public:
  Result<size_t> Read(char*, size_t) override { return 0; }
};

class S3Store final : public ObjectStore {
 public:
  S3Store(const S3StoreConfig& config, const Clock& clock, Random& random)
      : config_(config),
        http_(S3Endpoint{config.endpoint, config.region, config.access_key, config.secret_key,
                         config.connect_timeout_ms, config.request_timeout_ms, config.stall_seconds,
                         config.retries}),
        clock_(clock),
        random_(random),
        locker_(config.shared_locks, random) {}

  // Checks the backend bucket can be listed, written, read and deleted, and whether it
  // honours conditional writes.
  Result<void> Probe() {
    S3Call list = Call("GET", "");
    list.query = {{"list-type", "2"}, {"max-keys", "1"}, {"prefix", Path(".tablemere/")}};
    TM_ASSIGN(S3Answer listed, http_.Send(list));
    if (!Ok(listed)) return Fail(Unavailable("list bucket " + config_.bucket, listed));
    const std::string probe = ".tablemere/probe-" + crypto::HexEncode(random_.Bytes(8));
    TM_TRY(ProbeKeyShapes(probe));
    S3Call put = Call("PUT", Path(probe));
    put.body = "probe";
    TM_ASSIGN(S3Answer wrote, http_.Send(put));
    if (!Ok(wrote)) return Fail(Unavailable("write to bucket " + config_.bucket, wrote));
    S3Call again = Call("PUT", Path(probe));
    again.body = "again";
    again.headers.push_back({"If-None-Match", "*"});
    TM_ASSIGN(S3Answer conditional, http_.Send(again));
    conditional_ = conditional.status == 412 && !config_.enforce_conditions_here;
    S3Call del = Call("DELETE", Path(probe));
    TM_ASSIGN(S3Answer deleted, http_.Send(del));
    if (!Ok(deleted)) return Fail(Unavailable("delete from bucket " + config_.bucket, deleted));
    return {};
  }

  bool ListsInByteOrder() const override { return !path_keys_only_; }

  size_t MaxKeyBytes(const std::string& bucket) const override {
    const size_t prefix = ObjectKey(bucket, "").size();
    return prefix >= 1024 ? 0 : 1024 - prefix;
  }

  // ---- bucket spaces ----
  // A bucket is a key prefix: nothing to make.
  Result<void> OpenBucket(const std::string& /*bucket*/) override { return {}; }

  Result<void> CloseBucket(const std::string& bucket) override {
    ListOptions one;
    one.max_keys = 1;
    TM_ASSIGN(ListResult listed, List(bucket, one));
    if (!listed.objects.empty() || !listed.common_prefixes.empty()) {
      return Fail(StoreError(StoreFailure::kBucketNotEmpty, ErrorCode::kConflict,
                             "The bucket you tried to delete is not empty"));
    }
    TM_ASSIGN(auto uploads, ListUploads(bucket, ""));
    for (const auto& u : uploads) TM_TRY(AbortUpload(bucket, u.upload_id));
    return {};
  }

  // ---- objects ----
  Result<std::unique_ptr<ObjectWriter>> BeginPut(
      const std::string& bucket, const std::string& key, PutConditions conditions,
      std::optional<uint64_t> size,
      std::optional<std::map<std::string, std::string>> headers) override {
    if (size && headers && *size >= kStreamFrom) {
      if (Unholdable(key, *size)) return Fail(CannotHold());
      return StreamPut(bucket, key, std::move(conditions), *size, std::move(*headers));
    }
    TM_ASSIGN(int fd, Spool());
    // A store that honours conditions tells, by its answer to If-None-Match, whether the
    // put replaced anything (see PutSpooled); not so under If-Match.
    const bool reports_replaced = conditional_ && !conditions.if_match;
    auto writer = std::make_unique<SpoolWriter>(
        fd,
        [this, bucket, key, conditions](int body, uint64_t body_size, const std::string& md5,
                                        ObjectInfo info) {
          return PutSpooled(bucket, key, conditions, body, body_size, md5, std::move(info));
        },
        reports_replaced);
    return HoldToSize(std::move(writer), size);
  }

  Result<ObjectInfo> Head(const std::string& bucket, const std::string& key) override {
    if (Unholdable(key, 0)) return Fail(NoSuchKey());
    TM_ASSIGN(S3Answer a, http_.Send(Idempotent(Call("HEAD", ObjectKey(bucket, key)))));
    if (!Ok(a)) return Fail(FailureFrom("read the object", a));
    return InfoOf(bucket, key, a.headers);
  }

  Result<std::unique_ptr<ObjectReader>> Get(const std::string& bucket, const std::string& key,
                                            uint64_t offset, std::optional<uint64_t> length,
                                            ObjectInfo* info) override {
    if (length && *length == 0) {
      TM_ASSIGN(ObjectInfo head, Head(bucket, key));
      if (info) *info = std::move(head);
      return std::unique_ptr<ObjectReader>(std::make_unique<EmptyReader>());
    }
    if (Unholdable(key, 0)) return Fail(NoSuchKey());
    S3Call call = Idempotent(Call("GET", ObjectKey(bucket, key)));
    if (offset > 0 || length) {
      call.headers.push_back(
          {"Range", "bytes=" + std::to_string(offset) + "-" +
                        (length ? std::to_string(offset + *length - 1) : std::string())});
    }
    auto reader = std::make_unique<StreamReader>(http_, std::move(call), [](const S3Answer& a) {
      return FailureFrom("read the object", a);
    });
    TM_ASSIGN(auto headers, reader->Start());
    if (info) {
      TM_ASSIGN(*info, InfoOf(bucket, key, headers));
    }
    return std::unique_ptr<ObjectReader>(std::move(reader));
  }

  Result<ObjectInfo> SetObjectAttributes(const std::string& bucket, const std::string& key,
                                         const AttributeChange& change) override {
    TM_ASSIGN(KeyGuard guard, LockKey(ObjectKey(bucket, key)));
    TM_ASSIGN(ObjectInfo info, Head(bucket, key));
    ApplyObjectChange(change, info);
    if (info.etag.find('-') != std::string::npos) {
      TM_TRY(WriteExtrasFile(bucket, key, info.etag, ExtrasFromInfo(info)));
      return info;
    }
    // One piece: rewritten in place with the new metadata (the backend copies the bytes).
    return CopyWithin(bucket, key, bucket, key, info);
  }

  Result<void> Delete(const std::string& bucket, const std::string& key) override {
    if (Unholdable(key, 0)) return {};
    // Not between a conditional write's check and its write, where they are checked here.
    KeyGuard guard;
    if (!conditional_) {
      TM_ASSIGN(guard, LockKey(ObjectKey(bucket, key)));
    }
    TM_TRY(DeleteKey(ObjectKey(bucket, key)));
    return DeleteKey(ExtrasKey(bucket, key));
  }

  Result<ObjectInfo> Copy(const std::string& src_bucket, const std::string& src_key,
                          const std::string& dst_bucket, const std::string& dst_key,
                          std::optional<ObjectInfo> replace_metadata) override {
    TM_ASSIGN(ObjectInfo src, Head(src_bucket, src_key));
    if (Unholdable(dst_key, src.size)) return Fail(CannotHold());
    ObjectInfo info = replace_metadata ? std::move(*replace_metadata) : src;
    if (!replace_metadata) info.checksums = src.checksums;
    info.part_sizes.clear();  // a copy is written in one piece
    info.part_checksums.clear();
    info.etag = src.etag;
    return CopyWithin(src_bucket, src_key, dst_bucket, dst_key, info);
  }

  Result<ListResult> List(const std::string& bucket, const ListOptions& options) override {
    ListResult result;
    int max_keys = std::max(0, std::min(options.max_keys, 1000));
    if (max_keys == 0) return result;
    const std::string base = ObjectKey(bucket, "");
    std::string after;
    if (!options.continuation.empty()) {
      after = base + options.continuation;
      if (!options.delimiter.empty() && options.continuation.ends_with(options.delimiter)) {
        after += kAfterEverything;
      }
    } else if (!options.start_after.empty()) {
      after = base + options.start_after;
    }
    S3Call call = Idempotent(Call("GET", ""));
    call.query = {{"list-type", "2"},
                  {"max-keys", std::to_string(max_keys)},
                  {"prefix", base + options.prefix}};
    if (!options.delimiter.empty()) call.query.push_back({"delimiter", options.delimiter});
    if (!after.empty()) call.query.push_back({"start-after", after});
    TM_ASSIGN(S3Answer a, http_.Send(call));
    if (!Ok(a)) return Fail(FailureFrom("list", a));
    pugi::xml_document doc;
    if (!doc.load_buffer(a.body.data(), a.body.size())) {
      return Fail(ErrorCode::kUnavailable, "The S3 backend's listing is not XML");
    }
    pugi::xml_node root = doc.child("ListBucketResult");
    // Keys and prefixes merged in byte order, as the backend returned them.
    std::vector<std::pair<std::string, bool>> order;
    for (pugi::xml_node c : root.children("Contents")) {
      std::string key = c.child_value("Key");
      if (!key.starts_with(base)) continue;
      ObjectInfo o;
      o.key = key.substr(base.size());
      o.size = std::strtoull(c.child_value("Size"), nullptr, 10);
      o.etag = Unquote(c.child_value("ETag"));
      o.last_modified_ms = ParseIsoMillis(c.child_value("LastModified"));
      order.push_back({o.key, false});
      result.objects.push_back(std::move(o));
    }
    for (pugi::xml_node p : root.children("CommonPrefixes")) {
      std::string prefix = p.child_value("Prefix");
      if (!prefix.starts_with(base)) continue;
      order.push_back({prefix.substr(base.size()), true});
      result.common_prefixes.push_back(prefix.substr(base.size()));
    }
    result.truncated = std::string(root.child_value("IsTruncated")) == "true";
    if (result.truncated && !order.empty()) {
      result.next_marker = std::max_element(order.begin(), order.end())->first;
    }
    return result;
  }

  // ---- multipart ----
  Result<UploadInfo> CreateUpload(const std::string& bucket, const std::string& key,
                                  ObjectInfo pending) override {
    if (Unholdable(key, 1)) return Fail(CannotHold());
    S3Call create = Call("POST", ObjectKey(bucket, key));
    create.query = {{"uploads", ""}};
    AddStoredHeaders(pending, create.headers);
    TM_ASSIGN(S3Answer a, http_.Send(create));
    if (!Ok(a)) return Fail(FailureFrom("start an upload", a));
    pugi::xml_document doc;
    doc.load_buffer(a.body.data(), a.body.size());
    std::string backend_id = doc.child("InitiateMultipartUploadResult").child_value("UploadId");
    if (backend_id.empty()) return Fail(Unavailable("start an upload", a));
    UploadInfo upload;
    upload.upload_id = crypto::HexEncode(random_.Bytes(16));
    upload.key = key;
    upload.initiated_ms = clock_.NowMillis();
    upload.pending = std::move(pending);
    Json record = {{"key", key},
                   {"backend_id", backend_id},
                   {"initiated_ms", upload.initiated_ms},
                   {"headers", upload.pending.headers},
                   {"checksums", upload.pending.checksums},
                   {"extras", ExtrasJson(ExtrasFromInfo(upload.pending))}};
    S3Call put = Call("PUT", UploadKey(bucket, upload.upload_id));
    put.body = record.dump();
    TM_ASSIGN(S3Answer wrote, http_.Send(put));
    if (!Ok(wrote)) {
      S3Call abort = Call("DELETE", ObjectKey(bucket, key));
      abort.query = {{"uploadId", backend_id}};
      (void)http_.Send(abort);
      return Fail(Unavailable("record an upload", wrote));
    }
    return upload;
  }

  Result<UploadInfo> GetUpload(const std::string& bucket, const std::string& upload_id) override {
    TM_ASSIGN(auto record, ReadUpload(bucket, upload_id));
    return record.first;
  }

  Result<std::unique_ptr<ObjectWriter>> BeginPart(const std::string& bucket,
                                                  const std::string& upload_id, int part_number,
                                                  std::optional<uint64_t> size) override {
    TM_ASSIGN(auto record, ReadUpload(bucket, upload_id));
    const std::string key = record.first.key, backend_id = record.second;
    if (size && *size >= kStreamFrom) {
      return std::unique_ptr<ObjectWriter>(std::make_unique<StreamWriter>(
          http_, PartCall(ObjectKey(bucket, key), backend_id, part_number), *size,
          [this, bucket, upload_id, part_number, size](StreamWriter& self, const std::string& md5,
                                                       ObjectInfo info) -> Result<ObjectInfo> {
            TM_ASSIGN(S3Answer a, self.Release());
            return PartStored(bucket, upload_id, part_number, a, *size, md5, std::move(info));
          }));
    }
    TM_ASSIGN(int fd, Spool());
    auto writer = std::make_unique<SpoolWriter>(
        fd, [this, bucket, upload_id, key, backend_id, part_number](
                int body, uint64_t body_size, const std::string& md5, ObjectInfo info) {
          return PutPart(bucket, upload_id, key, backend_id, part_number, body, body_size, md5,
                         std::move(info));
        });
    return HoldToSize(std::move(writer), size);
  }

  Result<std::vector<PartInfo>> ListParts(const std::string& bucket,
                                          const std::string& upload_id) override {
    TM_TRY(ReadUpload(bucket, upload_id));
    return RecordedParts(bucket, upload_id);
  }

  Result<ObjectInfo> CompleteUpload(const std::string& bucket, const std::string& upload_id,
                                    const std::vector<int>& part_numbers, ObjectInfo final_info,
                                    PutConditions conditions) override {
    TM_ASSIGN(auto record, ReadUpload(bucket, upload_id));
    const std::string key = record.first.key, backend_id = record.second;
    TM_ASSIGN(auto parts, RecordedParts(bucket, upload_id));
    std::map<int, PartInfo> by_number;
    for (auto& p : parts) by_number[p.part_number] = p;
    std::string xml = "<CompleteMultipartUpload>";
    final_info.part_sizes.clear();
    for (int n : part_numbers) {
      auto it = by_number.find(n);
      if (it == by_number.end()) {
        return Fail(StoreError(StoreFailure::kInvalidPart, ErrorCode::kConflict,
                               "One or more of the specified parts could not be found"));
      }
      xml += "<Part><PartNumber>" + std::to_string(n) + "</PartNumber><ETag>\"" + it->second.etag +
             "\"</ETag></Part>";
      final_info.part_sizes.push_back(it->second.size);
    }
    xml += "</CompleteMultipartUpload>";
    TM_ASSIGN(KeyGuard guard, LockKey(ObjectKey(bucket, key)));
    if (!conditional_) TM_TRY(CheckConditionsHere(bucket, key, conditions));
    S3Call complete = Call("POST", ObjectKey(bucket, key));
    complete.query = {{"uploadId", backend_id}};
    complete.body = xml;
    complete.headers.push_back({"Content-Type", "application/xml"});
    if (conditional_) AddConditions(conditions, complete.headers);
    TM_ASSIGN(S3Answer a, http_.Send(complete));
    if (a.status == 412) return Fail(ConditionFailure(bucket, key, conditions));
    // A 200 whose body is an <Error> is a failure (S3 reports late failures that way).
    if (!Ok(a) || !S3ErrorOf(a.body).first.empty()) return Fail(FailureFrom("complete", a));
    pugi::xml_document doc;
    doc.load_buffer(a.body.data(), a.body.size());
    final_info.etag = Unquote(doc.child("CompleteMultipartUploadResult").child_value("ETag"));
    final_info.key = key;
    final_info.size = 0;
    for (uint64_t s : final_info.part_sizes) final_info.size += s;
    final_info.last_modified_ms = clock_.NowMillis();
    TM_TRY(WriteExtrasFile(bucket, key, final_info.etag, ExtrasFromInfo(final_info)));
    (void)ForgetUpload(bucket, upload_id);
    return final_info;
  }

  Result<void> AbortUpload(const std::string& bucket, const std::string& upload_id) override {
    TM_ASSIGN(auto record, ReadUpload(bucket, upload_id));
    S3Call abort = Call("DELETE", ObjectKey(bucket, record.first.key));
    abort.query = {{"uploadId", record.second}};
    TM_ASSIGN(S3Answer a, http_.Send(abort));
    if (!Ok(a) && a.status != 404) return Fail(FailureFrom("abort an upload", a));
    return ForgetUpload(bucket, upload_id);
  }

  Result<std::vector<UploadInfo>> ListUploads(const std::string& bucket,
                                              const std::string& prefix) override {
    std::vector<UploadInfo> out;
    const std::string dir = Path(".tablemere/uploads/" + bucket + "/");
    TM_TRY(ListRaw(dir, "/", "", [&](const ObjectInfo& o) -> Result<void> {
      auto record = ReadUpload(bucket, o.key.substr(dir.size()));
      if (record && record->first.key.starts_with(prefix)) out.push_back(record->first);
      return {};
    }));
    std::sort(out.begin(), out.end(), [](const UploadInfo& a, const UploadInfo& b) {
      return std::tie(a.key, a.initiated_ms) < std::tie(b.key, b.initiated_ms);
    });
    return out;
  }

 private:
  // ---- naming ----
  std::string Path(const std::string& rest) const {
    return config_.root.empty() ? rest : config_.root + "/" + rest;
  }
  std::string ObjectKey(const std::string& bucket, const std::string& key) const {
    return Path(bucket + "/" + key);
  }

  std::string ExtrasKey(const std::string& bucket, const std::string& key) const {
    return Path(".tablemere/extras/" + bucket + "/" + key);
  }
  std::string UploadKey(const std::string& bucket, const std::string& id) const {
    return Path(".tablemere/uploads/" + bucket + "/" + id);
  }
  std::string PartKey(const std::string& bucket, const std::string& id, int n) const {
    return UploadKey(bucket, id) + ".parts/" + std::to_string(n);
  }

  S3Call Call(std::string method, std::string key) const {
    S3Call c;
    c.method = std::move(method);
    c.bucket = config_.bucket;
    c.key = std::move(key);
    return c;
  }
  static S3Call Idempotent(S3Call c) {
    c.idempotent = true;
    return c;
  }

  // Whether the store keeps a key with an empty segment ("a//b") as it is: a store built
  // on a file tree (SeaweedFS's filer) folds it, and refuses "." and ".." segments.
  Result<void> ProbeKeyShapes(const std::string& probe) {
    const std::string odd = Path(probe + "//x");
    S3Call put = Call("PUT", odd);
    put.body = "x";
    TM_ASSIGN(S3Answer wrote, http_.Send(put));
    S3Call list = Call("GET", "");
    list.query = {{"list-type", "2"}, {"prefix", Path(probe + "/")}};
    TM_ASSIGN(S3Answer listed, http_.Send(list));
    path_keys_only_ = !Ok(wrote) || listed.body.find("<Key>" + odd + "</Key>") == std::string::npos;
    for (const std::string& key : {odd, Path(probe + "/x")}) TM_TRY(DeleteKey(key));
    return {};
  }

  // A key such a store cannot hold as it is: an empty, "." or ".." segment, a segment
  // longer than a file name may be (255 bytes), or a body
  // under a key that ends in "/" (a folder there). Never true on a store that keeps keys.
  bool Unholdable(const std::string& key, uint64_t size) const {
    if (!path_keys_only_) return false;
    if (key.ends_with("/") && size > 0) return true;
    std::string_view rest = key;
    if (rest.ends_with("/")) rest.remove_suffix(1);
    while (true) {
      size_t slash = rest.find('/');
      std::string_view segment = rest.substr(0, slash);
      if (segment.empty() || segment == "." || segment == ".." || segment.size() > 255) {
        return true;
      }
      if (slash == std::string_view::npos) return false;
      rest.remove_prefix(slash + 1);
    }
  }

  static Error CannotHold() {
    return Error{ErrorCode::kInvalidInput,
                 "This deployment's object store keeps keys as file paths: a key with an empty, "
                 "'.' or '..' segment, a segment over 255 bytes, or a body under a key ending in "
                 "'/', cannot be stored",
                 {}};
  }

  // Why a conditional write the backend refused (412) failed: if_match on a key that is
  // not there is NoSuchKey, as the interface promises; anything else PreconditionFailed.
  Error ConditionFailure(const std::string& bucket, const std::string& key,
                         const PutConditions& c) {
    if (c.if_match) {
      auto current = Head(bucket, key);
      if (!current && FailureOf(current.error()) == StoreFailure::kNoSuchKey) {
        return current.error();
      }
    }
    return StoreError(StoreFailure::kPreconditionFailed, ErrorCode::kConflict,
                      "At least one of the pre-conditions you specified did not hold");
  }

  static Error NoSuchKey() {
    return StoreError(StoreFailure::kNoSuchKey, ErrorCode::kNotFound, "The key does not exist");
  }

  // ---- per-key locks: writes to one key are serialised within this server (a stripe
  // mutex) and, on a store that ignores conditions, across servers too (the shared
  // lock), so a HEAD and the write after it see no other write between them ----
  Result<KeyGuard> LockKey(const std::string& key) { return locker_.Lock(key, !conditional_); }

  static void AddConditions(const PutConditions& c,
                            std::vector<std::pair<std::string, std::string>>& h) {
    if (c.if_none_match) h.push_back({"If-None-Match", "*"});
    if (c.if_match) h.push_back({"If-Match", *c.if_match == "*" ? "*" : "\"" + *c.if_match + "\""});
  }

  Result<void> CheckConditionsHere(const std::string& bucket, const std::string& key,
                                   const PutConditions& c) {
    if (!c.if_none_match && !c.if_match) return {};
    auto current = Head(bucket, key);
    if (!current && FailureOf(current.error()) != StoreFailure::kNoSuchKey) {
      return Fail(current.error());
    }
    if (c.if_none_match && current) {
      return Fail(StoreError(StoreFailure::kPreconditionFailed, ErrorCode::kConflict,
                             "At least one of the pre-conditions you specified did not hold"));
    }
    if (c.if_match) {
      if (!current) return Fail(current.error());
      if (*c.if_match != "*" && *c.if_match != current->etag) {
        return Fail(StoreError(StoreFailure::kPreconditionFailed, ErrorCode::kConflict,
                               "At least one of the pre-conditions you specified did not hold"));
      }
    }
    return {};
  }

  // ---- bodies ----
  Result<int> Spool() {
    std::string dir = config_.spool_dir.empty() ? "/tmp" : config_.spool_dir;
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
      return Fail(ErrorCode::kUnavailable,
                  "The upload spool in " + dir + " cannot be opened: " + std::strerror(errno));
    }
    return fd;
  }

  Result<ObjectInfo> PutSpooled(const std::string& bucket, const std::string& key,
                                const PutConditions& conditions, int fd, uint64_t size,
                                const std::string& md5, ObjectInfo info) {
    info.part_sizes.clear();
    info.part_checksums.clear();
    if (Unholdable(key, size)) return Fail(CannotHold());
    const std::string etag = crypto::HexEncode(md5);
    S3Call put = Call("PUT", ObjectKey(bucket, key));
    put.file_fd = fd;
    put.file_size = size;
    AddStoredHeaders(info, put.headers);
    put.headers.push_back({"Content-MD5", crypto::Base64Encode(md5)});
    TM_TRY(AttachExtras(bucket, key, etag, ExtrasFromInfo(info), put.headers));
    TM_ASSIGN(KeyGuard guard, LockKey(ObjectKey(bucket, key)));
    if (!conditional_) {
      TM_TRY(CheckConditionsHere(bucket, key, conditions));
      TM_ASSIGN(S3Answer a, http_.Send(put));
      return ObjectStored(bucket, key, conditions, a, size, etag, std::move(info));
    }
    if (conditions.if_match || conditions.if_none_match) {
      AddConditions(conditions, put.headers);
      TM_ASSIGN(S3Answer a, http_.Send(put));
      TM_ASSIGN(ObjectInfo stored,
                ObjectStored(bucket, key, conditions, a, size, etag, std::move(info)));
      if (conditions.if_none_match) stored.replaced = Replaced{};
      return stored;
    }
    // What the put replaces, for usage counting, without a HEAD in the common case: sent
    // first as a create (If-None-Match: *); only a key that exists (412, rare for tables'
    // uniquely named files) costs a HEAD and the put again, unconditional. The spooled
    // body is read from its start for each send.
    S3Call create = put;
    create.headers.push_back({"If-None-Match", "*"});
    TM_ASSIGN(S3Answer first, http_.Send(create));
    if (first.status != 412) {
      TM_ASSIGN(ObjectInfo stored,
                ObjectStored(bucket, key, conditions, first, size, etag, std::move(info)));
      stored.replaced = Replaced{};
      return stored;
    }
    std::optional<Replaced> replaced;
    TM_ASSIGN(S3Answer head, http_.Send(Idempotent(Call("HEAD", ObjectKey(bucket, key)))));
    if (Ok(head)) {
      replaced = Replaced{true, std::strtoull(head.Header("content-length").c_str(), nullptr, 10)};
    } else if (head.status == 404) {
      replaced = Replaced{};  // deleted in between
    }
    TM_ASSIGN(S3Answer a, http_.Send(put));
    TM_ASSIGN(ObjectInfo stored,
              ObjectStored(bucket, key, conditions, a, size, etag, std::move(info)));
    stored.replaced = replaced;
    return stored;
  }

  // Judges the store's answer to an object's write and describes what was stored.
  Result<ObjectInfo> ObjectStored(const std::string& bucket, const std::string& key,
                                  const PutConditions& conditions, const S3Answer& a, uint64_t size,
                                  const std::string& etag, ObjectInfo info) {
    if (a.status == 412) return Fail(ConditionFailure(bucket, key, conditions));
    if (!Ok(a)) return Fail(FailureFrom("store the object", a));
    TM_TRY(SameBytes(a, etag));
    info.key = key;
    info.size = size;
    info.etag = etag;
    info.last_modified_ms = clock_.NowMillis();
    return info;
  }

  // A body streamed to the store (StreamWriter). Its extras (ACL, tags, checksums) are
  // known only at Commit, after the request's headers went out, so they always live in
  // the extras file, written before the body's end is released (an object never points
  // at an extras file that is not there yet; one left by a failed put names an ETag no
  // object has, or the same bytes'). The per-key lock, when the store ignores
  // conditions, is held only around the check and the release.
  Result<std::unique_ptr<ObjectWriter>> StreamPut(const std::string& bucket, const std::string& key,
                                                  PutConditions conditions, uint64_t size,
                                                  std::map<std::string, std::string> headers) {
    S3Call put = Call("PUT", ObjectKey(bucket, key));
    ObjectInfo declared;
    declared.headers = headers;
    AddStoredHeaders(declared, put.headers);
    put.headers.push_back({kExtrasHeader, kExtrasElsewhere});
    if (conditional_) AddConditions(conditions, put.headers);
    return std::unique_ptr<ObjectWriter>(std::make_unique<StreamWriter>(
        http_, std::move(put), size,
        [this, bucket, key, conditions, size, headers = std::move(headers)](
            StreamWriter& self, const std::string& md5, ObjectInfo info) -> Result<ObjectInfo> {
          if (info.headers != headers) {
            return Fail(ErrorCode::kInvalidInput,
                        "The object's headers at Commit differ from those given to BeginPut");
          }
          info.part_sizes.clear();
          info.part_checksums.clear();
          const std::string etag = crypto::HexEncode(md5);
          TM_TRY(WriteExtrasFile(bucket, key, etag, ExtrasFromInfo(info)));
          KeyGuard guard;
          if (!conditional_) {
            TM_ASSIGN(guard, LockKey(ObjectKey(bucket, key)));
            TM_TRY(CheckConditionsHere(bucket, key, conditions));
          }
          TM_ASSIGN(S3Answer a, self.Release());
          return ObjectStored(bucket, key, conditions, a, size, etag, std::move(info));
        }));
  }

  // A streamed body goes without Content-MD5 (unknown when the request starts); the
  // store's ETag of a single-part write is the MD5 of what it stored, so compare. (A
  // spooled body is sent with its Content-MD5; the check costs nothing there either.)
  static Result<void> SameBytes(const S3Answer& a, const std::string& md5_hex) {
    const std::string stored = Unquote(a.Header("etag"));
    if (stored.size() == 32 && stored.find('-') == std::string::npos && stored != md5_hex) {
      return Fail(ErrorCode::kUnavailable,
                  "The S3 backend stored other bytes than were sent (MD5 " + stored + ", sent " +
                      md5_hex + ")");
    }
    return {};
  }

  S3Call PartCall(const std::string& key, const std::string& backend_id, int n) {
    S3Call put = Call("PUT", key);
    put.query = {{"partNumber", std::to_string(n)}, {"uploadId", backend_id}};
    return put;
  }

  Result<ObjectInfo> PutPart(const std::string& bucket, const std::string& upload_id,
                             const std::string& key, const std::string& backend_id, int n, int fd,
                             uint64_t size, const std::string& md5, ObjectInfo info) {
    S3Call put = PartCall(ObjectKey(bucket, key), backend_id, n);
    put.file_fd = fd;
    put.file_size = size;
    put.headers.push_back({"Content-MD5", crypto::Base64Encode(md5)});
    TM_ASSIGN(S3Answer a, http_.Send(put));
    return PartStored(bucket, upload_id, n, a, size, md5, std::move(info));
  }

  // Judges the store's answer to a part and records the part as acknowledged.
  Result<ObjectInfo> PartStored(const std::string& bucket, const std::string& upload_id, int n,
                                const S3Answer& a, uint64_t size, const std::string& md5,
                                ObjectInfo info) {
    if (!Ok(a)) {
      if (a.status == 404) {
        return Fail(StoreError(StoreFailure::kNoSuchUpload, ErrorCode::kNotFound,
                               "The upload does not exist"));
      }
      return Fail(FailureFrom("store a part", a));
    }
    TM_TRY(SameBytes(a, crypto::HexEncode(md5)));
    info.size = size;
    info.etag = crypto::HexEncode(md5);
    info.last_modified_ms = clock_.NowMillis();
    // The part as acknowledged: ListParts and the completion read these records, not the
    // backend's part listing (a store may list a replaced part twice, as SeaweedFS 4.48 does).
    S3Call record = Call("PUT", PartKey(bucket, upload_id, n));
    record.body = Json{{"etag", info.etag},
                       {"size", size},
                       {"last_modified_ms", info.last_modified_ms},
                       {"checksums", info.checksums}}
                      .dump();
    TM_ASSIGN(S3Answer wrote, http_.Send(record));
    if (!Ok(wrote)) return Fail(Unavailable("record a part", wrote));
    return info;
  }

  // The extras as one header when short, else in the extras file (written first, so the
  // object never points at a file that is not there yet).
  Result<void> AttachExtras(const std::string& bucket, const std::string& key,
                            const std::string& etag, const Extras& extras,
                            std::vector<std::pair<std::string, std::string>>& headers) {
    if (extras.Empty()) return {};
    std::string inline_form = crypto::Base64UrlEncode(ExtrasJson(extras).dump());
    if (inline_form.size() <= kMaxInlineExtras) {
      headers.push_back({kExtrasHeader, inline_form});
      return {};
    }
    TM_TRY(WriteExtrasFile(bucket, key, etag, extras));
    headers.push_back({kExtrasHeader, kExtrasElsewhere});
    return {};
  }

  Result<void> WriteExtrasFile(const std::string& bucket, const std::string& key,
                               const std::string& etag, const Extras& extras) {
    Json j = ExtrasJson(extras);
    j["etag"] = etag;
    S3Call put = Call("PUT", ExtrasKey(bucket, key));
    put.body = j.dump();
    TM_ASSIGN(S3Answer a, http_.Send(put));
    if (!Ok(a)) return Fail(Unavailable("store an object's attributes", a));
    return {};
  }

  Result<ObjectInfo> CopyWithin(const std::string& src_bucket, const std::string& src_key,
                                const std::string& dst_bucket, const std::string& dst_key,
                                ObjectInfo info) {
    S3Call copy = Call("PUT", ObjectKey(dst_bucket, dst_key));
    copy.headers.push_back(
        {"x-amz-copy-source",
         "/" + config_.bucket + "/" + UrlEncode(ObjectKey(src_bucket, src_key), true)});
    copy.headers.push_back({"x-amz-metadata-directive", "REPLACE"});
    AddStoredHeaders(info, copy.headers);
    // The copy's etag is the source's MD5 only for a source written in one piece; an
    // extras file is then keyed by it, and otherwise checked against the answer below.
    TM_TRY(AttachExtras(dst_bucket, dst_key, info.etag, ExtrasFromInfo(info), copy.headers));
    TM_ASSIGN(S3Answer a, http_.Send(copy));
    if (!Ok(a) || !S3ErrorOf(a.body).first.empty()) return Fail(FailureFrom("copy", a));
    pugi::xml_document doc;
    doc.load_buffer(a.body.data(), a.body.size());
    std::string etag = Unquote(doc.child("CopyObjectResult").child_value("ETag"));
    if (!etag.empty() && etag != info.etag && !ExtrasFromInfo(info).Empty()) {
      TM_TRY(WriteExtrasFile(dst_bucket, dst_key, etag, ExtrasFromInfo(info)));
    }
    if (!etag.empty()) info.etag = etag;
    info.key = dst_key;
    info.last_modified_ms = clock_.NowMillis();
    return info;
  }

  // An object's info from the backend's answer headers (HEAD or GET).
  Result<ObjectInfo> InfoOf(const std::string& bucket, const std::string& key,
                            const std::map<std::string, std::string>& h) {
    ObjectInfo info;
    info.key = key;
    auto get = [&](const char* name) {
      auto it = h.find(name);
      return it == h.end() ? std::string() : it->second;
    };
    info.etag = Unquote(get("etag"));
    info.last_modified_ms = ParseHttpDate(get("last-modified"));
    std::string range = get("content-range");
    size_t slash = range.rfind('/');
    info.size = slash != std::string::npos
                    ? std::strtoull(range.c_str() + slash + 1, nullptr, 10)
                    : std::strtoull(get("content-length").c_str(), nullptr, 10);
    for (const auto& [lower, wire] : kStoredHeaders) {
      if (auto it = h.find(lower); it != h.end()) info.headers[wire] = it->second;
    }
    for (const auto& [name, value] : h) {
      if (name.starts_with("x-amz-meta-") && name != kExtrasHeader) info.headers[name] = value;
    }
    std::string extras = get(kExtrasHeader);
    if (!extras.empty() && extras != kExtrasElsewhere) {
      auto decoded = crypto::Base64UrlDecode(extras);
      if (decoded) ApplyExtras(ExtrasOf(Json::parse(*decoded, nullptr, false)), info);
    } else if (extras == kExtrasElsewhere || info.etag.find('-') != std::string::npos) {
      TM_ASSIGN(auto file, ReadSmall(ExtrasKey(bucket, key)));
      if (file) {
        Json j = Json::parse(*file, nullptr, false);
        if (j.is_object() && j.value("etag", "") == info.etag) ApplyExtras(ExtrasOf(j), info);
      }
    }
    return info;
  }

  // ---- small records ----
  Result<std::optional<std::string>> ReadSmall(const std::string& key) {
    TM_ASSIGN(S3Answer a, http_.Send(Idempotent(Call("GET", key))));
    if (a.status == 404) return std::optional<std::string>();
    if (!Ok(a)) return Fail(Unavailable("read " + key, a));
    return std::optional<std::string>(std::move(a.body));
  }

  Result<void> DeleteKey(const std::string& key) {
    TM_ASSIGN(S3Answer a, http_.Send(Idempotent(Call("DELETE", key))));
    if (!Ok(a) && a.status != 404) return Fail(Unavailable("delete " + key, a));
    return {};
  }

  // (the upload, the backend's upload id)
  Result<std::pair<UploadInfo, std::string>> ReadUpload(const std::string& bucket,
                                                        const std::string& id) {
    auto missing = [] {
      return StoreError(StoreFailure::kNoSuchUpload, ErrorCode::kNotFound,
                        "The specified upload does not exist");
    };
    // Our ids are hex; anything else would name another path.
    if (id.empty() || id.find_first_not_of("0123456789abcdef") != std::string::npos) {
      return Fail(missing());
    }
    TM_ASSIGN(auto text, ReadSmall(UploadKey(bucket, id)));
    if (!text) return Fail(missing());
    Json j = Json::parse(*text, nullptr, false);
    if (!j.is_object()) return Fail(ErrorCode::kUnavailable, "Upload record is damaged: " + id);
    UploadInfo u;
    u.upload_id = id;
    u.key = j.value("key", "");
    u.initiated_ms = j.value("initiated_ms", int64_t{0});
    u.pending.key = u.key;
    if (j.contains("headers")) {
      u.pending.headers = j["headers"].get<std::map<std::string, std::string>>();
    }
    ApplyExtras(ExtrasOf(j.value("extras", Json::object())), u.pending);
    if (j.contains("checksums")) {
      u.pending.checksums = j["checksums"].get<std::map<std::string, std::string>>();
    }
    return std::pair{u, j.value("backend_id", "")};
  }

  Result<void> ForgetUpload(const std::string& bucket, const std::string& id) {
    const std::string parts = UploadKey(bucket, id) + ".parts/";
    TM_TRY(ListRaw(parts, "", "", [&](const ObjectInfo& o) { return DeleteKey(o.key); }));
    return DeleteKey(UploadKey(bucket, id));
  }

  // The parts acknowledged so far, from their records, in part order.
  Result<std::vector<PartInfo>> RecordedParts(const std::string& bucket, const std::string& id) {
    const std::string dir = UploadKey(bucket, id) + ".parts/";
    std::vector<PartInfo> parts;
    TM_TRY(ListRaw(dir, "", "", [&](const ObjectInfo& o) -> Result<void> {
      TM_ASSIGN(auto text, ReadSmall(o.key));
      Json j = text ? Json::parse(*text, nullptr, false) : Json();
      if (!j.is_object()) return {};  // deleted meanwhile (completed or aborted)
      PartInfo part;
      part.part_number = std::atoi(o.key.c_str() + dir.size());
      part.etag = j.value("etag", "");
      part.size = j.value("size", uint64_t{0});
      part.last_modified_ms = j.value("last_modified_ms", int64_t{0});
      if (j.contains("checksums") && j["checksums"].is_object()) {
        part.checksums = j["checksums"].get<std::map<std::string, std::string>>();
      }
      parts.push_back(std::move(part));
      return {};
    }));
    std::sort(parts.begin(), parts.end(),
              [](const PartInfo& a, const PartInfo& b) { return a.part_number < b.part_number; });
    return parts;
  }

  // Every key under `prefix` (raw backend keys), page by page.
  Result<void> ListRaw(const std::string& prefix, const std::string& delimiter,
                       const std::string& start,
                       const std::function<Result<void>(const ObjectInfo&)>& each) {
    std::string token;
    while (true) {
      S3Call call = Idempotent(Call("GET", ""));
      call.query = {{"list-type", "2"}, {"prefix", prefix}};
      if (!delimiter.empty()) call.query.push_back({"delimiter", delimiter});
      if (!token.empty()) call.query.push_back({"continuation-token", token});
      if (!start.empty()) call.query.push_back({"start-after", start});
      TM_ASSIGN(S3Answer a, http_.Send(call));
      if (!Ok(a)) return Fail(Unavailable("list", a));
      pugi::xml_document doc;
      doc.load_buffer(a.body.data(), a.body.size());
      pugi::xml_node root = doc.child("ListBucketResult");
      for (pugi::xml_node c : root.children("Contents")) {
        ObjectInfo o;
        o.key = c.child_value("Key");
        o.size = std::strtoull(c.child_value("Size"), nullptr, 10);
        TM_TRY(each(o));
      }
      if (std::string(root.child_value("IsTruncated")) != "true") return {};
      token = root.child_value("NextContinuationToken");
      if (token.empty()) return {};
    }
  }

  S3StoreConfig config_;
  S3Http http_;
  const Clock& clock_;
  Random& random_;
  bool conditional_ = true;
  bool path_keys_only_ = false;
  KeyLocker locker_;
};

}  // namespace

Result<std::unique_ptr<ObjectStore>> OpenS3Store(const S3StoreConfig& config, const Clock& clock,
                                                 Random& random) {
  if (config.endpoint.empty() || config.bucket.empty()) {
    return Fail(ErrorCode::kInvalidInput, "The S3 object store needs an endpoint and a bucket");
  }
  if (config.access_key.empty() || config.secret_key.empty()) {
    return Fail(ErrorCode::kInvalidInput,
                "The S3 object store needs credentials (AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY, or a credentials file)");
  }
  if (config.root.starts_with("/") || config.root.ends_with("/")) {
    return Fail(ErrorCode::kInvalidInput, "The S3 root prefix takes no slash at either end");
  }
  auto store = std::make_unique<S3Store>(config, clock, random);
  TM_TRY(store->Probe());
  return std::unique_ptr<ObjectStore>(std::move(store));
}

}  // namespace tablemere::objectstore
