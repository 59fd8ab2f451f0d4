// Running the table-maintenance worker (`tablemere-maint`, Arrow) on a plan: each run in
// a scratch directory of its own, removed with it, so nothing a run leaves outlives it.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "catalog/catalog_support.h"
#include "common/clock.h"
#include "common/result.h"
#include "maintenance/catalog_names.h"
#include "maintenance/worker_protocol.h"

namespace tablemere::maintenance {

// Where the worker is and where its runs may put files.
struct WorkerOptions {
  std::string worker_path;  // tablemere-maint
  std::string scratch_dir;
  int64_t timeout_ms = 3'600'000;  // each run's
  // When every run together must end (the rebase's runs inside one commit request).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();

  // The timeout of a run started at `now`: the shorter of a run's and what is left before
  // the deadline (0: none is left).
  int64_t TimeoutAt(std::chrono::steady_clock::time_point now) const;
};

class WorkerRun {
 public:
  // A new directory under `scratch_dir`, named `prefix`-<uuid>.
  static Result<WorkerRun> Start(const std::string& scratch_dir, Random& random,
                                 const std::string& prefix);
  WorkerRun(WorkerRun&& other) noexcept;
  WorkerRun& operator=(WorkerRun&&) = delete;
  ~WorkerRun();

  // A path in the run's directory.
  std::string Local(const std::string& name) const { return (dir_ / name).string(); }
  // Runs `tablemere-maint <job> --plan … --result …`: the worker's answer, or kInvalidInput
  // with the end of what it printed when it failed (or its timeout).
  Result<Json> Run(const std::string& worker_path, int64_t timeout_ms, const std::string& job,
                   const Json& plan);
  // The same, bounded by `worker`'s timeout and deadline (kUnavailable once it has passed).
  Result<Json> Run(const WorkerOptions& worker, const std::string& job, const Json& plan);

  // Typed: the worker protocol's `plan` for `job`, and its answer decoded (an answer that
  // does not decode is kInvalidInput, as one the worker failed to give).
  template <typename Answer, typename Plan>
  Result<Answer> Ask(const std::string& worker_path, int64_t timeout_ms, const std::string& job,
                     const Plan& plan) {
    TM_ASSIGN(Json answer, Run(worker_path, timeout_ms, job, protocol::Encode(plan)));
    return protocol::Decode<Answer>(answer);
  }
  template <typename Answer, typename Plan>
  Result<Answer> Ask(const WorkerOptions& worker, const std::string& job, const Plan& plan) {
    TM_ASSIGN(Json answer, Run(worker, job, protocol::Encode(plan)));
    return protocol::Decode<Answer>(answer);
  }

 private:
  explicit WorkerRun(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::filesystem::path dir_;
};

// Whether the worker's answer accounts for each of `rows_in` input rows: all `read`, each
// either `written` or left out (`dropped`). What does not add up is kInternal, and is not
// uploaded.
Result<void> RowsAddUp(int64_t read, int64_t written, int64_t dropped, int64_t rows_in,
                       const std::string& what);

}  // namespace tablemere::maintenance
