// The embedded object store: object bytes as files under one directory, and an index
// (SQLite, WAL) that maps (bucket, key) to them and serves listings in byte order.
#pragma once

#include <memory>
#include <string>

#include "common/clock.h"
#include "objectstore/object_store.h"

namespace tablemere::objectstore {

// Opens (creating) a store rooted at `root`. Errors: kUnavailable when the directory or
// index cannot be created.
Result<std::unique_ptr<ObjectStore>> OpenLocalDiskStore(const std::string& root, const Clock& clock,
                                                        Random& random);

}  // namespace tablemere::objectstore
