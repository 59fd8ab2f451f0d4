// The HTTP transport: listeners, an event loop per listener for connections waiting for
// a request head, a worker thread per in-flight request, keep-alive, streaming request
// and response bodies, Expect: 100-continue, request ids, access log, and graceful
// shutdown. Beast is confined to server.cc.
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

// A request head must arrive whole within this of the accept (or of its first byte on a
// keep-alive connection). Real clients send a head in one packet, so 10 s is generous; a
// slow or stalled head (slowloris) must not hold a connection slot for long.
inline constexpr int kDefaultHeadTimeoutSeconds = 10;

// What the transport saw of one answered request (for metrics).
struct RequestRecord {
  const std::string& listener;
  const Request& request;
  int status = 0;
  uint64_t bytes_in = 0;   // request body bytes read
  uint64_t bytes_out = 0;  // response bytes written
  double seconds = 0;      // from the head's arrival to the answer's end
};
using RequestObserver = std::function<void(const RequestRecord&)>;

// Limits of the transport; the defaults are the server's flag defaults.
struct ServerOptions {
  // Open connections per server (idle and waiting ones are cheap: no thread); the fd soft
  // limit is raised to the hard limit at start so this many can be open.
  int max_connections = 50000;
  // Open connections per client address; beyond it a connection gets a 503 and is closed.
  int max_connections_per_address = 1000;
  int head_timeout_seconds = kDefaultHeadTimeoutSeconds;
  // A keep-alive connection with no new request for this long is closed.
  int idle_timeout_seconds = 120;
  // Threads serving requests whose head has arrived; beyond it requests queue.
  int max_request_threads = 1024;
  // Called once per answered request, on the request's thread; may be empty.
  RequestObserver observe;
};

class Server {
 public:
  virtual ~Server() = default;
  // Binds every listener and starts serving. Errors: kUnavailable when an address
  // cannot be bound, kInvalidInput when it cannot be parsed.
  static Result<std::unique_ptr<Server>> Start(std::vector<ListenerOptions> listeners,
                                               AccessLog access_log, ServerOptions options = {});
  // The bound "host:port" of a listener (after port 0 was resolved).
  virtual std::string BoundAddress(const std::string& name) const = 0;
  // Stops accepting, lets in-flight requests finish, closes idle connections, and
  // returns when every request thread has ended. Thread-safe; idempotent.
  virtual void Shutdown() = 0;
};

}  // namespace tablemere::http
