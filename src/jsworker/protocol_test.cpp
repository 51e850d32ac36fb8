#include "jsworker/protocol.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "js/frame.hpp"

namespace hearth::jsworker {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

json::value parse(std::string_view text) {
  return json::parse(text);
}

template <class Message>
Message to_worker_round_trip(const Message& m) {
  auto decoded = decode_to_worker(parse(encode(ToWorker(m))));
  EXPECT_TRUE(decoded.ok()) << (decoded.ok() ? "" : decoded.error().message);
  if (!decoded.ok()) return {};
  EXPECT_TRUE(std::holds_alternative<Message>(decoded.value()));
  return std::holds_alternative<Message>(decoded.value()) ? std::get<Message>(decoded.value())
                                                          : Message{};
}

template <class Message>
Message from_worker_round_trip(const Message& m) {
  auto decoded = decode_from_worker(parse(encode(FromWorker(m))));
  EXPECT_TRUE(decoded.ok()) << (decoded.ok() ? "" : decoded.error().message);
  if (!decoded.ok()) return {};
  EXPECT_TRUE(std::holds_alternative<Message>(decoded.value()));
  return std::holds_alternative<Message>(decoded.value()) ? std::get<Message>(decoded.value())
                                                          : Message{};
}

std::string to_worker_error(std::string_view text) {
  auto decoded = decode_to_worker(parse(text));
  return decoded.ok() ? std::string("(decoded)") : decoded.error().message;
}

std::string from_worker_error(std::string_view text) {
  auto decoded = decode_from_worker(parse(text));
  return decoded.ok() ? std::string("(decoded)") : decoded.error().message;
}

TEST(JsWorkerProtocol, InitRoundTrips) {
  Init init;
  init.service = "svc";
  init.service_dir = "/srv/svc";
  EXPECT_EQ(to_worker_round_trip(init), init);
  init.file_access = std::vector<std::string>{"data/**", "!data/secret"};
  init.network = std::vector<std::string>{"api.example.com", "*.example.org"};
  init.max_heap = 64u << 20;
  init.subscriptions = {"updates", "alerts"};
  EXPECT_EQ(to_worker_round_trip(init), init);
  init.file_access = std::vector<std::string>{};  // present but empty: not the same as absent
  init.network = true;
  EXPECT_EQ(to_worker_round_trip(init), init);
}

TEST(JsWorkerProtocol, RequestsRoundTrip) {
  CallFunction call;
  call.id = 42;
  call.module = "lib/todos.mjs";
  call.function = "listTodos";
  call.endpoint = "list";
  call.input = parse(R"({"q":"milk","n":[1,2.5,null,true],"deep":{"x":"\u00e9"}})");
  call.timeout = 1234ms;
  EXPECT_EQ(to_worker_round_trip(call), call);
  call.mutation = true;
  call.input = nullptr;
  EXPECT_EQ(to_worker_round_trip(call), call);
  call.busy = true;
  EXPECT_EQ(to_worker_round_trip(call), call);
  call.deadline_ns = std::int64_t{9'007'199'254'740'993};  // beyond a double's exact integers
  EXPECT_EQ(to_worker_round_trip(call), call);

  EvaluateSource eval;
  eval.id = 7;
  eval.source = "console.log(state.n);\nstate.n += 1;\nreturn `done ${state.n}`;";
  eval.filename = "turn-3.js";
  eval.globals = parse(R"({"state":{"n":1},"limit":5,"names":["a","b"]})").as_object();
  eval.timeout = 5000ms;
  EXPECT_EQ(to_worker_round_trip(eval), eval);
  eval.deadline_ns = 123'456'789'000;
  EXPECT_EQ(to_worker_round_trip(eval), eval);
}

TEST(JsWorkerProtocol, WorkerMessagesRoundTrip) {
  EXPECT_EQ(from_worker_round_trip(Ready{4321}), Ready{4321});
  EXPECT_EQ(from_worker_round_trip(Started{9}), Started{9});
  for (auto level : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError}) {
    const Log log{9, level, "line \"quoted\" \n next"};
    EXPECT_EQ(from_worker_round_trip(log), log);
  }
  const Publish publish{9, "updates", parse(R"({"items":[1,2]})")};
  EXPECT_EQ(from_worker_round_trip(publish), publish);
  Returned returned{9, parse(R"([1,"two",{"three":3}])"), std::nullopt};
  EXPECT_EQ(from_worker_round_trip(returned), returned);
  returned.globals = parse(R"({"state":{"n":2}})").as_object();
  EXPECT_EQ(from_worker_round_trip(returned), returned);
  returned.collecting = true;
  EXPECT_EQ(from_worker_round_trip(returned), returned);
  EXPECT_EQ(from_worker_round_trip(Collected{}), Collected{});
  EXPECT_EQ(request_id(FromWorker(Collected{})), 0u);
  for (auto kind : {FailureKind::kThrown, FailureKind::kPermission, FailureKind::kTimeout,
                    FailureKind::kOutOfMemory, FailureKind::kConfig}) {
    Failed failed{9, kind, "boom", "TypeError", "f@a.mjs:3:7\n", "a.mjs", 3, 7};
    EXPECT_EQ(from_worker_round_trip(failed), failed);
    failed.collecting = true;
    EXPECT_EQ(from_worker_round_trip(failed), failed);
  }
}

// The wire format stays what docs/protocol.md lists, member for member.
TEST(JsWorkerProtocol, HostCallsRoundTrip) {
  CallFunction call;
  call.id = 7;
  call.module = "worker.mjs";
  call.function = "run";
  call.host_calls = true;
  EXPECT_EQ(to_worker_round_trip(call), call);
  HostCall host{
      7, parse(R"({"capability":"lime.storage","method":"get","params":{"key":"k"}})").as_object()};
  EXPECT_EQ(from_worker_round_trip(host), host);
  EXPECT_EQ(request_id(FromWorker(host)), 7u);
  HostAnswer answer{7, parse(R"({"error":{"code":-32001,"message":"denied"}})").as_object()};
  EXPECT_EQ(to_worker_round_trip(answer), answer);
  EXPECT_NE(to_worker_error(R"({"t":"hostAnswer","id":1})"), "(decoded)");
  EXPECT_NE(from_worker_error(R"({"t":"hostCall","id":1,"call":[]})"), "(decoded)");
}

TEST(JsWorkerProtocol, EncodesTheDocumentedMembers) {
  CallFunction call;
  call.id = 3;
  call.module = "m.mjs";
  call.function = "f";
  call.endpoint = "e";
  call.input = parse(R"({"a":1})");
  call.timeout = 250ms;
  EXPECT_EQ(encode(ToWorker(call)),
            R"({"t":"call","id":3,"module":"m.mjs","function":"f","endpoint":"e",)"
            R"("input":{"a":1},"timeoutMs":250})");
  call.mutation = true;
  EXPECT_EQ(parse(encode(ToWorker(call))).as_object().at("mutation"), true);
  call.busy = true;
  EXPECT_EQ(parse(encode(ToWorker(call))).as_object().at("busy"), true);
  call.deadline_ns = 77;
  EXPECT_EQ(parse(encode(ToWorker(call))).as_object().at("deadlineNs"), 77);

  Init init;
  init.service = "s";
  init.service_dir = "/d";
  EXPECT_EQ(encode(ToWorker(init)),
            R"({"t":"init","service":"s","serviceDir":"/d","network":false,"subscriptions":[]})");

  EXPECT_EQ(encode(FromWorker(Ready{5})), R"({"t":"ready","pid":5})");
  EXPECT_EQ(encode(FromWorker(Started{5})), R"({"t":"start","id":5})");
  EXPECT_EQ(encode(FromWorker(Log{5, LogLevel::kWarn, "w"})),
            R"({"t":"log","id":5,"level":"warn","message":"w"})");
  EXPECT_EQ(encode(FromWorker(Failed{5, FailureKind::kOutOfMemory, "m", "", "", "", 0, 0})),
            R"({"t":"error","id":5,"kind":"oom","message":"m","name":"","stack":"","file":"",)"
            R"("line":0,"column":0})");
  EXPECT_EQ(encode(FromWorker(Collected{})), R"({"t":"collected"})");
}

// The worker splices the engine's JSON text in: the same message as encoding the value.
TEST(JsWorkerProtocol, ASplicedResultDecodesLikeAnEncodedOne) {
  EXPECT_EQ(encode_returned(12, R"({"a":[1,2]})"),
            encode(FromWorker(Returned{12, parse(R"({"a":[1,2]})"), std::nullopt})));
  EXPECT_EQ(encode_returned(12, "null", std::string_view(R"({"s":1})")),
            encode(FromWorker(Returned{12, nullptr, parse(R"({"s":1})").as_object()})));
  EXPECT_EQ(encode_returned(12, "1", std::nullopt, /*collecting=*/true),
            encode(FromWorker(Returned{12, 1, std::nullopt, true})));
  auto decoded = decode_from_worker(parse(encode_returned(12, "\"x\"")));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(std::get<Returned>(decoded.value()).value, "x");
  EXPECT_EQ(request_id(decoded.value()), 12u);
}

TEST(JsWorkerProtocol, FramesCarryPayloadsWhole) {
  const std::string payload = encode(FromWorker(Log{1, LogLevel::kInfo, std::string(70000, 'x')}));
  js::FrameReader reader;
  reader.feed(frame(payload));
  EXPECT_EQ(reader.next(), payload);
}

TEST(JsWorkerProtocol, MalformedMessagesAreErrors) {
  EXPECT_NE(to_worker_error("[1,2]").find("JSON object"), std::string::npos);
  EXPECT_NE(to_worker_error(R"({"id":1})").find("'t'"), std::string::npos);
  EXPECT_NE(to_worker_error(R"({"t":7})").find("'t'"), std::string::npos);
  EXPECT_NE(to_worker_error(R"({"t":"dance"})").find("unknown"), std::string::npos);
  EXPECT_NE(to_worker_error(R"({"t":"ready","pid":1})").find("unknown"), std::string::npos);
  EXPECT_EQ(
      to_worker_error(
          R"({"t":"call","module":"m","function":"f","endpoint":"e","input":1,"timeoutMs":5})"),
      "'call' message: 'id' is missing");
  EXPECT_EQ(to_worker_error(R"({"t":"call","id":-1,"module":"m","function":"f","endpoint":"e",)"
                            R"("input":1,"timeoutMs":5})"),
            "'call' message: 'id' must be a non-negative integer");
  EXPECT_EQ(to_worker_error(R"({"t":"call","id":1.5,"module":"m","function":"f","endpoint":"e",)"
                            R"("input":1,"timeoutMs":5})"),
            "'call' message: 'id' must be a non-negative integer");
  EXPECT_EQ(to_worker_error(R"({"t":"call","id":1,"module":3,"function":"f","endpoint":"e",)"
                            R"("input":1,"timeoutMs":5})"),
            "'call' message: 'module' must be a string");
  EXPECT_EQ(to_worker_error(R"({"t":"call","id":1,"module":"m","function":"f","endpoint":"e",)"
                            R"("timeoutMs":5})"),
            "'call' message: 'input' is missing");
  EXPECT_EQ(to_worker_error(R"({"t":"call","id":1,"module":"m","function":"f","endpoint":"e",)"
                            R"("input":1,"timeoutMs":"5"})"),
            "'call' message: 'timeoutMs' must be an integer");
  EXPECT_EQ(to_worker_error(R"({"t":"call","id":1,"module":"m","function":"f","endpoint":"e",)"
                            R"("input":1,"timeoutMs":5,"mutation":"yes"})"),
            "'call' message: 'mutation' must be true or false");
  EXPECT_EQ(to_worker_error(R"({"t":"eval","id":1,"source":"1","filename":"s","globals":[],)"
                            R"("timeoutMs":5})"),
            "'eval' message: 'globals' must be an object");
  EXPECT_EQ(to_worker_error(R"({"t":"init","service":"s","serviceDir":"/d","network":"all",)"
                            R"("subscriptions":[]})"),
            "'init' message: 'network' must be an array of strings");
  EXPECT_EQ(to_worker_error(R"({"t":"init","service":"s","serviceDir":"/d","network":false,)"
                            R"("subscriptions":["a",1]})"),
            "'init' message: 'subscriptions' must be an array of strings");
  EXPECT_EQ(to_worker_error(R"({"t":"init","service":"s","serviceDir":"/d","network":false,)"
                            R"("maxHeap":-5,"subscriptions":[]})"),
            "'init' message: 'maxHeap' must be a non-negative integer");

  EXPECT_NE(from_worker_error("\"ready\"").find("JSON object"), std::string::npos);
  EXPECT_NE(from_worker_error(R"({"t":"call","id":1})").find("unknown"), std::string::npos);
  EXPECT_EQ(from_worker_error(R"({"t":"ready"})"), "'ready' message: 'pid' is missing");
  EXPECT_EQ(from_worker_error(R"({"t":"start","id":"1"})"),
            "'start' message: 'id' must be a non-negative integer");
  EXPECT_EQ(from_worker_error(R"({"t":"log","id":1,"level":"loud","message":"m"})"),
            "'log' message: 'level' must be debug, info, warn or error");
  EXPECT_EQ(from_worker_error(R"({"t":"publish","id":1,"data":1})"),
            "'publish' message: 'subscription' is missing");
  EXPECT_EQ(from_worker_error(R"({"t":"result","id":1})"), "'result' message: 'value' is missing");
  EXPECT_EQ(from_worker_error(R"({"t":"result","id":1,"value":1,"globals":2})"),
            "'result' message: 'globals' must be an object");
  EXPECT_EQ(from_worker_error(R"({"t":"error","id":1,"kind":"bad","message":"m","name":"",)"
                              R"("stack":"","file":"","line":0,"column":0})"),
            "'error' message: 'kind' must be thrown, permission, timeout, oom or config");
  EXPECT_EQ(from_worker_error(R"({"t":"error","id":1,"kind":"thrown","message":"m","name":"",)"
                              R"("stack":"","file":"","line":-2,"column":0})"),
            "'error' message: 'line' must be a non-negative integer");
}

}  // namespace
}  // namespace hearth::jsworker
