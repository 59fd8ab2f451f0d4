// The hourly compaction byte budget, shared by every server over one metastore. It also
// makes compactions run one at a time across them: a compaction reserves the rest of the
// hour's budget before it starts and gives back what it did not read when it ends. One
// shared value (metastore::SharedValueStore), changed by compare-and-set only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/result.h"
#include "maintenance/catalog_names.h"
#include "metastore/metastore.h"

namespace tablemere::maintenance {

// Who holds a reservation: the server (its name lasts across its restarts: no two live
// processes share it) and the run of it (new at every start).
struct BudgetHolder {
  std::string server;
  std::string run;
};

class CompactionBudget {
 public:
  // `holder` names this server's reservations. A reservation neither renewed nor released
  // within `lease_ms` (its server died) is void: another may reserve, and all it held
  // counts as read. One an earlier run of this same server left is a killed process's,
  // void at once, its reading forgotten (as a restart forgets what it was doing).
  // `sole_server`: no other server uses the metastore (the embedded one), so every
  // reservation another run left is void so.
  CompactionBudget(metastore::SharedValueStore& values, const Clock& clock, BudgetHolder holder,
                   int64_t bytes_per_hour, int64_t lease_ms, bool sole_server)
      : values_(values),
        clock_(clock),
        holder_(std::move(holder)),
        bytes_per_hour_(bytes_per_hour),
        lease_ms_(lease_ms),
        sole_server_(sole_server) {}

  int64_t lease_ms() const { return lease_ms_; }

  // What the compaction about to run may read (the hour's rest, possibly 0), reserved to
  // this server; nullopt while another compaction, on any server, holds the budget.
  Result<std::optional<int64_t>> Reserve();
  // Extends this server's reservation by the lease, from now (a compaction renews it while
  // it runs).
  Result<void> Renew();
  // Ends this server's reservation, charging `bytes_read` to the hour.
  Result<void> Release(int64_t bytes_read);

 private:
  metastore::SharedValueStore& values_;
  const Clock& clock_;
  const BudgetHolder holder_;
  const int64_t bytes_per_hour_;
  const int64_t lease_ms_;
  const bool sole_server_;
};

}  // namespace tablemere::maintenance
