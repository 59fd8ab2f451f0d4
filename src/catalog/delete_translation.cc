#include "catalog/delete_translation.h"

namespace tablemere::catalog {

Result<std::optional<Json>> TranslateDeleteFile(WarehouseFiles& files, Random& random,
                                                const metastore::Warehouse& w,
                                                const WorkerOptions& worker,
                                                const std::string& location, const Json& data_file,
                                                const Json& moves,
                                                snapshot_writer::Written& written) {
  TM_ASSIGN(WorkerRun run, WorkerRun::Start(worker.scratch_dir, random, "translate"));
  const std::string input = run.Local("in.parquet"), output = run.Local("out.parquet");
  TM_TRY(files.CopyToFile(w, data_file.at("file_path").get<std::string>(), input));
  TM_ASSIGN(Json metrics, run.Run(worker.worker_path, worker.timeout_ms, "translate-deletes",
                                  Json{{"input", input}, {"moves", moves}, {"output", output}}));
  const int64_t rows_in = data_file.value("record_count", int64_t{-1});
  const int64_t kept = metrics.value("record_count", int64_t{-1});
  const int64_t dropped = metrics.value("rows_dropped", int64_t{-1});
  if (metrics.value("rows_read", int64_t{-2}) != rows_in || kept < 0 || dropped < 0 ||
      kept + dropped != rows_in) {
    return Fail(ErrorCode::kInternal, "the re-aimed delete file does not add up");
  }
  if (kept == 0) return std::optional<Json>();
  const std::string path = location + "data/rebased-deletes-" + random.Uuid() + ".parquet";
  written.Add(path);
  TM_TRY(files.PutFile(w, path, output));
  Json out = data_file;
  const Json fields = snapshot_writer::FileMetrics(metrics);
  for (const auto& [key, value] : fields.items()) out[key] = value;
  out["file_path"] = path;
  // Iceberg v2's optional field, where the writer's manifests have it.
  if (out.contains("referenced_data_file")) {
    out["referenced_data_file"] = metrics.value("referenced_data_file", Json());
  }
  return std::optional<Json>(std::move(out));
}

}  // namespace tablemere::catalog
