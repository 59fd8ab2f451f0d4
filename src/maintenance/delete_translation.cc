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

// `file` with the metrics and path of the file the worker wrote.
Json WithWritten(Json file, const Translated& t) {
  const Json fields = snapshot_writer::FileMetrics(t.answer.written.file);
  for (const auto& [key, value] : fields.items()) file[key] = value;
  file["file_path"] = t.path;
  const auto& one = t.answer.written.referenced_data_file;
  file["referenced_data_file"] = one ? Json(*one) : Json();
  return file;
}

}  // namespace

Result<std::optional<Json>> TranslateDeleteFile(WarehouseFiles& files, Random& random,
                                                const metastore::Warehouse& w,
                                                const WorkerOptions& worker,
                                                const std::string& location, const Json& data_file,
                                                const protocol::RowMoves& moves,
                                                snapshot_writer::Written& written) {
  TM_ASSIGN(WorkerRun run, WorkerRun::Start(worker.scratch_dir, random, "translate"));
  const std::string input = run.Local("in.parquet");
  TM_TRY(files.CopyToFile(w, data_file.at("file_path").get<std::string>(), input));
  TM_ASSIGN(Translated t,
            Translate(files, random, w, worker, run, location, {input, {}, moves, ""}, written));
  TM_TRY(RowsAddUp(t.answer.rows_read, t.answer.written.file.record_count, t.answer.rows_dropped,
                   data_file.value("record_count", int64_t{-1}), "re-aimed delete file"));
  if (t.path.empty()) return std::optional<Json>();
  Json out = WithWritten(data_file, t);
  // Iceberg v2's optional field only where the writer's manifests have it.
  if (!data_file.contains("referenced_data_file")) out.erase("referenced_data_file");
  return std::optional<Json>(std::move(out));
}

Result<std::optional<Json>> DeletesForRemovedFiles(
    WarehouseFiles& files, Random& random, const metastore::Warehouse& w,
    const WorkerOptions& worker, const std::string& location,
    const std::vector<std::string>& removed, const Json& partition, const protocol::RowMoves& moves,
    snapshot_writer::Written& written) {
  TM_ASSIGN(WorkerRun run, WorkerRun::Start(worker.scratch_dir, random, "translate"));
  TM_ASSIGN(Translated t,
            Translate(files, random, w, worker, run, location, {"", removed, moves, ""}, written));
  if (t.path.empty()) return std::optional<Json>();
  return std::optional<Json>(
      WithWritten(Json{{"content", 1}, {"file_format", "PARQUET"}, {"partition", partition}}, t));
}

}  // namespace tablemere::maintenance
