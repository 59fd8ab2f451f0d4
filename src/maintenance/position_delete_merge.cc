#include "maintenance/position_delete_merge.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/crash_point.h"
#include "maintenance/maintenance_worker.h"

namespace tablemere::maintenance::compaction {

std::vector<DeleteMerge> PlanDeleteMerges(const Inputs& in, const std::set<std::string>& rewriting,
                                          const DeleteMergePolicy& policy, int64_t& allowance) {
  struct Group {
    std::vector<const DeleteFile*> files;
    std::set<const DeleteFile*> to_rewritten;  // those that also apply to a file rewritten
  };
  std::map<std::string, Group> groups;
  for (const auto& d : in.deletes) {
    if (d.content != 1 || !d.parquet || in.Misfiled(d)) continue;
    if (policy.quiet_ms > 0 && policy.now_ms - d.added_ms < policy.quiet_ms) continue;
    bool applies = false, to_rewritten = false;
    for (const LiveFile* f : in.FilesOf(d)) {
      (rewriting.count(f->path) ? to_rewritten : applies) = true;
    }
    if (!applies) continue;  // dropped outright (dangling, or all its data is rewritten)
    Group& g = groups[d.key];
    g.files.push_back(&d);
    if (to_rewritten) g.to_rewritten.insert(&d);
  }
  std::vector<DeleteMerge> merges;
  for (auto& [key, g] : groups) {
    if (static_cast<int64_t>(g.files.size()) < policy.min_files && g.to_rewritten.empty()) {
      continue;
    }
    // Those partly rewritten first (each is worth rewriting alone), then the smallest.
    std::sort(g.files.begin(), g.files.end(), [&](const DeleteFile* a, const DeleteFile* b) {
      const bool ra = g.to_rewritten.count(a) > 0, rb = g.to_rewritten.count(b) > 0;
      return ra != rb ? ra : a->size < b->size;
    });
    DeleteMerge merge;
    merge.spec = g.files.front()->spec;
    merge.partition = g.files.front()->partition;
    for (const DeleteFile* d : g.files) {
      if (!merge.inputs.empty() && merge.bytes + d->size > policy.target) break;
      if (merge.bytes + d->size > allowance) break;
      merge.inputs.push_back(d);
      merge.bytes += d->size;
      merge.sequence = std::max(merge.sequence, d->sequence);
    }
    // A merge of one file is only worth its rewrite when rows of it go; one cut short
    // to a single file by the target or the budget is not run, nor charged.
    const bool worth = merge.inputs.size() >= 2 ||
                       (merge.inputs.size() == 1 && g.to_rewritten.count(merge.inputs.front()));
    if (!worth) continue;
    allowance -= merge.bytes;
    merges.push_back(std::move(merge));
  }
  return merges;
}

Result<bool> RunDeleteMerge(CatalogService& catalog, Random& random,
                            const CompactionOptions& options, const metastore::Warehouse& w,
                            const std::string& location, const Inputs& in,
                            const std::set<std::string>& rewritten,
                            const std::set<const DeleteFile*>& removed, DeleteMerge& merge,
                            snapshot_writer::Written& written) {
  std::vector<const DeleteFile*> inputs;
  bool partly_rewritten = false;
  for (const DeleteFile* d : merge.inputs) {
    if (removed.count(d)) continue;
    inputs.push_back(d);
    for (const LiveFile* f : in.FilesOf(*d)) partly_rewritten |= rewritten.count(f->path) > 0;
  }
  merge.inputs = inputs;
  merge.bytes = 0;  // what the worker reads: the caller charges no more
  for (const DeleteFile* d : inputs) merge.bytes += d->size;
  if (inputs.size() < 2 && !(inputs.size() == 1 && partly_rewritten)) return false;
  merge.sequence = 0;
  for (const DeleteFile* d : inputs) merge.sequence = std::max(merge.sequence, d->sequence);

  TM_ASSIGN(WorkerRun run, WorkerRun::Start(options.scratch_dir, random, "deletes"));
  protocol::RewriteDeletesPlan plan;
  std::set<const LiveFile*> reached;
  int64_t rows_in = 0;
  for (size_t i = 0; i < inputs.size(); i++) {
    const std::string local = run.Local("del-" + std::to_string(i) + ".parquet");
    TM_TRY(catalog.files().CopyToFile(w, inputs[i]->path, local));
    plan.inputs.push_back({local, inputs[i]->sequence});
    rows_in += inputs[i]->records;
    for (const LiveFile* f : in.FilesOf(*inputs[i])) {
      if (!rewritten.count(f->path) && reached.insert(f).second) {
        plan.live.push_back({f->path, f->sequence});
      }
    }
  }
  const std::string out = run.Local("out.parquet");
  plan.output = out;
  TM_ASSIGN(merge.answer,
            run.Ask<protocol::RewriteDeletesAnswer>(options.worker_path, options.worker_timeout_ms,
                                                    "rewrite-deletes", plan));
  // Every row read, and each either kept or dropped: anything else is not uploaded.
  const int64_t kept = merge.answer.written.file.record_count;
  TM_TRY(
      RowsAddUp(merge.answer.rows_read, kept, merge.answer.rows_dropped, rows_in, "delete merge"));
  if (kept == 0) return true;  // the inputs go, nothing replaces them
  merge.output = location + "data/merged-deletes-" + random.Uuid() + ".parquet";
  written.Add(merge.output);
  TM_TRY(catalog.files().PutFile(w, merge.output, out));
  CrashPoint("compact.deletes-uploaded");
  return true;
}

}  // namespace tablemere::maintenance::compaction
