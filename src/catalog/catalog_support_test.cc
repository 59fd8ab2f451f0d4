#include "catalog/catalog_support.h"

#include <gtest/gtest.h>

namespace tablemere::catalog {
namespace {

TEST(StoredDocumentTest, CorruptStoredMetadataIsAnInternalErrorNamingIt) {
  for (const char* text : {"{not json", "[1,2]", "\"text\"", ""}) {
    auto doc = ParseStored(text, "table ns.t");
    ASSERT_FALSE(doc.has_value()) << text;
    EXPECT_EQ(doc.error().code, ErrorCode::kInternal);
    EXPECT_NE(doc.error().message.find("table ns.t"), std::string::npos);
  }
  EXPECT_TRUE(ParseStored(R"({"a":1})", "table ns.t").has_value());
}

TEST(StoredDocumentTest, MembersAreReadByTypeWithoutThrowing) {
  Json doc = Json::parse(R"({"s":"x","i":7,"b":true,"n":null,"wrong":[1]})");
  EXPECT_EQ(StoredString(doc, "s", "", "view v").value(), "x");
  EXPECT_EQ(StoredString(doc, "missing", "dflt", "view v").value(), "dflt");
  EXPECT_EQ(StoredString(doc, "n", "dflt", "view v").value(), "dflt");
  EXPECT_EQ(StoredInt(doc, "i", -1, "view v").value(), 7);
  EXPECT_EQ(StoredBool(doc, "b", false, "view v").value(), true);
  for (auto r :
       {StoredString(doc, "wrong", "", "view v").error(), StoredInt(doc, "s", 0, "view v").error(),
        StoredBool(doc, "i", false, "view v").error()}) {
    EXPECT_EQ(r.code, ErrorCode::kInternal);
    EXPECT_NE(r.message.find("view v"), std::string::npos) << r.message;
  }
}

}  // namespace
}  // namespace tablemere::catalog
