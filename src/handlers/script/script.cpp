#include "handlers/script/script.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>

#include "common/ascii.hpp"
#include "common/utf8.hpp"
#include "confine/confine.hpp"
#include "handlers/config.hpp"
#include "handlers/create.hpp"
#include "handlers/script/persistent.hpp"
#include "handlers/script/program.hpp"
#include "handlers/script/warm.hpp"
#include "json/text.hpp"
#include "proc/process.hpp"

namespace hearth::handlers::script {

using confine::base_environment;
using confine::Confinement;
using confine::Environment;
using confine::environment_entries;

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kWhitespace = " \t\r\n";

enum class InputMode { kStdin, kArgs, kEnv };

std::optional<InputMode> parse_mode(std::string_view text) {
  if (text == "stdin") return InputMode::kStdin;
  if (text == "args") return InputMode::kArgs;
  if (text == "env") return InputMode::kEnv;
  return std::nullopt;
}

bool has_nul(std::string_view s) {
  return s.find('\0') != std::string_view::npos;
}

/// `s` without white space (including line ends) at either end.
std::string_view trim(std::string_view s) {
  return ascii::trim(s, kWhitespace);
}

/// A value as text in a placeholder or an environment variable (null: empty).
std::string value_text(const json::value& v) {
  return json::text_of(v).value_or(std::string());
}

const json::value* lookup_path(const json::value& input, std::string_view path) {
  const json::value* current = &input;
  while (true) {
    const auto dot = path.find('.');
    const auto segment = path.substr(0, dot);
    if (current->is_object()) {
      current = current->get_object().if_contains(segment);
    } else if (current->is_array() && !segment.empty() &&
               segment.find_first_not_of("0123456789") == std::string_view::npos) {
      std::size_t index = 0;
      auto [ptr, ec] = std::from_chars(segment.data(), segment.data() + segment.size(), index);
      const auto& array = current->get_array();
      current =
          (ec == std::errc() && ptr == segment.data() + segment.size() && index < array.size())
              ? &array[index]
              : nullptr;
    } else {
      current = nullptr;
    }
    if (current == nullptr || dot == std::string_view::npos) return current;
    path.remove_prefix(dot + 1);
  }
}

Error env_name_error(const std::string& field, std::string message) {
  json::object data;
  data["field"] = field;
  data["constraint"] = "env-name";
  return Error::make(
      ErrorCode::kInvalidParams,
      "input field '" + field + "' cannot be passed in the environment: " + std::move(message),
      std::move(data));
}

Status flatten_env(const json::object& object, const EnvFields& declared,
                   const std::string& name_prefix, const std::string& field_prefix,
                   std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& member : object) {
    const std::string key(member.key());
    const std::string field = join_path(field_prefix, key);
    const json::value& value = member.value();
    const auto found = declared.fields.find(key);
    if (found == declared.fields.end()) {
      // The allowlist: only names the manifest's author wrote in the input schema become
      // variables, so input can never choose one (GIT_CONFIG_*, LD_PRELOAD, PAGER...).
      return env_name_error(field,
                            "env mode passes only the fields the endpoint's input schema "
                            "declares in 'properties', and this one is not declared");
    }
    const std::string name =
        name_prefix.empty() ? ascii::upper(key) : name_prefix + "_" + ascii::upper(key);
    if (value.is_null()) continue;
    if (value.is_object() && !found->second.fields.empty()) {
      HEARTH_RETURN_IF_ERROR(flatten_env(value.get_object(), found->second, name, field, out));
      continue;
    }
    std::string text = value_text(value);
    if (has_nul(text)) {
      json::object data;
      data["field"] = field;
      data["constraint"] = "no-nul";
      return Error::make(ErrorCode::kInvalidParams,
                         "input field '" + field +
                             "' contains a NUL character, which an environment variable cannot "
                             "hold",
                         std::move(data));
    }
    out.emplace_back(name, std::move(text));
  }
  return {};
}

/// The subschemas `schema` stands for at this level: itself, its $ref (`#/types/Name`, or a
/// pointer inside the root schema), and allOf / anyOf / oneOf branches.
void schema_branches(const json::value& schema, const json::object& types, const json::value& root,
                     int depth, std::vector<const json::object*>& out) {
  if (depth > 16 || !schema.is_object()) return;
  const auto& object = schema.get_object();
  out.push_back(&object);
  if (const auto* ref = object.if_contains("$ref"); ref != nullptr && ref->is_string()) {
    const std::string_view target = ref->get_string();
    constexpr std::string_view kTypes = "#/types/";
    if (target.substr(0, kTypes.size()) == kTypes) {
      if (const auto* type = types.if_contains(target.substr(kTypes.size()))) {
        schema_branches(*type, types, root, depth + 1, out);
      }
    } else if (!target.empty() && target.front() == '#') {
      boost::system::error_code ec;
      if (const auto* pointed = root.find_pointer(target.substr(1), ec)) {
        schema_branches(*pointed, types, root, depth + 1, out);
      }
    }
  }
  for (const char* keyword : {"allOf", "anyOf", "oneOf"}) {
    if (const auto* list = object.if_contains(keyword); list != nullptr && list->is_array()) {
      for (const auto& branch : list->get_array()) {
        schema_branches(branch, types, root, depth + 1, out);
      }
    }
  }
}

void collect_env_fields(const json::value& schema, const json::object& types,
                        const json::value& root, int depth, EnvFields& out) {
  if (depth > 16) return;
  std::vector<const json::object*> branches;
  schema_branches(schema, types, root, 0, branches);
  for (const auto* branch : branches) {
    const auto* properties = branch->if_contains("properties");
    if (properties == nullptr || !properties->is_object()) continue;
    for (const auto& property : properties->get_object()) {
      collect_env_fields(property.value(), types, root, depth + 1,
                         out.fields[std::string(property.key())]);
    }
  }
}

/// Every variable name `fields` can produce that is not a valid, unprotected name, as problems.
void check_env_fields(const EnvFields& fields, const std::string& name_prefix,
                      const std::string& field_prefix, std::vector<std::string>& problems) {
  for (const auto& [key, sub] : fields.fields) {
    const std::string name =
        name_prefix.empty() ? ascii::upper(key) : name_prefix + "_" + ascii::upper(key);
    const std::string field = join_path(field_prefix, key);
    // A field with declared members may still hold a non-object value, passed under its name.
    if (!is_valid_env_name(name)) {
      problems.push_back(fmt::format(
          "input field '{}' would be the environment variable '{}', which is not a valid name "
          "([A-Za-z_][A-Za-z0-9_]*)",
          field, name));
    } else if (is_protected_env_name(name)) {
      problems.push_back(
          fmt::format("input field '{}' would set {}, a protected variable", field, name));
    }
    check_env_fields(sub, name, field, problems);
  }
}

std::string signal_text(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return std::to_string(signal) + (abbrev != nullptr ? std::string(" (SIG") + abbrev + ")" : "");
}

// ---------------------------------------------------------------------------------------------

/// The handler object, parsed (ScriptKind::parse); create() completes a copy for its endpoint.
struct Config final : manifest::HandlerConfig {
  std::string command;
  std::vector<std::string> args;
  InputMode input = InputMode::kStdin;
  fs::path cwd;                          ///< parsed: as written; created: absolute, inside the
                                         ///< service folder
  std::chrono::milliseconds timeout{0};  ///< 0: none of its own
  std::vector<std::pair<std::string, std::string>> env;
  EnvFields env_fields;         ///< created, env mode: the input fields the input schema declares
  bool persistent = false;      ///< one process serves many calls (handlers/script/persistent.hpp)
  std::size_t instances = 1;    ///< persistent: processes at most
  std::uint64_t max_calls = 0;  ///< persistent: calls after which a process is replaced; 0: never
};

/// The long-lived processes of a kind's handlers (persistent processes, warm jails: anything
/// with a stop()), held weakly and stopped together when the daemon stops.
class PersistentRegistry {
 public:
  template <class T>
  void add(const std::shared_ptr<T>& owner) {
    std::weak_ptr<T> weak = owner;
    std::lock_guard lock(mutex_);
    std::erase_if(entries_, [](const Entry& e) { return e.expired(); });
    entries_.push_back({[weak] { return weak.expired(); },
                        [weak] {
                          if (auto alive = weak.lock()) alive->stop();
                        }});
  }
  void stop_all() {
    std::vector<Entry> entries;
    {
      std::lock_guard lock(mutex_);
      entries.swap(entries_);
    }
    for (const auto& entry : entries) entry.stop();
  }

 private:
  struct Entry {
    std::function<bool()> expired;
    std::function<void()> stop;
  };
  std::mutex mutex_;
  std::vector<Entry> entries_;
};

/// Who is running: for the environment and the log.
struct Identity {
  std::string service;
  std::string endpoint;
  fs::path dir;
};

/// Publishes one line of the event pipe. Never fails the call.
void publish_line(std::string_view line, Publisher* publisher, const Identity& who) {
  if (trim(line).empty()) return;
  auto parsed = json::parse_text(line);
  const json::object* object = parsed.ok() ? parsed->if_object() : nullptr;
  const json::value* subscription =
      object != nullptr ? object->if_contains("subscription") : nullptr;
  if (subscription == nullptr || !subscription->is_string()) {
    spdlog::warn(
        "{}.{}: ignoring a line on the publish pipe that is not "
        "{{\"subscription\": \"<endpoint>\", \"data\": ...}}",
        who.service, who.endpoint);
    return;
  }
  const json::value* data = object->if_contains("data");
  const std::string_view target = subscription->get_string();
  if (publisher == nullptr) {
    spdlog::warn("{}.{}: nowhere to publish to '{}'", who.service, who.endpoint, target);
    return;
  }
  if (!publisher->publish(target, data != nullptr ? *data : json::value(nullptr))) {
    spdlog::warn(
        "{}.{}: ignoring a publish to '{}', which is not a subscription endpoint of the "
        "service",
        who.service, who.endpoint, target);
  }
}

json::value output_value(const std::string& out) {
  const auto text = trim(out);
  if (text.empty()) return nullptr;
  auto parsed = json::parse_text(text);
  if (parsed.ok()) return std::move(parsed).value();
  return json::string(valid_utf8(out));
}

Result<json::value> interpret(const proc::RunResult& r, std::chrono::milliseconds timeout,
                              std::size_t max_output, const std::string& command) {
  using Status = proc::RunResult::Status;
  json::object data;
  switch (r.status) {
    case Status::kSpawnFailed:
      data["command"] = command;
      return Error::make(ErrorCode::kHandlerError, "Handler could not be started: " + r.spawn_error,
                         std::move(data));
    case Status::kTimedOut:
      data["timeoutMs"] = timeout.count();
      return Error::make(ErrorCode::kTimeout,
                         "Handler timed out after " + std::to_string(timeout.count()) + " ms",
                         std::move(data));
    case Status::kOutputLimit:
      data["maxBytes"] = max_output;
      return Error::make(ErrorCode::kHandlerError,
                         "Handler output exceeds " + std::to_string(max_output) + " bytes",
                         std::move(data));
    case Status::kSignaled:
      data["signal"] = r.signal;
      data["stderr"] = valid_utf8(r.err_tail);
      return Error::make(ErrorCode::kHandlerError,
                         "Handler was killed by signal " + signal_text(r.signal), std::move(data));
    case Status::kExited:
      if (r.exit_code != 0) {
        data["exitCode"] = r.exit_code;
        data["stderr"] = valid_utf8(r.err_tail);
        return Error::make(ErrorCode::kHandlerError,
                           "Handler exited with code " + std::to_string(r.exit_code),
                           std::move(data));
      }
      return output_value(r.out);
  }
  return Error::make(ErrorCode::kInternalError, "unexpected run status");
}

/// The error a subscription producer ended with, or nullopt for a clean end.
std::optional<Error> stream_end(const proc::RunResult& r) {
  json::object data;
  data["stderr"] = valid_utf8(r.err_tail);
  if (r.status == proc::RunResult::Status::kExited) {
    if (r.exit_code == 0) return std::nullopt;
    data["exitCode"] = r.exit_code;
    return Error::make(ErrorCode::kHandlerError,
                       "Subscription handler exited with code " + std::to_string(r.exit_code),
                       std::move(data));
  }
  data["signal"] = r.signal;
  return Error::make(ErrorCode::kHandlerError,
                     "Subscription handler was killed by signal " + signal_text(r.signal),
                     std::move(data));
}

class ScriptStream final : public Stream {
 public:
  ScriptStream(std::shared_ptr<proc::LineStream> stream, std::shared_ptr<Confinement> jail)
      : stream_(std::move(stream)), jail_(std::move(jail)) {}
  ~ScriptStream() override { close(); }
  ScriptStream(const ScriptStream&) = delete;
  ScriptStream& operator=(const ScriptStream&) = delete;
  void close() override {
    stream_->stop();
    if (jail_) jail_->abandon(stream_->pid());
  }

 private:
  std::shared_ptr<proc::LineStream> stream_;
  std::shared_ptr<Confinement> jail_;
};

/// What a handler needs to start its processes; shared with its persistent processes, which may
/// outlive the handler by the calls still in flight.
struct Setup {
  Config config;
  Identity who;
  KindOptions options;
  std::shared_ptr<PersistentRegistry> registry;

  /// What a call's jail is planned from: the endpoint's permissions and its service's folder.
  struct Scope {
    manifest::Permissions permissions;
    fs::path dir;
  };
  Scope scope_of(const Call& call) const {
    Scope scope{{}, who.dir};
    if (call.endpoint != nullptr) scope.permissions = call.endpoint->effective;
    if (call.service != nullptr) scope.dir = call.service->dir;
    return scope;
  }

  /// Puts `cmd` under the jail planned from `scope` (nullptr: no jail configured, as in unit
  /// tests); its control socket is served on `executor`.
  Result<std::shared_ptr<Confinement>> confine_in(const Scope& scope, proc::Command& cmd,
                                                  const asio::any_io_executor& executor,
                                                  confine::ConfineExtras extras = {}) const {
    if (!options.jail) return std::shared_ptr<Confinement>();
    return Confinement::start(*options.jail, scope.permissions, scope.dir, config.args, cmd,
                              executor, who.service + "." + who.endpoint, extras);
  }

  /// Puts a call's `cmd` under the jail.
  Result<std::shared_ptr<Confinement>> confine(const Call& call, proc::Command& cmd) const {
    if (options.jail && !call.executor) {
      return Error::make(ErrorCode::kInternalError,
                         "no executor to serve the jail's control socket");
    }
    return confine_in(scope_of(call), cmd, call.executor);
  }

  /// The command of a call with `input`; with call = false, the command a warm jail's launcher
  /// is started with, ahead of any call: no input in its arguments or environment (the call's
  /// come with Confinement::release), and a stdin pipe when calls get their input there.
  Result<proc::Command> prepare(const json::value& input, bool publish_fd, bool call = true) const {
    Environment vars = base_environment(who.service, who.dir);
    vars["LAVS_ENDPOINT"] = who.endpoint;
    if (publish_fd) vars["LAVS_PUBLISH_FD"] = "3";
    for (const auto& [name, value] : config.env) vars[name] = value;
    if (call && config.input == InputMode::kEnv) {
      auto extra = input_to_env(input, config.env_fields);
      if (!extra.ok()) return std::move(extra).error();
      for (auto& [name, value] : extra.value()) vars[name] = std::move(value);
    }

    auto program = proc::find_program(config.command, vars["PATH"], config.cwd);
    if (!program) {
      json::object data;
      data["command"] = config.command;
      return Error::make(ErrorCode::kHandlerError, "command not found: " + config.command,
                         std::move(data));
    }

    // Checked again at each start: a file or link in the folder may have changed since the load.
    if (auto refused = program_refusal(*program, who.dir)) {
      json::object data;
      data["command"] = config.command;
      return Error::make(ErrorCode::kPermissionDenied,
                         "command '" + config.command + "' " + *refused, std::move(data));
    }

    proc::Command cmd;
    cmd.program = std::move(*program);
    cmd.argv.reserve(config.args.size() + 1);
    cmd.argv.push_back(config.command);
    for (const auto& arg : config.args) {
      if (!call) break;
      auto expanded = expand_argument(arg, input);
      if (!expanded.ok()) return std::move(expanded).error();
      cmd.argv.push_back(std::move(expanded).value());
    }
    cmd.env = environment_entries(vars);
    cmd.cwd = config.cwd;
    if (config.input == InputMode::kStdin) cmd.stdin_data = call ? json::dump(input) : "";
    cmd.event_pipe = publish_fd;
    return cmd;
  }
};

class ScriptHandler final : public Handler {
 public:
  explicit ScriptHandler(std::shared_ptr<const Setup> setup) : setup_(std::move(setup)) {}
  ~ScriptHandler() override {
    std::lock_guard lock(mutex_);
    if (persistent_) persistent_->stop();
    if (warm_) warm_->stop();
  }
  ScriptHandler(const ScriptHandler&) = delete;
  ScriptHandler& operator=(const ScriptHandler&) = delete;

  asio::awaitable<Result<json::value>> call(Call call) override {
    if (setup_->config.persistent) {
      auto persistent = persistent_for(call);
      if (!persistent.ok()) co_return std::move(persistent).error();
      const auto timeout = call.limit(setup_->config.timeout);
      auto result =
          co_await persistent.value()->call(std::move(call.input), timeout, call.publisher);
      co_return result;
    }
    const Config& config = setup_->config;
    const Identity& who = setup_->who;
    const KindOptions& options = setup_->options;
    auto command = setup_->prepare(call.input, /*publish_fd=*/true);
    if (!command.ok()) co_return std::move(command).error();
    proc::RunLimits limits;
    limits.timeout = call.limit(config.timeout);
    limits.max_stdout = options.max_output_bytes;
    limits.stderr_tail = kStderrTail;
    Publisher* publisher = call.publisher;
    auto on_event = [publisher, who](std::string_view line) { publish_line(line, publisher, who); };
    proc::RunResult result;
    std::shared_ptr<Confinement> jail;
    // A warm jail when one waits (handlers/script/warm.hpp), else the jail is made now.
    std::optional<WarmJail> warm = take_warm(call, command.value());
    if (warm) {
      jail = std::move(warm->jail);
      result = co_await asio::co_spawn(
          call.executor,
          proc::run_started(std::move(warm->child), std::move(command.value().stdin_data), limits,
                            on_event),
          asio::use_awaitable);
    } else {
      auto confinement = setup_->confine(call, command.value());
      if (!confinement.ok()) co_return std::move(confinement).error();
      jail = std::move(confinement).value();
      if (call.executor) {
        result = co_await asio::co_spawn(call.executor,
                                         proc::run(std::move(command).value(), limits, on_event),
                                         asio::use_awaitable);
      } else {
        result = co_await proc::run(std::move(command).value(), limits, on_event);
      }
    }
    if (result.status != proc::RunResult::Status::kExited || result.exit_code != 0) {
      spdlog::debug("{}.{}: script ended with status {} in {} us", who.service, who.endpoint,
                    static_cast<int>(result.status), result.duration.count());
    }
    if (jail) {
      if (auto verdict = jail->finish(result)) {
        if (verdict->code == ErrorCode::kHandlerError && verdict->data.is_object()) {
          verdict->data.get_object()["stderr"] = valid_utf8(result.err_tail);
        }
        co_return std::move(*verdict);
      }
    }
    co_return interpret(result, limits.timeout, options.max_output_bytes, config.command);
  }

  Result<std::shared_ptr<Stream>> open_stream(Call call, StreamSink sink) override {
    const Identity& who = setup_->who;
    const Config& config = setup_->config;
    if (!call.executor) {
      return Error::make(ErrorCode::kInternalError, "no executor to run the subscription on");
    }
    auto command = setup_->prepare(call.input, /*publish_fd=*/false);
    if (!command.ok()) return std::move(command).error();
    auto confinement = setup_->confine(call, command.value());
    if (!confinement.ok()) return std::move(confinement).error();
    std::shared_ptr<Confinement> jail = std::move(confinement).value();
    auto shared_sink = std::make_shared<StreamSink>(std::move(sink));
    proc::LineStream::Callbacks callbacks;
    callbacks.on_line = [shared_sink](const std::string& line) {
      if (trim(line).empty() || !shared_sink->on_data) return;
      auto parsed = json::parse_text(line);
      shared_sink->on_data(parsed.ok() ? std::move(parsed).value()
                                       : json::value(json::string(valid_utf8(line))));
    };
    callbacks.on_exit = [shared_sink, who, jail](const proc::RunResult& r) {
      std::optional<Error> error;
      if (jail) error = jail->finish(r);
      if (!error) error = stream_end(r);
      if (error) spdlog::info("{}.{}: {}", who.service, who.endpoint, error->message);
      if (shared_sink->on_end) shared_sink->on_end(std::move(error));
    };
    auto stream =
        proc::start_line_stream(call.executor, std::move(command).value(), std::move(callbacks));
    if (!stream.ok()) {
      json::object data;
      data["command"] = config.command;
      return Error::make(ErrorCode::kHandlerError,
                         "Subscription handler could not be started: " + stream.error().message,
                         std::move(data));
    }
    return std::shared_ptr<Stream>(
        std::make_shared<ScriptStream>(std::move(stream).value(), std::move(jail)));
  }

 private:
  /// The endpoint's persistent processes, made at its first call (which gives the executor and
  /// the permissions they run under).
  Result<std::shared_ptr<Persistent>> persistent_for(const Call& call) {
    std::lock_guard lock(mutex_);
    if (persistent_) return persistent_;
    asio::any_io_executor executor =
        setup_->options.executor ? setup_->options.executor : call.executor;
    if (!executor) {
      return Error::make(ErrorCode::kInternalError, "no executor to run the persistent process on");
    }
    PersistentSpec spec;
    spec.label = setup_->who.service + "." + setup_->who.endpoint;
    spec.instances = setup_->config.instances;
    spec.max_calls = setup_->config.max_calls;
    spec.max_line = setup_->options.max_output_bytes;
    auto prepare = [setup = setup_, scope = setup_->scope_of(call),
                    executor](proc::Command& cmd) -> Result<std::shared_ptr<Confinement>> {
      auto command = setup->prepare(json::value(nullptr), /*publish_fd=*/false);
      if (!command.ok()) return std::move(command).error();
      cmd = std::move(command).value();
      cmd.stdin_data.reset();
      cmd.env.push_back("LAVS_PERSISTENT=1");
      return setup->confine_in(scope, cmd, executor);
    };
    persistent_ = std::make_shared<Persistent>(executor, std::move(spec), std::move(prepare));
    if (setup_->registry) setup_->registry->add(persistent_);
    return persistent_;
  }

  /// A warm jail for `cmd` handed its call's argv and environment, or nullopt (no jail configured,
  /// none waiting, or it could not take the call: then the call makes its jail itself).
  std::optional<WarmJail> take_warm(const Call& call, const proc::Command& cmd) {
    // Nothing to build ahead without a jail (unit tests, --insecure-no-sandbox).
    if (!setup_->options.jail || setup_->options.jail->insecure() || !call.executor) {
      return std::nullopt;
    }
    std::shared_ptr<WarmJails> jails;
    {
      std::lock_guard lock(mutex_);
      if (!warm_) {
        warm_ = make_warm_jails(call);
        if (setup_->registry) setup_->registry->add(warm_);
      }
      jails = warm_;
    }
    std::optional<WarmJail> warm = jails->take();
    if (!warm) return std::nullopt;
    // The warm jail must be the one this call would get now: planned the same way against the
    // same files (a file a negated pattern hides replaced since would have lost its cover).
    const Setup::Scope scope = setup_->scope_of(call);
    auto now = Confinement::plan_fingerprint(*setup_->options.jail, scope.permissions, scope.dir,
                                             setup_->config.args, cmd);
    if (warm->program != cmd.program || !now.ok() || now.value() != warm->jail->fingerprint()) {
      spdlog::debug("{}.{}: warm jail not used: what it was planned from has changed",
                    setup_->who.service, setup_->who.endpoint);
      WarmJails::drop(std::move(*warm), call.executor);
      return std::nullopt;
    }
    if (auto released = warm->jail->release(cmd.argv, cmd.env); !released.ok()) {
      spdlog::warn("{}.{}: warm jail not used: {}", setup_->who.service, setup_->who.endpoint,
                   released.error().message);
      WarmJails::drop(std::move(*warm), call.executor);
      return std::nullopt;
    }
    return warm;
  }

  /// The endpoint's warm jails, made at its first call (which gives the executor and the
  /// permissions they are built for).
  std::shared_ptr<WarmJails> make_warm_jails(const Call& call) const {
    auto make = [setup = setup_, scope = setup_->scope_of(call),
                 executor = call.executor]() -> Result<WarmJail> {
      // The launcher's own command line holds nothing of any input: the call's argv and
      // environment come with release().
      auto command = setup->prepare(json::value(nullptr), /*publish_fd=*/true, /*call=*/false);
      if (!command.ok()) return std::move(command).error();
      proc::Command cmd = std::move(command).value();
      confine::ConfineExtras extras;
      extras.exec_on_request = true;
      auto jail = setup->confine_in(scope, cmd, executor, extras);
      if (!jail.ok()) return std::move(jail).error();
      if (!jail.value() || !jail.value()->confined()) {
        return Error::make(ErrorCode::kInternalError, "the jail is off (--insecure-no-sandbox)");
      }
      auto started = proc::start_ahead(cmd);
      if (!started.ok()) return std::move(started).error();
      WarmJail warm;
      warm.child = std::move(started).value();
      warm.jail = std::move(jail).value();
      warm.program = cmd.program;
      return warm;
    };
    return std::make_shared<WarmJails>(call.executor, std::move(make),
                                       setup_->who.service + "." + setup_->who.endpoint);
  }

  std::shared_ptr<const Setup> setup_;
  std::mutex mutex_;  ///< guards persistent_ and warm_
  std::shared_ptr<Persistent> persistent_;
  std::shared_ptr<WarmJails> warm_;
};

bool inside(const fs::path& path, const fs::path& base) {
  const auto relative = path.lexically_relative(base);
  return !relative.empty() && *relative.begin() != "..";
}

class ScriptKind final : public Kind {
 public:
  explicit ScriptKind(const KindOptions& options) : options_(options) {}

  std::string_view name() const override { return "script"; }
  std::vector<std::string_view> keys() const override {
    return {"command", "args", "input", "cwd", "env", "timeout", "persistent"};
  }

  std::shared_ptr<const manifest::HandlerConfig> parse(const json::object& handler,
                                                       const std::string& path,
                                                       Problems& problems) const override {
    ConfigReader in(handler, path, problems);
    auto config = std::make_shared<Config>();
    const std::string kNul = "must not contain NUL characters";

    if (const auto* command = in.get("command")) {
      if (!command->is_string() || command->get_string().empty()) {
        in.add("command", "must be a non-empty string");
      } else if (has_nul(command->get_string())) {
        in.add("command", kNul);
      } else {
        config->command = std::string(command->get_string());
      }
    } else {
      in.add("command", "is required");
    }

    if (const auto* args = in.get("args")) {
      if (!args->is_array()) {
        in.add("args", "must be an array of strings");
      } else {
        const auto& array = args->get_array();
        for (std::size_t i = 0; i < array.size(); ++i) {
          const std::string item = index_path("args", i);
          if (!array[i].is_string()) {
            in.add(item, "must be a string");
          } else if (has_nul(array[i].get_string())) {
            in.add(item, kNul);
          } else {
            config->args.emplace_back(array[i].get_string());
          }
        }
      }
    }

    if (const auto* input = in.get("input")) {
      const auto mode = input->is_string() ? parse_mode(input->get_string()) : std::nullopt;
      if (!mode) {
        in.add("input", "must be one of \"stdin\", \"args\", \"env\"");
      } else {
        config->input = *mode;
      }
    }

    if (const auto* cwd = in.get("cwd")) {
      if (!cwd->is_string()) {
        in.add("cwd", "must be a string (a folder relative to the service folder)");
      } else if (has_nul(cwd->get_string())) {
        in.add("cwd", kNul);
      } else {
        // Absolute paths are checked against the folder when the handler is created.
        const fs::path folder(std::string(cwd->get_string()));
        config->cwd = folder;
        const auto normal = folder.lexically_normal();
        if (folder.is_relative() && !normal.empty() && *normal.begin() == "..") {
          in.add("cwd", "must stay inside the service folder");
        }
      }
    }

    config->timeout = in.milliseconds("timeout");

    if (const auto* persistent = in.get("persistent")) {
      parse_persistent(*persistent, *config, in);
    }

    if (const auto* env = in.get("env")) {
      if (!env->is_object()) {
        in.add("env", "must be an object of strings");
      } else {
        for (const auto& member : env->get_object()) {
          const std::string key(member.key());
          const std::string field = join_path("env", key);
          if (!is_valid_env_name(key)) {
            in.add(field, "is not a valid environment variable name");
          } else if (!member.value().is_string()) {
            in.add(field, "must be a string");
          } else if (has_nul(member.value().get_string())) {
            in.add(field, kNul);
          } else {
            config->env.emplace_back(key, std::string(member.value().get_string()));
          }
        }
      }
    }
    return in.result(std::move(config));
  }

  Result<std::unique_ptr<Handler>> create(const manifest::Manifest& service,
                                          const manifest::Endpoint& endpoint) const override {
    HEARTH_ASSIGN_OR_RETURN(auto parsed, config_of<Config>(*this, endpoint));
    Config config = *parsed;
    if (config.input == InputMode::kEnv) {
      config.env_fields = env_fields_of(service, endpoint.id);
      std::vector<std::string> problems;
      check_env_fields(config.env_fields, "", "", problems);
      if (!problems.empty()) {
        std::string message = "input \"env\" cannot pass the input schema's fields: ";
        for (std::size_t i = 0; i < problems.size(); ++i) {
          message += (i == 0 ? "" : "; ") + problems[i];
        }
        return Error::make(ErrorCode::kInternalError, std::move(message));
      }
    }

    std::error_code ec;
    fs::path base = fs::weakly_canonical(service.dir, ec);
    if (ec) base = service.dir.lexically_normal();
    config.cwd = base;
    if (!parsed->cwd.empty()) {
      const std::string written = parsed->cwd.string();
      // weakly_canonical resolves symbolic links too: a link inside the folder pointing out of it
      // is refused like `..`.
      fs::path resolved = fs::weakly_canonical(base / written, ec);
      if (ec) resolved = (base / written).lexically_normal();
      if (!inside(resolved, base)) {
        return Error::make(ErrorCode::kInternalError,
                           "cwd '" + written + "' is outside the service folder");
      }
      config.cwd = resolved;
    }

    // The command must be this service's code or a system program: the jail lets the handler
    // read its program's folder, which must never be another service's.
    std::string path_env(kSystemPath);
    for (const auto& [name, value] : config.env) {
      if (name == "PATH") path_env = value;
    }
    if (auto refused = command_refusal(config.command, path_env, config.cwd, base)) {
      return Error::make(ErrorCode::kInternalError, *refused);
    }

    auto setup = std::make_shared<Setup>();
    setup->config = std::move(config);
    setup->who = Identity{service.name, endpoint.id, base};
    setup->options = options_;
    setup->registry = registry_;
    return std::unique_ptr<Handler>(std::make_unique<ScriptHandler>(std::move(setup)));
  }

  void shutdown() override { registry_->stop_all(); }

 private:
  /// `persistent`: true, false or {instances, maxCalls}; with it, the input must come on stdin
  /// (the protocol's requests) and `args` may hold no placeholder (one process, many inputs).
  static void parse_persistent(const json::value& value, Config& config, ConfigReader& in) {
    if (value.is_bool()) {
      config.persistent = value.get_bool();
    } else if (value.is_object()) {
      config.persistent = true;
      const auto& object = value.get_object();
      for (const auto& member : object) {
        const std::string key(member.key());
        const std::string field = join_path("persistent", key);
        const auto& v = member.value();
        const bool whole = v.is_int64() || v.is_uint64() ||
                           (v.is_double() && std::floor(v.get_double()) == v.get_double());
        const double number = v.is_double()   ? v.get_double()
                              : v.is_int64()  ? static_cast<double>(v.get_int64())
                              : v.is_uint64() ? static_cast<double>(v.get_uint64())
                                              : -1.0;
        if (key == "instances") {
          if (!whole || number < 1 || number > 16) {
            in.add(field, "must be a whole number from 1 to 16");
          } else {
            config.instances = static_cast<std::size_t>(number);
          }
        } else if (key == "maxCalls") {
          if (!whole || number < 0 || number > 1e15) {
            in.add(field, "must be a whole number >= 0 (0: no limit)");
          } else {
            config.max_calls = static_cast<std::uint64_t>(number);
          }
        } else {
          in.add(field, "is not a persistent-mode setting (instances, maxCalls)");
        }
      }
    } else {
      in.add("persistent", "must be true, false or an object {instances, maxCalls}");
      return;
    }
    if (!config.persistent) return;
    if (config.input != InputMode::kStdin) {
      in.add("persistent",
             "a persistent process receives each call's input as a request line on its stdin: "
             "\"input\" must be \"stdin\" (or absent)");
    }
    for (std::size_t i = 0; i < config.args.size(); ++i) {
      if (config.args[i].find("{{") != std::string::npos) {
        in.add(index_path("args", i),
               "cannot hold a {{placeholder}} in persistent mode: one process serves every "
               "input");
      }
    }
  }

  KindOptions options_;
  std::shared_ptr<PersistentRegistry> registry_ = std::make_shared<PersistentRegistry>();
};

}  // namespace

std::unique_ptr<Kind> make_kind(const KindOptions& options) {
  return std::make_unique<ScriptKind>(options);
}

namespace {

/// expand_placeholders; `nul_field` (when given) gets the path of the first value inserted that
/// holds a NUL character.
std::string expand(std::string_view arg, const json::value& input, std::string* nul_field) {
  // Same matches as the reference runtime's /\{\{([^}]+)\}\}/g: at the earliest "{{", the text up
  // to the first '}' must be non-empty and followed by a second '}'.
  std::string out;
  std::size_t i = 0;
  while (i < arg.size()) {
    const auto open = arg.find("{{", i);
    if (open == std::string_view::npos) {
      out.append(arg.substr(i));
      break;
    }
    const auto close = arg.find('}', open + 2);
    if (close != std::string_view::npos && close > open + 2 && close + 1 < arg.size() &&
        arg[close + 1] == '}') {
      out.append(arg.substr(i, open - i));
      if (const auto* value = lookup_path(input, trim(arg.substr(open + 2, close - open - 2)))) {
        std::string text = value_text(*value);
        if (nul_field != nullptr && nul_field->empty() && has_nul(text)) {
          *nul_field = std::string(trim(arg.substr(open + 2, close - open - 2)));
        }
        out += text;
      }
      i = close + 2;
    } else {
      out.append(arg.substr(i, open + 1 - i));
      i = open + 1;
    }
  }
  return out;
}

}  // namespace

std::string expand_placeholders(std::string_view arg, const json::value& input) {
  return expand(arg, input, nullptr);
}

Result<std::string> expand_argument(std::string_view arg, const json::value& input) {
  std::string nul_field;
  std::string out = expand(arg, input, &nul_field);
  if (!nul_field.empty()) {
    json::object data;
    data["field"] = nul_field;
    data["constraint"] = "no-nul";
    return Error::make(ErrorCode::kInvalidParams,
                       "input field '" + nul_field +
                           "' contains a NUL character, which a command-line argument cannot hold",
                       std::move(data));
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> input_to_env(const json::value& input,
                                                                      const EnvFields& declared) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!input.is_object()) return out;
  HEARTH_RETURN_IF_ERROR(flatten_env(input.get_object(), declared, "", "", out));
  return out;
}

EnvFields env_fields_from_schema(const json::value& schema, const json::object& types) {
  EnvFields out;
  collect_env_fields(schema, types, schema, 0, out);
  return out;
}

EnvFields env_fields_of(const manifest::Manifest& service, std::string_view endpoint_id) {
  const auto* root = service.raw.if_object();
  const auto* endpoints = root != nullptr ? root->if_contains("endpoints") : nullptr;
  if (endpoints == nullptr || !endpoints->is_array()) return {};
  for (const auto& endpoint : endpoints->get_array()) {
    const auto* object = endpoint.if_object();
    const auto* id = object != nullptr ? object->if_contains("id") : nullptr;
    if (id == nullptr || !id->is_string() || id->get_string() != endpoint_id) continue;
    const auto* schema = object->if_contains("schema");
    const auto* input = schema != nullptr && schema->is_object()
                            ? schema->get_object().if_contains("input")
                            : nullptr;
    return input != nullptr ? env_fields_from_schema(*input, service.types) : EnvFields{};
  }
  return {};
}

bool is_valid_env_name(std::string_view name) {
  if (name.empty()) return false;
  const auto first = name.front();
  if (!(first == '_' || (first >= 'A' && first <= 'Z') || (first >= 'a' && first <= 'z'))) {
    return false;
  }
  return name.find_first_not_of(
             "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") ==
         std::string_view::npos;
}

bool is_protected_env_name(std::string_view name) {
  // Variables that make a loader, shell or interpreter run code or read files chosen by whoever
  // sets them, plus the ones hearth itself defines.
  static constexpr std::string_view kExact[] = {
      "PATH",          "HOME",
      "BASH_ENV",      "ENV",
      "IFS",           "SHELLOPTS",
      "BASHOPTS",      "PS4",
      "NODE_OPTIONS",  "NODE_PATH",
      "PERLLIB",       "GCONV_PATH",
      "LOCPATH",       "NLSPATH",
      "HOSTALIASES",   "GLIBC_TUNABLES",
      "TMPDIR",        "JAVA_TOOL_OPTIONS",
      "_JAVA_OPTIONS",
  };
  static constexpr std::string_view kPrefixes[] = {
      "LD_", "BASH_FUNC_", "PYTHON", "PERL5", "RUBY", "MALLOC_", "LAVS_",
  };
  const std::string upper = ascii::upper(name);
  for (auto exact : kExact) {
    if (upper == exact) return true;
  }
  for (auto prefix : kPrefixes) {
    if (std::string_view(upper).substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

}  // namespace hearth::handlers::script
