// Small string helpers shared by every layer: URL encoding, case folding, splitting.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tablemere {

std::string ToLower(std::string_view s);
std::string Trim(std::string_view s);
std::vector<std::string> Split(std::string_view s, char sep);
// The items with `sep` between them ("a, b").
std::string Join(const std::vector<std::string>& items, std::string_view sep);
bool StartsWith(std::string_view s, std::string_view prefix);
bool EndsWith(std::string_view s, std::string_view suffix);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// Percent-decodes; `plus_as_space` for form bodies. Returns nullopt on a bad escape.
std::optional<std::string> UrlDecode(std::string_view s, bool plus_as_space = false);
// Percent-encodes every byte outside RFC 3986 unreserved (A-Z a-z 0-9 - _ . ~);
// `keep_slash` leaves '/' as is (S3 canonical URIs, keys in responses).
std::string UrlEncode(std::string_view s, bool keep_slash = false);

// Parses "a=1&b=&c" into decoded (key, value) pairs in wire order.
// Returns nullopt on a malformed escape.
std::optional<std::vector<std::pair<std::string, std::string>>> ParseQuery(
    std::string_view query, bool plus_as_space = false);

// Whether `s` is well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing
// above U+10FFFF. Text read from files clients write (Avro strings) is checked with it
// before anything renders it as JSON.
bool ValidUtf8(std::string_view s);

// Parses a non-negative decimal integer that must consume the whole string.
std::optional<int64_t> ParseInt(std::string_view s);

}  // namespace tablemere
