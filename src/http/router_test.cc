#include "http/router.h"

#include <gtest/gtest.h>

namespace tablemere::http {
namespace {

TEST(RouterTest, MatchesPatternsAndDecodesParams) {
  Router router;
  router.Add("GET", "/v1/{prefix}/namespaces/{namespace}",
             [](Request&, const PathParams&) { return Response::Json(200, "a"); });
  router.Add("HEAD", "/v1/{prefix}/namespaces/{namespace}",
             [](Request&, const PathParams&) { return Response::Json(204, ""); });
  auto m = router.Find("GET", "/v1/w-1/namespaces/a%1Fb");
  ASSERT_NE(m.handler, nullptr);
  EXPECT_EQ(m.params.at("prefix"), "w-1");
  EXPECT_EQ(m.params.at("namespace"),
            "a\x1f"
            "b");
  auto wrong_method = router.Find("DELETE", "/v1/w-1/namespaces/x");
  EXPECT_EQ(wrong_method.handler, nullptr);
  EXPECT_TRUE(wrong_method.path_known);
  auto unknown = router.Find("GET", "/v2/x");
  EXPECT_FALSE(unknown.path_known);
}

}  // namespace
}  // namespace tablemere::http
