#include "http/message.h"

#include "common/strings.h"

namespace tablemere::http {

std::optional<std::string> Headers::Get(std::string_view name) const {
  for (const auto& [k, v] : entries_) {
    if (EqualsIgnoreCase(k, name)) return v;
  }
  return std::nullopt;
}

std::string Headers::GetOr(std::string_view name, std::string fallback) const {
  auto v = Get(name);
  return v ? *v : std::move(fallback);
}

void Headers::Add(std::string name, std::string value) {
  entries_.emplace_back(std::move(name), std::move(value));
}

void Headers::Set(std::string name, std::string value) {
  Remove(name);
  Add(std::move(name), std::move(value));
}

void Headers::Remove(std::string_view name) {
  std::erase_if(entries_, [&](const auto& e) { return EqualsIgnoreCase(e.first, name); });
}

Result<std::string> ReadAll(BodyReader& body, size_t limit) {
  std::string out;
  if (auto n = body.declared_length(); n && *n > limit) {
    return Fail(ErrorCode::kInvalidInput, "request body too large");
  }
  char buf[64 * 1024];
  while (true) {
    TM_ASSIGN(size_t n, body.Read(buf, sizeof buf));
    if (n == 0) break;
    if (out.size() + n > limit) return Fail(ErrorCode::kInvalidInput, "request body too large");
    out.append(buf, n);
  }
  return out;
}

Response Response::Json(int status, std::string body) {
  Response r;
  r.status = status;
  r.headers.Set("Content-Type", "application/json");
  r.body = std::move(body);
  return r;
}

Response Response::Text(int status, std::string content_type, std::string body) {
  Response r;
  r.status = status;
  r.headers.Set("Content-Type", std::move(content_type));
  r.body = std::move(body);
  return r;
}

}  // namespace tablemere::http
