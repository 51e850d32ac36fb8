#include "manifest/manifest.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <string_view>
#include <system_error>
#include <utility>

#include "common/ascii.hpp"
#include "common/fd.hpp"
#include "common/rfc3986.hpp"
#include "egress/network_policy.hpp"

namespace hearth::manifest {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kManifestFileName = "lavs.json";

/// Larger files are refused before parsing: a manifest is configuration, and the whole document is
/// kept in memory (Manifest::raw) for as long as the service is loaded.
constexpr std::size_t kMaxManifestBytes = std::size_t{4} * 1024 * 1024;

/// Longer execution limits are clamped to this (about 100 years), so that a caller adding the limit
/// to a steady_clock time point (nanoseconds in 64 bits, about 292 years) cannot overflow. The
/// schema accepts any non-negative number, even 1e308, and such values mean "practically none".
constexpr std::int64_t kMaxExecutionTimeMs = 100LL * 365 * 24 * 60 * 60 * 1000;

constexpr std::string_view kIdentifierRule =
    "must start with a letter and hold only letters, digits, '_' and '-'";

// ---------------------------------------------------------------------------------------------
// Small checks shared by every field.

/// ^[a-zA-Z][a-zA-Z0-9_-]*$ as the reference schema's ECMAScript regex reads it (ASCII only, and
/// `$` does not match before a trailing newline).
bool is_identifier(std::string_view s) {
  if (s.empty() || !ascii::is_alpha(s.front())) {
    return false;
  }
  return std::all_of(s.begin() + 1, s.end(),
                     [](char c) { return ascii::is_alnum(c) || c == '_' || c == '-'; });
}

/// ^\d+\.\d+\.\d+ (a prefix: the schema allows any pre-release or build suffix, or none).
bool has_semver_prefix(std::string_view s) {
  std::size_t pos = 0;
  for (int part = 0; part < 3; ++part) {
    if (part > 0) {
      if (pos >= s.size() || s[pos] != '.') {
        return false;
      }
      ++pos;
    }
    const std::size_t start = pos;
    while (pos < s.size() && ascii::is_digit(s[pos])) {
      ++pos;
    }
    if (pos == start) {
      return false;
    }
  }
  return true;
}

/// An absolute URI (draft-07 "format": "uri"): a scheme, then no character RFC 3986 never allows.
bool is_absolute_uri(std::string_view s) {
  const auto colon = s.find(':');
  if (colon == std::string_view::npos || !rfc3986::is_scheme(s.substr(0, colon))) {
    return false;
  }
  return std::none_of(s.begin() + static_cast<std::ptrdiff_t>(colon) + 1, s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u <= 0x20 || u == 0x7f ||
           std::string_view("\"<>\\^`{|}").find(c) != std::string_view::npos;
  });
}

/// `base.key`, or `base["key"]` when the key would make the path ambiguous (dots, spaces, ...).
std::string key_path(std::string_view base, std::string_view key) {
  const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return ascii::is_alnum(c) || c == '_' || c == '-' || c == '$';
  });
  if (plain) {
    return join_path(base, key);
  }
  return std::string(base) + "[" + json::serialize(json::string(key)) + "]";
}

/// A path reported relative to a schema root, placed under `base`.
std::string prefixed_path(const std::string& base, const std::string& relative) {
  if (relative.empty()) {
    return base;
  }
  if (relative.front() == '[') {
    return base + relative;
  }
  return join_path(base, relative);
}

bool is_types_path(std::string_view p) {
  constexpr std::string_view kTypes = "types";
  return p.substr(0, kTypes.size()) == kTypes &&
         (p.size() == kTypes.size() || p[kTypes.size()] == '.' || p[kTypes.size()] == '[');
}

/// A JSON number >= 0 as a double (+infinity included: the parser gives it for 1e400, and the
/// schema's `minimum: 0` accepts it); nullopt for anything else, NaN included.
std::optional<double> non_negative_number(const json::value& v) {
  switch (v.kind()) {
    case json::kind::int64:
      if (v.get_int64() < 0) {
        return std::nullopt;
      }
      return static_cast<double>(v.get_int64());
    case json::kind::uint64:
      return static_cast<double>(v.get_uint64());
    case json::kind::double_:
      if (std::isnan(v.get_double()) || v.get_double() < 0) {
        return std::nullopt;
      }
      return v.get_double();
    default:
      return std::nullopt;
  }
}

class Checker {
 public:
  Checker(const HandlerKinds& kinds, const schema::Compiler& compiler, Problems& problems)
      : kinds_(kinds), compiler_(compiler), problems_(problems), first_problem_(problems.size()) {}

  void add(std::string path, std::string message) {
    problems_.push_back(Problem{std::move(path), std::move(message)});
  }

  /// Adds the problem unless this load already reported the same one.
  void add_unique(std::string path, std::string message) {
    const bool seen = std::any_of(
        problems_.begin() + static_cast<std::ptrdiff_t>(first_problem_), problems_.end(),
        [&](const Problem& p) { return p.path == path && p.message == message; });
    if (!seen) {
      add(std::move(path), std::move(message));
    }
  }

  /// The string at `obj[key]`; a problem when it is present but not a string, or absent and
  /// required.
  const json::string* string_member(const json::object& obj, std::string_view key,
                                    const std::string& base, bool required) {
    const json::value* v = obj.if_contains(key);
    if (v == nullptr) {
      if (required) {
        add(key_path(base, key), "is required");
      }
      return nullptr;
    }
    if (!v->is_string()) {
      add(key_path(base, key), "must be a string");
      return nullptr;
    }
    return &v->get_string();
  }

  /// Checks that `v` is an array of strings and returns them.
  std::optional<std::vector<std::string>> string_array(const json::value& v,
                                                       const std::string& path,
                                                       std::string_view what) {
    if (!v.is_array()) {
      add(path, "must be an array of " + std::string(what));
      return std::nullopt;
    }
    std::vector<std::string> out;
    bool ok = true;
    const auto& arr = v.get_array();
    for (std::size_t i = 0; i < arr.size(); ++i) {
      if (!arr[i].is_string()) {
        add(index_path(path, i), "must be a string");
        ok = false;
        continue;
      }
      out.emplace_back(arr[i].get_string());
    }
    if (!ok) {
      return std::nullopt;
    }
    return out;
  }

  /// Compiles a schema and reports the compiler's problems under `path`.
  std::shared_ptr<const schema::Schema> compile(const json::value& schema_value,
                                                const json::object& types,
                                                const std::string& path) {
    Problems found;
    auto compiled = compiler_.compile(schema_value, types, found);
    for (auto& p : found) {
      // The compiler places the manifest's types at the root of the document it compiles, so a
      // problem inside a referenced type comes back as "types.Name...": that is already the type's
      // place in the manifest, and compiling every type on its own reported it there. One copy.
      if (is_types_path(p.path)) {
        add_unique(std::move(p.path), std::move(p.message));
      } else {
        add(prefixed_path(path, p.path), std::move(p.message));
      }
    }
    // A compiler that gives nothing must say why; if it does not, the load still fails here.
    if (compiled == nullptr && found.empty()) {
      add(path, "is not a usable JSON Schema");
    }
    return compiled;
  }

  Permissions permissions(const json::value& v, const std::string& path) {
    Permissions out;
    if (!v.is_object()) {
      add(path, "must be an object");
      return out;
    }
    const auto& obj = v.get_object();
    if (const auto* fa = obj.if_contains("fileAccess")) {
      out.file_access = string_array(*fa, join_path(path, "fileAccess"), "strings");
    }
    if (const auto* na = obj.if_contains("networkAccess")) {
      const std::string na_path = join_path(path, "networkAccess");
      if (na->is_bool()) {
        out.network_access = egress::NetworkPolicy(na->get_bool());
      } else if (na->is_array()) {
        if (auto hosts = string_array(*na, na_path, "host names")) {
          // Parsed here once: every user of the permissions gets the parsed list.
          auto policy = egress::NetworkPolicy::parse(*hosts);
          if (policy.ok()) {
            out.network_access = std::move(policy).value();
          } else {
            add(na_path, policy.error().message);
          }
        }
      } else {
        add(na_path, "must be a boolean or an array of host names");
      }
    }
    if (const auto* met = obj.if_contains("maxExecutionTime")) {
      if (auto ms = non_negative_number(*met)) {
        // 0 means "no limit of its own": it is treated as absent, so an endpoint's 0 falls back to
        // the manifest's limit and a manifest's 0 to the host default (a 0 ms deadline would fail
        // every call before it starts). Fractions round up, so a limit is never shortened.
        const double rounded = std::ceil(*ms);
        if (rounded >= static_cast<double>(kMaxExecutionTimeMs)) {
          out.max_execution_time = std::chrono::milliseconds(kMaxExecutionTimeMs);
        } else if (rounded > 0) {
          out.max_execution_time = std::chrono::milliseconds(static_cast<std::int64_t>(rounded));
        }
      } else {
        add(join_path(path, "maxExecutionTime"), "must be a non-negative number (milliseconds)");
      }
    }
    if (const auto* mm = obj.if_contains("maxMemory")) {
      if (mm->is_uint64() || (mm->is_int64() && mm->get_int64() >= 0)) {
        // Exact integers: converting through a double would lose the low bits of large values.
        const std::uint64_t bytes =
            mm->is_uint64() ? mm->get_uint64() : static_cast<std::uint64_t>(mm->get_int64());
        // As for maxExecutionTime, 0 is "no limit of its own": a 0-byte budget could run nothing.
        if (bytes > 0) {
          out.max_memory = bytes;
        }
      } else if (auto bytes = non_negative_number(*mm)) {
        const double rounded = std::ceil(*bytes);
        // 2^64 is exactly representable; anything at or above it saturates.
        constexpr double kTwoTo64 = 18446744073709551616.0;
        if (rounded >= kTwoTo64) {
          out.max_memory = std::numeric_limits<std::uint64_t>::max();
        } else if (rounded > 0) {
          out.max_memory = static_cast<std::uint64_t>(rounded);
        }
      } else {
        add(join_path(path, "maxMemory"), "must be a non-negative number (bytes)");
      }
    }
    return out;
  }

  void view(const json::value& v, const std::string& path) {
    if (!v.is_object()) {
      add(path, "must be an object");
      return;
    }
    const auto& obj = v.get_object();
    const std::string component_path = join_path(path, "component");
    if (const auto* component = obj.if_contains("component")) {
      this->component(*component, component_path);
    } else {
      add(component_path, "is required");
    }
    if (const auto* fallback = obj.if_contains("fallback")) {
      const bool ok = fallback->is_string() &&
                      (fallback->get_string() == "list" || fallback->get_string() == "table" ||
                       fallback->get_string() == "json");
      if (!ok) {
        add(join_path(path, "fallback"), "must be one of list, table, json");
      }
    }
    string_member(obj, "icon", path, false);
    if (const auto* theme = obj.if_contains("theme")) {
      const std::string theme_path = join_path(path, "theme");
      if (!theme->is_object()) {
        add(theme_path, "must be an object of strings");
      } else {
        for (const auto& kv : theme->get_object()) {
          if (!kv.value().is_string()) {
            add(key_path(theme_path, kv.key()), "must be a string");
          }
        }
      }
    }
  }

  void component(const json::value& v, const std::string& path) {
    if (!v.is_object()) {
      add(path, "must be an object");
      return;
    }
    const auto& obj = v.get_object();
    const json::string* type = string_member(obj, "type", path, true);
    if (type == nullptr) {
      return;
    }
    if (*type == "cdn") {
      if (const auto* url = string_member(obj, "url", path, true)) {
        if (!is_absolute_uri(*url)) {
          add(join_path(path, "url"), "must be an absolute URI");
        }
      }
      string_member(obj, "exportName", path, false);
    } else if (*type == "npm") {
      string_member(obj, "package", path, true);
      string_member(obj, "version", path, false);
    } else if (*type == "local") {
      string_member(obj, "path", path, true);
    } else if (*type == "inline") {
      string_member(obj, "code", path, true);
    } else {
      add(join_path(path, "type"), "must be one of cdn, npm, local, inline");
    }
  }

  /// Checks `types` (problems under types.Name) and compiles each type once, so that a broken type
  /// is reported even when no endpoint uses it. Returns false when `types` is not an object.
  bool types(const json::value& v, json::object& out) {
    if (!v.is_object()) {
      add("types", "must be an object");
      return false;
    }
    out = v.get_object();
    for (const auto& kv : out) {
      const std::string path = key_path("types", kv.key());
      if (!kv.value().is_object()) {
        add(path, "must be an object");
        continue;
      }
      compile(kv.value(), out, path);
    }
    return true;
  }

  /// `compile_schemas` is false when `types` is broken: every `$ref` would then be reported as
  /// unresolved, burying the one real problem.
  std::optional<Endpoint> endpoint(const json::value& v, const std::string& path,
                                   const json::object& types, bool compile_schemas) {
    if (!v.is_object()) {
      add(path, "must be an object");
      return std::nullopt;
    }
    const auto& obj = v.get_object();
    const std::size_t problems_before = problems_.size();
    Endpoint ep;

    if (const auto* id = string_member(obj, "id", path, true)) {
      if (is_identifier(*id)) {
        ep.id = *id;
      } else {
        add(join_path(path, "id"), std::string(kIdentifierRule));
      }
    }

    const std::string method_path = join_path(path, "method");
    if (const auto* method = obj.if_contains("method")) {
      if (method->is_string() && method->get_string() == "query") {
        ep.method = Method::kQuery;
      } else if (method->is_string() && method->get_string() == "mutation") {
        ep.method = Method::kMutation;
      } else if (method->is_string() && method->get_string() == "subscription") {
        ep.method = Method::kSubscription;
      } else {
        add(method_path, "must be one of query, mutation, subscription");
      }
    } else {
      add(method_path, "is required");
    }

    if (const auto* description = string_member(obj, "description", path, false)) {
      ep.description = *description;
    }

    const std::string handler_path = join_path(path, "handler");
    if (const auto* handler = obj.if_contains("handler")) {
      if (!handler->is_object()) {
        add(handler_path, "must be an object");
      } else if (const auto* type =
                     string_member(handler->get_object(), "type", handler_path, true)) {
        ep.handler_type = *type;
        ep.handler = handler->get_object();
        ep.handler_config = kinds_.parse(ep.handler_type, ep.handler, handler_path, problems_);
      }
    } else {
      add(handler_path, "is required");
    }

    if (const auto* schema = obj.if_contains("schema")) {
      const std::string schema_path = join_path(path, "schema");
      if (!schema->is_object()) {
        add(schema_path, "must be an object");
      } else {
        ep.input_schema =
            schema_member(schema->get_object(), "input", schema_path, types, compile_schemas);
        ep.output_schema =
            schema_member(schema->get_object(), "output", schema_path, types, compile_schemas);
      }
    }

    if (const auto* permissions = obj.if_contains("permissions")) {
      ep.permissions = this->permissions(*permissions, join_path(path, "permissions"));
    }

    if (problems_.size() != problems_before) {
      return std::nullopt;
    }
    return ep;
  }

  std::shared_ptr<const schema::Schema> schema_member(const json::object& schema,
                                                      std::string_view key, const std::string& base,
                                                      const json::object& types,
                                                      bool compile_schemas) {
    const json::value* v = schema.if_contains(key);
    if (v == nullptr) {
      return nullptr;
    }
    const std::string path = join_path(base, key);
    // The reference schema asks for an object; a boolean is a JSON Schema too (true: anything,
    // false: nothing) and hearth accepts it.
    if (!v->is_object() && !v->is_bool()) {
      add(path, "must be a JSON Schema (an object or a boolean)");
      return nullptr;
    }
    if (!compile_schemas) {
      return nullptr;
    }
    return compile(*v, types, path);
  }

  std::optional<Manifest> manifest(const json::value& doc) {
    const std::size_t problems_before = problems_.size();
    if (!doc.is_object()) {
      add("", "manifest must be a JSON object");
      return std::nullopt;
    }
    const auto& obj = doc.get_object();
    Manifest m;

    if (const auto* lavs = obj.if_contains("lavs")) {
      if (lavs->is_string() && lavs->get_string() == "1.0") {
        m.lavs = "1.0";
      } else {
        add("lavs", "must be \"1.0\"");
      }
    } else {
      add("lavs", "is required");
    }

    if (const auto* name = string_member(obj, "name", "", true)) {
      if (is_identifier(*name)) {
        m.name = *name;
      } else {
        add("name", std::string(kIdentifierRule));
      }
    }

    if (const auto* version = string_member(obj, "version", "", true)) {
      if (has_semver_prefix(*version)) {
        m.version = *version;
      } else {
        add("version", "must be a semantic version such as 1.0.0");
      }
    }

    if (const auto* description = string_member(obj, "description", "", false)) {
      m.description = *description;
    }

    bool types_ok = true;
    if (const auto* types = obj.if_contains("types")) {
      types_ok = this->types(*types, m.types);
    }

    if (const auto* permissions = obj.if_contains("permissions")) {
      m.permissions = this->permissions(*permissions, "permissions");
    }

    if (const auto* endpoints = obj.if_contains("endpoints")) {
      if (!endpoints->is_array()) {
        add("endpoints", "must be an array");
      } else if (endpoints->get_array().empty()) {
        add("endpoints", "must list at least one endpoint");
      } else {
        const auto& arr = endpoints->get_array();
        std::map<std::string, std::size_t, std::less<>> first_index;
        for (std::size_t i = 0; i < arr.size(); ++i) {
          const std::string path = index_path("endpoints", i);
          auto ep = endpoint(arr[i], path, m.types, types_ok);
          // Duplicates are looked for among well-formed ids only (a malformed one is reported as
          // such).
          const json::value* id = json::member(arr[i], "id");
          if (id != nullptr && id->is_string() && is_identifier(id->get_string())) {
            const std::string id_text(id->get_string());
            auto [it, inserted] = first_index.emplace(id_text, i);
            if (!inserted) {
              add(join_path(path, "id"), "duplicate endpoint id '" + id_text + "' (also " +
                                             index_path("endpoints", it->second) + ")");
            }
          }
          if (ep) {
            m.endpoints.push_back(std::move(*ep));
          }
        }
      }
    } else {
      add("endpoints", "is required");
    }

    if (const auto* view = obj.if_contains("view")) {
      this->view(*view, "view");
      m.view = *view;
    }

    if (problems_.size() != problems_before) {
      return std::nullopt;
    }
    for (auto& ep : m.endpoints) {
      ep.effective = Permissions::effective(m.permissions, ep.permissions);
    }
    m.raw = doc;
    return m;
  }

 private:
  const HandlerKinds& kinds_;
  const schema::Compiler& compiler_;
  Problems& problems_;
  std::size_t first_problem_;  ///< problems before this one are the caller's
};

/// 1-based line and column of byte `offset` in `text`.
std::pair<std::size_t, std::size_t> line_and_column(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, offset - line_start + 1};
}

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

/// Reads the whole file, refusing more than kMaxManifestBytes (checked while reading, so a file
/// growing after a size check cannot slip through).
std::optional<std::string> read_manifest_text(const fs::path& file, Problems& problems) {
  const Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    problems.push_back({"", "cannot read " + file.string() + ": " + errno_text(errno)});
    return std::nullopt;
  }
  std::string text;
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      const int err = errno;
      problems.push_back({"", "cannot read " + file.string() + ": " + errno_text(err)});
      return std::nullopt;
    }
    if (n == 0) {
      break;
    }
    if (text.size() + static_cast<std::size_t>(n) > kMaxManifestBytes) {
      problems.push_back({"", file.string() + " is larger than " +
                                  std::to_string(kMaxManifestBytes / (std::size_t{1024} * 1024)) +
                                  " MiB"});
      return std::nullopt;
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

/// `p` made absolute and canonical where it exists (symbolic links resolved); lexically normal
/// otherwise.
fs::path canonical_or_absolute(const fs::path& p) {
  std::error_code ec;
  fs::path out = fs::weakly_canonical(p, ec);
  if (ec) {
    ec.clear();
    out = fs::absolute(p, ec).lexically_normal();
    if (ec) {
      out = p.lexically_normal();
    }
  }
  return out;
}

bool holds_manifest(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / kManifestFileName, ec);
}

}  // namespace

std::string_view to_string(Method m) {
  switch (m) {
    case Method::kQuery:
      return "query";
    case Method::kMutation:
      return "mutation";
    case Method::kSubscription:
      return "subscription";
  }
  return "query";
}

const Endpoint* Manifest::find(std::string_view endpoint_id) const {
  for (const auto& ep : endpoints) {
    if (ep.id == endpoint_id) {
      return &ep;
    }
  }
  return nullptr;
}

std::optional<Manifest> load_document(const json::value& doc, const fs::path& dir,
                                      const HandlerKinds& kinds, const schema::Compiler& compiler,
                                      Problems& problems) {
  // The boundary where an exception from below (an allocation failure, a throwing compiler or kind)
  // becomes a problem: loading a manifest must never take the daemon down.
  try {
    Checker checker(kinds, compiler, problems);
    auto m = checker.manifest(doc);
    Problems unknown = unknown_keys(doc, kinds);
    if (!m) {
      // A misspelt key often explains a problem ("endpoints is required" beside "endpionts").
      for (auto& p : unknown) problems.push_back(std::move(p));
      return std::nullopt;
    }
    m->warnings = std::move(unknown);
    m->dir = canonical_or_absolute(dir);
    m->file = m->dir / kManifestFileName;
    return m;
  } catch (const std::exception& e) {
    problems.push_back({"", std::string("manifest could not be loaded: ") + e.what()});
    return std::nullopt;
  }
}

std::optional<std::string> read_text(const fs::path& path, Problems& problems) {
  std::error_code ec;
  const fs::path file = fs::is_directory(path, ec) ? path / kManifestFileName : path;
  return read_manifest_text(file, problems);
}

std::optional<Manifest> load_text(std::string_view text, const fs::path& file,
                                  const HandlerKinds& kinds, const schema::Compiler& compiler,
                                  Problems& problems) {
  std::error_code ec;
  // A manifest may say 1e400 for "no limit": clamped to the largest double, not refused.
  auto doc = json::parse_text(text, json::ParseLimits{.clamp_numbers = true});
  if (!doc.ok()) {
    std::size_t offset = 0;
    std::string reason = "syntax error";
    if (const auto* data = doc.error().data.if_object()) {
      if (const auto* o = data->if_contains("offset"); o != nullptr && o->is_number()) {
        offset = static_cast<std::size_t>(o->to_number<std::uint64_t>(ec));
      }
      if (const auto* r = data->if_contains("reason"); r != nullptr && r->is_string()) {
        reason = std::string(r->get_string());
      }
    }
    const auto [line, column] = line_and_column(text, offset);
    problems.push_back({"", "not valid JSON at line " + std::to_string(line) + ", column " +
                                std::to_string(column) + ": " + reason});
    return std::nullopt;
  }

  const fs::path canonical_file = canonical_or_absolute(file);
  auto m = load_document(*doc, canonical_file.parent_path(), kinds, compiler, problems);
  if (m) {
    m->file = canonical_file;
  }
  return m;
}

std::optional<Manifest> load(const fs::path& path, const HandlerKinds& kinds,
                             const schema::Compiler& compiler, Problems& problems) {
  std::error_code ec;
  const fs::path file = fs::is_directory(path, ec) ? path / kManifestFileName : path;
  auto text = read_manifest_text(file, problems);
  if (!text) {
    return std::nullopt;
  }
  return load_text(*text, file, kinds, compiler, problems);
}

std::vector<fs::path> discover(const fs::path& path) {
  std::error_code ec;
  fs::path root = fs::canonical(path, ec);
  if (ec) {
    return {};
  }
  if (fs::is_regular_file(root, ec)) {
    if (root.filename() == kManifestFileName) {
      return {root.parent_path()};
    }
    return {};
  }
  if (!fs::is_directory(root, ec)) {
    return {};
  }
  if (holds_manifest(root)) {
    return {root};
  }

  std::vector<fs::path> found;
  fs::directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) {
    return {};
  }
  const fs::directory_iterator end;
  while (it != end) {
    const fs::path& sub = it->path();
    std::error_code entry_ec;  // an entry that vanished or cannot be examined is just skipped
    if (fs::is_directory(sub, entry_ec) && holds_manifest(sub)) {
      found.push_back(sub);
    }
    it.increment(ec);
    if (ec) {
      break;
    }
  }
  std::sort(found.begin(), found.end(), [](const fs::path& a, const fs::path& b) {
    return a.filename().native() < b.filename().native();
  });
  return found;
}

}  // namespace hearth::manifest
