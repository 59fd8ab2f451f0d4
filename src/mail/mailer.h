// Sending mail: the interface the account flows use (signup and recovery codes,
// invitations, password links). SmtpMailer delivers through an SMTP server; without one
// the deployment logs that a message was sent and the internal routes serve the codes.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace tablemere::mail {

struct Message {
  std::string to;
  std::string subject;
  std::string text;  // plain-text body
};

class Mailer {
 public:
  virtual ~Mailer() = default;
  // Thread-safe. Errors: kUnavailable with detail code "mail_error" (the message never
  // contains credentials); kInvalidInput for an address or subject that would inject
  // headers.
  virtual Result<void> Send(const Message& message) = 0;
  // "email" when messages leave the machine, "log" when they are only logged.
  virtual std::string_view Delivery() const = 0;
};

}  // namespace tablemere::mail
