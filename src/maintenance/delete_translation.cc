#include "maintenance/delete_translation.h"

namespace tablemere::maintenance {
namespace {

// Runs translate-deletes on `plan` (its input, if any, already in `run`'s directory) and
// uploads what it wrote: the worker's answer and the uploaded file's path ("" when no row
// was left to write).
struct Translated {
  protocol::TranslateDeletesAnswer answer;
  std::string path;
};

Result<Translated> Translate(WarehouseFiles& files, Random& random, const metastore::Warehouse& w,
                             const WorkerOptions& worker, WorkerRun& run,
                             const std::string& location, protocol::TranslateDeletesPlan plan,
                             snapshot_writer::Written& written) {
  const std::string output = run.Local("out.parquet");
  plan.output = output;
  Translated t;
  TM_ASSIGN(t.answer, run.Ask<protocol::TranslateDeletesAnswer>(worker, "translate-deletes", plan));
  if (t.answer.written.file.record_count <= 0) return t;
  t.path = location + "data/rebased-deletes-" + random.Uuid() + ".parquet";
  written.Add(t.path);
  TM_TRY(files.PutFile(w, t.path, output));
  return t;
}

// `file` with the metrics and path of the file the worker wrote (position deletes, as
// Parquet), and the data file it names when it names one.
iceberg::DataFile WithWritten(iceberg::DataFile file, const Translated& t) {
  iceberg::DataFile written = snapshot_writer::WrittenFile(t.answer.written.file);
  written.content = iceberg::FileContent::kPositionDeletes;
  written.path = t.path;
  written.partition = std::move(file.partition);
  written.referenced_data_file = t.answer.written.referenced_data_file;
  written.block_size_in_bytes = file.block_size_in_bytes;
  return written;
}

}  // namespace

Result<std::optional<iceberg::DataFile>> TranslateDeleteFile(
    WarehouseFiles& files, Random& random, const metastore::Warehouse& w,
    const WorkerOptions& worker, const std::string& location, const iceberg::DataFile& data_file,
    const protocol::RowMoves& moves, snapshot_writer::Written& written) {
  TM_ASSIGN(WorkerRun run, WorkerRun::Start(worker.scratch_dir, random, "translate"));
  const std::string input = run.Local("in.parquet");
  TM_TRY(files.CopyToFile(w, data_file.path, input));
  TM_ASSIGN(Translated t,
            Translate(files, random, w, worker, run, location, {input, {}, moves, ""}, written));
  TM_TRY(RowsAddUp(t.answer.rows_read, t.answer.written.file.record_count, t.answer.rows_dropped,
                   data_file.record_count, "re-aimed delete file"));
  if (t.path.empty()) return std::optional<iceberg::DataFile>();
  return std::optional<iceberg::DataFile>(WithWritten(data_file, t));
}

Result<std::optional<iceberg::DataFile>> DeletesForRemovedFiles(
    WarehouseFiles& files, Random& random, const metastore::Warehouse& w,
    const WorkerOptions& worker, const std::string& location,
    const std::vector<std::string>& removed, const iceberg::PartitionTuple& partition,
    const protocol::RowMoves& moves, snapshot_writer::Written& written) {
  TM_ASSIGN(WorkerRun run, WorkerRun::Start(worker.scratch_dir, random, "translate"));
  TM_ASSIGN(Translated t,
            Translate(files, random, w, worker, run, location, {"", removed, moves, ""}, written));
  if (t.path.empty()) return std::optional<iceberg::DataFile>();
  iceberg::DataFile model;
  model.partition = partition;
  return std::optional<iceberg::DataFile>(WithWritten(std::move(model), t));
}

}  // namespace tablemere::maintenance
