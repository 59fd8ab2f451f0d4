// S3Http against a scripted HTTP endpoint on loopback (a plain socket server in this
// file): which calls are retried, what a stalled answer becomes, and that a pulled body
// abandoned before its end never completes the request.

#include "objectstore/s3_http.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace tablemere::objectstore {
namespace {

// Accepts connections one at a time; for each request reads the head (and a body of
// Content-Length bytes, up to what arrives) and lets `answer` reply. Counts requests.
class ScriptedEndpoint {
 public:
  // `answer(n, received)` returns the raw answer to request n (0-based), or "" to hang up
  // without one, or "stall" to keep the connection silent until the test ends.
  explicit ScriptedEndpoint(std::function<std::string(int, const std::string&)> answer)
      : answer_(std::move(answer)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedEndpoint() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_; }
  // Body bytes received for each request, in order.
  std::vector<size_t> body_bytes() const { return body_bytes_; }

 private:
  void Serve() {
    while (!stop_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      timeval tv{0, 200 * 1000};
      ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      std::string in;
      bool open = true;
      while (open && !stop_) {
        size_t head_end;
        while ((head_end = in.find("\r\n\r\n")) == std::string::npos && !stop_) {
          if (!Receive(c, in, open) && !open) break;
        }
        if (!open || stop_ || head_end == std::string::npos) break;
        size_t length = 0;
        if (auto at = in.find("Content-Length: "); at != std::string::npos && at < head_end) {
          length = std::stoul(in.substr(at + 16));
        }
        const std::string head = in.substr(0, head_end + 4);
        in.erase(0, head_end + 4);
        // The body: what arrives within a moment of going quiet (a client that abandons
        // its body sends less than Content-Length, then closes).
        auto quiet_since = std::chrono::steady_clock::now();
        while (in.size() < length && open && !stop_) {
          size_t before = in.size();
          Receive(c, in, open);
          if (in.size() != before) quiet_since = std::chrono::steady_clock::now();
          if (std::chrono::steady_clock::now() - quiet_since > std::chrono::seconds(2)) break;
        }
        const size_t got = std::min(in.size(), length);
        body_bytes_.push_back(got);
        in.erase(0, got);
        const std::string answer = answer_(requests_++, head);
        if (answer == "stall") {
          while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(20));
          break;
        }
        if (answer.empty() || got < length) break;
        ::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
      }
      ::close(c);
    }
  }
  // False on timeout (nothing new) or end; `open` false when the peer closed.
  static bool Receive(int c, std::string& in, bool& open) {
    char buf[65536];
    ssize_t n = ::recv(c, buf, sizeof buf, 0);
    if (n > 0) {
      in.append(buf, static_cast<size_t>(n));
      return true;
    }
    if (n == 0) open = false;
    return false;
  }

  std::function<std::string(int, const std::string&)> answer_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::vector<size_t> body_bytes_;
  std::thread thread_;
};

std::string Answer(int status, const std::string& body = "") {
  return "HTTP/1.1 " + std::to_string(status) +
         " X\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

S3Endpoint EndpointAt(const std::string& url) {
  S3Endpoint e;
  e.endpoint = url;
  e.region = "us-east-1";
  e.access_key = "ak";
  e.secret_key = "sk";
  e.connect_timeout_ms = 2000;
  e.request_timeout_ms = 10000;
  e.stall_seconds = 1;
  e.retries = 2;
  return e;
}

S3Call CallOf(const std::string& method, bool idempotent) {
  S3Call call;
  call.method = method;
  call.bucket = "b";
  call.key = "k";
  call.idempotent = idempotent;
  return call;
}

TEST(S3Http, IdempotentCallsAreRetriedOnServerErrorsAndOthersAreNot) {
  ScriptedEndpoint endpoint([](int n, const std::string&) {
    return n < 2 ? Answer(503, "<Error><Code>SlowDown</Code></Error>") : Answer(200, "ok");
  });
  S3Http http(EndpointAt(endpoint.url()));
  auto read = http.Send(CallOf("GET", true));
  ASSERT_TRUE(read.has_value()) << read.error().message;
  EXPECT_EQ(read->status, 200);  // two 503s, then the answer
  EXPECT_EQ(read->body, "ok");
  EXPECT_EQ(endpoint.requests(), 3);

  ScriptedEndpoint refusing([](int, const std::string&) { return Answer(500); });
  S3Http http2(EndpointAt(refusing.url()));
  S3Call put = CallOf("PUT", false);
  put.body = "payload";
  auto wrote = http2.Send(put);
  ASSERT_TRUE(wrote.has_value());
  EXPECT_EQ(wrote->status, 500);
  EXPECT_EQ(refusing.requests(), 1) << "a write was sent twice";
  auto read2 = http2.Send(CallOf("GET", true));
  ASSERT_TRUE(read2.has_value());
  EXPECT_EQ(read2->status, 500);
  EXPECT_EQ(refusing.requests(), 1 + 3) << "a read is tried once and retried twice";
}

TEST(S3Http, AStalledAnswerIsUnavailableWithinTheStallLimit) {
  ScriptedEndpoint silent([](int, const std::string&) { return std::string("stall"); });
  S3Http http(EndpointAt(silent.url()));
  S3Call put = CallOf("PUT", false);
  put.body = "payload";
  const auto started = std::chrono::steady_clock::now();
  auto answer = http.Send(put);
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().code, ErrorCode::kUnavailable);
  EXPECT_FALSE(answer.error().Detail("backend").empty()) << "not marked as the backend's";
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_LT(took, std::chrono::seconds(4));  // the 1 s limit, a progress tick, slack
  std::printf(
      "stalled call failed after %lld ms\n",
      static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
  EXPECT_EQ(silent.requests(), 1);
}

TEST(S3Http, AnAbandonedPulledBodyNeverCompletesTheRequest) {
  ScriptedEndpoint endpoint([](int, const std::string&) { return Answer(200); });
  S3Http http(EndpointAt(endpoint.url()));
  S3Call put = CallOf("PUT", true);  // even marked idempotent, a pulled body is sent once
  put.pull_size = 100000;
  size_t handed = 0;
  put.pull = [&](char* out, size_t size) -> long {
    if (handed >= 60000) return -1;  // abandoned: the rest never comes
    size_t n = std::min<size_t>(size, 60000 - handed);
    std::memset(out, 'x', n);
    handed += n;
    return static_cast<long>(n);
  };
  auto answer = http.Send(put);
  EXPECT_FALSE(answer.has_value() && answer->status == 200) << "the request completed";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_LE(endpoint.requests(), 1);
  for (size_t got : endpoint.body_bytes()) EXPECT_LT(got, 100000u);
}

}  // namespace
}  // namespace tablemere::objectstore
