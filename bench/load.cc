// tm-load: the load generator and reference measurements behind bench/run.py.
// Hand-written blocking HTTP/1.1 client: a benchmark must not be limited by its client,
// and none of the packaged HTTP clients are both this lean and synchronous.
//
//   tm-load ref-write DIR BYTES          sequential write + fdatasync, MB/s
//   tm-load ref-fsync DIR SECONDS THREADS 4 KiB write+fdatasync ops/s
//   tm-load ref-md5 BYTES                 MD5 rate, MB/s
//   tm-load ref-loopback BYTES            TCP over 127.0.0.1, MB/s
//   tm-load http METHOD URL CONCURRENCY SECONDS [options]  ops/s, p50, p99 (ms)
//     --body-bytes N | --body-file F, --s3 AK SK, --bearer TOKEN, --unique-keys
//   tm-load big-put URL BYTES AK SK / big-get URL AK SK   one large object, MB/s
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/crypto.h"
#include "common/strings.h"
#include "storage/sigv4.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace tablemere;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct Url {
  std::string host;
  int port = 80;
  std::string target;  // path + query
};

Url ParseUrl(const std::string& url) {
  Url u;
  std::string rest = url.substr(url.find("://") + 3);
  size_t slash = rest.find('/');
  std::string hostport = rest.substr(0, slash);
  u.target = slash == std::string::npos ? "/" : rest.substr(slash);
  size_t colon = hostport.rfind(':');
  u.host = hostport.substr(0, colon);
  u.port = std::stoi(hostport.substr(colon + 1));
  return u;
}

int Connect(const Url& u) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(u.port));
  inet_pton(AF_INET, u.host.c_str(), &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::perror("connect");
    std::exit(1);
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Reads one response; returns the status (0 on failure) and discards or counts the body.
struct Reader {
  int fd;
  std::string buf;
  int ReadResponse(uint64_t* body_bytes) {
    size_t end;
    while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return 0;
    }
    std::string head = buf.substr(0, end);
    buf.erase(0, end + 4);
    int status = std::atoi(head.c_str() + 9);
    uint64_t length = 0;
    std::string lower = ToLower(head);
    size_t cl = lower.find("\r\ncontent-length:");
    if (cl != std::string::npos) length = std::strtoull(head.c_str() + cl + 17, nullptr, 10);
    uint64_t got = std::min<uint64_t>(length, buf.size());
    buf.erase(0, got);
    static thread_local std::vector<char> sink(1 << 20);
    while (got < length) {
      ssize_t r = ::recv(fd, sink.data(), std::min<uint64_t>(sink.size(), length - got), 0);
      if (r <= 0) return 0;
      got += static_cast<uint64_t>(r);
    }
    if (body_bytes) *body_bytes = length;
    return status;
  }
  bool Fill() {
    char tmp[65536];
    ssize_t r = ::recv(fd, tmp, sizeof tmp, 0);
    if (r <= 0) return false;
    buf.append(tmp, static_cast<size_t>(r));
    return true;
  }
};

struct Auth {
  std::string access_key, secret, bearer;
};

// Builds a request head, signing with SigV4 (UNSIGNED-PAYLOAD) when S3 keys are given.
std::string Head(const std::string& method, const Url& u, const std::string& target,
                 uint64_t length, const Auth& auth, const std::string& content_type) {
  std::string host = u.host + ":" + std::to_string(u.port);
  std::vector<std::pair<std::string, std::string>> headers = {{"host", host}};
  std::string out = method + " " + target + " HTTP/1.1\r\nHost: " + host + "\r\n";
  if (method == "PUT" || method == "POST")
    out += "Content-Length: " + std::to_string(length) + "\r\n";
  if (!content_type.empty()) out += "Content-Type: " + content_type + "\r\n";
  if (!auth.bearer.empty()) out += "Authorization: Bearer " + auth.bearer + "\r\n";
  if (!auth.access_key.empty()) {
    std::string amz_date = FormatAmzDate(SystemClock().NowMillis());
    headers.push_back({"x-amz-content-sha256", "UNSIGNED-PAYLOAD"});
    headers.push_back({"x-amz-date", amz_date});
    size_t q = target.find('?');
    storage::SignedRequest req{method, target.substr(0, q),
                               q == std::string::npos ? "" : target.substr(q + 1), headers};
    storage::ParsedAuth pa;
    pa.access_key = auth.access_key;
    pa.date = amz_date.substr(0, 8);
    pa.region = "us-east-1";
    pa.service = "s3";
    pa.amz_date = amz_date;
    pa.signed_headers = {"host", "x-amz-content-sha256", "x-amz-date"};
    pa.payload_hash = "UNSIGNED-PAYLOAD";
    std::string canonical = storage::CanonicalRequest(req, pa).value();
    std::string sts = storage::StringToSign(amz_date, storage::Scope(pa), canonical);
    std::string key = storage::SigningKey(auth.secret, pa.date, pa.region, pa.service);
    std::string sig = crypto::HexEncode(crypto::HmacSha256(key, sts));
    out += "x-amz-content-sha256: UNSIGNED-PAYLOAD\r\nx-amz-date: " + amz_date +
           "\r\nAuthorization: AWS4-HMAC-SHA256 Credential=" + auth.access_key + "/" +
           storage::Scope(pa) +
           ", SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=" + sig + "\r\n";
  }
  return out + "\r\n";
}

int RefWrite(const std::string& dir, uint64_t bytes) {
  std::string path = dir + "/tm-load-ref.bin";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char> block(1 << 20, 'x');
  auto t0 = Clock::now();
  for (uint64_t done = 0; done < bytes; done += block.size()) {
    if (::write(fd, block.data(), block.size()) < 0) return 1;
  }
  ::fdatasync(fd);
  auto t1 = Clock::now();
  ::close(fd);
  ::unlink(path.c_str());
  std::printf("{\"mb_per_s\": %.1f}\n", bytes / 1e6 / Seconds(t0, t1));
  return 0;
}

int RefFsync(const std::string& dir, double seconds, int threads) {
  std::atomic<uint64_t> ops{0};
  auto t0 = Clock::now();
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; t++) {
    ts.emplace_back([&, t] {
      std::vector<char> block(4096, 'y');
      int n = 0;
      while (Seconds(t0, Clock::now()) < seconds) {
        std::string path = dir + "/tm-load-fsync-" + std::to_string(t) + "-" + std::to_string(n++);
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (::write(fd, block.data(), block.size()) < 0) break;
        ::fdatasync(fd);
        ::close(fd);
        ::unlink(path.c_str());
        ops++;
      }
    });
  }
  for (auto& t : ts) t.join();
  std::printf("{\"ops_per_s\": %.1f}\n", ops / Seconds(t0, Clock::now()));
  return 0;
}

int RefMd5(uint64_t bytes) {
  std::vector<char> block(1 << 20, 'm');
  crypto::Digest d(crypto::DigestAlgorithm::kMd5);
  auto t0 = Clock::now();
  for (uint64_t done = 0; done < bytes; done += block.size()) d.Update(block.data(), block.size());
  d.Finish();
  std::printf("{\"mb_per_s\": %.1f}\n", bytes / 1e6 / Seconds(t0, Clock::now()));
  return 0;
}

int RefLoopback(uint64_t bytes) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  ::listen(listener, 1);
  std::thread sender([&] {
    int fd = ::accept(listener, nullptr, nullptr);
    std::vector<char> block(1 << 20, 'l');
    for (uint64_t done = 0; done < bytes; done += block.size())
      WriteAll(fd, block.data(), block.size());
    ::close(fd);
  });
  Url u{"127.0.0.1", ntohs(addr.sin_port), "/"};
  int fd = Connect(u);
  std::vector<char> buf(1 << 20);
  uint64_t got = 0;
  auto t0 = Clock::now();
  while (got < bytes) {
    ssize_t r = ::recv(fd, buf.data(), buf.size(), 0);
    if (r <= 0) break;
    got += static_cast<uint64_t>(r);
  }
  auto t1 = Clock::now();
  sender.join();
  ::close(fd);
  ::close(listener);
  std::printf("{\"mb_per_s\": %.1f}\n", got / 1e6 / Seconds(t0, t1));
  return 0;
}

int BigTransfer(bool put, const std::string& url, uint64_t bytes, const Auth& auth) {
  Url u = ParseUrl(url);
  int fd = Connect(u);
  Reader reader{fd, {}};
  auto t0 = Clock::now();
  std::string head = Head(put ? "PUT" : "GET", u, u.target, bytes, auth, "");
  WriteAll(fd, head.data(), head.size());
  uint64_t body = 0;
  if (put) {
    std::vector<char> block(4 << 20, 'b');
    for (uint64_t done = 0; done < bytes; done += block.size()) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(block.size(), bytes - done));
      if (!WriteAll(fd, block.data(), n)) return 1;
    }
  }
  int status = reader.ReadResponse(&body);
  auto t1 = Clock::now();
  ::close(fd);
  uint64_t moved = put ? bytes : body;
  std::printf("{\"status\": %d, \"mb_per_s\": %.1f}\n", status, moved / 1e6 / Seconds(t0, t1));
  return status / 100 == 2 ? 0 : 1;
}

int HttpLoad(int argc, char** argv) {
  std::string method = argv[2];
  std::string url = argv[3];
  int concurrency = std::atoi(argv[4]);
  double seconds = std::atof(argv[5]);
  Auth auth;
  std::string body;
  bool unique = false;
  std::string content_type;
  for (int i = 6; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--body-bytes")
      body.assign(std::stoull(argv[++i]), 'p');
    else if (a == "--body-file") {
      std::ifstream f(argv[++i]);
      std::stringstream ss;
      ss << f.rdbuf();
      body = ss.str();
      content_type = "application/json";
    } else if (a == "--s3") {
      auth.access_key = argv[++i];
      auth.secret = argv[++i];
    } else if (a == "--bearer")
      auth.bearer = argv[++i];
    else if (a == "--unique-keys")
      unique = true;
  }
  Url u = ParseUrl(url);
  std::mutex mu;
  std::vector<double> latencies;
  std::atomic<uint64_t> errors{0};
  auto t0 = Clock::now();
  std::vector<std::thread> ts;
  for (int w = 0; w < concurrency; w++) {
    ts.emplace_back([&, w] {
      int fd = Connect(u);
      Reader reader{fd, {}};
      std::vector<double> mine;
      uint64_t n = 0;
      while (Seconds(t0, Clock::now()) < seconds) {
        std::string target = u.target;
        size_t p;
        while ((p = target.find("{w}")) != std::string::npos)
          target.replace(p, 3, std::to_string(w));
        if (unique) target += "-" + std::to_string(w) + "-" + std::to_string(n);
        n++;
        auto s = Clock::now();
        std::string head = Head(method, u, target, body.size(), auth, content_type);
        if (!WriteAll(fd, head.data(), head.size()) || !WriteAll(fd, body.data(), body.size()))
          break;
        int status = reader.ReadResponse(nullptr);
        if (status == 0) break;
        if (status / 100 != 2) errors++;
        mine.push_back(Seconds(s, Clock::now()) * 1000);
      }
      ::close(fd);
      std::lock_guard lock(mu);
      latencies.insert(latencies.end(), mine.begin(), mine.end());
    });
  }
  for (auto& t : ts) t.join();
  double elapsed = Seconds(t0, Clock::now());
  std::sort(latencies.begin(), latencies.end());
  auto pct = [&](double q) {
    return latencies.empty() ? 0.0
                             : latencies[std::min(latencies.size() - 1,
                                                  static_cast<size_t>(q * latencies.size()))];
  };
  std::printf(
      "{\"ops\": %zu, \"errors\": %llu, \"ops_per_s\": %.1f, \"p50_ms\": %.3f, \"p99_ms\": %.3f}\n",
      latencies.size(), static_cast<unsigned long long>(errors.load()), latencies.size() / elapsed,
      pct(0.5), pct(0.99));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "see the comment at the top of bench/load.cc\n");
    return 2;
  }
  std::string mode = argv[1];
  if (mode == "ref-write") return RefWrite(argv[2], std::stoull(argv[3]));
  if (mode == "ref-fsync") return RefFsync(argv[2], std::atof(argv[3]), std::atoi(argv[4]));
  if (mode == "ref-md5") return RefMd5(std::stoull(argv[2]));
  if (mode == "ref-loopback") return RefLoopback(std::stoull(argv[2]));
  if (mode == "big-put")
    return BigTransfer(true, argv[2], std::stoull(argv[3]), Auth{argv[4], argv[5], ""});
  if (mode == "big-get") return BigTransfer(false, argv[2], 0, Auth{argv[3], argv[4], ""});
  if (mode == "http" && argc >= 6) return HttpLoad(argc, argv);
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
