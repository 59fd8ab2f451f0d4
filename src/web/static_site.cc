#include "web/static_site.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <system_error>

#include "common/strings.h"

namespace tablemere::web {
namespace {

namespace fs = std::filesystem;

// Types by extension; anything else is served as bytes. `application/wasm` matters:
// browsers compile a module streamed with any other type only through a slower path,
// and DuckDB-WASM refuses it outright.
std::string MimeOf(std::string_view name) {
  static const std::map<std::string, std::string, std::less<>> kTypes = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".map", "application/json"},
      {".wasm", "application/wasm"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".txt", "text/plain; charset=utf-8"},
  };
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return "application/octet-stream";
  auto it = kTypes.find(name.substr(dot));
  return it == kTypes.end() ? "application/octet-stream" : it->second;
}

struct SiteFile {
  std::string path;     // on disk
  std::string gz_path;  // the precompressed variant beside it, when built
  std::string mime;
  bool immutable = false;  // content-hashed names under assets/
};

// A file streamed in the response body; the descriptor closes with the source.
class FileSource final : public ByteSource {
 public:
  explicit FileSource(int fd) : fd_(fd) {}
  ~FileSource() override { ::close(fd_); }
  Result<size_t> Read(char* buffer, size_t size) override {
    for (;;) {
      ssize_t n = ::read(fd_, buffer, size);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno == EINTR) continue;
      return Fail(ErrorCode::kInternal,
                  std::string("reading a site file: ") + std::strerror(errno));
    }
  }

 private:
  int fd_;
};

http::Response Problem(int status, const std::string& code, const std::string& message) {
  std::string body = R"({"error":{"code":")" + code + R"(","message":")" + message + R"("}})";
  return http::Response::Json(status, std::move(body));
}

bool AcceptsGzip(const http::Request& request) {
  for (const auto& part : Split(ToLower(request.headers.GetOr("Accept-Encoding", "")), ',')) {
    std::string coding = Trim(part.substr(0, part.find(';')));
    if (coding == "gzip" && part.find("q=0") == std::string::npos) return true;
  }
  return false;
}

}  // namespace

struct StaticSite::Impl {
  std::map<std::string, SiteFile, std::less<>> files;  // "index.html", "assets/app-X.js"
  std::string csp;
};

StaticSite::StaticSite(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StaticSite::~StaticSite() = default;

Result<std::unique_ptr<StaticSite>> StaticSite::Open(SiteOptions options) {
  std::error_code ec;
  const fs::path root = fs::path(options.root);
  if (!fs::is_regular_file(root / "index.html", ec)) {
    return Fail(ErrorCode::kNotFound, "no built account page in " + options.root +
                                          " (build it with scripts/build.sh, or pass --web-dir)");
  }
  auto impl = std::make_unique<Impl>();
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string rel = fs::relative(it->path(), root, ec).generic_string();
    if (ec) break;
    if (rel.ends_with(".gz")) continue;  // attached to the file it compresses below
    SiteFile f;
    f.path = it->path().string();
    f.mime = MimeOf(rel);
    f.immutable = rel.starts_with("assets/");
    if (fs::path gz = it->path().string() + ".gz"; fs::is_regular_file(gz, ec)) {
      f.gz_path = gz.string();
    }
    impl->files.emplace(std::move(rel), std::move(f));
  }
  if (ec) return Fail(ErrorCode::kInternal, "reading " + options.root + ": " + ec.message());
  std::string connect = "'self'";
  for (const auto& o : options.connect_origins) connect += " " + o;
  // Only this deployment: scripts and the WebAssembly they compile ('wasm-unsafe-eval';
  // DuckDB-WASM stalls without it), workers from here, fetches to the API (same origin),
  // the catalog and the S3 listener.
  impl->csp =
      "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; "
      "connect-src " +
      connect +
      "; style-src 'self'; img-src 'self' data:; font-src 'self'; base-uri 'none'; "
      "form-action 'self'; frame-ancestors 'none'";
  return std::unique_ptr<StaticSite>(new StaticSite(std::move(impl)));
}

bool StaticSite::Owns(std::string_view path) {
  return path == "/app" || path.starts_with("/app/") || path == "/terms" || path == "/privacy";
}

http::Response StaticSite::NotBuilt(const http::Request& request, const std::string& root) {
  (void)request;
  return Problem(404, "web_not_built",
                 "The account page is not built into " + root +
                     "; run scripts/build.sh (npm ci and the web build) or pass --web-dir");
}

http::Response StaticSite::Handle(const http::Request& request) const {
  if (request.method != "GET" && request.method != "HEAD") {
    http::Response r = Problem(405, "method_not_allowed", "The account page answers GET and HEAD");
    r.headers.Set("Allow", "GET, HEAD");
    return r;
  }
  if (request.path == "/app") {
    http::Response r;
    r.status = 301;
    r.headers.Set("Location", "/app/" + (request.query.empty() ? "" : "?" + request.query));
    return r;
  }
  // Pages are the page's own routes: a path under /app/ without a file is the page
  // itself (index.html), which reads its location; a missing asset is a 404.
  std::string rel;
  if (request.path == "/terms") {
    rel = "terms.html";
  } else if (request.path == "/privacy") {
    rel = "privacy.html";
  } else {
    rel = request.path.substr(5);  // after "/app/"
  }
  auto it = impl_->files.find(rel);
  if (it == impl_->files.end()) {
    if (rel.starts_with("assets/") || rel.find('.') != std::string::npos) {
      return Problem(404, "not_found", "No such file in the account page");
    }
    it = impl_->files.find("index.html");
  }
  const SiteFile& f = it->second;
  const bool gz = !f.gz_path.empty() && AcceptsGzip(request);
  // The length and validator come from the open file, so a rebuilt site is never sent
  // under the old file's length.
  int fd = ::open((gz ? f.gz_path : f.path).c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return Problem(500, "internal_error", "The account page's file could not be read: " + why);
  }
  auto source = std::make_unique<FileSource>(fd);
  const uint64_t length = static_cast<uint64_t>(st.st_size);
  const std::string etag = "\"" + std::to_string(length) + "-" +
                           std::to_string(static_cast<int64_t>(st.st_mtim.tv_sec)) +
                           std::to_string(st.st_mtim.tv_nsec) + (gz ? "-gz" : "") + "\"";
  http::Response r;
  r.headers.Set("Content-Type", f.mime);
  r.headers.Set("Content-Security-Policy", impl_->csp);
  r.headers.Set("X-Content-Type-Options", "nosniff");
  r.headers.Set("Referrer-Policy", "no-referrer");
  r.headers.Set("Cache-Control", f.immutable ? "public, max-age=31536000, immutable" : "no-cache");
  r.headers.Set("ETag", etag);
  r.headers.Set("Vary", "Accept-Encoding");
  if (request.headers.GetOr("If-None-Match", "") == etag) {
    r.status = 304;
    return r;
  }
  if (gz) r.headers.Set("Content-Encoding", "gzip");
  if (request.method == "HEAD") {
    r.head_length = length;
    return r;
  }
  r.stream = std::move(source);
  r.stream_length = length;
  return r;
}

}  // namespace tablemere::web
