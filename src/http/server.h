// The HTTP transport: listeners, one thread per connection, keep-alive, streaming
// request and response bodies, Expect: 100-continue, request ids, access log, and
// graceful shutdown. Beast is confined to server.cc.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "http/message.h"

namespace tablemere::http {

struct ListenerOptions {
  std::string name;     // "api", "catalog", "s3" — used in the access log
  std::string address;  // "127.0.0.1:8080"; port 0 picks a free port
  Handler handler;
};

// Writes one access-log line per request; never sees query strings or bodies,
// which can carry signatures and secrets.
using AccessLog = std::function<void(const std::string& line)>;

class Server {
 public:
  virtual ~Server() = default;
  // Binds every listener and starts serving. Errors: kUnavailable when an address
  // cannot be bound, kInvalidInput when it cannot be parsed.
  static Result<std::unique_ptr<Server>> Start(std::vector<ListenerOptions> listeners,
                                               AccessLog access_log);
  // The bound "host:port" of a listener (after port 0 was resolved).
  virtual std::string BoundAddress(const std::string& name) const = 0;
  // Stops accepting, lets in-flight requests finish, closes idle connections, and
  // returns when every connection thread has ended. Thread-safe; idempotent.
  virtual void Shutdown() = 0;
};

}  // namespace tablemere::http
