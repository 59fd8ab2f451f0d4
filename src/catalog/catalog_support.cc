#include "catalog/catalog_support.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/strings.h"
#include "iceberg/json_access.h"

namespace tablemere::catalog {

std::string JoinPath(const Namespace& ns) {
  std::string out;
  for (size_t i = 0; i < ns.size(); i++) out += (i ? "/" : "") + ns[i];
  return out;
}
std::string JoinNsWire(const Namespace& ns) {
  std::string out;
  for (size_t i = 0; i < ns.size(); i++) out += (i ? "\x1f" : "") + ns[i];
  return out;
}
std::string JoinDots(const Namespace& ns) {
  std::string out;
  for (size_t i = 0; i < ns.size(); i++) out += (i ? "." : "") + ns[i];
  return out;
}

bool ValidName(const std::string& name) {
  return !name.empty() && name.size() <= 255 && name.find('/') == std::string::npos &&
         name != "." && name != ".." && name.find('\x1f') == std::string::npos;
}

Error BadRequest(const std::string& message) {
  return Error{ErrorCode::kInvalidInput, message, {}};
}
Error Forbidden(const std::string& message) {
  return Error{ErrorCode::kPermissionDenied, message, {}};
}

Result<void> RequireDelete(const CatalogPrincipal& caller) {
  if (caller.read_only) {
    return Fail(Forbidden("The read-only identity " + caller.identity +
                          " cannot change the catalog; use the read/write identity."));
  }
  return {};
}

Result<void> RequireWrite(const CatalogPrincipal& caller) {
  TM_TRY(RequireDelete(caller));
  if (caller.over_quota) {
    return Fail(Forbidden("The organisation is over its storage quota: the catalog is "
                          "read-only until space is freed (dropping tables is allowed)")
                    .With("code", "quota_exceeded"));
  }
  return {};
}

std::string KindNoun(const std::string& kind) {
  if (kind == "table") return "Table";
  if (kind == "view") return "View";
  return "Generic table";
}

Error NameTaken(const std::string& wanted_kind, const std::string& existing_kind,
                const TableIdent& ident) {
  std::string name = JoinDots(ident.ns) + "." + ident.name;
  std::string message = wanted_kind == existing_kind
                            ? KindNoun(existing_kind) + " already exists: " + name
                            : KindNoun(existing_kind) + " with same name already exists: " + name;
  return Error{ErrorCode::kAlreadyExists, std::move(message), {}}.With("existing_kind",
                                                                       existing_kind);
}

Error RenameTargetTaken(const TableIdent& from, const TableIdent& to,
                        const std::string& existing_kind) {
  return Error{ErrorCode::kAlreadyExists,
               "Cannot rename " + JoinDots(from.ns) + "." + from.name + " to " + JoinDots(to.ns) +
                   "." + to.name + ". " + KindNoun(existing_kind) + " already exists",
               {}}
      .With("existing_kind", existing_kind);
}

Result<Json> ParseStored(const std::string& text, const std::string& what) {
  Json doc = Json::parse(text, nullptr, false);
  if (!doc.is_object()) {
    return Fail(Error{ErrorCode::kInternal,
                      "The stored metadata of " + what + " is corrupt: not a JSON object",
                      {}});
  }
  return doc;
}

namespace {

std::unexpected<Error> CorruptMember(const std::string& key, const std::string& what,
                                     const char* expected) {
  return Fail(
      Error{ErrorCode::kInternal,
            "The stored metadata of " + what + " is corrupt: '" + key + "' is not " + expected,
            {}});
}

}  // namespace

Result<std::string> StoredString(const Json& doc, const std::string& key,
                                 const std::string& fallback, const std::string& what) {
  const Json* v = iceberg::Member(doc, key);
  if (!v) return fallback;
  if (!v->is_string()) return CorruptMember(key, what, "a string");
  return v->get<std::string>();
}

Result<int64_t> StoredInt(const Json& doc, const std::string& key, int64_t fallback,
                          const std::string& what) {
  const Json* v = iceberg::Member(doc, key);
  if (!v) return fallback;
  if (!iceberg::IsInt(*v)) return CorruptMember(key, what, "an integer");
  return iceberg::AsInt(*v);
}

Result<bool> StoredBool(const Json& doc, const std::string& key, bool fallback,
                        const std::string& what) {
  const Json* v = iceberg::Member(doc, key);
  if (!v) return fallback;
  if (!v->is_boolean()) return CorruptMember(key, what, "a boolean");
  return v->get<bool>();
}

int VersionOf(const std::string& metadata_location) {
  size_t slash = metadata_location.rfind('/');
  std::string file =
      slash == std::string::npos ? metadata_location : metadata_location.substr(slash + 1);
  size_t dash = file.find('-');
  if (dash == std::string::npos) return -1;
  auto n = ParseInt(file.substr(0, dash));
  return n ? static_cast<int>(*n) : -1;
}

std::string WarehouseFiles::Canonical(std::string location) {
  for (const char* scheme : {"s3a://", "s3n://"}) {
    if (location.starts_with(scheme)) return "s3://" + location.substr(6);
  }
  return location;
}

Result<std::string> WarehouseFiles::KeyOf(const metastore::Warehouse& w,
                                          const std::string& given) const {
  const std::string location = Canonical(given);
  std::string root = Root(w);
  if (!location.starts_with(root) || location.size() == root.size()) {
    return Fail(BadRequest("Location '" + location + "' is outside this warehouse (" + root + ")"));
  }
  return location.substr(root.size());
}

Result<bool> WarehouseFiles::Occupied(const metastore::Warehouse& w, const std::string& location) {
  TM_ASSIGN(std::string key, KeyOf(w, location));
  objectstore::ListOptions opts;
  opts.prefix = key + "/";
  opts.max_keys = 1;
  TM_ASSIGN(auto page, objects_.List(Bucket(w), opts));
  return !page.objects.empty();
}

void WarehouseFiles::DiscardUnreferenced(const metastore::Warehouse& w,
                                         const std::string& location) {
  if (auto key = KeyOf(w, location)) (void)objects_.Delete(Bucket(w), *key);
}

Result<std::string> WarehouseFiles::WriteMetadata(const metastore::Warehouse& w,
                                                  const std::string& location, int version,
                                                  const Json& document) {
  char file[128];
  std::snprintf(file, sizeof file, "%05d-%s.metadata.json", version, random_.Uuid().c_str());
  std::string base = location;
  while (base.ends_with("/")) base.pop_back();
  std::string metadata_location = base + "/metadata/" + file;
  TM_TRY(WriteBytes(w, metadata_location, document.dump(), "application/json"));
  return metadata_location;
}

Result<void> WarehouseFiles::WriteBytes(const metastore::Warehouse& w, const std::string& location,
                                        std::string_view bytes, const std::string& content_type) {
  TM_ASSIGN(std::string key, KeyOf(w, location));
  TM_ASSIGN(auto writer, objects_.BeginPut(Bucket(w), key));
  auto wrote = writer->Write(bytes.data(), bytes.size());
  if (!wrote) {
    writer->Abort();
    return Fail(wrote.error());
  }
  objectstore::ObjectInfo info;
  info.headers["Content-Type"] = content_type;
  TM_TRY(writer->Commit(std::move(info)));
  return {};
}

namespace {

Error LocalFileError(const std::string& path, const char* what) {
  return Error{
      ErrorCode::kUnavailable, std::string(what) + " " + path + ": " + std::strerror(errno), {}};
}

}  // namespace

Result<int64_t> WarehouseFiles::CopyToFile(const metastore::Warehouse& w,
                                           const std::string& location, const std::string& path) {
  TM_ASSIGN(std::string key, KeyOf(w, location));
  objectstore::ObjectInfo info;
  TM_ASSIGN(auto reader, objects_.Get(Bucket(w), key, 0, std::nullopt, &info));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Fail(LocalFileError(path, "cannot create"));
  std::vector<char> buf(1 << 20);
  int64_t total = 0;
  while (true) {
    auto n = reader->Read(buf.data(), buf.size());
    if (!n) {
      ::close(fd);
      return Fail(n.error());
    }
    if (*n == 0) break;
    for (size_t off = 0; off < *n;) {
      ssize_t wrote = ::write(fd, buf.data() + off, *n - off);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) {
        Error e = LocalFileError(path, "cannot write");
        ::close(fd);
        return Fail(e);
      }
      off += static_cast<size_t>(wrote);
    }
    total += static_cast<int64_t>(*n);
  }
  if (::close(fd) != 0) return Fail(LocalFileError(path, "cannot write"));
  if (static_cast<uint64_t>(total) != info.size) {
    return Fail(Error{ErrorCode::kUnavailable, location + " ended early", {}});
  }
  return total;
}

Result<int64_t> WarehouseFiles::PutFile(const metastore::Warehouse& w, const std::string& location,
                                        const std::string& path) {
  TM_ASSIGN(std::string key, KeyOf(w, location));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Fail(LocalFileError(path, "cannot open"));
  auto writer = objects_.BeginPut(Bucket(w), key);
  if (!writer) {
    ::close(fd);
    return Fail(writer.error());
  }
  std::vector<char> buf(1 << 20);
  int64_t total = 0;
  while (true) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Error e = LocalFileError(path, "cannot read");
      ::close(fd);
      (*writer)->Abort();
      return Fail(e);
    }
    if (n == 0) break;
    auto wrote = (*writer)->Write(buf.data(), static_cast<size_t>(n));
    if (!wrote) {
      ::close(fd);
      (*writer)->Abort();
      return Fail(wrote.error());
    }
    total += n;
  }
  ::close(fd);
  objectstore::ObjectInfo info;
  info.headers["Content-Type"] = "application/octet-stream";
  TM_TRY((*writer)->Commit(std::move(info)));
  return total;
}

Result<std::string> WarehouseFiles::ReadBytes(const metastore::Warehouse& w,
                                              const std::string& location, size_t max_bytes) {
  TM_ASSIGN(std::string key, KeyOf(w, location));
  objectstore::ObjectInfo info;
  TM_ASSIGN(auto reader, objects_.Get(Bucket(w), key, 0, std::nullopt, &info));
  if (info.size > max_bytes) {
    return Fail(BadRequest(location + " is larger than " + std::to_string(max_bytes) + " bytes"));
  }
  std::string body(info.size, '\0');
  size_t got = 0;
  while (got < body.size()) {
    TM_ASSIGN(size_t n, reader->Read(body.data() + got, body.size() - got));
    if (n == 0) return Fail(Error{ErrorCode::kUnavailable, location + " ended early", {}});
    got += n;
  }
  return body;
}

Result<std::vector<objectstore::ObjectInfo>> WarehouseFiles::ListUnder(
    const metastore::Warehouse& w, const std::string& location) {
  TM_ASSIGN(std::string key, KeyOf(w, location));
  if (!key.empty() && key.back() != '/') key += '/';
  std::vector<objectstore::ObjectInfo> out;
  objectstore::ListOptions options;
  options.prefix = key;
  while (true) {
    TM_ASSIGN(auto page, objects_.List(Bucket(w), options));
    for (auto& o : page.objects) out.push_back(std::move(o));
    if (!page.truncated) break;
    options.continuation = page.next_marker;
  }
  return out;
}

Result<void> WarehouseFiles::Delete(const metastore::Warehouse& w, const std::string& location) {
  TM_ASSIGN(std::string key, KeyOf(w, location));
  return objects_.Delete(Bucket(w), key);
}

Result<Json> WarehouseFiles::ReadJson(const metastore::Warehouse& w, const std::string& location) {
  auto read = ReadBytes(w, location, size_t{1} << 30);
  if (!read) {
    if (read.error().code == ErrorCode::kNotFound) {
      return Fail(BadRequest("No metadata file at " + location));
    }
    return Fail(read.error());
  }
  const std::string& body = *read;
  Json document = Json::parse(body, nullptr, false);
  if (!document.is_object()) return Fail(BadRequest(location + " is not a JSON document"));
  return document;
}

std::map<std::string, std::string> WarehouseFiles::BaseConfig() const {
  return {{"s3.endpoint", s3_url_},
          {"s3.path-style-access", "true"},
          {"s3.region", "us-east-1"},
          {"client.region", "us-east-1"}};
}

StorageCredential WarehouseFiles::Vend(const CatalogPrincipal& caller,
                                       const metastore::Warehouse& w, const std::string& location,
                                       const std::string& refresh_endpoint,
                                       const std::string& format, int64_t not_after_ms) {
  std::string base = location;
  while (base.ends_with("/")) base.pop_back();
  storage::SessionGrant grant;
  grant.warehouse_id = w.id;
  grant.bucket = Bucket(w);
  grant.prefix = KeyOf(w, base).value_or("") + "/";
  grant.read_only = caller.read_only || caller.over_quota;
  grant.expires_ms = clock_.NowMillis() + session_seconds_ * 1000;
  grant.generation = w.credential_generation;
  grant.format = format;
  // A capped session is never shared: a cached one for the scope may outlive the cap.
  const bool capped = not_after_ms > 0 && grant.expires_ms > not_after_ms;
  if (capped) grant.expires_ms = not_after_ms;
  storage::IssuedSession s = capped ? sealer_.Issue(grant, random_) : SessionFor(grant);
  counters_.vended_sessions++;
  StorageCredential c;
  c.prefix = base + "/";
  c.config = BaseConfig();
  c.config["s3.access-key-id"] = s.access_key_id;
  c.config["s3.secret-access-key"] = s.secret_access_key;
  c.config["s3.session-token"] = s.session_token;
  c.config["s3.session-token-expires-at-ms"] = std::to_string(s.expires_ms);
  c.config["client.refresh-credentials-endpoint"] = refresh_endpoint;
  return c;
}

storage::IssuedSession WarehouseFiles::SessionFor(const storage::SessionGrant& grant) {
  SessionScope scope{grant.warehouse_id, grant.generation, grant.prefix, grant.read_only,
                     grant.format};
  int64_t now = clock_.NowMillis();
  int64_t lifetime_ms = grant.expires_ms - now;
  // Reusable while remaining * denominator >= lifetime * numerator.
  auto fresh = [&](const storage::IssuedSession& s) {
    return (s.expires_ms - now) * kSessionReuseDenominator >= lifetime_ms * kSessionReuseNumerator;
  };
  {
    std::lock_guard lock(sessions_mu_);
    auto it = sessions_.find(scope);
    if (it != sessions_.end() && fresh(it->second)) return it->second;
  }
  // Sealed outside the lock; two racing callers both seal, and either result is valid.
  storage::IssuedSession issued = sealer_.Issue(grant, random_);
  std::lock_guard lock(sessions_mu_);
  if (sessions_.size() >= kMaxCachedSessions) {
    std::erase_if(sessions_, [&](const auto& e) { return !fresh(e.second); });
    if (sessions_.size() >= kMaxCachedSessions) sessions_.clear();
  }
  sessions_.insert_or_assign(std::move(scope), issued);
  return issued;
}

}  // namespace tablemere::catalog
