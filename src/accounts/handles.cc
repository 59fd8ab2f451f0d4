#include "accounts/handles.h"

#include <array>

#include "common/strings.h"

namespace tablemere::accounts {
namespace {

constexpr size_t kMinHandle = 2;
constexpr size_t kMaxHandle = 40;
// Names of the product's own hosts and pages: an organisation called "api" would read
// as the API itself in links and mail.
constexpr std::array<std::string_view, 10> kReserved = {
    "app", "api", "docs", "legal", "admin", "tablemere", "www", "s3", "catalog", "auth"};
// Suffixes tried before giving up on a suggestion; past this the name is too crowded to
// be a useful hint.
constexpr int kMaxSuggestionTries = 1000;

bool Alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

}  // namespace

HandleProblem CheckHandle(std::string_view handle) {
  if (handle.size() < kMinHandle || handle.size() > kMaxHandle) return HandleProblem::kInvalid;
  if (!Alnum(handle.front()) || !Alnum(handle.back())) return HandleProblem::kInvalid;
  for (char c : handle) {
    if (!Alnum(c) && c != '-') return HandleProblem::kInvalid;
  }
  for (std::string_view r : kReserved) {
    if (handle == r) return HandleProblem::kReserved;
  }
  return HandleProblem::kNone;
}

const char* HandleProblemName(HandleProblem problem) {
  switch (problem) {
    case HandleProblem::kInvalid:
      return "invalid";
    case HandleProblem::kReserved:
      return "reserved";
    case HandleProblem::kNone:
      break;
  }
  return "";
}

std::string SlugFor(std::string_view text) {
  std::string out;
  for (char c : ToLower(text)) {
    if (Alnum(c)) {
      out.push_back(c);
    } else if (!out.empty() && out.back() != '-') {
      out.push_back('-');
    }
  }
  if (out.size() > kMaxHandle) out.resize(kMaxHandle);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.size() < kMinHandle ? "workspace" : out;
}

std::string SuggestHandle(std::string_view wanted,
                          const std::function<bool(const std::string&)>& taken) {
  std::string base = SlugFor(wanted);
  if (CheckHandle(base) == HandleProblem::kNone && !taken(base)) return base;
  for (int n = 2; n < kMaxSuggestionTries; n++) {
    std::string suffix = "-" + std::to_string(n);
    std::string stem = base.substr(0, kMaxHandle - suffix.size());
    while (!stem.empty() && stem.back() == '-') stem.pop_back();
    std::string candidate = stem + suffix;
    if (CheckHandle(candidate) == HandleProblem::kNone && !taken(candidate)) return candidate;
  }
  return "";
}

}  // namespace tablemere::accounts
