// The S3 backend's HTTP side: requests to one S3-compatible endpoint, signed with SigV4
// (our own signer: Debian has no C++ S3 SDK, and curl's `aws-sigv4` does not canonicalise
// query strings the way S3 servers check them), over libcurl with kept-alive pooled
// connections, per-request timeouts and retries of idempotent requests only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace tablemere::objectstore {

struct S3Endpoint {
  std::string endpoint;  // scheme://host[:port], no trailing slash
  std::string region;
  std::string access_key;
  std::string secret_key;
  int connect_timeout_ms = 5000;
  int request_timeout_ms = 300000;
  int stall_seconds = 30;
  int retries = 2;
};

struct S3Call {
  std::string method;  // GET, HEAD, PUT, POST, DELETE
  std::string bucket;
  std::string key;                                         // decoded; "" for a bucket-level request
  std::vector<std::pair<std::string, std::string>> query;  // decoded
  std::vector<std::pair<std::string, std::string>> headers;  // names as sent
  std::string body;                                          // in-memory body
  // A body read from an open file descriptor instead (from offset 0, `file_size` bytes).
  int file_fd = -1;
  uint64_t file_size = 0;
  // Or a body pulled as it is sent, `pull_size` bytes in all: `pull` fills up to `size`
  // bytes and returns how many (blocking until it has some), or -1 to abort the request
  // so the store never receives the whole body. Such a call is never retried.
  std::function<long(char* out, size_t size)> pull;
  uint64_t pull_size = 0;
  // Receives a 2xx answer's body as it arrives; returning false cancels the request.
  // Without it the body is collected into S3Answer::body.
  std::function<bool(const char* data, size_t size)> sink;
  // Called once the status and headers of a 2xx answer are known, before the body.
  std::function<void(long status, const std::map<std::string, std::string>& headers)> on_headers;
  bool idempotent = false;  // retried on transport errors and 5xx
};

struct S3Answer {
  long status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;                            // unless streamed to the sink (2xx)
  std::string Header(const std::string& lower_name) const;
};

class S3Http {
 public:
  // Signs with the system's own clock (never a test clock the server may move: the
  // backend checks the signature's time).
  explicit S3Http(S3Endpoint endpoint);
  ~S3Http();
  S3Http(const S3Http&) = delete;
  S3Http& operator=(const S3Http&) = delete;

  // Sends `call`; any HTTP answer is a success here (the caller reads the status). Errors:
  // kUnavailable when the endpoint cannot be reached, times out or the transfer breaks
  // (after the retries an idempotent call is allowed).
  Result<S3Answer> Send(const S3Call& call);

 private:
  struct Pool;
  Result<S3Answer> SendOnce(const S3Call& call);
  S3Endpoint endpoint_;
  SystemClock clock_;
  std::unique_ptr<Pool> pool_;
};

// The S3 error code and message of an <Error> body ("" when it is none).
std::pair<std::string, std::string> S3ErrorOf(const std::string& body);

}  // namespace tablemere::objectstore
