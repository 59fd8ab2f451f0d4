#include "catalog/commit_rebaser.h"

namespace tablemere::catalog {

Result<void> RefuseMaintenanceMarks(const Json& updates) {
  if (!updates.is_array()) return {};
  for (const auto& u : updates) {
    if (!u.is_object() || !u.contains("snapshot") || !u["snapshot"].is_object()) continue;
    const Json& snapshot = u["snapshot"];
    if (snapshot.contains("summary") && snapshot["summary"].is_object() &&
        snapshot["summary"].contains(kMaintenanceSummaryKey)) {
      return Fail(BadRequest(std::string("The snapshot summary key '") + kMaintenanceSummaryKey +
                             "' is reserved for the catalog's own maintenance commits; commit "
                             "the snapshot without it"));
    }
  }
  return {};
}

}  // namespace tablemere::catalog
