// Merging position delete files, a part of compaction: many small position delete files
// in a partition (one per merge-on-read DELETE, UPDATE or MERGE) become one, and rows that
// name data files the same commit rewrites or that are gone are dropped, as Iceberg's
// RewritePositionDeleteFiles does. Readers open every delete file of a partition on every
// scan. The rows are rewritten by the worker (`tablemere-maint rewrite-deletes`).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "maintenance/catalog_names.h"
#include "maintenance/compaction_inputs.h"
#include "maintenance/table_compaction.h"

namespace tablemere::maintenance::compaction {

// One partition's position delete files, merged into one.
struct DeleteMerge {
  int spec = 0;
  iceberg::PartitionTuple partition;
  std::vector<const DeleteFile*> inputs;
  int64_t bytes = 0;
  // The merged file's data sequence number: the newest input's. A position delete names
  // its data files, all of them no newer than it, so the merged rows apply to exactly the
  // data they did (the worker keeps a row only for a file its own input applied to).
  int64_t sequence = 0;
  protocol::RewriteDeletesAnswer answer;  // the worker's
  std::string output;  // the merged file's table path; "" when no row was left to keep
};

struct DeleteMergePolicy {
  int64_t target = 0;     // no merged group holds more input bytes than this
  int64_t min_files = 5;  // a partition needs this many position delete files
  int64_t quiet_ms = 0;   // files younger than this wait
  int64_t now_ms = 0;
};

// Groups, per spec and partition, the Parquet position delete files older than the quiet
// period that still apply to a data file (misfiled ones are left alone, Inputs::Misfiled). A group
// is merged when it holds `min_files`, or when one of its files also applies to a data file in
// `rewriting` (that file's rows are dead weight once the commit lands). Only plans that merge two
// files or more, or rewrite one of those partly rewritten files, are answered (a group cut short by
// the target or the budget may be left with one file). `allowance` is the rest of the byte budget;
// what an answered plan takes is subtracted.
std::vector<DeleteMerge> PlanDeleteMerges(const Inputs& in, const std::set<std::string>& rewriting,
                                          const DeleteMergePolicy& policy, int64_t& allowance);

// Runs a planned merge once the data bins ran: `rewritten` are the data files the commit
// replaces and `removed` the delete files it drops outright (both leave the merge). False
// when nothing is left worth merging; otherwise the merged file is uploaded (recorded in
// `written`) unless no row was left, and `merge.inputs` are what the commit replaces
// (`merge.bytes` their size: what the worker read).
Result<bool> RunDeleteMerge(CatalogService& catalog, Random& random,
                            const CompactionOptions& options, const metastore::Warehouse& w,
                            const std::string& location, const Inputs& in,
                            const std::set<std::string>& rewritten,
                            const std::set<const DeleteFile*>& removed, DeleteMerge& merge,
                            snapshot_writer::Written& written);

}  // namespace tablemere::maintenance::compaction
