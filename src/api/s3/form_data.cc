#include "api/s3/form_data.h"

#include "common/strings.h"
#include "s3/errors.h"

namespace tablemere::api::s3 {
namespace {

constexpr size_t kReadStep = 64 * 1024;
constexpr size_t kMaxPartHead = 16 * 1024;

Error Malformed(const std::string& why) {
  return tablemere::s3::S3Error(ErrorCode::kInvalidInput, "MalformedPOSTRequest",
                                "The body of your POST request is not well-formed "
                                "multipart/form-data: " +
                                    why);
}

// The value of `param` in a header such as `form-data; name="key"; filename="a b.csv"`.
std::string HeaderParam(const std::string& header, const std::string& param) {
  for (const auto& piece : Split(header, ';')) {
    std::string p = Trim(piece);
    size_t eq = p.find('=');
    if (eq == std::string::npos || ToLower(Trim(p.substr(0, eq))) != param) continue;
    std::string v = Trim(p.substr(eq + 1));
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    return v;
  }
  return "";
}

}  // namespace

std::string FormBoundary(const std::string& content_type) {
  if (!ToLower(Trim(content_type)).starts_with("multipart/form-data")) return "";
  return HeaderParam(content_type, "boundary");
}

// The body is read as if it began with "\r\n", so the first boundary is found like
// every later one.
FormDataReader::FormDataReader(http::BodyReader& body, const std::string& boundary)
    : body_(body), delimiter_("\r\n--" + boundary), buf_("\r\n") {}

Result<bool> FormDataReader::Fill() {
  if (eof_) return false;
  Compact();
  size_t old = buf_.size();
  buf_.resize(old + kReadStep);
  auto n = body_.Read(buf_.data() + old, kReadStep);
  if (!n) {
    buf_.resize(old);
    return Fail(n.error());
  }
  buf_.resize(old + *n);
  if (*n == 0) eof_ = true;
  return *n > 0;
}

void FormDataReader::Compact() {
  if (pos_ > 0) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
}

Result<size_t> FormDataReader::Read(char* out, size_t size) {
  if (!in_part_) return 0;
  while (true) {
    size_t at = buf_.find(delimiter_, pos_);
    if (at == pos_) {  // the part ends here
      pos_ += delimiter_.size();
      in_part_ = false;
      return 0;
    }
    // Bytes that cannot be the start of a delimiter may be handed out.
    size_t safe = at != std::string::npos                   ? at
                  : buf_.size() >= pos_ + delimiter_.size() ? buf_.size() - delimiter_.size() + 1
                                                            : pos_;
    if (safe > pos_) {
      size_t n = std::min(size, safe - pos_);
      buf_.copy(out, n, pos_);
      pos_ += n;
      return n;
    }
    TM_ASSIGN(bool more, Fill());
    if (!more) return Fail(Malformed("the body ended inside a part"));
  }
}

Result<std::string> FormDataReader::ReadValue(size_t limit) {
  std::string value;
  char chunk[4096];
  while (true) {
    TM_ASSIGN(size_t n, Read(chunk, sizeof chunk));
    if (n == 0) return value;
    if (value.size() + n > limit) return Fail(Malformed("a form field is too long"));
    value.append(chunk, n);
  }
}

Result<bool> FormDataReader::Next(FormPart* part) {
  if (finished_) return false;
  if (in_part_) {
    char sink[8192];
    while (true) {
      TM_ASSIGN(size_t n, Read(sink, sizeof sink));
      if (n == 0) break;
    }
  } else if (!started_) {
    started_ = true;
    // The first boundary (a preamble before it is allowed and skipped).
    while (true) {
      size_t at = buf_.find(delimiter_, pos_);
      if (at != std::string::npos) {
        pos_ = at + delimiter_.size();
        break;
      }
      TM_ASSIGN(bool more, Fill());
      if (!more) return Fail(Malformed("no boundary"));
    }
  }
  // After a delimiter: "--" ends the body, "\r\n" starts a part (transport padding
  // before it is allowed by RFC 2046 and ignored).
  while (buf_.size() < pos_ + 2) {
    TM_ASSIGN(bool more, Fill());
    if (!more) return Fail(Malformed("the body ended after a boundary"));
  }
  if (buf_.compare(pos_, 2, "--") == 0) {
    finished_ = true;
    return false;
  }
  size_t head_end;
  while ((head_end = buf_.find("\r\n\r\n", pos_)) == std::string::npos) {
    if (buf_.size() - pos_ > kMaxPartHead) return Fail(Malformed("a part's headers are too long"));
    TM_ASSIGN(bool more, Fill());
    if (!more) return Fail(Malformed("the body ended inside a part's headers"));
  }
  std::string head = buf_.substr(pos_, head_end - pos_);
  pos_ = head_end + 4;
  *part = FormPart{};
  for (const auto& line : Split(head, '\n')) {
    std::string l = Trim(line);
    size_t colon = l.find(':');
    if (colon == std::string::npos) continue;
    std::string name = ToLower(Trim(l.substr(0, colon)));
    std::string value = Trim(l.substr(colon + 1));
    if (name == "content-disposition") {
      part->name = HeaderParam(value, "name");
      part->filename = HeaderParam(value, "filename");
    } else if (name == "content-type") {
      part->content_type = value;
    }
  }
  if (part->name.empty()) return Fail(Malformed("a part has no name"));
  in_part_ = true;
  return true;
}

}  // namespace tablemere::api::s3
