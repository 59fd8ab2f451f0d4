// The SQL (SQLite and PostgreSQL) bucket store: S3 buckets (s3_buckets) and their tags
// (s3_bucket_tags).
#include "metastore/sql_backend.h"

namespace tablemere::metastore::sql_backend {
namespace {

class SqlBuckets final : public BucketStore {
 public:
  explicit SqlBuckets(Scope scope) : s_(scope) {}

  Result<void> AddBucket(const S3Bucket& bucket) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      TM_TRY(RunUnique(db,
                       "INSERT INTO s3_buckets(name, created_ms, acl, cors, location, "
                       "public_access_block) VALUES(?, ?, ?, ?, ?, ?)",
                       {bucket.name, bucket.created_ms, bucket.acl, bucket.cors, bucket.location,
                        bucket.public_access_block},
                       Error{ErrorCode::kAlreadyExists, "bucket " + bucket.name + " exists", {}}));
      return WriteTags(db, bucket.name, bucket.tags);
    });
  }

  Result<S3Bucket> FindBucket(const std::string& name) override {
    auto read = [&] { return s_.Read([&](sql::Connection& db) { return Find(db, name); }); };
    // From the memo while it is exact (this process the only writer, nothing committed
    // since the record was read; see read_cache.h).
    if (s_.InTransaction()) return read();
    return s_.core.bucket_memo.Get(name, read);
  }

  Result<std::vector<S3Bucket>> AllBuckets() override {
    return s_.Read([&](sql::Connection& db) -> Result<std::vector<S3Bucket>> {
      std::vector<S3Bucket> out;
      TM_ASSIGN(auto* st, db.Prepare("SELECT name, " + std::string(kColumns) +
                                     " FROM s3_buckets ORDER BY name"));
      st->Bind({});
      while (true) {
        TM_ASSIGN(bool row, st->Step());
        if (!row) break;
        out.push_back(Row(st->Text(0), *st, 1));
      }
      TM_ASSIGN(auto* tags, db.Prepare("SELECT bucket, key, value FROM s3_bucket_tags "
                                       "ORDER BY bucket"));
      tags->Bind({});
      size_t at = 0;
      while (true) {
        TM_ASSIGN(bool row, tags->Step());
        if (!row) break;
        const std::string bucket = tags->Text(0);
        while (at < out.size() && out[at].name < bucket) at++;
        if (at < out.size() && out[at].name == bucket) out[at].tags[tags->Text(1)] = tags->Text(2);
      }
      return out;
    });
  }

  Result<S3Bucket> UpdateBucket(const std::string& name, const S3BucketChange& change) override {
    return s_.Write([&](sql::Connection& db) -> Result<S3Bucket> {
      // Only the given columns are written, so a concurrent change of another attribute
      // is not undone by this one.
      if (change.acl)
        TM_TRY(Run(db, "UPDATE s3_buckets SET acl = ? WHERE name = ?", {*change.acl, name}));
      if (change.cors) {
        TM_TRY(Run(db, "UPDATE s3_buckets SET cors = ? WHERE name = ?", {*change.cors, name}));
      }
      if (change.public_access_block) {
        TM_TRY(Run(db, "UPDATE s3_buckets SET public_access_block = ? WHERE name = ?",
                   {*change.public_access_block, name}));
      }
      if (change.versioning) {
        TM_TRY(Run(db, "UPDATE s3_buckets SET versioning = ? WHERE name = ?",
                   {*change.versioning, name}));
      }
      if (change.object_lock) {
        TM_TRY(Run(db, "UPDATE s3_buckets SET object_lock = ? WHERE name = ?",
                   {*change.object_lock, name}));
      }
      TM_ASSIGN(S3Bucket found, Find(db, name));
      if (change.tags) {
        TM_TRY(Run(db, "DELETE FROM s3_bucket_tags WHERE bucket = ?", {name}));
        TM_TRY(WriteTags(db, name, *change.tags));
        found.tags = *change.tags;
      }
      return found;
    });
  }

  Result<void> AddUsage(const std::vector<UsageDelta>& deltas) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      for (const auto& d : deltas) {
        TM_TRY(Run(db,
                   "UPDATE s3_buckets SET bytes = bytes + ?, objects = objects + ?, "
                   "reconciled_ms = CASE WHEN ? THEN 0 ELSE reconciled_ms END WHERE name = ?",
                   {d.bytes, d.objects, int64_t{d.uncertain ? 1 : 0}, d.bucket}));
      }
      return {};
    });
  }

  Result<void> ReconcileUsage(const std::string& name, int64_t bytes, int64_t objects,
                              int64_t at_ms) override {
    return s_.Write([&](sql::Connection& db) -> Result<void> {
      TM_TRY(Run(db,
                 "UPDATE s3_buckets SET bytes = bytes + ?, objects = objects + ?, "
                 "reconciled_ms = ? WHERE name = ?",
                 {bytes, objects, at_ms, name}));
      if (db.Changes() == 0) return Fail(NotFound("bucket " + name));
      return {};
    });
  }

  Result<ObjectVersion> AddVersion(const ObjectVersion& version) override {
    return s_.Write([&](sql::Connection& db) -> Result<ObjectVersion> {
      ObjectVersion added = version;
      TM_ASSIGN(auto* st, db.Prepare("SELECT seq FROM s3_object_versions WHERE bucket = ? AND "
                                     "key = ? AND version_id = ?"));
      TM_ASSIGN(bool again, st->Bind({version.bucket, version.key, version.version_id}).Step());
      if (again) {
        added.seq = st->Int(0);
        st->Bind({});
        TM_TRY(Run(
            db,
            "UPDATE s3_object_versions SET delete_marker = ?, size = ?, etag = ?, "
            "modified_ms = ? WHERE bucket = ? AND key = ? AND version_id = ?",
            {int64_t{version.delete_marker ? 1 : 0}, static_cast<int64_t>(version.size),
             version.etag, version.modified_ms, version.bucket, version.key, version.version_id}));
        return added;
      }
      st->Bind({});
      TM_ASSIGN(added.seq, One(db,
                               "SELECT COALESCE(MAX(seq), 0) + 1 FROM s3_object_versions "
                               "WHERE bucket = ? AND key = ?",
                               {version.bucket, version.key}, "versions",
                               [](sql::Statement& row) { return row.Int(0); }));
      TM_TRY(Run(db, "INSERT INTO s3_object_versions VALUES(?, ?, ?, ?, ?, ?, ?, ?)",
                 {version.bucket, version.key, version.version_id, added.seq,
                  int64_t{version.delete_marker ? 1 : 0}, static_cast<int64_t>(version.size),
                  version.etag, version.modified_ms}));
      return added;
    });
  }

  Result<std::optional<ObjectVersion>> FindVersion(const std::string& bucket,
                                                   const std::string& key,
                                                   const std::string& version_id) override {
    return s_.Read([&](sql::Connection& db) {
      return OneVersion(db, "WHERE bucket = ? AND key = ? AND version_id = ?",
                        {bucket, key, version_id});
    });
  }

  Result<std::optional<ObjectVersion>> NewestVersion(const std::string& bucket,
                                                     const std::string& key) override {
    return s_.Read([&](sql::Connection& db) {
      return OneVersion(db, "WHERE bucket = ? AND key = ? ORDER BY seq DESC LIMIT 1",
                        {bucket, key});
    });
  }

  Result<bool> RemoveVersion(const std::string& bucket, const std::string& key,
                             const std::string& version_id) override {
    return s_.Write([&](sql::Connection& db) -> Result<bool> {
      TM_TRY(Run(db,
                 "DELETE FROM s3_object_versions WHERE bucket = ? AND key = ? AND version_id = ?",
                 {bucket, key, version_id}));
      return db.Changes() > 0;
    });
  }

  Result<std::vector<ObjectVersion>> ListVersions(const std::string& bucket,
                                                  const std::string& prefix,
                                                  const std::string& after_key, int64_t after_seq,
                                                  int limit) override {
    return s_.Read([&](sql::Connection& db) -> Result<std::vector<ObjectVersion>> {
      std::vector<ObjectVersion> out;
      TM_ASSIGN(auto* st,
                db.Prepare("SELECT " + std::string(kVersionColumns) +
                           " FROM s3_object_versions WHERE bucket = ? AND (key > ? OR "
                           "(key = ? AND seq < ?)) AND key >= ? ORDER BY key, seq DESC LIMIT ?"));
      st->Bind({bucket, after_key, after_key, after_seq, prefix, int64_t{limit}});
      while (true) {
        TM_ASSIGN(bool row, st->Step());
        if (!row) break;
        ObjectVersion v = VersionRow(bucket, *st);
        // Keys are in byte order, so the prefix's keys are one run.
        if (!v.key.starts_with(prefix)) break;
        out.push_back(std::move(v));
      }
      st->Bind({});
      return out;
    });
  }

  Result<int64_t> CountVersions(const std::string& bucket) override {
    return s_.Read([&](sql::Connection& db) {
      return One(db, "SELECT COUNT(*) FROM s3_object_versions WHERE bucket = ?", {bucket},
                 "versions", [](sql::Statement& st) { return st.Int(0); });
    });
  }

  Result<bool> RemoveBucket(const std::string& name) override {
    return s_.Write([&](sql::Connection& db) -> Result<bool> {
      TM_TRY(Run(db, "DELETE FROM s3_bucket_tags WHERE bucket = ?", {name}));
      TM_TRY(Run(db, "DELETE FROM s3_object_versions WHERE bucket = ?", {name}));
      TM_TRY(Run(db, "DELETE FROM s3_buckets WHERE name = ?", {name}));
      return db.Changes() > 0;
    });
  }

 private:
  // The columns Row reads, in its order.
  static constexpr char kColumns[] =
      "created_ms, acl, cors, bytes, objects, reconciled_ms, location, public_access_block, "
      "versioning, object_lock";
  static S3Bucket Row(std::string name, sql::Statement& st, int at) {
    S3Bucket b;
    b.name = std::move(name);
    b.created_ms = st.Int(at);
    b.acl = st.Text(at + 1);
    b.cors = st.Text(at + 2);
    b.usage = BucketUsage{st.Int(at + 3), st.Int(at + 4), st.Int(at + 5)};
    b.location = st.Text(at + 6);
    b.public_access_block = st.Text(at + 7);
    b.versioning = st.Text(at + 8);
    b.object_lock = st.Text(at + 9);
    return b;
  }

  static constexpr char kVersionColumns[] =
      "key, version_id, seq, delete_marker, size, etag, modified_ms";
  static ObjectVersion VersionRow(const std::string& bucket, sql::Statement& st) {
    ObjectVersion v;
    v.bucket = bucket;
    v.key = st.Text(0);
    v.version_id = st.Text(1);
    v.seq = st.Int(2);
    v.delete_marker = st.Int(3) != 0;
    v.size = static_cast<uint64_t>(st.Int(4));
    v.etag = st.Text(5);
    v.modified_ms = st.Int(6);
    return v;
  }
  static Result<std::optional<ObjectVersion>> OneVersion(sql::Connection& db,
                                                         const std::string& where,
                                                         const std::vector<sql::Value>& params) {
    TM_ASSIGN(auto* st, db.Prepare("SELECT " + std::string(kVersionColumns) +
                                   " FROM s3_object_versions " + where));
    TM_ASSIGN(bool row, st->Bind(params).Step());
    std::optional<ObjectVersion> found;
    if (row) found = VersionRow(std::get<std::string>(params[0]), *st);
    st->Bind({});
    return found;
  }

  static Result<S3Bucket> Find(sql::Connection& db, const std::string& name) {
    TM_ASSIGN(S3Bucket bucket,
              One(db, "SELECT " + std::string(kColumns) + " FROM s3_buckets WHERE name = ?", {name},
                  "bucket " + name, [&](sql::Statement& st) { return Row(name, st, 0); }));
    TM_ASSIGN(auto* st, db.Prepare("SELECT key, value FROM s3_bucket_tags WHERE bucket = ?"));
    st->Bind({name});
    while (true) {
      TM_ASSIGN(bool row, st->Step());
      if (!row) break;
      bucket.tags[st->Text(0)] = st->Text(1);
    }
    return bucket;
  }

  static Result<void> WriteTags(sql::Connection& db, const std::string& name,
                                const std::map<std::string, std::string>& tags) {
    for (const auto& [key, value] : tags) {
      TM_TRY(Run(db, "INSERT INTO s3_bucket_tags VALUES(?, ?, ?)", {name, key, value}));
    }
    return {};
  }

  Scope s_;
};

}  // namespace

std::unique_ptr<BucketStore> NewBucketStore(Scope scope) {
  return std::make_unique<SqlBuckets>(scope);
}

}  // namespace tablemere::metastore::sql_backend
