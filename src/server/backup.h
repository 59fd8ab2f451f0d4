// Backup and restore of the embedded deployment (SQLite metastore, local-disk objects):
// a backup taken while the server serves holds the metastore and the objects it
// references as of one moment, plus the master key and signing keys, so a restored data
// directory serves the same tables, keys, tokens and credentials. A deployment on
// PostgreSQL and an S3 store is backed up with those systems' own tools (README).
#pragma once

#include <string>

#include "common/clock.h"
#include "common/result.h"
#include "metastore/metastore.h"
#include "objectstore/object_store.h"

namespace tablemere::server {

struct BackupDone {
  std::string dir;
  int64_t at_ms = 0;
  int64_t objects = 0;  // stored objects and upload parts kept
};

// Writes the backup of a running server into `to`, an absolute path that must not exist
// yet. Writes to the metastore wait for the moment both indexes are copied; deletions of
// object bytes wait until the backup holds them. kInvalidInput for a bad `to`,
// kNotImplemented when the objects or the metastore live in another system.
Result<BackupDone> Backup(metastore::Metastore& meta, objectstore::ObjectStore& objects,
                          const std::string& data_dir, const std::string& to, const Clock& clock);

// Makes `data_dir` (absent or empty) a copy of the backup in `from` for a server to start
// on. kInvalidInput when `from` is not a complete backup or `data_dir` holds anything.
Result<void> Restore(const std::string& from, const std::string& data_dir);

}  // namespace tablemere::server
