// The view/* and lavs/* methods over a view host and a loaded service: mounts, the files of a
// mount, agent actions, saved state, and mounts ending with their connection.
#include "methods/view/view.hpp"

#include <gtest/gtest.h>

#include <csignal>

#include "host/testing.hpp"
#include "methods/lavs/lavs.hpp"
#include "methods/testing.hpp"
#include "proc/process.hpp"
#include "views/views.hpp"

namespace hearth::methods::view {
namespace {
namespace fs = std::filesystem;
using host::testing::TempService;
using methods::testing::push_session;
using methods::testing::Pushes;
using views::Options;
using views::ViewHost;

const char* kManifest = R"({
  "lavs": "1.0", "name": "todo", "version": "1.0.0",
  "view": {"component": {"type": "local", "path": "views/view.js"}, "fallback": "table"},
  "endpoints": [
    {"id": "add", "method": "mutation",
     "handler": {"type": "script", "command": "sh", "args": ["-c", "cat; echo"]}},
    {"id": "list", "method": "query",
     "handler": {"type": "script", "command": "sh", "args": ["-c", "echo '[]'"]}},
    {"id": "feed", "method": "subscription",
     "handler": {"type": "script", "command": "sh", "args": ["-c", "echo '{\"n\":1}'; exec sleep 60"]}}
  ]
})";

const char* kOther = R"({
  "lavs": "1.0", "name": "other", "version": "1.0.0",
  "endpoints": [
    {"id": "secret", "method": "query",
     "handler": {"type": "script", "command": "sh", "args": ["-c", "echo '\"other\"'"]}}
  ]
})";

class ViewHostTest : public ::testing::Test, public methods::testing::Harness {
 protected:
  void SetUp() override {
    std::signal(SIGPIPE, SIG_IGN);
    service_.write("views/view.js", "customElements.define('x-v', class extends HTMLElement {});");
    service_.write("views/style.css", "p{}");
    service_.write("data/todos.json", "[]");
    web_ = std::make_unique<TempService>("{}");
    web_->write("index.html", "<!doctype html><title>hearth</title>");
    web_->write("view-bootstrap.js", "/* bootstrap */");
    host::LoadReport report;
    host_ = host::Host::load({service_.dir(), other_.dir()}, {}, ioc().get_executor(), report);
    ASSERT_TRUE(host_);
    Options options;
    options.web_dir = web_->dir();
    options.state_dir = state_.dir();
    views_ = std::make_unique<ViewHost>(*host_, options);
    host_->set_mutation_listener(
        {[this](std::string_view service) { return views_->watched(service); },
         [this](const host::Mutation& m) { views_->publish(m); }});
    ASSERT_TRUE(views_->add_routes(routes_).ok());
    methods::lavs::add_methods(dispatcher(), *host_);
    methods::view::add_methods(dispatcher(), *host_, *views_);
  }
  void TearDown() override {
    if (host_) host_->shutdown();
    proc::kill_all();
  }

  /// GET `path` through the route table, as the server would hand it over.
  net::HttpResponse get(const std::string& path, const std::string& host = "127.0.0.1:5555") {
    const net::Route* route = routes_.find(path);
    EXPECT_NE(route, nullptr) << path;
    if (route == nullptr) return {};
    net::HttpRequest request;
    request.method = "GET";
    request.path = path;
    request.headers = {{"host", host}};
    std::optional<net::HttpResponse> out;
    boost::asio::co_spawn(
        ioc(), [&]() -> boost::asio::awaitable<void> { out = co_await route->handler(request); },
        boost::asio::detached);
    EXPECT_TRUE(run_until([&] { return out.has_value(); }));
    return out.value_or(net::HttpResponse{});
  }

  static std::string header(const net::HttpResponse& r, std::string_view name) {
    for (const auto& [n, v] : r.headers) {
      if (n == name) return v;
    }
    return {};
  }

  json::value open(const std::shared_ptr<rpc::Session>& session) {
    return rpc("view/open", json::object{{"service", "todo"}}, session);
  }

  TempService service_{kManifest};
  TempService other_{kOther};
  TempService state_{"{}"};
  std::unique_ptr<TempService> web_;
  std::unique_ptr<host::Host> host_;
  std::unique_ptr<ViewHost> views_;
  net::Routes routes_;
};

TEST_F(ViewHostTest, OpenGivesAMountWithATicketUrlAndASecret) {
  auto pushes = std::make_shared<Pushes>();
  auto r = open(push_session(pushes));
  ASSERT_TRUE(r.as_object().contains("result")) << json::dump(r);
  const auto& m = r.at("result").as_object();
  EXPECT_EQ(m.at("service"), "todo");
  EXPECT_EQ(m.at("component").at("type"), "local");
  EXPECT_EQ(m.at("fallback"), "table");
  EXPECT_EQ(m.at("secret").as_string().size(), 32u);
  const std::string url(m.at("url").as_string());
  EXPECT_EQ(url.rfind("/views/", 0), 0u);
  EXPECT_EQ(url.size(), std::string("/views/").size() + 32 + 1);
}

TEST_F(ViewHostTest, OpenIsForWebSocketsAndKnownServicesWithAView) {
  EXPECT_EQ(code(rpc("view/open", json::object{{"service", "todo"}})), -32601);
  auto session = push_session(std::make_shared<Pushes>());
  EXPECT_EQ(code(rpc("view/open", json::object{{"service", "nope"}}, session)), -32602);
  auto none = rpc("view/open", json::object{{"service", "other"}}, session);
  EXPECT_EQ(code(none), -32602);
  EXPECT_EQ(none.at("error").at("data").at("reason"), "no view component");
}

TEST_F(ViewHostTest, TheMountServesItsDocumentAndFilesWithTheViewHeaders) {
  auto session = push_session(std::make_shared<Pushes>());
  const auto m = open(session).at("result");
  const std::string url(m.at("url").as_string());

  auto doc = get(url);
  EXPECT_EQ(doc.status, 200);
  EXPECT_EQ(doc.content_type, "text/html; charset=utf-8");
  EXPECT_NE(doc.body.find(R"("module":"./view.js")"), std::string::npos) << doc.body;
  EXPECT_NE(doc.body.find(R"("hostOrigin":"http://127.0.0.1:5555")"), std::string::npos);
  EXPECT_EQ(doc.body.find(std::string(m.at("secret").as_string())), std::string::npos)
      << "the secret never travels in a served document";
  const std::string csp = header(doc, "Content-Security-Policy");
  EXPECT_NE(csp.find("sandbox allow-scripts allow-forms"), std::string::npos);
  EXPECT_NE(csp.find("frame-ancestors http://127.0.0.1:5555"), std::string::npos);

  auto js = get(url + "view.js");
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.content_type, "text/javascript; charset=utf-8");
  EXPECT_NE(js.body.find("x-v"), std::string::npos);
  EXPECT_EQ(header(js, "Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(get(url + "style.css").status, 200);
  EXPECT_EQ(get(url + ".hearth/bootstrap.js").body, "/* bootstrap */");

  // Only the component's folder: not the service's data, not outside, not through escapes.
  for (const char* bad :
       {"../data/todos.json", "..%2Fdata%2Ftodos.json", "%2e%2e/data/todos.json", "views/view.js",
        ".hearth/inline.js", "missing.js", "%zz", "/etc/passwd", "./view.js"}) {
    EXPECT_EQ(get(url + bad).status, 404) << bad;
  }
  EXPECT_EQ(get("/views/00000000000000000000000000000000/").status, 404);
  EXPECT_EQ(get("/views/short/").status, 404);
}

TEST_F(ViewHostTest, ThePageIsServedWithItsPolicy) {
  auto page = get("/ui/");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("<title>hearth</title>"), std::string::npos);
  EXPECT_NE(header(page, "Content-Security-Policy").find("connect-src 'self' ws://127.0.0.1:5555"),
            std::string::npos);
  EXPECT_EQ(header(page, "X-Frame-Options"), "DENY");
  EXPECT_EQ(get("/ui/view-bootstrap.js").status, 200);
  EXPECT_EQ(get("/ui/../lavs.json").status, 404);
  EXPECT_EQ(get("/ui/%2e%2e/lavs.json").status, 404);
  EXPECT_EQ(get("/ui/missing.js").status, 404);
  EXPECT_EQ(get("/ui").status, 308);
}

TEST_F(ViewHostTest, MutationsReachTheMountsOfTheServiceAsAgentActions) {
  auto pushes = std::make_shared<Pushes>();
  auto page = push_session(pushes);
  const std::string mount(open(page).at("result").at("mountId").as_string());

  auto cli = std::make_shared<rpc::Session>("http", nullptr);
  cli->set_client("hearth-cli");
  auto r = rpc(
      "lavs/call",
      json::object{{"service", "todo"}, {"endpoint", "add"}, {"input", {{"text", "milk"}}}}, cli);
  ASSERT_TRUE(r.as_object().contains("result")) << json::dump(r);
  ASSERT_TRUE(run_until([&] { return pushes->with_method("view/agentAction").size() == 1; }));
  auto action = pushes->with_method("view/agentAction")[0].at("params");
  EXPECT_EQ(action.at("service"), "todo");
  EXPECT_EQ(action.at("endpoint"), "add");
  EXPECT_EQ(action.at("input").at("text"), "milk");
  EXPECT_EQ(action.at("result").at("text"), "milk");
  EXPECT_EQ(action.at("actor"), (json::object{{"type", "http"}, {"client", "hearth-cli"}}));
  EXPECT_EQ(action.at("seq"), 1);

  // A view's own call says which mount made it; queries are not actions.
  rpc("view/call", json::object{{"mountId", mount}, {"endpoint", "list"}}, page);
  r = rpc("view/call",
          json::object{{"mountId", mount}, {"endpoint", "add"}, {"input", {{"text", "eggs"}}}},
          page);
  ASSERT_TRUE(r.as_object().contains("result")) << json::dump(r);
  ASSERT_TRUE(run_until([&] { return pushes->with_method("view/agentAction").size() == 2; }));
  action = pushes->with_method("view/agentAction")[1].at("params");
  EXPECT_EQ(action.at("actor"), (json::object{{"type", "view"}, {"mountId", mount}}));
  EXPECT_EQ(action.at("seq"), 2);

  // A connection with no mount of the service hears nothing.
  auto quiet = std::make_shared<Pushes>();
  auto other = push_session(quiet);
  rpc("lavs/call",
      json::object{{"service", "todo"}, {"endpoint", "add"}, {"input", {{"text", "x"}}}}, other);
  ASSERT_TRUE(run_until([&] { return pushes->with_method("view/agentAction").size() == 3; }));
  EXPECT_TRUE(quiet->with_method("view/agentAction").empty());
}

TEST_F(ViewHostTest, MutationsNobodyWatchesAreToldToNobody) {
  const json::object add{{"service", "todo"}, {"endpoint", "add"}, {"input", {{"text", "x"}}}};
  EXPECT_FALSE(views_->watched("todo"));
  ASSERT_TRUE(rpc("lavs/call", add).as_object().contains("result"));
  auto pushes = std::make_shared<Pushes>();
  auto page = push_session(pushes);
  const std::string mount(open(page).at("result").at("mountId").as_string());
  EXPECT_TRUE(views_->watched("todo"));
  EXPECT_FALSE(views_->watched("other"));
  ASSERT_TRUE(rpc("lavs/call", add).as_object().contains("result"));
  ASSERT_TRUE(run_until([&] { return pushes->with_method("view/agentAction").size() == 1; }));
  // The mutation made before the mount was not counted: nobody was told of it.
  EXPECT_EQ(pushes->with_method("view/agentAction")[0].at("params").at("seq"), 1);
  rpc("view/close", json::object{{"mountId", mount}}, page);
  EXPECT_FALSE(views_->watched("todo"));
}

TEST_F(ViewHostTest, AViewReachesOnlyItsOwnServiceAndMount) {
  auto page = push_session(std::make_shared<Pushes>());
  const std::string mount(open(page).at("result").at("mountId").as_string());
  // The endpoint of another service is not found in the mount's service.
  EXPECT_EQ(code(rpc("view/call", json::object{{"mountId", mount}, {"endpoint", "secret"}}, page)),
            -32601);
  // A `service` parameter does not redirect the call.
  EXPECT_EQ(code(rpc("view/call",
                     json::object{{"mountId", mount}, {"service", "other"}, {"endpoint", "secret"}},
                     page)),
            -32601);
  // Another connection cannot use the mount.
  auto thief = push_session(std::make_shared<Pushes>());
  auto r = rpc("view/call", json::object{{"mountId", mount}, {"endpoint", "list"}}, thief);
  EXPECT_EQ(code(r), -32602);
  EXPECT_EQ(r.at("error").at("data").at("field"), "mountId");
}

TEST_F(ViewHostTest, ClosingAMountEndsItsSubscriptionsAndItsTicket) {
  auto pushes = std::make_shared<Pushes>();
  auto page = push_session(pushes);
  const auto m = open(page).at("result");
  const std::string mount(m.at("mountId").as_string());
  auto sub = rpc("view/subscribe", json::object{{"mountId", mount}, {"endpoint", "feed"}}, page);
  ASSERT_TRUE(sub.as_object().contains("result")) << json::dump(sub);
  auto mounts = rpc("view/mounts", json::object{}, page).at("result");
  EXPECT_EQ(mounts.at("subscriptions").at("todo"), 1);
  EXPECT_EQ(mounts.at("mounts").as_array().size(), 1u);

  auto closed = rpc("view/close", json::object{{"mountId", mount}}, page);
  EXPECT_EQ(closed.at("result").at("closed"), true);
  mounts = rpc("view/mounts", json::object{}, page).at("result");
  EXPECT_EQ(mounts.at("subscriptions").at("todo"), 0);
  EXPECT_TRUE(mounts.at("mounts").as_array().empty());
  EXPECT_EQ(get(std::string(m.at("url").as_string())).status, 404);
  EXPECT_EQ(code(rpc("view/close", json::object{{"mountId", mount}}, page)), -32602);
  // A subscription that started while its mount closed is refused (the method then ends it).
  EXPECT_FALSE(views_->add_subscription(mount, "late"));
}

TEST_F(ViewHostTest, MountsEndWithTheirConnection) {
  auto page = push_session(std::make_shared<Pushes>());
  const auto m = open(page).at("result");
  rpc("view/subscribe", json::object{{"mountId", m.at("mountId")}, {"endpoint", "feed"}}, page);
  page->close();
  auto watcher = push_session(std::make_shared<Pushes>());
  ASSERT_TRUE(run_until([&] {
    auto r = rpc("view/mounts", json::object{}, watcher).at("result");
    return r.at("mounts").as_array().empty() && r.at("subscriptions").at("todo") == 0;
  }));
  EXPECT_EQ(get(std::string(m.at("url").as_string())).status, 404);
}

TEST_F(ViewHostTest, StateIsSavedPerServiceAndSurvivesTheViewHost) {
  auto page = push_session(std::make_shared<Pushes>());
  std::string mount(open(page).at("result").at("mountId").as_string());
  EXPECT_EQ(rpc("view/getState", json::object{{"mountId", mount}}, page).at("result").at("state"),
            nullptr);
  json::value state = json::object{{"filter", "open"}, {"sort", json::array{"due", 1}}};
  EXPECT_EQ(rpc("view/setState", json::object{{"mountId", mount}, {"state", state}}, page)
                .at("result")
                .at("saved"),
            true);
  EXPECT_TRUE(fs::exists(state_.dir() / "views" / "todo.json"));

  // A new view host over the same state dir (a daemon restart) gives it back.
  Options options;
  options.web_dir = web_->dir();
  options.state_dir = state_.dir();
  ViewHost again(*host_, options);
  std::optional<Result<json::value>> got;
  boost::asio::co_spawn(
      ioc(), [&]() -> boost::asio::awaitable<void> { got = co_await again.get_state("todo"); },
      boost::asio::detached);
  ASSERT_TRUE(run_until([&] { return got.has_value(); }));
  EXPECT_EQ(got->value().at("state"), state);

  std::string big(std::size_t{300} * 1024, 'x');
  auto r = rpc("view/setState", json::object{{"mountId", mount}, {"state", big}}, page);
  EXPECT_EQ(code(r), -32602);
  EXPECT_EQ(code(rpc("view/setState", json::object{{"mountId", mount}}, page)), -32602);
}

}  // namespace
}  // namespace hearth::methods::view
