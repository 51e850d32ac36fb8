#include "a2s/definition/definition.hpp"

#include <re2/re2.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "a2s/definition/jsonpath.hpp"
#include "a2s/template/template.hpp"
#include "a2s/template/variables.hpp"
#include "common/ascii.hpp"

namespace hearth::a2s {
namespace fs = std::filesystem;
namespace {

constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{1} << 20;

bool is_var_name(std::string_view s) {
  if (s.empty() || !(ascii::is_alpha(s[0]) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return ascii::is_alnum(c) || c == '_'; });
}

bool is_domain(std::string_view s) {
  if (s.empty()) return false;
  std::string_view host = s;
  const auto colon = s.rfind(':');
  if (colon != std::string_view::npos) {
    const auto port = s.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return ascii::is_digit(c); }) ||
        std::stoi(std::string(port)) == 0 || std::stoi(std::string(port)) > 65535) {
      return false;
    }
    host = s.substr(0, colon);
  }
  if (host.empty() || host.size() > 253 || host.front() == '.' || host.back() == '.') return false;
  std::size_t label = 0;
  for (const char c : host) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    if (!ascii::is_alnum(c) && c != '-' && c != '_') return false;
    if (++label > 63) return false;
  }
  return true;
}

class Checker {
 public:
  explicit Checker(Problems& problems) : problems_(problems) {}

  void add(const std::string& path, std::string message) {
    problems_.push_back({path, std::move(message)});
  }

  const json::value* member(const json::object& o, std::string_view key, const std::string& base,
                            bool required) {
    const auto* v = o.if_contains(key);
    if ((v == nullptr || v->is_null()) && required) add(join_path(base, key), "required");
    return (v == nullptr || v->is_null()) ? nullptr : v;
  }

  std::string text(const json::object& o, std::string_view key, const std::string& base,
                   bool required, bool non_empty = true) {
    const auto* v = member(o, key, base, required);
    if (v == nullptr) return {};
    if (!v->is_string()) {
      add(join_path(base, key), "must be a string");
      return {};
    }
    if (non_empty && v->get_string().empty()) add(join_path(base, key), "must not be empty");
    return std::string(v->get_string());
  }

  std::optional<double> number(const json::object& o, std::string_view key,
                               const std::string& base) {
    const auto* v = member(o, key, base, false);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number()) {
      add(join_path(base, key), "must be a number");
      return std::nullopt;
    }
    return v->to_number<double>();
  }

  bool boolean(const json::object& o, std::string_view key, const std::string& base,
               bool fallback) {
    const auto* v = member(o, key, base, false);
    if (v == nullptr) return fallback;
    if (!v->is_bool()) {
      add(join_path(base, key), "must be true or false");
      return fallback;
    }
    return v->get_bool();
  }

  void known_keys(const json::object& o, const std::string& base,
                  std::initializer_list<std::string_view> keys) {
    for (const auto& [key, value] : o) {
      if (std::find(keys.begin(), keys.end(), std::string_view(key)) == keys.end()) {
        add(join_path(base, key), "unknown member (a typo?)");
      }
    }
  }

  bool check_pattern(const std::string& pattern, const std::string& path) {
    RE2::Options options;
    options.set_log_errors(false);
    RE2 re(pattern, options);
    if (!re.ok()) {
      add(path, "is not a valid pattern (RE2 syntax): " + re.error());
      return false;
    }
    return true;
  }

  Variables variables(const json::object& parent, std::string_view key, const std::string& base,
                      Storage fallback, bool temp) {
    Variables out;
    const auto* v = member(parent, key, base, false);
    if (v == nullptr) return out;
    const std::string path = join_path(base, key);
    if (!v->is_object()) {
      add(path, "must be a mapping of NAME: {type, description, ...}");
      return out;
    }
    for (const auto& [name, def] : v->get_object()) {
      const std::string vpath = join_path(path, name);
      if (!is_var_name(name)) {
        add(vpath, "a variable name is letters, digits and '_', not starting with a digit");
      }
      if (!def.is_object()) {
        add(vpath, "must be a mapping (type, description, ...)");
        continue;
      }
      const auto& o = def.get_object();
      known_keys(o, vpath,
                 {"type", "description", "storage", "optional", "expiry", "pattern", "format",
                  "min", "max", "default"});
      Variable var;
      var.name = std::string(name);
      const std::string type = text(o, "type", vpath, true);
      static const std::pair<std::string_view, VarType> kTypes[] = {
          {"string", VarType::kString},   {"number", VarType::kNumber},
          {"integer", VarType::kInteger}, {"boolean", VarType::kBoolean},
          {"date", VarType::kDate},       {"object", VarType::kObject},
          {"array", VarType::kArray}};
      bool typed = type.empty();
      for (const auto& [word, t] : kTypes) {
        if (type == word) {
          var.type = t;
          typed = true;
        }
      }
      if (!typed) {
        add(join_path(vpath, "type"),
            "must be one of string, number, integer, boolean, date, object, array");
      }
      var.description = text(o, "description", vpath, true);
      const std::string storage = text(o, "storage", vpath, false);
      var.storage = fallback;
      if (storage == "service") {
        var.storage = Storage::kService;
      } else if (storage == "global") {
        var.storage = Storage::kGlobal;
      } else if (storage == "temporary") {
        var.storage = Storage::kTemporary;
      } else if (!storage.empty()) {
        add(join_path(vpath, "storage"), "must be one of service, global, temporary");
      }
      if (temp && var.storage != Storage::kTemporary) {
        add(join_path(vpath, "storage"),
            "tempVariables are temporary (never stored); declare stored ones in inputVariables");
      }
      var.optional = boolean(o, "optional", vpath, false);
      if (const auto expiry = number(o, "expiry", vpath)) {
        if (*expiry <= 0 || std::floor(*expiry) != *expiry) {
          add(join_path(vpath, "expiry"), "must be a positive whole number of seconds");
        } else {
          var.expiry_seconds = static_cast<std::int64_t>(*expiry);
        }
      }
      const std::string pattern = text(o, "pattern", vpath, false);
      if (!pattern.empty() && check_pattern(pattern, join_path(vpath, "pattern"))) {
        var.pattern = pattern;
      }
      const std::string format = text(o, "format", vpath, false);
      if (!format.empty()) {
        if (!known_format(format)) {
          add(join_path(vpath, "format"),
              "must be one of date, date-time, time, email, uri, url, uuid, ipv4, ipv6, "
              "hostname, airport_code, currency, country, language");
        } else {
          var.format = format;
        }
      }
      var.min = number(o, "min", vpath);
      var.max = number(o, "max", vpath);
      if (var.min && var.max && *var.min > *var.max) {
        add(join_path(vpath, "min"), "must not be greater than max");
      }
      if (const auto* d = o.if_contains("default")) {
        auto checked = check_value(var, *d);
        if (!checked.ok()) {
          add(join_path(vpath, "default"),
              "does not check against the variable: must be " +
                  json::string_member(checked.error().data, "expected"));
        } else {
          var.default_value = std::move(checked).value();
        }
      }
      out.push_back(std::move(var));
    }
    return out;
  }

  ResponseMapping mapping(const json::object& parent, const std::string& base,
                          const Variables& outputs) {
    ResponseMapping out;
    const auto* v = member(parent, "responseMapping", base, false);
    if (v == nullptr) return out;
    const std::string path = join_path(base, "responseMapping");
    if (!v->is_object()) {
      add(path, "must be a mapping of JSONPath: VARIABLE");
      return out;
    }
    for (const auto& [expr, target] : v->get_object()) {
      const std::string mpath = path + "['" + std::string(expr) + "']";
      if (!valid_path(expr)) {
        add(mpath, "is not a JSONPath of the supported subset ($, .name, ['name'], [index])");
      }
      if (!target.is_string()) {
        add(mpath, "must name an output variable");
        continue;
      }
      const std::string name(target.get_string());
      const auto declared = [&](std::string_view n) {
        return std::any_of(outputs.begin(), outputs.end(),
                           [&](const Variable& var) { return var.name == n; });
      };
      const bool expiry = name.size() > 7 && name.substr(name.size() - 7) == "_EXPIRY" &&
                          declared(name.substr(0, name.size() - 7));
      if (!declared(name) && !expiry) {
        add(mpath, "'" + name + "' is not one of the outputVariables (or NAME_EXPIRY for one)");
      }
      out.emplace_back(std::string(expr), name);
    }
    return out;
  }

  /// Checks a request template and that every placeholder has a source.
  void request(const std::string& text, const std::string& path, const std::string& domain,
               const std::set<std::string>& known) {
    auto t = parse_template(text);
    if (!t.ok()) {
      add(path, t.error().message);
      return;
    }
    if (!domain.empty() && !ascii::iequals(t->host, domain)) {
      add(path, "the Host header (" + t->host + ") must be the service's domain (" + domain +
                    "): requests go to that domain only");
    }
    for (const auto& name : t->placeholders) {
      if (known.count(name) == 0) {
        add(path, "${" + name +
                      "} is not declared (in this capability's inputVariables or "
                      "tempVariables, or an authentication's outputVariables)");
      }
    }
  }

 private:
  Problems& problems_;
};

void names_into(const Variables& vars, std::set<std::string>& out) {
  for (const auto& v : vars) out.insert(v.name);
}

/// `version`, kept as text.
void read_version(Checker& c, const json::object& root, Definition& def) {
  if (const auto* version = c.member(root, "version", "", true)) {
    // `version: 1.0` unquoted is a YAML number: its text is the version.
    if (version->is_string()) {
      def.version = std::string(version->get_string());
    } else if (version->is_number()) {
      def.version = json::serialize(*version);
      if (version->is_double()) {
        char buf[32];
        auto [end, ec] = std::to_chars(buf, buf + sizeof buf, version->get_double());
        if (ec == std::errc()) def.version.assign(buf, end);
        if (def.version.find('.') == std::string::npos) def.version += ".0";
      }
    } else {
      c.add("version", "must be a string such as \"1.0\"");
    }
  }
}

/// `checksum`: a SHA-256 seal that must match the document; anything else is no seal (a
/// warning).
void read_checksum(Checker& c, const json::object& root, const json::value& document,
                   Definition& def) {
  def.checksum = c.text(root, "checksum", "", true);
  const bool sha256 =
      def.checksum.size() == 64 && std::all_of(def.checksum.begin(), def.checksum.end(),
                                               [](char ch) { return ascii::is_hex_digit(ch); });
  if (!def.checksum.empty() && !sha256) {
    // The spec's own example writes "3a7bd3e2360a3d5be561819c3df9d6e28d...": not a SHA-256 at all,
    // so not a seal that could have been broken. Loaded as unsealed, and said so.
    def.warnings.push_back({"checksum", "\"" + def.checksum +
                                            "\" is not a SHA-256 (64 hex digits): the definition "
                                            "is not sealed; run hearth registry seal"});
    def.checksum.clear();
  } else if (!def.checksum.empty()) {
    const std::string computed = checksum_of(document);
    if (ascii::lower(def.checksum) != computed) {
      c.add("checksum", "does not match the definition (written " + def.checksum + ", computed " +
                            computed +
                            "): it changed since it was sealed; "
                            "check the change, then run hearth registry seal");
    }
  }
}

/// `security`: {transport: {...}, variables: {...}, rateLimits?, errorResponses?}. The spec's
/// table marks it required but its own example has none: absent, hearth's defaults apply (HTTPS
/// with TLS 1.2 or newer, the vault's scoping, which hold for every definition anyway) and
/// `registry check` warns; present but malformed, it is refused.
void read_security(Checker& c, const json::object& root, Definition& def) {
  const auto* security = c.member(root, "security", "", false);
  if (security == nullptr) {
    def.warnings.push_back({"security",
                            "absent: the defaults apply (HTTPS with TLS 1.2 or newer, "
                            "variables scoped by the vault); write it to say so"});
  } else {
    if (!security->is_object()) {
      c.add("security", "must be a mapping with transport and variables");
    } else {
      const auto& s = security->get_object();
      c.known_keys(s, "security", {"transport", "rateLimits", "variables", "errorResponses"});
      for (const char* key : {"transport", "variables"}) {
        const auto* v = c.member(s, key, "security", true);
        if (v != nullptr && !v->is_object()) c.add(join_path("security", key), "must be a mapping");
      }
      if (const auto* transport = s.if_contains("transport"); transport && transport->is_object()) {
        if (const auto* tls = transport->get_object().if_contains("minTlsVersion")) {
          if (!tls->is_string() || (tls->get_string() != "1.2" && tls->get_string() != "1.3")) {
            c.add("security.transport.minTlsVersion", "must be \"1.2\" or \"1.3\"");
          }
        }
      }
      def.security = *security;
    }
  }
}

/// `rateLimits` (or `security.rateLimits`), after read_security.
void read_rate_limit(Checker& c, const json::object& root, Definition& def) {
  const json::value* rate = c.member(root, "rateLimits", "", false);
  std::string rate_path = "rateLimits";
  if (rate == nullptr && def.security.is_object()) {
    rate = def.security.get_object().if_contains("rateLimits");
    rate_path = "security.rateLimits";
  }
  if (rate != nullptr && !rate->is_null()) {
    if (!rate->is_object()) {
      c.add(rate_path, "must be a mapping {requests, period, burst}");
    } else {
      const auto& r = rate->get_object();
      c.known_keys(r, rate_path,
                   {"requests", "period", "burst", "requestsPerMinute", "requestsPerSecond"});
      RateLimit limit;
      if (auto n = c.number(r, "requests", rate_path)) limit.requests = *n;
      if (auto p = c.number(r, "period", rate_path)) limit.period_seconds = *p;
      if (auto m = c.number(r, "requestsPerMinute", rate_path)) {
        limit.requests = *m;
        limit.period_seconds = 60;
      }
      if (auto s = c.number(r, "requestsPerSecond", rate_path)) {
        limit.requests = *s;
        limit.period_seconds = 1;
      }
      if (auto b = c.number(r, "burst", rate_path)) limit.burst = *b;
      if (limit.requests <= 0) {
        c.add(rate_path, "needs a positive requests (or requestsPerMinute, requestsPerSecond)");
      } else if (limit.period_seconds <= 0) {
        c.add(join_path(rate_path, "period"), "must be a positive number of seconds");
      } else if (limit.burst < 0) {
        c.add(join_path(rate_path, "burst"), "must not be negative");
      } else {
        def.rate_limit = limit;
      }
    }
  }
}

/// `responseSchemas`, each schema compiled; the names declared.
std::set<std::string> read_response_schemas(Checker& c, const json::object& root, Definition& def) {
  std::set<std::string> schema_names;
  if (const auto* schemas = c.member(root, "responseSchemas", "", false)) {
    if (!schemas->is_object()) {
      c.add("responseSchemas", "must be a mapping of NAME: {statusCodes, format, schema}");
    } else {
      for (const auto& [name, s] : schemas->get_object()) {
        const std::string path = join_path("responseSchemas", name);
        schema_names.insert(std::string(name));
        if (!s.is_object()) {
          c.add(path, "must be a mapping {statusCodes, format, schema, required, examples}");
          continue;
        }
        const auto& o = s.get_object();
        c.known_keys(o, path, {"statusCodes", "format", "schema", "required", "examples"});
        if (const auto* codes = c.member(o, "statusCodes", path, true)) {
          bool ok = codes->is_array() && !codes->get_array().empty();
          if (ok) {
            for (const auto& code : codes->get_array()) {
              ok = ok && code.is_int64() && code.get_int64() >= 100 && code.get_int64() <= 599;
            }
          }
          if (!ok) c.add(join_path(path, "statusCodes"), "must be a list of HTTP status codes");
        }
        ResponseSchema compiled;
        compiled.format = c.text(o, "format", path, true);
        if (const auto* codes = o.if_contains("statusCodes"); codes && codes->is_array()) {
          for (const auto& code : codes->get_array()) {
            if (code.is_int64()) {
              compiled.status_codes.push_back(static_cast<int>(code.get_int64()));
            }
          }
        }
        if (const auto* schema = c.member(o, "schema", path, true)) {
          if (!schema->is_object()) {
            c.add(join_path(path, "schema"), "must be a mapping (a JSON Schema)");
          } else {
            // Compiled now, so a broken schema is a load problem, not a surprise per call.
            static const auto compiler = schema::make_draft7_compiler();
            Problems schema_problems;
            compiled.schema = compiler->compile(*schema, json::object(), schema_problems);
            for (auto& p : schema_problems) {
              c.add(join_path(join_path(path, "schema"), p.path), p.message);
            }
          }
        }
        if (const auto* req = c.member(o, "required", path, false)) {
          bool ok = req->is_array();
          if (ok) {
            for (const auto& r : req->get_array()) ok = ok && r.is_string();
          }
          if (!ok) {
            c.add(join_path(path, "required"), "must be a list of field names");
          } else {
            for (const auto& r : req->get_array()) compiled.required.emplace_back(r.get_string());
          }
        }
        def.compiled_schemas[std::string(name)] = std::move(compiled);
      }
      def.response_schemas = *schemas;
    }
  }
  return schema_names;
}

/// `authentications`; the names of the variables they produce.
std::set<std::string> read_authentications(Checker& c, const json::object& root, Definition& def) {
  std::set<std::string> auth_outputs;
  if (const auto* auths = c.member(root, "authentications", "", false)) {
    if (!auths->is_array()) {
      c.add("authentications", "must be a list");
    } else {
      for (std::size_t i = 0; i < auths->get_array().size(); ++i) {
        const auto& a = auths->get_array()[i];
        const std::string path = index_path("authentications", i);
        if (!a.is_object()) {
          c.add(path, "must be a mapping (type, description, inputVariables, request, ...)");
          continue;
        }
        const auto& o = a.get_object();
        c.known_keys(o, path,
                     {"type", "description", "inputVariables", "outputVariables", "request",
                      "responseMapping"});
        Authentication auth;
        auth.type = c.text(o, "type", path, true);
        auth.description = c.text(o, "description", path, true);
        if (!o.contains("inputVariables")) c.add(join_path(path, "inputVariables"), "required");
        auth.input = c.variables(o, "inputVariables", path, Storage::kService, false);
        auth.output = c.variables(o, "outputVariables", path, Storage::kService, false);
        auth.request = c.text(o, "request", path, true);
        auth.response_mapping = c.mapping(o, path, auth.output);
        names_into(auth.output, auth_outputs);
        std::set<std::string> known;
        names_into(auth.input, known);
        if (!auth.request.empty()) {
          c.request(auth.request, join_path(path, "request"), def.domain, known);
        }
        def.authentications.push_back(std::move(auth));
      }
    }
  }
  return auth_outputs;
}

/// `capabilities`: their response schemas among `schema_names`, their requests using only
/// their own variables and those authentications produce (`auth_outputs`).
void read_capabilities(Checker& c, const json::object& root,
                       const std::set<std::string>& schema_names,
                       const std::set<std::string>& auth_outputs, Definition& def) {
  if (const auto* caps = c.member(root, "capabilities", "", true)) {
    if (!caps->is_array() || caps->get_array().empty()) {
      c.add("capabilities", "must be a non-empty list");
    } else {
      std::set<std::string> names;
      for (std::size_t i = 0; i < caps->get_array().size(); ++i) {
        const auto& item = caps->get_array()[i];
        const std::string path = index_path("capabilities", i);
        if (!item.is_object()) {
          c.add(path, "must be a mapping (name, description, request, ...)");
          continue;
        }
        const auto& o = item.get_object();
        c.known_keys(
            o, path,
            {"name", "description", "requiredScopes", "inputVariables", "tempVariables",
             "outputVariables", "request", "responseSchema", "responseMapping", "examples"});
        Capability cap;
        cap.name = c.text(o, "name", path, true);
        if (!cap.name.empty() && !names.insert(cap.name).second) {
          c.add(join_path(path, "name"), "'" + cap.name + "' is already a capability's name");
        }
        cap.description = c.text(o, "description", path, true);
        if (const auto* scopes = c.member(o, "requiredScopes", path, false)) {
          bool ok = scopes->is_array();
          if (ok) {
            for (const auto& s : scopes->get_array()) {
              ok = ok && s.is_string();
              if (s.is_string()) cap.required_scopes.emplace_back(s.get_string());
            }
          }
          if (!ok) c.add(join_path(path, "requiredScopes"), "must be a list of scope names");
        }
        cap.input = c.variables(o, "inputVariables", path, Storage::kService, false);
        cap.temp = c.variables(o, "tempVariables", path, Storage::kTemporary, true);
        cap.output = c.variables(o, "outputVariables", path, Storage::kService, false);
        for (const auto& t : cap.temp) {
          if (std::any_of(cap.input.begin(), cap.input.end(),
                          [&](const Variable& v) { return v.name == t.name; })) {
            c.add(join_path(join_path(path, "tempVariables"), t.name),
                  "is also one of the inputVariables");
          }
        }
        cap.request = c.text(o, "request", path, true);
        cap.response_schema = c.text(o, "responseSchema", path, false);
        if (!cap.response_schema.empty()) {
          std::string ref = cap.response_schema;
          for (const char* prefix : {"#/responseSchemas/", "#/components/schemas/"}) {
            if (ref.rfind(prefix, 0) == 0) ref = ref.substr(std::string_view(prefix).size());
          }
          if (schema_names.count(ref) == 0) {
            c.add(join_path(path, "responseSchema"),
                  "'" + cap.response_schema + "' is not one of the responseSchemas");
          }
        }
        cap.response_mapping = c.mapping(o, path, cap.output);
        if (const auto* ex = c.member(o, "examples", path, false)) {
          if (!ex->is_object()) {
            c.add(join_path(path, "examples"), "must be a mapping of NAME: {request, response}");
          } else {
            cap.examples = *ex;
          }
        }
        std::set<std::string> known = auth_outputs;
        names_into(cap.input, known);
        names_into(cap.temp, known);
        if (!cap.request.empty()) {
          c.request(cap.request, join_path(path, "request"), def.domain, known);
        }
        def.capabilities.push_back(std::move(cap));
      }
    }
  }
}

/// `errorPatterns`.
void read_error_patterns(Checker& c, const json::object& root, Definition& def) {
  if (const auto* patterns = c.member(root, "errorPatterns", "", false)) {
    if (!patterns->is_array()) {
      c.add("errorPatterns", "must be a list");
    } else {
      for (std::size_t i = 0; i < patterns->get_array().size(); ++i) {
        const auto& item = patterns->get_array()[i];
        const std::string path = index_path("errorPatterns", i);
        if (!item.is_object()) {
          c.add(path, "must be a mapping (statusCode, pattern, resolution, ...)");
          continue;
        }
        const auto& o = item.get_object();
        c.known_keys(o, path, {"statusCode", "pattern", "resolution", "retry", "retryAfter"});
        ErrorPattern p;
        if (const auto* code = c.member(o, "statusCode", path, true)) {
          if (!code->is_int64() || code->get_int64() < 100 || code->get_int64() > 599) {
            c.add(join_path(path, "statusCode"), "must be an HTTP status code (100-599)");
          } else {
            p.status_code = static_cast<int>(code->get_int64());
          }
        }
        p.pattern = c.text(o, "pattern", path, true);
        if (!p.pattern.empty()) c.check_pattern(p.pattern, join_path(path, "pattern"));
        p.resolution = c.text(o, "resolution", path, false);
        p.retry = c.boolean(o, "retry", path, false);
        if (const auto after = c.number(o, "retryAfter", path)) {
          if (*after < 0) {
            c.add(join_path(path, "retryAfter"), "must not be negative");
          } else {
            p.retry_after_seconds = *after;
          }
        }
        def.error_patterns.push_back(std::move(p));
      }
    }
  }
}

/// The spec's "Service Definition Extensions" block: variables.{required,optional}.{service,
/// global,temporary}: [{name, description, ...}]. Read for its shape only.
void check_variables_block(Checker& c, const json::object& root) {
  if (const auto* vars = c.member(root, "variables", "", false)) {
    if (!vars->is_object()) {
      c.add("variables", "must be a mapping {required, optional}");
    } else {
      c.known_keys(vars->get_object(), "variables", {"required", "optional"});
      for (const auto& [group, scopes] : vars->get_object()) {
        const std::string gpath = join_path("variables", group);
        if (!scopes.is_object()) {
          c.add(gpath, "must be a mapping {service, global, temporary}");
          continue;
        }
        c.known_keys(scopes.get_object(), gpath, {"service", "global", "temporary"});
        for (const auto& [scope, list] : scopes.get_object()) {
          const std::string spath = join_path(gpath, scope);
          if (!list.is_array()) {
            c.add(spath, "must be a list of {name, description}");
            continue;
          }
          for (std::size_t i = 0; i < list.get_array().size(); ++i) {
            const auto& e = list.get_array()[i];
            if (!e.is_object() || !e.get_object().contains("name")) {
              c.add(index_path(spath, i), "must be a mapping with a name");
            }
          }
        }
      }
    }
  }
}
}  // namespace

std::optional<Definition> parse_definition(const json::value& document, Problems& problems) {
  const std::size_t before = problems.size();
  Checker c(problems);
  if (!document.is_object()) {
    c.add("", "a service definition is a mapping (serviceName, domain, capabilities, ...)");
    return std::nullopt;
  }
  const auto& root = document.get_object();
  c.known_keys(
      root, "",
      {"serviceName", "serviceDescription", "domain", "version", "checksum", "authentications",
       "capabilities", "errorPatterns", "responseSchemas", "rateLimits", "security", "variables"});
  Definition def;
  def.document = document;
  def.service_name = c.text(root, "serviceName", "", true);
  def.service_description = c.text(root, "serviceDescription", "", true);
  def.domain = ascii::lower(c.text(root, "domain", "", true));
  if (!def.domain.empty() && !is_domain(def.domain)) {
    c.add("domain", "must be a host name (optionally with :port), not a URL");
  }
  read_version(c, root, def);
  read_checksum(c, root, document, def);
  read_security(c, root, def);
  read_rate_limit(c, root, def);
  const std::set<std::string> schema_names = read_response_schemas(c, root, def);
  const std::set<std::string> auth_outputs = read_authentications(c, root, def);
  read_capabilities(c, root, schema_names, auth_outputs, def);
  read_error_patterns(c, root, def);
  check_variables_block(c, root);
  if (problems.size() != before) return std::nullopt;
  return def;
}

Result<std::shared_ptr<const Definition>> load_file(const fs::path& file, Problems& problems) {
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  if (ec) {
    problems.push_back({"", "cannot be read: " + ec.message()});
    return Error::make(ErrorCode::kInvalidParams, file.string() + ": cannot be read");
  }
  if (size > kMaxFileBytes) {
    problems.push_back({"", "is larger than 1 MiB"});
    return Error::make(ErrorCode::kInvalidParams, file.string() + ": larger than 1 MiB");
  }
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) {
    problems.push_back({"", "cannot be read"});
    return Error::make(ErrorCode::kInvalidParams, file.string() + ": cannot be read");
  }
  auto document = yaml_to_json(text.str());
  if (!document.ok()) {
    problems.push_back({"", document.error().message});
    return std::move(document).error();
  }
  auto def = parse_definition(document.value(), problems);
  if (!def) {
    return Error::make(ErrorCode::kInvalidParams,
                       file.string() + ": " + std::to_string(problems.size()) + " problem(s)");
  }
  def->source = file.string();
  return std::shared_ptr<const Definition>(std::make_shared<Definition>(std::move(*def)));
}

LoadResult load_directory(const fs::path& dir) {
  LoadResult out;
  std::vector<fs::path> files;
  std::error_code ec;
  const auto root = fs::weakly_canonical(dir, ec);
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto ext = it->path().extension().string();
    if (ext != ".yaml" && ext != ".yml" && ext != ".json") continue;
    std::error_code sec;
    if (!it->is_regular_file(sec)) continue;
    // A link that leads out of the registry folder is not loaded.
    const auto real = fs::weakly_canonical(it->path(), sec);
    const auto rel = real.lexically_relative(root);
    if (sec || rel.empty() || *rel.begin() == "..") {
      out.failures.push_back({it->path(), {{"", "leads out of the registry folder: skipped"}}});
      continue;
    }
    files.push_back(it->path());
  }
  if (ec) out.failures.push_back({dir, {{"", "cannot be read: " + ec.message()}}});
  std::sort(files.begin(), files.end());
  std::set<std::string> names;
  for (const auto& file : files) {
    Problems problems;
    auto def = load_file(file, problems);
    if (!def.ok()) {
      out.failures.push_back({file, std::move(problems)});
      continue;
    }
    if (!names.insert(def.value()->service_name).second) {
      out.failures.push_back(
          {file, {{"serviceName", "'" + def.value()->service_name + "' is defined twice"}}});
      continue;
    }
    out.definitions.push_back(std::move(def).value());
  }
  return out;
}

}  // namespace hearth::a2s
