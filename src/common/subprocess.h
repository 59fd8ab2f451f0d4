// Runs a helper program (the maintenance worker) as a child process: lowered priority,
// no inherited descriptors but its stderr, and a deadline after which it is killed.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace tablemere {

struct ProcessLimits {
  int niceness = 10;               // added to the child's priority
  int64_t timeout_ms = 3'600'000;  // killed (SIGKILL) after this
  std::string stderr_path;         // where its stderr goes ("" : /dev/null)
};

// Runs argv[0] with `argv` and waits. Answers the exit status; kUnavailable when it cannot
// start, was killed by a signal, or ran out of time (it is killed then).
Result<int> RunProcess(const std::vector<std::string>& argv, const ProcessLimits& limits);

}  // namespace tablemere
