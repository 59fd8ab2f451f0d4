// The wire structs round-trip and refuse the wrong JSON types with field errors.
#include <gtest/gtest.h>

#include "api/wire/control.h"

namespace tablemere::api::wire {
namespace {

TEST(Wire, CreateAgentRoundTrips) {
  CreateAgent a{"bot", "member", {{"w1", "read"}, {"w2", "write"}}};
  auto back = CreateAgent::FromJson(a.ToJson());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->name, "bot");
  ASSERT_EQ(back->grants.size(), 2u);
  EXPECT_EQ(back->grants[1].warehouse_id, "w2");
  EXPECT_EQ(back->grants[1].level, "write");
}

TEST(Wire, UpdateAgentKeepsAbsentFieldsAbsent) {
  auto u = UpdateAgent::FromJson(Json{{"name", "x"}});
  ASSERT_TRUE(u);
  EXPECT_EQ(u->name, "x");
  EXPECT_FALSE(u->role.has_value());
  EXPECT_FALSE(u->grants.has_value());
  EXPECT_EQ(UpdateAgent{}.ToJson(), Json::object());
}

TEST(Wire, WrongTypesAreFieldErrors) {
  auto w = CreateWarehouse::FromJson(Json{{"name", 5}});
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().Detail("code"), "invalid_value");
  EXPECT_EQ(w.error().Detail("field"), "name");
  auto g = CreateAgent::FromJson(Json{{"grants", "lake:read"}});
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().Detail("field"), "grants");
  auto r = SetRole::FromJson(Json::object());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().Detail("code"), "missing_field");
}

TEST(Wire, WarehouseProjectAcceptsBothNames) {
  EXPECT_EQ(CreateWarehouse::FromJson(Json{{"project", "p"}, {"name", "n"}})->project, "p");
  EXPECT_EQ(CreateWarehouse::FromJson(Json{{"project_id", "q"}, {"name", "n"}})->project, "q");
  const Json sent = CreateWarehouse{"p", "n"}.ToJson();
  EXPECT_EQ(sent, (Json{{"project_id", "p"}, {"name", "n"}}));
}

TEST(Wire, ErrorEnvelopeIsRecognised) {
  auto e = ErrorEnvelope::FromJson(Json{{"error", {{"code", "x"}, {"message", "m"}}}});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, "x");
  EXPECT_FALSE(ErrorEnvelope::FromJson(Json{{"ok", true}}));
}

}  // namespace
}  // namespace tablemere::api::wire
