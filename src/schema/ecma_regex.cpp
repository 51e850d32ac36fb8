#include "schema/ecma_regex.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/ascii.hpp"

namespace hearth::schema::detail {
namespace {

constexpr char32_t kMaxCodePoint = 0x10FFFF;
constexpr std::string_view kNotSupported =
    " is not supported (hearth matches patterns with RE2, "
    "linear time)";

using Ranges = std::vector<std::pair<char32_t, char32_t>>;

/// ECMA-262 \d, \w, \s and the line terminators `.` does not match.
const Ranges kDigit = {{'0', '9'}};
const Ranges kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const Ranges kSpace = {{0x09, 0x0D},     {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680},
                       {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F},
                       {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
const Ranges kLineTerminator = {{0x0A, 0x0A}, {0x0D, 0x0D}, {0x2028, 0x2029}};

Ranges normalized(Ranges ranges) {
  std::sort(ranges.begin(), ranges.end());
  Ranges out;
  for (const auto& range : ranges) {
    if (!out.empty() && range.first <= out.back().second + 1) {
      out.back().second = std::max(out.back().second, range.second);
    } else {
      out.push_back(range);
    }
  }
  return out;
}

Ranges complement(const Ranges& ranges) {
  Ranges out;
  char32_t next = 0;
  for (const auto& [lo, hi] : normalized(ranges)) {
    if (lo > next) out.emplace_back(next, lo - 1);
    next = hi + 1;
  }
  if (next <= kMaxCodePoint) out.emplace_back(next, kMaxCodePoint);
  return out;
}

std::string code_point(char32_t c) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "\\x{%x}", static_cast<unsigned>(c));
  return buffer;
}

/// A literal character in RE2 syntax: letters and digits as they are, everything else escaped.
std::string literal(char32_t c) {
  if (ascii::is_alnum(c)) {
    return std::string(1, static_cast<char>(c));
  }
  return code_point(c);
}

/// A bracket expression for `ranges` plus `extra` (RE2 \p{..} items), every bound escaped.
std::string class_text(const Ranges& ranges, const std::string& extra = "", bool negate = false) {
  const Ranges set = normalized(ranges);
  if (set.empty() && extra.empty()) {
    // [] matches nothing, [^] anything.
    return negate ? "[\\x{0}-\\x{10ffff}]" : "[^\\x{0}-\\x{10ffff}]";
  }
  std::string out = negate ? "[^" : "[";
  for (const auto& [lo, hi] : set) {
    out += code_point(lo);
    if (hi != lo) out += "-" + code_point(hi);
  }
  out += extra;
  out += ']';
  return out;
}

using ascii::hex_value;

/// Decodes UTF-8; invalid sequences become U+FFFD (JSON text is valid UTF-8 already).
std::u32string decode(std::string_view text) {
  std::u32string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    int length = 1;
    char32_t c = byte;
    if (byte >= 0xF0 && byte < 0xF8) {
      length = 4;
      c = byte & 0x07;
    } else if (byte >= 0xE0) {
      length = byte < 0xF0 ? 3 : 1;
      c = byte & 0x0F;
    } else if (byte >= 0xC0) {
      length = 2;
      c = byte & 0x1F;
    } else if (byte >= 0x80) {
      length = 1;
      c = 0xFFFD;
    }
    if (length > 1) {
      if (i + static_cast<std::size_t>(length) > text.size()) {
        out.push_back(0xFFFD);
        break;
      }
      for (int k = 1; k < length; ++k)
        c = (c << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    }
    out.push_back(c);
    i += static_cast<std::size_t>(length);
  }
  return out;
}

/// One pass over an ECMA-262 pattern, writing its RE2 equivalent.
class Translator {
 public:
  explicit Translator(std::string_view pattern) : in_(decode(pattern)) {}

  bool run() {
    while (pos_ < in_.size()) {
      const char32_t c = in_[pos_];
      switch (c) {
        case '\\':
          if (!escape()) return false;
          break;
        case '[':
          if (!bracket()) return false;
          break;
        case '(':
          if (!group()) return false;
          break;
        case '.':
          out_ += class_text(complement(kLineTerminator));
          ++pos_;
          break;
        case '{':
          if (!brace()) return false;
          break;
        case '}':
        case ']':
          // Annex B: a brace or bracket that does not open anything is a literal.
          out_ += code_point(c);
          ++pos_;
          break;
        case '^':
        case '$':
        case '|':
        case ')':
        case '*':
        case '+':
        case '?':
          // Without flags ECMA-262's ^ and $ are the start and end of the input, as RE2's are.
          out_ += static_cast<char>(c);
          ++pos_;
          break;
        default:
          out_ += literal(c);
          ++pos_;
      }
    }
    return true;
  }

  const std::string& output() const { return out_; }
  const std::string& error() const { return error_; }

 private:
  bool fail(std::string message) {
    error_ = std::move(message);
    return false;
  }

  bool at(std::size_t offset, char32_t c) const {
    return pos_ + offset < in_.size() && in_[pos_ + offset] == c;
  }

  bool group() {
    if (!at(1, '?')) {
      out_ += '(';
      ++pos_;
      return true;
    }
    if (at(2, ':')) {
      out_ += "(?:";
      pos_ += 3;
      return true;
    }
    if (at(2, '=')) return fail("lookahead (?=...)" + std::string(kNotSupported));
    if (at(2, '!')) return fail("negative lookahead (?!...)" + std::string(kNotSupported));
    if (at(2, '<') && at(3, '=')) return fail("lookbehind (?<=...)" + std::string(kNotSupported));
    if (at(2, '<') && at(3, '!')) {
      return fail("negative lookbehind (?<!...)" + std::string(kNotSupported));
    }
    if (at(2, '<')) {
      std::size_t end = pos_ + 3;
      std::string name;
      while (end < in_.size() && in_[end] != '>') {
        const char32_t n = in_[end];
        const bool word = ascii::is_alnum(n) || n == '_';
        if (!word) return fail("group names may use ASCII letters, digits and '_' only");
        name += static_cast<char>(n);
        ++end;
      }
      if (end >= in_.size() || name.empty()) return fail("unterminated group name '(?<'");
      out_ += "(?P<" + name + ">";
      pos_ = end + 1;
      return true;
    }
    return fail("'(?' must be followed by ':', '=', '!' or '<' (ECMA-262 has no inline flags)");
  }

  /// `{n}`, `{n,}`, `{n,m}` is a quantifier; any other brace is a literal (Annex B).
  bool brace() {
    std::size_t p = pos_ + 1;
    const auto number = [&](std::optional<unsigned long>& value) {
      const std::size_t start = p;
      unsigned long v = 0;
      while (p < in_.size() && in_[p] >= '0' && in_[p] <= '9') {
        v = std::min<unsigned long>(v * 10 + (in_[p] - '0'), 1000000);
        ++p;
      }
      if (p > start) value = v;
    };
    std::optional<unsigned long> min;
    std::optional<unsigned long> max;
    number(min);
    bool comma = false;
    if (min && p < in_.size() && in_[p] == ',') {
      comma = true;
      ++p;
      number(max);
    }
    if (!min || p >= in_.size() || in_[p] != '}') {
      out_ += code_point('{');
      ++pos_;
      return true;
    }
    if (*min > 1000 || (max && *max > 1000)) {
      return fail("a repetition count over 1000" + std::string(kNotSupported));
    }
    if (max && *max < *min) return fail("numbers out of order in {} quantifier");
    out_ +=
        "{" + std::to_string(*min) + (comma ? "," : "") + (max ? std::to_string(*max) : "") + "}";
    pos_ = p + 1;
    return true;
  }

  /// \p{...} / \P{...} at pos_ (the backslash): RE2's \p{Name} for ECMA-262's
  /// \p{Name}, \p{General_Category=Name}, \p{Script=Name}.
  std::optional<std::string> property() {
    const bool negated = in_[pos_ + 1] == 'P';
    if (!at(2, '{')) return std::nullopt;
    std::size_t end = pos_ + 3;
    std::string name;
    while (end < in_.size() && in_[end] != '}') {
      if (in_[end] > 0x7F) return std::nullopt;
      name += static_cast<char>(in_[end]);
      ++end;
    }
    if (end >= in_.size()) return std::nullopt;
    if (const std::size_t eq = name.find('='); eq != std::string::npos) {
      const std::string key = name.substr(0, eq);
      if (key != "General_Category" && key != "gc" && key != "Script" && key != "sc") {
        fail("\\p{" + key + "=...}" + std::string(kNotSupported));
        return std::string();
      }
      name = name.substr(eq + 1);
    }
    pos_ = end + 1;
    return std::string(negated ? "\\P{" : "\\p{") + name + "}";
  }

  /// A character escape at pos_ (the backslash) that stands for one code point, or nullopt.
  /// Advances past it when it is one.
  std::optional<char32_t> character_escape() {
    const char32_t e = in_[pos_ + 1];
    switch (e) {
      case 't':
        pos_ += 2;
        return 0x09;
      case 'n':
        pos_ += 2;
        return 0x0A;
      case 'v':
        pos_ += 2;
        return 0x0B;
      case 'f':
        pos_ += 2;
        return 0x0C;
      case 'r':
        pos_ += 2;
        return 0x0D;
      case 'c':
        if (pos_ + 2 < in_.size() && ((in_[pos_ + 2] >= 'a' && in_[pos_ + 2] <= 'z') ||
                                      (in_[pos_ + 2] >= 'A' && in_[pos_ + 2] <= 'Z'))) {
          const char32_t letter = in_[pos_ + 2];
          pos_ += 3;
          return letter % 32;
        }
        // Annex B: "\c" not followed by a letter is a backslash; the 'c' follows as a literal.
        pos_ += 1;
        return '\\';
      case 'x':
        if (pos_ + 3 < in_.size() && hex_value(in_[pos_ + 2]) >= 0 &&
            hex_value(in_[pos_ + 3]) >= 0) {
          const char32_t value = hex_value(in_[pos_ + 2]) * 16 + hex_value(in_[pos_ + 3]);
          pos_ += 4;
          return value;
        }
        pos_ += 2;
        return 'x';
      case 'u':
        return unicode_escape();
      default:
        // Identity escape: "\/", "\." and (Annex B) any other character stand for themselves.
        pos_ += 2;
        return e;
    }
  }

  std::optional<char32_t> four_hex(std::size_t p) const {
    if (p + 4 > in_.size()) return std::nullopt;
    char32_t value = 0;
    for (std::size_t k = p; k < p + 4; ++k) {
      const int h = hex_value(in_[k]);
      if (h < 0) return std::nullopt;
      value = value * 16 + static_cast<char32_t>(h);
    }
    return value;
  }

  std::optional<char32_t> unicode_escape() {
    if (at(2, '{')) {
      std::size_t p = pos_ + 3;
      char32_t value = 0;
      while (p < in_.size() && hex_value(in_[p]) >= 0 && value <= kMaxCodePoint) {
        value = value * 16 + static_cast<char32_t>(hex_value(in_[p]));
        ++p;
      }
      if (p > pos_ + 3 && p < in_.size() && in_[p] == '}' && value <= kMaxCodePoint) {
        pos_ = p + 1;
        return check_surrogate(value);
      }
    }
    const std::optional<char32_t> unit = four_hex(pos_ + 2);
    if (!unit) {
      pos_ += 2;
      return 'u';
    }
    pos_ += 6;
    if (*unit >= 0xD800 && *unit <= 0xDBFF && at(0, '\\') && at(1, 'u')) {
      if (const auto low = four_hex(pos_ + 2); low && *low >= 0xDC00 && *low <= 0xDFFF) {
        pos_ += 6;
        return 0x10000 + ((*unit - 0xD800) << 10) + (*low - 0xDC00);
      }
    }
    return check_surrogate(*unit);
  }

  std::optional<char32_t> check_surrogate(char32_t c) {
    if (c >= 0xD800 && c <= 0xDFFF) {
      fail("a lone surrogate (\\u" + code_point(c).substr(3) +
           ") cannot occur in UTF-8 text; write the character or its \\u{...} code point");
      return std::nullopt;
    }
    return c;
  }

  /// An escape outside brackets, at pos_ (the backslash).
  bool escape() {
    if (pos_ + 1 >= in_.size()) return fail("'\\' at the end of the pattern");
    const char32_t e = in_[pos_ + 1];
    switch (e) {
      case 'd':
        out_ += class_text(kDigit);
        pos_ += 2;
        return true;
      case 'D':
        out_ += class_text(complement(kDigit));
        pos_ += 2;
        return true;
      case 'w':
        out_ += class_text(kWord);
        pos_ += 2;
        return true;
      case 'W':
        out_ += class_text(complement(kWord));
        pos_ += 2;
        return true;
      case 's':
        out_ += class_text(kSpace);
        pos_ += 2;
        return true;
      case 'S':
        out_ += class_text(complement(kSpace));
        pos_ += 2;
        return true;
      case 'b':
        out_ += "\\b";
        pos_ += 2;
        return true;
      case 'B':
        out_ += "\\B";
        pos_ += 2;
        return true;
      case 'p':
      case 'P': {
        const std::size_t before = pos_;
        if (const auto p = property()) {
          if (!error_.empty()) return false;
          out_ += *p;
          return true;
        }
        pos_ = before + 2;  // not \p{...}: a literal letter (Annex B)
        out_ += static_cast<char>(e);
        return true;
      }
      case 'k':
        if (at(2, '<')) return fail("backreference \\k<name>" + std::string(kNotSupported));
        break;
      case '0':
        if (pos_ + 2 < in_.size() && in_[pos_ + 2] >= '0' && in_[pos_ + 2] <= '9') {
          return fail("octal escape \\0" + std::string(1, static_cast<char>(in_[pos_ + 2])) +
                      std::string(kNotSupported) + "; write \\x.. or \\u....");
        }
        out_ += code_point(0);
        pos_ += 2;
        return true;
      default:
        if (e >= '1' && e <= '9') {
          return fail("backreference \\" + std::string(1, static_cast<char>(e)) +
                      std::string(kNotSupported));
        }
    }
    const std::optional<char32_t> c = character_escape();
    if (!c) return false;
    out_ += literal(*c);
    return true;
  }

  /// One member of a bracket expression: a code point, or a set (\d, \p{..}, ...).
  struct Atom {
    std::optional<char32_t> c;
    Ranges ranges;
    std::string extra;
  };

  bool class_atom(Atom& atom) {
    if (in_[pos_] != '\\') {
      atom.c = in_[pos_++];
      return true;
    }
    if (pos_ + 1 >= in_.size()) return fail("'\\' at the end of the pattern");
    const char32_t e = in_[pos_ + 1];
    switch (e) {
      case 'd':
        atom.ranges = kDigit;
        pos_ += 2;
        return true;
      case 'D':
        atom.ranges = complement(kDigit);
        pos_ += 2;
        return true;
      case 'w':
        atom.ranges = kWord;
        pos_ += 2;
        return true;
      case 'W':
        atom.ranges = complement(kWord);
        pos_ += 2;
        return true;
      case 's':
        atom.ranges = kSpace;
        pos_ += 2;
        return true;
      case 'S':
        atom.ranges = complement(kSpace);
        pos_ += 2;
        return true;
      case 'b':
        atom.c = 0x08;
        pos_ += 2;
        return true;  // backspace inside brackets
      case 'p':
      case 'P': {
        const std::size_t before = pos_;
        if (const auto p = property()) {
          if (!error_.empty()) return false;
          atom.extra = *p;
          return true;
        }
        pos_ = before + 2;
        atom.c = e;
        return true;
      }
      case '0':
        if (pos_ + 2 < in_.size() && in_[pos_ + 2] >= '0' && in_[pos_ + 2] <= '9') {
          return fail("octal escape \\0" + std::string(1, static_cast<char>(in_[pos_ + 2])) +
                      std::string(kNotSupported) + "; write \\x.. or \\u....");
        }
        atom.c = 0;
        pos_ += 2;
        return true;
      default:
        if (e >= '1' && e <= '9') {
          return fail("octal escape \\" + std::string(1, static_cast<char>(e)) + " in brackets" +
                      std::string(kNotSupported) + "; write \\x.. or \\u....");
        }
    }
    const std::optional<char32_t> c = character_escape();
    if (!c) return false;
    atom.c = *c;
    return true;
  }

  bool bracket() {
    ++pos_;
    bool negate = false;
    if (at(0, '^')) {
      negate = true;
      ++pos_;
    }
    Ranges ranges;
    std::string extra;
    const auto add = [&](const Atom& atom) {
      if (atom.c) ranges.emplace_back(*atom.c, *atom.c);
      ranges.insert(ranges.end(), atom.ranges.begin(), atom.ranges.end());
      extra += atom.extra;
    };
    while (true) {
      if (pos_ >= in_.size()) return fail("missing ']' at the end of a character class");
      if (in_[pos_] == ']') {
        ++pos_;
        break;
      }
      Atom first;
      if (!class_atom(first)) return false;
      if (at(0, '-') && pos_ + 1 < in_.size() && in_[pos_ + 1] != ']') {
        ++pos_;
        Atom second;
        if (!class_atom(second)) return false;
        if (first.c && second.c) {
          if (*second.c < *first.c) return fail("range out of order in character class");
          ranges.emplace_back(*first.c, *second.c);
        } else {
          // Annex B: a range with a class escape at one end is the two ends and a '-'.
          add(first);
          ranges.emplace_back('-', '-');
          add(second);
        }
        continue;
      }
      add(first);
    }
    out_ += class_text(ranges, extra, negate);
    return true;
  }

  std::u32string in_;
  std::size_t pos_ = 0;
  std::string out_;
  std::string error_;
};

std::string re2_error(const RE2& re) {
  switch (re.error_code()) {
    case RE2::ErrorMissingParen:
      return "missing ')'";
    case RE2::ErrorUnexpectedParen:
      return "unexpected ')'";
    case RE2::ErrorMissingBracket:
      return "missing ']'";
    case RE2::ErrorRepeatArgument:
      return "a quantifier without anything to repeat";
    case RE2::ErrorRepeatOp:
      return "bad quantifier";
    case RE2::ErrorRepeatSize:
      return "a repetition count that is too large";
    case RE2::ErrorBadCharRange:
      return "bad character class range";
    case RE2::ErrorBadCharClass:
      return "unknown Unicode property or class";
    case RE2::ErrorBadNamedCapture:
      return "bad or repeated group name";
    default:
      return re.error();
  }
}

}  // namespace

std::string translate_ecma_regex(std::string_view pattern, std::string& error) {
  Translator translator(pattern);
  if (!translator.run()) {
    error = translator.error();
    return "";
  }
  return translator.output();
}

struct Regex::Engine {
  explicit Engine(const std::string& re2_pattern, const RE2::Options& options)
      : re(re2_pattern, options) {}
  RE2 re;
};

Regex::Regex(std::string source, std::unique_ptr<Engine> engine)
    : source_(std::move(source)), engine_(std::move(engine)) {}

Regex::~Regex() = default;

std::shared_ptr<const Regex> Regex::compile(std::string_view pattern, std::string& error) {
  const std::string quoted = "'" + std::string(pattern) + "'";
  const std::string translated = translate_ecma_regex(pattern, error);
  if (!error.empty()) {
    error += ": " + quoted;
    return nullptr;
  }
  RE2::Options options;
  options.set_encoding(RE2::Options::EncodingUTF8);
  options.set_max_mem(kMaxRegexMemory);
  options.set_log_errors(false);
  options.set_never_capture(true);  // only "does it match" is asked
  auto engine = std::make_unique<Engine>(translated, options);
  if (!engine->re.ok()) {
    if (engine->re.error_code() == RE2::ErrorPatternTooLarge) {
      error = quoted + " is too large: compiled, it would need over " +
              std::to_string(kMaxRegexMemory >> 20) +
              " MiB (hearth matches patterns with RE2, "
              "in bounded memory)";
    } else {
      error = quoted + " is not a valid regular expression (" + re2_error(engine->re) + ")";
    }
    return nullptr;
  }
  return std::shared_ptr<const Regex>(new Regex(std::string(pattern), std::move(engine)));
}

bool Regex::search(std::string_view text) const {
  return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), engine_->re);
}

std::shared_ptr<const Regex> shared_regex(const std::string& pattern) {
  // Patterns come from loaded schemas, so the table holds as many entries as distinct patterns
  // were ever loaded; past kMaxShared (schemas generated by the thousand) they are compiled for
  // each use instead of kept.
  constexpr std::size_t kMaxShared = 4096;
  static std::shared_mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<const Regex>> table;
  {
    const std::shared_lock lock(mutex);
    if (const auto found = table.find(pattern); found != table.end()) return found->second;
  }
  std::string error;
  std::shared_ptr<const Regex> compiled = Regex::compile(pattern, error);
  const std::unique_lock lock(mutex);
  if (table.size() < kMaxShared) table.emplace(pattern, compiled);
  return compiled;
}

bool search_pattern(const std::string& pattern, std::string_view text) {
  const std::shared_ptr<const Regex> regex = shared_regex(pattern);
  return regex != nullptr && regex->search(text);
}

}  // namespace hearth::schema::detail
