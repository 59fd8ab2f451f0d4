#include "maintenance/table_compaction.h"

#include <algorithm>
#include <map>
#include <set>

#include "accounts/account_service.h"
#include "avro/container.h"
#include "catalog/control_tables.h"
#include "common/crash_point.h"
#include "common/crypto.h"
#include "common/files.h"
#include "common/strings.h"
#include "iceberg/table_metadata.h"
#include "maintenance/compaction_inputs.h"
#include "maintenance/maintenance_worker.h"
#include "maintenance/position_delete_merge.h"
#include "maintenance/snapshot_writer.h"

namespace tablemere::maintenance {
namespace {

using namespace snapshot_writer;  // NOLINT: the shared pieces of the maintenance commits
using namespace compaction;       // NOLINT: the live files and their deletes

// How long where a compaction moved rows is kept: a client commit planned before it comes
// within seconds or minutes.
constexpr int64_t kRowMovesKeptMs = 24LL * 3600 * 1000;

// One partition's small files, rewritten into one.
struct Bin {
  int spec_id = 0;
  iceberg::PartitionTuple partition;
  std::vector<const LiveFile*> inputs;
  std::vector<const DeleteFile*> deletes;  // the delete files that apply to them
  int64_t bytes = 0;
  protocol::CompactAnswer answer;  // the worker's
  std::string output;
};

// The top-level fields of the table's current schema, as the worker takes them.
Result<std::vector<protocol::SchemaField>> CurrentFields(const Json& metadata) {
  const Json current = metadata.value("current-schema-id", Json());
  for (const auto& schema : metadata.value("schemas", Json::array())) {
    if (schema.value("schema-id", Json()) != current) continue;
    std::vector<protocol::SchemaField> fields;
    for (const auto& f : schema.value("fields", Json::array())) {
      fields.push_back({f.at("id").get<int32_t>(), f.at("name").get<std::string>()});
    }
    return fields;
  }
  return Fail(ErrorCode::kInvalidInput, "the table metadata has no current schema");
}

// Runs the worker on one bin in its own scratch directory (removed afterwards). With
// `row_lineage` (format v3) the output keeps every row's id and last-updated sequence
// number, written explicitly.
Result<void> RewriteBin(CatalogService& catalog, Random& random, const CompactionOptions& options,
                        const metastore::Warehouse& w, const std::string& location,
                        const Inputs& in, const std::vector<protocol::SchemaField>& fields,
                        bool row_lineage, Bin& bin, Written& written) {
  TM_ASSIGN(WorkerRun run, WorkerRun::Start(options.scratch_dir, random, "compact"));
  // Each delete file copied once, numbered within its kind as the plan lists them.
  // Deletion vectors are read here and handed over as positions.
  protocol::CompactPlan plan;
  std::vector<std::string>& positional = plan.position_deletes;
  std::vector<protocol::EqualityDeleteFile>& equality = plan.equality_deletes;
  std::map<const DeleteFile*, size_t> index_in_kind;
  DeletionVectors vectors(catalog.files(), w);
  for (size_t i = 0; i < bin.deletes.size(); i++) {
    const DeleteFile& d = *bin.deletes[i];
    if (d.deletion_vector) continue;
    const std::string local = run.Local("del-" + std::to_string(i) + ".parquet");
    TM_TRY(catalog.files().CopyToFile(w, d.path, local));
    if (d.content == 1) {
      index_in_kind[&d] = positional.size();
      positional.push_back(local);
    } else {
      index_in_kind[&d] = equality.size();
      equality.push_back(
          {local, std::vector<int32_t>(d.equality_ids.begin(), d.equality_ids.end())});
    }
  }
  for (size_t i = 0; i < bin.inputs.size(); i++) {
    const std::string local = run.Local("in-" + std::to_string(i) + ".parquet");
    TM_TRY(catalog.files().CopyToFile(w, bin.inputs[i]->path, local));
    const LiveFile& f = *bin.inputs[i];
    protocol::CompactInput input;
    input.path = local;
    input.data_path = f.path;
    for (const DeleteFile* d : in.DeletesOf(f)) {
      if (d->deletion_vector) {
        TM_ASSIGN(auto positions,
                  vectors.Positions(d->path, d->content_offset, d->content_size, f.records));
        input.deleted_positions.insert(input.deleted_positions.end(), positions.begin(),
                                       positions.end());
        continue;
      }
      (d->content == 1 ? input.position_delete_files : input.equality_delete_files)
          .push_back(index_in_kind.at(d));
    }
    if (row_lineage) {
      input.first_row_id = f.first_row_id;
      input.data_sequence_number = f.sequence;
    }
    plan.inputs.push_back(std::move(input));
  }
  const std::string out = run.Local("out.parquet");
  plan.schema = fields;
  plan.output = out;
  plan.max_threads = options.worker_threads;
  plan.row_lineage = row_lineage;
  TM_ASSIGN(bin.answer, run.Ask<protocol::CompactAnswer>(
                            options.worker_path, options.worker_timeout_ms, "compact", plan));
  // Every row read, and each either written or deleted: anything else is not uploaded.
  int64_t rows_in = 0;
  for (const LiveFile* f : bin.inputs) rows_in += f->records;
  TM_TRY(RowsAddUp(bin.answer.rows_read, bin.answer.file.record_count, bin.answer.rows_deleted,
                   rows_in, "rewrite"));
  bin.output = location + "data/compacted-" + random.Uuid() + ".parquet";
  written.Add(bin.output);
  CrashPoint("compact.worker-done");
  TM_TRY(catalog.files().PutFile(w, bin.output, out));
  CrashPoint("compact.uploaded");
  return {};
}

// Said of delete files left alone because readers disagree on them (Inputs::Misfiled).
std::string MisfiledNote(int misfiled) {
  if (misfiled == 0) return "";
  return "; " + std::to_string(misfiled) +
         " position delete file(s) name a data file of another partition spec or partition "
         "(DuckDB writes them after a spec change): readers disagree on them, so they and "
         "the files they name are left as they are";
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
  if (format < 1 || format > 3) {
    return Fail(Skip("format v" + std::to_string(format) + " tables are not compacted"));
  }
  if (metadata.contains("encryption-keys")) return Fail(Skip("encrypted tables are not rewritten"));
  TM_ASSIGN(const Head head, CurrentHead(metadata));
  const int64_t current = head.id;
  const Json* snapshot = &head.snapshot;
  const std::string& location = head.location;
  const int64_t target =
      IntProperty(metadata, "tablemere.maintenance.target-file-size-bytes",
                  IntProperty(metadata, "write.target-file-size-bytes", options.target_file_size));
  const int64_t min_files = IntProperty(metadata, "tablemere.maintenance.compact.min-input-files",
                                        options.min_input_files);

  // The manifest list, every manifest it names, and the live files they list.
  TM_ASSIGN(LoadedManifests read,
            LoadManifests(catalog.files(), w, (*snapshot)["manifest-list"].get<std::string>()));
  const avro::Container& list = read.list;
  std::vector<Manifest>& manifests = read.manifests;
  const Inputs in = Inputs::Read(manifests, metadata.value("snapshots", Json::array()));
  const std::vector<LiveFile>& live = in.live;
  const std::vector<DeleteFile>& deletes = in.deletes;
  result.data_files_before = static_cast<int>(live.size());
  for (const auto& f : live) result.data_bytes_before += f.size;
  result.data_files_after = result.data_files_before;
  result.data_bytes_after = result.data_bytes_before;

  // Candidates grouped by spec and partition: small Parquet files, and every Parquet file
  // an equality delete reaches (rewriting those is what removes the deletes, which some
  // readers, PyIceberg 0.12 among them, cannot apply). Bins of at most the target size.
  // And every Parquet file whose position deletes name at least this share of its rows:
  // rewriting it drops them and their delete files (readers apply them on every scan).
  const int64_t delete_percent =
      IntProperty(metadata, "tablemere.maintenance.compact.delete-percent", 10);
  std::map<std::string, int64_t> positions_deleted;  // data file -> rows its deletes name
  for (const auto& d : deletes) {
    if (in.Misfiled(d)) {
      result.delete_files_misfiled++;
    } else if (d.content == 1 && !d.target.empty()) {
      positions_deleted[d.target] += d.records;
    }
  }
  auto needs_rewrite = [&](const LiveFile& f) {
    auto named = positions_deleted.find(f.path);
    if (named != positions_deleted.end() && f.records > 0 &&
        named->second * 100 >= f.records * delete_percent) {
      return true;
    }
    const auto applying = in.DeletesOf(f);
    return std::any_of(applying.begin(), applying.end(),
                       [](const DeleteFile* d) { return d->content == 2; });
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
    Group& g = by_partition[f.key];
    g.spec = f.spec;
    g.newest_ms = std::max(g.newest_ms, f.added_ms);
    if (!f.parquet || in.NamedByMisfiled(f)) continue;
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
        std::set<const DeleteFile*> seen;
        for (const LiveFile* f : bin.inputs) {
          for (const DeleteFile* d : in.DeletesOf(*f)) {
            if (seen.insert(d).second) bin.deletes.push_back(d);
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
    return !in.Misfiled(d) && !in.AppliesToAny(d);
  });
  // A partition's position delete files, merged.
  std::set<std::string> rewriting;
  for (const auto& bin : bins) {
    for (const LiveFile* f : bin.inputs) rewriting.insert(f->path);
  }
  int64_t allowance = byte_allowance - planned;
  // Format v3 takes no new position delete files (deletion vectors only, Iceberg Java
  // refuses to add others): Parquet ones from before an upgrade go with their data files.
  std::vector<DeleteMerge> merges;
  if (format < 3) {
    merges = PlanDeleteMerges(
        in, rewriting,
        {IntProperty(metadata, "write.delete.target-file-size-bytes", 64LL << 20),
         IntProperty(metadata, "tablemere.maintenance.compact.min-delete-files", min_files),
         quiet_ms, now_ms},
        allowance);
  }
  if (bins.empty() && dangling == 0 && merges.empty()) {
    if (over_budget) return Fail(Skip("the hourly byte budget is used up"));
    if (recently_written > 0) {
      return Fail(Skip(std::to_string(recently_written) + " file(s) were written in the last " +
                       std::to_string(quiet_ms / 1000) +
                       " s; they wait until their writer has moved on"));
    }
    return Fail(Skip("no partition has " + std::to_string(min_files) +
                     " files smaller than 3/4 of the target size, nor a file deletes make "
                     "worth rewriting, nor position delete files to merge" +
                     MisfiledNote(result.delete_files_misfiled)));
  }

  // The rows, rewritten by the worker, one bin at a time, into the table's current schema.
  TM_ASSIGN(const auto fields, CurrentFields(metadata));
  Written written(catalog.files(), w);
  std::vector<Bin*> done;
  std::string failure;
  for (auto& bin : bins) {
    auto rewritten =
        RewriteBin(catalog, random, options, w, location, in, fields, format >= 3, bin, written);
    if (!rewritten) {
      result.bins_failed++;
      failure = rewritten.error().message;
      continue;
    }
    done.push_back(&bin);
  }
  std::set<std::string> rewritten_paths;
  for (const Bin* bin : done) {
    for (const LiveFile* f : bin->inputs) rewritten_paths.insert(f->path);
  }
  // A delete file that applies to no data file left (the rewritten ones are gone, and the
  // new ones keep the starting sequence number, which no delete older than it applies to
  // by equality, and whose paths no position delete names) is removed in the same snapshot:
  // either this run rewrote its data, or it applied to nothing already (then it goes too,
  // as dead weight every reader would open).
  std::set<const DeleteFile*> removed_deletes;
  for (const auto& d : deletes) {
    if (in.Misfiled(d)) continue;
    if (!in.AppliesToAny(d, [&](const LiveFile& f) { return !rewritten_paths.count(f.path); })) {
      removed_deletes.insert(&d);
    }
  }
  std::vector<DeleteMerge*> merged_deletes;
  for (auto& merge : merges) {
    const int64_t planned_bytes = merge.bytes;
    auto ran = RunDeleteMerge(catalog, random, options, w, location, in, rewritten_paths,
                              removed_deletes, merge, written);
    if (!ran) {
      result.bins_failed++;
      failure = ran.error().message;
      continue;
    }
    if (*ran) {
      merged_deletes.push_back(&merge);
      allowance += planned_bytes - merge.bytes;  // inputs the commit removes outright
    } else {
      allowance += planned_bytes;  // the worker never read it
    }
  }
  // What the worker read is charged to the byte budget, whether or not its bins succeed (a
  // bin that keeps failing is retried, but not more often than the budget allows).
  result.bytes_read = byte_allowance - allowance;
  if (done.empty() && removed_deletes.empty() && merged_deletes.empty()) {
    result.reason = failure.empty() ? "no position delete files were left to merge"
                                    : "every bin failed; the last: " + failure;
    return result;  // what the failed bins uploaded is deleted on the way out
  }

  // The new snapshot's manifests.
  // Format v1 has no sequence numbers: every file's is 0.
  const int64_t start_sequence = format == 1 ? 0 : snapshot->value("sequence-number", int64_t{0});
  const int64_t sequence = format == 1 ? 0 : metadata.value("last-sequence-number", int64_t{0}) + 1;
  const int64_t snapshot_id = NewSnapshotId(random);
  std::set<std::pair<size_t, size_t>> replaced;  // (manifest, entry)
  auto replace = [&](size_t manifest, size_t entry) {
    replaced.insert({manifest, entry});
    manifests[manifest].rewritten = true;
  };
  int64_t added_bytes = 0, removed_bytes = 0, added_records = 0, removed_records = 0,
          rows_deleted = 0;
  for (const Bin* bin : done) {
    for (const LiveFile* f : bin->inputs) {
      replace(f->manifest, f->entry);
      removed_bytes += f->size;
      removed_records += f->records;
      result.files_rewritten++;
    }
    added_bytes += bin->answer.file.file_size_in_bytes;
    added_records += bin->answer.file.record_count;
    rows_deleted += bin->answer.rows_deleted;
    result.files_written++;
    result.bins++;
  }
  if (added_records != removed_records - rows_deleted) {
    return Fail(ErrorCode::kInternal, "the rewrite holds " + std::to_string(added_records) +
                                          " rows where its inputs held " +
                                          std::to_string(removed_records) + " less " +
                                          std::to_string(rows_deleted) + " deleted");
  }
  // Delete files that go: those that apply to nothing left, and the merged ones.
  struct Counted {
    int64_t files = 0, records = 0, bytes = 0;
    void Add(const DeleteFile& d) {
      files++;
      records += d.records;
      bytes += d.size;
    }
  } removed_position, removed_equality, added_position;
  for (const DeleteFile* d : removed_deletes) {
    replace(d->manifest, d->entry);
    (d->content == 1 ? removed_position : removed_equality).Add(*d);
    result.delete_files_removed++;
  }
  for (const DeleteMerge* merge : merged_deletes) {
    for (const DeleteFile* d : merge->inputs) {
      replace(d->manifest, d->entry);
      removed_position.Add(*d);
      result.delete_files_merged++;
    }
    result.position_deletes_dropped += merge->answer.rows_dropped;
    if (merge->output.empty()) continue;
    added_position.files++;
    added_position.records += merge->answer.written.file.record_count;
    added_position.bytes += merge->answer.written.file.file_size_in_bytes;
    result.delete_files_written++;
  }
  const int64_t removed_delete_files = removed_position.files + removed_equality.files;
  const int64_t removed_delete_bytes = removed_position.bytes + removed_equality.bytes;
  result.rows_deleted = rows_deleted;
  std::vector<avro::Value> list_records;

  auto add_manifest = [&](const Manifest& model,
                          const std::vector<iceberg::ManifestEntry>& entries) -> Result<void> {
    TM_ASSIGN(iceberg::ManifestFile record,
              WriteManifest(catalog.files(), random, w, location, model, entries, snapshot_id,
                            sequence, written));
    TM_ASSIGN(avro::Value v, iceberg::ToAvro(*list.schema.root, record));
    list_records.push_back(std::move(v));
    return {};
  };
  auto added = [&](iceberg::DataFile file, int64_t data_sequence) {
    iceberg::ManifestEntry e;
    e.status = iceberg::EntryStatus::kAdded;
    e.snapshot_id = snapshot_id;
    e.sequence_number = data_sequence;
    e.file_sequence_number = sequence;
    e.file = std::move(file);
    return e;
  };
  // One manifest of added data files per spec, first in the list.
  std::map<int, std::vector<iceberg::ManifestEntry>> added_data;
  for (const Bin* bin : done) {
    iceberg::DataFile file = WrittenFile(bin->answer.file);
    file.content = iceberg::FileContent::kData;
    file.path = bin->output;
    file.partition = bin->partition;
    added_data[bin->spec_id].push_back(added(std::move(file), start_sequence));
  }
  for (const auto& [spec, entries] : added_data) {
    TM_TRY(add_manifest(manifests[in.data_model.at(spec)], entries));
  }
  // Then one of merged position delete files per spec (its model a delete manifest).
  // spec -> (model, entries)
  std::map<int, std::pair<size_t, std::vector<iceberg::ManifestEntry>>> added_deletes;
  for (const DeleteMerge* merge : merged_deletes) {
    if (merge->output.empty()) continue;
    iceberg::DataFile file = WrittenFile(merge->answer.written.file);
    file.content = iceberg::FileContent::kPositionDeletes;
    file.path = merge->output;
    file.partition = merge->partition;
    file.block_size_in_bytes.reset();
    auto& [model, entries] = added_deletes[merge->spec];
    model = merge->inputs.front()->manifest;
    entries.push_back(added(std::move(file), merge->sequence));
  }
  for (const auto& [spec, deletes_added] : added_deletes) {
    TM_TRY(add_manifest(manifests[deletes_added.first], deletes_added.second));
  }
  // The manifests that held replaced files, merged per spec and content into one: those
  // entries deleted by this snapshot, the rest existing, older deletions dropped. (One
  // manifest each would leave a manifest per small file in the list.) Others are kept.
  // (spec, content) -> entries
  std::map<std::pair<int, int>, std::vector<iceberg::ManifestEntry>> merged;
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
      if (!m.typed.entries[i].Live()) continue;  // an older deletion
      entries.push_back(Entry(m, i,
                              replaced.count({mi, i}) ? iceberg::EntryStatus::kDeleted
                                                      : iceberg::EntryStatus::kExisting,
                              snapshot_id));
    }
  }
  for (const auto& [group, entries] : merged) {
    TM_TRY(add_manifest(manifests[model_of.at(group)], entries));
  }
  // Each partition (of each spec) counted once, whatever changed in it.
  std::set<std::string> changed_partitions;
  for (const Bin* bin : done) {
    changed_partitions.insert(iceberg::PartitionKey(bin->spec_id, bin->partition));
  }
  for (const DeleteFile* d : removed_deletes) changed_partitions.insert(d->key);
  for (const DeleteMerge* merge : merged_deletes) {
    for (const DeleteFile* d : merge->inputs) changed_partitions.insert(d->key);
  }
  // The snapshot: a replace, its totals carried from the one it starts from.
  const Json previous = snapshot->value("summary", Json::object());
  auto total = [&](const char* name, int64_t delta) -> Json {
    auto n = iceberg::SummaryCount(previous, name);
    return n ? Json(std::to_string(*n + delta)) : Json();
  };
  Json summary = {{"operation", "replace"},
                  {"added-data-files", std::to_string(result.files_written)},
                  {"deleted-data-files", std::to_string(result.files_rewritten)},
                  {"added-records", std::to_string(added_records)},
                  {"deleted-records", std::to_string(removed_records)},
                  {"added-files-size", std::to_string(added_bytes + added_position.bytes)},
                  {"removed-files-size", std::to_string(removed_bytes + removed_delete_bytes)},
                  {"changed-partition-count", std::to_string(changed_partitions.size())},
                  {kMaintenanceSummaryKey, "compact"}};
  auto count = [&](const char* name, int64_t n) {
    if (n > 0) summary[name] = std::to_string(n);
  };
  count("added-delete-files", added_position.files);
  count("added-position-delete-files", added_position.files);
  count("added-position-deletes", added_position.records);
  count("removed-delete-files", removed_delete_files);
  count("removed-position-delete-files", removed_position.files);
  count("removed-position-deletes", removed_position.records);
  count("removed-equality-delete-files", removed_equality.files);
  count("removed-equality-deletes", removed_equality.records);
  const std::pair<const char*, int64_t> totals[] = {
      {"total-data-files", result.files_written - result.files_rewritten},
      {"total-files-size",
       added_bytes + added_position.bytes - removed_bytes - removed_delete_bytes},
      {"total-records", added_records - removed_records},
      {"total-delete-files", added_position.files - removed_delete_files},
      {"total-position-deletes", added_position.records - removed_position.records},
      {"total-equality-deletes", -removed_equality.records}};
  for (const auto& [name, delta] : totals) {
    Json t = total(name, delta);
    if (!t.is_null()) summary[name] = t;
  }
  // Where the rewritten files' rows went, kept a day for the commit rebase (it re-aims a
  // client's position deletes planned before this commit at the new files).
  protocol::RowMoves moves;
  for (const Bin* bin : done) {
    for (const auto& input : bin->answer.row_map) {
      moves[WarehouseFiles::Canonical(input.data_path)] = {bin->output, input.offset, input.rows,
                                                           input.dropped};
    }
  }
  if (!moves.empty()) {
    TM_TRY(catalog.metastore().maintenance().SaveRowMoves(
        w.id.str(), metadata.value("table-uuid", ""), snapshot_id, protocol::Encode(moves).dump(),
        now_ms, now_ms - kRowMovesKeptMs));
  }
  CrashPoint("compact.manifests-written");
  TM_TRY(CommitReplace(catalog, clock, random, principal, w, ident, metadata, current, list,
                       std::move(list_records), {snapshot_id, sequence, summary}, "compaction",
                       written));
  CrashPoint("compact.committed");
  result.ran = true;
  result.snapshot_id = snapshot_id;
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

}  // namespace tablemere::maintenance
