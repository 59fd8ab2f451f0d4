// tablemere-server: parse configuration, start the app, wait for SIGTERM/SIGINT, shut
// down gracefully.
#include <csignal>
#include <cstdio>

#include <string>

#include "server/app.h"
#include "server/backup_command.h"

int main(int argc, char** argv) {
  using namespace tablemere;
  if (argc >= 2 && std::string(argv[1]) == "backup") return server::BackupCommand(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "restore") return server::RestoreCommand(argc, argv);
  server::Config config;
  std::string output;
  auto parsed = server::ParseConfig(argc, argv, config, &output);
  if (!parsed) {
    std::fprintf(stderr, "tablemere-server: %s\n", parsed.error().message.c_str());
    return 2;
  }
  if (*parsed == server::ParseOutcome::kExitOk) {
    std::fputs(output.c_str(), stdout);
    return 0;
  }
  // Block the shutdown signals in every thread; main waits for them below.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  auto app = server::App::Start(config);
  if (!app) {
    std::fprintf(stderr, "tablemere-server: %s\n", app.error().message.c_str());
    return 1;
  }
  int received = 0;
  sigwait(&signals, &received);
  std::fprintf(stderr, "tablemere-server: signal %d, shutting down\n", received);
  (*app)->Shutdown();
  return 0;
}
