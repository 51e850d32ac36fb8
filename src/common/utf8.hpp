#pragma once
/// UTF-8 helpers shared by everything that turns bytes from outside (a handler's output, a file a
/// JS handler reads) into JSON or JS strings.

#include <string>
#include <string_view>

namespace hearth {

/// Replaces each invalid UTF-8 sequence with U+FFFD, so that any bytes can travel in a JSON string.
std::string valid_utf8(std::string_view in);

/// JavaScript's white space and line terminators (what String.prototype.trim() removes and
/// the regular expression `\s` matches).
bool is_js_space(char32_t c);

/// True when `in` is well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF).
bool is_utf8(std::string_view in);

}  // namespace hearth
