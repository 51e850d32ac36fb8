#include "workspace/definition.hpp"

#include <algorithm>
#include <set>

#include "common/ascii.hpp"
#include "common/beneath.hpp"
#include "common/suggest.hpp"
#include "egress/network_policy.hpp"
#include "json/patch.hpp"
#include "json/yaml.hpp"

namespace hearth::workspace {
namespace fs = std::filesystem;

std::string_view to_string(Access access) {
  switch (access) {
    case Access::kRead:
      return "r";
    case Access::kWrite:
      return "w";
    case Access::kReadWrite:
      return "rw";
  }
  return "r";
}

const StateDef* Definition::find(std::string_view name) const {
  for (const auto& s : states) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool is_workspace_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || !ascii::is_alnum(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (ascii::is_alnum(c) && !ascii::is_upper(c)) || c == '-' || c == '_';
  });
}

namespace {

constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{1} << 20;

bool is_identifier(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  if (!(ascii::is_alpha(s[0]) || s[0] == '_' || s[0] == '$')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return ascii::is_alnum(c) || c == '_' || c == '$'; });
}

/// Names a state or utility may not take: reserved words and the globals a script relies on.
bool is_reserved(std::string_view s) {
  static const std::set<std::string, std::less<>> kReserved = {
      "await",         "break",        "case",
      "catch",         "class",        "const",
      "continue",      "debugger",     "default",
      "delete",        "do",           "else",
      "enum",          "export",       "extends",
      "false",         "finally",      "for",
      "function",      "if",           "implements",
      "import",        "in",           "instanceof",
      "interface",     "let",          "new",
      "null",          "package",      "private",
      "protected",     "public",       "return",
      "static",        "super",        "switch",
      "this",          "throw",        "true",
      "try",           "typeof",       "var",
      "void",          "while",        "with",
      "yield",         "arguments",    "eval",
      "undefined",     "NaN",          "Infinity",
      "globalThis",    "Object",       "Array",
      "Function",      "String",       "Number",
      "Boolean",       "Symbol",       "BigInt",
      "Math",          "JSON",         "Date",
      "RegExp",        "Error",        "TypeError",
      "RangeError",    "SyntaxError",  "ReferenceError",
      "Promise",       "Proxy",        "Reflect",
      "Map",           "Set",          "WeakMap",
      "WeakSet",       "Intl",         "console",
      "ctx",           "fetch",        "readFile",
      "setTimeout",    "clearTimeout", "attempt_completion",
      "execute_script"};
  return kReserved.contains(s) || s.starts_with("__");
}

/// A file of the workspace folder, read below it (no symbolic link followed, no component
/// leaving it: common/beneath.hpp); nullopt with `error` saying why not.
std::optional<std::string> text_of(const fs::path& dir, const std::string& rel,
                                   std::string& error) {
  auto text = read_beneath(dir, rel, kMaxFileBytes);
  if (!text) {
    error = "cannot read " + rel +
            " (missing, not a regular file, a symbolic link, or larger than 1 MiB)";
  }
  return text;
}

class Reader {
 public:
  Reader(const fs::path& dir, Problems& problems)
      : dir_(dir), problems_(problems), compiler_(schema::make_draft7_compiler()) {}

  void add(const std::string& path, std::string message) {
    problems_.push_back({path, std::move(message)});
  }

  /// Members of `o` not in `known` are problems (a misspelt key should not pass silently).
  void only(const json::object& o, const std::string& path,
            std::initializer_list<std::string_view> known) {
    for (const auto& kv : o) {
      if (std::find(known.begin(), known.end(), kv.key()) == known.end()) {
        std::string message = "is not a known member here";
        if (auto near = closest_word(kv.key(), known)) message += "; did you mean '" + *near + "'?";
        add(join_path(path, kv.key()), std::move(message));
      }
    }
  }

  std::optional<std::string> string(const json::object& o, const std::string& path,
                                    std::string_view key, bool required) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || v->is_null()) {
      if (required) add(join_path(path, key), "is required");
      return std::nullopt;
    }
    if (!v->is_string()) {
      add(join_path(path, key), "must be a string");
      return std::nullopt;
    }
    return std::string(v->get_string());
  }

  const json::object* object(const json::object& o, const std::string& path, std::string_view key,
                             bool required) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || v->is_null()) {
      if (required) add(join_path(path, key), "is required");
      return nullptr;
    }
    if (!v->is_object()) {
      add(join_path(path, key), "must be an object");
      return nullptr;
    }
    return &v->get_object();
  }

  const json::array* array(const json::object& o, const std::string& path, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || v->is_null()) return nullptr;
    if (!v->is_array()) {
      add(join_path(path, key), "must be a list");
      return nullptr;
    }
    return &v->get_array();
  }

  std::optional<bool> boolean(const json::object& o, const std::string& path,
                              std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || v->is_null()) return std::nullopt;
    if (!v->is_bool()) {
      add(join_path(path, key), "must be true or false");
      return std::nullopt;
    }
    return v->get_bool();
  }

  std::optional<std::int64_t> integer(const json::object& o, const std::string& path,
                                      std::string_view key, std::int64_t min, std::int64_t max) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || v->is_null()) return std::nullopt;
    std::int64_t n = 0;
    if (v->is_int64()) {
      n = v->get_int64();
    } else if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(max)) {
      n = static_cast<std::int64_t>(v->get_uint64());
    } else {
      add(join_path(path, key),
          "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
      return std::nullopt;
    }
    if (n < min || n > max) {
      add(join_path(path, key),
          "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
      return std::nullopt;
    }
    return n;
  }

  std::shared_ptr<const schema::Schema> compile(const json::value& schema,
                                                const std::string& path) {
    Problems found;
    auto compiled = compiler_->compile(schema, types_, found);
    for (auto& p : found) add(join_path(path, p.path), std::move(p.message));
    return compiled;
  }

  std::optional<EndpointCall> call(const json::object& o, const std::string& path,
                                   bool subscription_allowed, bool* is_subscription) {
    EndpointCall c;
    only(o, path,
         subscription_allowed
             ? std::initializer_list<std::string_view>{"service", "endpoint", "subscription",
                                                       "input", "refresh", "path"}
             : std::initializer_list<std::string_view>{"service", "endpoint", "input"});
    auto service = string(o, path, "service", true);
    auto endpoint = string(o, path, "endpoint", false);
    std::optional<std::string> subscription;
    if (subscription_allowed) subscription = string(o, path, "subscription", false);
    if (endpoint && subscription) {
      add(path, "names an endpoint or a subscription, not both");
      return std::nullopt;
    }
    if (!endpoint && !subscription) {
      add(join_path(path, "endpoint"),
          subscription_allowed ? "is required (or subscription)" : "is required");
      return std::nullopt;
    }
    if (!service) return std::nullopt;
    c.service = *service;
    c.endpoint = endpoint ? *endpoint : *subscription;
    if (is_subscription != nullptr) *is_subscription = subscription.has_value();
    if (const auto* input = o.if_contains("input")) c.input = *input;
    return c;
  }

  std::optional<Definition> read(const json::value& document) {
    Definition def;
    def.dir = dir_;
    if (!document.is_object()) {
      add("", "a workspace definition is an object");
      return std::nullopt;
    }
    const auto& root = document.get_object();
    only(root, "",
         {"name", "description", "types", "limits", "grants", "components", "examples",
          "completion"});
    if (auto name = string(root, "", "name", true)) {
      if (!is_workspace_name(*name)) {
        add("name", "must be 1-64 characters of a-z, 0-9, '-' and '_'");
      } else {
        def.name = *name;
      }
    }
    def.description = string(root, "", "description", false).value_or("");
    if (const auto* types = object(root, "", "types", false)) types_ = *types;
    read_limits(root, def.limits);
    read_grants(root, def.grants);

    const auto* components = array(root, "", "components");
    if (components == nullptr || components->empty()) {
      add("components", "is required: a list of at least one component");
    } else {
      std::map<std::string, std::string> state_paths;
      std::map<std::string, std::string> utility_files;
      for (std::size_t i = 0; i < components->size(); ++i) {
        read_component((*components)[i], index_path("components", i), def, state_paths,
                       utility_files);
      }
    }
    if (const auto* examples = array(root, "", "examples")) {
      read_examples(*examples, "examples", "", def);
    }
    if (const auto* completion = object(root, "", "completion", false)) {
      only(*completion, "completion", {"schema"});
      if (const auto* s = completion->if_contains("schema")) {
        def.completion_schema_json = *s;
        def.completion_schema = compile(*s, "completion.schema");
      }
    }
    check_references(def);
    if (!problems_.empty()) return std::nullopt;
    return def;
  }

 private:
  void read_limits(const json::object& root, Limits& limits) {
    const auto* o = object(root, "", "limits", false);
    if (o == nullptr) return;
    only(*o, "limits", {"timeoutMs", "memoryMb", "consoleKb", "stateKb", "scriptKb"});
    if (auto n = integer(*o, "limits", "timeoutMs", 10, 600000)) {
      limits.timeout = std::chrono::milliseconds(*n);
    }
    if (auto n = integer(*o, "limits", "memoryMb", 16, 4096)) {
      limits.memory_bytes = static_cast<std::uint64_t>(*n) << 20;
    }
    if (auto n = integer(*o, "limits", "consoleKb", 1, 4096)) {
      limits.console_bytes = static_cast<std::size_t>(*n) << 10;
    }
    if (auto n = integer(*o, "limits", "stateKb", 1, 16384)) {
      limits.state_bytes = static_cast<std::size_t>(*n) << 10;
    }
    if (auto n = integer(*o, "limits", "scriptKb", 1, 4096)) {
      limits.script_bytes = static_cast<std::size_t>(*n) << 10;
    }
  }

  void read_grants(const json::object& root, Grants& grants) {
    const auto* o = object(root, "", "grants", false);
    if (o == nullptr) return;
    only(*o, "grants", {"time", "random", "network", "files"});
    grants.time = boolean(*o, "grants", "time").value_or(false);
    grants.random = boolean(*o, "grants", "random").value_or(false);
    if (const auto* n = o->if_contains("network")) {
      if (n->is_bool()) {
        grants.network = n->get_bool();
      } else if (n->is_array()) {
        std::vector<std::string> hosts;
        for (const auto& h : n->get_array()) {
          if (!h.is_string()) {
            add("grants.network", "must be true, false or a list of hosts");
            return;
          }
          hosts.emplace_back(h.get_string());
        }
        if (auto parsed = egress::NetworkPolicy::parse(hosts); !parsed.ok()) {
          add("grants.network", parsed.error().message);
        }
        grants.network = std::move(hosts);
      } else {
        add("grants.network", "must be true, false or a list of hosts");
      }
    }
    if (const auto* f = o->if_contains("files")) {
      std::vector<std::string> globs;
      bool ok = f->is_array();
      if (ok) {
        for (const auto& g : f->get_array()) {
          if (!g.is_string()) {
            ok = false;
            break;
          }
          globs.emplace_back(g.get_string());
        }
      }
      if (!ok) {
        add("grants.files", "must be a list of fileAccess patterns");
      } else {
        grants.files = std::move(globs);
      }
    }
  }

  void read_component(const json::value& v, const std::string& path, Definition& def,
                      std::map<std::string, std::string>& state_paths,
                      std::map<std::string, std::string>& utility_names) {
    if (!v.is_object()) {
      add(path, "a component is an object");
      return;
    }
    const auto& o = v.get_object();
    only(o, path, {"id", "description", "states", "utilities", "examples"});
    Component component;
    if (auto id = string(o, path, "id", true)) {
      if (!is_identifier(*id)) {
        add(join_path(path, "id"), "must be a name of letters, digits and '_'");
      }
      for (const auto& other : def.components) {
        if (other.id == *id) add(join_path(path, "id"), "'" + *id + "' names two components");
      }
      component.id = *id;
    }
    component.description = string(o, path, "description", false).value_or("");
    const auto* states = object(o, path, "states", true);
    if (states != nullptr) {
      for (const auto& kv : *states) {
        const std::string spath = join_path(join_path(path, "states"), kv.key());
        const std::string name(kv.key());
        if (!is_identifier(name) || is_reserved(name)) {
          add(spath,
              "a state's name must be a JavaScript identifier that is not a reserved word or a "
              "global a script uses (and does not start with '__')");
          continue;
        }
        if (auto it = state_paths.find(name); it != state_paths.end()) {
          add(spath, "'" + name + "' is also defined at " + it->second +
                         " (state names are shared by all components)");
          continue;
        }
        state_paths.emplace(name, spath);
        auto state = read_state(kv.value(), spath, name, component.id);
        if (state) {
          component.states.push_back(name);
          def.states.push_back(std::move(*state));
        }
      }
    }
    if (const auto* utilities = array(o, path, "utilities")) {
      for (std::size_t i = 0; i < utilities->size(); ++i) {
        const std::string upath = index_path(join_path(path, "utilities"), i);
        const auto& u = (*utilities)[i];
        if (!u.is_string()) {
          add(upath, "must be the path of a JavaScript file in the workspace folder");
          continue;
        }
        read_utilities(std::string(u.get_string()), upath, def, utility_names, state_paths);
      }
    }
    if (const auto* examples = array(o, path, "examples")) {
      read_examples(*examples, join_path(path, "examples"), component.id, def);
    }
    def.components.push_back(std::move(component));
  }

  void read_utilities(const std::string& rel, const std::string& path, Definition& def,
                      std::map<std::string, std::string>& names,
                      const std::map<std::string, std::string>& state_paths) {
    if (!is_clean_relative(rel) || fs::path(rel).extension() != ".js") {
      add(path, "must be a relative path to a .js file inside the workspace folder (no '..')");
      return;
    }
    std::string error;
    auto text = text_of(dir_, rel, error);
    if (!text) {
      add(path, error);
      return;
    }
    if (std::find(def.utility_files.begin(), def.utility_files.end(), rel) !=
        def.utility_files.end()) {
      return;  // listed by two components: loaded once
    }
    for (auto& u : scan_utilities(*text, rel)) {
      if (is_reserved(u.name) || state_paths.contains(u.name)) {
        add(path, "function '" + u.name + "' takes a name a state or a script global uses");
        continue;
      }
      if (auto it = names.find(u.name); it != names.end()) {
        add(path, "function '" + u.name + "' is also defined in " + it->second);
        continue;
      }
      names.emplace(u.name, rel);
      def.utilities.push_back(std::move(u));
    }
    def.utility_files.push_back(rel);
    if (!def.utilities_source.empty() && def.utilities_source.back() != '\n') {
      def.utilities_source += '\n';
    }
    def.utilities_source += *text;
  }

  void read_examples(const json::array& examples, const std::string& path,
                     const std::string& component, Definition& def) {
    for (std::size_t i = 0; i < examples.size(); ++i) {
      const std::string epath = index_path(path, i);
      if (!examples[i].is_object()) {
        add(epath, "an example is an object {title, script}");
        continue;
      }
      const auto& o = examples[i].get_object();
      only(o, epath, {"title", "script"});
      auto title = string(o, epath, "title", true);
      auto script = string(o, epath, "script", true);
      if (title && script) def.examples.push_back({component, *title, *script});
    }
  }

  std::optional<StateDef> read_state(const json::value& v, const std::string& path,
                                     const std::string& name, const std::string& component) {
    if (!v.is_object()) {
      add(path, "a state is an object");
      return std::nullopt;
    }
    const auto& o = v.get_object();
    only(o, path,
         {"visibility", "permission", "description", "schema", "initial", "sideEffects", "source"});
    const std::size_t before = problems_.size();
    StateDef s;
    s.name = name;
    s.component = component;
    s.path = path;
    const auto visibility = string(o, path, "visibility", false).value_or("public");
    if (visibility != "public" && visibility != "private") {
      add(join_path(path, "visibility"), "must be public or private");
    }
    s.is_public = visibility != "private";
    auto permission = string(o, path, "permission", false);
    if (s.is_public) {
      if (!permission) {
        add(join_path(path, "permission"), "is required for a public state: r, w or rw");
      } else if (*permission == "r") {
        s.access = Access::kRead;
      } else if (*permission == "w") {
        s.access = Access::kWrite;
      } else if (*permission == "rw") {
        s.access = Access::kReadWrite;
      } else {
        add(join_path(path, "permission"), "must be r, w or rw");
      }
    } else if (permission) {
      add(join_path(path, "permission"),
          "a private state has no permission (the model never sees it)");
    }
    s.description = string(o, path, "description", false).value_or("");
    if (const auto* schema = o.if_contains("schema")) {
      s.schema_json = *schema;
      s.schema = compile(*schema, join_path(path, "schema"));
    } else {
      add(join_path(path, "schema"), "is required: the JSON Schema every value must match");
    }
    if (const auto* src = object(o, path, "source", false)) {
      const std::string spath = join_path(path, "source");
      bool subscription = false;
      if (auto c = call(*src, spath, true, &subscription)) {
        Source source;
        source.call = std::move(*c);
        source.subscription = subscription;
        source.pointer = string(*src, spath, "path", false).value_or("");
        if (!source.pointer.empty() && source.pointer.front() != '/') {
          add(join_path(spath, "path"), "must be a JSON Pointer (\"/items\") or empty");
        }
        if (const auto* refresh = array(*src, spath, "refresh")) {
          if (subscription) add(join_path(spath, "refresh"), "a subscription refreshes itself");
          source.on_open = false;
          for (const auto& r : *refresh) {
            if (r == "open") {
              source.on_open = true;
            } else if (r == "commit") {
              source.after_commit = true;
            } else {
              add(join_path(spath, "refresh"), "lists open and commit only");
            }
          }
        }
        s.source = std::move(source);
      }
      if (s.writable()) {
        add(join_path(path, "permission"),
            "a state fed by a source is read-only to the model: use r (or make it private)");
      }
    }
    if (const auto* initial = o.if_contains("initial")) {
      s.initial = *initial;
    } else if (!s.source) {
      add(join_path(path, "initial"), "is required (unless a source feeds the state)");
    }
    if (const auto* e = o.if_contains("sideEffects"); e != nullptr && e->is_string()) {
      s.side_effects = std::string(e->get_string());  // a description with nothing to run
    } else if (const auto* effects = object(o, path, "sideEffects", false)) {
      read_side_effects(*effects, join_path(path, "sideEffects"), s);
    }
    if (problems_.size() != before) return std::nullopt;
    if (s.schema && (o.contains("initial") || !s.source)) {
      for (const auto& violation : s.schema->validate(s.initial)) {
        const std::string at = join_path(path, "initial");
        add(violation.field.empty() ? at : join_path(at, violation.field),
            violation.message + " (" + violation.constraint + ")");
      }
    }
    if (problems_.size() != before) return std::nullopt;
    return s;
  }

  void read_side_effects(const json::object& o, const std::string& path, StateDef& s) {
    only(o, path, {"description", "calls"});
    s.side_effects = string(o, path, "description", false).value_or("");
    const auto* calls = array(o, path, "calls");
    if (calls == nullptr) return;
    for (std::size_t i = 0; i < calls->size(); ++i) {
      const std::string cpath = index_path(join_path(path, "calls"), i);
      if (!(*calls)[i].is_object()) {
        add(cpath, "a call is an object {service, endpoint, input, assign, compensate}");
        continue;
      }
      const auto& co = (*calls)[i].get_object();
      json::object bare;
      for (const auto& kv : co) {
        if (kv.key() != "assign" && kv.key() != "compensate") bare[kv.key()] = kv.value();
      }
      auto c = call(bare, cpath, false, nullptr);
      SideEffect effect;
      effect.assign = string(co, cpath, "assign", false);
      if (const auto* comp = object(co, cpath, "compensate", false)) {
        effect.compensate = call(*comp, join_path(cpath, "compensate"), false, nullptr);
      }
      if (c) {
        effect.call = std::move(*c);
        s.effects.push_back(std::move(effect));
      }
    }
    if (s.side_effects.empty() && !s.effects.empty()) {
      add(join_path(path, "description"),
          "is required with calls: it tells the model what a change does");
    }
  }

  void check_references(const Definition& def) {
    for (const auto& s : def.states) {
      for (std::size_t i = 0; i < s.effects.size(); ++i) {
        const auto& e = s.effects[i];
        const std::string cpath = index_path(join_path(s.path, "sideEffects.calls"), i);
        if (e.assign) {
          const auto* target = def.find(*e.assign);
          if (target == nullptr) {
            add(join_path(cpath, "assign"), "'" + *e.assign + "' is not a state of this workspace");
          } else if (target->writable()) {
            add(join_path(cpath, "assign"),
                "'" + *e.assign +
                    "' is writable by the model: a side effect assigns only r or "
                    "private states");
          }
        }
        check_input_refs(e.call.input, def, join_path(cpath, "input"));
      }
    }
  }

  void check_input_refs(const json::value& v, const Definition& def, const std::string& path) {
    if (const auto* o = v.if_object()) {
      if (const auto* ref = o->if_contains("$state")) {
        if (!ref->is_string() || def.find(ref->get_string()) == nullptr) {
          add(path, "$state must name a state of this workspace");
        }
        return;
      }
      for (const auto& kv : *o) check_input_refs(kv.value(), def, join_path(path, kv.key()));
    } else if (const auto* a = v.if_array()) {
      for (std::size_t i = 0; i < a->size(); ++i) {
        check_input_refs((*a)[i], def, index_path(path, i));
      }
    }
  }

  fs::path dir_;
  Problems& problems_;
  std::unique_ptr<schema::Compiler> compiler_;
  json::object types_;
};

}  // namespace

std::vector<Utility> scan_utilities(std::string_view source, const std::string& file) {
  std::vector<Utility> out;
  std::string comment;  // the comment lines right above the current line
  int depth = 0;        // brace depth: only top-level declarations count
  std::size_t pos = 0;
  bool in_block_comment = false;
  while (pos < source.size()) {
    std::size_t end = source.find('\n', pos);
    if (end == std::string_view::npos) end = source.size();
    std::string_view line = source.substr(pos, end - pos);
    pos = end + 1;
    std::string_view t = ascii::trim(line);
    if (in_block_comment) {
      const auto close = t.find("*/");
      std::string_view body = t.substr(0, close);
      while (!body.empty() && (body.front() == '*' || body.front() == ' ')) body.remove_prefix(1);
      if (!body.empty()) comment += (comment.empty() ? "" : " ") + std::string(body);
      if (close != std::string_view::npos) in_block_comment = false;
      continue;
    }
    if (depth == 0 && t.starts_with("/*")) {
      comment.clear();
      std::string_view body = t.substr(t.starts_with("/**") ? 3 : 2);
      const auto close = body.find("*/");
      if (close == std::string_view::npos) {
        in_block_comment = true;
      } else {
        body = body.substr(0, close);
      }
      body = ascii::trim(body);
      if (!body.empty()) comment = std::string(body);
      continue;
    }
    if (depth == 0 && t.starts_with("//")) {
      std::string_view body = ascii::trim(t.substr(2));
      comment += (comment.empty() || body.empty() ? "" : " ") + std::string(body);
      continue;
    }
    if (depth == 0) {
      std::string_view rest = t;
      bool is_async = false;
      if (rest.starts_with("async ")) {
        is_async = true;
        rest = ascii::trim(rest.substr(6));
      }
      if (rest.starts_with("function ") || rest.starts_with("function*")) {
        rest = ascii::trim(rest.substr(8));
        if (!rest.empty() && rest.front() == '*') rest = ascii::trim(rest.substr(1));
        std::size_t n = 0;
        while (n < rest.size() && (ascii::is_alnum(rest[n]) || rest[n] == '_' || rest[n] == '$')) {
          ++n;
        }
        const auto open = rest.find('(', n);
        const auto close = rest.find(')', n);
        if (n > 0 && open != std::string_view::npos && close != std::string_view::npos &&
            open < close) {
          out.push_back({std::string(rest.substr(0, n)),
                         std::string(ascii::trim(rest.substr(open + 1, close - open - 1))), comment,
                         file, is_async});
        }
      }
    }
    // Track braces outside strings and line comments, roughly: enough to tell top level.
    char quote = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quote != 0) {
        if (c == '\\') {
          ++i;
        } else if (c == quote) {
          quote = 0;
        }
        continue;
      }
      if (c == '/' && i + 1 < line.size() && line[i + 1] == '/') break;
      if (c == '"' || c == '\'' || c == '`') {
        quote = c;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}') {
        depth = std::max(0, depth - 1);
      }
    }
    if (!t.empty()) comment.clear();
  }
  return out;
}

std::optional<Definition> parse_definition(const json::value& document, const fs::path& dir,
                                           Problems& problems) {
  Reader reader(dir, problems);
  return reader.read(document);
}

std::optional<Definition> load_definition(const fs::path& dir, Problems& problems) {
  for (const char* name : {"workspace.yaml", "workspace.yml", "workspace.json"}) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(dir / name, ec))) continue;
    std::string error;
    const auto text = text_of(dir, name, error);
    if (!text) {
      problems.push_back({"", error});
      return std::nullopt;
    }
    auto document = json::yaml_to_json(*text);
    if (!document.ok()) {
      problems.push_back({"", std::string(name) + ": " + document.error().message});
      return std::nullopt;
    }
    return parse_definition(document.value(), dir, problems);
  }
  problems.push_back({"", "no workspace.yaml in " + dir.string()});
  return std::nullopt;
}

}  // namespace hearth::workspace
