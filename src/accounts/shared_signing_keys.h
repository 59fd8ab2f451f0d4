// The control API's signing keys kept in the metastore for servers sharing it: the key set
// (PEM private keys and the previous key's grace) sealed with the master key every
// replica reads from the same file, stored as one versioned shared value.
#pragma once

#include <memory>

#include "common/clock.h"
#include "common/key_ring.h"
#include "identity/signing_keys.h"
#include "metastore/metastore.h"

namespace tablemere::accounts {

std::unique_ptr<identity::KeySetStore> NewSharedKeySetStore(metastore::SharedValueStore& values,
                                                            const KeyRing& keys, Random& random);

}  // namespace tablemere::accounts
