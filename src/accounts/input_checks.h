// Checks of what people type that several account use cases share (input_checks.cc).
#pragma once

#include <string>

#include "common/result.h"

namespace tablemere::accounts {

// A plausible address: one @, a dot after it, no spaces or separators, at most 254 bytes.
bool ValidEmail(const std::string& email);
// The lowercase domain of an address ("" without an @).
std::string DomainOf(const std::string& email);
// A project, catalog or organisation name: trimmed, 1-64 characters, no control
// characters. Errors: kInvalidInput (missing_field / invalid_value, field name).
Result<std::string> CheckName(const std::string& raw);
enum class EngineSet { kSignup, kRecipes };
// kInvalidInput (unsupported_engine, with `available`) unless `engine` is one of `set`:
// duckdb, pyiceberg, spark, and for recipes also snowflake.
Result<void> CheckEngine(const std::string& engine, EngineSet set = EngineSet::kSignup);

}  // namespace tablemere::accounts
