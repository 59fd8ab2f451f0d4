// LogMailer: "log" delivery for a stack without an SMTP server. Each message — recipient,
// subject and the whole text, so the code or link in it — is written to the server's
// output, where the person who started the stack (scripts/start.sh) reads it. Only used
// when no SMTP host is configured: with one, nothing secret is ever logged.
#pragma once

#include <cstdio>
#include <memory>

#include "mail/mailer.h"

namespace tablemere::mail {

// `out` receives one block per message (stderr for the server); it must outlive the
// mailer. Thread-safe: a message's lines are written together.
std::unique_ptr<Mailer> NewLogMailer(std::FILE* out);

}  // namespace tablemere::mail
