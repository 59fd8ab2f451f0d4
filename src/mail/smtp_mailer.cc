#include "mail/smtp_mailer.h"

#include <curl/curl.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>

#include "common/strings.h"

namespace tablemere::mail {
namespace {

bool HasLineBreak(const std::string& s) { return s.find_first_of("\r\n") != std::string::npos; }

// An RFC 5322 date in UTC ("Fri, 04 Dec 2026 05:00:00 +0000").
std::string MailDate() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S +0000", &tm);
  return buf;
}

// Lines end in CRLF on the wire; a line with only "." would end the DATA early, and
// libcurl dot-stuffs lines that start with one.
std::string CrLf(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\r') continue;
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

class SmtpMailer final : public Mailer {
 public:
  explicit SmtpMailer(SmtpOptions options) : o_(std::move(options)) {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  }

  std::string_view Delivery() const override { return "email"; }

  Result<void> Send(const Message& m) override {
    if (HasLineBreak(m.to) || HasLineBreak(m.subject) ||
        m.to.find_first_of("<>,;") != std::string::npos) {
      return Fail(ErrorCode::kInvalidInput, "a recipient or subject would inject mail headers");
    }
    const std::string payload = CrLf("Date: " + MailDate() + "\nFrom: " + o_.from +
                                     "\nTo: " + m.to + "\nSubject: " + m.subject +
                                     "\nMIME-Version: 1.0\nContent-Type: text/plain; "
                                     "charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n" +
                                     m.text);
    CURL* curl = curl_easy_init();
    if (!curl) return Fail(MailError("cannot start an SMTP client"));
    struct curl_slist* rcpt = curl_slist_append(nullptr, ("<" + m.to + ">").c_str());
    Reader reader{payload, 0};
    const bool implicit_tls = o_.port == 465 && o_.tls != SmtpTls::kOff;
    const std::string url = std::string(implicit_tls ? "smtps://" : "smtp://") + o_.host + ":" +
                            std::to_string(o_.port);
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_MAIL_FROM, ("<" + o_.from + ">").c_str());
    curl_easy_setopt(curl, CURLOPT_MAIL_RCPT, rcpt);
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, &Reader::Read);
    curl_easy_setopt(curl, CURLOPT_READDATA, &reader);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE, static_cast<long>(payload.size()));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, static_cast<long>(o_.timeout_seconds));
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_USE_SSL,
                     o_.tls == SmtpTls::kRequired ? CURLUSESSL_ALL
                     : o_.tls == SmtpTls::kOff    ? CURLUSESSL_NONE
                                                  : CURLUSESSL_TRY);
    if (!o_.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, o_.ca_file.c_str());
    if (!o_.user.empty()) {
      curl_easy_setopt(curl, CURLOPT_USERNAME, o_.user.c_str());
      curl_easy_setopt(curl, CURLOPT_PASSWORD, o_.password.c_str());
    }
    CURLcode rc = curl_easy_perform(curl);
    long response = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response);
    curl_slist_free_all(rcpt);
    curl_easy_cleanup(curl);
    if (rc != CURLE_OK) {
      // curl's text names the step (connect, TLS, login, rejected recipient), never the
      // password; the reply code says what the server answered.
      std::fprintf(stderr, "mail: SMTP delivery via %s:%d failed: %s (reply %ld)\n",
                   o_.host.c_str(), o_.port, curl_easy_strerror(rc), response);
      return Fail(MailError(std::string("SMTP delivery failed: ") + curl_easy_strerror(rc)));
    }
    return {};
  }

 private:
  struct Reader {
    const std::string& data;
    size_t offset;
    static size_t Read(char* out, size_t size, size_t count, void* self) {
      auto* r = static_cast<Reader*>(self);
      size_t n = std::min(size * count, r->data.size() - r->offset);
      std::memcpy(out, r->data.data() + r->offset, n);
      r->offset += n;
      return n;
    }
  };

  static Error MailError(const std::string& message) {
    return Error{ErrorCode::kUnavailable, message, {}}.With("code", "mail_error");
  }

  SmtpOptions o_;
};

}  // namespace

Result<std::unique_ptr<Mailer>> NewSmtpMailer(const SmtpOptions& options) {
  if (options.host.empty()) return Fail(ErrorCode::kInvalidInput, "SMTP host is empty");
  if (options.from.empty() || HasLineBreak(options.from)) {
    return Fail(ErrorCode::kInvalidInput, "set TABLEMERE_SMTP_FROM to the sender address");
  }
  return std::unique_ptr<Mailer>(std::make_unique<SmtpMailer>(options));
}

}  // namespace tablemere::mail
