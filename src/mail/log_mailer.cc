#include "mail/log_mailer.h"

#include <mutex>
#include <string>

namespace tablemere::mail {
namespace {

class LogMailer final : public Mailer {
 public:
  explicit LogMailer(std::FILE* out) : out_(out) {}

  std::string_view Delivery() const override { return "log"; }

  Result<void> Send(const Message& m) override {
    // Indented so a block reads as one message between the access log's lines.
    std::string block = "mail (log delivery, no SMTP server configured)\n  To: " + m.to +
                        "\n  Subject: " + m.subject + "\n";
    size_t start = 0;
    while (start < m.text.size()) {
      size_t end = m.text.find('\n', start);
      if (end == std::string::npos) end = m.text.size();
      block += "  | " + m.text.substr(start, end - start) + "\n";
      start = end + 1;
    }
    std::lock_guard lock(mu_);
    if (std::fputs(block.c_str(), out_) < 0 || std::fflush(out_) != 0) {
      return Fail(Error{ErrorCode::kUnavailable, "The message could not be logged", {}}.With(
          "code", "mail_error"));
    }
    return {};
  }

 private:
  std::FILE* out_;
  std::mutex mu_;
};

}  // namespace

std::unique_ptr<Mailer> NewLogMailer(std::FILE* out) { return std::make_unique<LogMailer>(out); }

}  // namespace tablemere::mail
