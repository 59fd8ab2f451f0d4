// The embedded object store: object bytes as files under one directory, and an index
// (SQLite, WAL) that maps (bucket, key) to them and serves listings in byte order.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/clock.h"
#include "objectstore/object_store.h"

namespace tablemere::objectstore {

// Fault injection for tests: a replacement for the group-commit leader's directory
// fsync(fd) (returns 0 or -1 like fsync). Empty: the real ::fsync.
struct LocalDiskFaults {
  std::function<int(int fd)> directory_fsync;
};

// Opens (creating) a store rooted at `root`. Errors: kUnavailable when the directory or
// index cannot be created. After a failed directory sync every later write fails with
// kUnavailable until the store is reopened.
Result<std::unique_ptr<ObjectStore>> OpenLocalDiskStore(const std::string& root, const Clock& clock,
                                                        Random& random,
                                                        LocalDiskFaults faults = {});

}  // namespace tablemere::objectstore
