// The control-plane wire adapter (/v1/… and /healthz on the API listener): JSON in and
// out, one error envelope {"error": {code, message, request_id, …}}.
#pragma once

#include <functional>
#include <memory>

#include "accounts/account_service.h"
#include "accounts/devices.h"
#include "accounts/sessions.h"
#include "accounts/verification.h"
#include "catalog/control_tables.h"
#include "http/message.h"
#include "maintenance/table_maintenance.h"

namespace tablemere::api::control {

struct ControlApiOptions {
  // Whether the catalog answers (for /healthz); returns false when it does not.
  std::function<bool()> catalog_ok;
  std::function<bool()> state_ok;
  // The operator's secret for /internal/… (X-Bootstrap-Secret); empty: those routes off.
  std::string bootstrap_secret;
  // Test servers only (TABLEMERE_TEST_CLOCK=1): moves the server's clock forward,
  // behind the bootstrap secret (POST /internal/clock).
  std::function<void(int64_t)> advance_clock;
  // Writes a backup of the embedded deployment into a new directory (POST
  // /internal/backup, behind the bootstrap secret); answers what it wrote, as JSON.
  std::function<Result<std::string>(const std::string& to)> backup;
};

// The services the control API's routes call.
struct ControlServices {
  accounts::AccountService& accounts;
  catalog::ControlTables& tables;
  accounts::Verification& verification;
  accounts::DeviceFlow& devices;
  accounts::Sessions& sessions;
  maintenance::TableMaintenance& maintenance;
};

class ControlApi {
 public:
  ControlApi(ControlServices services, ControlApiOptions options);
  ~ControlApi();
  http::Response Handle(http::Request& request);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tablemere::api::control
