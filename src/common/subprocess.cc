#include "common/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace tablemere {

Result<int> RunProcess(const std::vector<std::string>& argv, const ProcessLimits& limits) {
  if (argv.empty()) return Fail(ErrorCode::kInternal, "no program to run");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string err = limits.stderr_path.empty() ? "/dev/null" : limits.stderr_path;
  // Opened before the fork: between fork and exec only async-signal-safe calls are made
  // (the server has many threads).
  int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (err_fd < 0) {
    return Fail(ErrorCode::kUnavailable, "cannot open " + err + ": " + std::strerror(errno));
  }
  int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(err_fd);
    if (null_fd >= 0) ::close(null_fd);
    return Fail(ErrorCode::kUnavailable, std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    if (null_fd >= 0) {
      ::dup2(null_fd, 0);
      ::dup2(null_fd, 1);
    }
    ::dup2(err_fd, 2);
    ::close_range(3, ~0U, 0);
    // The child dies with the server: a killed server leaves no worker running on.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) _exit(127);
    ::setpriority(PRIO_PROCESS, 0, limits.niceness);
    ::execv(args[0], args.data());
    _exit(127);
  }
  ::close(err_fd);
  if (null_fd >= 0) ::close(null_fd);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(limits.timeout_ms);
  auto delay = std::chrono::milliseconds(2);
  while (true) {
    int status = 0;
    pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid) {
      if (WIFEXITED(status)) {
        if (WEXITSTATUS(status) == 127) {
          return Fail(ErrorCode::kUnavailable, "cannot run " + argv[0]);
        }
        return WEXITSTATUS(status);
      }
      return Fail(ErrorCode::kUnavailable,
                  argv[0] + " was killed by signal " + std::to_string(WTERMSIG(status)));
    }
    if (got < 0 && errno != EINTR) {
      return Fail(ErrorCode::kUnavailable, std::string("waitpid: ") + std::strerror(errno));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return Fail(ErrorCode::kUnavailable, argv[0] + " ran out of time and was killed");
    }
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, std::chrono::milliseconds(100));
  }
}

}  // namespace tablemere
