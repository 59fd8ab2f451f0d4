#include "catalog/table_compaction.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "accounts/account_service.h"
#include "avro/container.h"
#include "catalog/control_tables.h"
#include "catalog/manifest_files.h"
#include "catalog/snapshot_writer.h"
#include "common/crash_point.h"
#include "common/crypto.h"
#include "common/files.h"
#include "common/strings.h"
#include "common/subprocess.h"

namespace tablemere::catalog {
namespace {

using namespace snapshot_writer;  // NOLINT: the shared pieces of the maintenance commits

// A live data file: where its entry is and what it holds.
struct LiveFile {
  size_t manifest = 0, entry = 0;
  std::string path;
  int64_t size = 0, records = 0;
  int spec = 0;
  Json partition;
  int64_t sequence = 0;  // its data sequence number
  int64_t added_ms = 0;  // when the snapshot that added it was committed (0: expired)
  bool parquet = true;   // only Parquet files are rewritten
};

// A live delete file: position deletes (content 1) or equality deletes (2).
struct DeleteFile {
  size_t manifest = 0, entry = 0;
  std::string path;
  int content = 1;
  int64_t records = 0, size = 0;
  int spec = 0;
  Json partition;
  int64_t sequence = 0;
  std::string target;             // position deletes: the one data file, "" when unknown
  std::vector<int> equality_ids;  // equality deletes: the fields they compare

  // The spec's rules: a delete applies within its spec and partition, or everywhere
  // from an unpartitioned spec; position deletes to data no newer than them, equality
  // deletes to data older than them.
  bool AppliesTo(const LiveFile& f) const {
    if (!partition.empty() && (spec != f.spec || partition != f.partition)) return false;
    if (content == 1) return sequence >= f.sequence && (target.empty() || target == f.path);
    return sequence > f.sequence;
  }
};

// One partition's small files, rewritten into one.
struct Bin {
  int spec_id = 0;
  Json partition;
  std::vector<const LiveFile*> inputs;
  std::vector<const DeleteFile*> deletes;  // the delete files that apply to them
  int64_t bytes = 0;
  Json metrics;  // the worker's answer
  std::string output;
};

// Iceberg's map<int, X> is an Avro array of {key, value} records.
Json KeyValues(const Json& by_id) {
  Json out = Json::array();
  for (const auto& [k, v] : by_id.items()) {
    auto id = ParseInt(k);
    if (id) out.push_back({{"key", *id}, {"value", v}});
  }
  return out;
}

// The top-level fields of the table's current schema, as the worker takes them: [{id, name}].
Result<Json> CurrentFields(const Json& metadata) {
  const Json current = metadata.value("current-schema-id", Json());
  for (const auto& schema : metadata.value("schemas", Json::array())) {
    if (schema.value("schema-id", Json()) != current) continue;
    Json fields = Json::array();
    for (const auto& f : schema.value("fields", Json::array())) {
      fields.push_back({{"id", f.at("id")}, {"name", f.at("name")}});
    }
    return fields;
  }
  return Fail(ErrorCode::kInvalidInput, "the table metadata has no current schema");
}

// Runs the worker on one bin in its own scratch directory (removed afterwards).
Result<void> RewriteBin(CatalogService& catalog, Random& random, const CompactionOptions& options,
                        const metastore::Warehouse& w, const std::string& location,
                        const Json& fields, Bin& bin, Written& written) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(options.scratch_dir) / ("compact-" + random.Uuid());
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return Fail(ErrorCode::kUnavailable, "cannot create " + dir.string() + ": " + ec.message());
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{dir};
  // Each delete file copied once, numbered within its kind as the plan lists them.
  Json positional = Json::array(), equality = Json::array();
  std::vector<size_t> index_in_kind;
  for (size_t i = 0; i < bin.deletes.size(); i++) {
    const DeleteFile& d = *bin.deletes[i];
    const std::string local = (dir / ("del-" + std::to_string(i) + ".parquet")).string();
    TM_TRY(catalog.files().CopyToFile(w, d.path, local));
    if (d.content == 1) {
      index_in_kind.push_back(positional.size());
      positional.push_back(local);
    } else {
      index_in_kind.push_back(equality.size());
      equality.push_back({{"path", local}, {"equality_ids", d.equality_ids}});
    }
  }
  Json inputs = Json::array();
  for (size_t i = 0; i < bin.inputs.size(); i++) {
    const std::string local = (dir / ("in-" + std::to_string(i) + ".parquet")).string();
    TM_TRY(catalog.files().CopyToFile(w, bin.inputs[i]->path, local));
    Json by_position = Json::array(), by_equality = Json::array();
    for (size_t d = 0; d < bin.deletes.size(); d++) {
      if (!bin.deletes[d]->AppliesTo(*bin.inputs[i])) continue;
      (bin.deletes[d]->content == 1 ? by_position : by_equality).push_back(index_in_kind[d]);
    }
    inputs.push_back({{"path", local},
                      {"data_path", bin.inputs[i]->path},
                      {"delete_files", by_position},
                      {"equality_delete_files", by_equality}});
  }
  const std::string out = (dir / "out.parquet").string();
  const std::string plan_path = (dir / "plan.json").string(),
                    result_path = (dir / "result.json").string();
  TM_TRY(WriteFileAtomically(plan_path,
                             Json{{"inputs", inputs},
                                  {"schema", fields},
                                  {"position_deletes", positional},
                                  {"equality_deletes", equality},
                                  {"output", out},
                                  {"max_threads", options.worker_threads}}
                                 .dump(),
                             0600));
  ProcessLimits limits;
  limits.timeout_ms = options.worker_timeout_ms;
  limits.stderr_path = (dir / "worker.log").string();
  TM_ASSIGN(int status, RunProcess({options.worker_path, "compact", "--plan", plan_path, "--result",
                                    result_path},
                                   limits));
  if (status != 0) {
    auto log = ReadWholeFile(limits.stderr_path);
    std::string why = log ? *log : "";
    while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) why.pop_back();
    return Fail(ErrorCode::kInvalidInput, "the worker failed: " + why.substr(0, 500));
  }
  TM_ASSIGN(std::string text, ReadWholeFile(result_path));
  bin.metrics = Json::parse(text, nullptr, false);
  if (!bin.metrics.is_object()) {
    return Fail(ErrorCode::kInternal, "the worker's result is not JSON");
  }
  // Every row read, and each either written or deleted: anything else is not uploaded.
  int64_t rows_in = 0;
  for (const LiveFile* f : bin.inputs) rows_in += f->records;
  const int64_t read = bin.metrics.value("rows_read", int64_t{-1});
  const int64_t kept = bin.metrics.value("record_count", int64_t{-1});
  const int64_t dropped = bin.metrics.value("rows_deleted", int64_t{-1});
  if (read != rows_in || kept < 0 || dropped < 0 || kept + dropped != rows_in) {
    return Fail(ErrorCode::kInternal,
                "the worker's rewrite does not add up: " + std::to_string(rows_in) + " rows in, " +
                    std::to_string(read) + " read, " + std::to_string(kept) + " written, " +
                    std::to_string(dropped) + " deleted");
  }
  bin.output = location + "data/compacted-" + random.Uuid() + ".parquet";
  written.Add(bin.output);
  CrashPoint("compact.worker-done");
  TM_TRY(catalog.files().PutFile(w, bin.output, out));
  CrashPoint("compact.uploaded");
  return {};
}

Result<CompactResult> Compact(CatalogService& catalog, const Clock& clock, Random& random,
                              const CompactionOptions& options, const metastore::Warehouse& w,
                              const TableIdent& ident, int64_t byte_allowance, int64_t quiet_ms) {
  const CatalogPrincipal principal =
      ControlTables::PrincipalFor(accounts::WarehouseAccess{w, metastore::Level::kWrite, ""});
  TM_ASSIGN(LoadedTable loaded, catalog.LoadTable(principal, w, ident, false, false));
  const Json metadata = Json::parse(loaded.metadata_text(), nullptr, false);
  if (!metadata.is_object()) return Fail(ErrorCode::kInternal, "stored metadata is not JSON");
  CompactResult result;
  const int format = metadata.value("format-version", 1);
  if (format != 1 && format != 2) {
    return Fail(Skip("format v" + std::to_string(format) +
                     " tables (row lineage, deletion vectors) are not compacted yet"));
  }
  if (metadata.contains("encryption-keys")) return Fail(Skip("encrypted tables are not rewritten"));
  TM_ASSIGN(const Head head, CurrentHead(metadata));
  const int64_t current = head.id;
  const Json* snapshot = &head.snapshot;
  const std::string& location = head.location;
  const Json snapshots = metadata.value("snapshots", Json::array());
  const int64_t target =
      IntProperty(metadata, "tablemere.maintenance.target-file-size-bytes",
                  IntProperty(metadata, "write.target-file-size-bytes", options.target_file_size));
  const int64_t min_files = IntProperty(metadata, "tablemere.maintenance.compact.min-input-files",
                                        options.min_input_files);

  // The manifest list and every manifest it names.
  TM_ASSIGN(LoadedManifests read,
            LoadManifests(catalog.files(), w, (*snapshot)["manifest-list"].get<std::string>()));
  const avro::Container& list = read.list;
  std::vector<Manifest>& manifests = read.manifests;
  std::map<int64_t, int64_t> committed_ms;  // snapshot id -> its timestamp
  for (const auto& s : snapshots) {
    committed_ms[s.value("snapshot-id", int64_t{-1})] = s.value("timestamp-ms", int64_t{0});
  }
  std::vector<LiveFile> live;
  std::vector<DeleteFile> deletes;
  std::map<int, const avro::Node*> partition_nodes;
  std::map<int, size_t> template_of_spec;  // a manifest of each spec, for its Avro schema
  for (size_t mi = 0; mi < manifests.size(); mi++) {
    const Manifest& m = manifests[mi];
    const int spec = m.spec_id;
    const avro::Node& entry = *m.container.schema.root;
    for (size_t i = 0; i < m.container.records.size(); i++) {
      Json e = Materialized(avro::ToJson(entry, m.container.records[i]), m);
      if (e.value("status", kStatusDeleted) == kStatusDeleted) continue;
      const Json& file = e["data_file"];
      const int content = file.value("content", 0);
      if (content != 0) {
        DeleteFile d;
        d.manifest = mi;
        d.entry = i;
        d.path = WarehouseFiles::Canonical(file.at("file_path").get<std::string>());
        d.content = content;
        d.records = file.value("record_count", int64_t{0});
        d.size = file.value("file_size_in_bytes", int64_t{0});
        d.spec = spec;
        d.partition = file.value("partition", Json::object());
        d.sequence = e.value("sequence_number", m.sequence_number);
        if (content == 1) d.target = PositionDeleteTarget(file);
        for (const auto& id : file.value("equality_ids", Json::array())) {
          if (id.is_number_integer()) d.equality_ids.push_back(id.get<int>());
        }
        deletes.push_back(std::move(d));
        continue;
      }
      std::string format = file.value("file_format", "");
      for (auto& c : format) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      result.data_files_before++;
      result.data_bytes_before += file.value("file_size_in_bytes", int64_t{0});
      LiveFile f;
      f.parquet = format == "PARQUET";
      f.manifest = mi;
      f.entry = i;
      f.path = WarehouseFiles::Canonical(file.at("file_path").get<std::string>());
      f.size = file.value("file_size_in_bytes", int64_t{0});
      f.records = file.value("record_count", int64_t{0});
      f.spec = spec;
      f.partition = file.value("partition", Json::object());
      f.sequence = e.value("sequence_number", m.sequence_number);
      if (e["snapshot_id"].is_number_integer()) {
        auto at = committed_ms.find(e["snapshot_id"].get<int64_t>());
        if (at != committed_ms.end()) f.added_ms = at->second;
      }
      live.push_back(std::move(f));
    }
    partition_nodes[spec] = m.partition_node;
    // The model of a new data manifest must be a data manifest: its list entry and header
    // carry the content (a delete manifest first in the list would list data as deletes).
    if (m.content == 0) template_of_spec.emplace(spec, mi);
  }
  result.data_files_after = result.data_files_before;
  result.data_bytes_after = result.data_bytes_before;
  // Partition summaries of decimals and uuids are not written yet, and every manifest this
  // job may rewrite (replaced files, removed delete files) needs them.
  for (const auto& [spec, node] : partition_nodes) {
    for (const auto& field : node->fields) {
      if (!Comparable(*field.type)) {
        return Fail(Skip("a partition field (" + field.name + ") is a decimal or uuid"));
      }
    }
  }

  // Candidates grouped by spec and partition: small Parquet files, and every Parquet file
  // an equality delete reaches (rewriting those is what removes the deletes, which some
  // readers, PyIceberg 0.12 among them, cannot apply). Bins of at most the target size.
  // And every Parquet file whose position deletes name at least this share of its rows:
  // rewriting it drops them and their delete files (readers apply them on every scan).
  const int64_t delete_percent =
      IntProperty(metadata, "tablemere.maintenance.compact.delete-percent", 10);
  std::map<std::string, int64_t> positions_deleted;  // data file -> rows its deletes name
  for (const auto& d : deletes) {
    if (d.content == 1 && !d.target.empty()) positions_deleted[d.target] += d.records;
  }
  auto needs_rewrite = [&](const LiveFile& f) {
    auto named = positions_deleted.find(f.path);
    if (named != positions_deleted.end() && f.records > 0 &&
        named->second * 100 >= f.records * delete_percent) {
      return true;
    }
    return std::any_of(deletes.begin(), deletes.end(),
                       [&](const DeleteFile& d) { return d.content == 2 && d.AppliesTo(f); });
  };
  // With a quiet period, files younger than it wait (their writer is probably still busy
  // there), and partitions nobody wrote in it go first.
  struct Group {
    int spec = 0;
    std::vector<const LiveFile*> files;
    int small = 0, reached = 0;
    int64_t newest_ms = 0;  // the partition's last write
  };
  std::map<std::string, Group> by_partition;
  int recently_written = 0;
  const int64_t now_ms = clock.NowMillis();
  for (const auto& f : live) {
    Group& g = by_partition[std::to_string(f.spec) + "/" + f.partition.dump()];
    g.spec = f.spec;
    g.newest_ms = std::max(g.newest_ms, f.added_ms);
    if (!f.parquet) continue;
    const bool small = f.size < target * 3 / 4, reached = needs_rewrite(f);
    if (!small && !reached) continue;
    if (quiet_ms > 0 && now_ms - f.added_ms < quiet_ms) {
      recently_written++;
      continue;
    }
    g.files.push_back(&f);
    g.small += small;
    g.reached += reached;
  }
  std::vector<Group*> groups;
  for (auto& [key, g] : by_partition) groups.push_back(&g);
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group* a, const Group* b) { return a->newest_ms < b->newest_ms; });
  std::vector<Bin> bins;
  int64_t planned = 0;
  bool over_budget = false;
  for (Group* group_ptr : groups) {
    Group& group = *group_ptr;
    auto& files = group.files;
    if (files.empty() || (group.small < min_files && group.reached == 0)) continue;
    if (static_cast<int>(bins.size()) >= options.max_bins_per_run) break;
    std::sort(files.begin(), files.end(),
              [](const LiveFile* a, const LiveFile* b) { return a->size < b->size; });
    Bin bin{group.spec, files.front()->partition, {}, {}, 0, {}, {}};
    auto close = [&]() {
      // One file alone is rewritten only to apply the deletes that make it worth it.
      if (bin.inputs.size() >= 2 || (bin.inputs.size() == 1 && needs_rewrite(*bin.inputs[0]))) {
        for (const auto& d : deletes) {
          if (std::any_of(bin.inputs.begin(), bin.inputs.end(),
                          [&](const LiveFile* f) { return d.AppliesTo(*f); })) {
            bin.deletes.push_back(&d);
          }
        }
        bins.push_back(bin);
      }
      bin.inputs.clear();
      bin.deletes.clear();
      bin.bytes = 0;
    };
    for (const LiveFile* f : files) {
      if (!bin.inputs.empty() && bin.bytes + f->size > target) close();
      if (planned + f->size > byte_allowance) {
        over_budget = true;
        break;
      }
      bin.inputs.push_back(f);
      bin.bytes += f->size;
      planned += f->size;
    }
    close();
    if (over_budget) break;
  }
  // Delete files that apply to no data file at all (their targets were removed, or all
  // the data they could reach is newer): dropped even when nothing is rewritten.
  const auto dangling = std::count_if(deletes.begin(), deletes.end(), [&](const DeleteFile& d) {
    return std::none_of(live.begin(), live.end(),
                        [&](const LiveFile& f) { return d.AppliesTo(f); });
  });
  if (bins.empty() && dangling == 0) {
    if (over_budget) return Fail(Skip("the hourly byte budget is used up"));
    if (recently_written > 0) {
      return Fail(Skip(std::to_string(recently_written) + " file(s) were written in the last " +
                       std::to_string(quiet_ms / 1000) +
                       " s; they wait until their writer has moved on"));
    }
    return Fail(Skip("no partition has " + std::to_string(min_files) +
                     " files smaller than 3/4 of the target size, nor a file deletes make "
                     "worth rewriting"));
  }

  // The rows, rewritten by the worker, one bin at a time, into the table's current schema.
  TM_ASSIGN(const Json fields, CurrentFields(metadata));
  Written written(catalog.files(), w);
  std::vector<Bin*> done;
  std::string failure;
  for (auto& bin : bins) {
    auto rewritten = RewriteBin(catalog, random, options, w, location, fields, bin, written);
    if (!rewritten) {
      result.bins_failed++;
      failure = rewritten.error().message;
      continue;
    }
    done.push_back(&bin);
  }
  if (done.empty() && dangling == 0) {
    result.reason = "every bin failed; the last: " + failure;
    return result;  // what the failed bins uploaded is deleted on the way out
  }

  // The new snapshot's manifests.
  // Format v1 has no sequence numbers: every file's is 0.
  const int64_t start_sequence = format == 1 ? 0 : snapshot->value("sequence-number", int64_t{0});
  const int64_t sequence = format == 1 ? 0 : metadata.value("last-sequence-number", int64_t{0}) + 1;
  const int64_t snapshot_id = NewSnapshotId(random);
  std::map<std::pair<size_t, size_t>, bool> replaced;  // (manifest, entry)
  int64_t added_bytes = 0, removed_bytes = 0, added_records = 0, removed_records = 0,
          rows_deleted = 0;
  for (const Bin* bin : done) {
    for (const LiveFile* f : bin->inputs) {
      replaced[{f->manifest, f->entry}] = true;
      manifests[f->manifest].rewritten = true;
      removed_bytes += f->size;
      removed_records += f->records;
      result.files_rewritten++;
    }
    added_bytes += bin->metrics.value("file_size_in_bytes", int64_t{0});
    added_records += bin->metrics.value("record_count", int64_t{0});
    rows_deleted += bin->metrics.value("rows_deleted", int64_t{0});
    result.files_written++;
    result.bins++;
  }
  if (added_records != removed_records - rows_deleted) {
    return Fail(ErrorCode::kInternal, "the rewrite holds " + std::to_string(added_records) +
                                          " rows where its inputs held " +
                                          std::to_string(removed_records) + " less " +
                                          std::to_string(rows_deleted) + " deleted");
  }
  // A delete file that applies to no data file left (the rewritten ones are gone, and the
  // new ones keep the starting sequence number, which no delete older than it applies to
  // by equality, and whose paths no position delete names) is removed in the same snapshot.
  std::set<std::string> rewritten_paths;
  for (const Bin* bin : done) {
    for (const LiveFile* f : bin->inputs) rewritten_paths.insert(f->path);
  }
  struct Removed {
    int64_t files = 0, records = 0;
  } removed_position, removed_equality;
  int64_t removed_delete_bytes = 0;
  for (const auto& d : deletes) {
    const bool still_applies = std::any_of(live.begin(), live.end(), [&](const LiveFile& f) {
      return !rewritten_paths.count(f.path) && d.AppliesTo(f);
    });
    if (still_applies) continue;
    // Nothing left it applies to: either this run rewrote its data, or it applied to
    // nothing already (then it goes too, as dead weight every reader would open).
    replaced[{d.manifest, d.entry}] = true;
    manifests[d.manifest].rewritten = true;
    Removed& r = d.content == 1 ? removed_position : removed_equality;
    r.files++;
    r.records += d.records;
    removed_delete_bytes += d.size;
  }
  const int64_t removed_delete_files = removed_position.files + removed_equality.files;
  result.delete_files_removed = static_cast<int>(removed_delete_files);
  result.rows_deleted = rows_deleted;
  std::vector<avro::Value> list_records;
  // One manifest of added files per spec, first in the list.
  std::map<int, std::vector<const Bin*>> by_spec;
  for (const Bin* bin : done) by_spec[bin->spec_id].push_back(bin);
  for (const auto& [spec, spec_bins] : by_spec) {
    std::vector<Json> entries;
    for (const Bin* bin : spec_bins) {
      const Json& m = bin->metrics;
      entries.push_back({{"status", kStatusAdded},
                         {"snapshot_id", snapshot_id},
                         {"sequence_number", start_sequence},
                         {"file_sequence_number", sequence},
                         {"data_file",
                          {{"content", 0},
                           {"file_path", bin->output},
                           {"file_format", "PARQUET"},
                           {"partition", bin->partition},
                           {"record_count", m.at("record_count")},
                           {"file_size_in_bytes", m.at("file_size_in_bytes")},
                           {"column_sizes", KeyValues(m.at("column_sizes"))},
                           {"value_counts", KeyValues(m.at("value_counts"))},
                           {"null_value_counts", KeyValues(m.at("null_value_counts"))},
                           {"lower_bounds", KeyValues(m.at("lower_bounds"))},
                           {"upper_bounds", KeyValues(m.at("upper_bounds"))},
                           {"split_offsets", m.at("split_offsets")},
                           // Required in format v1 manifests (Iceberg Java's default); a v2
                           // manifest has no such field and ignores it.
                           {"block_size_in_bytes", int64_t{64} << 20}}}});
    }
    const Manifest& model = manifests[template_of_spec.at(spec)];
    TM_ASSIGN(Json record,
              WriteManifest(catalog.files(), random, w, location, model, *partition_nodes[spec],
                            entries, snapshot_id, sequence, written));
    TM_ASSIGN(avro::Value v, avro::FromJson(*list.schema.root, record));
    list_records.push_back(std::move(v));
  }
  // The manifests that held replaced files, merged per spec and content into one: those
  // entries deleted by this snapshot, the rest existing, older deletions dropped. (One
  // manifest each would leave a manifest per small file in the list.) Others are kept.
  std::map<std::pair<int, int>, std::vector<Json>> merged;  // (spec, content) -> entries
  std::map<std::pair<int, int>, size_t> model_of;
  for (size_t mi = 0; mi < manifests.size(); mi++) {
    const Manifest& m = manifests[mi];
    if (!m.rewritten) {
      list_records.push_back(m.list_value);
      continue;
    }
    const std::pair<int, int> group{m.spec_id, m.content};
    model_of.emplace(group, mi);
    auto& entries = merged[group];
    for (size_t i = 0; i < m.container.records.size(); i++) {
      Json e = avro::ToJson(*m.container.schema.root, m.container.records[i]);
      if (e.value("status", kStatusDeleted) == kStatusDeleted) continue;  // an older deletion
      e = Materialized(std::move(e), m);
      if (replaced.count({mi, i})) {
        e["status"] = kStatusDeleted;
        e["snapshot_id"] = snapshot_id;
      } else {
        e["status"] = kStatusExisting;
      }
      entries.push_back(std::move(e));
    }
  }
  for (const auto& [group, entries] : merged) {
    const Manifest& model = manifests[model_of.at(group)];
    TM_ASSIGN(Json record, WriteManifest(catalog.files(), random, w, location, model,
                                         *partition_nodes[group.first], entries, snapshot_id,
                                         sequence, written));
    TM_ASSIGN(avro::Value v, avro::FromJson(*list.schema.root, record));
    list_records.push_back(std::move(v));
  }
  // The snapshot: a replace, its totals carried from the one it starts from.
  const Json previous = snapshot->value("summary", Json::object());
  auto total = [&](const char* name, int64_t delta) -> Json {
    auto it = previous.find(name);
    if (it == previous.end() || !it->is_string()) return nullptr;
    auto n = ParseInt(it->get<std::string>());
    return n ? Json(std::to_string(*n + delta)) : Json();
  };
  Json summary = {{"operation", "replace"},
                  {"added-data-files", std::to_string(result.files_written)},
                  {"deleted-data-files", std::to_string(result.files_rewritten)},
                  {"added-records", std::to_string(added_records)},
                  {"deleted-records", std::to_string(removed_records)},
                  {"added-files-size", std::to_string(added_bytes)},
                  {"removed-files-size", std::to_string(removed_bytes + removed_delete_bytes)},
                  {"changed-partition-count", std::to_string(done.size())},
                  {"tablemere.maintenance", "compact"}};
  if (removed_delete_files > 0) {
    summary["removed-delete-files"] = std::to_string(removed_delete_files);
  }
  if (removed_position.files > 0) {
    summary["removed-position-delete-files"] = std::to_string(removed_position.files);
    summary["removed-position-deletes"] = std::to_string(removed_position.records);
  }
  if (removed_equality.files > 0) {
    summary["removed-equality-delete-files"] = std::to_string(removed_equality.files);
    summary["removed-equality-deletes"] = std::to_string(removed_equality.records);
  }
  const std::pair<const char*, int64_t> totals[] = {
      {"total-data-files", result.files_written - result.files_rewritten},
      {"total-files-size", added_bytes - removed_bytes - removed_delete_bytes},
      {"total-records", added_records - removed_records},
      {"total-delete-files", -removed_delete_files},
      {"total-position-deletes", -removed_position.records},
      {"total-equality-deletes", -removed_equality.records}};
  for (const auto& [name, delta] : totals) {
    Json t = total(name, delta);
    if (!t.is_null()) summary[name] = t;
  }
  CrashPoint("compact.manifests-written");
  TM_TRY(CommitReplace(catalog, clock, random, principal, w, ident, metadata, current, list,
                       std::move(list_records), {snapshot_id, sequence, summary}, "compaction",
                       written));
  CrashPoint("compact.committed");
  result.ran = true;
  result.snapshot_id = snapshot_id;
  result.bytes_read = planned;
  result.data_files_after =
      result.data_files_before - result.files_rewritten + result.files_written;
  result.data_bytes_after = result.data_bytes_before - removed_bytes + added_bytes;
  if (result.bins_failed > 0) {
    result.reason = std::to_string(result.bins_failed) + " bin(s) were skipped: " + failure;
  }
  return result;
}

}  // namespace

Result<CompactResult> CompactTable(CatalogService& catalog, const Clock& clock, Random& random,
                                   const CompactionOptions& options, const metastore::Warehouse& w,
                                   const TableIdent& ident, int64_t byte_allowance,
                                   int64_t quiet_ms) {
  return RunJob<CompactResult>(
      [&] { return Compact(catalog, clock, random, options, w, ident, byte_allowance, quiet_ms); });
}

}  // namespace tablemere::catalog
