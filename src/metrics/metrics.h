// Operator metrics in the Prometheus text format (GET /metrics): requests, latencies and
// errors per listener and route class, bytes in and out per bucket, commits, vended
// storage sessions and the task queue's depth. Counters are kept in memory per process
// (each replica exports its own; Prometheus sums them).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace tablemere::metrics {

// A bounded label for a request: the API's resource ("v1/warehouses"), the catalog's
// operation family ("namespaces", "tables", "oauth"), or the S3 operation's shape
// ("object.get", "bucket.list"), so label values never come from user input.
std::string RouteClass(std::string_view listener, std::string_view method, std::string_view path);

// Values read when the page is rendered (owned elsewhere).
struct Gauges {
  uint64_t commits = 0;
  uint64_t commit_conflicts = 0;
  uint64_t vended_sessions = 0;
  int64_t task_queue_depth = -1;  // -1: could not be read
  uint64_t commit_rebases = 0;
};

class Metrics {
 public:
  // Latency buckets in seconds (upper bounds; +Inf is implied).
  static constexpr std::array<double, 12> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05,   0.1,   0.25,   0.5,   1,    5};

  void ObserveRequest(const std::string& listener, const std::string& route, int status,
                      double seconds);
  // S3 traffic of one bucket: one request, failed or not, and its bytes.
  void AddBucketRequest(const std::string& bucket, bool failed, uint64_t in, uint64_t out);
  struct BucketCounters {
    uint64_t requests = 0;
    uint64_t requests_failed = 0;
    uint64_t bytes_in = 0;
    uint64_t bytes_out = 0;
  };
  // The counters of one bucket so far (zero for a bucket never seen). Thread-safe.
  BucketCounters Bucket(const std::string& bucket) const;
  // The text exposition (version 0.0.4).
  std::string Render(const Gauges& gauges) const;

 private:
  struct RouteStats {
    std::map<int, uint64_t> by_status_class;  // 2, 3, 4, 5
    std::array<uint64_t, kBuckets.size()> buckets{};
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, RouteStats> routes_;  // (listener, route)
  std::map<std::string, BucketCounters> buckets_;
};

}  // namespace tablemere::metrics
