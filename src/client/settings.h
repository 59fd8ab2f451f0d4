// Where a client finds its API URL and key: flags, then the environment (TABLEMERE_*,
// with the pre-rename AGENTLAKE_* names read as fallbacks), then the credentials file,
// keyed by API URL and written with mode 0600. The old ~/.config/agentlake file is read,
// never written.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/result.h"

namespace tablemere::client {

// The local stack's API: what a self-hosted `tablemere-server` listens on by default.
inline constexpr const char* kDefaultUrl = "http://localhost:8080";

// `flag` if set, else TABLEMERE_URL, AGENTLAKE_URL, kDefaultUrl; without a trailing slash.
std::string ResolveUrl(const std::string& flag);
// `flag` if set, else TABLEMERE_API_KEY, AGENTLAKE_API_KEY, else the key saved for `url`
// ("" when none).
std::string ResolveKey(const std::string& flag, const std::string& url);

// The file keys are written to: TABLEMERE_CREDENTIALS or ~/.config/tablemere/credentials.json.
std::string CredentialsPath();
// The entry saved for `url` ({"api_key", …}), from the first file that has one.
std::optional<nlohmann::json> SavedEntry(const std::string& url);
// The credentials file's content, to be added to: {} when there is no file yet; an
// error (detail code credentials_file_invalid, naming the file, with a remedy) when it
// exists but cannot be read or is not a JSON object, for it holds other URLs' keys that
// writing over it would lose. A caller about to mint a key checks this first.
Result<nlohmann::json> LoadCredentials();
// Stores `entry` under `url` in CredentialsPath() (other URLs kept), through a temporary
// file renamed into place, mode 0600, its directory 0700. Returns the path. Refuses with
// LoadCredentials' error, changing nothing, when the existing file is unreadable or corrupt.
Result<std::string> SaveEntry(const std::string& url, const nlohmann::json& entry);

// Writes `key` alone to a private file beside the credentials file (mcp-keys/, 0700; the
// file 0600, named by a hash of the key), for a configuration that must name the key
// without holding it (TABLEMERE_API_KEY_FILE). Returns the path.
Result<std::string> SaveKeyFile(const std::string& key);
// The key in a file SaveKeyFile wrote (or any file holding just a key), whitespace trimmed.
Result<std::string> ReadKeyFile(const std::string& path);

// "al_live_<id>_********": a key with its secret part masked, for display.
std::string MaskKey(const std::string& key);

}  // namespace tablemere::client
