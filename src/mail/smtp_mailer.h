// SmtpMailer: delivers the account mails (codes, set-password and reset links, notices)
// through an SMTP server with libcurl, upgrading with STARTTLS whenever the server offers
// it (or requiring TLS when configured), authenticating when a user is given.
#pragma once

#include <memory>
#include <string>

#include "mail/mailer.h"

namespace tablemere::mail {

enum class SmtpTls {
  kOpportunistic,  // STARTTLS when the server offers it (the default)
  kRequired,       // STARTTLS must succeed, or smtps:// on port 465
  kOff,            // plain text only (a test server on loopback)
};

struct SmtpOptions {
  std::string host;  // empty: no SMTP sender
  int port = 587;
  std::string user;      // empty: no AUTH
  std::string password;  // never logged
  std::string from;      // the envelope and header sender
  SmtpTls tls = SmtpTls::kOpportunistic;
  std::string ca_file;  // extra trust anchors (a private mail relay); "" for the system's
  int timeout_seconds = 15;
};

// Errors: kInvalidInput when `options` lack a host or a sender.
Result<std::unique_ptr<Mailer>> NewSmtpMailer(const SmtpOptions& options);

}  // namespace tablemere::mail
