// Who calls a use case: the authenticated principal and what it authenticated with.
#pragma once

#include <string>

#include "metastore/metastore.h"

namespace tablemere::accounts {

struct Caller {
  metastore::Principal principal;
  std::string key_id;  // the API key (or the key a /v1/tokens token came from); "" for a session
  std::string session_id;  // the login session of a session's access token; "" otherwise
};

}  // namespace tablemere::accounts
