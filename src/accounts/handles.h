// Organisation handles: the grammar, the reserved words and a free suggestion near a
// wanted handle (GET /v1/handles/{handle}, signup forms). Pure functions.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace tablemere::accounts {

// The grammar the API reference states, as sent back in `pattern`.
inline constexpr char kHandlePattern[] = "^[a-z0-9][a-z0-9-]{0,38}[a-z0-9]$";

enum class HandleProblem { kNone, kInvalid, kReserved };

// kInvalid: not 2-40 lowercase letters, digits and dashes starting and ending with a
// letter or digit. kReserved: one of the names the product keeps for itself.
HandleProblem CheckHandle(std::string_view handle);
const char* HandleProblemName(HandleProblem problem);  // "invalid" | "reserved" | ""

// A handle derived from free text (a name, an address's local part): lowercase letters,
// digits and single dashes, cut to the grammar's length; "workspace" when too little
// is left.
std::string SlugFor(std::string_view text);

// The first free, valid, unreserved handle near `wanted`: the slug of it, then the slug
// with -2, -3, … (cut so the result stays within 40 characters). `taken` answers whether
// a handle is in use; a failing lookup should answer true (never suggest what may be taken).
std::string SuggestHandle(std::string_view wanted,
                          const std::function<bool(const std::string&)>& taken);

}  // namespace tablemere::accounts
