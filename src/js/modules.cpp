#include "js/modules.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include "common/ascii.hpp"

namespace hearth::js {

namespace fs = std::filesystem;

std::string typescript_refusal(std::string_view path) {
  for (std::string_view ext : {".ts", ".mts", ".cts", ".tsx"}) {
    if (path.size() >= ext.size() && path.substr(path.size() - ext.size()) == ext) {
      return "'" + std::string(path) +
             "' is TypeScript, which hearth does not run: compile it to JavaScript (tsc, esbuild) "
             "and name the .js or .mjs file in the manifest";
    }
  }
  return {};
}

bool is_es_module(std::string_view path, std::string_view source) {
  auto ends_with = [&path](std::string_view ext) {
    return path.size() >= ext.size() && path.substr(path.size() - ext.size()) == ext;
  };
  if (ends_with(".mjs")) return true;
  if (ends_with(".cjs")) return false;
  std::size_t pos = 0;
  while (pos < source.size()) {
    std::size_t end = source.find('\n', pos);
    if (end == std::string_view::npos) end = source.size();
    std::string_view line = source.substr(pos, end - pos);
    const auto first = line.find_first_not_of(" \t\r");
    if (first != std::string_view::npos) {
      line = line.substr(first);
      for (std::string_view kw : {"import", "export"}) {
        if (line.substr(0, kw.size()) == kw &&
            (line.size() == kw.size() || line[kw.size()] == ' ' || line[kw.size()] == '{' ||
             line[kw.size()] == '*' || line[kw.size()] == '"' || line[kw.size()] == '\'' ||
             line[kw.size()] == '\t')) {
          return true;
        }
      }
    }
    pos = end + 1;
  }
  return false;
}

namespace {

bool is_regular(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

}  // namespace

bool is_inside(const fs::path& dir, const fs::path& p) {
  auto d = dir.begin();
  auto q = p.begin();
  for (; d != dir.end(); ++d, ++q) {
    if (d->empty()) continue;  // trailing separator
    if (q == p.end() || *d != *q) return false;
  }
  return true;
}

Resolved resolve_import(const fs::path& service_dir, std::string_view referrer,
                        std::string_view specifier) {
  const std::string spec(specifier);
  if (!(spec.rfind("./", 0) == 0 || spec.rfind("../", 0) == 0)) {
    return {{},
            "cannot import '" + spec +
                "': only relative imports ('./lib.js', '../shared/util.mjs') of modules inside "
                "the service folder are supported"};
  }
  const fs::path base = fs::path(std::string(referrer)).parent_path();
  const fs::path joined = (service_dir / base / spec).lexically_normal();
  if (!is_inside(service_dir, joined) || joined == service_dir) {
    return {{},
            "cannot import '" + spec + "' from '" + std::string(referrer) +
                "': it is outside the service folder"};
  }
  fs::path found;
  for (const char* ext : {"", ".js", ".mjs"}) {
    fs::path candidate = joined;
    if (*ext != '\0') {
      if (joined.has_extension()) break;
      candidate += ext;
    }
    if (is_regular(candidate)) {
      found = candidate;
      break;
    }
  }
  if (found.empty()) {
    return {{},
            "cannot import '" + spec + "' from '" + std::string(referrer) + "': " +
                joined.lexically_relative(service_dir).generic_string() + " does not exist"};
  }
  std::error_code ec;
  const fs::path real = fs::canonical(found, ec);
  if (ec || !is_inside(service_dir, real)) {
    return {{}, "cannot import '" + spec + "': it leads outside the service folder"};
  }
  const std::string rel = found.lexically_relative(service_dir).generic_string();
  if (auto ts = typescript_refusal(rel); !ts.empty()) return {{}, ts};
  return {rel, {}};
}

namespace {

bool word_at(std::string_view s, std::size_t i, std::string_view word) {
  auto ident = [](char c) { return ascii::is_alnum(c) || c == '_' || c == '$'; };
  if (s.substr(i, word.size()) != word) return false;
  if (i > 0 && (ident(s[i - 1]) || s[i - 1] == '.')) return false;
  return i + word.size() >= s.size() || !ident(s[i + word.size()]);
}

/// Specifiers after `from`, `import` and `import(` in `source`.
std::vector<std::string> specifiers(std::string_view source) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < source.size(); ++i) {
    std::size_t len = 0;
    if (word_at(source, i, "from")) {
      len = 4;
    } else if (word_at(source, i, "import")) {
      len = 6;
    } else {
      continue;
    }
    std::size_t j = i + len;
    while (j < source.size() && (ascii::is_space(source[j]) || source[j] == '(')) {
      ++j;
    }
    if (j >= source.size() || (source[j] != '\'' && source[j] != '"')) continue;
    const char quote = source[j];
    const auto close = source.find(quote, j + 1);
    if (close == std::string_view::npos || close - j > 4096) continue;
    out.emplace_back(source.substr(j + 1, close - j - 1));
    i = close;
  }
  return out;
}

}  // namespace

std::vector<std::string> scan_imports(const fs::path& service_dir, const std::string& entry,
                                      std::size_t limit) {
  std::vector<std::string> found{entry};
  std::set<std::string> seen{entry};
  for (std::size_t k = 0; k < found.size() && found.size() < limit; ++k) {
    std::ifstream in(service_dir / found[k], std::ios::binary);
    if (!in) continue;
    std::stringstream buffer;
    buffer << in.rdbuf();
    for (const auto& spec : specifiers(buffer.str())) {
      Resolved r = resolve_import(service_dir, found[k], spec);
      if (!r.error.empty() || !seen.insert(r.path).second) continue;
      found.push_back(r.path);
      if (found.size() >= limit) break;
    }
  }
  return found;
}

namespace {

/// Static import specifiers of an ES module: `import ... from '...'`, `import '...'`,
/// `export ... from '...'`, read outside comments and string literals (dynamic `import()` and
/// `import.meta` are not static imports).
std::vector<std::string> static_specifiers(std::string_view source) {
  std::vector<std::string> out;
  auto skip_space_and_comments = [&source](std::size_t j) {
    while (j < source.size()) {
      if (ascii::is_space(source[j])) {
        ++j;
      } else if (source.substr(j, 2) == "//") {
        const auto nl = source.find('\n', j);
        j = nl == std::string_view::npos ? source.size() : nl + 1;
      } else if (source.substr(j, 2) == "/*") {
        const auto end = source.find("*/", j + 2);
        j = end == std::string_view::npos ? source.size() : end + 2;
      } else {
        break;
      }
    }
    return j;
  };
  // The end of the string literal opening at `j` (one past its closing quote).
  auto skip_string = [&source](std::size_t j) {
    const char quote = source[j];
    for (++j; j < source.size(); ++j) {
      if (source[j] == '\\') {
        ++j;
      } else if (source[j] == quote || (quote != '`' && source[j] == '\n')) {
        return j + 1;
      }
    }
    return source.size();
  };
  std::size_t i = 0;
  while (i < source.size()) {
    const char c = source[i];
    if (source.substr(i, 2) == "//" || source.substr(i, 2) == "/*") {
      i = skip_space_and_comments(i);
      continue;
    }
    if (c == '\'' || c == '"' || c == '`') {
      i = skip_string(i);
      continue;
    }
    std::size_t len = 0;
    bool is_import = false;
    if (word_at(source, i, "from")) {
      len = 4;
    } else if (word_at(source, i, "import")) {
      len = 6;
      is_import = true;
    } else {
      ++i;
      continue;
    }
    const std::size_t j = skip_space_and_comments(i + len);
    if (j < source.size() && (source[j] == '\'' || source[j] == '"') && (is_import || len == 4)) {
      const std::size_t end = skip_string(j);
      if (end <= source.size() && end - j >= 2 && source[end - 1] == source[j]) {
        out.emplace_back(source.substr(j + 1, end - j - 2));
      }
      i = end;
      continue;
    }
    i += len;
  }
  return out;
}

}  // namespace

std::vector<std::string> import_problems(const fs::path& service_dir, const std::string& entry,
                                         std::size_t limit) {
  std::vector<std::string> problems;
  std::vector<std::string> modules{entry};
  std::set<std::string> seen{entry};
  for (std::size_t k = 0; k < modules.size() && modules.size() < limit; ++k) {
    std::ifstream in(service_dir / modules[k], std::ios::binary);
    if (!in) continue;
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string source = buffer.str();
    if (!is_es_module(modules[k], source)) continue;
    for (const auto& spec : static_specifiers(source)) {
      Resolved r = resolve_import(service_dir, modules[k], spec);
      if (!r.error.empty()) {
        problems.push_back(modules[k] + ": " + r.error);
        continue;
      }
      if (seen.insert(r.path).second) modules.push_back(r.path);
    }
  }
  return problems;
}

}  // namespace hearth::js
