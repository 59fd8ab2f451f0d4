#include "client/settings.h"

#include <fcntl.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/files.h"

namespace tablemere::client {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string Home() { return Env("HOME"); }

std::string TrimSlash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

std::optional<nlohmann::json> ReadJsonFile(const std::string& path) {
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

// Files to read keys from, in order: the one written to, then the pre-rename ones.
std::vector<std::string> ReadPaths() {
  std::vector<std::string> paths = {CredentialsPath()};
  if (!Env("AGENTLAKE_CREDENTIALS").empty()) paths.push_back(Env("AGENTLAKE_CREDENTIALS"));
  if (!Home().empty()) paths.push_back(Home() + "/.config/agentlake/credentials.json");
  return paths;
}

Error IoError(const std::string& what, const std::string& path) {
  return Error{ErrorCode::kInternal, what + " " + path + ": " + std::strerror(errno), {}}.With(
      "code", "credentials_file");
}

Error InvalidCredentials(const std::string& path, const std::string& what) {
  return Error{ErrorCode::kInvalidInput,
               "The credentials file " + path + " " + what + "; nothing was written",
               {}}
      .With("code", "credentials_file_invalid")
      .With("remedy", "Fix it, or move it aside (mv '" + path + "' '" + path +
                          ".broken') and run this again; the keys it holds stay in the moved "
                          "file");
}

// Creates `dir` (and its parents) when missing; a directory created here is made 0700.
Result<void> EnsurePrivateDir(const std::filesystem::path& dir, const std::string& for_path) {
  if (dir.empty()) return {};
  std::error_code ec;
  bool created = std::filesystem::create_directories(dir, ec);
  if (ec) {
    errno = ec.value();
    return Fail(IoError("Cannot create the directory of", for_path));
  }
  if (created) ::chmod(dir.c_str(), 0700);
  return {};
}

}  // namespace

std::string ResolveUrl(const std::string& flag) {
  if (!flag.empty()) return TrimSlash(flag);
  if (!Env("TABLEMERE_URL").empty()) return TrimSlash(Env("TABLEMERE_URL"));
  if (!Env("AGENTLAKE_URL").empty()) return TrimSlash(Env("AGENTLAKE_URL"));
  return kDefaultUrl;
}

std::string ResolveKey(const std::string& flag, const std::string& url) {
  if (!flag.empty()) return flag;
  if (!Env("TABLEMERE_API_KEY").empty()) return Env("TABLEMERE_API_KEY");
  if (!Env("AGENTLAKE_API_KEY").empty()) return Env("AGENTLAKE_API_KEY");
  auto entry = SavedEntry(url);
  if (entry && entry->contains("api_key") && (*entry)["api_key"].is_string()) {
    return (*entry)["api_key"].get<std::string>();
  }
  return "";
}

std::string CredentialsPath() {
  if (!Env("TABLEMERE_CREDENTIALS").empty()) return Env("TABLEMERE_CREDENTIALS");
  return Home() + "/.config/tablemere/credentials.json";
}

std::optional<nlohmann::json> SavedEntry(const std::string& url) {
  const std::string key = TrimSlash(url);
  for (const auto& path : ReadPaths()) {
    auto file = ReadJsonFile(path);
    if (file && file->contains(key) && (*file)[key].is_object()) return (*file)[key];
  }
  return std::nullopt;
}

Result<nlohmann::json> LoadCredentials() {
  const std::string path = CredentialsPath();
  auto text = ReadWholeFile(path);
  if (!text) {
    if (text.error().code == ErrorCode::kNotFound) return nlohmann::json::object();
    return Fail(InvalidCredentials(path, "cannot be read: " + text.error().Detail("reason")));
  }
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Fail(InvalidCredentials(path, "is not a JSON object of keys by API URL"));
  }
  return j;
}

Result<std::string> SaveEntry(const std::string& url, const nlohmann::json& entry) {
  const std::string path = CredentialsPath();
  // Read first: a file that exists but is unreadable or corrupt is refused, and nothing
  // (not even its directory) is changed.
  TM_ASSIGN(nlohmann::json file, LoadCredentials());
  TM_TRY(EnsurePrivateDir(std::filesystem::path(path).parent_path(), path));
  file[TrimSlash(url)] = entry;
  auto written = WriteFileAtomically(path, file.dump(2) + "\n", 0600);
  if (!written) {
    return Fail(
        Error{ErrorCode::kInternal, written.error().message, {}}.With("code", "credentials_file"));
  }
  return path;
}

Result<std::string> SaveKeyFile(const std::string& key) {
  const std::filesystem::path creds(CredentialsPath());
  TM_TRY(EnsurePrivateDir(creds.parent_path(), creds.string()));
  const std::filesystem::path dir = creds.parent_path() / "mcp-keys";
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Fail(IoError("Cannot create", dir.string()));
  }
  unsigned char digest[SHA256_DIGEST_LENGTH];
  ::SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest);
  static const char* kHex = "0123456789abcdef";
  std::string name;
  for (int i = 0; i < 16; i++) {
    name += kHex[digest[i] >> 4];
    name += kHex[digest[i] & 15];
  }
  const std::string path = (dir / (name + ".key")).string();
  auto written = WriteFileAtomically(path, key + "\n", 0600);
  if (!written) {
    return Fail(Error{ErrorCode::kInternal, written.error().message, {}}.With("code", "key_file"));
  }
  return path;
}

Result<std::string> ReadKeyFile(const std::string& path) {
  auto text = ReadWholeFile(path);
  if (!text) {
    return Fail(Error{ErrorCode::kNotFound, "Cannot read the key file " + path, {}}.With(
        "code", "key_file"));
  }
  const size_t start = text->find_first_not_of(" \t\r\n");
  if (start == std::string::npos) {
    return Fail(Error{ErrorCode::kInvalidInput, "The key file " + path + " is empty", {}}.With(
        "code", "key_file"));
  }
  return text->substr(start, text->find_last_not_of(" \t\r\n") - start + 1);
}

std::string MaskKey(const std::string& key) {
  // The key id ends at the first underscore after the prefix; the secret may hold more.
  constexpr std::string_view kPrefix = "al_live_";
  size_t end = key.starts_with(kPrefix) ? key.find('_', kPrefix.size()) : std::string::npos;
  if (end == std::string::npos) return "********";
  return key.substr(0, end + 1) + "********";
}

}  // namespace tablemere::client
