#include "metrics/metrics.h"

#include <cstdio>
#include <set>
#include <vector>

namespace tablemere::metrics {
namespace {

std::vector<std::string_view> Segments(std::string_view path) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') i++;
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j;
  }
  return out;
}

// The literal words of the API's routes. Anything else in a path (an id, a name, a
// handle, a typo) is not a label value: it collapses, so no request adds a series.
bool IsRouteWord(std::string_view s) {
  static const std::set<std::string_view> kWords = {
      "accept",      "agents",     "api-keys",    "approve",  "audit",    "auth",       "change",
      "config",      "connection", "credentials", "device",   "domains",  "grants",     "handles",
      "invitations", "login",      "logout",      "me",       "members",  "namespaces", "oauth",
      "onboard",     "orgs",       "password",    "pending",  "projects", "public",     "recover",
      "refresh",     "reset",      "rotate",      "sessions", "set",      "signup",     "start",
      "table",       "tables",     "terms",       "token",    "tokens",   "usage",      "verify",
      "warehouses"};
  return kWords.contains(s);
}

std::string ApiClass(const std::vector<std::string_view>& seg) {
  if (seg.empty()) return "root";
  if (seg[0] == "internal") return "internal";
  if (seg[0] != "v1") {
    return seg[0] == "healthz" || seg[0] == ".well-known" || seg[0] == "jwks.json" ||
                   seg[0] == "metrics"
               ? std::string(seg[0])
               : "other";
  }
  std::string out = "v1";
  for (size_t i = 1; i < seg.size() && i <= 4; i++) {
    if (IsRouteWord(seg[i])) out += "/" + std::string(seg[i]);
  }
  return out;
}

std::string CatalogClass(const std::vector<std::string_view>& seg) {
  if (seg.empty()) return "root";
  size_t i = 0;
  std::string family;
  if (seg[0] == "lakekeeper") {
    family = "lakekeeper.";
    i = 1;
  }
  if (i >= seg.size() || seg[i] != "v1") return family + "other";
  if (i + 1 >= seg.size()) return family + "v1";
  std::string_view s = seg[i + 1];
  if (s == "config" || s == "oauth") return family + std::string(s);
  // /v1/{prefix}/namespaces/{ns}/tables/{t}/…: the last literal word names the family.
  std::string last = "namespaces";
  for (size_t k = i + 2; k < seg.size(); k++) {
    std::string_view w = seg[k];
    if (w == "namespaces" || w == "tables" || w == "views" || w == "generic-tables" ||
        w == "credentials" || w == "metrics" || w == "rename" || w == "register" ||
        w == "properties" || w == "transactions" || w == "plan" || w == "tasks") {
      last = std::string(w);
    }
  }
  return family + last;
}

std::string S3Class(std::string_view method, const std::vector<std::string_view>& seg) {
  std::string what = seg.empty() ? "service" : seg.size() == 1 ? "bucket" : "object";
  std::string verb = method == "GET"      ? "get"
                     : method == "HEAD"   ? "head"
                     : method == "PUT"    ? "put"
                     : method == "POST"   ? "post"
                     : method == "DELETE" ? "delete"
                                          : "other";
  return what + "." + verb;
}

// Label values are produced here from a closed vocabulary, but escape anyway.
std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

}  // namespace

std::string RouteClass(std::string_view listener, std::string_view method, std::string_view path) {
  auto seg = Segments(path);
  if (listener == "api") return ApiClass(seg);
  if (listener == "catalog") return CatalogClass(seg);
  return S3Class(method, seg);
}

void Metrics::ObserveRequest(const std::string& listener, const std::string& route, int status,
                             double seconds) {
  std::lock_guard lock(mu_);
  RouteStats& r = routes_[{listener, route}];
  r.by_status_class[status / 100]++;
  r.count++;
  r.sum += seconds;
  for (size_t i = 0; i < kBuckets.size(); i++) {
    if (seconds <= kBuckets[i]) r.buckets[i]++;
  }
}

void Metrics::AddBucketRequest(const std::string& bucket, bool failed, uint64_t in, uint64_t out) {
  std::lock_guard lock(mu_);
  BucketCounters& b = buckets_[bucket];
  b.requests++;
  if (failed) b.requests_failed++;
  b.bytes_in += in;
  b.bytes_out += out;
}

Metrics::BucketCounters Metrics::Bucket(const std::string& bucket) const {
  std::lock_guard lock(mu_);
  auto it = buckets_.find(bucket);
  return it == buckets_.end() ? BucketCounters{} : it->second;
}

std::string Metrics::Render(const Gauges& g) const {
  std::string out;
  auto help = [&](const char* name, const char* type, const char* text) {
    out += std::string("# HELP ") + name + " " + text + "\n# TYPE " + name + " " + type + "\n";
  };
  std::lock_guard lock(mu_);
  help("tablemere_requests_total", "counter",
       "Requests answered, by listener, route class and status class.");
  for (const auto& [key, r] : routes_) {
    for (const auto& [cls, n] : r.by_status_class) {
      out += "tablemere_requests_total{listener=\"" + Escape(key.first) + "\",route=\"" +
             Escape(key.second) + "\",code=\"" + std::to_string(cls) + "xx\"} " +
             std::to_string(n) + "\n";
    }
  }
  help("tablemere_request_errors_total", "counter",
       "Requests answered with a 5xx status, by listener and route class.");
  for (const auto& [key, r] : routes_) {
    auto it = r.by_status_class.find(5);
    out += "tablemere_request_errors_total{listener=\"" + Escape(key.first) + "\",route=\"" +
           Escape(key.second) + "\"} " +
           std::to_string(it == r.by_status_class.end() ? 0 : it->second) + "\n";
  }
  help("tablemere_request_duration_seconds", "histogram",
       "Time from a request's head to its answer, by listener and route class.");
  for (const auto& [key, r] : routes_) {
    const std::string labels =
        "listener=\"" + Escape(key.first) + "\",route=\"" + Escape(key.second) + "\"";
    for (size_t i = 0; i < kBuckets.size(); i++) {
      out += "tablemere_request_duration_seconds_bucket{" + labels + ",le=\"" +
             Number(kBuckets[i]) + "\"} " + std::to_string(r.buckets[i]) + "\n";
    }
    out += "tablemere_request_duration_seconds_bucket{" + labels + ",le=\"+Inf\"} " +
           std::to_string(r.count) + "\n";
    out += "tablemere_request_duration_seconds_sum{" + labels + "} " + Number(r.sum) + "\n";
    out += "tablemere_request_duration_seconds_count{" + labels + "} " + std::to_string(r.count) +
           "\n";
  }
  help("tablemere_bucket_requests_total", "counter", "S3 requests served, by bucket.");
  for (const auto& [bucket, b] : buckets_) {
    out += "tablemere_bucket_requests_total{bucket=\"" + Escape(bucket) + "\"} " +
           std::to_string(b.requests) + "\n";
  }
  help("tablemere_bucket_requests_failed_total", "counter",
       "S3 requests answered with an error, by bucket.");
  for (const auto& [bucket, b] : buckets_) {
    out += "tablemere_bucket_requests_failed_total{bucket=\"" + Escape(bucket) + "\"} " +
           std::to_string(b.requests_failed) + "\n";
  }
  help("tablemere_bucket_bytes_in_total", "counter", "S3 request body bytes, by bucket.");
  for (const auto& [bucket, b] : buckets_) {
    out += "tablemere_bucket_bytes_in_total{bucket=\"" + Escape(bucket) + "\"} " +
           std::to_string(b.bytes_in) + "\n";
  }
  help("tablemere_bucket_bytes_out_total", "counter", "S3 response bytes, by bucket.");
  for (const auto& [bucket, b] : buckets_) {
    out += "tablemere_bucket_bytes_out_total{bucket=\"" + Escape(bucket) + "\"} " +
           std::to_string(b.bytes_out) + "\n";
  }
  help("tablemere_commits_total", "counter", "Catalog commits published.");
  out += "tablemere_commits_total " + std::to_string(g.commits) + "\n";
  help("tablemere_commit_conflicts_total", "counter",
       "Catalog commits refused because a requirement failed.");
  out += "tablemere_commit_conflicts_total " + std::to_string(g.commit_conflicts) + "\n";
  help("tablemere_commit_rebases_total", "counter",
       "Client commits re-applied on a head that only maintenance had moved.");
  out += "tablemere_commit_rebases_total " + std::to_string(g.commit_rebases) + "\n";
  help("tablemere_vended_sessions_total", "counter", "Storage sessions vended by the catalog.");
  out += "tablemere_vended_sessions_total " + std::to_string(g.vended_sessions) + "\n";
  if (g.task_queue_depth >= 0) {
    help("tablemere_task_queue_depth", "gauge", "Tasks queued (runnable, leased or delayed).");
    out += "tablemere_task_queue_depth " + std::to_string(g.task_queue_depth) + "\n";
  }
  return out;
}

}  // namespace tablemere::metrics
