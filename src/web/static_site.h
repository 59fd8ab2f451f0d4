// The account page's static files (/app/, /terms, /privacy), served by the API listener
// from the folder `web/build.mjs` writes (build/web): a file table read once at start, so
// no request path ever reaches the file system, with MIME types, precompressed variants,
// validators and the page's Content-Security-Policy.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "http/message.h"

namespace tablemere::web {

struct SiteOptions {
  std::string root;  // the built folder (index.html, terms.html, privacy.html, assets/)
  // Origins the page may connect to beside its own: the catalog's and the S3 listener's
  // public origins (the vended endpoint).
  std::vector<std::string> connect_origins;
};

class StaticSite {
 public:
  // Reads the folder's file table; fails when `root` is not a folder or lacks index.html.
  static Result<std::unique_ptr<StaticSite>> Open(SiteOptions options);
  ~StaticSite();

  // Whether a path is the site's: /app, /app/…, /terms, /privacy.
  static bool Owns(std::string_view path);
  // The answer for a path `Owns` accepted (a site that is not built answers through
  // `NotBuilt`).
  http::Response Handle(const http::Request& request) const;
  // The answer when the server has no built site: 404 with the remedy.
  static http::Response NotBuilt(const http::Request& request, const std::string& root);

 private:
  struct Impl;
  explicit StaticSite(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tablemere::web
