// A throwaway PostgreSQL cluster for tests: initdb into a temporary directory, started on
// a Unix socket in that directory only (no TCP port to collide on), stopped and removed
// at the end. Uses Debian's server binaries (postgresql package); as root it runs them as
// the postgres user, since PostgreSQL refuses to run as root.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"

namespace tablemere::postgres {

class TestCluster {
 public:
  static Result<std::unique_ptr<TestCluster>> Start();
  ~TestCluster();
  TestCluster(const TestCluster&) = delete;
  TestCluster& operator=(const TestCluster&) = delete;

  // A libpq conninfo for database `db` of this cluster.
  std::string Conninfo(const std::string& db) const;
  // A new, empty database; returns its name.
  Result<std::string> CreateDatabase();
  // Stops the server abruptly (as a crash would) and starts it again on the same data.
  Result<void> Restart();

 private:
  explicit TestCluster(std::string dir, std::string bin)
      : dir_(std::move(dir)), bin_(std::move(bin)) {}
  Result<void> Run(const std::string& command) const;
  std::string dir_;
  std::string bin_;
  int databases_ = 0;
};

}  // namespace tablemere::postgres
