#include "handlers/function/function.hpp"

#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <set>

#include "handlers/testing.hpp"
#include "proc/process.hpp"
#include "proc/testing.hpp"

namespace hearth::handlers::function {
namespace {

using namespace handlers::testing;

const bool kSigpipeIgnored = ignore_sigpipe();

/// Pids of the JS workers whose working directory is `dir`.
std::vector<pid_t> workers_in(const fs::path& dir) {
  return processes_in(dir, [](const fs::path& proc) {
    std::error_code ec;
    const auto exe = fs::read_symlink(proc / "exe", ec);
    return !ec && exe.filename() == "hearth-js-worker";
  });
}

class FunctionTest : public KindTest {
 protected:
  void SetUp() override {
    make_service("function");
    manifest::Endpoint updates;
    updates.id = "updates";
    updates.method = manifest::Method::kSubscription;
    service_.endpoints.push_back(updates);
    fs::create_directories(service_.dir / "lib");
    fs::create_directories(service_.dir / "data");
    options_.executor = io_.executor();
    options_.js_workers = 2;
    kind_ = make_kind(options_);
  }
  void TearDown() override {
    kind_.reset();  // stops the pools
    for (int i = 0; i < 100 && !workers_in(service_.dir).empty(); ++i) {
      std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(workers_in(service_.dir).empty());
    remove_service();
  }
  /// An endpoint `id` whose function handler runs `fn` of `module`.
  static manifest::Endpoint function_endpoint(const std::string& id, const std::string& module,
                                              const std::string& fn) {
    manifest::Endpoint ep;
    ep.id = id;
    ep.handler_type = "function";
    ep.handler = json::object{{"type", "function"}, {"module", module}, {"function", fn}};
    return ep;
  }
  /// A handler for module/function, with the given effective permissions.
  std::unique_ptr<Handler> handler(const std::string& module, const std::string& fn,
                                   manifest::Permissions permissions = {}) {
    auto& ep = add_endpoint(fn, function_endpoint(fn, module, fn).handler, std::move(permissions));
    auto created = kind_->create(service_, ep);
    EXPECT_TRUE(created.ok()) << (created.ok() ? "" : created.error().message);
    return created.ok() ? std::move(created).value() : nullptr;
  }
  std::future<std::optional<Result<json::value>>> start(
      Handler& h, json::value input, std::chrono::milliseconds timeout = 10s,
      const manifest::Endpoint* endpoint = nullptr) {
    return start_call(io_.executor(), h,
                      make_call(std::move(input), timeout, io_.executor(), endpoint));
  }
  Result<json::value> run(Handler& h, json::value input = nullptr,
                          std::chrono::milliseconds timeout = 10s) {
    return *start(h, std::move(input), timeout).get();
  }

  proc::testing::IoThread io_;
};

TEST_F(FunctionTest, CheckNamesEveryProblem) {
  EXPECT_EQ(problem_list(check(R"({"type":"function","module":"a.mjs","function":"f"})")), "");
  EXPECT_EQ(problem_list(check(R"({"type":"function"})")),
            "endpoints[0].handler.module: is required (the JavaScript module file, relative to the "
            "service folder)\nendpoints[0].handler.function: is required (the name of the exported "
            "function)\n");
  EXPECT_NE(problem_list(check(R"({"type":"function","module":"../x.js","function":"f"})"))
                .find("inside the service folder"),
            std::string::npos);
  EXPECT_NE(problem_list(check(R"({"type":"function","module":"/etc/x.js","function":"f"})"))
                .find("inside the service folder"),
            std::string::npos);
  EXPECT_NE(problem_list(check(R"({"type":"function","module":"todos.ts","function":"f"})"))
                .find("TypeScript"),
            std::string::npos);
  EXPECT_NE(problem_list(check(R"({"type":"function","module":"a.py","function":"f"})"))
                .find("JavaScript file"),
            std::string::npos);
  EXPECT_NE(problem_list(check(R"({"type":"function","module":"a.js","function":""})")), "");
}

TEST_F(FunctionTest, CreateRefusesAMissingModule) {
  manifest::Endpoint ep = function_endpoint("x", "nope.mjs", "f");
  auto created = kind_->create(service_, ep);
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.error().message.find("does not exist"), std::string::npos);
}

// With several I/O threads every call is answered with its own result: the pool's queue and
// workers are touched only on its strand (a debug build asserts it on every call).
TEST_F(FunctionTest, EveryCallIsAnsweredWithSeveralIoThreads) {
  write("echo.mjs", "export function echo(input) { return input.n; }\n");
  asio::thread_pool threads(2);
  KindOptions opts = options_;
  opts.executor = threads.get_executor();
  auto kind = make_kind(opts);
  manifest::Endpoint ep = function_endpoint("echo", "echo.mjs", "echo");
  auto created = kind->create(service_, ep);
  ASSERT_TRUE(created.ok()) << created.error().message;
  std::shared_ptr<Handler> h = std::move(created).value();

  constexpr int kCalls = 3000;
  std::atomic<int> right{0}, answered{0};
  std::promise<void> all_answered;
  for (int i = 0; i < kCalls; ++i) {
    Call call;
    call.service = &service_;
    call.endpoint = &ep;
    call.input = json::object{{"n", i}};
    call.timeout = 120s;
    call.executor = threads.get_executor();
    // Each caller on a strand of its own, as connections are.
    asio::co_spawn(
        asio::make_strand(threads.get_executor()),
        [h, call = std::move(call), i, &right, &answered,
         &all_answered]() mutable -> asio::awaitable<void> {
          auto r = co_await h->call(std::move(call));
          if (r.ok() && r.value() == i) right.fetch_add(1);
          if (answered.fetch_add(1) + 1 == kCalls) all_answered.set_value();
        },
        asio::detached);
  }
  auto status = all_answered.get_future().wait_for(180s);
  EXPECT_EQ(status, std::future_status::ready)
      << answered.load() << " of " << kCalls << " answered";
  EXPECT_EQ(right.load(), kCalls);
  kind->shutdown();
  kind.reset();
  h.reset();
  threads.join();
}

// The daemon writes its ready file once Kind::ready(): warm pools must say so only when a
// worker can take a call, and a pool that cannot start must not hold the daemon forever.
TEST_F(FunctionTest, AWarmPoolIsReadyOnlyOnceAWorkerCanAnswer) {
  write("echo.mjs", "export function echo(input) { return input.n; }\n");
  KindOptions opts = options_;
  opts.warm_pools = true;
  auto kind = make_kind(opts);
  EXPECT_TRUE(kind->ready());  // no pool yet
  manifest::Endpoint ep = function_endpoint("echo", "echo.mjs", "echo");
  auto created = kind->create(service_, ep);
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_FALSE(kind->ready());  // the workers are starting
  for (int i = 0; i < 1000 && !kind->ready(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(kind->ready());

  opts.js_worker = service_.dir / "no-such-worker";
  auto broken = make_kind(opts);
  manifest::Endpoint ep2 = ep;
  ep2.effective.max_memory = 64u << 20;  // another pool
  ASSERT_TRUE(broken->create(service_, ep2).ok());
  for (int i = 0; i < 1000 && !broken->ready(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(broken->ready());
  kind->shutdown();
  broken->shutdown();
}

// A static import from outside the service folder fails at load (hearth check, serve), not at
// every call.
TEST_F(FunctionTest, CreateRefusesAStaticImportThatCannotLoad) {
  write("outside.mjs",
        "import { x } from '../elsewhere/x.mjs';\nexport function f() { return x; }\n");
  manifest::Endpoint ep = function_endpoint("f", "outside.mjs", "f");
  auto created = kind_->create(service_, ep);
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.error().message.find("cannot load"), std::string::npos)
      << created.error().message;
  EXPECT_NE(created.error().message.find("../elsewhere/x.mjs"), std::string::npos)
      << created.error().message;
}

TEST_F(FunctionTest, SyncAndAsyncFunctionsReturnJson) {
  write("todos.mjs", R"(
export function listTodos(input, ctx) {
  return { items: [1, 2, input.n], endpoint: ctx.endpoint, service: ctx.service };
}
export async function later(input) {
  await null;
  const v = await new Promise((resolve) => setTimeout(() => resolve(input.n * 2), 5));
  return v;
}
export default function (input) { return 'default:' + input.n; }
export function nothing() {}
)");
  auto sync = handler("todos.mjs", "listTodos");
  auto r = run(*sync, parse(R"({"n": 3})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(json::serialize(r.value()),
            R"({"items":[1,2,3],"endpoint":"listTodos","service":"svc"})");
  auto async = handler("todos.mjs", "later");
  r = run(*async, parse(R"({"n": 21})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value(), json::value(42));
  auto dflt = handler("todos.mjs", "default");
  r = run(*dflt, parse(R"({"n": 1})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), json::value("default:1"));
  auto none = handler("todos.mjs", "nothing");
  r = run(*none);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.value().is_null());
}

TEST_F(FunctionTest, PlainScriptsExportThroughModuleExportsOrGlobals) {
  write("cjs.cjs", "module.exports.double = (input) => input.n * 2;");
  write("plain.js", "function triple(input) { return input.n * 3; }");
  auto a = handler("cjs.cjs", "double");
  auto r = run(*a, parse(R"({"n": 4})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value(), json::value(8));
  auto b = handler("plain.js", "triple");
  r = run(*b, parse(R"({"n": 4})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value(), json::value(12));
}

TEST_F(FunctionTest, CallsDoNotSeeEachOthersState) {
  write("state.mjs", R"(
let count = 0;
export function bump() { globalThis.leak = (globalThis.leak || 0) + 1; count += 1; return [count, globalThis.leak]; }
)");
  auto h = handler("state.mjs", "bump");
  for (int i = 0; i < 6; ++i) {
    auto r = run(*h);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(json::serialize(r.value()), "[1,1]");
  }
}

TEST_F(FunctionTest, WorkerIsolationKeepsTheModuleBetweenCallsOfAWorker) {
  EXPECT_EQ(problem_list(check(
                R"({"type":"function","module":"a.mjs","function":"f","isolation":"worker"})")),
            "");
  EXPECT_EQ(problem_list(
                check(R"({"type":"function","module":"a.mjs","function":"f","isolation":"call"})")),
            "");
  EXPECT_EQ(problem_list(check(
                R"({"type":"function","module":"a.mjs","function":"f","isolation":"realm"})")),
            "endpoints[0].handler.isolation: must be \"call\" (a fresh module instance per call, "
            "the default) or \"worker\" (the module's state kept between the calls a worker "
            "runs)\n");

  options_.js_workers = 1;  // one worker: every call meets the same kept instance
  kind_ = make_kind(options_);
  write("kept.mjs", R"(
import { seen } from './lib/shared.mjs';
let count = 0;
export function bump(input) { count += 1; seen.push(input.tag); return {count, seen: seen.length}; }
export function spin() { count = 1000; for (;;) {} }
)");
  write("lib/shared.mjs", "export const seen = [];\n");
  auto& ep = add_endpoint("bump", R"({"type":"function","module":"kept.mjs","function":"bump",
      "isolation":"worker"})");
  auto& spin_ep = add_endpoint("spin", R"({"type":"function","module":"kept.mjs",
      "function":"spin","isolation":"worker"})");
  auto bump = kind_->create(service_, ep);
  auto spin = kind_->create(service_, spin_ep);
  ASSERT_TRUE(bump.ok() && spin.ok());
  for (int i = 1; i <= 4; ++i) {
    auto r = run(**bump, json::object{{"tag", i}});
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r.value(), (json::object{{"count", i}, {"seen", i}}));
  }
  // A call stopped at its deadline drops the kept instance: the next call starts afresh.
  auto r = run(**spin, nullptr, 300ms);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kTimeout);
  r = run(**bump, json::object{{"tag", 9}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value(), (json::object{{"count", 1}, {"seen", 1}}));
}

TEST_F(FunctionTest, AThrownErrorComesBackWithItsMessageAndStack) {
  write("lib/fail.mjs",
        "export function deep(x) {\n  throw new TypeError('bad input: ' + x);\n}\n");
  write("main.mjs",
        "import { deep } from './lib/fail.mjs';\nexport function go(input) {\n  return "
        "deep(input.x);\n}\n");
  auto h = handler("main.mjs", "go");
  auto r = run(*h, parse(R"({"x": "q"})"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_EQ(r.error().message, "TypeError: bad input: q");
  const auto& data = r.error().data.as_object();
  EXPECT_EQ(data.at("name"), "TypeError");
  EXPECT_EQ(data.at("file"), "lib/fail.mjs");
  EXPECT_EQ(data.at("line"), 2);
  const std::string stack(data.at("stack").as_string());
  EXPECT_NE(stack.find("lib/fail.mjs:2"), std::string::npos) << stack;
  EXPECT_NE(stack.find("main.mjs:3"), std::string::npos) << stack;

  write("reject.mjs", "export async function no() { await null; throw new Error('async boom'); }");
  auto rej = handler("reject.mjs", "no");
  r = run(*rej);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "Error: async boom");
}

TEST_F(FunctionTest, MissingExportAndSyntaxErrorsAreReported) {
  write("ok.mjs", "export const notAFunction = 1;");
  auto h = handler("ok.mjs", "notAFunction");
  auto r = run(*h);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("does not export a function named 'notAFunction'"),
            std::string::npos);
  write("syntax.mjs", "export function f( {");
  auto s = handler("syntax.mjs", "f");
  r = run(*s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("SyntaxError"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().data.as_object().at("file"), "syntax.mjs");
}

TEST_F(FunctionTest, ImportsStayInsideTheServiceFolder) {
  write("lib/math.mjs", "export const add = (a, b) => a + b;");
  write("sum.mjs",
        "import { add } from './lib/math.mjs';\nexport const sum = (i) => add(i.a, i.b);");
  auto h = handler("sum.mjs", "sum");
  auto r = run(*h, parse(R"({"a": 2, "b": 5})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value(), json::value(7));

  // Imports that cannot load are refused when the endpoint is created (the manifest loads), not
  // at every call; the worker still refuses them should the files change afterwards.
  auto refused = [&](const std::string& module, std::string_view why) {
    auto created = kind_->create(service_, function_endpoint("f", module, "f"));
    ASSERT_FALSE(created.ok()) << module;
    EXPECT_NE(created.error().message.find(why), std::string::npos) << created.error().message;
  };
  write("escape.mjs", "import x from '../../../etc/passwd';\nexport const f = () => x;");
  refused("escape.mjs", "outside the service folder");
  write("pkg.mjs", "import _ from 'lodash';\nexport const f = () => 1;");
  refused("pkg.mjs", "cannot load");
}

TEST_F(FunctionTest, AnInfiniteLoopTimesOutAndTheWorkerServesTheNextCall) {
  write("loop.mjs",
        "export function spin() { for (;;) {} }\nexport function ok() { return 'ok'; }");
  auto spin = handler("loop.mjs", "spin");
  auto ok = handler("loop.mjs", "ok");
  ASSERT_TRUE(run(*ok).ok());  // the pool is up
  const auto before = workers_in(service_.dir);
  ASSERT_EQ(before.size(), 2u);
  auto r = run(*spin, nullptr, 300ms);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kTimeout);
  EXPECT_EQ(r.error().data.as_object().at("timeoutMs"), 300);
  r = run(*ok);
  ASSERT_TRUE(r.ok());
  // Stopped by the interrupt callback: no worker had to be killed.
  EXPECT_EQ(workers_in(service_.dir), before);
}

TEST_F(FunctionTest, TheHandlerTimeoutIsCappedByMaxExecutionTime) {
  write("loop.mjs", "export function spin() { for (;;) {} }");
  manifest::Endpoint ep;
  ep.id = "spin";
  ep.handler_type = "function";
  ep.handler = json::object{
      {"type", "function"}, {"module", "loop.mjs"}, {"function", "spin"}, {"timeout", 60000}};
  ep.effective.max_execution_time = 250ms;
  auto created = kind_->create(service_, ep);
  ASSERT_TRUE(created.ok()) << created.error().message;
  auto r = *start(*created.value(), nullptr, 10s, &ep).get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kTimeout);
  EXPECT_EQ(r.error().data.as_object().at("timeoutMs"), 250);
}

TEST_F(FunctionTest, AMemoryBombFailsAloneAndTheWorkerIsReplaced) {
  write("bomb.mjs", R"(
export function bomb() { const a = []; for (;;) a.push({ x: new Array(1000).fill('y') }); }
export function ok() { return 'ok'; }
)");
  manifest::Permissions limited;
  limited.max_memory = 64ull << 20;
  auto bomb = handler("bomb.mjs", "bomb", limited);
  auto ok = handler("bomb.mjs", "ok", limited);
  auto r = run(*bomb, nullptr, 20s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_NE(r.error().message.find("memory limit exceeded"), std::string::npos)
      << r.error().message;
  for (int i = 0; i < 3; ++i) {
    r = run(*ok);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
}

// A worker killed by someone else (kill -9) is reported as killed, not as a memory overrun,
// even when the endpoint has a memory limit.
TEST_F(FunctionTest, AWorkerKilledFromOutsideIsNotReportedAsOutOfMemory) {
  write("spin.mjs", "export function spin() { for (;;) {} }\nexport function ok() { return 1; }\n");
  manifest::Permissions limited;
  limited.max_memory = 256ull << 20;
  auto spin = handler("spin.mjs", "spin", limited);
  auto ok = handler("spin.mjs", "ok", limited);
  auto pending = start(*spin, nullptr, 20s);
  // Wait until a worker is busy with it, then kill every worker of the folder.
  std::this_thread::sleep_for(500ms);
  auto pids = workers_in(service_.dir);
  ASSERT_FALSE(pids.empty());
  for (pid_t pid : pids) ::kill(pid, SIGKILL);
  ASSERT_EQ(pending.wait_for(15s), std::future_status::ready);
  auto r = *pending.get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_EQ(r.error().message.find("memory"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("killed"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("outside"), std::string::npos) << r.error().message;
  auto after = run(*ok);
  EXPECT_TRUE(after.ok()) << after.error().message;
}

TEST_F(FunctionTest, FilesOnlyWithinFileAccess) {
  write("data/todos.json", R"([{"id":1}])");
  write("secret.txt", "s3cret");
  write("files.mjs", R"(
export function read(input, ctx) { return JSON.parse(ctx.readFile(input.path)); }
export function readText(input, ctx) { return ctx.readFile(input.path); }
export function save(input, ctx) { ctx.writeFile('data/out.json', JSON.stringify(input)); return JSON.parse(ctx.readFile('data/out.json')); }
export function caught(input, ctx) { try { ctx.readFile('secret.txt'); } catch (e) { return [e.name, e.code]; } }
)");
  manifest::Permissions perms;
  perms.file_access = std::vector<std::string>{"data/**"};
  auto read = handler("files.mjs", "read", perms);
  auto r = run(*read, parse(R"({"path": "data/todos.json"})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(json::serialize(r.value()), R"([{"id":1}])");
  auto save = handler("files.mjs", "save", perms);
  r = run(*save, parse(R"({"a": "\u00e9"})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(json::serialize(r.value()), R"({"a":"é"})");
  auto text = handler("files.mjs", "readText", perms);
  for (const char* bad : {"secret.txt", "../../etc/passwd", "/etc/passwd", "data/../secret.txt"}) {
    r = run(*text, json::object{{"path", bad}});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied) << bad << ": " << r.error().message;
  }
  fs::create_symlink(service_.dir / "secret.txt", service_.dir / "data" / "link.txt");
  r = run(*text, json::object{{"path", "data/link.txt"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  auto caught = handler("files.mjs", "caught", perms);
  r = run(*caught);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(json::serialize(r.value()), R"(["PermissionDeniedError","EACCES"])");
  // No fileAccess at all: nothing.
  auto none = handler("files.mjs", "readText");
  r = run(*none, json::object{{"path", "data/todos.json"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
}

TEST_F(FunctionTest, NetworkOnlyWhereAllowed) {
  write("net.mjs", R"(
export async function get(input, ctx) { const r = await ctx.fetch(input.url); return r.status; }
)");
  auto none = handler("net.mjs", "get");
  auto r = run(*none, parse(R"({"url": "http://127.0.0.1:9/"})"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(r.error().message.find("no networkAccess"), std::string::npos) << r.error().message;
  manifest::Permissions listed;
  listed.network_access = egress::NetworkPolicy::parse({"api.example.com"}).value();
  auto list = handler("net.mjs", "get", listed);
  r = run(*list, parse(R"({"url": "https://evil.example.net/x"})"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(r.error().message.find("evil.example.net:443"), std::string::npos);
}

TEST_F(FunctionTest, PublishAndLog) {
  write("pub.mjs", R"(
export function add(input, ctx) { ctx.log('adding', input); console.log('x', 1); ctx.publish('updates', { added: input.id }); return true; }
export function bad(input, ctx) { ctx.publish('nope', 1); }
)");
  auto add = handler("pub.mjs", "add");
  auto r = run(*add, parse(R"({"id": 7})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(publisher_.published().size(), 1u);
  EXPECT_EQ(json::serialize(publisher_.published()[0]), R"({"added":7})");
  auto bad = handler("pub.mjs", "bad");
  r = run(*bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not a subscription endpoint"), std::string::npos);
}

TEST_F(FunctionTest, ManyConcurrentCallsAcrossThePool) {
  write("work.mjs", R"(
export async function work(input) {
  let s = 0; for (let i = 0; i < 20000; i++) s += i % 7;
  await new Promise((r) => setTimeout(r, 2));
  return { n: input.n, s };
}
)");
  auto h = handler("work.mjs", "work");
  std::vector<std::future<std::optional<Result<json::value>>>> calls;
  calls.reserve(64);
  for (int i = 0; i < 64; ++i) calls.push_back(start(*h, json::object{{"n", i}}));
  for (int i = 0; i < 64; ++i) {
    auto r = *calls[static_cast<std::size_t>(i)].get();
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r.value().as_object().at("n"), i);
  }
  EXPECT_EQ(workers_in(service_.dir).size(), 2u);
}

TEST_F(FunctionTest, ConcurrentMutationsDoNotLoseUpdates) {
  write("count.mjs", R"(
export function bump(input, ctx) {
  let n = 0;
  try { n = JSON.parse(ctx.readFile('data/count.json')); } catch (e) { if (e.code !== 'ENOENT') throw e; }
  const until = Date.now() + 2; while (Date.now() < until) {}  // widen the race window
  ctx.writeFile('data/count.json', JSON.stringify(n + 1));
  return n + 1;
}
)");
  manifest::Permissions perms;
  perms.file_access = std::vector<std::string>{"data/**"};
  auto h = handler("count.mjs", "bump", perms);
  manifest::Endpoint mutation;
  mutation.id = "bump";
  mutation.method = manifest::Method::kMutation;
  std::vector<std::future<std::optional<Result<json::value>>>> calls;
  calls.reserve(40);
  for (int i = 0; i < 40; ++i) calls.push_back(start(*h, nullptr, 10s, &mutation));
  for (auto& c : calls) {
    auto r = *c.get();
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  std::ifstream in(service_.dir / "data" / "count.json");
  int n = 0;
  in >> n;
  EXPECT_EQ(n, 40);
}

TEST_F(FunctionTest, AWorkerCrashFailsOnlyItsCall) {
  write("slow.mjs", R"(
export function slow() { const end = Date.now() + 5000; while (Date.now() < end) {} return 'late'; }
export function ok(input) { return input.n; }
)");
  auto slow = handler("slow.mjs", "slow");
  auto ok = handler("slow.mjs", "ok");
  ASSERT_TRUE(run(*ok, json::object{{"n", 1}}).ok());  // the pool is warm
  auto pending = start(*slow, nullptr);
  // Find the busy worker: the one whose CPU time grows.
  std::this_thread::sleep_for(300ms);
  auto pids = workers_in(service_.dir);
  ASSERT_EQ(pids.size(), 2u);
  auto cpu = [](pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string s((std::istreambuf_iterator<char>(stat)), {});
    auto close = s.rfind(')');
    std::istringstream rest(s.substr(close + 2));
    std::string field;
    long utime = 0;
    for (int i = 0; i < 12 && rest >> field; ++i) {
      if (i == 11) utime = std::stol(field);
    }
    return utime;
  };
  const pid_t busy = cpu(pids[0]) > cpu(pids[1]) ? pids[0] : pids[1];
  ::kill(busy, SIGKILL);
  auto r = *pending.get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_NE(r.error().message.find("crashed"), std::string::npos) << r.error().message;
  for (int i = 0; i < 4; ++i) {
    auto again = run(*ok, json::object{{"n", i}});
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again.value(), i);
  }
  for (int i = 0; i < 100 && workers_in(service_.dir).size() != 2; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(workers_in(service_.dir).size(), 2u);
}

TEST_F(FunctionTest, ShutdownStopsThePoolsForGood) {
  write("ok.mjs", "export const ok = () => 'ok';");
  auto h = handler("ok.mjs", "ok");
  ASSERT_TRUE(run(*h).ok());
  kind_->shutdown();
  for (int i = 0; i < 100 && !workers_in(service_.dir).empty(); ++i) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(workers_in(service_.dir).empty());
  std::this_thread::sleep_for(300ms);  // nothing is started again
  EXPECT_TRUE(workers_in(service_.dir).empty());
  auto r = run(*h);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("stopping"), std::string::npos) << r.error().message;
}

TEST_F(FunctionTest, ASubscriptionSendsTheFunctionsResultFirst) {
  write("sub.mjs", "export const snapshot = (input) => ({ items: [input.q] });");
  auto h = handler("sub.mjs", "snapshot");
  std::promise<json::value> first;
  StreamSink sink;
  sink.on_data = [&first](json::value v) { first.set_value(std::move(v)); };
  sink.on_end = [](const std::optional<Error>&) {};
  Call call;
  call.service = &service_;
  call.input = parse(R"({"q": "a"})");
  call.publisher = &publisher_;
  call.executor = io_.executor();
  auto stream = h->open_stream(std::move(call), sink);
  ASSERT_TRUE(stream.ok());
  auto future = first.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(json::serialize(future.get()), R"({"items":["a"]})");
  stream.value()->close();
}

}  // namespace
}  // namespace hearth::handlers::function
