// Test-only fault injection for multi-step writes: CrashPoint("name") kills the process on
// the spot, as SIGKILL would, when the environment variable TABLEMERE_TEST_CRASH_AT names
// that point. Black-box tests start a server with it to stop a job between two of its
// steps and then check, after a restart, that nothing acknowledged was lost and nothing
// half-done is visible. Unset (as in every real deployment), it does nothing.
#pragma once

#include <string_view>

namespace tablemere {

void CrashPoint(std::string_view name);

}  // namespace tablemere
