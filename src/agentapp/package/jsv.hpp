#pragma once
/// JSON values as JavaScript sees them. The Agent App format's reference CLI is a Node program
/// whose output is JSON.stringify of objects it builds from what its YAML reader returned;
/// hearth's reference-compatible commands (reference.hpp) follow it byte for byte, so they need
/// JavaScript's rules where they differ from C++'s: truthiness, String(), the formatting of
/// numbers, the order of an object's own keys (array-index keys first, ascending) and
/// JSON.stringify. Numbers are doubles, as in JavaScript; `undefined` is a null pointer.

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "json/json.hpp"

namespace hearth::agentapp::jsv {

/// What Node throws where the reference CLI reads a member of null or undefined (a list item
/// written `- null`, say) or a file system call of it fails: the command ends with exit code 2
/// and this message on stderr. It never leaves this component: reference.hpp's commands return
/// it as an error value.
class Thrown : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Where an object keeps its prototype: YAML's `__proto__: ...` replaces the prototype of the
/// object it is written in, so its members are not the object's own (JSON.stringify, spreads and
/// Object.entries skip them) but are read through it. The key is not UTF-8, so no key read from
/// a package (decoded first) can be it.
inline constexpr std::string_view kPrototypeKey = "\xFF__proto__";

/// `!!v` (nullptr is undefined): false for undefined, null, false, 0, -0, NaN and "".
bool truthy(const json::value* v);
inline bool truthy(const json::value& v) {
  return truthy(&v);
}

/// The number as a double (JSON integers included).
double number(const json::value& v);

/// Number.prototype.toString(): shortest round trip, exponent form below 1e-6 and from 1e21.
std::string number_to_string(double d);

/// String(v) and template-literal interpolation: arrays joined with ",", objects
/// "[object Object]", undefined "undefined".
std::string to_string(const json::value* v);

/// True when `key` is an array index ("0", "17"; not "01", "-1" or 2^32-1 and above): such keys
/// come first in an object's own-key order.
bool is_array_index(std::string_view key);

/// The object's own keys in JavaScript's own-key order (the prototype is not one).
std::vector<std::string_view> own_keys(const json::object& o);

/// `base.key` as the CLI reads it: the member of an object, its own or its prototype's,
/// undefined (nullptr) for every other kind of value. Throws Thrown (Node's TypeError) when `base`
/// is undefined or null.
const json::value* get(const json::value* base, std::string_view key);
/// `base?.key`: undefined when `base` is undefined or null.
const json::value* get_opt(const json::value* base, std::string_view key);

/// `Array.isArray(v)` and `typeof v === 'object' && !Array.isArray(v)` for non-null v.
bool is_array(const json::value* v);
bool is_plain_object(const json::value* v);

/// `asArray(v)`: the array, or an empty one.
const json::array& as_array(const json::value* v);

/// `[...].includes(v)` of a list of strings (SameValueZero: only a string can match).
bool includes(std::initializer_list<std::string_view> list, const json::value* v);
/// `asArray(v).includes(s)`.
bool array_includes(const json::value* v, std::string_view s);

/// JSON.stringify(v, null, indent): 0 is the compact form. Strings escape only `"`, `\` and
/// control characters; non-ASCII is written as is; non-finite numbers are `null`.
std::string stringify(const json::value& v, int indent = 0);

/// Node's `Buffer.toString('utf8')`: every ill-formed sequence (its maximal subpart) becomes
/// U+FFFD, as the WHATWG decoder does.
std::string decode_utf8(std::string_view bytes);

/// String.prototype.trim(): JavaScript's white space and line terminators at both ends.
std::string_view trim(std::string_view s);

/// The string's UTF-16 code units, each as a one-unit string (what spreading a string into an
/// object gives). A lone surrogate half is held in its 3-byte generalised UTF-8 form, which
/// stringify() writes as `\udxxx`, as JSON.stringify does.
std::vector<json::value> utf16_units(std::string_view s);

/// Array.prototype.sort()'s default order for strings: UTF-16 code units.
bool utf16_less(std::string_view a, std::string_view b);

}  // namespace hearth::agentapp::jsv
