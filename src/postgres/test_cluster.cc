#include "postgres/test_cluster.h"

#include <glob.h>
#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>

#include "postgres/postgres.h"

namespace tablemere::postgres {

namespace {

// The directory of Debian's server binaries (the newest installed major version).
Result<std::string> ServerBin() {
  glob_t found{};
  std::string best;
  if (::glob("/usr/lib/postgresql/*/bin/initdb", 0, nullptr, &found) == 0) {
    for (size_t i = 0; i < found.gl_pathc; i++) best = found.gl_pathv[i];
  }
  ::globfree(&found);
  if (best.empty()) {
    return Fail(ErrorCode::kUnavailable,
                "no PostgreSQL server binaries under /usr/lib/postgresql (apt install postgresql)");
  }
  return std::filesystem::path(best).parent_path().string();
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

}  // namespace

Result<void> TestCluster::Run(const std::string& command) const {
  std::string as = ::geteuid() == 0 ? "runuser -u postgres -- " : "";
  std::string line = as + command + " >>" + Quote(dir_ + "/setup.log") + " 2>&1";
  if (std::system(line.c_str()) != 0) {
    return Fail(ErrorCode::kUnavailable,
                "test cluster: `" + command + "` failed (see " + dir_ + "/setup.log)");
  }
  return {};
}

Result<std::unique_ptr<TestCluster>> TestCluster::Start() {
  TM_ASSIGN(std::string bin, ServerBin());
  std::string tmpl = (std::filesystem::temp_directory_path() / "tm-pg-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) return Fail(ErrorCode::kUnavailable, "mkdtemp failed");
  if (::geteuid() == 0) {
    struct passwd* pg = ::getpwnam("postgres");
    if (pg == nullptr || ::chown(tmpl.c_str(), pg->pw_uid, pg->pw_gid) != 0) {
      std::filesystem::remove_all(tmpl);
      return Fail(ErrorCode::kUnavailable, "test cluster: no postgres user to run the server as");
    }
  }
  std::unique_ptr<TestCluster> cluster(new TestCluster(tmpl, bin));
  TM_TRY(cluster->Run(Quote(bin + "/initdb") + " -U postgres --auth=trust -E UTF8 --locale=C -D " +
                      Quote(tmpl + "/data")));
  TM_TRY(cluster->Restart());
  return cluster;
}

Result<void> TestCluster::Restart() {
  (void)Run(Quote(bin_ + "/pg_ctl") + " -D " + Quote(dir_ + "/data") + " -m immediate stop");
  // fsync stays on: tests about durability need it, and the cluster is small.
  return Run(Quote(bin_ + "/pg_ctl") + " -D " + Quote(dir_ + "/data") + " -l " +
             Quote(dir_ + "/server.log") + " -w -o \"-c listen_addresses='' -k " + dir_ +
             " -c max_connections=200\" start");
}

TestCluster::~TestCluster() {
  (void)Run(Quote(bin_ + "/pg_ctl") + " -D " + Quote(dir_ + "/data") + " -m immediate stop");
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string TestCluster::Conninfo(const std::string& db) const {
  return "host=" + dir_ + " user=postgres dbname=" + db;
}

Result<std::string> TestCluster::CreateDatabase() {
  TM_ASSIGN(auto admin, Connection::Open(Conninfo("postgres"), 30000));
  std::string name = "t" + std::to_string(++databases_);
  TM_TRY(admin->Exec("CREATE DATABASE " + name + " TEMPLATE template0"));
  return name;
}

}  // namespace tablemere::postgres
