#include "accounts/handles.h"

#include <gtest/gtest.h>

#include <set>

namespace tablemere::accounts {
namespace {

TEST(Handles, Grammar) {
  struct Case {
    const char* handle;
    HandleProblem want;
  };
  const Case cases[] = {
      {"ab", HandleProblem::kNone},       {"acme-labs", HandleProblem::kNone},
      {"a1-2b", HandleProblem::kNone},    {"a", HandleProblem::kInvalid},
      {"", HandleProblem::kInvalid},      {"-acme", HandleProblem::kInvalid},
      {"acme-", HandleProblem::kInvalid}, {"Acme", HandleProblem::kInvalid},
      {"ac_me", HandleProblem::kInvalid}, {"ac me", HandleProblem::kInvalid},
      {"api", HandleProblem::kReserved},  {"tablemere", HandleProblem::kReserved},
      {"s3", HandleProblem::kReserved},
  };
  for (const auto& c : cases) EXPECT_EQ(CheckHandle(c.handle), c.want) << c.handle;
  EXPECT_EQ(CheckHandle(std::string(40, 'a')), HandleProblem::kNone);
  EXPECT_EQ(CheckHandle(std::string(41, 'a')), HandleProblem::kInvalid);
}

TEST(Handles, SlugAndSuggestion) {
  EXPECT_EQ(SlugFor("Acme Labs, Inc."), "acme-labs-inc");
  EXPECT_EQ(SlugFor("!"), "workspace");
  std::set<std::string> taken = {"acme", "acme-2"};
  auto is_taken = [&](const std::string& h) { return taken.count(h) > 0; };
  EXPECT_EQ(SuggestHandle("Acme", is_taken), "acme-3");
  EXPECT_EQ(SuggestHandle("api", is_taken), "api-2");  // reserved words get a suffix
  std::string suggestion = SuggestHandle(
      std::string(40, 'x'), [](const std::string& h) { return h == std::string(40, 'x'); });
  EXPECT_EQ(suggestion.size(), 40u);
  EXPECT_EQ(CheckHandle(suggestion), HandleProblem::kNone);
}

}  // namespace
}  // namespace tablemere::accounts
