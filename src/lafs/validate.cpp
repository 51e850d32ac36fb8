#include "lafs/validate.hpp"

#include <array>
#include <cmath>
#include <span>
#include <string_view>

#include "lafs/formats.hpp"
#include "lafs/registry.hpp"

namespace hearth::lafs {

namespace {

using Kind = json::kind;

class Path;

// Collects errors, or only notes that there was one when `first_only` (the fast yes/no path).
class Sink {
 public:
  explicit Sink(std::vector<SchemaError>* out) : out_(out) {}
  void add(const Path& path, std::string_view keyword, std::string message);
  bool failed() const { return failed_; }
  /// Whether to go on after a failure: only when collecting every error.
  bool more() const { return out_ != nullptr || !failed_; }

 private:
  std::vector<SchemaError>* out_;
  bool failed_ = false;
};

// A JSON Pointer that grows and shrinks as the walk goes down and up. Only the tokens are kept;
// the text is built when an error needs it (most documents have none).
class Path {
 public:
  class Scope {
   public:
    Scope(Path& p, std::string_view token) : p_(p) { p_.tokens_.push_back(Token{token, 0, false}); }
    Scope(Path& p, std::size_t index) : p_(p) { p_.tokens_.push_back(Token{{}, index, true}); }
    ~Scope() { p_.tokens_.pop_back(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Path& p_;
  };
  Path() { tokens_.reserve(8); }
  std::string str() const {
    std::string s;
    for (const auto& t : tokens_) {
      s += '/';
      if (t.is_index) {
        s += std::to_string(t.index);
        continue;
      }
      for (char c : t.key) {
        if (c == '~') {
          s += "~0";
        } else if (c == '/') {
          s += "~1";
        } else {
          s += c;
        }
      }
    }
    return s;
  }

 private:
  struct Token {
    std::string_view key;
    std::size_t index;
    bool is_index;
  };
  std::vector<Token> tokens_;
};

void Sink::add(const Path& path, std::string_view keyword, std::string message) {
  failed_ = true;
  if (out_ != nullptr) {
    out_->push_back(SchemaError{path.str(), std::string(keyword), std::move(message)});
  }
}

bool number_ge(const json::value& v, double bound) {
  switch (v.kind()) {
    case Kind::int64:
      return static_cast<double>(v.get_int64()) >= bound;
    case Kind::uint64:
      return static_cast<double>(v.get_uint64()) >= bound;
    case Kind::double_:
      return v.get_double() >= bound;
    default:
      return true;
  }
}
bool number_le(const json::value& v, double bound) {
  switch (v.kind()) {
    case Kind::int64:
      return static_cast<double>(v.get_int64()) <= bound;
    case Kind::uint64:
      return static_cast<double>(v.get_uint64()) <= bound;
    case Kind::double_:
      return v.get_double() <= bound;
    default:
      return true;
  }
}

// The context the checks share.
struct Walk {
  Sink& sink;
  Path path;

  void error(std::string_view keyword, std::string message) {
    sink.add(path, keyword, std::move(message));
  }

  bool type_string(const json::value& v) {
    if (v.is_string()) return true;
    error("type", "must be string");
    return false;
  }
  bool type_boolean(const json::value& v) {
    if (v.is_bool()) return true;
    error("type", "must be boolean");
    return false;
  }
  bool type_object(const json::value& v) {
    if (v.is_object()) return true;
    error("type", "must be object");
    return false;
  }
  void length(std::string_view s, std::size_t min, std::size_t max) {
    const std::size_t n = code_point_count(s);
    if (n < min) {
      error("minLength", "must NOT have fewer than " + std::to_string(min) + " characters");
    }
    if (n > max) {
      error("maxLength", "must NOT have more than " + std::to_string(max) + " characters");
    }
  }
  void integer_min(const json::value& v, double min, const char* type_message) {
    if (!is_integer(v)) {
      error("type", type_message);
      return;
    }
    if (!number_ge(v, min)) {
      error("minimum", "must be >= " + std::to_string(static_cast<long long>(min)));
    }
  }
  template <std::size_t N>
  void enumeration(const json::value& v, const std::array<std::string_view, N>& allowed) {
    if (!type_string(v)) return;
    for (auto a : allowed) {
      if (v.get_string() == a) return;
    }
    error("enum", "must be equal to one of the allowed values");
  }
  void required(const json::object& o, std::string_view key) {
    if (!o.contains(key)) {
      error("required", "must have required property '" + std::string(key) + "'");
    }
  }
};

constexpr std::array<std::string_view, 4> kTransports = {"cli", "http", "grpc", "sdk"};
constexpr std::array<std::string_view, 4> kMviLevels = {"minimal", "standard", "full", "custom"};
constexpr std::array<std::string_view, 10> kCategories = {
    "VALIDATION", "AUTH",      "PERMISSION", "NOT_FOUND", "CONFLICT",
    "RATE_LIMIT", "TRANSIENT", "INTERNAL",   "CONTRACT",  "MIGRATION"};
constexpr std::array<std::string_view, 7> kAgentActions = {
    "retry", "retry_modified", "escalate", "stop", "wait", "refresh_context", "authenticate"};
constexpr std::array<std::string_view, 7> kStrictTopLevel = {
    "$schema", "_meta", "success", "result", "error", "page", "_extensions"};

bool one_of(std::string_view key, std::span<const std::string_view> set) {
  for (auto s : set) {
    if (s == key) return true;
  }
  return false;
}

void check_version(Walk& w, const json::value& v) {
  if (!w.type_string(v)) return;
  if (!is_semver_triplet(v.get_string())) {
    w.error("pattern", R"(must match pattern "^\d+\.\d+\.\d+$")");
  }
}

void check_warning(Walk& w, const json::value& v) {
  if (!w.type_object(v)) return;
  const auto& o = v.get_object();
  w.required(o, "code");
  w.required(o, "message");
  for (std::string_view key : {"code", "message", "deprecated", "replacement", "removeBy"}) {
    if (const json::value* m = o.if_contains(key)) {
      Path::Scope s(w.path, key);
      w.type_string(*m);
    }
  }
}

// Index of `key` in `keys`, or -1. The first character is compared before the rest: most keys
// differ there, which spares a memcmp per candidate on the hot path.
template <std::size_t N>
int key_index(std::string_view key, const std::array<std::string_view, N>& keys) {
  if (key.empty()) return -1;
  for (std::size_t i = 0; i < N; ++i) {
    if (keys[i].size() == key.size() && keys[i][0] == key[0] && keys[i] == key) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

// Reports each of the first `required` keys (in `keys` order) that `present` lacks.
template <std::size_t N>
void require(Walk& w, unsigned present, const std::array<std::string_view, N>& keys,
             std::size_t required) {
  for (std::size_t i = 0; i < required; ++i) {
    if ((present & (1u << i)) == 0) {
      w.error("required", "must have required property '" + std::string(keys[i]) + "'");
    }
  }
}

// _meta's members; the first nine are required.
constexpr std::array<std::string_view, 11> kMetaKeys = {
    "specVersion", "schemaVersion", "timestamp",      "operation", "requestId", "transport",
    "strict",      "mvi",           "contextVersion", "sessionId", "warnings"};

void check_meta(Walk& w, const json::value& v) {
  if (!w.type_object(v)) return;
  const auto& o = v.get_object();
  unsigned present = 0;
  for (const auto& kv : o) {
    const std::string_view key = kv.key();
    const json::value& m = kv.value();
    if (!w.sink.more()) return;
    const int k = key_index(key, kMetaKeys);
    if (k < 0) {
      w.error("additionalProperties",
              "must NOT have additional properties ('" + std::string(key) + "')");
      continue;
    }
    present |= 1u << k;
    Path::Scope s(w.path, key);
    switch (k) {
      case 0:
      case 1:
        check_version(w, m);
        break;
      case 2:
        if (w.type_string(m) && !is_date_time(m.get_string())) {
          w.error("format", R"(must match format "date-time")");
        }
        break;
      case 3:
        if (w.type_string(m)) w.length(m.get_string(), 1, 128);
        break;
      case 4:
        if (w.type_string(m)) w.length(m.get_string(), 3, 128);
        break;
      case 5:
        w.enumeration(m, kTransports);
        break;
      case 6:
        w.type_boolean(m);
        break;
      case 7:
        w.enumeration(m, kMviLevels);
        break;
      case 8:
        w.integer_min(m, 0, "must be integer");
        break;
      case 9:
        if (w.type_string(m)) w.length(m.get_string(), 1, 256);
        break;
      default: {
        if (!m.is_array()) {
          w.error("type", "must be array");
          break;
        }
        std::size_t i = 0;
        for (const auto& item : m.get_array()) {
          Path::Scope si(w.path, i++);
          check_warning(w, item);
        }
      }
    }
  }
  require(w, present, kMetaKeys, 9);
}

// error's members; the first six are required, others beyond the list are allowed.
constexpr std::array<std::string_view, 10> kErrorKeys = {
    "code",    "message",     "category",           "retryable",       "retryAfterMs",
    "details", "agentAction", "escalationRequired", "suggestedAction", "docUrl"};

void check_error_object(Walk& w, const json::object& o) {
  unsigned present = 0;
  for (const auto& kv : o) {
    const std::string_view key = kv.key();
    const json::value& m = kv.value();
    if (!w.sink.more()) return;
    const int k = key_index(key, kErrorKeys);
    if (k < 0) continue;  // additionalProperties: true
    present |= 1u << k;
    Path::Scope s(w.path, key);
    switch (k) {
      case 0:
        if (w.type_string(m) && !valid_code_name(m.get_string())) {
          w.error("pattern", R"(must match pattern "^E_[A-Z0-9]+_[A-Z0-9_]+$")");
        }
        break;
      case 1:
        if (w.type_string(m)) w.length(m.get_string(), 1, 1024);
        break;
      case 2:
        w.enumeration(m, kCategories);
        break;
      case 3:
      case 7:
        w.type_boolean(m);
        break;
      case 4:
        if (!m.is_null()) w.integer_min(m, 0, "must be integer,null");
        break;
      case 5:
        w.type_object(m);
        break;
      case 6:
        w.enumeration(m, kAgentActions);
        break;
      case 8:
        if (w.type_string(m)) w.length(m.get_string(), 0, 512);
        break;
      default:
        if (w.type_string(m) && !is_uri(m.get_string())) {
          w.error("format", R"(must match format "uri")");
        }
    }
  }
  require(w, present, kErrorKeys, 6);
}

void check_page_object(Walk& w, const json::object& o) {
  w.required(o, "mode");
  for (const auto& kv : o) {
    const std::string_view key = kv.key();
    const json::value& m = kv.value();
    if (!w.sink.more()) return;
    if (key == "mode") {
      Path::Scope s(w.path, key);
      w.enumeration(m, std::array<std::string_view, 3>{"offset", "cursor", "none"});
    } else if (key == "limit") {
      Path::Scope s(w.path, key);
      if (!is_integer(m)) {
        w.error("type", "must be integer");
      } else {
        if (!number_ge(m, 1)) w.error("minimum", "must be >= 1");
        if (!number_le(m, 1000)) w.error("maximum", "must be <= 1000");
      }
    } else if (key == "offset") {
      Path::Scope s(w.path, key);
      w.integer_min(m, 0, "must be integer");
    } else if (key == "nextCursor") {
      Path::Scope s(w.path, key);
      if (m.is_string()) {
        w.length(m.get_string(), 0, 2048);
      } else if (!m.is_null()) {
        w.error("type", "must be string,null");
      }
    } else if (key == "hasMore") {
      Path::Scope s(w.path, key);
      w.type_boolean(m);
    } else if (key == "total") {
      Path::Scope s(w.path, key);
      if (!m.is_null()) w.integer_min(m, 0, "must be integer,null");
    } else {
      w.error("additionalProperties",
              "must NOT have additional properties ('" + std::string(key) + "')");
    }
  }
  // allOf of if/then: the mode decides which members are required.
  const json::value* mode = o.if_contains("mode");
  if (mode == nullptr || !mode->is_string()) return;
  auto require_then = [&](std::initializer_list<std::string_view> keys) {
    bool ok = true;
    for (auto key : keys) {
      if (!o.contains(key)) {
        w.required(o, key);
        ok = false;
      }
    }
    if (!ok) w.error("if", R"(must match "then" schema)");
  };
  if (mode->get_string() == "cursor") {
    require_then({"nextCursor", "hasMore"});
  } else if (mode->get_string() == "offset") {
    require_then({"limit", "offset", "hasMore"});
  }
}

void walk_envelope(Walk& w, const json::value& v) {
  if (!v.is_object()) {
    w.error("type", "must be object");
    return;
  }
  const auto& o = v.get_object();
  const json::value* success = nullptr;
  const json::value* error = nullptr;
  const json::value* meta = nullptr;
  unsigned present = 0;
  bool extra = false;
  for (const auto& kv : o) {
    if (!w.sink.more()) return;
    const std::string_view key = kv.key();
    const json::value& m = kv.value();
    const int k = key_index(key, kStrictTopLevel);
    if (k < 0) {
      extra = true;  // allowed or not by allOf[2], below
      continue;
    }
    present |= 1u << k;
    Path::Scope s(w.path, key);
    switch (k) {
      case 0:
        if (w.type_string(m) && m.get_string() != kEnvelopeSchemaId) {
          w.error("const", "must be equal to constant");
        }
        break;
      case 1:
        meta = &m;
        check_meta(w, m);
        break;
      case 2:
        success = &m;
        w.type_boolean(m);
        break;
      case 3:
        if (!m.is_object() && !m.is_array() && !m.is_null()) {
          w.error("type", "must be object,array,null");
        }
        break;
      case 4:
        error = &m;
        if (m.is_object()) {
          check_error_object(w, m.get_object());
        } else if (!m.is_null()) {
          w.error("type", "must be object,null");
        }
        break;
      case 5:
        if (m.is_object()) {
          check_page_object(w, m.get_object());
        } else if (!m.is_null()) {
          w.error("type", "must be object,null");
        }
        break;
      default:
        w.type_object(m);
    }
  }
  require(w, present, kStrictTopLevel, 4);
  if (!w.sink.more()) return;

  // allOf[0]: success true (or absent: an `if` of properties alone holds then) -> error null.
  const bool success_true_or_absent =
      success == nullptr || (success->is_bool() && success->get_bool());
  const bool success_false_or_absent =
      success == nullptr || (success->is_bool() && !success->get_bool());
  if (success_true_or_absent && error != nullptr && !error->is_null()) {
    {
      Path::Scope s(w.path, "error");
      w.error("type", "must be null");
    }
    w.error("if", R"(must match "then" schema)");
  }
  // allOf[1]: success false (or absent) -> error required, and an object.
  if (success_false_or_absent) {
    if (error == nullptr) {
      w.required(o, "error");
      w.error("if", R"(must match "then" schema)");
    } else if (!error->is_object()) {
      {
        Path::Scope s(w.path, "error");
        w.error("type", "must be object");
      }
      w.error("if", R"(must match "then" schema)");
    }
  }
  // allOf[2]: strict unless _meta is an object whose strict is present and not true.
  bool strict = true;
  if (meta != nullptr) {
    if (!meta->is_object()) {
      strict = false;
    } else if (const json::value* s = meta->get_object().if_contains("strict")) {
      strict = s->is_bool() && s->get_bool();
    }
  }
  if (strict && extra) {
    for (const auto& kv : o) {
      if (key_index(kv.key(), kStrictTopLevel) < 0) {
        w.error("additionalProperties",
                "must NOT have additional properties ('" + std::string(kv.key()) + "')");
        if (!w.sink.more()) return;
      }
    }
    w.error("if", R"(must match "then" schema)");
  }
}

void walk_ledger(Walk& w, const json::value& v) {
  if (!w.type_object(v)) return;
  const auto& o = v.get_object();
  for (std::string_view key :
       {"ledgerId", "version", "createdAt", "updatedAt", "entries", "checksum", "maxEntries"}) {
    w.required(o, key);
  }
  for (const auto& kv : o) {
    const std::string_view key = kv.key();
    const json::value& m = kv.value();
    constexpr std::array<std::string_view, 7> kLedgerKeys = {
        "ledgerId", "version", "createdAt", "updatedAt", "entries", "checksum", "maxEntries"};
    if (!one_of(key, kLedgerKeys)) {
      w.error("additionalProperties",
              "must NOT have additional properties ('" + std::string(key) + "')");
      continue;
    }
    Path::Scope s(w.path, key);
    if (key == "ledgerId" || key == "checksum") {
      w.type_string(m);
    } else if (key == "version") {
      w.integer_min(m, 0, "must be integer");
    } else if (key == "maxEntries") {
      w.integer_min(m, 1, "must be integer");
    } else if (key == "createdAt" || key == "updatedAt") {
      if (w.type_string(m) && !is_date_time(m.get_string())) {
        w.error("format", R"(must match format "date-time")");
      }
    } else if (key == "entries") {
      if (!m.is_array()) {
        w.error("type", "must be array");
        continue;
      }
      std::size_t i = 0;
      for (const auto& entry : m.get_array()) {
        Path::Scope se(w.path, i++);
        if (!w.type_object(entry)) continue;
        const auto& eo = entry.get_object();
        for (std::string_view k : {"entryId", "timestamp", "operation", "contextDelta"}) {
          w.required(eo, k);
        }
        for (const auto& ekv : eo) {
          Path::Scope sk(w.path, ekv.key());
          const std::string_view ek = ekv.key();
          if (ek == "entryId" || ek == "operation" || ek == "requestId") {
            w.type_string(ekv.value());
          } else if (ek == "timestamp") {
            if (w.type_string(ekv.value()) && !is_date_time(ekv.value().get_string())) {
              w.error("format", R"(must match format "date-time")");
            }
          } else if (ek == "contextDelta") {
            w.type_object(ekv.value());
          }
        }
      }
    }
  }
}

}  // namespace

bool is_integer(const json::value& v) {
  switch (v.kind()) {
    case Kind::int64:
    case Kind::uint64:
      return true;
    case Kind::double_: {
      const double d = v.get_double();
      return std::isfinite(d) && std::trunc(d) == d;
    }
    default:
      return false;
  }
}

std::vector<SchemaError> validate_envelope_schema(const json::value& envelope) {
  std::vector<SchemaError> errors;
  Sink sink(&errors);
  Walk w{sink, {}};
  walk_envelope(w, envelope);
  return errors;
}

bool envelope_schema_valid(const json::value& envelope) {
  Sink sink(nullptr);
  Walk w{sink, {}};
  walk_envelope(w, envelope);
  return !sink.failed();
}

std::vector<SchemaError> validate_context_ledger_schema(const json::value& ledger) {
  std::vector<SchemaError> errors;
  Sink sink(&errors);
  Walk w{sink, {}};
  walk_ledger(w, ledger);
  return errors;
}

}  // namespace hearth::lafs
