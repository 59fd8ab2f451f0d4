// `tablemere-server backup` and `tablemere-server restore`: the operator's commands over
// server/backup.h. A backup is taken by the running server (it alone can hold the
// metastore still for a moment), asked over its API with the bootstrap secret; a restore
// prepares a data directory while no server runs on it.
#include "server/backup_command.h"

#include <curl/curl.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "server/backup.h"

namespace tablemere::server {
namespace {

// The value after `--name` (or in `--name=value`); "" when absent.
std::string Flag(int argc, char** argv, const std::string& name) {
  for (int i = 2; i < argc; i++) {
    std::string arg = argv[i];
    if (arg == "--" + name && i + 1 < argc) return argv[i + 1];
    if (arg.starts_with("--" + name + "=")) return arg.substr(name.size() + 3);
  }
  return "";
}

size_t Collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

}  // namespace

int BackupCommand(int argc, char** argv) {
  std::string to = Flag(argc, argv, "to");
  std::string api = Flag(argc, argv, "api-url");
  if (api.empty()) api = "http://127.0.0.1:8080";
  const char* secret = std::getenv("TABLEMERE_BOOTSTRAP_SECRET");
  if (to.empty() || secret == nullptr || *secret == '\0') {
    std::fprintf(stderr,
                 "usage: TABLEMERE_BOOTSTRAP_SECRET=… tablemere-server backup --to /new/dir "
                 "[--api-url http://127.0.0.1:8080]\n"
                 "  asks the running server to write a backup of its data directory into a new "
                 "directory (a path on the server's machine)\n");
    return 2;
  }
  CURL* curl = curl_easy_init();
  std::string body = nlohmann::json{{"to", to}}.dump();
  std::string answer;
  std::string header = std::string("X-Bootstrap-Secret: ") + secret;
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  headers = curl_slist_append(headers, header.c_str());
  std::string url = api + "/internal/backup";
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
  CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) {
    std::fprintf(stderr, "tablemere-server backup: cannot reach %s: %s\n", api.c_str(),
                 curl_easy_strerror(rc));
    return 1;
  }
  std::fprintf(status == 200 ? stdout : stderr, "%s\n", answer.c_str());
  return status == 200 ? 0 : 1;
}

int RestoreCommand(int argc, char** argv) {
  std::string from = Flag(argc, argv, "from");
  std::string data_dir = Flag(argc, argv, "data-dir");
  if (from.empty() || data_dir.empty()) {
    std::fprintf(stderr,
                 "usage: tablemere-server restore --from /backup/dir --data-dir /new/data/dir\n"
                 "  makes a new data directory from a backup; then start the server on it\n");
    return 2;
  }
  auto restored = Restore(from, data_dir);
  if (!restored) {
    std::fprintf(stderr, "tablemere-server restore: %s\n", restored.error().message.c_str());
    return 1;
  }
  std::printf("restored %s into %s; start the server with --data-dir %s\n", from.c_str(),
              data_dir.c_str(), data_dir.c_str());
  return 0;
}

}  // namespace tablemere::server
