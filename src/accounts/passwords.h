// Passwords of people: argon2id hashes (libargon2) and the rules a new password meets.
#pragma once

#include <string>

#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace tablemere::accounts {

// 12 to 256 characters (API reference), counted as Unicode code points.
inline constexpr int kMinPasswordChars = 12;
inline constexpr int kMaxPasswordChars = 256;

// Errors: kInvalidInput with detail code password_too_short | password_too_long |
// password_contains_identity (the password contains the address, its local part or
// an organisation name of the person), field "password".
Result<void> CheckPasswordRules(const std::string& password, const std::string& email,
                                const std::vector<std::string>& org_names);

// An encoded argon2id hash ($argon2id$v=19$m=…,t=…,p=…$salt$hash) of `password` with a
// fresh 16-byte salt. Errors: kInternal when libargon2 fails.
Result<std::string> HashPassword(const std::string& password, Random& random);

// Whether `password` matches `encoded`; libargon2 compares in constant time. An empty or
// malformed `encoded` never matches.
bool VerifyPassword(const std::string& encoded, const std::string& password);

// A hash of a random password, computed once, that login verifies against when the
// address has no account or no password, so every failed login costs the same.
const std::string& DummyPasswordHash();

}  // namespace tablemere::accounts
