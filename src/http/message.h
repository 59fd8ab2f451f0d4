// Protocol-neutral HTTP request and response types. The transport (server.cc) is the
// only code that knows Beast; API adapters see only these types.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/byte_source.h"
#include "common/result.h"

namespace tablemere::http {

// Ordered header list with case-insensitive lookup (names keep their wire case).
class Headers {
 public:
  // First value for `name`, or nullopt.
  std::optional<std::string> Get(std::string_view name) const;
  std::string GetOr(std::string_view name, std::string fallback) const;
  bool Has(std::string_view name) const { return Get(name).has_value(); }
  void Add(std::string name, std::string value);
  // Replaces every value of `name` with one.
  void Set(std::string name, std::string value);
  void Remove(std::string_view name);
  const std::vector<std::pair<std::string, std::string>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
};

// A request body read on demand, so large uploads stream instead of being buffered.
class BodyReader {
 public:
  virtual ~BodyReader() = default;
  // Reads up to `size` bytes; returns 0 at the end of the body. Errors are kUnavailable
  // (the connection broke or timed out) or kInvalidInput (malformed framing).
  virtual Result<size_t> Read(char* buffer, size_t size) = 0;
  // The declared length when the body is Content-Length framed.
  virtual std::optional<uint64_t> declared_length() const = 0;
};

// Reads a whole body, failing with kInvalidInput ("request body too large") past `limit`.
Result<std::string> ReadAll(BodyReader& body, size_t limit);

struct Request {
  std::string method;  // "GET"
  std::string target;  // raw request target, e.g. "/bkt/a%20b?list-type=2"
  std::string path;    // raw (still encoded) path part of target
  std::string query;   // raw query after '?', "" when none
  Headers headers;
  BodyReader* body = nullptr;  // never null while a handler runs
  std::string remote_address;  // "127.0.0.1"
  std::string request_id;      // unique per request, echoed in responses and logs
};

// A response body produced on demand (large object downloads).
using BodySource = ByteSource;

struct Response {
  int status = 200;
  Headers headers;
  std::string body;  // used when `stream` is null
  // With `body`: shared text sent after it, then `body_tail`, straight from where it
  // lives instead of being copied into one string (the cached ~50 KB metadata document
  // inside a loadTable result).
  std::shared_ptr<const std::string> body_shared;
  std::string body_tail;
  std::unique_ptr<BodySource> stream;  // streamed body of `stream_length` bytes
  uint64_t stream_length = 0;
  // For HEAD: the Content-Length to announce without sending a body.
  std::optional<uint64_t> head_length;

  // Length of body + body_shared + body_tail.
  uint64_t BufferedLength() const {
    return body.size() + (body_shared ? body_shared->size() : 0) + body_tail.size();
  }

  static Response Json(int status, std::string body);
  static Response Text(int status, std::string content_type, std::string body);
};

using Handler = std::function<Response(Request&)>;

}  // namespace tablemere::http
