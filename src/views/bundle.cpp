#include "views/bundle.hpp"

#include <functional>
#include <map>

#include "common/ascii.hpp"
#include "common/beneath.hpp"
#include "json/json.hpp"

namespace hearth::views {
namespace fs = std::filesystem;

namespace {

// -- tokens
// ---------------------------------------------------------------------------------------- Enough
// of a JavaScript lexer to find a module's import and export statements: comments, strings,
// template literals (with code in their substitutions), regular expressions (told from division
// by the token before, as every lexer without a parser does) and the bracket depth of each token.

struct Token {
  enum class Kind { kName, kNumber, kString, kTemplate, kRegex, kPunct };
  Kind kind = Kind::kPunct;
  std::size_t begin = 0;
  std::size_t end = 0;
  int depth = 0;                ///< brackets ({ ( [ and ${) open before the token
  bool newline_before = false;  ///< a line ends between the previous token and this one
};

bool name_char(unsigned char c) {
  return ascii::is_alnum(static_cast<char>(c)) || c == '_' || c == '$' || c == '\\' || c >= 0x80;
}

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  /// The tokens, or an error message (an unterminated string, comment or template).
  Result<std::vector<Token>> run() {
    if (s_.substr(0, 2) == "#!") skip_line();
    std::vector<int> stack;  // 0: a bracket, 1: a template substitution
    while (true) {
      skip_space();
      if (!error_.empty()) break;
      if (at_ >= s_.size()) break;
      const char c = s_[at_];
      Token t;
      t.begin = at_;
      t.depth = static_cast<int>(stack.size());
      t.newline_before = newline_;
      newline_ = false;
      if (c == '\'' || c == '"') {
        t.kind = Token::Kind::kString;
        if (!skip_quoted(c)) break;
      } else if (c == '`') {
        t.kind = Token::Kind::kTemplate;
        ++at_;
        if (template_chunk()) stack.push_back(1);
        if (!error_.empty()) break;
      } else if (c == '}' && !stack.empty() && stack.back() == 1) {
        // The end of a substitution: the template goes on.
        stack.pop_back();
        t.kind = Token::Kind::kTemplate;
        t.depth = static_cast<int>(stack.size());
        ++at_;
        if (template_chunk()) stack.push_back(1);
        if (!error_.empty()) break;
      } else if (ascii::is_digit(c) ||
                 (c == '.' && at_ + 1 < s_.size() && ascii::is_digit(s_[at_ + 1]))) {
        t.kind = Token::Kind::kNumber;
        while (
            at_ < s_.size() &&
            (name_char(static_cast<unsigned char>(s_[at_])) || s_[at_] == '.' ||
             ((s_[at_] == '+' || s_[at_] == '-') && (s_[at_ - 1] == 'e' || s_[at_ - 1] == 'E')))) {
          ++at_;
        }
      } else if (name_char(static_cast<unsigned char>(c)) || c == '#') {
        t.kind = Token::Kind::kName;
        ++at_;
        while (at_ < s_.size() && name_char(static_cast<unsigned char>(s_[at_]))) ++at_;
      } else if (c == '/' && regex_allowed(tokens_)) {
        t.kind = Token::Kind::kRegex;
        if (!skip_regex()) break;
      } else {
        t.kind = Token::Kind::kPunct;
        if (c == '{' || c == '(' || c == '[') {
          stack.push_back(0);
        } else if (c == '}' || c == ')' || c == ']') {
          if (stack.empty()) return Error::make(ErrorCode::kInvalidParams, unbalanced(c));
          stack.pop_back();
          t.depth = static_cast<int>(stack.size());
        }
        at_ += punct_length();
      }
      t.end = at_;
      tokens_.push_back(t);
    }
    if (!error_.empty()) return Error::make(ErrorCode::kInvalidParams, error_);
    return std::move(tokens_);
  }

  /// The line (from 1) of byte `at`.
  static std::size_t line_of(std::string_view s, std::size_t at) {
    std::size_t line = 1;
    for (std::size_t i = 0; i < at && i < s.size(); ++i) line += s[i] == '\n' ? 1 : 0;
    return line;
  }

 private:
  std::string unbalanced(char c) const {
    return "a '" + std::string(1, c) + "' closes nothing at line " +
           std::to_string(line_of(s_, at_));
  }

  void skip_line() {
    while (at_ < s_.size() && s_[at_] != '\n') ++at_;
  }

  // Spaces and comments; notes whether a line ended (U+2028 and U+2029 end lines too).
  void skip_space() {
    while (at_ < s_.size()) {
      const char c = s_[at_];
      if (c == '\n' || c == '\r') {
        newline_ = true;
        ++at_;
      } else if (c == ' ' || c == '\t' || c == '\v' || c == '\f') {
        ++at_;
      } else if (s_.substr(at_, 3) == "\xE2\x80\xA8" || s_.substr(at_, 3) == "\xE2\x80\xA9") {
        newline_ = true;
        at_ += 3;
      } else if (s_.substr(at_, 3) == "\xEF\xBB\xBF" || s_.substr(at_, 2) == "\xC2\xA0") {
        at_ += s_[at_] == '\xEF' ? 3 : 2;  // a byte order mark, a no-break space
      } else if (s_.substr(at_, 2) == "//") {
        skip_line();
      } else if (s_.substr(at_, 2) == "/*") {
        const std::size_t end = s_.find("*/", at_ + 2);
        if (end == std::string_view::npos) {
          error_ = "a comment is not closed (line " + std::to_string(line_of(s_, at_)) + ")";
          return;
        }
        if (s_.substr(at_, end - at_).find('\n') != std::string_view::npos) newline_ = true;
        at_ = end + 2;
      } else {
        return;
      }
    }
  }

  bool skip_quoted(char quote) {
    const std::size_t start = at_;
    for (++at_; at_ < s_.size(); ++at_) {
      if (s_[at_] == '\\') {
        ++at_;
      } else if (s_[at_] == quote) {
        ++at_;
        return true;
      } else if (s_[at_] == '\n') {
        break;
      }
    }
    error_ = "a string is not closed (line " + std::to_string(line_of(s_, start)) + ")";
    return false;
  }

  // The rest of a template chunk after ` or }: true when it stopped at a ${ (a substitution).
  bool template_chunk() {
    const std::size_t start = at_;
    for (; at_ < s_.size(); ++at_) {
      if (s_[at_] == '\\') {
        ++at_;
      } else if (s_[at_] == '`') {
        ++at_;
        return false;
      } else if (s_[at_] == '$' && at_ + 1 < s_.size() && s_[at_ + 1] == '{') {
        at_ += 2;
        return true;
      }
    }
    error_ = "a template literal is not closed (line " + std::to_string(line_of(s_, start)) + ")";
    return false;
  }

  bool skip_regex() {
    const std::size_t start = at_;
    bool in_class = false;
    for (++at_; at_ < s_.size(); ++at_) {
      const char c = s_[at_];
      if (c == '\\') {
        ++at_;
      } else if (c == '\n') {
        break;
      } else if (c == '[') {
        in_class = true;
      } else if (c == ']') {
        in_class = false;
      } else if (c == '/' && !in_class) {
        ++at_;
        while (at_ < s_.size() && name_char(static_cast<unsigned char>(s_[at_]))) ++at_;
        return true;
      }
    }
    error_ = "a regular expression is not closed (line " + std::to_string(line_of(s_, start)) + ")";
    return false;
  }

  // Whether a '/' here starts a regular expression: after an operator, an opening bracket, a
  // keyword that precedes an expression, a '}' (the end of a block, far more common before a
  // regular expression than an object literal is before a division), or at the start.
  bool regex_allowed(const std::vector<Token>& tokens) const {
    if (tokens.empty()) return true;
    const Token& t = tokens.back();
    const std::string_view text = s_.substr(t.begin, t.end - t.begin);
    switch (t.kind) {
      case Token::Kind::kNumber:
      case Token::Kind::kString:
      case Token::Kind::kTemplate:
      case Token::Kind::kRegex:
        return false;
      case Token::Kind::kName:
        for (std::string_view k : {"return", "typeof", "instanceof", "in", "of", "new", "delete",
                                   "void", "throw", "case", "do", "else", "yield", "await"}) {
          if (text == k) return true;
        }
        return false;
      case Token::Kind::kPunct:
        return !(text == ")" || text == "]" || text == "++" || text == "--");
    }
    return true;
  }

  std::size_t punct_length() const {
    const std::string_view rest = s_.substr(at_);
    for (std::string_view p : {"...", "?.", "=>", "++", "--"}) {
      if (rest.substr(0, p.size()) == p) {
        // "?.5" is a conditional and a number.
        if (p == "?." && rest.size() > 2 && ascii::is_digit(rest[2])) continue;
        return p.size();
      }
    }
    return 1;
  }

  std::string_view s_;
  std::size_t at_ = 0;
  bool newline_ = false;
  std::string error_;
  std::vector<Token> tokens_;
};

// -- one module
// --------------------------------------------------------------------------------------

struct ModuleImport {
  std::string specifier;
  std::size_t line = 0;
};

/// A module rewritten: its body (imports and exports taken out, the loader calls hoisted to the
/// top, as imports are) and the specifiers it imports, in order.
struct Rewritten {
  std::string body;
  std::vector<ModuleImport> imports;
};

class ModuleRewriter {
 public:
  ModuleRewriter(std::string_view path, std::string_view source, std::vector<Token> tokens)
      : path_(path), s_(source), t_(std::move(tokens)) {}

  /// `resolve` maps a specifier to the module id the loader knows it by (an error: refused).
  Result<Rewritten> run(const std::function<Result<std::string>(const ModuleImport&)>& resolve) {
    for (std::size_t i = 0; i < t_.size(); ++i) {
      if (t_[i].kind != Token::Kind::kName) continue;
      const std::string_view word = text(i);
      if (word != "import" && word != "export") continue;
      if (i > 0 && (is(i - 1, ".") || is(i - 1, "?."))) continue;  // a property
      if (i + 1 < t_.size() && is(i + 1, ":")) continue;           // an object key
      Status handled = word == "import" ? on_import(i) : on_export(i);
      if (!handled.ok()) return handled.error();
    }
    // Module ids for the specifiers, then the hoisted header.
    std::string header;
    std::vector<std::string> ids;
    for (const auto& import : imports_) {
      HEARTH_ASSIGN_OR_RETURN(std::string id, resolve(import));
      ids.push_back(std::move(id));
    }
    // One loader call per import statement, in source order: that is the evaluation order.
    for (std::size_t k = 0; k < imports_.size(); ++k) {
      header += "const __hearth_m" + std::to_string(k) + " = await __hearth_import(" +
                json::dump(json::value(ids[k])) + ");\n";
    }
    if (!getters_.empty()) {
      header += "__hearth_export(__hearth_ns, {";
      for (std::size_t k = 0; k < getters_.size(); ++k) {
        header += (k == 0 ? " " : ", ") + json::dump(json::value(getters_[k].first)) + ": () => " +
                  getters_[k].second;
      }
      header += " });\n";
    }
    for (std::size_t k : stars_) {
      header += "__hearth_export_star(__hearth_ns, __hearth_m" + std::to_string(k) + ");\n";
    }
    for (const auto& [name, module] : bindings_) header += name + module;
    // On one line: the module's own lines are then its line numbers plus one.
    for (char& c : header) {
      if (c == '\n') c = ' ';
    }
    // The edits, back to front.
    std::string body(s_);
    for (auto it = edits_.rbegin(); it != edits_.rend(); ++it) {
      body.replace(it->begin, it->end - it->begin, it->text);
    }
    Rewritten out;
    out.body = header + body;
    out.imports = imports_;
    return out;
  }

 private:
  struct Edit {
    std::size_t begin, end;
    std::string text;
  };

  std::string_view text(std::size_t i) const {
    return s_.substr(t_[i].begin, t_[i].end - t_[i].begin);
  }
  bool is(std::size_t i, std::string_view word) const { return i < t_.size() && text(i) == word; }
  bool is_name(std::size_t i) const { return i < t_.size() && t_[i].kind == Token::Kind::kName; }
  bool is_string(std::size_t i) const {
    return i < t_.size() && t_[i].kind == Token::Kind::kString;
  }
  std::size_t line(std::size_t i) const {
    return Lexer::line_of(s_, i < t_.size() ? t_[i].begin : s_.size());
  }
  Error refuse(std::size_t i, const std::string& what) const {
    return Error::make(ErrorCode::kInvalidParams,
                       std::string(path_) + ":" + std::to_string(line(i)) + ": " + what);
  }
  /// A string token's value (the specifier; escapes other than \\ and quotes are refused).
  Result<std::string> string_value(std::size_t i) const {
    const std::string_view raw = text(i).substr(1, text(i).size() - 2);
    std::string out;
    for (std::size_t k = 0; k < raw.size(); ++k) {
      if (raw[k] == '\\') {
        if (k + 1 < raw.size() && (raw[k + 1] == '\\' || raw[k + 1] == '\'' || raw[k + 1] == '"')) {
          out += raw[++k];
          continue;
        }
        return refuse(i, "a module specifier with escapes is not bundled");
      }
      out += raw[k];
    }
    return out;
  }
  /// Replaces tokens [from, to] with as many line breaks as they spanned (lines keep their
  /// numbers, but for the header).
  void remove(std::size_t from, std::size_t to) {
    const std::size_t begin = t_[from].begin;
    const std::size_t end = t_[to].end;
    std::string text;
    for (std::size_t k = begin; k < end; ++k) {
      if (s_[k] == '\n') text += '\n';
    }
    edits_.push_back({begin, end, text});
  }
  std::size_t add_import(std::size_t spec_token) {
    auto value = string_value(spec_token);
    imports_.push_back({value.ok() ? value.value() : std::string(), line(spec_token)});
    if (!value.ok()) bad_specifier_ = value.error();
    return imports_.size() - 1;
  }
  std::string module_ref(std::size_t k) const { return "__hearth_m" + std::to_string(k); }
  /// `as` names and export names may be strings ("a-b"): their value, else the name itself.
  Result<std::string> name_or_string(std::size_t i) const {
    if (is_string(i)) return string_value(i);
    if (is_name(i)) return std::string(text(i));
    return refuse(i, "expected a name");
  }
  /// After the specifier of an import or export ... from: import attributes are refused, a ';'
  /// is part of the statement. Returns the statement's last token.
  Result<std::size_t> statement_end(std::size_t spec) const {
    if (is(spec + 1, "with") || (is(spec + 1, "assert") && !t_[spec + 1].newline_before)) {
      return refuse(spec + 1,
                    "import attributes (JSON or CSS modules) are not bundled: import JavaScript "
                    "modules only");
    }
    return is(spec + 1, ";") ? spec + 1 : spec;
  }

  Status on_import(std::size_t i) {
    if (is(i + 1, ".")) return refuse(i, "import.meta is not bundled (the document has no URL)");
    if (is(i + 1, "(")) {
      // A method named import ({ import() {} }) is followed by its body; a call is dynamic import.
      std::size_t close = i + 1;
      while (close < t_.size() && !(is(close, ")") && t_[close].depth == t_[i + 1].depth)) ++close;
      if (is(close + 1, "{")) return Status{};
      return refuse(i,
                    "dynamic import() is not bundled: import the module statically, or load it "
                    "from the view host");
    }
    if (t_[i].depth != 0) return Status{};
    std::size_t j = i + 1;
    if (is_string(j)) {  // import 'x';
      const std::size_t k = add_import(j);
      (void)k;
      HEARTH_ASSIGN_OR_RETURN(std::size_t end, statement_end(j));
      remove(i, end);
      return bad_specifier();
    }
    std::vector<std::pair<std::string, std::string>> names;  // local <- imported (empty: *)
    if (is_name(j) && !is(j, "from") && (is(j + 1, ",") || is(j + 1, "from"))) {
      names.emplace_back(std::string(text(j)), "default");
      j += is(j + 1, ",") ? 2 : 1;
    } else if (is(j, "from") && (is(j + 1, ",") || is(j + 1, "from"))) {
      names.emplace_back("from", "default");  // import from from 'x'
      j += is(j + 1, ",") ? 2 : 1;
    }
    if (is(j, "*")) {
      if (!is(j + 1, "as") || !is_name(j + 2)) return refuse(j, "expected * as name");
      names.emplace_back(std::string(text(j + 2)), std::string());
      j += 3;
    } else if (is(j, "{")) {
      ++j;
      while (j < t_.size() && !is(j, "}")) {
        HEARTH_ASSIGN_OR_RETURN(std::string imported, name_or_string(j));
        std::string local = imported;
        ++j;
        if (is(j, "as")) {
          if (!is_name(j + 1)) return refuse(j, "expected a name after 'as'");
          local = std::string(text(j + 1));
          j += 2;
        } else if (is_string(j - 1)) {
          return refuse(j - 1, "an imported string name needs 'as'");
        }
        names.emplace_back(local, imported);
        if (is(j, ",")) {
          ++j;
        } else if (!is(j, "}")) {
          return refuse(j, "expected ',' or '}' in the import list");
        }
      }
      ++j;
    }
    if (names.empty() || !is(j, "from") || !is_string(j + 1)) {
      return refuse(i, "this import is not one the bundler reads (TypeScript? a proposal?)");
    }
    const std::size_t k = add_import(j + 1);
    HEARTH_ASSIGN_OR_RETURN(std::size_t end, statement_end(j + 1));
    for (const auto& [local, imported] : names) {
      bindings_.emplace_back(
          "const " + local + " = ",
          imported.empty() ? module_ref(k) + ";\n"
                           : module_ref(k) + "[" + json::dump(json::value(imported)) + "];\n");
    }
    remove(i, end);
    return bad_specifier();
  }

  Status bad_specifier() {
    if (bad_specifier_) {
      Error e = *bad_specifier_;
      bad_specifier_.reset();
      return e;
    }
    return Status{};
  }

  Status on_export(std::size_t i) {
    if (t_[i].depth != 0) return Status{};  // a method or key named export
    std::size_t j = i + 1;
    if (j >= t_.size() || (is(j, "default") && j + 1 >= t_.size())) {
      return refuse(i, "the module ends inside an export");
    }
    if (is(j, "default")) {
      std::size_t k = j + 1;
      const bool async_fn = is(k, "async") && is(k + 1, "function") && !t_[k + 1].newline_before;
      const std::size_t fn = async_fn ? k + 1 : k;
      if (is(fn, "function")) {
        const std::size_t name = is(fn + 1, "*") ? fn + 2 : fn + 1;
        edits_.push_back({t_[i].begin, t_[k].begin, ""});
        if (is_name(name)) {
          getters_.emplace_back("default", std::string(text(name)));
        } else {
          edits_.push_back({t_[name - 1].end, t_[name - 1].end, " __hearth_default"});
          getters_.emplace_back("default", "__hearth_named(__hearth_default)");
        }
        return Status{};
      }
      if (is(k, "class")) {
        edits_.push_back({t_[i].begin, t_[k].begin, ""});
        if (is_name(k + 1) && !is(k + 1, "extends")) {
          getters_.emplace_back("default", std::string(text(k + 1)));
        } else {
          edits_.push_back({t_[k].end, t_[k].end, " __hearth_default"});
          getters_.emplace_back("default", "__hearth_named(__hearth_default)");
        }
        return Status{};
      }
      edits_.push_back({t_[i].begin, t_[k].begin, "const __hearth_default = "});
      getters_.emplace_back("default", "__hearth_named(__hearth_default)");
      return Status{};
    }
    if (is(j, "*")) {
      std::string as;
      if (is(j + 1, "as")) {
        HEARTH_ASSIGN_OR_RETURN(as, name_or_string(j + 2));
        j += 2;
      }
      if (!is(j + 1, "from") || !is_string(j + 2)) return refuse(j, "expected export * from '...'");
      const std::size_t k = add_import(j + 2);
      HEARTH_ASSIGN_OR_RETURN(std::size_t end, statement_end(j + 2));
      if (as.empty()) {
        stars_.push_back(k);
      } else {
        getters_.emplace_back(as, module_ref(k));
      }
      remove(i, end);
      return bad_specifier();
    }
    if (is(j, "{")) {
      std::vector<std::pair<std::string, std::string>> names;  // exported <- local
      ++j;
      while (j < t_.size() && !is(j, "}")) {
        HEARTH_ASSIGN_OR_RETURN(std::string local, name_or_string(j));
        std::string exported = local;
        ++j;
        if (is(j, "as")) {
          HEARTH_ASSIGN_OR_RETURN(exported, name_or_string(j + 1));
          j += 2;
        }
        names.emplace_back(exported, local);
        if (is(j, ",")) {
          ++j;
        } else if (!is(j, "}")) {
          return refuse(j, "expected ',' or '}' in the export list");
        }
      }
      std::size_t last = j;
      if (is(j + 1, "from") && is_string(j + 2)) {
        const std::size_t k = add_import(j + 2);
        HEARTH_ASSIGN_OR_RETURN(last, statement_end(j + 2));
        for (const auto& [exported, local] : names) {
          getters_.emplace_back(exported,
                                module_ref(k) + "[" + json::dump(json::value(local)) + "]");
        }
      } else {
        if (is(j + 1, ";")) last = j + 1;
        for (const auto& [exported, local] : names) getters_.emplace_back(exported, local);
      }
      remove(i, last);
      return bad_specifier();
    }
    // A declaration: `export` goes, the names are exported.
    edits_.push_back({t_[i].begin, t_[j].begin, ""});
    const bool async_fn = is(j, "async") && is(j + 1, "function");
    if (is(j, "function") || async_fn) {
      std::size_t name = async_fn ? j + 2 : j + 1;
      if (is(name, "*")) ++name;
      if (!is_name(name)) return refuse(j, "an exported function needs a name");
      getters_.emplace_back(std::string(text(name)), std::string(text(name)));
      return Status{};
    }
    if (is(j, "class")) {
      if (!is_name(j + 1)) return refuse(j, "an exported class needs a name");
      getters_.emplace_back(std::string(text(j + 1)), std::string(text(j + 1)));
      return Status{};
    }
    if (is(j, "const") || is(j, "let") || is(j, "var")) return declarators(j + 1);
    return refuse(i, "this export is not one the bundler reads");
  }

  // `a = 1, b, c = f(x, y)` after const/let/var: the names. A declaration ends at ';', at the
  // end of the input, or at a new line starting with a name after a complete expression.
  Status declarators(std::size_t j) {
    for (;;) {
      if (!is_name(j)) {
        return refuse(j, "an exported destructuring declaration is not bundled: export the names");
      }
      getters_.emplace_back(std::string(text(j)), std::string(text(j)));
      ++j;
      if (!is(j, "=")) {
        if (is(j, ",")) {
          ++j;
          continue;
        }
        return Status{};
      }
      for (++j; j < t_.size(); ++j) {
        if (t_[j].depth != 0) continue;
        if (is(j, ";")) return Status{};
        if (is(j, ",")) break;
        if (t_[j].newline_before && t_[j].kind == Token::Kind::kName) {
          const Token& prev = t_[j - 1];
          const bool complete = prev.kind != Token::Kind::kPunct || is(j - 1, ")") ||
                                is(j - 1, "]") || is(j - 1, "}");
          if (complete) return Status{};
        }
      }
      if (j >= t_.size()) return Status{};
      ++j;
    }
  }

  std::string_view path_;
  std::string_view s_;
  std::vector<Token> t_;
  std::vector<Edit> edits_;
  std::vector<ModuleImport> imports_;
  std::vector<std::pair<std::string, std::string>> getters_;   // exported name, expression
  std::vector<std::pair<std::string, std::string>> bindings_;  // "const x = ", "__hearth_m0[..];"
  std::vector<std::size_t> stars_;
  std::optional<Error> bad_specifier_;
};

// The loader the modules are registered with. A module runs once, when first imported; its
// namespace object gets a getter per export.
constexpr std::string_view kLoader = R"JS(const __hearth_modules = new Map();
function __hearth_define(id, run) { __hearth_modules.set(id, { run, ns: null, done: null }); }
function __hearth_import(id) {
  const m = __hearth_modules.get(id);
  if (!m.done) {
    m.ns = Object.create(null);
    Object.defineProperty(m.ns, Symbol.toStringTag, { value: 'Module' });
    m.done = m.run(m.ns).then(() => m.ns);
  }
  return m.done;
}
function __hearth_export(ns, getters) {
  for (const name of Object.keys(getters)) Object.defineProperty(ns, name, { get: getters[name], enumerable: true });
}
function __hearth_export_star(ns, from) {
  for (const name of Object.keys(from)) {
    if (name !== 'default' && !Object.prototype.hasOwnProperty.call(ns, name)) Object.defineProperty(ns, name, { get: () => from[name], enumerable: true });
  }
}
function __hearth_named(value) {
  if (typeof value === 'function' && value.name === '__hearth_default') Object.defineProperty(value, 'name', { value: 'default' });
  return value;
}
)JS";

Error refused(std::string message) {
  return Error::make(ErrorCode::kInvalidParams, std::move(message));
}

/// A relative specifier resolved against the module `from` (a path below the base), as a URL
/// resolves: '.' and '..' segments, no extension guessed; empty when it leaves the base.
std::string resolve_relative(const std::string& from, std::string_view specifier) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  const std::string dir =
      from.find('/') == std::string::npos ? "" : from.substr(0, from.rfind('/'));
  const std::string joined =
      dir.empty() ? std::string(specifier) : dir + "/" + std::string(specifier);
  while (start <= joined.size()) {
    std::size_t slash = joined.find('/', start);
    if (slash == std::string::npos) slash = joined.size();
    const std::string part = joined.substr(start, slash - start);
    if (part == "..") {
      if (parts.empty()) return {};
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = slash + 1;
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

}  // namespace

std::string script_text(std::string_view code) {
  std::string out;
  out.reserve(code.size());
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (code[i] == '<' && i + 1 < code.size() && code[i + 1] == '/') {
      out += "<\\";
    } else if (code.substr(i, 4) == "<!--") {
      out += "<\\";
      continue;  // the '!' follows
    } else {
      out += code[i];
    }
  }
  return out;
}

Result<Bundle> bundle_modules(const fs::path& base, const std::string& entry,
                              const std::optional<std::string>& entry_text, bool may_import,
                              const BundleLimits& limits) {
  Bundle out;
  out.script = std::string(kLoader);
  std::size_t bytes = 0;
  // Depth first from the entry: each module is defined once; a module met again while it is
  // still being read is a cycle.
  std::map<std::string, bool> state;  // path -> finished
  std::string defined;
  std::function<Status(const std::string&, const std::string&)> visit;
  visit = [&](const std::string& path, const std::string& via) -> Status {
    if (auto it = state.find(path); it != state.end()) {
      if (!it->second) {
        return refused("Invalid params: " + via + " imports " + path +
                       ", which imports it back: import cycles are not bundled");
      }
      return Status{};
    }
    if (state.size() >= limits.max_modules) {
      return refused("Invalid params: the view imports more than " +
                     std::to_string(limits.max_modules) + " modules");
    }
    state[path] = false;
    out.modules.push_back(path);
    std::string source;
    if (path == entry && entry_text) {
      source = *entry_text;
    } else {
      auto text = read_beneath(base, path, limits.max_bytes);
      if (!text) {
        return refused("Invalid params: " +
                       (via.empty() ? std::string("the view module ") : via + " imports ") + path +
                       ", which is missing, not a regular file, a link, or too large");
      }
      source = std::move(*text);
    }
    bytes += source.size();
    if (bytes > limits.max_bytes) {
      return refused("Invalid params: the view's modules are larger than " +
                     std::to_string(limits.max_bytes) + " bytes together");
    }
    auto tokens = Lexer(source).run();
    if (!tokens.ok()) {
      return refused("Invalid params: " + path + ": " + tokens.error().message);
    }
    ModuleRewriter rewriter(path, source, std::move(tokens.value()));
    std::vector<std::string> deps;
    auto rewritten = rewriter.run([&](const ModuleImport& import) -> Result<std::string> {
      const std::string& spec = import.specifier;
      const std::string where = path + ":" + std::to_string(import.line) + ": ";
      if (!(spec.rfind("./", 0) == 0 || spec.rfind("../", 0) == 0)) {
        return refused("Invalid params: " + where + "imports '" + spec +
                       "': only relative imports of the view's own files are bundled (no "
                       "packages, URLs or absolute paths)");
      }
      if (!may_import) {
        return refused("Invalid params: " + where + "imports '" + spec +
                       "': this view's code may import nothing (an inline component, or a file "
                       "at the root of the service folder)");
      }
      const std::string resolved = resolve_relative(path, spec);
      if (resolved.empty() || !is_clean_relative(resolved)) {
        return refused("Invalid params: " + where + "imports '" + spec +
                       "', which is outside the view's folder");
      }
      deps.push_back(resolved);
      return resolved;
    });
    if (!rewritten.ok()) {
      Error e = rewritten.error();
      if (e.message.rfind("Invalid params: ", 0) != 0) e.message = "Invalid params: " + e.message;
      return e;
    }
    for (const auto& dep : deps) {
      HEARTH_RETURN_IF_ERROR(visit(dep, path));
    }
    state[path] = true;
    defined += "__hearth_define(" + json::dump(json::value(path)) +
               ", async function (__hearth_ns) {\n" + rewritten.value().body + "\n});\n";
    return Status{};
  };
  HEARTH_RETURN_IF_ERROR(visit(entry, ""));
  out.script += defined;
  out.entry = "__hearth_import(" + json::dump(json::value(entry)) + ")";
  return out;
}

}  // namespace hearth::views
