#include "maintenance/snapshot_writer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "catalog/manifest_files.h"
#include "common/crypto.h"
#include "common/strings.h"
#include "iceberg/deletion_vector.h"

namespace tablemere::maintenance::snapshot_writer {

Error Skip(const std::string& why) {
  return Error{ErrorCode::kConflict, why, {}}.With("maintenance", "skipped");
}

bool IsSkip(const Error& e) { return e.Detail("maintenance") == "skipped"; }

int64_t IntProperty(const Json& metadata, const char* name, int64_t fallback) {
  const Json props = metadata.value("properties", Json::object());
  auto it = props.find(name);
  if (it == props.end() || !it->is_string()) return fallback;
  auto n = ParseInt(it->get<std::string>());
  return n && *n > 0 ? *n : fallback;
}

// The largest Puffin file read for a deletion vector (they hold one small blob per data
// file a commit deleted from).
constexpr size_t kMaxPuffinBytes = size_t{256} << 20;

Result<std::vector<int64_t>> DeletionVectors::Positions(const std::string& path, int64_t offset,
                                                        int64_t size, int64_t rows) {
  auto read = read_.find(path);
  if (read == read_.end()) {
    TM_ASSIGN(std::string bytes, files_.ReadBytes(w_, path, kMaxPuffinBytes));
    read = read_.emplace(path, std::move(bytes)).first;
  }
  auto blob = iceberg::PuffinBlob(read->second, offset, size);
  if (!blob) return Fail(ErrorCode::kInvalidInput, path + ": " + blob.error().message);
  auto positions = iceberg::DecodeDeletionVector(*blob, rows);
  if (!positions) return Fail(ErrorCode::kInvalidInput, path + ": " + positions.error().message);
  return positions;
}

Result<int64_t> AssignFirstRowIds(avro::Container& list, int64_t next) {
  auto files = iceberg::ReadManifestList(list);
  if (!files) return Fail(ErrorCode::kInternal, "the new manifest list: " + files.error().message);
  for (size_t i = 0; i < files->size(); i++) {
    iceberg::ManifestFile& f = (*files)[i];
    if (f.content != iceberg::ManifestContent::kData || f.first_row_id) continue;
    f.first_row_id = next;
    next += f.existing_rows.value_or(0) + f.added_rows.value_or(0);
    TM_ASSIGN(list.records[i], iceberg::ToAvro(*list.schema.root, f));
  }
  return next;
}

Written::~Written() {
  if (keep_) return;
  for (const auto& f : locations_) (void)files_.Delete(w_, f);
}

iceberg::ManifestEntry Entry(const Manifest& m, size_t index, iceberg::EntryStatus status,
                             int64_t snapshot_id) {
  iceberg::ManifestEntry e = m.typed.entries.at(index);
  e.status = status;
  if (status == iceberg::EntryStatus::kDeleted) e.snapshot_id = snapshot_id;
  return e;
}

iceberg::DataFile WrittenFile(const protocol::FileMetrics& m) {
  iceberg::DataFile f;
  f.format = "PARQUET";
  f.record_count = m.record_count;
  f.file_size_in_bytes = m.file_size_in_bytes;
  f.column_sizes = m.column_sizes;
  f.value_counts = m.value_counts;
  f.null_value_counts = m.null_value_counts;
  f.lower_bounds = m.lower_bounds;
  f.upper_bounds = m.upper_bounds;
  f.split_offsets = m.split_offsets;
  // Required in format v1 manifests (Iceberg Java's default); later ones have no such field.
  f.block_size_in_bytes = int64_t{64} << 20;
  return f;
}

Result<iceberg::ManifestFile> WriteManifest(WarehouseFiles& files, Random& random,
                                            const metastore::Warehouse& w,
                                            const std::string& location, const Manifest& model,
                                            const std::vector<iceberg::ManifestEntry>& entries,
                                            int64_t snapshot_id, int64_t sequence,
                                            Written& written) {
  avro::Container out;
  out.schema = model.container.schema;
  out.codec = model.container.codec;
  out.metadata = model.container.metadata;
  int64_t counts[3] = {0, 0, 0}, rows[3] = {0, 0, 0};
  int64_t min_sequence = INT64_MAX;
  std::vector<const std::vector<std::optional<iceberg::Literal>>*> partitions;
  for (const auto& e : entries) {
    auto v = iceberg::ToAvro(*out.schema.root, e);
    if (!v) return Fail(ErrorCode::kInvalidInput, model.path + ": " + v.error().message);
    out.records.push_back(std::move(*v));
    const auto status = static_cast<size_t>(e.status);
    counts[status]++;
    rows[status] += e.file.record_count;
    min_sequence = std::min(min_sequence, e.sequence_number);
    partitions.push_back(&e.file.partition);
  }
  TM_ASSIGN(std::string bytes, avro::WriteContainer(out, random.Bytes(16)));
  const std::string path = location + "metadata/" + random.Uuid() + "-m0.avro";
  written.Add(path);
  TM_TRY(files.WriteBytes(w, path, bytes, "application/octet-stream"));
  iceberg::ManifestFile record = model.listed;
  record.partitions = iceberg::SummarizePartitions(model.typed.partition_type, partitions);
  record.path = path;
  record.length = static_cast<int64_t>(bytes.size());
  record.sequence_number = sequence;
  record.min_sequence_number = min_sequence == INT64_MAX ? sequence : min_sequence;
  record.added_snapshot_id = snapshot_id;
  record.added_files = counts[kStatusAdded];
  record.existing_files = counts[kStatusExisting];
  record.deleted_files = counts[kStatusDeleted];
  record.added_rows = rows[kStatusAdded];
  record.existing_rows = rows[kStatusExisting];
  record.deleted_rows = rows[kStatusDeleted];
  record.key_metadata.reset();
  // Format v3: assigned when the list is written (CommitReplace), never the model's.
  record.first_row_id.reset();
  return record;
}

Result<LoadedManifests> LoadManifests(WarehouseFiles& files, const metastore::Warehouse& w,
                                      const std::string& list_location) {
  LoadedManifests out;
  TM_ASSIGN(out.list, ReadManifestFile(files, w, WarehouseFiles::Canonical(list_location)));
  auto listed = iceberg::ReadManifestList(out.list);
  if (!listed) return Fail(ErrorCode::kInvalidInput, list_location + ": " + listed.error().message);
  for (size_t i = 0; i < listed->size(); i++) {
    Manifest m;
    m.listed = std::move((*listed)[i]);
    m.list_value = out.list.records[i];
    m.path = WarehouseFiles::Canonical(m.listed.path);
    m.sequence_number = m.listed.sequence_number;
    m.added_snapshot_id = m.listed.added_snapshot_id;
    m.spec_id = m.listed.spec_id;
    m.content = static_cast<int>(m.listed.content);
    TM_ASSIGN(m.container, ReadManifestFile(files, w, m.path));
    auto typed = iceberg::ReadManifest(m.container, m.listed);
    if (!typed) return Fail(ErrorCode::kInvalidInput, m.path + ": " + typed.error().message);
    m.typed = std::move(*typed);
    out.manifests.push_back(std::move(m));
  }
  return out;
}

Result<Head> CurrentHead(const Json& metadata) {
  const Json& current_id =
      metadata.contains("current-snapshot-id") ? metadata["current-snapshot-id"] : Json();
  Head head;
  head.id = current_id.is_number_integer() ? current_id.get<int64_t>() : -1;
  const Json* found = nullptr;
  if (metadata.contains("snapshots") && metadata["snapshots"].is_array()) {
    for (const auto& s : metadata["snapshots"]) {
      if (s.value("snapshot-id", int64_t{-2}) == head.id) found = &s;
    }
  }
  if (head.id < 0 || !found) return Fail(Skip("the table has no snapshot"));
  if (!found->contains("manifest-list")) return Fail(Skip("the snapshot has no manifest list"));
  head.snapshot = *found;
  head.location = WarehouseFiles::Canonical(metadata.at("location").get<std::string>());
  while (head.location.ends_with('/')) head.location.pop_back();
  head.location += "/";
  return head;
}

int64_t NewSnapshotId(Random& random) {
  int64_t id = 0;
  std::string b = random.Bytes(8);
  std::memcpy(&id, b.data(), 8);
  id &= INT64_MAX;
  return id == 0 ? 1 : id;
}

Result<void> CommitReplace(CatalogService& catalog, const Clock& clock, Random& random,
                           const CatalogPrincipal& principal, const metastore::Warehouse& w,
                           const TableIdent& ident, const Json& metadata, int64_t current,
                           const avro::Container& list, std::vector<avro::Value> records,
                           const ReplaceSnapshot& snapshot, const std::string& job,
                           Written& written) {
  std::string location = WarehouseFiles::Canonical(metadata.at("location").get<std::string>());
  while (location.ends_with('/')) location.pop_back();
  avro::Container new_list;
  new_list.schema = list.schema;
  new_list.codec = list.codec;
  new_list.metadata = list.metadata;
  new_list.metadata["snapshot-id"] = std::to_string(snapshot.snapshot_id);
  new_list.metadata["parent-snapshot-id"] = std::to_string(current);
  // Format v1 has no sequence numbers (every file's is 0).
  const bool v1 = metadata.value("format-version", 1) == 1;
  if (v1) {
    new_list.metadata.erase("sequence-number");
  } else {
    new_list.metadata["sequence-number"] = std::to_string(snapshot.sequence);
  }
  new_list.records = std::move(records);
  std::optional<int64_t> first_row_id, added_rows;
  if (metadata.value("format-version", 1) >= 3) {
    first_row_id = metadata.value("next-row-id", int64_t{0});
    TM_ASSIGN(const int64_t next, AssignFirstRowIds(new_list, *first_row_id));
    added_rows = next - *first_row_id;
    new_list.metadata["first-row-id"] = std::to_string(*first_row_id);
  }
  TM_ASSIGN(std::string bytes, avro::WriteContainer(new_list, random.Bytes(16)));
  const std::string list_path = location + "/metadata/snap-" +
                                std::to_string(snapshot.snapshot_id) + "-1-" + random.Uuid() +
                                ".avro";
  written.Add(list_path);
  TM_TRY(catalog.files().WriteBytes(w, list_path, bytes, "application/octet-stream"));

  Json added = {{"snapshot-id", snapshot.snapshot_id},  {"parent-snapshot-id", current},
                {"sequence-number", snapshot.sequence}, {"timestamp-ms", clock.NowMillis()},
                {"manifest-list", list_path},           {"summary", snapshot.summary}};
  if (metadata.contains("current-schema-id")) added["schema-id"] = metadata["current-schema-id"];
  if (v1) added.erase("sequence-number");
  if (first_row_id) {
    added["first-row-id"] = *first_row_id;
    added["added-rows"] = *added_rows;
  }
  Json main_ref = {{"action", "set-snapshot-ref"},
                   {"ref-name", "main"},
                   {"type", "branch"},
                   {"snapshot-id", snapshot.snapshot_id}};
  const Json refs = metadata.value("refs", Json::object());
  if (refs.contains("main")) {
    for (const char* k : {"min-snapshots-to-keep", "max-snapshot-age-ms", "max-ref-age-ms"}) {
      if (refs["main"].contains(k)) main_ref[k] = refs["main"][k];
    }
  }
  Json requirements = Json::array(
      {{{"type", "assert-table-uuid"}, {"uuid", metadata.at("table-uuid")}},
       {{"type", "assert-ref-snapshot-id"}, {"ref", "main"}, {"snapshot-id", current}}});
  Json updates = Json::array({{{"action", "add-snapshot"}, {"snapshot", added}}, main_ref});
  auto committed = catalog.Commit(
      principal, w, {TableChange{ident, requirements, updates, {}, CommitOrigin::kMaintenance}});
  if (!committed) {
    if (committed.error().code == ErrorCode::kConflict) {
      return Fail(Skip("the table changed while the " + job + " ran; the next run retries"));
    }
    return Fail(committed.error());
  }
  written.Keep();
  return {};
}

}  // namespace tablemere::maintenance::snapshot_writer
