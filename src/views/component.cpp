#include "views/component.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>

#include "common/ascii.hpp"
#include "common/beneath.hpp"
#include "httpclient/url.hpp"

namespace hearth::views {
namespace fs = std::filesystem;

namespace {

Error invalid(std::string message, json::object data = {}) {
  return Error::make(ErrorCode::kInvalidParams, std::move(message), std::move(data));
}

bool regular_below(const fs::path& dir, const fs::path& rel) {
  BeneathFailure failure;
  Fd fd = open_beneath(dir, rel, O_RDONLY | O_NONBLOCK, failure);
  struct stat st {};
  return fd && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode);
}

/// "./a/b c.js" with each segment percent-encoded.
std::string module_url(std::string_view prefix, std::string_view rel) {
  std::string out(prefix);
  std::size_t start = 0;
  for (;;) {
    const std::size_t slash = rel.find('/', start);
    out += httpclient::encode_component(rel.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) break;
    out += '/';
    start = slash + 1;
  }
  return out;
}

/// The entry module of an npm package (package.json: exports "." for import, module, browser,
/// main; else index.js), or empty.
std::string npm_entry(const json::object& pkg) {
  const auto string_of = [](const json::value* v) -> std::string {
    return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  // Conditions, most specific first, as a bundler for the browser picks them.
  const auto conditional = [&](const json::value& v) -> std::string {
    if (v.is_string()) return std::string(v.get_string());
    if (!v.is_object()) return {};
    for (const char* condition : {"browser", "import", "module", "default"}) {
      if (const auto* c = v.get_object().if_contains(condition); c != nullptr && c->is_string()) {
        return std::string(c->get_string());
      }
    }
    return {};
  };
  if (const auto* exports = pkg.if_contains("exports")) {
    if (exports->is_string()) return std::string(exports->get_string());
    if (exports->is_object()) {
      if (const auto* dot = exports->get_object().if_contains(".")) return conditional(*dot);
      return conditional(*exports);
    }
  }
  for (const char* field : {"module", "browser", "main"}) {
    std::string entry = string_of(pkg.if_contains(field));
    if (!entry.empty()) return entry;
  }
  return "index.js";
}

std::string strip_dot_slash(std::string path) {
  while (path.rfind("./", 0) == 0) path.erase(0, 2);
  return path;
}

/// The numeric parts of "1.2.3" ("1.2.3-beta" keeps 1, 2, 3); false for anything else.
bool version_parts(std::string_view v, std::array<long, 3>& out, std::size_t& count) {
  count = 0;
  out = {0, 0, 0};
  std::size_t i = 0;
  while (i < v.size() && count < 3) {
    if (!ascii::is_digit(v[i])) return false;
    long n = 0;
    while (i < v.size() && ascii::is_digit(v[i])) {
      n = n * 10 + (v[i] - '0');
      if (n > 1000000000L) return false;
      ++i;
    }
    out[count++] = n;
    if (i < v.size() && v[i] == '.') {
      ++i;
      continue;
    }
    break;
  }
  return count > 0 && (i == v.size() || v[i] == '-' || v[i] == '+');
}

}  // namespace

std::string_view to_string(Component::Type type) {
  switch (type) {
    case Component::Type::kLocal:
      return "local";
    case Component::Type::kInline:
      return "inline";
    case Component::Type::kNpm:
      return "npm";
    case Component::Type::kCdn:
      return "cdn";
  }
  return "local";
}

bool valid_package_name(std::string_view name) {
  if (name.empty() || name.size() > 214) return false;
  const auto part_ok = [](std::string_view part) {
    if (part.empty() || part.front() == '.' || part.front() == '_') return false;
    for (char c : part) {
      if (!(ascii::is_lower(c) || ascii::is_digit(c) || c == '-' || c == '.' || c == '_' ||
            c == '~')) {
        return false;
      }
    }
    return true;
  };
  if (name.front() == '@') {
    const std::size_t slash = name.find('/');
    if (slash == std::string_view::npos) return false;
    return part_ok(name.substr(1, slash - 1)) && part_ok(name.substr(slash + 1));
  }
  return part_ok(name);
}

bool version_satisfies(std::string_view have, std::string_view want) {
  want = ascii::trim(want);
  if (want.empty() || want == "*" || want == "latest") return true;
  char op = 0;
  if (want.front() == '^' || want.front() == '~') {
    op = want.front();
    want.remove_prefix(1);
  }
  std::array<long, 3> h{}, w{};
  std::size_t hn = 0, wn = 0;
  if (!version_parts(have, h, hn) || hn != 3 || !version_parts(want, w, wn)) return false;
  if (op == 0) {
    for (std::size_t i = 0; i < wn; ++i) {
      if (h[i] != w[i]) return false;
    }
    return true;
  }
  // Same leading parts, then at least the wanted version.
  std::size_t fixed = 1;
  if (op == '~') fixed = wn >= 2 ? 2 : 1;
  if (op == '^' && w[0] == 0) fixed = wn >= 2 && w[1] == 0 ? 3 : 2;
  for (std::size_t i = 0; i < std::min(fixed, wn); ++i) {
    if (h[i] != w[i]) return false;
  }
  return h >= w;
}

std::string npm_rest(const Component& component, std::string_view rel) {
  const std::string prefix = "node_modules/" + component.package + "/";
  if (rel.size() <= prefix.size() || rel.compare(0, prefix.size(), prefix) != 0) return {};
  return std::string(rel.substr(prefix.size()));
}

Result<Component> resolve(const fs::path& dir, const json::value& view,
                          const std::vector<std::string>& cdn_origins) {
  const json::object* component_object = nullptr;
  if (view.is_object()) {
    if (const auto* c = view.get_object().if_contains("component");
        c != nullptr && c->is_object()) {
      component_object = &c->get_object();
    }
  }
  if (component_object == nullptr) {
    return invalid("Invalid params: the service has no view component",
                   json::object{{"reason", "no view component"}});
  }
  const json::object& c = *component_object;
  const auto text = [&c](std::string_view key) {
    const auto* v = c.if_contains(key);
    return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  const std::string type = text("type");
  Component out;
  if (type == "local") {
    out.type = Component::Type::kLocal;
    const std::string path = strip_dot_slash(text("path"));
    if (!is_clean_relative(path)) {
      return invalid("Invalid params: view.component.path '" + path +
                         "' must be a relative path inside the service folder",
                     json::object{{"path", path}});
    }
    if (!regular_below(dir, path)) {
      return invalid("Invalid params: the view component file '" + path +
                         "' is missing, not a regular file, or reached through a link",
                     json::object{{"path", path}});
    }
    const fs::path rel(path);
    out.base = dir / rel.parent_path();
    out.entry = rel.filename().string();
    out.entry_only = rel.parent_path().empty();
    const std::string ext = ascii::lower(rel.extension().string());
    out.html = ext == ".html" || ext == ".htm";
    if (!out.html) out.module = module_url("./", out.entry);
  } else if (type == "inline") {
    out.type = Component::Type::kInline;
    out.code = text("code");
    out.module = "./.hearth/inline.js";
  } else if (type == "npm") {
    out.type = Component::Type::kNpm;
    out.package = text("package");
    if (!valid_package_name(out.package)) {
      return invalid(
          "Invalid params: view.component.package '" + out.package + "' is not an npm package name",
          json::object{{"package", out.package}});
    }
    const fs::path pkg_rel = fs::path("node_modules") / out.package;
    const auto manifest_text = read_beneath(dir, pkg_rel / "package.json", std::size_t{1} << 20);
    if (!manifest_text) {
      return invalid("Invalid params: npm package '" + out.package + "' is not installed in " +
                         (dir / pkg_rel).string() +
                         " (a view's npm package comes from the service folder's node_modules "
                         "only; run npm install there)",
                     json::object{{"package", out.package}, {"path", (dir / pkg_rel).string()}});
    }
    auto parsed = json::parse_text(*manifest_text);
    if (!parsed.ok() || !parsed.value().is_object()) {
      return invalid("Invalid params: " + (dir / pkg_rel / "package.json").string() +
                     " is not a JSON object");
    }
    const json::object& pkg = parsed.value().get_object();
    const std::string want = text("version");
    const auto* have = pkg.if_contains("version");
    const std::string have_text =
        have != nullptr && have->is_string() ? std::string(have->get_string()) : "";
    if (!version_satisfies(have_text, want)) {
      return invalid("Invalid params: npm package '" + out.package + "' is version '" + have_text +
                         "', the manifest asks for '" + want + "'",
                     json::object{{"package", out.package}, {"version", have_text}});
    }
    const std::string entry = strip_dot_slash(npm_entry(pkg));
    if (!is_clean_relative(entry) || !regular_below(dir, pkg_rel / entry)) {
      return invalid("Invalid params: npm package '" + out.package + "' names entry '" + entry +
                         "', which is not a file inside the package",
                     json::object{{"package", out.package}, {"entry", entry}});
    }
    out.base = dir / pkg_rel;
    out.entry = entry;
    out.module = module_url("./", "node_modules/" + out.package + "/" + entry);
  } else if (type == "cdn") {
    out.type = Component::Type::kCdn;
    const std::string url = text("url");
    auto parsed = httpclient::parse_url(url);
    if (!parsed.ok()) {
      return invalid("Invalid params: view.component.url '" + url + "' is not an http(s) URL",
                     json::object{{"url", url}});
    }
    out.script_origin = parsed.value().origin();
    if (std::find(cdn_origins.begin(), cdn_origins.end(), out.script_origin) == cdn_origins.end()) {
      json::object data;
      data["origin"] = out.script_origin;
      data["hint"] = "start the daemon with --allow-view-origin " + out.script_origin;
      return Error::make(ErrorCode::kPermissionDenied,
                         "Permission denied: the view loads its code from " + out.script_origin +
                             ", which this daemon does not allow (a local host has no internet "
                             "by default); start it with --allow-view-origin " +
                             out.script_origin,
                         std::move(data));
    }
    out.module = url;
    out.export_name = text("exportName");
  } else {
    return invalid("Invalid params: view.component.type '" + type + "' is not served");
  }
  return out;
}

}  // namespace hearth::views
