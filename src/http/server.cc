// The only translation unit that includes Beast (compile cost: keep it that way).
//
// Model: a connection waiting for a request head (a new one, or a keep-alive one between
// requests) costs no thread: each listener's epoll loop reads head bytes without blocking
// and enforces the head and idle timeouts and the per-address cap. Once a head has
// arrived, the connection moves to a request thread, which parses and serves it with
// blocking socket I/O bounded by socket timeouts. That keeps streaming bodies
// straightforward (a handler pulls request bytes as it needs them and the transport
// pushes response bytes as it reads them) while idle or stalled clients cannot take the
// threads others need.
#include "http/server.h"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>

#include "common/clock.h"
#include "common/crypto.h"
#include "common/strings.h"
#include "http/head_wait.h"

namespace tablemere::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

// Request headers beyond this are refused: S3 and Iceberg clients send a few KiB.
constexpr size_t kHeaderLimit = 64 * 1024;
// Initial read buffer per connection; large enough that chunked uploads are read in big
// slices (with Beast's 64 KiB default, uploads crawl).
constexpr size_t kReadBufferSize = 1024 * 1024;
// A request thread's blocking receive or send that makes no progress this long fails
// (a body upload or a response download that stalled). Heads and idle keep-alive
// connections are timed by the event loop instead (ServerOptions).
constexpr int kIoTimeoutMs = 120 * 1000;
// Unread request body bytes we are willing to discard to keep a connection alive.
constexpr uint64_t kDrainLimit = 1024 * 1024;
// After a keep-alive response the request thread waits up to this long for the next
// request before handing the connection back to the event loop. Clients that reuse a
// connection usually send the next request at once, and serving it on the same thread
// saves two thread hand-offs (loop wake-up, then pool wake-up): handing back after every
// response measured loadTable at 0.56x of the thread-per-connection model, a 20 ms
// linger at 0.80-0.94x on a loaded machine (clients there are often descheduled for
// longer), 200 ms at 0.96x. A connection that goes quiet holds a thread only this long,
// the wait gives way at once when requests are queued for a thread (it polls in slices),
// and what arrives in it is received without blocking (a head that comes only in part
// goes to the loop, under the head timeout).
constexpr int kKeepAliveLingerMs = 200;
// A response sent before its request's body was read ends the connection, but closing at
// once would reset it under a client still sending the body (a client that stopped
// waiting for 100 Continue, or one that never asked), and most clients then lose the
// answer: botocore reports "connection closed" instead of the 503 it could retry on. So
// the write side is shut and what still arrives is read and discarded for up to this
// long (nginx's lingering close), the wait giving way when requests are queued.
constexpr int kLingerCloseMs = 3000;
constexpr int kLingerSliceMs = 10;
// Largest slice of a response stream sent at once. File-backed bodies are read into
// buffers (see the object store's read-ahead) and sent, not sent with sendfile(2): over
// loopback, sendfile's page-sized socket buffers measured ~1.1-1.6 GB/s against
// ~2.0-2.5 GB/s for pread then send.
constexpr size_t kWriteChunk = 1024 * 1024;

// A blocking stream over a socket fd, usable by Beast as a SyncReadStream/
// SyncWriteStream. Timeouts are the socket's own (SO_RCVTIMEO/SO_SNDTIMEO), so each
// receive or send is one system call rather than a poll() and then the call.
class FdStream {
 public:
  // The socket's timeouts are set once, when it is accepted.
  explicit FdStream(int fd) : fd_(fd) {}

  template <class MutableBufferSequence>
  size_t read_some(const MutableBufferSequence& buffers, boost::system::error_code& ec) {
    ec = {};
    for (auto it = asio::buffer_sequence_begin(buffers); it != asio::buffer_sequence_end(buffers);
         ++it) {
      asio::mutable_buffer b = *it;
      if (b.size() == 0) continue;
      return RecvInto(static_cast<char*>(b.data()), b.size(), ec);
    }
    return 0;
  }
  template <class MutableBufferSequence>
  size_t read_some(const MutableBufferSequence& buffers) {
    boost::system::error_code ec;
    size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

  size_t RecvInto(char* data, size_t size, boost::system::error_code& ec) {
    while (true) {
      ssize_t n = ::recv(fd_, data, size, 0);
      if (n > 0) return static_cast<size_t>(n);
      if (n == 0) {
        ec = asio::error::eof;
        return 0;
      }
      if (errno == EINTR) continue;
      // EAGAIN from a blocking socket: SO_RCVTIMEO expired with nothing received.
      ec = errno == EAGAIN || errno == EWOULDBLOCK
               ? boost::system::error_code(asio::error::timed_out)
               : boost::system::error_code(errno, boost::system::system_category());
      return 0;
    }
  }

  bool WriteAll(const char* data, size_t size) { return WriteAll({std::string_view(data, size)}); }

  // Writes the pieces in order with gather sends, so a response's head and the parts of
  // its body go out without first being copied together. False when the connection
  // failed or stalled (SO_SNDTIMEO expired with nothing sent).
  bool WriteAll(std::initializer_list<std::string_view> pieces) {
    std::array<iovec, 4> parts{};
    size_t count = 0;
    for (std::string_view piece : pieces) {
      if (piece.empty()) continue;
      parts.at(count++) = iovec{const_cast<char*>(piece.data()), piece.size()};
    }
    iovec* next = parts.data();
    while (count > 0) {
      msghdr msg{};
      msg.msg_iov = next;
      msg.msg_iovlen = count;
      ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        return false;
      }
      auto sent = static_cast<size_t>(n);
      while (count > 0 && sent >= next->iov_len) {
        sent -= next->iov_len;
        next++;
        count--;
      }
      if (count > 0) {
        next->iov_base = static_cast<char*>(next->iov_base) + sent;
        next->iov_len -= sent;
      }
    }
    return true;
  }

 private:
  int fd_;
};

// Reads the body of one request, either straight from the socket (Content-Length) or
// through Beast's chunked decoder (Transfer-Encoding: chunked).
class ConnectionBodyReader final : public BodyReader {
 public:
  ConnectionBodyReader(FdStream& stream, beast::flat_buffer& buffer,
                       bhttp::request_parser<bhttp::buffer_body>& parser, bool expect_continue)
      : stream_(stream), buffer_(buffer), parser_(parser), expect_continue_(expect_continue) {
    chunked_ = parser_.chunked();
    if (!chunked_) {
      auto len = parser_.content_length();
      remaining_ = len ? *len : 0;
      if (len) declared_ = *len;
    }
    if (parser_.is_done() && !chunked_) remaining_ = 0;
  }

  Result<size_t> Read(char* out, size_t size) override {
    if (size == 0) return size_t{0};
    if (expect_continue_ && !continue_sent_) {
      static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
      if (!stream_.WriteAll(kContinue, sizeof kContinue - 1)) {
        return Fail(ErrorCode::kUnavailable, "connection closed");
      }
      continue_sent_ = true;
    }
    if (!chunked_ && remaining_ == 0) return size_t{0};
    if (chunked_ && parser_.is_done()) return size_t{0};
    started_ = true;
    auto n = chunked_ ? ReadChunked(out, size) : ReadFixed(out, size);
    if (n) received_ += *n;
    return n;
  }

  uint64_t received() const { return received_; }

  std::optional<uint64_t> declared_length() const override { return declared_; }

  bool continue_pending() const { return expect_continue_ && !continue_sent_; }
  bool finished() const { return chunked_ ? parser_.is_done() : remaining_ == 0; }
  bool broken() const { return broken_; }

  // Discards what is left of the body, up to `limit` bytes. False if the body is longer
  // or the connection failed (the caller then closes the connection).
  bool Drain(uint64_t limit) {
    char buf[64 * 1024];
    uint64_t total = 0;
    while (!finished()) {
      auto n = Read(buf, sizeof buf);
      if (!n || *n == 0) return finished();
      total += *n;
      if (total > limit) return false;
    }
    return true;
  }

 private:
  Result<size_t> ReadFixed(char* out, size_t size) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(size, remaining_));
    if (buffer_.size() > 0) {
      size_t n = std::min(want, buffer_.size());
      std::memcpy(out, buffer_.data().data(), n);
      buffer_.consume(n);
      remaining_ -= n;
      return n;
    }
    boost::system::error_code ec;
    size_t n = stream_.RecvInto(out, want, ec);
    if (ec) {
      broken_ = true;
      return Fail(ErrorCode::kUnavailable, "request body ended early: " + ec.message());
    }
    remaining_ -= n;
    return n;
  }

  Result<size_t> ReadChunked(char* out, size_t size) {
    while (!parser_.is_done()) {
      auto& body = parser_.get().body();
      body.data = out;
      body.size = size;
      body.more = true;
      boost::system::error_code ec;
      bhttp::read_some(stream_, buffer_, parser_, ec);
      if (ec == bhttp::error::need_buffer) ec = {};
      if (ec) {
        broken_ = true;
        return Fail(ErrorCode::kInvalidInput, "malformed chunked body: " + ec.message());
      }
      size_t produced = size - parser_.get().body().size;
      if (produced > 0) return produced;
    }
    return size_t{0};
  }

  FdStream& stream_;
  beast::flat_buffer& buffer_;
  bhttp::request_parser<bhttp::buffer_body>& parser_;
  bool expect_continue_;
  bool continue_sent_ = false;
  bool chunked_ = false;
  bool started_ = false;
  bool broken_ = false;
  uint64_t remaining_ = 0;
  uint64_t received_ = 0;
  std::optional<uint64_t> declared_;
};

std::pair<std::string, std::string> SplitTarget(const std::string& target) {
  size_t q = target.find('?');
  if (q == std::string::npos) return {target, ""};
  return {target.substr(0, q), target.substr(q + 1)};
}

bool StatusHasNoBody(int status) { return status == 204 || status == 304 || status < 200; }

class ServerImpl final : public Server {
 public:
  ServerImpl(AccessLog access_log, ServerOptions options)
      : access_log_(std::move(access_log)), options_(options) {
    unsigned char prefix[4];
    random_.Fill(prefix, sizeof prefix);
    request_prefix_ = crypto::HexEncode(std::string_view(reinterpret_cast<char*>(prefix), 4));
  }

  ~ServerImpl() override { Shutdown(); }

  Result<void> Listen(ListenerOptions options) {
    auto endpoint = ParseEndpoint(options.address);
    if (!endpoint) return Fail(ErrorCode::kInvalidInput, "cannot parse address " + options.address);
    auto acceptor = std::make_unique<tcp::acceptor>(io_);
    boost::system::error_code ec;
    acceptor->open(endpoint->protocol(), ec);
    if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor->bind(*endpoint, ec);
    if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (!ec) acceptor->non_blocking(true, ec);  // the loop accepts until EAGAIN
    if (ec) {
      return Fail(ErrorCode::kUnavailable,
                  "cannot listen on " + options.address + ": " + ec.message());
    }
    tcp::endpoint bound = acceptor->local_endpoint();
    std::string host = bound.address().to_string();
    if (bound.address().is_v6()) host = "[" + host + "]";
    bound_[options.name] = host + ":" + std::to_string(bound.port());
    auto listener = std::make_shared<Listener>();
    listener->name = options.name;
    listener->handler = std::move(options.handler);
    listener->acceptor = std::move(acceptor);
    listener->epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
    listener->wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (listener->epoll_fd < 0 || listener->wake_fd < 0) {
      return Fail(ErrorCode::kUnavailable, "cannot create the event loop: " + ErrnoText());
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = &listener->accept_tag;
    ::epoll_ctl(listener->epoll_fd, EPOLL_CTL_ADD, listener->acceptor->native_handle(), &ev);
    ev.data.ptr = &listener->wake_tag;
    ::epoll_ctl(listener->epoll_fd, EPOLL_CTL_ADD, listener->wake_fd, &ev);
    listeners_.push_back(listener);
    return {};
  }

  void StartAccepting() {
    for (auto& listener : listeners_) {
      loop_threads_.emplace_back([this, listener] { EventLoop(*listener); });
    }
  }

  std::string BoundAddress(const std::string& name) const override {
    auto it = bound_.find(name);
    return it == bound_.end() ? std::string() : it->second;
  }

  void Shutdown() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    for (auto& listener : listeners_) Wake(*listener);
    for (auto& t : loop_threads_) {
      if (t.joinable()) t.join();
    }
    loop_threads_.clear();
    {
      // In-flight requests finish; their connections are closed rather than returned.
      std::unique_lock lock(mu_);
      drained_.wait(lock, [&] { return open_connections_ == 0; });
    }
    std::unique_lock lock(pool_mu_);
    pool_stopping_ = true;
    pool_cv_.notify_all();
    pool_drained_.wait(lock, [&] { return pool_threads_ == 0; });
    for (auto& listener : listeners_) {
      if (listener->epoll_fd >= 0) ::close(listener->epoll_fd);
      if (listener->wake_fd >= 0) ::close(listener->wake_fd);
      listener->epoll_fd = listener->wake_fd = -1;
    }
  }

 private:
  struct Listener;

  // One client connection. While it waits for a request head it belongs to its
  // listener's event loop (in `waiting`, with a deadline); while a request is served it
  // belongs to one request thread; it moves between them whole, with the bytes read so
  // far (a head, the start of a body, pipelined requests) in `pending`.
  struct Connection {
    int fd = -1;
    std::string remote;
    Listener* listener = nullptr;
    std::string pending;
    size_t scanned = 0;  // bytes of `pending` FindHeadEnd searched without a match
    bool has_deadline = false;
    std::multimap<std::chrono::steady_clock::time_point, Connection*>::iterator deadline;
  };

  struct Listener {
    std::string name;
    Handler handler;
    std::unique_ptr<tcp::acceptor> acceptor;
    int epoll_fd = -1;
    int wake_fd = -1;
    char accept_tag = 0;  // epoll data pointers that mark the two fds that are not clients
    char wake_tag = 0;
    // Owned by the event loop thread only.
    std::set<Connection*> waiting;
    std::multimap<std::chrono::steady_clock::time_point, Connection*> deadlines;
    // Connections request threads hand back after a keep-alive response; under mu_.
    std::vector<Connection*> returned;
  };

  static std::string ErrnoText() { return std::strerror(errno); }

  static void Wake(Listener& listener) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t w = ::write(listener.wake_fd, &one, sizeof one);
  }

  static std::optional<tcp::endpoint> ParseEndpoint(const std::string& address) {
    size_t colon = address.rfind(':');
    if (colon == std::string::npos) return std::nullopt;
    std::string host = address.substr(0, colon);
    std::string port = address.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    if (host == "localhost") host = "127.0.0.1";
    boost::system::error_code ec;
    auto ip = asio::ip::make_address(host, ec);
    if (ec) return std::nullopt;
    char* end = nullptr;
    long p = std::strtol(port.c_str(), &end, 10);
    if (end == port.c_str() || *end != '\0' || p < 0 || p > 65535) return std::nullopt;
    return tcp::endpoint(ip, static_cast<unsigned short>(p));
  }

  // The waiting phase. Linux epoll is used directly rather than Asio's reactor: the rest
  // of the transport is plain fds and blocking system calls, and this loop only accepts,
  // receives head bytes without blocking and expires deadlines, which needs none of
  // Asio's handler machinery (nor its compile cost). Sockets stay in blocking mode (the
  // request threads use blocking I/O); the loop receives with MSG_DONTWAIT.
  void EventLoop(Listener& listener) {
    constexpr int kMaxEvents = 256;
    std::array<epoll_event, kMaxEvents> events{};
    while (true) {
      int timeout_ms = 1000;
      if (!listener.deadlines.empty()) {
        auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
                        listener.deadlines.begin()->first - std::chrono::steady_clock::now())
                        .count() +
                    1;
        timeout_ms = static_cast<int>(std::clamp<int64_t>(wait, 0, 1000));
      }
      int n = ::epoll_wait(listener.epoll_fd, events.data(), kMaxEvents, timeout_ms);
      if (n < 0 && errno != EINTR) break;
      for (int i = 0; i < n; i++) {
        void* tag = events.at(i).data.ptr;
        if (tag == &listener.accept_tag) {
          AcceptAll(listener);
        } else if (tag == &listener.wake_tag) {
          uint64_t count;
          [[maybe_unused]] ssize_t r = ::read(listener.wake_fd, &count, sizeof count);
        } else {
          ReadHead(listener, static_cast<Connection*>(tag));
        }
      }
      std::vector<Connection*> returned;
      bool stop;
      {
        std::lock_guard lock(mu_);
        returned.swap(listener.returned);
        stop = stopping_;
      }
      for (Connection* c : returned) Wait(listener, c);
      if (stop) break;
      auto now = std::chrono::steady_clock::now();
      while (!listener.deadlines.empty() && listener.deadlines.begin()->first <= now) {
        // A head that did not arrive in time or a keep-alive connection left idle: closed
        // without an answer (a stalled client would not read one).
        Close(listener, listener.deadlines.begin()->second);
      }
    }
    boost::system::error_code ec;
    listener.acceptor->close(ec);
    while (!listener.waiting.empty()) Close(listener, *listener.waiting.begin());
  }

  void AcceptAll(Listener& listener) {
    int listen_fd = listener.acceptor->native_handle();
    while (true) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      // Without SOCK_NONBLOCK the accepted socket is blocking even though the listener is not.
      int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // EAGAIN: none left; EMFILE and the like: retried on the next event
      }
      std::string remote = RemoteAddress(addr);
      bool admitted = false;
      bool over_address_cap = false;
      {
        std::lock_guard lock(mu_);
        if (!stopping_ && open_connections_ < options_.max_connections) {
          admitted = addresses_.TryAdd(remote, options_.max_connections_per_address);
          over_address_cap = !admitted;
          if (admitted) open_connections_++;
        }
      }
      if (!admitted) {
        if (over_address_cap) {
          // Told why (best effort, never blocking) rather than reset, so a well-behaved
          // client behind a busy address can back off.
          static constexpr char kBusy[] =
              "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n"
              "Retry-After: 1\r\n\r\n";
          [[maybe_unused]] ssize_t w =
              ::send(fd, kBusy, sizeof kBusy - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        }
        ::close(fd);
        continue;
      }
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      // Timeouts of the request threads' blocking I/O (bodies and responses).
      timeval timeout{kIoTimeoutMs / 1000, (kIoTimeoutMs % 1000) * 1000};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
      auto* c = new Connection();
      c->fd = fd;
      c->remote = std::move(remote);
      c->listener = &listener;
      Wait(listener, c);
    }
  }

  // Puts a connection into the waiting phase: registered with epoll, under the head
  // deadline when part of a head is already here and the idle deadline otherwise.
  void Wait(Listener& listener, Connection* c) {
    bool idle = c->pending.empty();
    SetDeadline(listener, c, idle ? options_.idle_timeout_seconds : options_.head_timeout_seconds);
    listener.waiting.insert(c);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.ptr = c;
    if (::epoll_ctl(listener.epoll_fd, EPOLL_CTL_ADD, c->fd, &ev) != 0) Close(listener, c);
  }

  void SetDeadline(Listener& listener, Connection* c, int seconds) {
    ClearDeadline(listener, c);
    c->deadline = listener.deadlines.emplace(
        std::chrono::steady_clock::now() + std::chrono::seconds(seconds), c);
    c->has_deadline = true;
  }

  static void ClearDeadline(Listener& listener, Connection* c) {
    if (c->has_deadline) listener.deadlines.erase(c->deadline);
    c->has_deadline = false;
  }

  void Close(Listener& listener, Connection* c) {
    listener.waiting.erase(c);
    ClearDeadline(listener, c);
    ::close(c->fd);  // also removes it from the epoll set
    Release(c);
  }

  // Forgets a closed connection in the counts.
  void Release(Connection* c) {
    std::lock_guard lock(mu_);
    addresses_.Remove(c->remote);
    if (--open_connections_ == 0) drained_.notify_all();
    delete c;
  }

  void ReadHead(Listener& listener, Connection* c) {
    char buf[16 * 1024];
    ssize_t n = ::recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) {
      Close(listener, c);  // the peer went away (or the connection failed) between requests
      return;
    }
    bool was_idle = c->pending.empty();
    c->pending.append(buf, static_cast<size_t>(n));
    if (was_idle) SetDeadline(listener, c, options_.head_timeout_seconds);
    bool complete = FindHeadEnd(c->pending, c->scanned) != std::string_view::npos;
    c->scanned = c->pending.size();
    // An oversized head goes to a request thread too, which answers it as it always has.
    if (!complete && c->pending.size() < kHeaderLimit) return;
    ::epoll_ctl(listener.epoll_fd, EPOLL_CTL_DEL, c->fd, nullptr);
    listener.waiting.erase(c);
    ClearDeadline(listener, c);
    c->scanned = 0;
    Submit(c);
  }

  // ---- request threads: a pool that grows to max_request_threads and shrinks when idle.

  void Submit(Connection* c) {
    std::lock_guard lock(pool_mu_);
    jobs_.push_back(c);
    queued_.fetch_add(1, std::memory_order_relaxed);
    if (jobs_.size() > static_cast<size_t>(pool_idle_) &&
        pool_threads_ < options_.max_request_threads) {
      pool_threads_++;
      std::thread([this] { RequestThread(); }).detach();
    } else {
      pool_cv_.notify_one();
    }
  }

  void RequestThread() {
    // Kept across requests: a large buffer so chunked uploads are read in big slices.
    beast::flat_buffer buffer;
    buffer.reserve(kReadBufferSize);
    std::unique_lock lock(pool_mu_);
    while (true) {
      pool_idle_++;
      bool woke = pool_cv_.wait_for(lock, std::chrono::seconds(30),
                                    [&] { return pool_stopping_ || !jobs_.empty(); });
      pool_idle_--;
      if (jobs_.empty()) {
        if (pool_stopping_ || !woke) break;
        continue;
      }
      Connection* c = jobs_.front();
      jobs_.pop_front();
      queued_.fetch_sub(1, std::memory_order_relaxed);
      lock.unlock();
      Serve(c, buffer);
      lock.lock();
    }
    if (--pool_threads_ == 0) pool_drained_.notify_all();
  }

  static std::string RemoteAddress(const sockaddr_storage& addr) {
    char buf[INET6_ADDRSTRLEN] = {0};
    if (addr.ss_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(addr).sin_addr, buf, sizeof buf);
    } else if (addr.ss_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(addr).sin6_addr, buf, sizeof buf);
    }
    return buf;
  }

  bool Stopping() {
    std::lock_guard lock(mu_);
    return stopping_;
  }

  std::string NextRequestId() {
    uint64_t n = ++request_counter_;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%012llx", request_prefix_.c_str(),
                  static_cast<unsigned long long>(n));
    return buf;
  }

  // Reads and parses one request header. DuckDB joins nested namespace levels in paths
  // with a raw 0x1F byte, which HTTP forbids and Beast refuses; the request line's raw
  // control bytes are percent-encoded before parsing so such requests reach the routes.
  static void ReadHeader(FdStream& stream, beast::flat_buffer& buffer,
                         bhttp::request_parser<bhttp::buffer_body>& parser,
                         boost::system::error_code& ec) {
    size_t line_end = std::string::npos;
    while (true) {
      std::string_view data(static_cast<const char*>(buffer.data().data()), buffer.size());
      line_end = data.find("\r\n");
      if (line_end != std::string::npos) break;
      if (buffer.size() >= kHeaderLimit) {
        ec = bhttp::error::header_limit;
        return;
      }
      auto space = buffer.prepare(64 * 1024);
      size_t n = stream.read_some(space, ec);
      if (ec) {
        if (ec == asio::error::eof && buffer.size() > 0) ec = bhttp::error::partial_message;
        return;
      }
      buffer.commit(n);
    }
    std::string_view line(static_cast<const char*>(buffer.data().data()), line_end);
    if (line.find('\x1f') != std::string_view::npos) {
      std::string rest(static_cast<const char*>(buffer.data().data()) + line_end,
                       buffer.size() - line_end);
      std::string fixed;
      for (char c : line) {
        if (c == '\x1f') {
          fixed += "%1F";
        } else {
          fixed.push_back(c);
        }
      }
      fixed += rest;
      buffer.consume(buffer.size());
      auto space = buffer.prepare(fixed.size());
      std::memcpy(space.data(), fixed.data(), fixed.size());
      buffer.commit(fixed.size());
    }
    bhttp::read_header(stream, buffer, parser, ec);
  }

  enum class Linger { kHead, kIdle, kClosed };

  // After a keep-alive response: waits up to kKeepAliveLingerMs for the whole head of the
  // next request, receiving without blocking. kHead when it is in `buffer`; kIdle when
  // it has not come whole (what did come stays in `buffer`, and the connection goes back
  // to the event loop, under the head deadline); kClosed when the peer went away.
  Linger AwaitNextHead(int fd, beast::flat_buffer& buffer) {
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(kKeepAliveLingerMs);
    size_t scanned = 0;
    while (true) {
      std::string_view data(static_cast<const char*>(buffer.data().data()), buffer.size());
      if (FindHeadEnd(data, scanned) != std::string_view::npos) return Linger::kHead;
      scanned = data.size();
      if (data.size() >= kHeaderLimit) return Linger::kHead;  // answered as too large
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0 || queued_.load(std::memory_order_relaxed) > 0) return Linger::kIdle;
      pollfd p{fd, POLLIN, 0};
      int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, kLingerSliceMs)));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return Linger::kIdle;
      if (r == 0) continue;
      auto space = buffer.prepare(64 * 1024);
      ssize_t n = ::recv(fd, space.data(), space.size(), MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
      if (n <= 0) return Linger::kClosed;
      buffer.commit(static_cast<size_t>(n));
    }
  }

  // Serves the requests whose heads have arrived with blocking I/O, then hands the
  // connection back to its event loop (keep-alive) or closes it.
  void Serve(Connection* c, beast::flat_buffer& buffer) {
    FdStream stream(c->fd);
    buffer.clear();
    auto space = buffer.prepare(c->pending.size());
    std::memcpy(space.data(), c->pending.data(), c->pending.size());
    buffer.commit(c->pending.size());
    c->pending.clear();
    bool reuse = false;
    bool unread_body = false;
    while (true) {
      bhttp::request_parser<bhttp::buffer_body> parser;
      parser.header_limit(kHeaderLimit);
      parser.body_limit(std::numeric_limits<uint64_t>::max());
      boost::system::error_code ec;
      ReadHeader(stream, buffer, parser, ec);
      if (ec) {
        // Every malformed head (a negative or doubled Content-Length included) gets an
        // answer; only a peer that went away or stopped mid-head is dropped silently.
        const bool malformed =
            ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category() &&
            ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message &&
            ec != bhttp::error::need_more;
        if (malformed) {
          static constexpr char kBad[] =
              "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
          stream.WriteAll(kBad, sizeof kBad - 1);
        }
        break;
      }
      if (!HandleOne(stream, buffer, parser, c->remote, *c->listener, Stopping(), unread_body)) {
        break;
      }
      // A pipelined request whose head is here already, or one that arrives within the
      // linger, is served on this thread.
      Linger next = AwaitNextHead(c->fd, buffer);
      if (next == Linger::kClosed) break;
      if (next == Linger::kHead) continue;
      c->pending.assign(static_cast<const char*>(buffer.data().data()), buffer.size());
      reuse = true;
      break;
    }
    buffer.clear();
    if (reuse) {
      std::lock_guard lock(mu_);
      if (!stopping_) {
        c->listener->returned.push_back(c);
        Wake(*c->listener);
        return;
      }
    }
    if (unread_body) LingerBeforeClose(c->fd);
    ::shutdown(c->fd, SHUT_RDWR);
    ::close(c->fd);
    Release(c);
  }

  // Discards what the peer still sends after our last response, until it closes,
  // kLingerCloseMs pass, or other requests wait for a thread.
  void LingerBeforeClose(int fd) {
    ::shutdown(fd, SHUT_WR);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kLingerCloseMs);
    char sink[64 * 1024];
    while (queued_.load(std::memory_order_relaxed) == 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) return;
      pollfd p{fd, POLLIN, 0};
      int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 100)));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) continue;
      ssize_t n = ::recv(fd, sink, sizeof sink, MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
      if (n <= 0) return;
    }
  }

  // Serves one parsed request; returns whether the connection may be reused.
  // `unread_body` is set when the answer went out before the request's body was read.
  bool HandleOne(FdStream& stream, beast::flat_buffer& buffer,
                 bhttp::request_parser<bhttp::buffer_body>& parser, const std::string& remote,
                 Listener& listener, bool stopping, bool& unread_body) {
    auto started = std::chrono::steady_clock::now();
    auto& header = parser.get();
    Request request;
    request.method = std::string(header.method_string());
    request.target = std::string(header.target());
    std::tie(request.path, request.query) = SplitTarget(request.target);
    for (const auto& field : header) {
      request.headers.Add(std::string(field.name_string()), std::string(field.value()));
    }
    request.remote_address = remote;
    request.request_id = NextRequestId();
    bool expect_continue = false;
    if (auto expect = request.headers.Get("Expect")) {
      expect_continue = EqualsIgnoreCaseAscii(*expect, "100-continue");
    }
    ConnectionBodyReader body(stream, buffer, parser, expect_continue);
    request.body = &body;

    Response response;
    try {
      response = listener.handler(request);
    } catch (const std::exception& e) {
      response = Response::Json(500,
                                "{\"error\":{\"code\":\"internal\",\"message\":\"internal "
                                "error\",\"request_id\":\"" +
                                    request.request_id + "\"}}");
    }

    bool keep_alive = header.keep_alive() && !stopping;
    if (!body.finished()) {
      // The handler answered without consuming the body. Without a 100 Continue the
      // client may not send it at all, so the connection cannot be reused safely.
      if (body.continue_pending() || body.broken() || !body.Drain(kDrainLimit)) keep_alive = false;
    }
    if (body.broken()) keep_alive = false;
    unread_body = !body.finished() && !body.broken();
    uint64_t sent = WriteResponse(stream, request, response, keep_alive);
    const double seconds = std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::steady_clock::now() - started)
                               .count() /
                           1e6;
    if (options_.observe) {
      options_.observe(RequestRecord{listener.name, request, response.status, body.received(),
                                     sent == UINT64_MAX ? 0 : sent, seconds});
    }
    if (access_log_) {
      const double ms = seconds * 1000;
      char line[1024];
      std::snprintf(line, sizeof line, "%s %s %s \"%s %.300s\" %d %llu %.1fms rid=%s",
                    FormatIso8601(clock_.NowMillis()).c_str(), listener.name.c_str(),
                    remote.c_str(), request.method.c_str(), request.path.c_str(), response.status,
                    static_cast<unsigned long long>(sent), ms, request.request_id.c_str());
      access_log_(line);
    }
    return keep_alive && sent != UINT64_MAX;
  }

  static bool EqualsIgnoreCaseAscii(const std::string& a, const char* b) {
    return strcasecmp(a.c_str(), b) == 0;
  }

  // Returns the body bytes sent, or UINT64_MAX when the connection failed.
  uint64_t WriteResponse(FdStream& stream, const Request& request, Response& response,
                         bool keep_alive) {
    bool head = request.method == "HEAD";
    bool no_body = StatusHasNoBody(response.status);
    uint64_t length = response.stream ? response.stream_length : response.BufferedLength();
    if (head && response.head_length) length = *response.head_length;
    std::string out;
    out.reserve(512);
    out += "HTTP/1.1 ";
    out += std::to_string(response.status);
    out += ' ';
    out += std::string(bhttp::obsolete_reason(static_cast<bhttp::status>(response.status)));
    out += "\r\n";
    for (const auto& [k, v] : response.headers.entries()) {
      out += k;
      out += ": ";
      out += v;
      out += "\r\n";
    }
    if (!no_body) {
      out += "Content-Length: ";
      out += std::to_string(length);
      out += "\r\n";
    }
    out += "x-request-id: ";
    out += request.request_id;
    out += "\r\n";
    if (!keep_alive) out += "Connection: close\r\n";
    out += "\r\n";
    bool send_body = !head && !no_body;
    if (send_body && !response.stream) {
      std::string_view shared = response.body_shared ? *response.body_shared : std::string_view();
      if (!stream.WriteAll({out, response.body, shared, response.body_tail})) return UINT64_MAX;
      return length;
    }
    if (!send_body || length == 0) return stream.WriteAll(out.data(), out.size()) ? 0 : UINT64_MAX;
    // Slice by slice as the source lends them, the first in the same send as the head.
    const std::string* head_pending = &out;
    uint64_t total = 0;
    while (total < length) {
      auto slice = response.stream->Next(
          static_cast<size_t>(std::min<uint64_t>(length - total, kWriteChunk)));
      if (!slice || slice->empty()) return UINT64_MAX;  // cannot finish the announced length
      if (!SendWithHead(stream, head_pending, slice->data(), slice->size())) return UINT64_MAX;
      total += slice->size();
    }
    return total;
  }

  // Writes the pending head (then clears it) and `size` bytes of body in one send.
  static bool SendWithHead(FdStream& stream, const std::string*& head, const char* data,
                           size_t size) {
    bool ok =
        head ? stream.WriteAll({*head, std::string_view(data, size)}) : stream.WriteAll(data, size);
    head = nullptr;
    return ok;
  }

  AccessLog access_log_;
  ServerOptions options_;
  SystemClock clock_;
  SystemRandom random_;
  std::string request_prefix_;
  std::atomic<uint64_t> request_counter_{0};
  asio::io_context io_;
  std::vector<std::shared_ptr<Listener>> listeners_;
  std::map<std::string, std::string> bound_;
  std::vector<std::thread> loop_threads_;

  // Connection counts and the listeners' `returned` lists, under mu_.
  std::mutex mu_;
  std::condition_variable drained_;
  bool stopping_ = false;
  int open_connections_ = 0;
  AddressCounter addresses_;

  // The request thread pool, under pool_mu_.
  std::mutex pool_mu_;
  std::condition_variable pool_cv_;
  std::condition_variable pool_drained_;
  std::deque<Connection*> jobs_;
  int pool_threads_ = 0;
  std::atomic<int> queued_{0};  // jobs_.size(), read by lingering threads without the lock
  int pool_idle_ = 0;
  bool pool_stopping_ = false;
};

// Fds kept back from client connections for object files, SQLite, pipes and the like.
constexpr int kReservedFds = 256;

// So that max_connections fds can be open: raises the soft limit to the hard limit, and
// returns the connection count the limit allows. Accepting at EMFILE would spin the
// event loop (the listener stays readable), so the cap stays below the limit instead.
int ConnectionsTheFdLimitAllows() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return std::numeric_limits<int>::max();
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) ::getrlimit(RLIMIT_NOFILE, &limit);
  }
  if (limit.rlim_cur == RLIM_INFINITY) return std::numeric_limits<int>::max();
  auto allowed = static_cast<int64_t>(limit.rlim_cur) - kReservedFds;
  return static_cast<int>(std::clamp<int64_t>(allowed, 64, std::numeric_limits<int>::max()));
}

}  // namespace

Result<std::unique_ptr<Server>> Server::Start(std::vector<ListenerOptions> listeners,
                                              AccessLog access_log, ServerOptions options) {
  options.max_connections = std::min(options.max_connections, ConnectionsTheFdLimitAllows());
  auto server = std::make_unique<ServerImpl>(std::move(access_log), options);
  for (auto& listener : listeners) {
    TM_TRY(server->Listen(std::move(listener)));
  }
  server->StartAccepting();
  return std::unique_ptr<Server>(std::move(server));
}

}  // namespace tablemere::http
