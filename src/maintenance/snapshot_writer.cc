#include "maintenance/snapshot_writer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "catalog/manifest_files.h"
#include "common/crypto.h"
#include "common/strings.h"

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

// The file a manifest entry describes, with inherited fields made explicit (a rewritten
// manifest no longer inherits from the list entry that carried it).
Json EntryJson(const Manifest& m, size_t index) {
  Json entry = avro::ToJson(*m.container.schema.root, m.container.records.at(index));
  const iceberg::ManifestEntry& typed = m.typed.entries.at(index);
  entry["snapshot_id"] = typed.snapshot_id;
  if (entry.contains("sequence_number")) entry["sequence_number"] = typed.sequence_number;
  if (entry.contains("file_sequence_number")) {
    entry["file_sequence_number"] = typed.file_sequence_number;
  }
  Json& file = entry["data_file"];
  if (file.contains("first_row_id") && typed.file.first_row_id) {
    file["first_row_id"] = *typed.file.first_row_id;
  }
  return entry;
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

// Partition values compare and serialize (Iceberg's single-value encoding) by their Avro
// type; decimals and uuids are refused (their encodings differ from Avro's bytes).
bool Comparable(const avro::Node& n) {
  const avro::Node& t =
      n.type == avro::Type::kUnion
          ? *(n.branches.back()->type == avro::Type::kNull ? n.branches.front() : n.branches.back())
          : n;
  if (t.logical_type == "decimal" || t.logical_type == "uuid") return false;
  switch (t.type) {
    case avro::Type::kInt:
    case avro::Type::kLong:
    case avro::Type::kFloat:
    case avro::Type::kDouble:
    case avro::Type::kBoolean:
    case avro::Type::kString:
    case avro::Type::kBytes:
    case avro::Type::kFixed:
    case avro::Type::kNull:
      return true;
    default:
      return false;
  }
}

namespace {

bool Less(const avro::Value& a, const avro::Value& b) {
  switch (a.type) {
    case avro::Type::kInt:
    case avro::Type::kLong:
      return a.i < b.i;
    case avro::Type::kFloat:
    case avro::Type::kDouble:
      return a.d < b.d;
    case avro::Type::kBoolean:
      return a.b < b.b;
    default:
      return std::lexicographical_compare(
          a.s.begin(), a.s.end(), b.s.begin(), b.s.end(), [](char x, char y) {
            return static_cast<unsigned char>(x) < static_cast<unsigned char>(y);
          });
  }
}

std::string SingleValue(const avro::Value& v) {
  std::string out;
  auto little = [&](auto x) { out.append(reinterpret_cast<const char*>(&x), sizeof x); };
  switch (v.type) {
    case avro::Type::kInt:
      little(static_cast<int32_t>(v.i));
      break;
    case avro::Type::kLong:
      little(v.i);
      break;
    case avro::Type::kFloat:
      little(static_cast<float>(v.d));
      break;
    case avro::Type::kDouble:
      little(v.d);
      break;
    case avro::Type::kBoolean:
      out += static_cast<char>(v.b ? 1 : 0);
      break;
    default:
      out = v.s;
  }
  return out;
}

}  // namespace

// The manifest list's partition summaries of a manifest holding `partitions` (values
// of the partition record `node`).
Result<Json> Summaries(const avro::Node& node, const std::vector<Json>& partitions) {
  Json out = Json::array();
  for (const auto& field : node.fields) {
    bool nulls = false, nans = false, seen = false;
    avro::Value lo, hi;
    for (const auto& p : partitions) {
      TM_ASSIGN(avro::Value v,
                avro::FromJson(*field.type, p.contains(field.name) ? p[field.name] : Json()));
      const avro::Value& value = v.Unwrapped();
      if (value.type == avro::Type::kNull) {
        nulls = true;
        continue;
      }
      if ((value.type == avro::Type::kFloat || value.type == avro::Type::kDouble) &&
          std::isnan(value.d)) {
        nans = true;
        continue;
      }
      if (!seen || Less(value, lo)) lo = value;
      if (!seen || Less(hi, value)) hi = value;
      seen = true;
    }
    out.push_back({{"contains_null", nulls},
                   {"contains_nan", nans},
                   {"lower_bound", seen ? Json(crypto::HexEncode(SingleValue(lo))) : Json()},
                   {"upper_bound", seen ? Json(crypto::HexEncode(SingleValue(hi))) : Json()}});
  }
  return out;
}

Written::~Written() {
  if (keep_) return;
  for (const auto& f : locations_) (void)files_.Delete(w_, f);
}

// Writes one manifest of `entries` (manifest entries as JSON, inherited fields explicit)
// in the Avro schema and with the file metadata of `model`, and answers its manifest
// list record (model's, with this manifest's path, counts, sequence numbers and partition
// summaries).
Result<Json> WriteManifest(WarehouseFiles& files, Random& random, const metastore::Warehouse& w,
                           const std::string& location, const Manifest& model,
                           const avro::Node& partition_node, const std::vector<Json>& entries,
                           int64_t snapshot_id, int64_t sequence, Written& written) {
  avro::Container out;
  out.schema = model.container.schema;
  out.codec = model.container.codec;
  out.metadata = model.container.metadata;
  int64_t counts[3] = {0, 0, 0}, rows[3] = {0, 0, 0};
  int64_t min_sequence = INT64_MAX;
  std::vector<Json> partitions;
  for (const Json& e : entries) {
    TM_ASSIGN(avro::Value v, avro::FromJson(*out.schema.root, e));
    out.records.push_back(std::move(v));
    const int64_t status = e.value("status", kStatusExisting);
    if (status < 0 || status > 2) return Fail(ErrorCode::kInternal, "an entry status out of range");
    counts[status]++;
    rows[status] += e["data_file"].value("record_count", int64_t{0});
    const Json& seq = e.contains("sequence_number") ? e["sequence_number"] : Json();
    min_sequence = std::min(min_sequence, seq.is_number_integer() ? seq.get<int64_t>() : sequence);
    partitions.push_back(e["data_file"].value("partition", Json::object()));
  }
  TM_ASSIGN(std::string bytes, avro::WriteContainer(out, random.Bytes(16)));
  const std::string path = location + "metadata/" + random.Uuid() + "-m0.avro";
  written.Add(path);
  TM_TRY(files.WriteBytes(w, path, bytes, "application/octet-stream"));
  Json record = model.list_entry;
  TM_ASSIGN(record["partitions"], Summaries(partition_node, partitions));
  record["manifest_path"] = path;
  record["manifest_length"] = static_cast<int64_t>(bytes.size());
  record["sequence_number"] = sequence;
  record["min_sequence_number"] = min_sequence == INT64_MAX ? sequence : min_sequence;
  record["added_snapshot_id"] = snapshot_id;
  record["added_files_count"] = counts[kStatusAdded];
  record["existing_files_count"] = counts[kStatusExisting];
  record["deleted_files_count"] = counts[kStatusDeleted];
  // Format v1 lists as Iceberg Java writes them name the same fields (ids 504-506) so.
  record["added_data_files_count"] = counts[kStatusAdded];
  record["existing_data_files_count"] = counts[kStatusExisting];
  record["deleted_data_files_count"] = counts[kStatusDeleted];
  record["added_rows_count"] = rows[kStatusAdded];
  record["existing_rows_count"] = rows[kStatusExisting];
  record["deleted_rows_count"] = rows[kStatusDeleted];
  record["key_metadata"] = nullptr;
  // Format v3: assigned when the list is written (CommitReplace), never the model's.
  if (record.contains("first_row_id")) record["first_row_id"] = nullptr;
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
    m.list_entry = avro::ToJson(*out.list.schema.root, m.list_value);
    m.path = WarehouseFiles::Canonical(m.listed.path);
    m.sequence_number = m.listed.sequence_number;
    m.added_snapshot_id = m.listed.added_snapshot_id;
    m.spec_id = m.listed.spec_id;
    m.content = static_cast<int>(m.listed.content);
    TM_ASSIGN(m.container, ReadManifestFile(files, w, m.path));
    auto typed = iceberg::ReadManifest(m.container, m.listed);
    if (!typed) return Fail(ErrorCode::kInvalidInput, m.path + ": " + typed.error().message);
    m.typed = std::move(*typed);
    // The writers need the partition record's node as the manifest has it.
    const avro::Node& entry = *m.container.schema.root;
    const avro::Node& data_file =
        *entry.fields[static_cast<size_t>(entry.FieldIndex("data_file"))].type;
    const int partition_index =
        data_file.type == avro::Type::kRecord ? data_file.FieldIndex("partition") : -1;
    if (partition_index < 0) return Fail(ErrorCode::kInvalidInput, m.path + " has no partition");
    m.partition_node = data_file.fields[static_cast<size_t>(partition_index)].type.get();
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

Json FileMetrics(const protocol::FileMetrics& m) {
  auto key_values = [](const auto& by_id, bool hex) {
    Json out = Json::array();
    for (const auto& [id, v] : by_id) {
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) {
        out.push_back({{"key", id}, {"value", hex ? crypto::HexEncode(v) : v}});
      } else {
        out.push_back({{"key", id}, {"value", v}});
      }
    }
    return out;
  };
  return Json{{"record_count", m.record_count},
              {"file_size_in_bytes", m.file_size_in_bytes},
              {"column_sizes", key_values(m.column_sizes, false)},
              {"value_counts", key_values(m.value_counts, false)},
              {"null_value_counts", key_values(m.null_value_counts, false)},
              {"lower_bounds", key_values(m.lower_bounds, true)},
              {"upper_bounds", key_values(m.upper_bounds, true)},
              {"split_offsets", m.split_offsets}};
}

}  // namespace tablemere::maintenance::snapshot_writer
