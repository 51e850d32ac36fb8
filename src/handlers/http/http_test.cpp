#include "handlers/http/http.hpp"

#include <netdb.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <variant>

#include "egress/host.hpp"
#include "handlers/testing.hpp"
#include "httpclient/testing.hpp"

namespace hearth::handlers::http {
namespace {

using namespace handlers::testing;
using httpclient::testing::Reply;
using httpclient::testing::reply;
using httpclient::testing::SeenRequest;
using httpclient::testing::Server;

const bool kSigpipeIgnored = ignore_sigpipe();

/// What the test server does: a few fixed paths, and for anything else an echo of the request as
/// JSON ({method, target, body, headers}).
Reply serve(const SeenRequest& r) {
  const std::string path = r.target.substr(0, r.target.find('?'));
  if (path == "/text") {
    return reply(200, "plain text", {{"Content-Type", "text/plain; charset=utf-8"}});
  }
  if (path == "/bad-utf8") return reply(200, "a\xff b", {{"Content-Type", "text/plain"}});
  if (path == "/bad-json") return reply(200, "{nope", {{"Content-Type", "application/json"}});
  if (path == "/problem") {
    return reply(200, R"({"title":"t"})",
                 {{"Content-Type", "Application/Problem+JSON; charset=utf-8"}});
  }
  if (path == "/empty") return Reply{"HTTP/1.1 204 No Content\r\n\r\n", {}, false, false};
  if (path == "/missing") {
    return reply(404, std::string(2000, 'x'), {{"Content-Type", "text/plain"}});
  }
  if (path == "/missing-untyped") {
    return Reply{"HTTP/1.1 500 Oops\r\nContent-Length: 2\r\n\r\nno", {}, false, false};
  }
  if (path == "/slow") {
    Reply slow;
    slow.later = {{3000ms, httpclient::testing::response(200, "late")}};
    return slow;
  }
  if (path == "/big") return reply(200, std::string(200, 'b'));
  json::object headers;
  for (const auto& [k, v] : r.headers) headers[k] = v;
  json::object echo{{"method", r.method},
                    {"target", r.target},
                    {"body", r.body},
                    {"headers", std::move(headers)}};
  std::string body = json::serialize(echo);
  if (r.method == "HEAD") {
    return Reply{"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n",
                 {},
                 false,
                 false};
  }
  return reply(200, body, {{"Content-Type", "application/json"}});
}

manifest::Permissions network(std::optional<std::variant<bool, std::vector<std::string>>> access) {
  manifest::Permissions p;
  if (!access) return p;
  if (const bool* all = std::get_if<bool>(&*access)) {
    p.network_access = egress::NetworkPolicy(*all);
  } else {
    p.network_access =
        egress::NetworkPolicy::parse(std::get<std::vector<std::string>>(*access)).value();
  }
  return p;
}

manifest::Permissions allow_all() {
  return network(true);
}

class HttpTest : public KindTest {
 protected:
  HttpTest() : work_(asio::make_work_guard(io_)) {
    thread_ = std::thread([this] { io_.run(); });
    service_.name = "svc";
    service_.dir = "/";
    handler_path_ = "endpoints[1].handler";
    options_.executor = io_.get_executor();
    kind_ = make_kind(options_);
  }
  ~HttpTest() override {
    kind_->shutdown();
    handlers_.clear();
    kind_.reset();
    work_.reset();
    io_.stop();
    thread_.join();
  }

  /// Creates a handler for an endpoint with these effective permissions.
  Result<Handler*> create(std::string_view handler_json,
                          manifest::Permissions effective = allow_all(),
                          manifest::Method method = manifest::Method::kQuery) {
    auto& endpoint = add_endpoint("ep", handler_json, std::move(effective), method);
    auto handler = kind_->create(service_, endpoint);
    if (!handler.ok()) {
      endpoints_.pop_back();  // calls go to the endpoint of the last handler made
      return std::move(handler).error();
    }
    handlers_.push_back(std::move(handler).value());
    return handlers_.back().get();
  }

  /// Runs one call on the io_context's thread and waits for it.
  Result<json::value> call(Handler& handler, json::value input = json::object{},
                           std::chrono::milliseconds timeout = 30s) {
    auto future = start_call(
        io_.get_executor(), handler,
        make_call(std::move(input), timeout, io_.get_executor(), endpoints_.back().get()));
    if (future.wait_for(30s) != std::future_status::ready) {
      ADD_FAILURE() << "the call did not finish";
      return Error::make(ErrorCode::kInternalError, "test: no answer");
    }
    return *future.get();
  }

  /// Creates the handler and runs one call.
  Result<json::value> run(const std::string& handler_json, json::value input = json::object{},
                          manifest::Permissions effective = allow_all()) {
    auto handler = create(handler_json, std::move(effective));
    if (!handler.ok()) return std::move(handler).error();
    return call(*handler.value(), std::move(input));
  }

  static std::string handler(const std::string& method, const std::string& url,
                             const std::string& extra = "") {
    return R"({"type":"http","method":")" + method + R"(","url":")" + url + "\"" + extra + "}";
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;
  std::vector<std::unique_ptr<Handler>> handlers_;
};

std::string text(const Result<json::value>& r) {
  return r.ok() ? json::serialize(r.value())
                : "error " + std::to_string(static_cast<int>(r.error().code)) + ": " +
                      r.error().message;
}

// ---------------------------------------------------------------------------------------------
// check / create

TEST_F(HttpTest, CheckAcceptsWellFormedHandlers) {
  EXPECT_EQ(
      problem_list(check(
          R"({"type":"http","url":"https://api.example.com/v1/items/{id}/x-{slug}?fixed=1#top",
      "method":"post","headers":{"Authorization":"Bearer t","X-Thing":""},"timeout":2500,"extra":1})")),
      "");
  for (const char* method : {"GET", "get", "Put", "PATCH", "delete", "HEAD"}) {
    EXPECT_EQ(problem_list(check(handler(method, "http://h:8080"))), "") << method;
  }
}

TEST_F(HttpTest, CheckReportsEachProblemWithItsPath) {
  const std::pair<std::string, std::string> cases[] = {
      {R"({"type":"http","method":"GET"})", "endpoints[1].handler.url: is required"},
      {R"({"type":"http","method":"GET","url":5})",
       "endpoints[1].handler.url: must be a non-empty string"},
      {handler("GET", "ftp://h/x"), "url: must be an absolute http:// or https:// URL"},
      {handler("GET", "/relative"), "url: must be an absolute http:// or https:// URL"},
      {handler("GET", "https://u:p@h/"), "url: must not contain credentials"},
      {handler("GET", "https://h/{id"), "url: has a '{' without its '}'"},
      {handler("GET", "https://h/a}"), "url: has a '}' without its '{'"},
      {handler("GET", "https://h/{1x}"), "url: has an invalid placeholder '{1x}'"},
      {handler("GET", "https://h/{}"), "url: has an invalid placeholder '{}'"},
      {handler("GET", "https://h/{a b}"), "url: has an invalid placeholder '{a b}'"},
      {handler("GET", "https://{host}/x"),
       "url: placeholders ({name}) are only allowed in the path"},
      {handler("GET", "https://h/x?q={id}"),
       "url: placeholders ({name}) are only allowed in the path"},
      {handler("GET", "https://h:99999/"), "url: is not a valid URL: the URL's port"},
      {handler("GET", "https://h h/"), "url: is not a valid URL: character not allowed"},
      {R"({"type":"http","url":"https://h/"})", "endpoints[1].handler.method: is required"},
      {handler("CONNECT", "https://h/"),
       "endpoints[1].handler.method: must be one of GET, POST, PUT, PATCH, DELETE, HEAD"},
      {R"({"type":"http","url":"https://h/","method":1})", "handler.method: must be one of"},
      {handler("GET", "https://h/", R"(,"headers":[])"),
       "endpoints[1].handler.headers: must be an object of strings"},
      {handler("GET", "https://h/", R"(,"headers":{"Bad Name":"v"})"),
       "handler.headers.Bad Name: is not a valid header name"},
      {handler("GET", "https://h/", R"(,"headers":{"host":"v"})"),
       "handler.headers.host: is set by hearth"},
      {handler("GET", "https://h/", R"(,"headers":{"Content-Length":"1"})"),
       "handler.headers.Content-Length: is set by hearth"},
      {handler("GET", "https://h/", R"(,"headers":{"Connection":"close"})"),
       "handler.headers.Connection: is set by hearth"},
      {handler("GET", "https://h/", R"(,"headers":{"Transfer-Encoding":"x"})"),
       "handler.headers.Transfer-Encoding: is set by hearth"},
      {handler("GET", "https://h/", R"(,"headers":{"X":1})"),
       "handler.headers.X: must be a string"},
      {handler("GET", "https://h/", R"(,"headers":{"X":"a\r\nB: c"})"),
       "handler.headers.X: must not contain CR, LF or NUL"},
      {handler("GET", "https://h/", R"(,"timeout":-1)"),
       "endpoints[1].handler.timeout: must be a non-negative number"},
  };
  for (const auto& [json_text, expected] : cases) {
    const auto problems = problem_list(check(json_text));
    EXPECT_NE(problems.find(expected), std::string::npos) << json_text << "\n" << problems;
    EXPECT_EQ(std::count(problems.begin(), problems.end(), '\n'), 1) << json_text << "\n"
                                                                     << problems;
  }
}

TEST_F(HttpTest, SubscriptionEndpointsAreRefused) {
  auto h = create(handler("GET", "https://h/"), allow_all(), manifest::Method::kSubscription);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().message, "http handlers cannot serve subscriptions");
  auto created = create(handler("GET", "https://h/"));
  ASSERT_TRUE(created.ok());
  auto stream = created.value()->open_stream(Call{}, StreamSink{});
  ASSERT_FALSE(stream.ok());
  EXPECT_EQ(stream.error().code, ErrorCode::kHandlerError);
}

// ---------------------------------------------------------------------------------------------
// The request

TEST_F(HttpTest, PathPlaceholdersAreFilledAndEncoded) {
  Server server(serve);
  auto h = create(handler("GET", server.url("/users/{id}/posts/{slug}.json")));
  ASSERT_TRUE(h.ok());
  auto r = call(*h.value(), parse(R"({"id":"a/b c?#","slug":7,"q":"x"})"));
  ASSERT_TRUE(r.ok()) << text(r);
  EXPECT_EQ(r->at("target"), "/users/a%2Fb%20c%3F%23/posts/7.json?q=x");
  r = call(*h.value(), parse(R"({"id":true,"slug":1.5})"));
  ASSERT_TRUE(r.ok()) << text(r);
  EXPECT_EQ(r->at("target"), "/users/true/posts/1.5.json");
  r = call(*h.value(), parse(R"({"id":"x","slug":"."})"));  // "..json" is an ordinary segment
  ASSERT_TRUE(r.ok()) << text(r);
  EXPECT_EQ(r->at("target"), "/users/x/posts/..json");

  const std::pair<std::string, std::string> bad[] = {
      {R"({"slug":1})", "input field 'id' is required: it fills {id} in the URL path"},
      {R"({"id":null,"slug":1})", "input field 'id' is required"},
      {R"({"id":{"a":1},"slug":1})", "input field 'id' must be a string, number or boolean"},
      {R"({"id":[1],"slug":1})", "input field 'id' must be a string, number or boolean"},
      {R"({"id":"","slug":1})",
       "input field 'id' cannot make a URL path segment empty, '.' or '..'"},
      {R"({"id":"..","slug":1})", "input field 'id' cannot make a URL path segment"},
      {R"({"id":".","slug":1})", "input field 'id' cannot make a URL path segment"},
      {R"([1,2])", "input field 'id' is required"},
  };
  const auto before = server.requests().size();
  for (const auto& [input, message] : bad) {
    r = call(*h.value(), parse(input));
    ASSERT_FALSE(r.ok()) << input;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidParams) << input;
    EXPECT_TRUE(r.error().message.starts_with(message)) << input << ": " << r.error().message;
    EXPECT_EQ(r.error().data.at("field"), "id");
    EXPECT_EQ(r.error().data.at("constraint"), "url-path");
  }
  EXPECT_EQ(server.requests().size(), before);
}

TEST_F(HttpTest, QueryParametersForGetDeleteAndHead) {
  Server server(serve);
  const auto input = parse(
      R"({"s":"a b&c","n":1.5,"i":-3,"b":true,"arr":["x",2,null,{"k":1}],"obj":{"a":1},"nul":null,"é":"ü"})");
  const std::string expected =
      "/search?fixed=1&s=a%20b%26c&n=1.5&i=-3&b=true&arr=x&arr=2&arr=%7B%22k%22%3A1%7D"
      "&obj=%7B%22a%22%3A1%7D&%C3%A9=%C3%BC";
  auto r = run(handler("GET", server.url("/search?fixed=1")), input);
  ASSERT_TRUE(r.ok()) << text(r);
  EXPECT_EQ(r->at("method"), "GET");
  EXPECT_EQ(r->at("target").as_string(), expected);
  EXPECT_EQ(r->at("body"), "");
  EXPECT_FALSE(r->at("headers").as_object().contains("content-type"));

  r = run(handler("delete", server.url("/search?fixed=1")), input);
  ASSERT_TRUE(r.ok()) << text(r);
  EXPECT_EQ(r->at("method"), "DELETE");
  EXPECT_EQ(r->at("target").as_string(), expected);

  r = run(handler("HEAD", server.url("/search?fixed=1")), input);
  ASSERT_TRUE(r.ok()) << text(r);
  EXPECT_TRUE(r->is_null());  // no body
  EXPECT_EQ(server.requests().back().method, "HEAD");
  EXPECT_EQ(server.requests().back().target, expected);

  // No path and no query in the URL; empty input.
  r = run(handler("GET", "http://127.0.0.1:" + std::to_string(server.port())), json::object{});
  ASSERT_TRUE(r.ok()) << text(r);
  EXPECT_EQ(r->at("target"), "/");
  r = run(handler("GET", "http://127.0.0.1:" + std::to_string(server.port())), parse(R"({"a":1})"));
  ASSERT_TRUE(r.ok()) << text(r);
  EXPECT_EQ(r->at("target"), "/?a=1");

  r = run(handler("GET", server.url("/x")), parse("[1]"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidParams);
  EXPECT_NE(r.error().message.find("must be an object"), std::string::npos) << r.error().message;
}

TEST_F(HttpTest, JsonBodyForPostPutPatch) {
  Server server(serve);
  for (const char* method : {"POST", "put", "Patch"}) {
    auto r = run(handler(method, server.url("/items/{id}")),
                 parse(R"({"id":5,"name":"n","tags":[1,"t"],"nested":{"a":null}})"));
    ASSERT_TRUE(r.ok()) << text(r);
    EXPECT_EQ(r->at("target"), "/items/5");
    EXPECT_EQ(parse(std::string_view(r->at("body").as_string())),
              parse(R"({"name":"n","tags":[1,"t"],"nested":{"a":null}})"));
    const auto& headers = r->at("headers").as_object();
    EXPECT_EQ(headers.at("content-type"), "application/json");
    EXPECT_EQ(headers.at("accept"), "application/json, */*;q=0.5");
    EXPECT_TRUE(headers.at("user-agent").as_string().starts_with("hearth/"));
  }
  EXPECT_EQ(server.requests()[1].method, "PUT");
  EXPECT_EQ(server.requests()[2].method, "PATCH");

  // A non-object input is the body as it is; the manifest's headers replace the defaults.
  auto r = run(
      handler(
          "POST", server.url("/raw"),
          R"(,"headers":{"content-type":"application/vnd.x+json","Accept":"text/plain","X-Api-Key":"k"})"),
      parse(R"([1,{"a":"b"}])"));
  ASSERT_TRUE(r.ok()) << text(r);
  EXPECT_EQ(r->at("body"), R"([1,{"a":"b"}])");
  const auto seen = server.requests().back();
  EXPECT_EQ(seen.header("content-type"), "application/vnd.x+json");
  EXPECT_EQ(seen.header("accept"), "text/plain");
  EXPECT_EQ(seen.header("x-api-key"), "k");
  int accepts = 0;
  for (const auto& [k, v] : seen.headers) accepts += k == "accept" || k == "content-type";
  EXPECT_EQ(accepts, 2);  // no second Accept or Content-Type

  // No input at all: no body.
  r = run(handler("POST", server.url("/none")), nullptr);
  ASSERT_TRUE(r.ok()) << text(r);
  EXPECT_EQ(r->at("body"), "");
  EXPECT_EQ(server.requests().back().header("content-length"), "0");
  EXPECT_FALSE(server.requests().back().has("content-type"));
}

// ---------------------------------------------------------------------------------------------
// The response

TEST_F(HttpTest, ResponsesBecomeJsonTextOrNull) {
  Server server(serve);
  EXPECT_EQ(text(run(handler("GET", server.url("/text")))), R"("plain text")");
  EXPECT_EQ(text(run(handler("GET", server.url("/bad-utf8")))), "\"a\xEF\xBF\xBD b\"");
  EXPECT_EQ(text(run(handler("GET", server.url("/problem")))), R"({"title":"t"})");
  EXPECT_EQ(text(run(handler("GET", server.url("/empty")))), "null");
  auto r = run(handler("GET", server.url("/bad-json?secret=1")));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_TRUE(r.error().message.starts_with("the response of GET " + server.url("/bad-json") +
                                            " is not valid JSON"))
      << r.error().message;
}

TEST_F(HttpTest, Non2xxIsAHandlerErrorWithTheStatusAndBody) {
  Server server(serve);
  auto r = run(handler("GET", server.url("/missing?token=secret")));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_EQ(r.error().message, "HTTP 404 from GET " + server.url("/missing"));
  EXPECT_EQ(r.error().data.at("status"), 404);
  EXPECT_EQ(r.error().data.at("body").as_string(), std::string(1024, 'x'));
  EXPECT_EQ(r.error().data.at("contentType"), "text/plain");

  r = run(handler("POST", server.url("/missing-untyped")));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "HTTP 500 from POST " + server.url("/missing-untyped"));
  EXPECT_EQ(r.error().data.at("body"), "no");
  EXPECT_TRUE(r.error().data.at("contentType").is_null());
}

TEST_F(HttpTest, ResponseLargerThanTheOutputLimitFails) {
  options_.max_output_bytes = 100;
  kind_ = make_kind(options_);
  Server server(serve);
  auto r = run(handler("GET", server.url("/big")));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_EQ(r.error().message,
            "GET " + server.url("/big") + " failed: response larger than 100 bytes");
}

TEST_F(HttpTest, TimeLimits) {
  Server server(serve);
  // The handler's own timeout.
  auto start = std::chrono::steady_clock::now();
  auto r = run(handler("GET", server.url("/slow"), R"(,"timeout":200)"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kTimeout);
  EXPECT_EQ(r.error().message, "Handler timed out after 200 ms");
  EXPECT_EQ(r.error().data.at("timeoutMs"), 200);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2000ms);

  // Without one, the call's; a maxExecutionTime caps both.
  auto h = create(handler("GET", server.url("/slow")));
  ASSERT_TRUE(h.ok());
  r = call(*h.value(), json::object{}, 150ms);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "Handler timed out after 150 ms");
  auto capped = allow_all();
  capped.max_execution_time = 120ms;
  r = run(handler("GET", server.url("/slow"), R"(,"timeout":5000)"), json::object{}, capped);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "Handler timed out after 120 ms");
}

TEST_F(HttpTest, NetworkFailureIsAHandlerError) {
  int port = 0;
  {
    Server gone(serve);
    port = gone.port();
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/x";
  auto r = run(handler("GET", url + "?q=secret"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_TRUE(r.error().message.starts_with("GET " + url + " failed: cannot connect to 127.0.0.1:"))
      << r.error().message;
}

TEST_F(HttpTest, ConnectionsAreReusedAcrossCalls) {
  Server server(serve);
  auto a = create(handler("GET", server.url("/a")));
  auto b = create(handler("POST", server.url("/b")));
  ASSERT_TRUE(a.ok() && b.ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(call(*a.value()).ok());
    ASSERT_TRUE(call(*b.value()).ok());
  }
  EXPECT_EQ(server.requests().size(), 6u);
  EXPECT_EQ(server.connections(), 1);  // one client per kind, shared by its handlers
}

TEST_F(HttpTest, ClientStartsOnTheFirstCallsExecutorWithoutADaemonExecutor) {
  options_.executor = {};
  kind_ = make_kind(options_);
  Server server(serve);
  EXPECT_TRUE(run(handler("GET", server.url("/a"))).ok());
  kind_->shutdown();
  auto r = run(handler("GET", server.url("/a")));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_NE(r.error().message.find("the daemon is stopping"), std::string::npos);
  EXPECT_EQ(server.requests().size(), 1u);
}

// ---------------------------------------------------------------------------------------------
// networkAccess

TEST_F(HttpTest, NetworkAccessIsCheckedBeforeConnecting) {
  Server server(serve);
  const std::string where = "127.0.0.1:" + std::to_string(server.port());
  using List = std::vector<std::string>;
  const std::pair<manifest::Permissions, std::string> refused[] = {
      {manifest::Permissions{},
       "networkAccess does not allow " + where + ": the endpoint has no networkAccess permission"},
      {network(false), "networkAccess does not allow " + where + ": the endpoint has no"},
      {network(List{"example.com"}), "networkAccess does not allow " + where},
      {network(List{"127.0.0.1:1"}), "networkAccess does not allow " + where},
      {network(List{"localhost"}), "networkAccess does not allow " + where},
  };
  for (const auto& [permissions, message] : refused) {
    auto r = run(handler("GET", server.url("/x")), json::object{}, permissions);
    ASSERT_FALSE(r.ok()) << message;
    EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
    EXPECT_TRUE(r.error().message.starts_with(message)) << r.error().message;
    EXPECT_EQ(r.error().data.at("host"), "127.0.0.1");
  }
  // Refused before the input is looked at: no -32602 for a missing placeholder either.
  auto r = run(handler("GET", server.url("/{id}")), json::object{}, network(false));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(server.connections(), 0);

  EXPECT_TRUE(
      run(handler("GET", server.url("/x")), json::object{}, network(List{"127.0.0.1"})).ok());
  EXPECT_TRUE(run(handler("GET", server.url("/x")), json::object{}, network(List{where})).ok());
  EXPECT_TRUE(run(handler("GET", server.url("/x")), json::object{}, network(true)).ok());
  // `localhost` by name may reach the local host: the list asked for it.
  EXPECT_TRUE(
      run(handler("GET", server.url("localhost", "/x")), json::object{}, network(List{"localhost"}))
          .ok());
}

/// A name other than `localhost` that resolves to a local address here (/etc/hosts), if any.
std::optional<std::string> local_alias() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  for (const std::string& candidate :
       {std::string(name), std::string("ip6-localhost"), std::string("ip6-loopback")}) {
    auto host = egress::parse_host(candidate);
    if (!host.ok() || host->is_address() || egress::is_localhost_name(host.value())) continue;
    addrinfo* found = nullptr;
    if (::getaddrinfo(candidate.c_str(), nullptr, nullptr, &found) != 0) continue;
    bool local = false;
    for (auto* a = found; a != nullptr; a = a->ai_next) {
      char text[64] = {};
      if (::getnameinfo(a->ai_addr, a->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) ==
          0) {
        boost::system::error_code ec;
        auto address = asio::ip::make_address(text, ec);
        local = local || (!ec && egress::is_local_address(address));
      }
    }
    ::freeaddrinfo(found);
    if (local) return host->text;
  }
  return std::nullopt;
}

TEST_F(HttpTest, AnAllowedNameThatResolvesToALocalAddressIsRefused) {
  const auto alias = local_alias();
  if (!alias) GTEST_SKIP() << "no name other than localhost resolves to a local address here";
  Server server(serve);
  auto r = run(handler("GET", server.url(*alias, "/x")), json::object{},
               network(std::vector<std::string>{*alias}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  EXPECT_TRUE(r.error().message.starts_with(*alias + " resolves to a local address ("))
      << r.error().message;
  EXPECT_EQ(server.connections(), 0);
  // networkAccess true asks for no such check.
  EXPECT_TRUE(run(handler("GET", server.url(*alias, "/x")), json::object{}, network(true)).ok());
}

TEST_F(HttpTest, EachRedirectHopIsChecked) {
  Server target(serve);
  Server bouncer([&](const SeenRequest& r) {
    if (r.target == "/away") {
      return reply(302, "", {{"Location", target.url("localhost", "/landed")}});
    }
    return reply(307, "", {{"Location", "/x"}});
  });
  using List = std::vector<std::string>;
  const std::string bouncer_entry = "127.0.0.1:" + std::to_string(bouncer.port());
  auto r = run(handler("GET", bouncer.url("/away")), json::object{}, network(List{bouncer_entry}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(r.error().message,
            "networkAccess does not allow localhost:" + std::to_string(target.port()));
  EXPECT_EQ(target.connections(), 0);

  r = run(handler("GET", bouncer.url("/away")), json::object{},
          network(List{bouncer_entry, "localhost"}));
  ASSERT_TRUE(r.ok()) << text(r);
  EXPECT_EQ(r->at("target"), "/landed");

  // Same-origin redirects are followed up to five times.
  r = run(handler("GET", bouncer.url("/loop")), json::object{}, network(List{bouncer_entry}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "GET " + bouncer.url("/loop") + " failed: too many redirects (more than 5)");
}

}  // namespace
}  // namespace hearth::handlers::http
