#include "jsworker/protocol.hpp"

#include <array>
#include <utility>

#include "js/frame.hpp"
#include "json/json.hpp"

namespace hearth::jsworker {

namespace {

// --- encoding -------------------------------------------------------------------------------

json::array strings(const std::vector<std::string>& items) {
  json::array out;
  for (const auto& s : items) out.emplace_back(s);
  return out;
}

json::object to_object(const Init& m) {
  json::object o;
  o["t"] = "init";
  o["service"] = m.service;
  o["serviceDir"] = m.service_dir;
  if (m.file_access) o["fileAccess"] = strings(*m.file_access);
  if (const auto* all = std::get_if<bool>(&m.network)) {
    o["network"] = *all;
  } else {
    o["network"] = strings(std::get<std::vector<std::string>>(m.network));
  }
  if (m.max_heap) o["maxHeap"] = *m.max_heap;
  o["subscriptions"] = strings(m.subscriptions);
  return o;
}

json::object to_object(const CallFunction& m) {
  json::object o;
  o["t"] = "call";
  o["id"] = m.id;
  o["module"] = m.module;
  o["function"] = m.function;
  o["endpoint"] = m.endpoint;
  o["input"] = m.input;
  o["timeoutMs"] = m.timeout.count();
  if (m.deadline_ns) o["deadlineNs"] = *m.deadline_ns;
  if (m.mutation) o["mutation"] = true;
  if (m.keep_state) o["keepState"] = true;
  if (m.host_calls) o["hostCalls"] = true;
  if (m.busy) o["busy"] = true;
  return o;
}

json::object to_object(const HostAnswer& m) {
  return {{"t", "hostAnswer"}, {"id", m.id}, {"answer", m.answer}};
}

json::object to_object(const HostCall& m) {
  return {{"t", "hostCall"}, {"id", m.id}, {"call", m.call}};
}

json::object to_object(const EvaluateSource& m) {
  json::object o;
  o["t"] = "eval";
  o["id"] = m.id;
  o["source"] = m.source;
  o["filename"] = m.filename;
  o["globals"] = m.globals;
  if (!m.prelude.empty()) {
    o["prelude"] = m.prelude;
    o["preludeFilename"] = m.prelude_filename;
  }
  if (m.clock_ms) o["clockMs"] = *m.clock_ms;
  if (m.io) o["io"] = true;
  o["timeoutMs"] = m.timeout.count();
  if (m.deadline_ns) o["deadlineNs"] = *m.deadline_ns;
  return o;
}

json::object to_object(const Ready& m) {
  return {{"t", "ready"}, {"pid", m.pid}};
}

json::object to_object(const Started& m) {
  return {{"t", "start"}, {"id", m.id}};
}

json::object to_object(const Log& m) {
  return {{"t", "log"}, {"id", m.id}, {"level", to_string(m.level)}, {"message", m.message}};
}

json::object to_object(const Publish& m) {
  return {{"t", "publish"}, {"id", m.id}, {"subscription", m.subscription}, {"data", m.data}};
}

json::object to_object(const Returned& m) {
  json::object o{{"t", "result"}, {"id", m.id}, {"value", m.value}};
  if (m.globals) o["globals"] = *m.globals;
  if (m.collecting) o["collecting"] = true;
  return o;
}

json::object to_object(const Failed& m) {
  json::object o{{"t", "error"},         {"id", m.id},     {"kind", to_string(m.kind)},
                 {"message", m.message}, {"name", m.name}, {"stack", m.stack},
                 {"file", m.file},       {"line", m.line}, {"column", m.column}};
  if (m.collecting) o["collecting"] = true;
  return o;
}

json::object to_object(const Collected&) {
  return {{"t", "collected"}};
}

// --- decoding -------------------------------------------------------------------------------

/// Reads the members of one message; the first problem found is kept and reported.
class Reader {
 public:
  Reader(const json::object& o, std::string_view type) : o_(o), type_(type) {}

  std::string text(std::string_view key, bool required = true) {
    const auto* v = find(key, required);
    if (v == nullptr) return {};
    if (!v->is_string()) return fail(key, "must be a string"), std::string();
    return std::string(v->get_string());
  }

  std::uint64_t unsigned_number(std::string_view key, bool required = true) {
    const auto* v = find(key, required);
    if (v == nullptr) return 0;
    boost::system::error_code ec;
    const auto n = v->to_number<std::uint64_t>(ec);
    if (ec) return fail(key, "must be a non-negative integer"), 0;
    return n;
  }

  std::int64_t signed_number(std::string_view key) {
    const auto* v = find(key, true);
    if (v == nullptr) return 0;
    boost::system::error_code ec;
    const auto n = v->to_number<std::int64_t>(ec);
    if (ec) return fail(key, "must be an integer"), 0;
    return n;
  }

  bool has(std::string_view key) const { return o_.contains(key); }

  bool boolean(std::string_view key) {
    const auto* v = find(key, false);
    if (v == nullptr) return false;
    if (!v->is_bool()) return fail(key, "must be true or false"), false;
    return v->get_bool();
  }

  json::value any(std::string_view key) {
    const auto* v = find(key, true);
    return v != nullptr ? *v : json::value(nullptr);
  }

  std::optional<json::object> object(std::string_view key, bool required) {
    const auto* v = find(key, required);
    if (v == nullptr) return std::nullopt;
    if (!v->is_object()) return fail(key, "must be an object"), std::nullopt;
    return v->get_object();
  }

  std::optional<std::vector<std::string>> string_list(std::string_view key, bool required) {
    const auto* v = find(key, required);
    if (v == nullptr) return std::nullopt;
    return strings_of(key, *v);
  }

  std::vector<std::string> strings_of(std::string_view key, const json::value& v) {
    std::vector<std::string> out;
    if (!v.is_array()) return fail(key, "must be an array of strings"), out;
    for (const auto& item : v.get_array()) {
      if (!item.is_string()) return fail(key, "must be an array of strings"), out;
      out.emplace_back(item.get_string());
    }
    return out;
  }

  const json::value* find(std::string_view key, bool required) {
    const auto* v = o_.if_contains(key);
    if (v == nullptr && required) fail(key, "is missing");
    return v;
  }

  void fail(std::string_view key, std::string_view what) {
    if (problem_.empty()) {
      problem_ =
          "'" + std::string(type_) + "' message: '" + std::string(key) + "' " + std::string(what);
    }
  }

  /// `message`, or the first problem as an error.
  template <class T>
  Result<T> done(T message) {
    if (!problem_.empty()) return Error::make(ErrorCode::kInternalError, problem_);
    return message;
  }

 private:
  const json::object& o_;
  std::string_view type_;
  std::string problem_;
};

/// The "t" of a message (a view into it), or why it has none.
Result<std::string_view> type_of(const json::value& message) {
  if (!message.is_object()) {
    return Error::make(ErrorCode::kInternalError, "a JS worker message must be a JSON object");
  }
  const auto* t = message.get_object().if_contains("t");
  if (t == nullptr || !t->is_string()) {
    return Error::make(ErrorCode::kInternalError,
                       "a JS worker message must have a string member 't' naming it");
  }
  return std::string_view(t->get_string());
}

Error unknown(std::string_view type, std::string_view direction) {
  return Error::make(ErrorCode::kInternalError, "unknown JS worker message '" + std::string(type) +
                                                    "' " + std::string(direction));
}

// Each enum's names on the wire, in one table read both ways.
template <class Enum, std::size_t N>
using Names = std::array<std::pair<Enum, std::string_view>, N>;

constexpr Names<LogLevel, 4> kLogLevels{{{LogLevel::kDebug, "debug"},
                                         {LogLevel::kInfo, "info"},
                                         {LogLevel::kWarn, "warn"},
                                         {LogLevel::kError, "error"}}};
constexpr Names<FailureKind, 5> kFailureKinds{{{FailureKind::kThrown, "thrown"},
                                               {FailureKind::kPermission, "permission"},
                                               {FailureKind::kTimeout, "timeout"},
                                               {FailureKind::kOutOfMemory, "oom"},
                                               {FailureKind::kConfig, "config"}}};

template <class Enum, std::size_t N>
std::string_view name_of(const Names<Enum, N>& names, Enum value) {
  for (const auto& [e, name] : names) {
    if (e == value) return name;
  }
  return names.front().second;
}

template <class Enum, std::size_t N>
std::optional<Enum> value_of(const Names<Enum, N>& names, std::string_view name) {
  for (const auto& [e, n] : names) {
    if (n == name) return e;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(LogLevel level) {
  return name_of(kLogLevels, level);
}
std::string_view to_string(FailureKind kind) {
  return name_of(kFailureKinds, kind);
}
std::optional<LogLevel> parse_log_level(std::string_view name) {
  return value_of(kLogLevels, name);
}
std::optional<FailureKind> parse_failure_kind(std::string_view name) {
  return value_of(kFailureKinds, name);
}

std::string encode(const ToWorker& message) {
  return json::serialize(std::visit([](const auto& m) { return to_object(m); }, message));
}

std::string encode(const FromWorker& message) {
  return json::serialize(std::visit([](const auto& m) { return to_object(m); }, message));
}

std::string encode_returned(std::uint64_t id, std::string_view value_json,
                            std::optional<std::string_view> globals_json, bool collecting) {
  std::string out = R"({"t":"result","id":)" + std::to_string(id) + R"(,"value":)";
  out += value_json;
  if (globals_json) {
    out += R"(,"globals":)";
    out += *globals_json;
  }
  if (collecting) out += R"(,"collecting":true)";
  out += '}';
  return out;
}

std::string frame(std::string_view payload) {
  return js::encode_frame(payload);
}

Result<ToWorker> decode_to_worker(const json::value& message) {
  HEARTH_ASSIGN_OR_RETURN(const std::string_view type, type_of(message));
  Reader r(message.get_object(), type);
  if (type == "init") {
    Init m;
    m.service = r.text("service");
    m.service_dir = r.text("serviceDir");
    m.file_access = r.string_list("fileAccess", false);
    if (const auto* net = r.find("network", true); net != nullptr) {
      if (net->is_bool()) {
        m.network = net->get_bool();
      } else {
        m.network = r.strings_of("network", *net);
      }
    }
    if (r.find("maxHeap", false) != nullptr) m.max_heap = r.unsigned_number("maxHeap");
    m.subscriptions = r.string_list("subscriptions", true).value_or(std::vector<std::string>{});
    return r.done<ToWorker>(std::move(m));
  }
  if (type == "call") {
    CallFunction m;
    m.id = r.unsigned_number("id");
    m.module = r.text("module");
    m.function = r.text("function");
    m.endpoint = r.text("endpoint");
    m.input = r.any("input");
    m.timeout = std::chrono::milliseconds(r.signed_number("timeoutMs"));
    if (r.has("deadlineNs")) m.deadline_ns = r.signed_number("deadlineNs");
    m.mutation = r.boolean("mutation");
    m.keep_state = r.boolean("keepState");
    m.host_calls = r.boolean("hostCalls");
    m.busy = r.boolean("busy");
    return r.done<ToWorker>(std::move(m));
  }
  if (type == "hostAnswer") {
    HostAnswer m;
    m.id = r.unsigned_number("id");
    m.answer = r.object("answer", true).value_or(json::object());
    return r.done<ToWorker>(std::move(m));
  }
  if (type == "eval") {
    EvaluateSource m;
    m.id = r.unsigned_number("id");
    m.source = r.text("source");
    m.filename = r.text("filename");
    m.globals = r.object("globals", true).value_or(json::object());
    m.prelude = r.text("prelude", false);
    if (!m.prelude.empty()) m.prelude_filename = r.text("preludeFilename");
    if (r.has("clockMs")) m.clock_ms = r.signed_number("clockMs");
    m.io = r.boolean("io");
    m.timeout = std::chrono::milliseconds(r.signed_number("timeoutMs"));
    if (r.has("deadlineNs")) m.deadline_ns = r.signed_number("deadlineNs");
    return r.done<ToWorker>(std::move(m));
  }
  return unknown(type, "for a worker");
}

Result<FromWorker> decode_from_worker(const json::value& message) {
  HEARTH_ASSIGN_OR_RETURN(const std::string_view type, type_of(message));
  Reader r(message.get_object(), type);
  if (type == "ready") {
    Ready m;
    m.pid = r.signed_number("pid");
    return r.done<FromWorker>(m);
  }
  if (type == "start") {
    Started m;
    m.id = r.unsigned_number("id");
    return r.done<FromWorker>(m);
  }
  if (type == "log") {
    Log m;
    m.id = r.unsigned_number("id");
    const std::string level = r.text("level");
    if (auto l = parse_log_level(level)) {
      m.level = *l;
    } else {
      r.fail("level", "must be debug, info, warn or error");
    }
    m.message = r.text("message");
    return r.done<FromWorker>(std::move(m));
  }
  if (type == "publish") {
    Publish m;
    m.id = r.unsigned_number("id");
    m.subscription = r.text("subscription");
    m.data = r.any("data");
    return r.done<FromWorker>(std::move(m));
  }
  if (type == "result") {
    Returned m;
    m.id = r.unsigned_number("id");
    m.value = r.any("value");
    m.globals = r.object("globals", false);
    m.collecting = r.boolean("collecting");
    return r.done<FromWorker>(std::move(m));
  }
  if (type == "error") {
    Failed m;
    m.id = r.unsigned_number("id");
    const std::string kind = r.text("kind");
    if (auto k = parse_failure_kind(kind)) {
      m.kind = *k;
    } else {
      r.fail("kind", "must be thrown, permission, timeout, oom or config");
    }
    m.message = r.text("message");
    m.name = r.text("name");
    m.stack = r.text("stack");
    m.file = r.text("file");
    m.line = r.unsigned_number("line");
    m.column = r.unsigned_number("column");
    m.collecting = r.boolean("collecting");
    return r.done<FromWorker>(std::move(m));
  }
  if (type == "hostCall") {
    HostCall m;
    m.id = r.unsigned_number("id");
    m.call = r.object("call", true).value_or(json::object());
    return r.done<FromWorker>(std::move(m));
  }
  if (type == "collected") return r.done<FromWorker>(Collected{});
  return unknown(type, "from a worker");
}

std::uint64_t request_id(const FromWorker& message) {
  return std::visit(
      [](const auto& m) -> std::uint64_t {
        using M = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<M, Ready> || std::is_same_v<M, Collected>) {
          return 0;
        } else {
          return m.id;
        }
      },
      message);
}

}  // namespace hearth::jsworker
