#include "handlers/http/http.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <exception>
#include <mutex>
#include <variant>

#include "common/ascii.hpp"
#include "common/utf8.hpp"
#include "egress/network_policy.hpp"
#include "handlers/config.hpp"
#include "handlers/create.hpp"
#include "httpclient/client.hpp"
#include "json/text.hpp"

#ifndef HEARTH_VERSION
#error "HEARTH_VERSION must be defined by the build"
#endif

namespace hearth::handlers::http {

namespace asio = boost::asio;
using httpclient::Url;

namespace {

constexpr int kMaxRedirects = 5;
/// How much of an error response's body goes into the error's data.
constexpr std::size_t kErrorBodyBytes = 1024;
constexpr std::string_view kAccept = "application/json, */*;q=0.5";
constexpr std::string_view kUserAgent = "hearth/" HEARTH_VERSION;
constexpr std::string_view kMethods[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"};

bool is_placeholder_name(std::string_view s) {
  if (s.empty()) return false;
  const char first = s.front();
  if (!((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z') || first == '_')) {
    return false;
  }
  return s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") ==
         std::string_view::npos;
}

bool has_scheme(std::string_view url, std::string_view scheme) {
  if (url.size() < scheme.size() + 3) return false;
  return ascii::lower(url.substr(0, scheme.size())) == scheme &&
         url.substr(scheme.size(), 3) == "://";
}

// ---------------------------------------------------------------------------------------------
// The URL template

/// A piece of a path segment: literal text, or a placeholder's name.
struct Piece {
  bool placeholder = false;
  std::string text;
};
using Segment = std::vector<Piece>;

struct UrlTemplate {
  std::string base;               ///< "scheme://authority" as written
  std::vector<Segment> segments;  ///< the path split at '/', after its leading '/'
  bool has_path = false;          ///< false: "https://host" or "https://host?q"
  std::string query;              ///< without '?'; the fragment is dropped
};

/// Splits and checks a `url` member; the error says what is wrong (to follow "url: ").
std::variant<UrlTemplate, std::string> parse_template(std::string_view url) {
  if (url.find('\0') != std::string_view::npos) {
    return std::string("must not contain NUL characters");
  }
  std::size_t scheme_end = 0;
  if (has_scheme(url, "http")) {
    scheme_end = 7;
  } else if (has_scheme(url, "https")) {
    scheme_end = 8;
  } else {
    return std::string("must be an absolute http:// or https:// URL");
  }
  UrlTemplate t;
  const auto authority_end = url.find_first_of("/?#", scheme_end);
  const auto authority =
      url.substr(scheme_end, authority_end == std::string_view::npos ? std::string_view::npos
                                                                     : authority_end - scheme_end);
  if (authority.find('@') != std::string_view::npos) {
    return std::string("must not contain credentials (user:password@)");
  }
  t.base = ascii::lower(url.substr(0, scheme_end)) + std::string(authority);
  std::string_view rest =
      authority_end == std::string_view::npos ? std::string_view() : url.substr(authority_end);
  if (const auto hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
  const auto question = rest.find('?');
  const std::string_view path = rest.substr(0, question);
  if (question != std::string_view::npos) t.query = std::string(rest.substr(question + 1));
  if (authority.find_first_of("{}") != std::string_view::npos ||
      t.query.find_first_of("{}") != std::string::npos) {
    return std::string("placeholders ({name}) are only allowed in the path");
  }

  if (!path.empty()) {
    t.has_path = true;
    std::size_t start = 1;  // after the leading '/'
    while (true) {
      const auto slash = path.find('/', start);
      const auto text = path.substr(
          start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
      Segment segment;
      std::size_t i = 0;
      while (i < text.size()) {
        const auto open = text.find_first_of("{}", i);
        if (open == std::string_view::npos) {
          segment.push_back({false, std::string(text.substr(i))});
          break;
        }
        if (text[open] == '}') return std::string("has a '}' without its '{'");
        const auto close = text.find('}', open + 1);
        if (close == std::string_view::npos) return std::string("has a '{' without its '}'");
        const auto name = text.substr(open + 1, close - open - 1);
        if (!is_placeholder_name(name)) {
          return "has an invalid placeholder '{" + std::string(name) +
                 "}' (a name of letters, digits, '_' and '-', not starting with a digit)";
        }
        if (open > i) segment.push_back({false, std::string(text.substr(i, open - i))});
        segment.push_back({true, std::string(name)});
        i = close + 1;
      }
      t.segments.push_back(std::move(segment));
      if (slash == std::string_view::npos) break;
      start = slash + 1;
    }
  }

  // What the client will make of it, with every placeholder filled.
  std::string sample = t.base;
  for (const auto& segment : t.segments) {
    sample += '/';
    for (const auto& piece : segment) sample += piece.placeholder ? "x" : piece.text;
  }
  if (!t.query.empty()) sample += "?" + t.query;
  auto parsed = httpclient::parse_url(sample);
  if (!parsed.ok()) return "is not a valid URL: " + parsed.error().message;
  return t;
}

// ---------------------------------------------------------------------------------------------
// Input to text

Error placeholder_error(const std::string& field, const std::string& why) {
  json::object data;
  data["field"] = field;
  data["constraint"] = "url-path";
  return Error::make(ErrorCode::kInvalidParams, "input field '" + field + "' " + why,
                     std::move(data));
}

void add_parameter(std::string& query, std::string_view name, std::string_view value) {
  if (!query.empty()) query += '&';
  query += httpclient::encode_component(name);
  query += '=';
  query += httpclient::encode_component(value);
}

/// "https://host/path" of a URL: messages do not repeat query strings (they may hold input).
std::string without_query(std::string_view url) {
  return std::string(url.substr(0, url.find('?')));
}

bool is_json_type(std::string_view content_type) {
  const auto type = ascii::lower(ascii::trim(content_type.substr(0, content_type.find(';'))));
  return type == "application/json" || (type.size() > 5 && type.ends_with("+json"));
}

/// The first `max` bytes of `body`, not cutting a UTF-8 sequence, as valid UTF-8.
std::string body_excerpt(std::string_view body, std::size_t max) {
  if (body.size() > max) {
    std::size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(body[cut]) & 0xC0) == 0x80) --cut;
    body = body.substr(0, cut);
  }
  return valid_utf8(body);
}

// ---------------------------------------------------------------------------------------------
// The handler

/// The handler object, parsed (HttpKind::parse).
struct Config final : manifest::HandlerConfig {
  std::string method;  ///< upper case
  UrlTemplate url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::chrono::milliseconds timeout{0};  ///< 0: none of its own
};

/// Gives the kind's client (made on first use); null when the kind was shut down, an error when
/// there is no executor to make it on or TLS cannot be set up.
using ClientSource =
    std::function<Result<std::shared_ptr<httpclient::Client>>(const asio::any_io_executor&)>;

class HttpHandler final : public Handler {
 public:
  HttpHandler(Config config, egress::NetworkPolicy policy, std::size_t max_response,
              ClientSource client)
      : config_(std::move(config)),
        policy_(std::make_shared<const egress::NetworkPolicy>(std::move(policy))),
        max_response_(max_response),
        client_(std::move(client)) {}

  asio::awaitable<Result<json::value>> call(Call call) override {
    // The host and port are fixed by the manifest: refuse before looking at the input.
    const std::string base_url = config_.url.base + "/";
    auto base = httpclient::parse_url(base_url);
    if (!base.ok()) co_return Error::make(ErrorCode::kInternalError, base.error().message);
    if (auto refused = policy_->check(base.value().host, base.value().port, {})) {
      co_return std::move(*refused);
    }

    auto request = build(call.input);
    if (!request.ok()) co_return std::move(request).error();
    auto client = client_(call.executor);
    if (!client.ok()) co_return std::move(client).error();
    const auto timeout = call.limit(config_.timeout);
    request->timeout = timeout;
    const std::string url = without_query(request->url);
    auto response = co_await client.value()->request(std::move(request).value());
    if (!response.ok()) {
      Error error = std::move(response).error();
      if (error.code == ErrorCode::kTimeout) {
        json::object data;
        data["timeoutMs"] = timeout.count();
        co_return Error::make(ErrorCode::kTimeout,
                              "Handler timed out after " + std::to_string(timeout.count()) + " ms",
                              std::move(data));
      }
      if (error.code == ErrorCode::kPermissionDenied) co_return error;
      co_return Error::make(ErrorCode::kHandlerError,
                            config_.method + " " + url + " failed: " + error.message);
    }
    co_return interpret(response.value());
  }

  Result<std::shared_ptr<Stream>> open_stream(Call, StreamSink) override {
    // create() refuses subscription endpoints; this is only reached by a caller that ignored it.
    return Error::make(ErrorCode::kHandlerError, "http handlers cannot serve subscriptions");
  }

 private:
  Result<httpclient::Request> build(const json::value& input) const {
    const json::object* object = input.if_object();
    std::vector<std::string_view> used;
    std::string url = config_.url.base;
    for (const auto& segment : config_.url.segments) {
      std::string text;
      const std::string* first_field = nullptr;
      for (const auto& piece : segment) {
        if (!piece.placeholder) {
          text += piece.text;
          continue;
        }
        if (first_field == nullptr) first_field = &piece.text;
        const json::value* value = object != nullptr ? object->if_contains(piece.text) : nullptr;
        if (value == nullptr || value->is_null()) {
          return placeholder_error(piece.text,
                                   "is required: it fills {" + piece.text + "} in the URL path");
        }
        if (value->is_object() || value->is_array()) {
          return placeholder_error(piece.text, "must be a string, number or boolean: it fills {" +
                                                   piece.text + "} in the URL path");
        }
        text += httpclient::encode_component(*json::text_of(*value));
        used.push_back(piece.text);
      }
      if (first_field != nullptr && (text.empty() || text == "." || text == "..")) {
        return placeholder_error(*first_field, "cannot make a URL path segment empty, '.' or '..'");
      }
      url += '/';
      url += text;
    }
    auto is_used = [&used](std::string_view key) {
      return std::find(used.begin(), used.end(), key) != used.end();
    };

    httpclient::Request request;
    request.method = config_.method;
    request.max_response_bytes = max_response_;
    request.max_redirects = kMaxRedirects;
    request.allow = [policy = policy_](const Url& u, const std::vector<std::string>& addresses) {
      return policy->check(u.host, u.port, addresses);
    };
    bool has_accept = false;
    bool has_agent = false;
    bool has_type = false;
    for (const auto& [name, value] : config_.headers) {
      const auto key = ascii::lower(name);
      has_accept = has_accept || key == "accept";
      has_agent = has_agent || key == "user-agent";
      has_type = has_type || key == "content-type";
    }
    if (!has_accept) request.headers.emplace_back("Accept", kAccept);
    if (!has_agent) request.headers.emplace_back("User-Agent", kUserAgent);

    std::string query = config_.url.query;
    const bool body_method =
        config_.method == "POST" || config_.method == "PUT" || config_.method == "PATCH";
    if (body_method) {
      if (object != nullptr) {
        json::object rest;
        for (const auto& member : *object) {
          if (!is_used(member.key())) rest.emplace(member.key(), member.value());
        }
        request.body = json::serialize(rest);
      } else if (!input.is_null()) {
        request.body = json::serialize(input);
      }
      if (request.body && !has_type) {
        request.headers.emplace_back("Content-Type", "application/json");
      }
    } else if (object != nullptr) {
      for (const auto& member : *object) {
        if (is_used(member.key())) continue;
        const auto& value = member.value();
        if (value.is_array()) {
          for (const auto& element : value.get_array()) {
            if (auto text = json::text_of(element)) add_parameter(query, member.key(), *text);
          }
        } else if (auto text = json::text_of(value)) {
          add_parameter(query, member.key(), *text);
        }
      }
    } else if (!input.is_null()) {
      json::object data;
      data["constraint"] = "type";
      return Error::make(ErrorCode::kInvalidParams,
                         "the input of a " + config_.method +
                             " http handler must be an object (its members become query "
                             "parameters), not " +
                             std::string(json::kind_name(input)),
                         std::move(data));
    }
    for (const auto& header : config_.headers) request.headers.push_back(header);
    if (!config_.url.has_path && query.empty()) url += '/';
    if (!query.empty()) url += (config_.url.has_path ? "?" : "/?") + query;
    request.url = std::move(url);
    return request;
  }

  Result<json::value> interpret(const httpclient::Response& response) const {
    const auto type = response.header("content-type");
    if (response.status < 200 || response.status > 299) {
      json::object data;
      data["status"] = response.status;
      data["body"] = body_excerpt(response.body, kErrorBodyBytes);
      data["contentType"] = type ? json::value(json::string(*type)) : json::value(nullptr);
      return Error::make(ErrorCode::kHandlerError,
                         "HTTP " + std::to_string(response.status) + " from " + config_.method +
                             " " + without_query(response.url),
                         std::move(data));
    }
    if (response.body.empty()) return json::value(nullptr);
    if (type && is_json_type(*type)) {
      auto parsed = json::parse_text(response.body);
      if (!parsed.ok()) {
        return Error::make(ErrorCode::kHandlerError,
                           "the response of " + config_.method + " " + without_query(response.url) +
                               " is not valid JSON (" + parsed.error().message + ")");
      }
      return std::move(parsed).value();
    }
    return json::value(json::string(valid_utf8(response.body)));
  }

  Config config_;
  std::shared_ptr<const egress::NetworkPolicy> policy_;  ///< shared with the requests' allow
                                                         ///< callbacks
  std::size_t max_response_;
  ClientSource client_;
};

// ---------------------------------------------------------------------------------------------
// The kind

class HttpKind final : public Kind {
 public:
  explicit HttpKind(const KindOptions& options) : options_(options) {}
  ~HttpKind() override { shutdown(); }
  HttpKind(const HttpKind&) = delete;
  HttpKind& operator=(const HttpKind&) = delete;

  std::string_view name() const override { return "http"; }
  std::vector<std::string_view> keys() const override {
    return {"url", "method", "headers", "timeout"};
  }

  void shutdown() override {
    std::shared_ptr<httpclient::Client> client;
    {
      std::lock_guard lock(mutex_);
      shut_down_ = true;
      client = client_;
    }
    if (client) client->shutdown();
  }

  std::shared_ptr<const manifest::HandlerConfig> parse(const json::object& handler,
                                                       const std::string& path,
                                                       Problems& problems) const override {
    ConfigReader in(handler, path, problems);
    auto config = std::make_shared<Config>();
    if (const auto* url = in.get("url")) {
      if (!url->is_string() || url->get_string().empty()) {
        in.add("url", "must be a non-empty string (an absolute http:// or https:// URL)");
      } else {
        auto parsed = parse_template(url->get_string());
        if (auto* why = std::get_if<std::string>(&parsed)) {
          in.add("url", *why);
        } else {
          config->url = std::get<UrlTemplate>(std::move(parsed));
        }
      }
    } else {
      in.add("url", "is required (an absolute http:// or https:// URL)");
    }

    if (const auto* method = in.get("method")) {
      if (!method->is_string() || !known_method(method->get_string())) {
        in.add("method", "must be one of GET, POST, PUT, PATCH, DELETE, HEAD");
      } else {
        config->method = ascii::upper(method->get_string());
      }
    } else {
      in.add("method", "is required (GET, POST, PUT, PATCH, DELETE or HEAD)");
    }

    if (const auto* headers = in.get("headers")) {
      if (!headers->is_object()) {
        in.add("headers", "must be an object of strings");
      } else {
        for (const auto& member : headers->get_object()) {
          const std::string key(member.key());
          const std::string field = join_path("headers", key);
          const auto name = ascii::lower(key);
          if (!httpclient::is_token(key)) {
            in.add(field, "is not a valid header name");
          } else if (name == "host" || name == "content-length" || name == "connection" ||
                     name == "transfer-encoding") {
            in.add(field, "is set by hearth and may not be given");
          } else if (!member.value().is_string()) {
            in.add(field, "must be a string");
          } else if (member.value().get_string().find_first_of(std::string_view("\r\n\0", 3)) !=
                     json::string::npos) {
            in.add(field, "must not contain CR, LF or NUL characters");
          } else {
            config->headers.emplace_back(key, std::string(member.value().get_string()));
          }
        }
      }
    }
    config->timeout = in.milliseconds("timeout");
    return in.result(std::move(config));
  }

  Result<std::unique_ptr<Handler>> create(const manifest::Manifest&,
                                          const manifest::Endpoint& endpoint) const override {
    HEARTH_ASSIGN_OR_RETURN(auto config, config_of<Config>(*this, endpoint));
    if (endpoint.method == manifest::Method::kSubscription) {
      return Error::make(ErrorCode::kInternalError, "http handlers cannot serve subscriptions");
    }
    auto policy = endpoint.effective.network_access.value_or(egress::NetworkPolicy());
    // The daemon makes the client when the manifest loads, so a broken TLS setup shows at once.
    if (options_.executor) {
      auto client = client_for(options_.executor);
      if (!client.ok()) return std::move(client).error();
    }
    return std::unique_ptr<Handler>(std::make_unique<HttpHandler>(
        *config, std::move(policy), options_.max_output_bytes,
        [this](const asio::any_io_executor& executor) { return client_for(executor); }));
  }

 private:
  static bool known_method(std::string_view method) {
    const auto m = ascii::upper(method);
    return std::find(std::begin(kMethods), std::end(kMethods), m) != std::end(kMethods);
  }

  /// The kind's one client, made on the daemon's executor (or, without one, the first call's).
  Result<std::shared_ptr<httpclient::Client>> client_for(
      const asio::any_io_executor& call_executor) const {
    std::lock_guard lock(mutex_);
    if (shut_down_) return Error::make(ErrorCode::kHandlerError, "the daemon is stopping");
    if (client_) return client_;
    const auto& executor = options_.executor ? options_.executor : call_executor;
    if (!executor) {
      return Error::make(ErrorCode::kInternalError, "no executor to run the HTTP client on");
    }
    try {
      client_ = std::make_shared<httpclient::Client>(executor);
    } catch (const std::exception& e) {
      spdlog::error("http handlers: cannot set up the HTTP client: {}", e.what());
      return Error::make(ErrorCode::kHandlerError,
                         std::string("cannot set up the HTTP client: ") + e.what());
    }
    return client_;
  }

  KindOptions options_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<httpclient::Client> client_;  ///< guarded by mutex_
  bool shut_down_ = false;                              ///< guarded by mutex_
};

}  // namespace

std::unique_ptr<Kind> make_kind(const KindOptions& options) {
  return std::make_unique<HttpKind>(options);
}

}  // namespace hearth::handlers::http
