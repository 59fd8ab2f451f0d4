#include "iceberg/scan_planner.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <map>

#include "iceberg/delete_index.h"

namespace tablemere::iceberg {
namespace {

using Json = nlohmann::json;

std::unexpected<Error> Bad(std::string message) {
  return Fail(ErrorCode::kInvalidInput, std::move(message));
}

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Result<std::optional<int64_t>> OptionalLong(const Json& body, const char* key) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return std::optional<int64_t>();
  if (!it->is_number_integer()) return Bad(std::string(key) + " must be an integer");
  return std::optional<int64_t>(it->get<int64_t>());
}

Result<std::optional<std::vector<std::string>>> OptionalNames(const Json& body, const char* key) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return std::optional<std::vector<std::string>>();
  if (!it->is_array()) return Bad(std::string(key) + " must be a list of column names");
  std::vector<std::string> out;
  for (const auto& n : *it) {
    if (!n.is_string()) return Bad(std::string(key) + " must be a list of column names");
    out.push_back(n.get<std::string>());
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

Result<bool> OptionalBool(const Json& body, const char* key, bool fallback) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) return Bad(std::string(key) + " must be true or false");
  return it->get<bool>();
}

// Every column name of a schema, nested ones dotted (structs, lists and maps too: a
// select may name any of them).
void AllNames(const Json& type, const std::string& prefix, std::vector<std::string>& out,
              int depth = 0) {
  if (!type.is_object() || depth > 64) return;
  const std::string kind = type.value("type", "");
  if (kind == "struct" && type.contains("fields") && type["fields"].is_array()) {
    for (const auto& f : type["fields"]) {
      if (!f.is_object() || !f.contains("name") || !f["name"].is_string()) continue;
      std::string name = prefix + f["name"].get<std::string>();
      out.push_back(name);
      if (f.contains("type")) AllNames(f["type"], name + ".", out, depth + 1);
    }
  } else if (kind == "list" && type.contains("element")) {
    out.push_back(prefix + "element");
    AllNames(type["element"], prefix + "element.", out, depth + 1);
  } else if (kind == "map") {
    out.push_back(prefix + "key");
    out.push_back(prefix + "value");
    if (type.contains("key")) AllNames(type["key"], prefix + "key.", out, depth + 1);
    if (type.contains("value")) AllNames(type["value"], prefix + "value.", out, depth + 1);
  }
}

const Json* FindById(const Json& metadata, const char* list, const char* id_key, int64_t id) {
  auto it = metadata.find(list);
  if (it == metadata.end() || !it->is_array()) return nullptr;
  for (const auto& item : *it) {
    auto v = item.find(id_key);
    if (v != item.end() && v->is_number_integer() && v->get<int64_t>() == id) return &item;
  }
  return nullptr;
}

// The partition tuple's types of `spec` over the schema's leaf columns (a field whose
// source column was dropped gets a default type that is never read: no predicate projects onto it).
std::vector<PartitionField> TypesOf(const PartitionSpec& spec,
                                    const std::vector<SchemaField>& fields) {
  std::vector<PartitionField> out;
  for (const auto& pf : spec.fields) {
    PartitionField f{pf.name, pf.field_id, PrimitiveType{}};
    for (const auto& s : fields) {
      if (s.id != pf.source_id) continue;
      if (auto t = ResultType(pf.transform, s.type)) f.type = *t;
    }
    out.push_back(std::move(f));
  }
  return out;
}

int64_t LiveFiles(const ManifestFile& f) {
  if (!f.added_files && !f.existing_files) return 100;  // not counted: a guess
  return f.added_files.value_or(0) + f.existing_files.value_or(0);
}

}  // namespace

Result<ScanRequest> ScanRequest::FromJson(const Json& body) {
  if (!body.is_object()) return Bad("the scan plan request must be a JSON object");
  ScanRequest r;
  TM_ASSIGN(r.snapshot_id, OptionalLong(body, "snapshot-id"));
  TM_ASSIGN(r.start_snapshot_id, OptionalLong(body, "start-snapshot-id"));
  TM_ASSIGN(r.end_snapshot_id, OptionalLong(body, "end-snapshot-id"));
  TM_ASSIGN(r.min_rows_requested, OptionalLong(body, "min-rows-requested"));
  TM_ASSIGN(r.select, OptionalNames(body, "select"));
  TM_ASSIGN(r.stats_fields, OptionalNames(body, "stats-fields"));
  TM_ASSIGN(r.case_sensitive, OptionalBool(body, "case-sensitive", true));
  TM_ASSIGN(r.use_snapshot_schema, OptionalBool(body, "use-snapshot-schema", false));
  if (body.contains("filter")) r.filter = body["filter"];
  if (r.start_snapshot_id && !r.end_snapshot_id) {
    return Bad("end-snapshot-id is required with start-snapshot-id");
  }
  if (r.snapshot_id && (r.start_snapshot_id || r.end_snapshot_id)) {
    return Bad("snapshot-id cannot be combined with start-snapshot-id or end-snapshot-id");
  }
  return r;
}

Json ScanRequest::ToJson() const {
  Json j = {{"case-sensitive", case_sensitive}, {"use-snapshot-schema", use_snapshot_schema}};
  if (snapshot_id) j["snapshot-id"] = *snapshot_id;
  if (start_snapshot_id) j["start-snapshot-id"] = *start_snapshot_id;
  if (end_snapshot_id) j["end-snapshot-id"] = *end_snapshot_id;
  if (min_rows_requested) j["min-rows-requested"] = *min_rows_requested;
  if (select) j["select"] = *select;
  if (stats_fields) j["stats-fields"] = *stats_fields;
  if (!filter.is_null()) j["filter"] = filter;
  return j;
}

Result<ScanPlanner> ScanPlanner::Prepare(const Json& metadata, const ScanRequest& request,
                                         const ReadFile& read, int64_t files_per_group) {
  ScanPlanner p;
  // The snapshot: asked for, the end of an incremental range, or the current one.
  std::optional<int64_t> wanted =
      request.snapshot_id ? request.snapshot_id : request.end_snapshot_id;
  if (!wanted) {
    auto current = metadata.find("current-snapshot-id");
    if (current != metadata.end() && current->is_number_integer() && current->get<int64_t>() >= 0) {
      wanted = current->get<int64_t>();
    }
  }
  const Json* snapshot = nullptr;
  if (wanted) {
    snapshot = FindById(metadata, "snapshots", "snapshot-id", *wanted);
    if (!snapshot) return Bad("the table has no snapshot " + std::to_string(*wanted));
    p.snapshot_id_ = *wanted;
  }
  // The schema: the snapshot's when asked (time travel), else the table's current one.
  int64_t schema_id = metadata.value("current-schema-id", int64_t{0});
  if (request.use_snapshot_schema && snapshot && snapshot->contains("schema-id") &&
      (*snapshot)["schema-id"].is_number_integer()) {
    schema_id = (*snapshot)["schema-id"].get<int64_t>();
  }
  const Json* schema = FindById(metadata, "schemas", "schema-id", schema_id);
  if (!schema && metadata.contains("schema")) schema = &metadata["schema"];  // v1
  if (!schema)
    return Fail(ErrorCode::kInvalidInput,
                "the table metadata has no schema " + std::to_string(schema_id));
  TM_ASSIGN(p.fields_, FlattenSchema(*schema));
  auto same = [&](const std::string& a, const std::string& b) {
    return request.case_sensitive ? a == b : Lower(a) == Lower(b);
  };
  if (request.select) {
    // Iceberg's reserved metadata columns, which readers select beside the table's own.
    std::vector<std::string> names = {"_file",
                                      "_pos",
                                      "_deleted",
                                      "_spec_id",
                                      "_partition",
                                      "_row_id",
                                      "_last_updated_sequence_number",
                                      "_change_type",
                                      "_change_ordinal",
                                      "_commit_snapshot_id"};
    AllNames(*schema, "", names);
    for (const auto& column : *request.select) {
      bool found = false;
      for (const auto& n : names) found = found || same(n, column);
      if (!found) return Bad("select names no column of the table: '" + column + "'");
    }
  }
  if (request.stats_fields) {
    for (const auto& column : *request.stats_fields) {
      const SchemaField* found = nullptr;
      for (const auto& f : p.fields_) {
        if (same(f.name, column)) found = &f;
      }
      if (!found)
        return Bad("stats-fields names no primitive column of the table: '" + column + "'");
      p.stats_.push_back(*found);
    }
  }
  p.filter_ = Expression::True();
  if (!request.filter.is_null()) {
    TM_ASSIGN(ExpressionPtr parsed, ParseExpression(request.filter));
    TM_ASSIGN(ExpressionPtr bound, Bind(parsed, p.fields_, request.case_sensitive));
    p.filter_ = RewriteNot(bound);
    p.has_filter_ = true;
  }
  if (metadata.contains("partition-specs") && metadata["partition-specs"].is_array()) {
    for (const auto& s : metadata["partition-specs"]) {
      TM_ASSIGN(PartitionSpec spec, ParsePartitionSpec(s));
      p.projected_[spec.spec_id] = ProjectInclusive(p.filter_, spec, p.fields_);
      p.specs_[spec.spec_id] = std::move(spec);
    }
  } else if (metadata.contains("partition-spec") && metadata["partition-spec"].is_array()) {
    TM_ASSIGN(PartitionSpec spec,
              ParsePartitionSpec(Json{{"spec-id", 0}, {"fields", metadata["partition-spec"]}}));
    p.projected_[0] = ProjectInclusive(p.filter_, spec, p.fields_);
    p.specs_[0] = std::move(spec);
  }
  if (!snapshot || p.filter_->op == Op::kFalse) return p;

  // The manifests: the snapshot's, or each appended snapshot's own in an incremental scan.
  std::vector<std::pair<const Json*, std::optional<int64_t>>> lists;
  if (request.end_snapshot_id) {
    const Json* s = snapshot;
    while (s) {
      const int64_t id = s->value("snapshot-id", int64_t{-1});
      if (request.start_snapshot_id && id == *request.start_snapshot_id) break;
      const Json& summary = s->contains("summary") ? (*s)["summary"] : Json::object();
      if (summary.value("operation", "") == "append") lists.push_back({s, id});
      auto parent = s->find("parent-snapshot-id");
      s = parent != s->end() && parent->is_number_integer()
              ? FindById(metadata, "snapshots", "snapshot-id", parent->get<int64_t>())
              : nullptr;
      if (!s && request.start_snapshot_id) {
        return Bad("start-snapshot-id " + std::to_string(*request.start_snapshot_id) +
                   " is not an ancestor of end-snapshot-id " +
                   std::to_string(*request.end_snapshot_id));
      }
    }
  } else {
    lists.push_back({snapshot, std::nullopt});
  }
  std::vector<Listed> data;
  for (const auto& [s, only] : lists) {
    if (!s->contains("manifest-list") || !(*s)["manifest-list"].is_string()) {
      return Bad("snapshot " + std::to_string(s->value("snapshot-id", int64_t{-1})) +
                 " has no manifest list (format v1 manifests arrays are not planned here)");
    }
    const std::string location = (*s)["manifest-list"].get<std::string>();
    TM_ASSIGN(avro::Container list, read(location));
    auto files = ReadManifestList(list);
    if (!files) return Fail(ErrorCode::kInvalidInput, location + ": " + files.error().message);
    for (auto& f : *files) {
      if (only && (f.content != ManifestContent::kData || f.added_snapshot_id != *only)) continue;
      if ((f.added_files || f.existing_files) && LiveFiles(f) == 0) {
        p.manifests_skipped_++;
        continue;
      }
      auto spec = p.specs_.find(f.spec_id);
      if (spec != p.specs_.end() && !SummariesMightMatch(p.projected_[f.spec_id], f.partitions,
                                                         TypesOf(spec->second, p.fields_))) {
        p.manifests_skipped_++;
        continue;
      }
      if (f.content == ManifestContent::kDeletes) {
        p.delete_manifests_.push_back(std::move(f));
      } else {
        data.push_back({std::move(f), only});
      }
    }
  }
  int64_t in_group = 0;
  for (auto& m : data) {
    if (p.groups_.empty() || in_group >= std::max<int64_t>(files_per_group, 1)) {
      p.groups_.emplace_back();
      in_group = 0;
    }
    in_group += LiveFiles(m.file);
    p.groups_.back().push_back(std::move(m));
  }
  return p;
}

Result<ScanTasks> ScanPlanner::Plan(size_t index, const ReadFile& read) const {
  ScanTasks out;
  out.stats = stats_;
  out.manifests_skipped = manifests_skipped_;
  if (index >= groups_.size()) return out;
  auto read_manifest = [&](const ManifestFile& f) -> Result<Manifest> {
    TM_ASSIGN(avro::Container c, read(f.path));
    out.manifests_read++;
    auto m = ReadManifest(c, f);
    if (!m) return Fail(ErrorCode::kInvalidInput, f.path + ": " + m.error().message);
    return std::move(*m);
  };
  // Every delete file that may apply, indexed (entries stay where the deque put them).
  std::deque<Manifest> delete_manifests;
  DeleteIndex index_of_deletes;
  for (const auto& f : delete_manifests_) {
    TM_ASSIGN(Manifest m, read_manifest(f));
    delete_manifests.push_back(std::move(m));
    for (const auto& e : delete_manifests.back().entries) {
      if (e.Live() && e.file.content != FileContent::kData) index_of_deletes.Add(e, f.spec_id);
    }
  }
  std::map<const ManifestEntry*, size_t> delete_slot;
  for (const auto& listed : groups_[index]) {
    TM_ASSIGN(Manifest m, read_manifest(listed.file));
    const int32_t spec_id = listed.file.spec_id;
    auto spec = specs_.find(spec_id);
    auto projected = projected_.find(spec_id);
    for (auto& e : m.entries) {
      if (!e.Live() || e.file.content != FileContent::kData) continue;
      if (listed.only_snapshot &&
          (e.status != EntryStatus::kAdded || e.snapshot_id != *listed.only_snapshot)) {
        continue;
      }
      if ((projected != projected_.end() &&
           !PartitionMightMatch(projected->second, e.file.partition)) ||
          !MetricsMightMatch(filter_, e.file)) {
        out.files_skipped++;
        continue;
      }
      FileScanTask task;
      task.spec_id = spec_id;
      if (!listed.only_snapshot) {
        for (const ManifestEntry* d : index_of_deletes.For(e, spec_id)) {
          auto [slot, added] = delete_slot.emplace(d, out.deletes.size());
          if (added) {
            int32_t delete_spec = 0;
            for (size_t i = 0; i < delete_manifests.size(); i++) {
              const auto& entries = delete_manifests[i].entries;
              if (!entries.empty() && d >= &entries.front() && d <= &entries.back()) {
                delete_spec = delete_manifests_[i].spec_id;
              }
            }
            out.deletes.push_back({d->file, delete_spec});
          }
          task.deletes.push_back(slot->second);
        }
      }
      if (has_filter_) {
        task.residual =
            spec != specs_.end() ? Residual(filter_, spec->second, e.file.partition) : filter_;
      }
      task.file = std::move(e.file);
      out.tasks.push_back(std::move(task));
    }
  }
  return out;
}

}  // namespace tablemere::iceberg
