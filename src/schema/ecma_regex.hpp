#pragma once
/// JSON Schema's regular expressions (ECMA-262 syntax) matched with RE2: linear time in the input,
/// no recursion, bounded memory per compiled expression. ECMA-262 syntax is translated to RE2's;
/// what RE2 cannot match in linear time (lookaround, backreferences) is refused when the schema is
/// compiled. Internal to src/schema/; free of valijson and RE2 types.

#include <memory>
#include <string>
#include <string_view>

namespace hearth::schema::detail {

/// The RE2 program size limit for one expression (RE2's max_mem): a pattern that needs more is
/// refused at compile time.
inline constexpr long long kMaxRegexMemory = 2LL << 20;

/// `pattern` (ECMA-262, as JSON Schema uses it, no flags) in RE2 syntax, or "" with `error` set to
/// a sentence saying why it cannot be translated. Character classes are written out as code point
/// ranges so that `\d`, `\w`, `\s` and `.` keep their ECMA-262 meanings.
std::string translate_ecma_regex(std::string_view pattern, std::string& error);

/// A compiled pattern. Immutable; search() is safe from many threads at once.
class Regex {
 public:
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  /// The compiled `pattern`, or nullptr with `error` set to a sentence that quotes the pattern
  /// (unsupported or invalid syntax, too large).
  static std::shared_ptr<const Regex> compile(std::string_view pattern, std::string& error);

  /// Whether the pattern matches somewhere in `text` (UTF-8), unanchored as JSON Schema requires.
  bool search(std::string_view text) const;

  const std::string& source() const { return source_; }

 private:
  struct Engine;
  Regex(std::string source, std::unique_ptr<Engine> engine);

  std::string source_;
  std::unique_ptr<Engine> engine_;
};

/// The process-wide compiled form of `pattern` (compiled on first use, then shared), or nullptr
/// when it does not compile. Used where valijson only keeps the pattern's text (patternProperties).
std::shared_ptr<const Regex> shared_regex(const std::string& pattern);

/// Whether `pattern` matches somewhere in `text`; false for a pattern that does not compile (the
/// schema compiler refuses those before validation).
bool search_pattern(const std::string& pattern, std::string_view text);

}  // namespace hearth::schema::detail
