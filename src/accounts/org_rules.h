// Rules about an organisation's members that several use cases check (orgs.cc).
#pragma once

#include "common/result.h"
#include "metastore/metastore.h"

namespace tablemere::accounts {

// Human admins of an organisation, as `stores` (the caller's transaction) sees them:
// agents never count for last-admin protection.
Result<int> HumanAdmins(metastore::Stores& stores, const OrgId& org);

}  // namespace tablemere::accounts
