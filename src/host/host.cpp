#include "host/host.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/this_coro.hpp>
#include <cerrno>
#include <cstring>
#include <set>

#include "common/beneath.hpp"
#include "common/on_strand.hpp"
#include "egress/allowlist.hpp"
#include "jail/glob.hpp"

namespace hearth::host {
namespace asio = boost::asio;

namespace {

Error invalid_param(std::string message, std::string_view field, std::string_view constraint) {
  json::object data;
  data["field"] = field;
  data["constraint"] = constraint;
  return Error::make(ErrorCode::kInvalidParams, "Invalid params: " + message, std::move(data));
}

/// The request's params as an object; absent params are an empty object. LAVS methods take
/// their parameters by name.
Result<json::object> params_object(const rpc::Request& request) {
  if (request.params.is_null()) return json::object{};
  if (!request.params.is_object()) {
    return invalid_param("params must be an object (parameters by name)", "params", "type");
  }
  return request.params.get_object();
}

/// A string member: nullopt when absent and not required.
Result<std::optional<std::string>> string_param(const json::object& params, std::string_view name,
                                                bool required) {
  const json::value* v = params.if_contains(name);
  if (v == nullptr || v->is_null()) {
    if (required) return invalid_param("'" + std::string(name) + "' is required", name, "required");
    return std::optional<std::string>{};
  }
  if (!v->is_string()) {
    return invalid_param("'" + std::string(name) + "' must be a string", name, "type");
  }
  return std::optional<std::string>(std::string(v->get_string()));
}

std::string base64(std::string_view in) {
  static constexpr char kTable[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                 (static_cast<unsigned char>(in[i + 1]) << 8) | static_cast<unsigned char>(in[i + 2]);
    out += kTable[(v >> 18) & 63];
    out += kTable[(v >> 12) & 63];
    out += kTable[(v >> 6) & 63];
    out += kTable[v & 63];
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += kTable[(v >> 18) & 63];
    out += kTable[(v >> 12) & 63];
    out += i + 1 < in.size() ? kTable[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    unsigned cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (std::size_t k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

Error permission_denied(std::string message, std::string_view path) {
  json::object data;
  data["path"] = path;
  return Error::make(ErrorCode::kPermissionDenied, "Permission denied: " + message, std::move(data));
}

}  // namespace

Error invalid_params_error(const std::vector<schema::Violation>& violations) {
  json::array errors;
  for (const auto& v : violations) {
    errors.push_back(json::object{{"field", v.field}, {"constraint", v.constraint}, {"message", v.message}});
  }
  const auto& first = violations.front();
  json::object data;
  data["field"] = first.field;
  data["constraint"] = first.constraint;
  data["errors"] = std::move(errors);
  return Error::make(ErrorCode::kInvalidParams, "Invalid params: " + first.message, std::move(data));
}

namespace {
handlers::KindOptions with_executor(handlers::KindOptions kinds, asio::any_io_executor executor) {
  if (!kinds.executor) kinds.executor = std::move(executor);
  return kinds;
}
}  // namespace

Host::Host(HostOptions options, asio::any_io_executor executor)
    : options_(options),
      executor_(std::move(executor)),
      registry_(handlers::make_builtin_registry(with_executor(options.kinds, executor_))),
      compiler_(schema::make_draft7_compiler()),
      blocking_(std::make_unique<asio::thread_pool>(1)) {}

Host::~Host() {
  shutdown();
  blocking_->join();
}

namespace {
/// Counts down `budget` over the values of `v`; false once it ran out.
bool within(const json::value& v, std::size_t& budget) {
  const std::size_t cost = v.is_string() ? 1 + v.get_string().size() / 64 : 1;
  if (cost > budget) return false;
  budget -= cost;
  if (v.is_array()) {
    for (const auto& item : v.get_array()) {
      if (!within(item, budget)) return false;
    }
  } else if (v.is_object()) {
    for (const auto& member : v.get_object()) {
      if (member.key().size() / 64 >= budget || !within(member.value(), budget)) return false;
    }
  }
  return true;
}
}  // namespace

bool is_large(const json::value& v, std::size_t nodes) {
  std::size_t budget = nodes;
  return !within(v, budget);
}

asio::awaitable<Result<json::value>> Host::run_blocking(std::function<Result<json::value>()> work) {
  auto job = [](std::function<Result<json::value>()> w) -> asio::awaitable<Result<json::value>> {
    co_return w();
  };
  co_return co_await hearth::on(blocking_->get_executor(), job(std::move(work)));
}

asio::awaitable<Result<json::value>> Host::prepare_input_off_io(const manifest::Endpoint& endpoint,
                                                                json::value input) {
  if (!endpoint.input_schema || !is_large(input)) co_return prepare_input(endpoint, std::move(input));
  co_return co_await run_blocking(
      [this, &endpoint, in = std::move(input)]() mutable { return prepare_input(endpoint, std::move(in)); });
}

std::vector<std::string> Host::jail_notes(const manifest::Manifest& m) const {
  std::vector<std::string> notes;
  const auto& jail = options_.kinds.jail;
  if (!jail) return notes;
  if (jail->insecure()) {
    notes.push_back(m.name + ": --insecure-no-sandbox: handler processes run WITHOUT the jail; "
                             "fileAccess, networkAccess and maxMemory are not enforced");
    return notes;
  }
  const bool memory_cgroup = jail->capabilities().has("memory cgroup");
  for (const auto& ep : m.endpoints) {
    const std::string who = m.name + "." + ep.id;
    jail::Request request;
    request.network_access = ep.effective.network_access;
    for (const auto& name : jail::Jail::required_mechanisms(request)) {
      if (!jail->capabilities().has(name))
        notes.push_back(who + ": calls will be refused (-32001): the jail needs " + name +
                        ", which this machine does not offer (see `hearth doctor`)");
    }
    if (request.network_access) {
      if (const auto* all = std::get_if<bool>(&*request.network_access); all && *all)
        notes.push_back(who + ": networkAccess true gives the handler the host's network "
                              "(discouraged: list the hosts it needs instead)");
    }
    if (ep.effective.max_memory && !memory_cgroup)
      notes.push_back(who + ": maxMemory is enforced per process (RLIMIT_AS) only: no writable "
                            "memory cgroup on this machine");
  }
  return notes;
}

std::unique_ptr<Host> Host::load(const std::vector<std::filesystem::path>& paths, HostOptions options,
                                 asio::any_io_executor executor, LoadReport& report) {
  std::unique_ptr<Host> host(new Host(options, std::move(executor)));
  std::map<std::string, std::filesystem::path> names;
  for (const auto& path : paths) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      report.failures.push_back({path, {{"", "no such file or folder"}}});
      continue;
    }
    auto dirs = manifest::discover(path);
    if (dirs.empty()) {
      report.failures.push_back({path, {{"", "no lavs.json here or in its immediate subfolders"}}});
      continue;
    }
    for (const auto& dir : dirs) {
      Problems problems;
      auto loaded = manifest::load(dir, *host->registry_, *host->compiler_, problems);
      std::filesystem::path file = dir / "lavs.json";
      if (!loaded) {
        report.failures.push_back({file, std::move(problems)});
        continue;
      }
      if (auto it = names.find(loaded->name); it != names.end()) {
        report.failures.push_back(
            {file, {{"name", "service name '" + loaded->name + "' is already served from " +
                                 it->second.string()}}});
        continue;
      }
      names[loaded->name] = dir;

      auto service = std::make_unique<Service>();
      service->manifest = std::move(*loaded);
      const auto& m = service->manifest;
      std::set<std::string, std::less<>> subscription_ids;
      for (std::size_t i = 0; i < m.endpoints.size(); ++i) {
        const auto& ep = m.endpoints[i];
        const handlers::Kind* kind = host->registry_->find(ep.handler_type);
        if (kind == nullptr) {  // check() already refused it; kept as a guard
          problems.push_back({index_path("endpoints", i) + ".handler.type", "unknown handler type"});
          continue;
        }
        auto handler = kind->create(m, ep);
        if (!handler.ok()) {
          problems.push_back({index_path("endpoints", i) + ".handler", handler.error().message});
          continue;
        }
        service->handlers[ep.id] = std::move(handler).value();
        if (ep.method == manifest::Method::kSubscription) subscription_ids.insert(ep.id);
      }
      // networkAccess host lists must be enforceable by the egress proxy.
      auto check_hosts = [&](const manifest::Permissions& p, const std::string& where) {
        if (!p.network_access) return;
        const auto* hosts = std::get_if<std::vector<std::string>>(&*p.network_access);
        if (hosts == nullptr) return;
        auto parsed = egress::AllowList::parse(*hosts);
        if (!parsed.ok()) problems.push_back({where + ".networkAccess", parsed.error().message});
      };
      check_hosts(m.permissions, "permissions");
      for (std::size_t i = 0; i < m.endpoints.size(); ++i)
        check_hosts(m.endpoints[i].permissions, index_path("endpoints", i) + ".permissions");
      if (!problems.empty()) {
        report.failures.push_back({file, std::move(problems)});
        continue;
      }

      // Say plainly, at start, what the jail will do with each endpoint's permissions.
      for (const auto& line : host->jail_notes(m)) report.warnings.push_back(line);

      service->hub = std::make_shared<SubscriptionHub>(m.name, options.subscription_limits);
      service->hub->set_endpoints(std::move(subscription_ids));
      host->services_.push_back(std::move(service));
    }
  }
  if (report.failures.empty() && host->services_.empty()) {
    report.failures.push_back({"", {{"", "no service to serve"}}});
  }
  if (!report.failures.empty()) return nullptr;
  return host;
}

void Host::shutdown() {
  for (auto& s : services_) {
    if (s->hub) s->hub->close_all();
  }
  registry_->shutdown();
}

Result<const Host::Service*> Host::find_service(std::string_view name) const {
  if (name.empty()) {
    if (services_.size() == 1) return services_.front().get();
    json::array names;
    for (const auto& s : services_) names.push_back(json::value(s->manifest.name));
    json::object data;
    data["field"] = "service";
    data["constraint"] = "required";
    data["services"] = std::move(names);
    return Error::make(ErrorCode::kInvalidParams,
                       "Invalid params: 'service' is required when several services are served",
                       std::move(data));
  }
  for (const auto& s : services_) {
    if (s->manifest.name == name) return s.get();
  }
  json::array names;
  for (const auto& s : services_) names.push_back(json::value(s->manifest.name));
  json::object data;
  data["field"] = "service";
  data["constraint"] = "exists";
  data["service"] = name;
  data["services"] = std::move(names);
  return Error::make(ErrorCode::kInvalidParams,
                     "Invalid params: no service named '" + std::string(name) + "'", std::move(data));
}

std::chrono::milliseconds Host::timeout_for(const manifest::Endpoint& endpoint) const {
  return endpoint.effective.max_execution_time.value_or(options_.default_timeout);
}

Result<json::value> Host::prepare_input(const manifest::Endpoint& endpoint, json::value input) const {
  // No input is an empty object, so that `required` and `default` behave as clients expect.
  if (input.is_null()) input = json::object{};
  if (endpoint.input_schema) {
    endpoint.input_schema->apply_defaults(input);
    auto violations = endpoint.input_schema->validate(input);
    if (!violations.empty()) return invalid_params_error(violations);
  }
  return input;
}

namespace {
Error endpoint_not_found(const manifest::Manifest& m, std::string_view endpoint) {
  json::array ids;
  for (const auto& ep : m.endpoints) ids.push_back(json::value(ep.id));
  json::object data;
  data["service"] = m.name;
  data["endpoint"] = endpoint;
  data["endpoints"] = std::move(ids);
  return Error::make(ErrorCode::kMethodNotFound,
                     "Method not found: no endpoint '" + std::string(endpoint) + "' in service '" +
                         m.name + "'",
                     std::move(data));
}
}  // namespace

asio::awaitable<Result<json::value>> Host::call(const Service& service, std::string_view endpoint_id,
                                                json::value input) {
  const manifest::Endpoint* endpoint = service.manifest.find(endpoint_id);
  if (endpoint == nullptr) co_return endpoint_not_found(service.manifest, endpoint_id);
  if (endpoint->method == manifest::Method::kSubscription) {
    co_return invalid_param("endpoint '" + endpoint->id + "' is a subscription: use lavs/subscribe",
                            "endpoint", "method");
  }
  auto prepared = co_await prepare_input_off_io(*endpoint, std::move(input));
  if (!prepared.ok()) co_return std::move(prepared).error();

  auto handler = service.handlers.find(endpoint->id);
  handlers::Call call;
  call.service = &service.manifest;
  call.endpoint = endpoint;
  call.input = std::move(prepared).value();
  call.timeout = timeout_for(*endpoint);
  call.publisher = service.hub.get();
  call.executor = executor_;
  auto result = co_await handler->second->call(std::move(call));
  if (!result.ok() || !endpoint->output_schema) co_return result;
  if (!is_large(result.value())) co_return check_output(service, *endpoint, std::move(result));
  co_return co_await run_blocking([this, &service, endpoint, r = std::move(result)]() mutable {
    return check_output(service, *endpoint, std::move(r));
  });
}

Result<json::value> Host::check_output(const Service& service, const manifest::Endpoint& endpoint,
                                       Result<json::value> result) const {
  auto violations = endpoint.output_schema->validate(result.value());
  if (violations.empty()) return result;
  json::array errors;
  for (const auto& v : violations) {
    errors.push_back(
        json::object{{"field", v.field}, {"constraint", v.constraint}, {"message", v.message}});
  }
  spdlog::warn("{}.{}: output does not match the output schema: {} {}", service.manifest.name,
               endpoint.id, violations.front().field, violations.front().message);
  json::object data;
  data["endpoint"] = endpoint.id;
  data["errors"] = std::move(errors);
  return Error::make(ErrorCode::kInternalError, "Invalid output from handler", std::move(data));
}

void Host::audit(const rpc::Request& request, std::string_view service, std::string_view endpoint,
                 std::chrono::steady_clock::time_point start, const std::optional<ErrorCode>& error) {
  if (audit_ == nullptr) return;
  AuditRecord record;
  record.service = service;
  record.endpoint = endpoint;
  record.method = request.method;
  record.transport = request.session ? request.session->transport() : "inproc";
  record.duration =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
  record.error = error;
  audit_->record(record);
}

asio::awaitable<Result<json::value>> Host::rpc_call(const rpc::Request& request) {
  auto start = std::chrono::steady_clock::now();
  std::string service_name, endpoint_name;
  auto run = [&]() -> asio::awaitable<Result<json::value>> {
    auto params = params_object(request);
    if (!params.ok()) co_return std::move(params).error();
    auto service = string_param(*params, "service", false);
    if (!service.ok()) co_return std::move(service).error();
    auto endpoint = string_param(*params, "endpoint", true);
    if (!endpoint.ok()) co_return std::move(endpoint).error();
    service_name = service->value_or("");
    endpoint_name = **endpoint;
    auto found = find_service(service_name);
    if (!found.ok()) co_return std::move(found).error();
    service_name = (*found)->manifest.name;
    json::value input = nullptr;
    if (const json::value* in = params->if_contains("input")) input = *in;
    co_return co_await call(**found, endpoint_name, std::move(input));
  };
  auto result = co_await run();
  audit(request, service_name, endpoint_name, start,
        result.ok() ? std::nullopt : std::optional<ErrorCode>(result.error().code));
  co_return result;
}

asio::awaitable<Result<json::value>> Host::rpc_subscribe(const rpc::Request& request) {
  auto start = std::chrono::steady_clock::now();
  std::string service_name, endpoint_name;
  // Awaited at once below, so the references it captures outlive it.
  auto run = [&]() -> asio::awaitable<Result<json::value>> {
    if (!request.session || !request.session->can_push()) {
      json::object data;
      data["transport"] = request.session ? request.session->transport() : "inproc";
      data["hint"] = "subscribe over the WebSocket endpoint /ws";
      co_return Error::make(ErrorCode::kMethodNotFound,
                         "Method not found: lavs/subscribe is only available over WebSocket",
                         std::move(data));
    }
    auto params = params_object(request);
    if (!params.ok()) co_return std::move(params).error();
    auto service = string_param(*params, "service", false);
    if (!service.ok()) co_return std::move(service).error();
    auto endpoint = string_param(*params, "endpoint", true);
    if (!endpoint.ok()) co_return std::move(endpoint).error();
    service_name = service->value_or("");
    endpoint_name = **endpoint;
    auto found = find_service(service_name);
    if (!found.ok()) co_return std::move(found).error();
    const Service& svc = **found;
    service_name = svc.manifest.name;
    const manifest::Endpoint* ep = svc.manifest.find(endpoint_name);
    if (ep == nullptr) co_return endpoint_not_found(svc.manifest, endpoint_name);
    if (ep->method != manifest::Method::kSubscription) {
      co_return invalid_param("endpoint '" + ep->id + "' is a " + std::string(manifest::to_string(ep->method)) +
                               ", not a subscription: use lavs/call",
                           "endpoint", "method");
    }
    json::value input = nullptr;
    if (const json::value* in = params->if_contains("input")) input = *in;
    auto prepared = co_await prepare_input_off_io(*ep, std::move(input));
    if (!prepared.ok()) co_return std::move(prepared).error();
    handlers::Handler* handler = svc.handlers.find(ep->id)->second.get();
    const json::value& in = prepared.value();
    auto id = svc.hub->subscribe(
        request.session, ep->id, in,
        [&](handlers::StreamSink sink) {
          handlers::Call call;
          call.service = &svc.manifest;
          call.endpoint = ep;
          call.input = in;
          call.timeout = timeout_for(*ep);
          call.publisher = svc.hub.get();
          call.executor = executor_;
          return handler->open_stream(std::move(call), std::move(sink));
        },
        handler->shares_streams());
    if (!id.ok()) co_return std::move(id).error();
    // Items flow once the client has the subscription id: right after this answer is written.
    std::weak_ptr<SubscriptionHub> hub = svc.hub;
    auto activate = [hub, sub = *id] {
      if (auto h = hub.lock()) h->activate(sub);
    };
    if (request.after_reply != nullptr) {
      request.after_reply->push_back(std::move(activate));
    } else {
      activate();
    }
    json::object out;
    out["subscriptionId"] = *id;
    co_return json::value(std::move(out));
  };
  auto result = co_await run();
  audit(request, service_name, endpoint_name, start,
        result.ok() ? std::nullopt : std::optional<ErrorCode>(result.error().code));
  co_return result;
}

asio::awaitable<Result<json::value>> Host::rpc_unsubscribe(const rpc::Request& request) {
  auto params = params_object(request);
  if (!params.ok()) co_return std::move(params).error();
  auto id = string_param(*params, "subscriptionId", true);
  if (!id.ok()) co_return std::move(id).error();
  std::uint64_t session_id = request.session ? request.session->id() : 0;
  for (const auto& s : services_) {
    if (s->hub->unsubscribe(session_id, **id)) {
      json::object out;
      out["subscriptionId"] = **id;
      out["unsubscribed"] = true;
      co_return json::value(std::move(out));
    }
  }
  json::object data;
  data["field"] = "subscriptionId";
  data["constraint"] = "exists";
  data["subscriptionId"] = **id;
  co_return Error::make(ErrorCode::kInvalidParams,
                        "Invalid params: no subscription '" + **id + "' on this connection",
                        std::move(data));
}

Result<json::value> Host::read_file(const Service& service, std::string_view requested) const {
  const auto& m = service.manifest;
  if (!m.permissions.file_access || m.permissions.file_access->empty()) {
    return permission_denied("service '" + m.name + "' declares no fileAccess", requested);
  }
  if (requested.empty() || requested.find('\0') != std::string_view::npos) {
    return invalid_param("'path' must be a non-empty path", "path", "format");
  }
  jail::GlobSet globs(*m.permissions.file_access);
  std::filesystem::path rel;
  switch (jail::check_requested_path(m.dir, globs, requested, rel)) {
    case jail::PathVerdict::kOutside:
      return permission_denied("'" + std::string(requested) + "' is outside the service folder", requested);
    case jail::PathVerdict::kNotCovered:
      return permission_denied("'" + rel.generic_string() + "' is not covered by the service's fileAccess",
                               requested);
    case jail::PathVerdict::kAllowed:
      break;
  }
  // Opened relative to the service folder, following no link in any component: what is opened
  // is exactly the path the globs allowed, whatever a handler does to the folder meanwhile.
  BeneathFailure failure;
  Fd file = open_beneath(m.dir, rel, O_RDONLY | O_NONBLOCK, failure);
  if (!file && failure.link) {
    return permission_denied("'" + rel.generic_string() +
                                 "' is or passes through a symbolic link (links are not followed)",
                             requested);
  }
  struct stat st {};
  if (!file || ::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    std::string why = !file ? std::strerror(failure.error) : "not a regular file";
    return Error::make(ErrorCode::kHandlerError, "cannot read '" + rel.generic_string() + "': " + why,
                       json::object{{"path", rel.generic_string()}, {"reason", why}});
  }
  const int fd = file.get();
  if (static_cast<std::uint64_t>(st.st_size) > options_.max_read_file_bytes) {
    return Error::make(ErrorCode::kHandlerError,
                       "'" + rel.generic_string() + "' is larger than " +
                           std::to_string(options_.max_read_file_bytes) + " bytes",
                       json::object{{"path", rel.generic_string()}, {"size", st.st_size}});
  }
  std::string content(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < content.size()) {
    ssize_t n = ::read(fd, content.data() + got, content.size() - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  content.resize(got);
  json::object out;
  out["path"] = rel.generic_string();
  out["size"] = content.size();
  if (valid_utf8(content)) {
    out["encoding"] = "utf-8";
    out["content"] = content;
  } else {
    out["encoding"] = "base64";
    out["content"] = base64(content);
  }
  return json::value(std::move(out));
}

void Host::register_methods(rpc::Dispatcher& dispatcher) {
  dispatcher.add("lavs/call", [this](const rpc::Request& r) { return rpc_call(r); });
  dispatcher.add("lavs/subscribe", [this](const rpc::Request& r) { return rpc_subscribe(r); });
  dispatcher.add("lavs/unsubscribe", [this](const rpc::Request& r) { return rpc_unsubscribe(r); });

  dispatcher.add("lavs/manifest", [this](const rpc::Request& r) -> asio::awaitable<Result<json::value>> {
    auto params = params_object(r);
    if (!params.ok()) co_return std::move(params).error();
    auto service = string_param(*params, "service", false);
    if (!service.ok()) co_return std::move(service).error();
    auto found = find_service(service->value_or(""));
    if (!found.ok()) co_return std::move(found).error();
    co_return (*found)->manifest.raw;
  });

  dispatcher.add("lavs/services", [this](const rpc::Request& r) -> asio::awaitable<Result<json::value>> {
    auto params = params_object(r);
    if (!params.ok()) co_return std::move(params).error();
    json::array list;
    for (const auto& s : services_) {
      const auto& m = s->manifest;
      json::array endpoints;
      for (const auto& ep : m.endpoints) {
        json::object e;
        e["id"] = ep.id;
        e["method"] = manifest::to_string(ep.method);
        if (!ep.description.empty()) e["description"] = ep.description;
        e["handler"] = ep.handler_type;
        endpoints.push_back(std::move(e));
      }
      json::object entry;
      entry["name"] = m.name;
      entry["version"] = m.version;
      entry["lavs"] = m.lavs;
      if (!m.description.empty()) entry["description"] = m.description;
      entry["endpoints"] = std::move(endpoints);
      entry["hasView"] = !m.view.is_null();
      list.push_back(std::move(entry));
    }
    co_return json::value(json::object{{"services", std::move(list)}});
  });

  dispatcher.add("lavs/readFile", [this](const rpc::Request& r) -> asio::awaitable<Result<json::value>> {
    auto start = std::chrono::steady_clock::now();
    std::string service_name, path_name;
    auto run = [&]() -> Result<json::value> {
      auto params = params_object(r);
      if (!params.ok()) return std::move(params).error();
      auto service = string_param(*params, "service", false);
      if (!service.ok()) return std::move(service).error();
      auto path = string_param(*params, "path", true);
      if (!path.ok()) return std::move(path).error();
      path_name = **path;
      auto found = find_service(service->value_or(""));
      if (!found.ok()) return std::move(found).error();
      service_name = (*found)->manifest.name;
      return read_file(**found, path_name);
    };
    auto result = run();
    audit(r, service_name, path_name, start,
          result.ok() ? std::nullopt : std::optional<ErrorCode>(result.error().code));
    co_return result;
  });
}

}  // namespace hearth::host
