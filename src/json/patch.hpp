#pragma once
/// JSON Patch (RFC 6902) as hearth records changes: diff() writes the operations that turn one
/// value into another, apply() carries them out. Only add, remove and replace are written;
/// apply() also reads move, copy and test. Paths are JSON Pointers (RFC 6901).

#include <string>
#include <string_view>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::json {

/// The operations that turn `from` into `to`: objects member by member, arrays element by
/// element over their common length (then the tail added or removed), anything else replaced.
/// `base` is the pointer the operations' paths start with ("" for the root). diff(a, b) applied
/// to a gives b; diff(b, a) is its inverse.
array diff(const value& from, const value& to, std::string_view base = "");

/// Applies `patch` to `document`. Either every operation applies or the document is unchanged;
/// the error names the operation (`patch[2]`) and why it cannot apply.
Status apply_patch(value& document, const array& patch);

/// One reference token of a JSON Pointer, escaped ('~' -> "~0", '/' -> "~1").
std::string escape_pointer_token(std::string_view token);

/// The value `pointer` names in `document`, or null when it names nothing or is malformed.
const value* find_pointer(const value& document, std::string_view pointer);

}  // namespace hearth::json
