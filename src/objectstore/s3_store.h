// The object store in front of an existing S3-compatible service (SeaweedFS, MinIO, Ceph
// RGW, Garage, AWS S3, R2): our buckets are prefixes of one backend bucket, keys map one
// to one (`<root>/<bucket>/<key>`), so the backend's own tools see the warehouse as it
// is and the data stays readable without us.
#pragma once

#include <memory>
#include <string>

#include "common/clock.h"
#include "objectstore/key_guard.h"
#include "objectstore/object_store.h"

namespace tablemere::objectstore {

struct S3StoreConfig {
  std::string endpoint;  // "http://127.0.0.1:8333" (path-style requests)
  std::string bucket;    // the backend bucket, which must exist
  std::string root;      // key prefix inside it, without slashes at either end; may be empty
  std::string region = "us-east-1";
  std::string access_key;
  std::string secret_key;
  // Local directory for bodies of unknown length (spooled, then sent with their length).
  std::string spool_dir;
  int connect_timeout_ms = 5000;
  int request_timeout_ms = 300000;  // a whole request, body included
  int stall_seconds = 30;           // a transfer making no progress this long is broken
  int retries = 2;                  // extra attempts for idempotent reads only
  // Enforce If-None-Match / If-Match here (a per-key lock around a HEAD and the write)
  // even when the store honours them: how the server behaves in front of a store that
  // does not (older MinIO, Garage, Ceph RGW releases). For tests.
  bool enforce_conditions_here = false;
  // Where the per-key locks of writes checked here are shared with other servers; null:
  // within this process only. Must outlive the store.
  SharedKeyLocks* shared_locks = nullptr;
};

// Opens the store and checks that it can list, write and delete in the backend bucket.
// Errors: kInvalidInput (configuration), kUnavailable (the backend cannot be reached or
// refuses; the message says which step and what the backend answered).
Result<std::unique_ptr<ObjectStore>> OpenS3Store(const S3StoreConfig& config, const Clock& clock,
                                                 Random& random);

}  // namespace tablemere::objectstore
