// The S3 wire adapter: parses S3 requests (path-style), authenticates them (SigV4
// header and query, SigV2 query), authorises them for the caller's identity, and maps
// object-store results and errors to S3's XML.
#pragma once

#include <memory>

#include "common/clock.h"
#include "http/cors.h"
#include "http/message.h"
#include "objectstore/registered_store.h"
#include "storage/access.h"

namespace tablemere::api::s3 {

struct S3ApiOptions {
  std::string region = "us-east-1";
  // CORS rules for buckets without a configuration of their own.
  std::vector<http::CorsRule> default_cors;
};

class S3Api {
 public:
  S3Api(objectstore::RegisteredStore& store, storage::IdentityResolver& identities,
        const Clock& clock, S3ApiOptions options);
  ~S3Api();
  http::Response Handle(http::Request& request);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tablemere::api::s3
