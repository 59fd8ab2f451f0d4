#include "objectstore/s3_http.h"

#include <curl/curl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <pugixml.hpp>
#include <thread>

#include "common/crypto.h"
#include "common/strings.h"
#include "storage/sigv4.h"

namespace tablemere::objectstore {
namespace {

// Longest answer body kept in memory when no sink streams it (error documents, listings).
constexpr size_t kMaxBufferedBody = 64u << 20;

using SteadyClock = std::chrono::steady_clock;

struct Transfer {
  const S3Call* call = nullptr;
  // Stall detection: the last moment bytes moved between us and the store, or one of our
  // callbacks (which may wait for our own client) returned.
  SteadyClock::time_point last_progress = SteadyClock::now();
  curl_off_t last_down = 0, last_up = 0;
  std::chrono::seconds stall_limit{30};
  bool stalled = false;
  S3Answer answer;
  bool in_headers = true;
  bool headers_reported = false;
  bool cancelled = false;
  bool streamed = false;  // body bytes went to the sink: the call cannot be retried
  uint64_t sent = 0;      // body bytes handed to curl
  std::string_view memory_body;
};

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) {  // a new answer (after 100 Continue): start over
    t->answer.headers.clear();
    t->in_headers = true;
    size_t space = line.find(' ');
    t->answer.status =
        space == std::string_view::npos
            ? 0
            : std::strtol(std::string(line.substr(space + 1, 3)).c_str(), nullptr, 10);
    return size * n;
  }
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.empty()) {
    t->in_headers = false;
    return size * n;
  }
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name = ToLower(std::string(line.substr(0, colon)));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    t->answer.headers[name] = std::string(value);
  }
  return size * n;
}

// Ends a transfer whose store side has been silent for the stall limit. curl's own
// low-speed check averages over several seconds (a 1 s limit fired after 7 s) and
// counts time spent waiting in our callbacks for our client, which is not the store's.
int OnProgress(void* user, curl_off_t, curl_off_t down, curl_off_t, curl_off_t up) {
  auto* t = static_cast<Transfer*>(user);
  const auto now = SteadyClock::now();
  if (down != t->last_down || up != t->last_up) {
    t->last_down = down;
    t->last_up = up;
    t->last_progress = now;
    return 0;
  }
  if (now - t->last_progress > t->stall_limit) {
    t->stalled = true;
    return 1;
  }
  return 0;
}

// Marks the end of a body callback as progress: the time it waited on our own client
// (a full window, a slow upload) is not the store's silence.
struct CallbackReturned {
  Transfer* t;
  ~CallbackReturned() { t->last_progress = SteadyClock::now(); }
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  CallbackReturned returned{t};
  const size_t bytes = size * n;
  const bool ok = t->answer.status >= 200 && t->answer.status < 300;
  if (ok && t->call->sink) {
    if (!t->headers_reported && t->call->on_headers) {
      t->call->on_headers(t->answer.status, t->answer.headers);
    }
    t->headers_reported = true;
    t->streamed = true;
    if (!t->call->sink(data, bytes)) {
      t->cancelled = true;
      return 0;
    }
    return bytes;
  }
  if (t->answer.body.size() + bytes > kMaxBufferedBody) return 0;
  t->answer.body.append(data, bytes);
  return bytes;
}

size_t OnRead(char* out, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  CallbackReturned returned{t};
  const size_t want = size * n;
  if (t->call->pull) {
    if (t->sent >= t->call->pull_size) return 0;
    long got = t->call->pull(
        out, static_cast<size_t>(std::min<uint64_t>(want, t->call->pull_size - t->sent)));
    if (got <= 0) return CURL_READFUNC_ABORT;  // the body was abandoned: the store gets less
    t->sent += static_cast<uint64_t>(got);
    return static_cast<size_t>(got);
  }
  if (t->call->file_fd >= 0) {
    if (t->sent >= t->call->file_size) return 0;
    size_t ask = static_cast<size_t>(std::min<uint64_t>(want, t->call->file_size - t->sent));
    ssize_t got;
    do {
      got = ::pread(t->call->file_fd, out, ask, static_cast<off_t>(t->sent));
    } while (got < 0 && errno == EINTR);
    if (got <= 0) return CURL_READFUNC_ABORT;  // the spool shrank or failed: send nothing more
    t->sent += static_cast<uint64_t>(got);
    return static_cast<size_t>(got);
  }
  size_t left = t->memory_body.size() - t->sent;
  size_t take = std::min(left, want);
  std::memcpy(out, t->memory_body.data() + t->sent, take);
  t->sent += take;
  return take;
}

std::string HostOf(const std::string& endpoint) {
  size_t scheme = endpoint.find("://");
  std::string rest = scheme == std::string::npos ? endpoint : endpoint.substr(scheme + 3);
  size_t slash = rest.find('/');
  return slash == std::string::npos ? rest : rest.substr(0, slash);
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};

}  // namespace

std::string S3Answer::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

std::pair<std::string, std::string> S3ErrorOf(const std::string& body) {
  if (body.find("<Error") == std::string::npos) return {};
  pugi::xml_document doc;
  if (!doc.load_buffer(body.data(), body.size())) return {};
  pugi::xml_node error = doc.child("Error");
  if (!error) return {};
  return {error.child_value("Code"), error.child_value("Message")};
}

// Idle easy handles; curl keeps each one's connections alive between requests.
struct S3Http::Pool {
  std::mutex mu;
  std::vector<std::unique_ptr<CURL, CurlDeleter>> idle;
  std::unique_ptr<CURL, CurlDeleter> Take() {
    {
      std::lock_guard lock(mu);
      if (!idle.empty()) {
        auto handle = std::move(idle.back());
        idle.pop_back();
        curl_easy_reset(handle.get());
        return handle;
      }
    }
    return std::unique_ptr<CURL, CurlDeleter>(curl_easy_init());
  }
  void Give(std::unique_ptr<CURL, CurlDeleter> handle) {
    std::lock_guard lock(mu);
    if (idle.size() < 64) idle.push_back(std::move(handle));
  }
};

S3Http::S3Http(S3Endpoint endpoint)
    : endpoint_(std::move(endpoint)), pool_(std::make_unique<Pool>()) {
  while (endpoint_.endpoint.ends_with("/")) endpoint_.endpoint.pop_back();
  curl_global_init(CURL_GLOBAL_DEFAULT);
}

S3Http::~S3Http() = default;

Result<S3Answer> S3Http::Send(const S3Call& call) {
  for (int attempt = 0;; attempt++) {
    auto answer = SendOnce(call);
    const bool retry_status = answer && answer->status >= 500;
    if ((answer && !retry_status) || !call.idempotent || call.pull ||
        attempt >= endpoint_.retries) {
      return answer;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
  }
}

Result<S3Answer> S3Http::SendOnce(const S3Call& call) {
  // The path and query exactly as signed: strict percent-encoding, '/' kept in keys.
  std::string raw_path = "/" + call.bucket;
  if (!call.key.empty()) raw_path += "/" + UrlEncode(call.key, true);
  std::string raw_query;
  for (const auto& [k, v] : call.query) {
    if (!raw_query.empty()) raw_query += '&';
    raw_query += UrlEncode(k);
    if (!v.empty()) raw_query += "=" + UrlEncode(v);
  }
  const std::string amz_date = FormatAmzDate(clock_.NowMillis());
  const std::string payload_hash = call.file_fd >= 0 || call.pull
                                       ? std::string("UNSIGNED-PAYLOAD")
                                       : crypto::HexEncode(crypto::Sha256(call.body));
  storage::SignedRequest signed_request{
      .method = call.method, .raw_path = raw_path, .raw_query = raw_query, .headers = {}};
  signed_request.headers.push_back({"host", HostOf(endpoint_.endpoint)});
  signed_request.headers.push_back({"x-amz-date", amz_date});
  signed_request.headers.push_back({"x-amz-content-sha256", payload_hash});
  for (const auto& h : call.headers) signed_request.headers.push_back(h);
  const std::string authorization =
      storage::SignV4(signed_request, endpoint_.access_key, endpoint_.secret_key, endpoint_.region,
                      amz_date, payload_hash);

  auto handle = pool_->Take();
  if (!handle) return Fail(ErrorCode::kUnavailable, "The S3 backend client could not start");
  CURL* c = handle.get();
  Transfer t;
  t.call = &call;
  t.memory_body = call.body;
  const std::string url =
      endpoint_.endpoint + raw_path + (raw_query.empty() ? "" : "?" + raw_query);
  curl_slist* headers = nullptr;
  for (const auto& [name, value] : signed_request.headers) {
    if (name == "host") continue;  // curl sends it from the URL
    headers = curl_slist_append(headers, (name + ": " + value).c_str());
  }
  headers = curl_slist_append(headers, ("Authorization: " + authorization).c_str());
  headers = curl_slist_append(headers, "Expect:");
  bool has_content_type = false;
  for (const auto& [name, value] : call.headers) {
    has_content_type |= EqualsIgnoreCase(name, "content-type");
  }
  if (!has_content_type) headers = curl_slist_append(headers, "Content-Type:");

  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(endpoint_.connect_timeout_ms));
  // A body streamed to or from our client moves at that client's pace (a large object
  // may take far longer than any fixed limit); the stall limit below bounds it instead.
  const bool streamed = call.sink || call.pull;
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
                   streamed ? 0L : static_cast<long>(endpoint_.request_timeout_ms));
  // A store silent this long ends the transfer (OnProgress), even inside the overall timeout.
  t.stall_limit = std::chrono::seconds(endpoint_.stall_seconds);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  // Larger slices than curl's 16 KiB/64 KiB defaults: fewer callbacks and hand-offs per
  // large object (measured in bench/s3_backend.py).
  curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 512L * 1024);
  curl_easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, 1024L * 1024);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_READFUNCTION, OnRead);
  curl_easy_setopt(c, CURLOPT_READDATA, &t);
  const uint64_t body_size = call.pull           ? call.pull_size
                             : call.file_fd >= 0 ? call.file_size
                                                 : call.body.size();
  if (call.method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (call.method == "PUT") {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(body_size));
  } else if (call.method == "POST") {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body_size));
  } else if (call.method != "GET") {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, call.method.c_str());
  }
  CURLcode rc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  t.answer.status = status;
  if (rc != CURLE_OK) {
    // A handle whose transfer broke may hold a broken connection: not reused.
    if (t.cancelled) return Fail(ErrorCode::kUnavailable, "The read was cancelled");
    if (t.stalled) {
      return Fail(Error{
          ErrorCode::kUnavailable,
          "The S3 backend did not answer: nothing moved for " +
              std::to_string(endpoint_.stall_seconds) + " s",
          {}}.With("backend", "stalled"));
    }
    return Fail(Error{
        ErrorCode::kUnavailable,
        std::string("The S3 backend did not answer: ") + curl_easy_strerror(rc),
        {}}.With("backend", "unreachable"));
  }
  if (!t.headers_reported && call.on_headers && status >= 200 && status < 300) {
    call.on_headers(status, t.answer.headers);
  }
  pool_->Give(std::move(handle));
  return std::move(t.answer);
}

}  // namespace tablemere::objectstore
