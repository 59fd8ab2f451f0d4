// Wires the subsystems together: backends, services, adapters and listeners. This is
// the one place where concrete backends are chosen.
#pragma once

#include <memory>

#include "common/result.h"
#include "server/config.h"

namespace tablemere::server {

class App {
 public:
  virtual ~App() = default;
  // Opens the data directory, binds the listeners and starts serving.
  static Result<std::unique_ptr<App>> Start(const Config& config);
  // Graceful: stop accepting, finish in-flight requests, stop background work.
  virtual void Shutdown() = 0;
};

}  // namespace tablemere::server
