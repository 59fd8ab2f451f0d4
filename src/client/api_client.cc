#include "client/api_client.h"

#include <curl/curl.h>

#include <memory>

namespace tablemere::client {
namespace {

// libcurl wants its global state set up once, before any thread uses it.
void InitCurlOnce() {
  static const bool done = [] {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    return true;
  }();
  (void)done;
}

size_t Collect(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

// Keeps the Retry-After header; every other header is ignored.
size_t Header(char* data, size_t size, size_t count, void* out) {
  std::string line(data, size * count);
  constexpr std::string_view kName = "retry-after:";
  if (line.size() > kName.size()) {
    std::string head = line.substr(0, kName.size());
    for (auto& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (head == kName) {
      std::string v = line.substr(kName.size());
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.erase(v.begin());
      while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) v.pop_back();
      *static_cast<std::string*>(out) = v;
    }
  }
  return size * count;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

ApiClient::ApiClient(std::string base_url, std::string api_key, std::string user_agent)
    : base_url_(std::move(base_url)),
      api_key_(std::move(api_key)),
      user_agent_(std::move(user_agent)) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  InitCurlOnce();
}

std::string ApiClient::Escape(const std::string& segment) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : segment) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Result<Answer> ApiClient::Send(const Call& call) const {
  if (call.authenticated && api_key_.empty()) {
    return Fail(Error{
        ErrorCode::kUnauthenticated,
        "No API key: pass --api-key, set TABLEMERE_API_KEY, or save one with "
        "tablemere login (or signup --save)",
        {}}.With("code", "missing_credential"));
  }
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return Fail(ErrorCode::kInternal, "libcurl could not start a request");
  std::string url = base_url_ + call.path;
  char sep = '?';
  for (const auto& [k, v] : call.query) {
    url += sep;
    url += Escape(k) + "=" + Escape(v);
    sep = '&';
  }
  std::unique_ptr<curl_slist, SlistDeleter> headers;
  auto add = [&](const std::string& h) {
    headers.reset(curl_slist_append(headers.release(), h.c_str()));
  };
  add("Accept: application/json");
  // The key leaves the process only here, as the Authorization header to the API.
  if (call.authenticated) add("Authorization: Bearer " + api_key_);
  if (!call.idempotency_key.empty()) add("Idempotency-Key: " + call.idempotency_key);
  std::string payload;
  if (!call.form.empty()) {
    for (const auto& [k, v] : call.form) {
      if (!payload.empty()) payload += '&';
      payload += Escape(k) + "=" + Escape(v);
    }
    add("Content-Type: application/x-www-form-urlencoded");
  } else if (call.body) {
    payload = call.body->dump();
    add("Content-Type: application/json");
  }
  std::string response, retry_after;
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, call.method.c_str());
  if (call.method == "HEAD") curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  if (call.body || !call.form.empty()) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, payload.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(payload.size()));
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_USERAGENT, user_agent_.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &response);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, Header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &retry_after);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK) {
    return Fail(Error{
        ErrorCode::kUnavailable, "No answer from " + base_url_ + ": " + curl_easy_strerror(rc), {}}
                    .With("code", "unreachable")
                    .With("remedy",
                          "Check the URL (--url, TABLEMERE_URL) and that the server "
                          "runs; safe to retry"));
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  Answer a;
  a.status = static_cast<int>(status);
  a.retry_after = retry_after;
  if (!response.empty()) {
    a.body = Json::parse(response, nullptr, false);
    if (a.body.is_discarded()) a.body = response;
  }
  return a;
}

}  // namespace tablemere::client
