#include "metastore/types.h"

namespace tablemere::metastore {

const char* Name(PrincipalKind kind) {
  switch (kind) {
    case PrincipalKind::kHuman:
      return "human";
    case PrincipalKind::kAgent:
      return "agent";
  }
  return "human";
}

const char* Name(Role role) { return role == Role::kAdmin ? "admin" : "member"; }

const char* Name(Level level) {
  switch (level) {
    case Level::kNone:
      return "none";
    case Level::kRead:
      return "read";
    case Level::kWrite:
      return "write";
  }
  return "none";
}

std::optional<PrincipalKind> ParsePrincipalKind(std::string_view text) {
  if (text == "human") return PrincipalKind::kHuman;
  if (text == "agent") return PrincipalKind::kAgent;
  return std::nullopt;
}

std::optional<Role> ParseRole(std::string_view text) {
  if (text == "admin" || text == "owner") return Role::kAdmin;
  if (text == "member") return Role::kMember;
  return std::nullopt;
}

std::optional<Level> ParseLevel(std::string_view text) {
  if (text == "none") return Level::kNone;
  if (text == "read") return Level::kRead;
  if (text == "write") return Level::kWrite;
  return std::nullopt;
}

}  // namespace tablemere::metastore
