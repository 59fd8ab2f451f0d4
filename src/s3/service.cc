#include "s3/service.h"

#include <algorithm>
#include <cctype>

#include "common/crypto.h"
#include "common/strings.h"
#include "s3/errors.h"
#include "storage/checksum.h"

namespace tablemere::s3 {

using objectstore::ObjectInfo;
using storage::ChecksumAlgorithm;
using Kind = storage::S3Identity::Kind;

std::string MultipartEtag(const std::vector<std::string>& part_etags) {
  crypto::Digest etag_md5(crypto::DigestAlgorithm::kMd5);
  for (const auto& e : part_etags) etag_md5.Update(crypto::HexDecode(e).value_or(""));
  return crypto::HexEncode(etag_md5.Finish()) + "-" + std::to_string(part_etags.size());
}

bool ValidBucketName(const std::string& name) {
  if (name.size() < 3 || name.size() > 63) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return std::isalnum(static_cast<unsigned char>(name.front())) &&
         std::isalnum(static_cast<unsigned char>(name.back()));
}

// ------------------------------------------------------------------ authorisation

Result<void> S3Service::Authorize(const storage::S3Identity& id, const std::string& bucket,
                                  const std::string& key, Access access) {
  if (key.starts_with(kVersionsPrefix) && !storage::IsTableBucket(bucket)) {
    return Fail(InvalidArgument(std::string("Keys under ") + kVersionsPrefix +
                                " hold a bucket's noncurrent versions; ask for a version with "
                                "versionId instead."));
  }
  bool writes =
      access == Access::kWrite || access == Access::kWriteAttributes || access == Access::kDelete;
  switch (id.kind) {
    case Kind::kAnonymous:
      return AuthorizeAnonymous(bucket, key, access);
    case Kind::kOperator: {
      if (access == Access::kListBuckets) return {};
      TM_ASSIGN(std::string owner, identities_.OperatorBucketOwner(bucket));
      if (owner.empty()) {
        // Unknown to the operator: answer as S3 does for a bucket you cannot see.
        TM_TRY(store_.HeadBucket(bucket));
        return Fail(AccessDenied());
      }
      if (owner != id.access_key) {
        // Another user's bucket: what it grants AllUsers, signed users included.
        TM_ASSIGN(bool public_allows, PublicAllows(bucket, key, access, true));
        if (public_allows) return {};
        return Fail(AccessDenied());
      }
      return {};
    }
    case Kind::kWarehouse: {
      if (access == Access::kListBuckets) return {};
      if (access == Access::kBucketAdmin) {
        return Fail(AccessDenied("Warehouse credentials cannot create or delete buckets."));
      }
      if (storage::WarehouseOfBucket(bucket) != id.warehouse_id) {
        TM_ASSIGN(bool public_allows, PublicAllows(bucket, key, access, true));
        if (public_allows) return {};
        return Fail(AccessDenied());
      }
      TM_TRY(RefuseOverQuota(bucket, access));
      if (writes && id.read_only) {
        return Fail(
            AccessDenied("This is the warehouse's read-only identity; writes are refused."));
      }
      return {};
    }
    case Kind::kSession: {
      if (access == Access::kListBuckets || access == Access::kBucketAdmin) {
        return Fail(AccessDenied("A table session may only access its table's objects."));
      }
      if (bucket != storage::TableBucketName(id.warehouse_id)) return Fail(AccessDenied());
      if (access == Access::kBucketRead) return {};
      const std::string& scope = id.prefix;
      bool inside = key.starts_with(scope);
      // Listing the table's own prefix without its trailing slash is fine too.
      if (!inside && access == Access::kList && scope.ends_with("/") &&
          key == scope.substr(0, scope.size() - 1)) {
        inside = true;
      }
      if (!inside) {
        return Fail(AccessDenied("This storage session is scoped to " + bucket + "/" + scope));
      }
      TM_TRY(RefuseOverQuota(bucket, access));
      if (writes && id.read_only) return Fail(AccessDenied("This storage session is read-only."));
      return {};
    }
  }
  return Fail(AccessDenied());
}

// A warehouse over its organisation's storage quota is read-only until space is freed:
// writes are refused, reads and deletes are not.
Result<void> S3Service::RefuseOverQuota(const std::string& bucket, Access access) {
  if (access != Access::kWrite && access != Access::kWriteAttributes) return {};
  TM_ASSIGN(auto state, identities_.WarehouseBucket(bucket));
  if (!state.read_only) return {};
  return Fail(AccessDenied(
      "The organisation is over its storage quota: this warehouse is read-only until space is "
      "freed (deletes are allowed)."));
}

// Anonymous clients do what AllUsers may: read and list by the public ACLs, read a
// published warehouse's table bucket, write objects into a public-read-write bucket. A
// bucket that does not exist is NoSuchBucket, as S3 answers anyone.
Result<void> S3Service::AuthorizeAnonymous(const std::string& bucket, const std::string& key,
                                           Access access) {
  TM_ASSIGN(bool public_allows, PublicAllows(bucket, key, access, false));
  if (public_allows) return {};
  return Fail(
      AccessDenied("Anonymous access is allowed only to public buckets "
                   "and objects; sign the request."));
}

Result<bool> S3Service::PublicAllows(const std::string& bucket, const std::string& key,
                                     Access access, bool signed_caller) {
  if (bucket.empty() || access == Access::kListBuckets) return false;  // a service request
  const bool reads =
      access == Access::kRead || access == Access::kList || access == Access::kBucketRead;
  const bool writes = access == Access::kWrite || access == Access::kDelete;
  TM_ASSIGN(std::string owner, identities_.OperatorBucketOwner(bucket));
  if (owner.empty()) {
    if (storage::WarehouseOfBucket(bucket).empty()) {
      TM_TRY(store_.HeadBucket(bucket));  // NoSuchBucket when there is none
      return false;
    }
    if (!reads) return false;
    TM_ASSIGN(auto state, identities_.WarehouseBucket(bucket));
    return state.published;
  }
  if (!reads && !writes) return false;
  // READ for AllUsers in public-read and public-read-write; for signed callers in
  // authenticated-read too.
  auto grants_read = [&](const std::string& acl) {
    return acl == kPublicRead || acl == kPublicReadWrite ||
           (signed_caller && acl == kAuthenticatedRead);
  };
  TM_ASSIGN(auto info, store_.HeadBucket(bucket));
  // IgnorePublicAcls: every public ACL of the bucket and its objects counts as private.
  if (info.public_access_block && info.public_access_block->ignore_public_acls) return false;
  // The bucket's WRITE covers writing and deleting its objects, not the bucket itself.
  if (writes) return !key.empty() && info.acl == kPublicReadWrite;
  if (access == Access::kRead) {
    // An object answers for itself; a missing one is NoSuchKey to whoever may list.
    auto object = store_.Head(bucket, key);
    if (object) return grants_read(object->acl);
  }
  return grants_read(info.acl);
}

Result<std::string> S3Service::CannedAclForWrite(const storage::S3Identity& id,
                                                 const std::string& bucket,
                                                 const std::optional<std::string>& header) {
  if (!header) return std::string();
  const std::string acl = ToLower(Trim(*header));
  // bucket-owner-full-control is what tools send to hand objects to the bucket owner:
  // true of every object here, so it is private.
  if (acl == "private" || acl == "bucket-owner-full-control") return std::string();
  static constexpr std::string_view kCanned[] = {"public-read-write", "authenticated-read",
                                                 "aws-exec-read", "bucket-owner-read",
                                                 "log-delivery-write"};
  if (acl != kPublicRead &&
      std::find(std::begin(kCanned), std::end(kCanned), acl) == std::end(kCanned)) {
    // Not a canned ACL at all: the request is wrong, not the server short of a feature.
    return Fail(InvalidArgument("'" + acl + "' is not a canned ACL (x-amz-acl)"));
  }
  if (acl != kPublicRead && acl != kPublicReadWrite && acl != kAuthenticatedRead) {
    return Fail(S3Error(ErrorCode::kNotImplemented, "NotImplemented",
                        "The canned ACL '" + acl +
                            "' is not offered; use private, public-read, public-read-write or "
                            "authenticated-read."));
  }
  TM_ASSIGN(std::string owner, identities_.OperatorBucketOwner(bucket));
  if (owner.empty() && id.kind != Kind::kOperator) {
    return Fail(
        AccessDenied("Only operator users' buckets and objects can have public ACLs; "
                     "warehouse data is shared through grants."));
  }
  // A bucket not created yet has neither an ACL nor a PublicAccessBlock.
  auto info = store_.HeadBucket(bucket);
  if (!owner.empty() && (id.kind != Kind::kOperator || owner != id.access_key)) {
    // Another's bucket, which the caller may write only when it is public-read-write (the
    // write was authorised before): there the uploader picks its object's canned ACL, as
    // on S3. Nobody else's ACL is theirs to set.
    const bool public_write =
        info && info->acl == kPublicReadWrite &&
        !(info->public_access_block && info->public_access_block->ignore_public_acls);
    if (!public_write) return Fail(AccessDenied());
  }
  if (info && info->public_access_block && info->public_access_block->block_public_acls) {
    return Fail(
        AccessDenied("The bucket's PublicAccessBlock has BlockPublicAcls on: public ACLs are "
                     "refused (remove the block or choose a private ACL)."));
  }
  return acl;
}

Result<std::string> S3Service::OwnerIdOf(const std::string& bucket) {
  TM_ASSIGN(std::string owner, identities_.OperatorBucketOwner(bucket));
  if (!owner.empty()) return owner;
  std::string warehouse = storage::WarehouseOfBucket(bucket);
  if (!warehouse.empty()) return "t-" + warehouse;
  return std::string();
}

// ------------------------------------------------------------------ buckets

Result<std::vector<objectstore::BucketInfo>> S3Service::ListBuckets(const storage::S3Identity& id) {
  TM_TRY(Authorize(id, "", "", Access::kListBuckets));
  TM_ASSIGN(auto buckets, store_.ListBuckets());
  // The caller's own buckets, as S3 lists them: not those others open to AllUsers.
  std::vector<objectstore::BucketInfo> owned;
  for (auto& b : buckets) {
    bool mine = false;
    if (id.kind == Kind::kOperator) {
      TM_ASSIGN(std::string owner, identities_.OperatorBucketOwner(b.name));
      mine = owner == id.access_key;
    } else if (id.kind == Kind::kWarehouse) {
      mine = storage::WarehouseOfBucket(b.name) == id.warehouse_id;
    }
    if (mine) owned.push_back(std::move(b));
  }
  return owned;
}

Result<void> S3Service::CreateBucket(const storage::S3Identity& id, const std::string& bucket,
                                     const std::string& acl, const std::string& location,
                                     bool us_east_1, bool object_lock) {
  if (id.kind != Kind::kOperator) TM_TRY(Authorize(id, bucket, "", Access::kBucketAdmin));
  if (!ValidBucketName(bucket)) {
    return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidBucketName",
                        "The specified bucket is not valid."));
  }
  if (!storage::WarehouseOfBucket(bucket).empty()) {
    return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidBucketName",
                        "Bucket names starting with w- or b- are reserved for warehouses."));
  }
  auto created = store_.CreateBucket(bucket, location);
  if (!created) {
    if (objectstore::FailureOf(created.error()) == objectstore::StoreFailure::kBucketExists) {
      TM_ASSIGN(std::string owner, identities_.OperatorBucketOwner(bucket));
      if (owner != id.access_key) {
        return Fail(S3Error(ErrorCode::kAlreadyExists, "BucketAlreadyExists",
                            "The requested bucket name is not available."));
      }
      if (us_east_1) {
        objectstore::AttributeChange change;
        change.acl = acl;
        TM_TRY(store_.SetBucketAttributes(bucket, change));
        return {};
      }
    }
    return Fail(created.error());
  }
  TM_TRY(identities_.RecordOperatorBucket(bucket, id.access_key, true));
  objectstore::AttributeChange change;
  if (!acl.empty()) change.acl = acl;
  if (object_lock) {
    // A bucket created with object lock has versioning Enabled, for good.
    change.versioning = kVersioningEnabled;
    change.object_lock = objectstore::ObjectLockConfig{};
  }
  if (change.acl || change.object_lock) TM_TRY(store_.SetBucketAttributes(bucket, change));
  return {};
}

Result<void> S3Service::DeleteBucket(const storage::S3Identity& id, const std::string& bucket) {
  if (id.kind != Kind::kOperator) TM_TRY(Authorize(id, bucket, "", Access::kBucketAdmin));
  TM_TRY(Authorize(id, bucket, "", Access::kDelete));
  // Delete markers are versions too: a bucket that still has any is not empty.
  TM_ASSIGN(int64_t versions, store_.versions().CountVersions(bucket));
  if (versions > 0) {
    return Fail(S3Error(ErrorCode::kConflict, "BucketNotEmpty",
                        "The bucket you tried to delete is not empty: it still has versions or "
                        "delete markers (list them with ListObjectVersions)."));
  }
  TM_TRY(store_.DeleteBucket(bucket));
  return identities_.RecordOperatorBucket(bucket, id.access_key, false);
}

// ------------------------------------------------------------------ listing

// Authorize lets a session list its table's prefix without the trailing slash ("ns/t",
// as Iceberg's S3FileIO.listPrefix sends a table location). That prefix also matches
// sibling tables ("ns/t2/…", "ns/t-x/…"), so the store is asked for the session's own
// scope instead: their keys are never read, not even as a paging marker.
Result<objectstore::ListResult> S3Service::List(const storage::S3Identity& id,
                                                const std::string& bucket,
                                                objectstore::ListOptions opts) {
  TM_TRY(Authorize(id, bucket, opts.prefix, Access::kList));
  if (id.kind != Kind::kSession || opts.prefix.starts_with(id.prefix)) {
    if (storage::IsTableBucket(bucket)) return store_.List(bucket, opts);
    return ListWithoutKeptVersions(bucket, std::move(opts));
  }
  // Here opts.prefix + "/" == id.prefix.
  if (opts.delimiter == "/") {
    // Every key in scope is cut right after the requested prefix: the scope is the one
    // common prefix, listed unless an earlier page (the marker) already reported it.
    objectstore::ListResult result;
    if (opts.max_keys <= 0 || opts.continuation == id.prefix) return result;
    objectstore::ListOptions probe;
    probe.prefix = id.prefix;
    probe.start_after = std::max(opts.start_after, opts.continuation);
    probe.max_keys = 1;
    TM_ASSIGN(auto any, store_.List(bucket, probe));
    if (!any.objects.empty()) result.common_prefixes.push_back(id.prefix);
    return result;
  }
  if (!opts.delimiter.empty() && opts.delimiter.front() == '/') {
    return Fail(AccessDenied("List this storage session's objects with prefix " + id.prefix));
  }
  // Any other delimiter first occurs after the scope's "/", as it would for the
  // requested prefix.
  opts.prefix = id.prefix;
  return store_.List(bucket, opts);
}

// Noncurrent versions are objects of the bucket under kVersionsPrefix (versioning.cc);
// a listing leaves them out, and when it meets them it goes on past all of them, so a
// page is not spent on them.
Result<objectstore::ListResult> S3Service::ListWithoutKeptVersions(const std::string& bucket,
                                                                   objectstore::ListOptions opts) {
  auto kept = [](const std::string& key) { return key.starts_with(kVersionsPrefix); };
  TM_ASSIGN(auto page, store_.List(bucket, opts));
  if (std::none_of(page.objects.begin(), page.objects.end(),
                   [&](const auto& o) { return kept(o.key); }) &&
      std::none_of(page.common_prefixes.begin(), page.common_prefixes.end(), kept)) {
    return page;
  }
  objectstore::ListResult out;
  while (true) {
    for (auto& o : page.objects) {
      if (!kept(o.key)) out.objects.push_back(std::move(o));
    }
    for (auto& cp : page.common_prefixes) {
      if (!kept(cp)) out.common_prefixes.push_back(std::move(cp));
    }
    out.truncated = page.truncated;
    out.next_marker = page.next_marker;
    const int shown = static_cast<int>(out.objects.size() + out.common_prefixes.size());
    if (!page.truncated || shown >= opts.max_keys) break;
    // Past every kept version (they sort together), from where this page ended.
    const std::string past_kept = std::string(kVersionsPrefix) + "\xF4\x8F\xBF\xBF";
    opts.start_after = std::max(page.next_marker, past_kept);
    opts.continuation.clear();
    opts.max_keys -= shown;
    TM_ASSIGN(page, store_.List(bucket, opts));
    opts.max_keys += shown;
  }
  return out;
}

Result<std::vector<objectstore::UploadInfo>> S3Service::ListUploads(const storage::S3Identity& id,
                                                                    const std::string& bucket,
                                                                    const std::string& prefix) {
  TM_TRY(Authorize(id, bucket, prefix, Access::kList));
  TM_ASSIGN(auto uploads, store_.ListUploads(bucket, prefix));
  // As in List: the prefix "ns/t" a session may use also matches sibling tables.
  if (id.kind == Kind::kSession) {
    std::erase_if(uploads,
                  [&](const objectstore::UploadInfo& u) { return !u.key.starts_with(id.prefix); });
  }
  return uploads;
}

// ------------------------------------------------------------------ writes

Result<void> S3Service::CheckWritable(const storage::S3Identity& id, const std::string& bucket,
                                      const std::string& key) {
  TM_TRY(Authorize(id, bucket, key, Access::kWrite));
  return CheckWarehouseLayout(id, bucket, key);
}

// Table buckets take only table files: a generic table's session is held to its format
// (sealed in the session, no lookup); other writers are checked against the generic
// tables' locations, then Iceberg's layout.
Result<void> S3Service::CheckWarehouseLayout(const storage::S3Identity& id,
                                             const std::string& bucket, const std::string& key) {
  if (!storage::IsTableBucket(bucket)) return {};
  std::string warehouse = storage::WarehouseOfBucket(bucket);
  std::string blob_bucket = storage::BlobBucketName(warehouse);
  if (id.kind == Kind::kSession && !id.format.empty()) {
    return storage::CheckGenericTableKey(key.substr(std::min(key.size(), id.prefix.size())),
                                         id.format, blob_bucket);
  }
  TM_ASSIGN(auto generic, identities_.GenericLocations(warehouse));
  return storage::CheckWarehouseKey(key, blob_bucket, generic);
}

Result<void> S3Service::CheckWriteConditions(const std::string& bucket, const std::string& key,
                                             const Conditions& conditions) {
  if (!conditions.AnyWriteCondition()) return {};
  auto existing = store_.Head(bucket, key);
  if (!existing) {
    if (existing.error().code != ErrorCode::kNotFound) return Fail(existing.error());
    if (conditions.if_match) return Fail(existing.error());  // NoSuchKey, as S3 answers
    return {};
  }
  if (Evaluate(conditions, *existing, false) != ConditionOutcome::kProceed) {
    return Fail(PreconditionFailed());
  }
  return {};
}

// ------------------------------------------------------------------ multipart

Result<objectstore::UploadInfo> S3Service::Upload(const std::string& bucket, const std::string& key,
                                                  const std::string& upload_id) {
  TM_ASSIGN(auto upload, store_.GetUpload(bucket, upload_id));
  if (upload.key != key) {
    // Another key's upload is no upload of this key.
    return Fail(objectstore::StoreError(objectstore::StoreFailure::kNoSuchUpload,
                                        ErrorCode::kNotFound,
                                        "The specified multipart upload does not exist."));
  }
  return upload;
}

Result<CompletedUpload> S3Service::Complete(
    const storage::S3Identity& id, const std::string& bucket, const std::string& key,
    const std::string& upload_id, const std::vector<RequestedPart>& parts,
    const Conditions& conditions, const std::optional<NamedChecksum>& whole_object_checksum) {
  TM_TRY(CheckWritable(id, bucket, key));
  auto found = Upload(bucket, key, upload_id);
  if (!found) {
    if (objectstore::FailureOf(found.error()) == objectstore::StoreFailure::kNoSuchUpload) {
      if (auto done = RepeatedComplete(bucket, key, parts)) return std::move(*done);
    }
    return Fail(found.error());
  }
  objectstore::UploadInfo upload = std::move(*found);
  TM_ASSIGN(auto stored_parts, store_.ListParts(bucket, upload.upload_id));
  std::map<int, objectstore::PartInfo> by_number;
  for (auto& p : stored_parts) by_number[p.part_number] = p;

  if (parts.empty()) return Fail(MalformedXml());
  std::vector<int> numbers;
  std::vector<const objectstore::PartInfo*> chosen;
  for (const RequestedPart& part : parts) {
    if (!numbers.empty() && part.number <= numbers.back()) {
      return Fail(S3Error(
          ErrorCode::kInvalidInput, "InvalidPartOrder",
          "The list of parts was not in ascending order. Parts must be ordered by part number."));
    }
    auto it = by_number.find(part.number);
    if (it == by_number.end() || (!part.etag.empty() && part.etag != it->second.etag)) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "InvalidPart",
                          "One or more of the specified parts could not be found. The part may "
                          "not have been uploaded, or the specified entity tag may not match the "
                          "part's entity tag."));
    }
    for (const auto& [alg, value] : part.checksums) {
      auto have = it->second.checksums.find(alg);
      if (have == it->second.checksums.end() || have->second != value) {
        return Fail(
            S3Error(ErrorCode::kInvalidInput, "InvalidPart",
                    "The checksum of part " + std::to_string(part.number) + " does not match."));
      }
    }
    numbers.push_back(part.number);
    chosen.push_back(&it->second);
  }
  for (size_t i = 0; i + 1 < chosen.size(); i++) {
    if (chosen[i]->size < kMinPartSize) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "EntityTooSmall",
                          "Your proposed upload is smaller than the minimum allowed object size."));
    }
  }
  TM_TRY(CheckWriteConditions(bucket, key, conditions));

  std::vector<std::string> part_etags;
  for (const auto* p : chosen) part_etags.push_back(p->etag);
  ObjectInfo final_info = upload.pending;
  final_info.key = key;
  final_info.etag = MultipartEtag(part_etags);
  CompletedUpload out;
  std::optional<ChecksumAlgorithm> alg;
  if (auto a = upload.pending.checksums.find("algorithm"); a != upload.pending.checksums.end()) {
    alg = storage::ParseChecksumAlgorithm(a->second);
    out.checksum_type = upload.pending.checksums["type"];
  }
  if (alg) {
    // FULL_OBJECT: the parts' CRCs combined into the whole object's; COMPOSITE: a checksum
    // of the parts' checksums, "-<count>".
    std::string name = storage::ChecksumAlgorithmName(*alg);
    std::string combined;
    storage::Checksummer composite(*alg);
    bool ok = true;
    for (size_t i = 0; i < chosen.size(); i++) {
      auto c = chosen[i]->checksums.find(name);
      std::optional<std::string> raw;
      if (c != chosen[i]->checksums.end()) raw = crypto::Base64Decode(c->second);
      if (!raw) {
        ok = false;
        break;
      }
      if (out.checksum_type == "FULL_OBJECT") {
        combined = i == 0 ? *raw : storage::CombineCrc(*alg, combined, *raw, chosen[i]->size);
      } else {
        composite.Update(*raw);
      }
    }
    if (ok) {
      out.checksum_value =
          out.checksum_type == "FULL_OBJECT"
              ? crypto::Base64Encode(combined)
              : crypto::Base64Encode(composite.Finish()) + "-" + std::to_string(chosen.size());
      out.checksum_algorithm = name;
      final_info.checksums[name] = out.checksum_value;
      // Kept per part for GetObjectAttributes' ObjectParts.
      // (every chosen part has one: `ok` says so).
      for (const auto* p : chosen) {
        auto c = p->checksums.find(name);
        final_info.part_checksums.push_back(c == p->checksums.end() ? "" : c->second);
      }
    } else {
      final_info.checksums.clear();
    }
  } else {
    // No algorithm named at creation, yet every part carried a checksum of one algorithm:
    // kept per part, so GetObjectAttributes lists them (no whole-object checksum is made).
    std::optional<std::string> shared;
    for (const auto* p : chosen) {
      std::optional<std::string> mine;
      for (const auto& [name, value] : p->checksums) {
        if (storage::ParseChecksumAlgorithm(name)) mine = name;
      }
      if (!mine || (shared && *shared != *mine)) {
        shared.reset();
        break;
      }
      shared = mine;
    }
    if (shared) {
      final_info.checksums["algorithm"] = *shared;
      for (const auto* p : chosen) final_info.part_checksums.push_back(p->checksums.at(*shared));
    }
  }
  if (whole_object_checksum) {
    // The client's checksum of the whole object must be the one the parts make.
    const auto& [name, value] = *whole_object_checksum;
    if (out.checksum_algorithm != name) {
      // Refused, not dropped: nothing here can check it.
      return Fail(InvalidRequest("The upload was not created with the " + name +
                                 " checksum algorithm, so its whole-object " + name +
                                 " cannot be checked; name it in CreateMultipartUpload "
                                 "(x-amz-checksum-algorithm) or complete without it."));
    }
    const std::string& expected = out.checksum_value;
    std::string given = Trim(value);
    auto bare = [](const std::string& v) { return v.substr(0, v.find('-')); };
    if (given != expected && given != bare(expected)) {
      return Fail(S3Error(ErrorCode::kInvalidInput, "BadDigest",
                          "The " + name +
                              " you specified for the whole object did not match "
                              "what the parts make."));
    }
  }
  TM_ASSIGN(out.object, PublishWrite(bucket, key, [&](const std::string& version_id) {
              final_info.version_id = version_id;
              return store_.CompleteUpload(bucket, upload.upload_id, numbers, final_info,
                                           PublishConditions(conditions));
            }));
  out.object.version_id = final_info.version_id;
  return out;
}

// A complete repeated after it succeeded: the object under the key must be the one these
// parts (every ETag given, as SDKs send them) produced. Anything else stays NoSuchUpload.
std::optional<CompletedUpload> S3Service::RepeatedComplete(
    const std::string& bucket, const std::string& key, const std::vector<RequestedPart>& parts) {
  std::vector<std::string> part_etags;
  for (const RequestedPart& part : parts) {
    if (part.etag.empty()) return std::nullopt;
    part_etags.push_back(ToLower(part.etag));
  }
  if (part_etags.empty()) return std::nullopt;
  auto head = store_.Head(bucket, key);
  if (!head || head->etag != MultipartEtag(part_etags) ||
      head->part_sizes.size() != part_etags.size()) {
    return std::nullopt;
  }
  CompletedUpload out;
  // The same answer as the first complete gave, checksum included.
  if (auto a = head->checksums.find("algorithm"); a != head->checksums.end()) {
    if (auto v = head->checksums.find(a->second); v != head->checksums.end()) {
      out.checksum_algorithm = a->second;
      out.checksum_value = v->second;
      if (auto t = head->checksums.find("type"); t != head->checksums.end()) {
        out.checksum_type = t->second;
      }
    }
  }
  out.object = std::move(*head);
  return out;
}

}  // namespace tablemere::s3
