#include "a2s/openapi/openapi.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "a2s/definition/definition.hpp"
#include "a2s/template/variables.hpp"
#include "common/ascii.hpp"
#include "common/rfc9110.hpp"
#include "common/strcat.hpp"
#include "httpclient/url.hpp"

namespace hearth::a2s {
namespace {

constexpr std::string_view kMethods[] = {"get", "post", "put", "patch", "delete", "head"};

Error invalid(const std::string& message) {
  return Error::make(ErrorCode::kInvalidParams, "openapi: " + message);
}

const json::object* object_at(const json::value& v, std::string_view key) {
  const auto* m = json::member(v, key);
  return m != nullptr && m->is_object() ? &m->get_object() : nullptr;
}

std::string string_at(const json::value& v, std::string_view key) {
  const auto* m = json::member(v, key);
  return m != nullptr && m->is_string() ? std::string(m->get_string()) : std::string();
}

/// UPPER_SNAKE_CASE of a parameter or property name ("petId" -> "PET_ID", "x-rate" -> "X_RATE").
std::string variable_name(std::string_view name) {
  std::string out;
  char prev = 0;
  for (const char c : name) {
    if (ascii::is_alnum(c)) {
      if (ascii::is_upper(c) && prev != 0 && (ascii::is_lower(prev) || ascii::is_digit(prev))) {
        out += '_';
      }
      out += ascii::upper(c);
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
    prev = c;
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  if (out.empty() || ascii::is_digit(out[0])) out = "V_" + out;
  return out;
}

/// A serviceName from a title: its words joined in CamelCase ("Swagger Petstore" ->
/// "SwaggerPetstore").
std::string service_name(std::string_view title) {
  std::string out;
  bool upper = true;
  for (const char c : title) {
    if (ascii::is_alnum(c)) {
      out += upper ? ascii::upper(c) : c;
      upper = false;
    } else {
      upper = true;
    }
  }
  return out.empty() ? "ImportedService" : out;
}

struct Importer {
  const json::value& doc;
  std::vector<std::string>& warnings;

  /// Follows a local `$ref` ("#/components/..."), at most 32 times (cycles end there).
  const json::value* resolve(const json::value& v, int depth = 0) const {
    const json::value* at = &v;
    while (at->is_object() && at->get_object().contains("$ref")) {
      if (++depth > 32) return nullptr;
      const auto& ref = at->get_object().at("$ref");
      if (!ref.is_string()) return nullptr;
      std::string_view path = ref.get_string();
      if (path.substr(0, 2) != "#/") return nullptr;  // other documents: not followed
      path.remove_prefix(2);
      const json::value* cur = &doc;
      while (!path.empty()) {
        const auto slash = path.find('/');
        std::string key(path.substr(0, slash));
        // JSON Pointer escapes.
        for (std::size_t i = 0; (i = key.find("~1", i)) != std::string::npos;) {
          key.replace(i, 2, "/");
        }
        for (std::size_t i = 0; (i = key.find("~0", i)) != std::string::npos;) {
          key.replace(i, 2, "~");
        }
        cur = json::member(*cur, key);
        if (cur == nullptr) return nullptr;
        path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
      }
      at = cur;
    }
    return at;
  }

  /// A schema with the document's `$ref`s replaced by what they name (an A2S definition stands
  /// alone); a reference deeper than 8 (a recursive type) becomes {}, any value.
  json::value inline_refs(const json::value& v, int depth) const {
    if (v.is_object()) {
      if (v.get_object().contains("$ref")) {
        const json::value* target = depth < 8 ? resolve(v) : nullptr;
        return target != nullptr ? inline_refs(*target, depth + 1) : json::value(json::object());
      }
      json::object out;
      for (const auto& [key, item] : v.get_object()) out[key] = inline_refs(item, depth);
      return out;
    }
    if (v.is_array()) {
      json::array out;
      for (const auto& item : v.get_array()) out.push_back(inline_refs(item, depth));
      return out;
    }
    return v;
  }

  /// A variable definition from a parameter's (or property's) schema.
  json::object variable(const json::value& schema_in, const std::string& description,
                        bool required) const {
    json::object v;
    const json::value* schema = resolve(schema_in);
    std::string type = "string";
    if (schema != nullptr && schema->is_object()) {
      const auto& s = schema->get_object();
      std::string t;
      if (const auto* ty = s.if_contains("type")) {
        if (ty->is_string()) t = std::string(ty->get_string());
        // 3.1: ["string", "null"]
        if (ty->is_array()) {
          for (const auto& x : ty->get_array()) {
            if (x.is_string() && x.get_string() != "null") t = std::string(x.get_string());
          }
        }
      }
      const std::string format = string_at(*schema, "format");
      if (t == "integer" || t == "number" || t == "boolean" || t == "object" || t == "array") {
        type = t;
      } else if (format == "date") {
        type = "date";
      }
      if (t == "string" && !format.empty() && format != "date" && known_format(format)) {
        v["format"] = format;
      }
      if (const auto* p = s.if_contains("pattern"); p != nullptr && p->is_string()) {
        v["pattern"] = *p;
      }
      if (const auto* e = s.if_contains("enum"); e != nullptr && e->is_array() && t == "string") {
        // One of the listed values: an anchored alternation of the values, each escaped.
        std::string alt;
        bool ok = true;
        for (const auto& item : e->get_array()) {
          if (!item.is_string()) {
            ok = false;
            break;
          }
          std::string escaped;
          for (const char c : std::string_view(item.get_string())) {
            if (!ascii::is_alnum(c) && c != '_' && c != '-' && c != ' ') escaped += '\\';
            escaped += c;
          }
          alt += (alt.empty() ? "" : "|") + escaped;
        }
        if (ok && !alt.empty()) v["pattern"] = "(" + alt + ")";
      }
      for (const auto& [from, to] :
           {std::pair<const char*, const char*>{"minimum", "min"}, {"maximum", "max"}}) {
        if (const auto* n = s.if_contains(from); n != nullptr && n->is_number()) v[to] = *n;
      }
      if (t == "string") {
        if (const auto* n = s.if_contains("minLength"); n != nullptr && n->is_number()) {
          v["min"] = *n;
        }
        if (const auto* n = s.if_contains("maxLength"); n != nullptr && n->is_number()) {
          v["max"] = *n;
        }
      }
      if (const auto* d = s.if_contains("default"); d != nullptr && !d->is_null()) {
        v["default"] = *d;
      }
    }
    v["type"] = type;
    std::string desc = description;
    if (desc.empty() && schema != nullptr) desc = string_at(*schema, "description");
    v["description"] =
        desc.empty() ? std::string("(no description in the OpenAPI document)") : desc;
    if (!required) v["optional"] = true;
    // A default must check against the variable, or the definition would be refused.
    if (v.contains("default")) {
      json::object probe = v;
      Variable var;
      var.name = "X";
      var.type = type == "integer"   ? VarType::kInteger
                 : type == "number"  ? VarType::kNumber
                 : type == "boolean" ? VarType::kBoolean
                 : type == "object"  ? VarType::kObject
                 : type == "array"   ? VarType::kArray
                 : type == "date"    ? VarType::kDate
                                     : VarType::kString;
      if (!check_value(var, v.at("default")).ok()) v.erase("default");
    }
    // type and description first, as people write them.
    json::object ordered;
    ordered["type"] = v.at("type");
    ordered["description"] = v.at("description");
    for (const auto& [key, value] : v) {
      if (key != "type" && key != "description") ordered[key] = value;
    }
    return ordered;
  }
};

/// The servers[] URL to use, its variables at their defaults: `wanted`, else the first.
Result<std::string> pick_server(const json::value& doc, const std::string& wanted) {
  std::string server;
  if (const auto* servers = json::member(doc, "servers");
      servers != nullptr && servers->is_array()) {
    for (const auto& s : servers->get_array()) {
      std::string url = string_at(s, "url");
      if (const auto* vars = object_at(s, "variables")) {
        for (const auto& [name, var] : *vars) {
          const std::string def = string_at(var, "default");
          const std::string token = "{" + std::string(name) + "}";
          for (std::size_t i = 0; (i = url.find(token, i)) != std::string::npos;) {
            url.replace(i, token.size(), def);
          }
        }
      }
      if (wanted.empty() ? server.empty() : url == wanted) server = url;
    }
  }
  if (server.empty()) {
    return invalid(wanted.empty()
                       ? "no servers[] entry with an absolute URL: give one with --server"
                       : "no servers[] entry is " + wanted);
  }
  return server;
}

/// The definition's service fields (name, description, domain, version) from `info`.
json::object service_fields(const json::value& doc, const ImportOptions& options,
                            const std::string& domain) {
  json::object def;
  const auto* info = object_at(doc, "info");
  const json::value info_value = info != nullptr ? json::value(*info) : json::value(nullptr);
  def["serviceName"] = options.service_name.empty() ? service_name(string_at(info_value, "title"))
                                                    : options.service_name;
  std::string description = string_at(info_value, "description");
  if (description.empty()) description = string_at(info_value, "summary");
  if (description.empty()) description = string_at(info_value, "title");
  def["serviceDescription"] =
      description.empty() ? std::string("Imported from OpenAPI") : description;
  def["domain"] = domain;
  std::string info_version = string_at(info_value, "version");
  def["version"] = info_version.empty() ? std::string("1.0") : info_version;
  def["checksum"] = "";
  return def;
}

/// What a security scheme adds to the operations that use it.
struct Scheme {
  std::vector<std::pair<std::string, std::string>> headers;  ///< name, value template
  std::vector<std::pair<std::string, std::string>> query;
  json::object variables;  ///< inputVariables it adds (service storage)
  bool supported = false;
};

json::object service_variable(const std::string& description) {
  return json::object{{"type", "string"}, {"description", description}, {"storage", "service"}};
}

/// The A2S authentication of an OAuth2 client-credentials flow `cc` of scheme `name`. Its token
/// request goes to the service's domain (A2S keeps one per service), said in a warning when the
/// token URL is elsewhere.
json::object client_credentials(const Importer& im, std::string_view name, const json::object& cc,
                                const std::string& domain) {
  const std::string token_url = string_at(json::value(cc), "tokenUrl");
  auto tu = httpclient::parse_url(token_url);
  std::string target = "/oauth/token";
  if (tu.ok()) {
    target = tu->target;
    if (tu->host_header() != domain) {
      im.warnings.push_back(strcat("security scheme ", name, ": the token URL ", token_url,
                                   " is on another host than ", domain,
                                   "; A2S keeps one domain per service, so the token request "
                                   "goes to ",
                                   domain, target, " (edit it if the API serves it elsewhere)"));
    }
  } else if (!token_url.empty() && token_url.front() == '/') {
    target = token_url;
  }
  json::object auth;
  auth["type"] = "oauth2";
  auth["description"] = "OAuth2 client credentials (" + std::string(name) + ")";
  auth["inputVariables"] = json::object{{"CLIENT_ID", service_variable("OAuth client ID")},
                                        {"CLIENT_SECRET", service_variable("OAuth client secret")}};
  auth["outputVariables"] =
      json::object{{"AUTH_TOKEN", json::object{{"type", "string"},
                                               {"description", "Bearer token for API access"},
                                               {"storage", "service"},
                                               {"expiry", 3600}}}};
  auth["request"] = strcat("POST ", target, " HTTP/1.1\nHost: ", domain,
                           "\nContent-Type: application/x-www-form-urlencoded\n\n"
                           "grant_type=client_credentials&client_id=${CLIENT_ID}"
                           "&client_secret=${CLIENT_SECRET}\n");
  auth["responseMapping"] =
      json::object{{"$.access_token", "AUTH_TOKEN"}, {"$.expires_in", "AUTH_TOKEN_EXPIRY"}};
  return auth;
}

/// One security scheme: bearer and basic HTTP, API keys (header, query, cookie) and OAuth2
/// client credentials are supported; the first OAuth2 one becomes `authentications[0]`.
Scheme read_scheme(const Importer& im, std::string_view name, const json::value& s,
                   const std::string& domain, json::array& authentications) {
  const std::string type = string_at(s, "type");
  const std::string prefix = variable_name(name);
  Scheme scheme;
  if (type == "http" && ascii::lower(string_at(s, "scheme")) == "bearer") {
    scheme.headers.emplace_back("Authorization", "Bearer ${" + prefix + "_TOKEN}");
    scheme.variables[prefix + "_TOKEN"] =
        service_variable("Bearer token (" + std::string(name) + ")");
    scheme.supported = true;
  } else if (type == "http" && ascii::lower(string_at(s, "scheme")) == "basic") {
    scheme.headers.emplace_back("Authorization", "Basic ${" + prefix + "_CREDENTIALS}");
    scheme.variables[prefix + "_CREDENTIALS"] = service_variable(
        "HTTP Basic credentials: base64 of user:password (" + std::string(name) + ")");
    scheme.supported = true;
  } else if (type == "apiKey") {
    const std::string in = string_at(s, "in");
    const std::string param = string_at(s, "name");
    const std::string var = prefix + "_KEY";
    scheme.variables[var] = service_variable("API key (" + std::string(name) + ")");
    if (in == "header" && rfc9110::is_token(param)) {
      scheme.headers.emplace_back(param, "${" + var + "}");
      scheme.supported = true;
    } else if (in == "query" && !param.empty()) {
      scheme.query.emplace_back(param, "${" + var + "}");
      scheme.supported = true;
    } else if (in == "cookie" && !param.empty()) {
      scheme.headers.emplace_back("Cookie", strcat(param, "=${", var, "}"));
      scheme.supported = true;
    }
  } else if (type == "oauth2") {
    const auto* flows = object_at(s, "flows");
    const json::object* cc = nullptr;
    if (flows != nullptr) {
      if (const auto* f = flows->if_contains("clientCredentials"); f && f->is_object()) {
        cc = &f->get_object();
      }
    }
    if (cc != nullptr) {
      json::object auth = client_credentials(im, name, *cc, domain);
      if (authentications.empty()) authentications.push_back(std::move(auth));
      scheme.headers.emplace_back("Authorization", "Bearer ${AUTH_TOKEN}");
      scheme.variables["AUTH_TOKEN"] =
          json::object{{"type", "string"}, {"description", "Bearer token"}, {"storage", "service"}};
      scheme.supported = true;
    } else {
      im.warnings.push_back("security scheme " + std::string(name) +
                            ": only the OAuth2 client-credentials flow is imported");
    }
  } else {
    im.warnings.push_back("security scheme " + std::string(name) + " (" + type +
                          ") is not imported");
  }
  return scheme;
}

/// Every scheme of components.securitySchemes, by name: each becomes the variables (and the
/// header or query lines) its operations send.
std::map<std::string, Scheme> read_schemes(const Importer& im, const std::string& domain,
                                           json::array& authentications) {
  std::map<std::string, Scheme> schemes;
  const auto* comps = object_at(im.doc, "components");
  if (comps == nullptr) return schemes;
  const auto* ss = comps->if_contains("securitySchemes");
  if (ss == nullptr || !ss->is_object()) return schemes;
  for (const auto& [name, raw] : ss->get_object()) {
    const json::value* s = im.resolve(raw);
    if (s == nullptr) continue;
    schemes[std::string(name)] = read_scheme(im, name, *s, domain, authentications);
  }
  return schemes;
}

/// The scheme an operation uses under `security` (its own, else the document's): the first
/// alternative that hearth supports, its scopes added to `scopes`. Null for none, or for `{}`
/// (no authentication needed).
const Scheme* pick_scheme(const std::map<std::string, Scheme>& schemes, const json::value* security,
                          json::array& scopes) {
  if (security == nullptr || !security->is_array()) return nullptr;
  for (const auto& alt : security->get_array()) {
    if (!alt.is_object()) continue;
    if (alt.get_object().empty()) return nullptr;
    for (const auto& [name, sc] : alt.get_object()) {
      auto it = schemes.find(std::string(name));
      if (it == schemes.end() || !it->second.supported) continue;
      if (sc.is_array()) {
        for (const auto& x : sc.get_array()) scopes.push_back(x);
      }
      return &it->second;
    }
  }
  return nullptr;
}

/// One operation on its way to a capability: its variables, each named once, and the parts of
/// its request template.
struct OperationImport {
  OperationImport(const Importer& importer, const std::string& capability, std::string base)
      : im(importer), name(capability), target(std::move(base)) {}

  const Importer& im;
  const std::string& name;                  ///< the capability's
  json::object temp;                        ///< tempVariables
  std::map<std::string, std::string> used;  ///< variable -> parameter
  std::string target;
  std::string query;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string content_type;

  /// The variable of parameter (or property) `param`: renamed, with a warning, when another
  /// one already makes the same name.
  std::string name_for(const std::string& param) {
    std::string v = variable_name(param);
    while (used.count(v) != 0 && used[v] != param) {
      im.warnings.push_back(
          strcat(name, ": parameters ", used[v], " and ", param, " both make ", v, ": renamed"));
      v += "_2";
    }
    used[v] = param;
    return v;
  }

  /// Header and query parameters into the request, path ones into `path_vars` (name ->
  /// variable); every one a temporary variable. Cookie parameters and the headers hearth sets
  /// itself are left out.
  void read_parameters(const std::vector<const json::value*>& params,
                       std::map<std::string, std::string>& path_vars) {
    for (const auto* p : params) {
      const std::string pname = string_at(*p, "name");
      const std::string in = string_at(*p, "in");
      if (pname.empty()) continue;
      const auto* req = json::member(*p, "required");
      const bool required = in == "path" || (req != nullptr && req->is_bool() && req->get_bool());
      const json::value* schema = json::member(*p, "schema");
      const json::value none;
      const std::string var = name_for(pname);
      if (in == "header") {
        const std::string lower = ascii::lower(pname);
        if (lower == "authorization" || lower == "host" || lower == "content-type" ||
            lower == "content-length" || lower == "accept" || !rfc9110::is_token(pname)) {
          continue;
        }
        headers.emplace_back(pname, "${" + var + "}");
      } else if (in == "query") {
        query +=
            (query.empty() ? "" : "&") + httpclient::encode_component(pname) + "=${" + var + "}";
      } else if (in == "path") {
        path_vars[pname] = var;
      } else {
        continue;  // cookie parameters
      }
      temp[var] =
          im.variable(schema != nullptr ? *schema : none, string_at(*p, "description"), required);
    }
  }

  /// Appends `path` to the target with its {param} placeholders as ${VARIABLE}s (an undeclared
  /// one gets a string variable). False when a placeholder is not closed.
  bool add_path(std::string_view path, std::map<std::string, std::string>& path_vars) {
    std::string_view rest = path;
    while (!rest.empty()) {
      const auto open = rest.find('{');
      if (open == std::string_view::npos) {
        target += rest;
        break;
      }
      target += rest.substr(0, open);
      const auto close = rest.find('}', open);
      if (close == std::string_view::npos) return false;
      const std::string pname(rest.substr(open + 1, close - open - 1));
      auto it = path_vars.find(pname);
      if (it == path_vars.end()) {
        const std::string var = name_for(pname);
        temp[var] = json::object{{"type", "string"}, {"description", "Path parameter " + pname}};
        it = path_vars.emplace(pname, var).first;
      }
      target += "${" + it->second + "}";
      rest = rest.substr(close + 1);
    }
    return true;
  }

  /// The request body: JSON or a form, a variable per property of an object schema, else one
  /// variable for the whole body. False (with a warning) for any other media type.
  bool read_body(const json::value& raw_body) {
    const json::value* rb = im.resolve(raw_body);
    const auto* content = rb != nullptr ? object_at(*rb, "content") : nullptr;
    const auto* req = rb != nullptr ? json::member(*rb, "required") : nullptr;
    const bool body_required = req != nullptr && req->is_bool() && req->get_bool();
    const json::value* media = nullptr;
    if (content != nullptr) {
      for (const char* type : {"application/json", "application/x-www-form-urlencoded"}) {
        if (media == nullptr && content->contains(type)) {
          media = &content->at(type);
          content_type = type;
        }
      }
    }
    if (media == nullptr) {
      im.warnings.push_back(name + ": its request body is neither JSON nor a form: left out");
      return false;
    }
    const json::value* written = json::member(*media, "schema");
    const json::value* schema = written != nullptr ? im.resolve(*written) : nullptr;
    const json::object* props = schema != nullptr ? object_at(*schema, "properties") : nullptr;
    std::set<std::string> required;
    if (schema != nullptr) {
      if (const auto* r = json::member(*schema, "required"); r != nullptr && r->is_array()) {
        for (const auto& x : r->get_array()) {
          if (x.is_string()) required.emplace(x.get_string());
        }
      }
    }
    if (props == nullptr) {
      // A body that is not an object of properties: one variable holds it whole.
      const std::string var = name_for("body");
      temp[var] = im.variable(schema != nullptr ? *schema : json::value(), "The request body",
                              body_required);
      body = content_type == "application/json" ? "${" + var + "}" : "body=${" + var + "}";
      return true;
    }
    std::string json_body;
    std::string form;
    for (const auto& [prop, ps] : *props) {
      const std::string var = name_for(prop);
      auto v = im.variable(ps, "", body_required && required.count(std::string(prop)) != 0);
      const bool is_string = v.at("type") == "string" || v.at("type") == "date";
      temp[var] = std::move(v);
      json_body += (json_body.empty() ? "" : ", ") + json::serialize(json::string(prop)) + ": " +
                   (is_string ? "\"${" + var + "}\"" : "${" + var + "}");
      form += (form.empty() ? "" : "&") + httpclient::encode_component(prop) + "=${" + var + "}";
    }
    body = content_type == "application/json" ? "{" + json_body + "}" : form;
    return true;
  }

  /// The raw HTTP request template of `method` to `domain`.
  std::string request(const std::string& method, const std::string& domain) const {
    std::string out = strcat(method, " ", target, query.empty() ? "" : "?", query,
                             " HTTP/1.1\nHost: ", domain, "\n");
    if (!content_type.empty() && !body.empty()) out += "Content-Type: " + content_type + "\n";
    for (const auto& [k, v] : headers) out += strcat(k, ": ", v, "\n");
    if (!body.empty()) out += "\n" + body + "\n";
    return out;
  }
};

/// A whole document on its way to a definition: what every operation shares.
struct DocumentImport {
  DocumentImport(const Importer& importer, std::string host, std::string path)
      : im(importer), domain(std::move(host)), base(std::move(path)) {}

  const Importer& im;
  std::string domain;
  std::string base;  ///< the server's path, the start of every request target
  std::map<std::string, Scheme> schemes;
  const json::value* global_security = nullptr;
  std::set<std::string> names;  ///< capability names taken
  json::object response_schemas;

  /// The capability of operation `op` (`method` on `path`), or nothing when it cannot be
  /// imported (said in a warning).
  std::optional<json::object> capability(std::string_view path, const json::value* shared_params,
                                         std::string_view method, const json::value& op) {
    const std::string upper = ascii::upper(method);
    std::string name = string_at(op, "operationId");
    if (name.empty()) name = upper + " " + std::string(path);
    for (int n = 2; !names.insert(name).second; ++n) {
      im.warnings.push_back("operation " + name + " is named twice: renamed");
      name += " " + std::to_string(n);
    }
    std::string desc = string_at(op, "summary");
    const std::string long_desc = string_at(op, "description");
    if (!long_desc.empty()) desc += (desc.empty() ? "" : ". ") + long_desc;
    if (desc.empty()) desc = upper + " " + std::string(path);

    OperationImport o(im, name, base);
    std::vector<const json::value*> params;
    for (const auto* list : {shared_params, json::member(op, "parameters")}) {
      if (list == nullptr || !list->is_array()) continue;
      for (const auto& p : list->get_array()) {
        if (const auto* r = im.resolve(p)) params.push_back(r);
      }
    }
    std::map<std::string, std::string> path_vars;  // {param} -> ${PARAM}
    o.read_parameters(params, path_vars);
    bool skip = !o.add_path(path, path_vars);
    if (o.target.empty()) o.target = "/";
    if (const auto* raw_body = json::member(op, "requestBody")) {
      skip = !o.read_body(*raw_body) || skip;
    }
    if (skip) {
      names.erase(name);
      return std::nullopt;
    }
    json::array scopes;
    json::object inputs;
    const json::value* op_security = json::member(op, "security");
    const Scheme* scheme =
        pick_scheme(schemes, op_security != nullptr ? op_security : global_security, scopes);
    if (scheme != nullptr) {
      for (const auto& [k, v] : scheme->headers) o.headers.emplace_back(k, v);
      for (const auto& [k, v] : scheme->query) {
        o.query += (o.query.empty() ? "" : "&") + httpclient::encode_component(k) + "=" + v;
      }
      for (const auto& [k, v] : scheme->variables) inputs[k] = v;
    }
    json::object cap;
    cap["name"] = name;
    cap["description"] = desc;
    if (!scopes.empty()) cap["requiredScopes"] = scopes;
    if (!inputs.empty()) cap["inputVariables"] = std::move(inputs);
    if (!o.temp.empty()) cap["tempVariables"] = std::move(o.temp);
    cap["request"] = o.request(upper, domain);
    add_response_schema(op, name, cap);
    return cap;
  }

  /// The first 2xx JSON response of `op`: a response schema (and its example) of `cap`.
  void add_response_schema(const json::value& op, const std::string& name, json::object& cap) {
    const auto* responses = object_at(op, "responses");
    if (responses == nullptr) return;
    for (const auto& [code, raw_resp] : *responses) {
      if (code.size() != 3 || code[0] != '2') continue;
      const json::value* resp = im.resolve(raw_resp);
      const auto* content = resp != nullptr ? object_at(*resp, "content") : nullptr;
      const json::value* media =
          content != nullptr ? content->if_contains("application/json") : nullptr;
      if (media == nullptr) continue;
      const json::value* schema = json::member(*media, "schema");
      const json::value* resolved = schema != nullptr ? im.resolve(*schema) : nullptr;
      if (resolved == nullptr || !resolved->is_object()) continue;
      const std::string key = variable_name(name) + "_RESPONSE";
      json::object entry{{"statusCodes", json::array{std::atoi(std::string(code).c_str())}},
                         {"format", "application/json"},
                         {"schema", im.inline_refs(*resolved, 0)}};
      if (const auto* ex = json::member(*media, "example")) {
        entry["examples"] = json::object{{"default", *ex}};
        cap["examples"] = json::object{{"success", json::object{{"response", *ex}}}};
      }
      response_schemas[key] = std::move(entry);
      cap["responseSchema"] = "#/responseSchemas/" + key;
      return;
    }
  }
};

}  // namespace

Result<ImportResult> import_openapi(const json::value& doc, const ImportOptions& options) {
  if (!doc.is_object()) return invalid("the document is not a mapping");
  if (json::member(doc, "swagger") != nullptr) {
    return invalid(
        "this is Swagger 2.0; convert it to OpenAPI 3 first (e.g. with swagger2openapi)");
  }
  const std::string version = string_at(doc, "openapi");
  if (version.rfind("3.", 0) != 0) return invalid("not an OpenAPI 3 document (no openapi: 3.x)");
  ImportResult result;
  const Importer im{doc, result.warnings};

  // The server: its host is the domain, its path the base of every request.
  HEARTH_ASSIGN_OR_RETURN(const std::string server, pick_server(doc, options.server_url));
  auto url = httpclient::parse_url(server);
  if (!url.ok()) return invalid("server " + server + ": " + url.error().message);
  if (!url->tls) {
    result.warnings.push_back("server " + server +
                              " is plain http: hearth calls it only as a local test domain "
                              "(--local-domain)");
  }
  DocumentImport d(im, url->host_header(), url->target);
  if (const auto q = d.base.find('?'); q != std::string::npos) d.base = d.base.substr(0, q);
  while (!d.base.empty() && d.base.back() == '/') d.base.pop_back();

  json::object def = service_fields(doc, options, d.domain);
  json::array authentications;
  d.schemes = read_schemes(im, d.domain, authentications);
  d.global_security = json::member(doc, "security");

  json::array capabilities;
  const auto* paths = object_at(doc, "paths");
  if (paths == nullptr) return invalid("no paths");
  for (const auto& [path, raw_item] : *paths) {
    const json::value* item = im.resolve(raw_item);
    if (item == nullptr || !item->is_object()) continue;
    const json::value* shared_params = json::member(*item, "parameters");
    for (const auto method : kMethods) {
      const json::value* raw_op = json::member(*item, method);
      if (raw_op == nullptr) continue;
      const json::value* op = im.resolve(*raw_op);
      if (op == nullptr || !op->is_object()) continue;
      if (auto cap = d.capability(path, shared_params, method, *op)) {
        capabilities.push_back(std::move(*cap));
      }
    }
  }
  if (capabilities.empty()) return invalid("no operation could be imported");
  if (!authentications.empty()) def["authentications"] = std::move(authentications);
  def["capabilities"] = std::move(capabilities);
  if (!d.response_schemas.empty()) def["responseSchemas"] = std::move(d.response_schemas);
  def["security"] = json::object{
      {"transport", json::object{{"minTlsVersion", "1.2"}}},
      {"variables", json::object{{"encryption", "AES-256-GCM"}, {"domainBinding", true}}}};
  result.definition = seal(def);
  // What is written must load: any problem left is the importer's, said plainly.
  Problems problems;
  if (!parse_definition(result.definition, problems)) {
    std::string all;
    for (const auto& p : problems) all += "\n  " + p.to_string();
    return invalid("the imported definition does not validate:" + all);
  }
  return result;
}

}  // namespace hearth::a2s
