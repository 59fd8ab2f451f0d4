// Records the audit events of the account use cases, each with the address of the
// request it came from (RequestOrigins) and the time.
#pragma once

#include "accounts/request_origins.h"
#include "common/clock.h"
#include "common/result.h"
#include "metastore/metastore.h"

namespace tablemere::accounts {

class AuditRecorder {
 public:
  AuditRecorder(metastore::Metastore& meta, const Clock& clock, const RequestOrigins& origins)
      : meta_(meta), clock_(clock), origins_(origins) {}

  // In a transaction of its own.
  Result<void> Record(metastore::AuditEvent event) {
    Complete(event);
    return meta_.audit().Record(event);
  }
  // In the caller's transaction: it lands with the change it describes or not at all.
  Result<void> RecordIn(metastore::Stores& stores, metastore::AuditEvent event) {
    Complete(event);
    return stores.audit().Record(event);
  }

 private:
  void Complete(metastore::AuditEvent& event) const {
    if (event.at_ms == 0) event.at_ms = clock_.NowMillis();
    if (event.ip.empty()) event.ip = origins_.AddressOf(event.request_id);
  }

  metastore::Metastore& meta_;
  const Clock& clock_;
  const RequestOrigins& origins_;
};

}  // namespace tablemere::accounts
