// Small files written whole and atomically: secrets, credentials, configuration.
#pragma once

#include <string>

#include "common/result.h"

namespace tablemere {

// Writes `text` to `path` so that a crash leaves the old file or the new one, never a
// part: a temporary file beside it created with `mode` (e.g. 0600), written, fsynced,
// renamed over `path`, then the directory fsynced. Every step's failure is reported as
// kUnavailable naming the file (never its contents).
Result<void> WriteFileAtomically(const std::string& path, const std::string& text, int mode);

// The whole file; kNotFound when it cannot be opened, kUnavailable when a read fails.
Result<std::string> ReadWholeFile(const std::string& path);

}  // namespace tablemere
