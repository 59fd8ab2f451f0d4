#include "metrics/metrics.h"

#include <gtest/gtest.h>

namespace tablemere::metrics {
namespace {

TEST(RouteClass, LabelsComeFromTheRoutesNotFromIds) {
  EXPECT_EQ(RouteClass("api", "GET", "/v1/warehouses"), "v1/warehouses");
  EXPECT_EQ(RouteClass("api", "POST", "/v1/auth/login"), "v1/auth/login");
  EXPECT_EQ(RouteClass("api", "GET", "/v1/warehouses/0b9c2f4e-1111-4222-8333-444455556666/grants"),
            "v1/warehouses/grants");
  EXPECT_EQ(RouteClass("api", "GET", "/v1/orgs/o_1234abcd/members"), "v1/orgs/members");
  EXPECT_EQ(RouteClass("api", "GET", "/internal/signup-codes/a@b.io"), "internal");
  EXPECT_EQ(RouteClass("api", "GET", "/v1/handles/someone"), "v1/handles");
  EXPECT_EQ(RouteClass("api", "GET", "/v1/warehouses/not-a-real-id/grants"),
            "v1/warehouses/grants");
  EXPECT_EQ(RouteClass("api", "GET", "/v1/made-up/words"), "v1");
  EXPECT_EQ(RouteClass("api", "GET", "/wp-admin/x"), "other");
  EXPECT_EQ(RouteClass("catalog", "GET", "/v1/config"), "config");
  EXPECT_EQ(RouteClass("catalog", "POST", "/v1/w-abc/namespaces/ns/tables/t"), "tables");
  EXPECT_EQ(RouteClass("catalog", "POST", "/v1/w-abc/namespaces/ns/tables/t/plan"), "plan");
  EXPECT_EQ(RouteClass("catalog", "GET", "/v1/w-abc/namespaces/ns/tables/t/plan/plan-1"), "plan");
  EXPECT_EQ(RouteClass("catalog", "POST", "/v1/w-abc/namespaces/ns/tables/t/tasks"), "tasks");
  EXPECT_EQ(RouteClass("catalog", "GET", "/v1/w-abc/namespaces/ns/tables/t/credentials"),
            "credentials");
  EXPECT_EQ(RouteClass("catalog", "GET", "/lakekeeper/v1/w-abc/namespaces/ns/generic-tables"),
            "lakekeeper.generic-tables");
  EXPECT_EQ(RouteClass("s3", "GET", "/w-abc/ns/t/data/f.parquet"), "object.get");
  EXPECT_EQ(RouteClass("s3", "GET", "/w-abc"), "bucket.get");
  EXPECT_EQ(RouteClass("s3", "GET", "/"), "service.get");
}

TEST(Metrics, RendersCountersAndACumulativeHistogram) {
  Metrics m;
  m.ObserveRequest("api", "v1/warehouses", 200, 0.002);
  m.ObserveRequest("api", "v1/warehouses", 503, 0.3);
  m.AddBucketRequest("w-1", false, 100, 7);
  m.AddBucketRequest("w-1", true, 1, 0);
  EXPECT_EQ(m.Bucket("w-1").requests_failed, 1u);
  EXPECT_EQ(m.Bucket("w-2").requests, 0u);
  std::string text = m.Render({.commits = 3,
                               .commit_conflicts = 1,
                               .vended_sessions = 2,
                               .task_queue_depth = 4,
                               .commit_rebases = 5});
  auto has = [&](const std::string& line) { return text.find(line + "\n") != std::string::npos; };
  EXPECT_TRUE(
      has("tablemere_requests_total{listener=\"api\",route=\"v1/warehouses\",code=\"2xx\"} 1"));
  EXPECT_TRUE(
      has("tablemere_requests_total{listener=\"api\",route=\"v1/warehouses\",code=\"5xx\"} 1"));
  EXPECT_TRUE(has("tablemere_request_errors_total{listener=\"api\",route=\"v1/warehouses\"} 1"));
  EXPECT_TRUE(
      has("tablemere_request_duration_seconds_bucket{listener=\"api\",route=\"v1/"
          "warehouses\",le=\"0.001\"} 0"));
  EXPECT_TRUE(
      has("tablemere_request_duration_seconds_bucket{listener=\"api\",route=\"v1/"
          "warehouses\",le=\"0.0025\"} 1"));
  EXPECT_TRUE(
      has("tablemere_request_duration_seconds_bucket{listener=\"api\",route=\"v1/"
          "warehouses\",le=\"+Inf\"} 2"));
  EXPECT_TRUE(has("tablemere_bucket_bytes_in_total{bucket=\"w-1\"} 101"));
  EXPECT_TRUE(has("tablemere_bucket_requests_total{bucket=\"w-1\"} 2"));
  EXPECT_TRUE(has("tablemere_bucket_requests_failed_total{bucket=\"w-1\"} 1"));
  EXPECT_TRUE(has("tablemere_commits_total 3"));
  EXPECT_TRUE(has("tablemere_vended_sessions_total 2"));
  EXPECT_TRUE(has("tablemere_task_queue_depth 4"));
  EXPECT_TRUE(has("tablemere_commit_rebases_total 5"));
  EXPECT_TRUE(has("# TYPE tablemere_request_duration_seconds histogram"));
}

}  // namespace
}  // namespace tablemere::metrics
