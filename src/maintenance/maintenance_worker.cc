#include "maintenance/maintenance_worker.h"

#include <algorithm>

#include "common/files.h"
#include "common/subprocess.h"

namespace tablemere::maintenance {

namespace fs = std::filesystem;

Result<WorkerRun> WorkerRun::Start(const std::string& scratch_dir, Random& random,
                                   const std::string& prefix) {
  const fs::path dir = fs::path(scratch_dir) / (prefix + "-" + random.Uuid());
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return Fail(ErrorCode::kUnavailable, "cannot create " + dir.string() + ": " + ec.message());
  }
  return WorkerRun(dir);
}

WorkerRun::WorkerRun(WorkerRun&& other) noexcept : dir_(std::move(other.dir_)) {
  other.dir_.clear();
}

WorkerRun::~WorkerRun() {
  if (dir_.empty()) return;
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

Result<Json> WorkerRun::Run(const std::string& worker_path, int64_t timeout_ms,
                            const std::string& job, const Json& plan) {
  const std::string plan_path = Local("plan.json"), result_path = Local("result.json");
  TM_TRY(WriteFileAtomically(plan_path, plan.dump(), 0600));
  ProcessLimits limits;
  limits.timeout_ms = timeout_ms;
  limits.stderr_path = Local("worker.log");
  TM_ASSIGN(int status,
            RunProcess({worker_path, job, "--plan", plan_path, "--result", result_path}, limits));
  if (status != 0) {
    auto log = ReadWholeFile(limits.stderr_path);
    std::string why = log ? *log : "";
    while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) why.pop_back();
    return Fail(ErrorCode::kInvalidInput, "the worker failed: " + why.substr(0, 500));
  }
  TM_ASSIGN(std::string text, ReadWholeFile(result_path));
  Json answer = Json::parse(text, nullptr, false);
  if (!answer.is_object()) return Fail(ErrorCode::kInternal, "the worker's result is not JSON");
  return answer;
}

int64_t WorkerOptions::TimeoutAt(std::chrono::steady_clock::time_point now) const {
  if (deadline == std::chrono::steady_clock::time_point::max()) return timeout_ms;
  if (now >= deadline) return 0;
  const int64_t left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
  return std::min(timeout_ms, left);
}

Result<Json> WorkerRun::Run(const WorkerOptions& worker, const std::string& job, const Json& plan) {
  const int64_t timeout = worker.TimeoutAt(std::chrono::steady_clock::now());
  if (timeout <= 0) {
    return Fail(ErrorCode::kUnavailable, "no time is left for the worker's " + job);
  }
  return Run(worker.worker_path, timeout, job, plan);
}

Result<void> RowsAddUp(int64_t read, int64_t kept, int64_t dropped, int64_t rows_in,
                       const std::string& what) {
  if (read == rows_in && kept >= 0 && dropped >= 0 && kept + dropped == rows_in) return {};
  return Fail(ErrorCode::kInternal,
              "the worker's " + what + " does not add up: " + std::to_string(rows_in) +
                  " rows in, " + std::to_string(read) + " read, " + std::to_string(kept) +
                  " written, " + std::to_string(dropped) + " left out");
}

}  // namespace tablemere::maintenance
