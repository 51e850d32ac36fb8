#include "workspace/workspace.hpp"

#include <boost/json/parse.hpp>
#include <thread>

#include "workspace/script.hpp"
#include "workspace/testing.hpp"

namespace hearth::workspace {
namespace {

using testing::WorkspaceFixture;
using namespace std::chrono_literals;

const char* const kSearch = R"(
name: search
description: A search box and its results
limits: {timeoutMs: 1500, memoryMb: 64}
components:
  - id: search
    states:
      search_box_state:
        permission: rw
        schema:
          type: object
          required: [search_pattern]
          additionalProperties: false
          properties:
            search_pattern: {type: string, maxLength: 20}
        initial: {search_pattern: ""}
        sideEffects:
          description: A change runs a search and refreshes results
          calls:
            - service: todos
              endpoint: search
              input: {query: {$value: /search_pattern}}
              assign: results
      results:
        permission: r
        schema: {type: array, items: {type: string}}
        initial: []
      secret_note:
        permission: w
        schema:
          type: object
          properties: {text: {type: string}, tag: {type: string}}
        initial: {text: "the original secret", tag: "keep"}
      counter:
        permission: rw
        schema: {type: integer, minimum: 0}
        initial: 0
      internal:
        visibility: private
        schema: {type: string}
        initial: "private value"
    utilities: [utils.js]
    examples:
      - title: Search for milk
        script: search_box_state.search_pattern = normalize("  MILK ");
)";

class WorkspaceTest : public WorkspaceFixture {
 protected:
  void SetUp() override {
    WorkspaceFixture::SetUp();
    write("utils.js",
          "// Trims and lower-cases a search.\nfunction normalize(text) {\n"
          "  return text.trim().toLowerCase();\n}\n");
    services_.answers["todos/search"] = [](const json::value& input) -> Result<json::value> {
      const std::string q(input.at("query").as_string());
      json::array out;
      out.emplace_back("found: " + q);
      return json::value(std::move(out));
    };
  }
};

TEST_F(WorkspaceTest, AScriptChangesStatesAndTheChangeIsCommittedWithItsPatch) {
  auto ws = open(kSearch);
  ASSERT_TRUE(ws);
  auto out = exec("search_box_state.search_pattern = normalize('  MILK '); counter += 2;");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->at("version"), 1);
  EXPECT_EQ(value_of("search_box_state"), boost::json::parse(R"({"search_pattern":"milk"})"));
  EXPECT_EQ(value_of("counter"), 2);
  // The side effect ran with the new value mapped into its input, its result assigned.
  ASSERT_EQ(services_.calls().size(), 1u);
  EXPECT_EQ(services_.calls()[0].input, boost::json::parse(R"({"query":"milk"})"));
  EXPECT_EQ(value_of("results"), boost::json::parse(R"(["found: milk"])"));
  auto history = wait(ws->history(0, 10));
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 1u);
  EXPECT_EQ(history->at(0).outcome, "committed");
  EXPECT_EQ(history->at(0).version, 1);
  EXPECT_FALSE(history->at(0).patch.empty());
  EXPECT_FALSE(history->at(0).inverse.empty());
}

TEST_F(WorkspaceTest, WritingAReadOnlyStateThrowsAndCommitsNothing) {
  auto ws = open(kSearch);
  ASSERT_TRUE(ws);
  for (const char* script :
       {"results.push('x');", "results = ['x'];", "counter = 5; results[0] = 'y';"}) {
    auto out = exec(script);
    ASSERT_FALSE(out.ok()) << script;
    EXPECT_EQ(out.error().code, ErrorCode::kHandlerError) << script;
    EXPECT_EQ(value_of("results"), json::array()) << script;
    EXPECT_EQ(value_of("counter"), 0) << script;
  }
  EXPECT_EQ(ws->version(), 0);
  auto history = wait(ws->history(0, 10));
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 3u);
  EXPECT_EQ(history->at(0).outcome, "failed");
}

TEST_F(WorkspaceTest, AWriteOnlyStateCanBeAssignedButNeverRead) {
  auto ws = open(kSearch);
  ASSERT_TRUE(ws);
  for (const char* script :
       {"return secret_note.text;", "return JSON.stringify(secret_note);",
        "return Object.keys(secret_note);", "return 'text' in secret_note;",
        "return Object.getOwnPropertyDescriptor(globalThis, 'secret_note').get().text;",
        "return Reflect.ownKeys(secret_note);", "return {...secret_note};",
        "return Object.getPrototypeOf(secret_note);", "return structuredClone(secret_note);"}) {
    auto out = exec(script);
    ASSERT_FALSE(out.ok()) << script;
    EXPECT_EQ(out.error().message.find("the original secret"), std::string::npos) << script;
  }
  auto out = exec("secret_note.text = 'new text';");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(value_of("secret_note"), boost::json::parse(R"({"text":"new text","tag":"keep"})"));
  out = exec("delete secret_note.tag;");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(value_of("secret_note"), boost::json::parse(R"({"text":"new text"})"));
  out = exec("secret_note = {tag: 'replaced'}; secret_note.text = 'and more';");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(value_of("secret_note"), boost::json::parse(R"({"tag":"replaced","text":"and more"})"));
  // Never readable through the model's view either.
  EXPECT_FALSE(ws->state("secret_note", false).ok());
  EXPECT_EQ(ws->render({}).find("and more"), std::string::npos);
}

TEST_F(WorkspaceTest, PrivateStatesAreAbsentFromScripts) {
  auto ws = open(kSearch);
  ASSERT_TRUE(ws);
  auto out = exec("return internal;");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("internal is not defined"), std::string::npos)
      << out.error().message;
  out = exec("return typeof globalThis.internal;");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->at("output"), "undefined");
  EXPECT_FALSE(ws->state("internal", false).ok());
}

TEST_F(WorkspaceTest, ASchemaViolationNamesTheStateThePathAndTheRule) {
  auto ws = open(kSearch);
  ASSERT_TRUE(ws);
  auto out = exec("counter = 1; search_box_state.search_pattern = 'x'.repeat(30);");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kInvalidParams);
  const auto& data = out.error().data.as_object();
  EXPECT_EQ(data.at("state"), "search_box_state");
  EXPECT_EQ(data.at("path"), "search_pattern");
  EXPECT_EQ(data.at("keyword"), "maxLength");
  EXPECT_EQ(value_of("counter"), 0);
  EXPECT_TRUE(services_.calls().empty());

  out = exec("search_box_state.extra = 1;");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().data.at("keyword"), "additionalProperties");
  out = exec("counter = -1;");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().data.at("keyword"), "minimum");
  out = exec("counter = undefined;");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().data.at("state"), "counter");
  EXPECT_EQ(ws->version(), 0);
}

TEST_F(WorkspaceTest, EscapesFailWithAClearErrorAndChangeNothing) {
  auto ws = open(kSearch);
  ASSERT_TRUE(ws);
  struct Case {
    const char* script;
    const char* says;
  };
  for (const auto& c : std::vector<Case>{
           {"counter = 1; await (async()=>{}).constructor('return process')();",
            "process is not defined"},
           {"counter = 1; (async()=>{}).constructor('return process')();",
            "process is not defined"},
           {"counter = 1; Promise.reject(new Error('forgotten'));", "nothing awaited it"},
           {"counter = 1; Function('return require')()('fs');", "require is not defined"},
           {"counter = 1; globalThis.constructor.constructor('return this')().process.exit();",
            "undefined"},
           {"counter = 1; readFile('/etc/passwd');", "does not grant file access"},
           {"counter = 1; await fetch('http://127.0.0.1:1/');", "does not grant network access"},
           {"counter = 1; Date.now();", "clock is not granted"},
           {"counter = 1; new Date();", "clock is not granted"},
           {"counter = 1; Math.random();", "randomness is not granted"},
           {"counter = 1; await import('fs');", ""},
       }) {
    auto out = exec(c.script);
    ASSERT_FALSE(out.ok()) << c.script;
    EXPECT_NE(out.error().message.find(c.says), std::string::npos)
        << c.script << ": " << out.error().message;
    EXPECT_EQ(value_of("counter"), 0) << c.script;
  }
  EXPECT_EQ(ws->version(), 0);
}

TEST_F(WorkspaceTest, RejectionsThatAreHandledDoNotFailAScript) {
  auto ws = open(kSearch);
  ASSERT_TRUE(ws);
  auto out = exec(
      "try { await Promise.reject(new Error('a')); } catch (e) {}\n"
      "Promise.reject(new Error('b')).catch(() => {});\n"
      "const late = Promise.reject(new Error('c')); await null; await late.catch(() => {});\n"
      "counter = 2;");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(value_of("counter"), 2);
}

TEST_F(WorkspaceTest, PrototypePollutionReachesNoStoredValue) {
  auto ws = open(kSearch);
  ASSERT_TRUE(ws);
  auto out = exec(
      "search_box_state.__proto__.polluted = 'yes'; Object.prototype.toString = null;"
      "search_box_state.search_pattern = 'ok';");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(value_of("search_box_state"), boost::json::parse(R"({"search_pattern":"ok"})"));
  out = exec(
      "search_box_state = JSON.parse('{\"__proto__\": {\"a\": 1}, \"search_pattern\": \"x\"}');");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("__proto__"), std::string::npos) << out.error().message;
  // A later script starts from a clean realm.
  out = exec("return ({}).polluted === undefined;");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->at("output"), true);
}

TEST_F(WorkspaceTest, EndlessLoopsAndMemoryBombsAreStoppedAndTheNextScriptRuns) {
  auto ws = open(kSearch);
  ASSERT_TRUE(ws);
  auto out = exec("counter = 3; while (true) {}");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kTimeout);
  out = exec("counter = 3; const a = []; for (;;) a.push(new Array(1e6).fill(1));");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("ran out of memory (limits.memoryMb: 64 MB)"),
            std::string::npos)
      << out.error().message;
  EXPECT_EQ(json::string_member(out.error().data, "reason"), "memory-limit");
  EXPECT_EQ(value_of("counter"), 0);
  out = exec("counter = 4;");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(value_of("counter"), 4);
}

TEST_F(WorkspaceTest, AScriptsOwnErrorAboutMemoryIsNotTakenForTheMemoryLimit) {
  auto ws = open(kSearch);
  ASSERT_TRUE(ws);
  auto out = exec("counter = 3; throw new Error('the memory card is full');");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kHandlerError);
  EXPECT_NE(out.error().message.find("the memory card is full"), std::string::npos)
      << out.error().message;
  EXPECT_EQ(out.error().message.find("limits.memoryMb"), std::string::npos) << out.error().message;
  EXPECT_EQ(value_of("counter"), 0);
}

TEST_F(WorkspaceTest, ADryRunReportsThePatchAndTheEffectsAndCommitsNothing) {
  auto ws = open(kSearch);
  ASSERT_TRUE(ws);
  auto out = exec("search_box_state.search_pattern = 'tea'; console.log('hi', 1);", true);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->at("dryRun"), true);
  EXPECT_EQ(out->at("committed"), false);
  EXPECT_EQ(out->at("version"), 0);
  ASSERT_EQ(out->at("effects").as_array().size(), 1u);
  EXPECT_EQ(out->at("effects").as_array()[0].at("status"), "would run");
  EXPECT_EQ(out->at("effects").as_array()[0].at("input"), boost::json::parse(R"({"query":"tea"})"));
  EXPECT_EQ(out->at("patch").as_array().size(), 1u);
  // The inverse gives what the value was, so a diff can show before and after.
  ASSERT_EQ(out->at("inverse").as_array().size(), 1u);
  EXPECT_EQ(out->at("inverse").as_array()[0].at("value"), "");
  EXPECT_EQ(out->at("inverse").as_array()[0].at("path"), out->at("patch").as_array()[0].at("path"));
  EXPECT_EQ(out->at("console").as_array()[0].at("message"), "hi 1");
  EXPECT_TRUE(services_.calls().empty());
  EXPECT_EQ(value_of("search_box_state"), boost::json::parse(R"({"search_pattern":""})"));
  auto history = wait(ws->history(0, 10));
  ASSERT_TRUE(history.ok());
  EXPECT_TRUE(history->empty());
}

TEST_F(WorkspaceTest, AFailedSideEffectCompensatesAndCommitsNothing) {
  const char* yaml = R"(
name: orders
components:
  - id: shop
    states:
      order:
        permission: rw
        schema: {type: object}
        initial: {}
        sideEffects:
          description: reserves stock, then charges
          calls:
            - {service: shop, endpoint: reserve, input: {item: {$value: /item}},
               compensate: {service: shop, endpoint: release, input: {id: {$state: $result, pointer: /id}}}}
            - {service: shop, endpoint: charge, input: {amount: {$value: /amount}}}
)";
  auto ws = open(yaml);
  ASSERT_TRUE(ws);
  services_.answers["shop/reserve"] = [](const json::value&) -> Result<json::value> {
    return json::value(json::object{{"id", "r-1"}});
  };
  services_.answers["shop/release"] = [](const json::value&) -> Result<json::value> {
    return json::value(true);
  };
  services_.answers["shop/charge"] = [](const json::value&) -> Result<json::value> {
    return Error::make(ErrorCode::kHandlerError, "card declined");
  };
  auto out = exec("order = {item: 'tea', amount: 3};");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("card declined"), std::string::npos);
  const auto calls = services_.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[2].endpoint, "release");
  EXPECT_EQ(calls[2].input, boost::json::parse(R"({"id":"r-1"})"));
  EXPECT_EQ(out.error().data.at("compensated").as_array()[0].at("status"), "compensated");
  EXPECT_EQ(value_of("order"), json::object());
  EXPECT_EQ(ws->version(), 0);
  auto history = wait(ws->history(0, 10));
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 1u);
  EXPECT_EQ(history->at(0).outcome, "rolled_back");
}

// A side effect may take a private or write-only state, or assign its result to a private one;
// no answer shows those values (the model, views and MCP clients all read the answer).
const char* const kConfidential = R"(
name: mailer
components:
  - id: mail
    states:
      draft:
        permission: rw
        schema: {type: object}
        initial: {}
        sideEffects:
          description: sends the draft with the account's signature, keeps the receipt
          calls:
            - service: mail
              endpoint: send
              input: {to: {$value: /to}, signature: {$state: signature}, password: {$state: password}}
              assign: receipt
      password:
        permission: w
        schema: {type: string}
        initial: "hunter2-initial"
      signature:
        visibility: private
        schema: {type: string}
        initial: "SIGNATURE-SECRET"
      receipt:
        visibility: private
        schema: {type: object}
        initial: {}
      public_only:
        permission: rw
        schema: {type: object}
        initial: {}
        sideEffects:
          description: echoes
          calls:
            - {service: mail, endpoint: echo, input: {text: {$value: /text}}}
)";

/// Whether any string in `v` holds `needle`.
bool mentions(const json::value& v, const std::string& needle) {
  return json::serialize(v).find(needle) != std::string::npos;
}

TEST_F(WorkspaceTest, SideEffectReportsWithholdPrivateAndWriteOnlyValues) {
  auto ws = open(kConfidential);
  ASSERT_TRUE(ws);
  services_.answers["mail/send"] = [](const json::value& input) -> Result<json::value> {
    // A service that echoes what it got, as many do.
    return json::value(json::object{{"id", "m-1"}, {"echo", input}});
  };
  services_.answers["mail/echo"] = [](const json::value& input) -> Result<json::value> {
    return input;
  };
  auto out = exec("password = 'hunter3-secret'; draft = {to: 'ann@example.com'};");
  ASSERT_TRUE(out.ok()) << out.error().message;
  // The call itself got the values, and was told it was confidential.
  const auto calls = services_.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].input.at("signature"), "SIGNATURE-SECRET");
  EXPECT_EQ(calls[0].input.at("password"), "hunter3-secret");
  EXPECT_TRUE(calls[0].confidential);
  // The answer shows neither value, nor the private receipt, nor the private states' names.
  for (const char* secret : {"SIGNATURE-SECRET", "hunter3-secret", "m-1", "receipt"}) {
    EXPECT_FALSE(mentions(json::value(*out), secret)) << secret << " in " << json::serialize(*out);
  }
  const auto& effect = out->at("effects").as_array()[0].as_object();
  EXPECT_EQ(effect.at("input").at("to"), "ann@example.com");  // the readable part stays
  EXPECT_EQ(effect.at("input").at("signature").as_string(), kWithheld);
  EXPECT_EQ(effect.at("result").as_string(), kWithheld);
  // The operator's record keeps what a revert needs; the history served shows no value either.
  EXPECT_EQ(value_of("receipt").at("id"), "m-1");
  auto history = wait(ws->history(0, 10));
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 1u);
  EXPECT_TRUE(mentions(json::value(history->at(0).patch), "m-1"));
  EXPECT_FALSE(mentions(json::value(visible_patch(ws->definition(), history->at(0).patch)), "m-1"));
  EXPECT_FALSE(mentions(json::value(history->at(0).effects), "SIGNATURE-SECRET"));
  // A call with nothing hidden is reported whole and is not confidential.
  auto plain = exec("public_only = {text: 'hello'};");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->at("effects").as_array()[0].at("result").at("text"), "hello");
  EXPECT_FALSE(services_.calls().back().confidential);
}

TEST_F(WorkspaceTest, AFailedConfidentialEffectDoesNotEchoItsInputInTheError) {
  auto ws = open(kConfidential);
  ASSERT_TRUE(ws);
  services_.answers["mail/send"] = [](const json::value& input) -> Result<json::value> {
    return Error::make(ErrorCode::kHandlerError,
                       "refused: " + json::serialize(input));  // echoes the input
  };
  auto out = exec("draft = {to: 'bob@example.com'};");
  ASSERT_FALSE(out.ok());
  EXPECT_FALSE(mentions(json::value(out.error().message), "SIGNATURE-SECRET"));
  EXPECT_FALSE(mentions(out.error().data, "SIGNATURE-SECRET"));
  EXPECT_FALSE(mentions(out.error().data, "hunter2-initial"));
  EXPECT_EQ(out.error().data.at("cause").at("code"), static_cast<int>(ErrorCode::kHandlerError));
}

TEST_F(WorkspaceTest, RevertAppliesTheInverseAsANewChange) {
  auto ws = open(kSearch);
  ASSERT_TRUE(ws);
  ASSERT_TRUE(exec("counter = 1;").ok());
  ASSERT_TRUE(exec("search_box_state.search_pattern = 'milk';").ok());
  ASSERT_TRUE(exec("counter = 7;").ok());
  auto out = wait(ws->revert(2, "test"));
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->at("version"), 4);
  EXPECT_EQ(value_of("search_box_state"), boost::json::parse(R"({"search_pattern":""})"));
  EXPECT_EQ(value_of("counter"), 7);
  // Reverting the revert brings it back.
  out = wait(ws->revert(4, "test"));
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(value_of("search_box_state"), boost::json::parse(R"({"search_pattern":"milk"})"));
  EXPECT_FALSE(wait(ws->revert(99, "test")).ok());
}

TEST_F(WorkspaceTest, ExpectedVersionRefusesAStaleChange) {
  auto ws = open(kSearch);
  ASSERT_TRUE(ws);
  ASSERT_TRUE(exec("counter = 1;", false, 0).ok());
  auto out = exec("counter = 2;", false, 0);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kConflict);
  EXPECT_EQ(out.error().data.at("version"), 1);
  EXPECT_EQ(value_of("counter"), 1);
}

TEST_F(WorkspaceTest, ConcurrentScriptsAreSerialised) {
  auto ws = open(kSearch);
  ASSERT_TRUE(ws);
  std::vector<std::future<std::optional<Result<json::object>>>> futures;
  for (int i = 0; i < 6; ++i) {
    ExecuteRequest r;
    r.script =
        "const before = counter; await new Promise(r => setTimeout(r, 5)); counter = before + 1;";
    futures.push_back(boost::asio::co_spawn(
        io_.executor(),
        [ws, r]() mutable -> boost::asio::awaitable<std::optional<Result<json::object>>> {
          co_return co_await ws->execute(std::move(r));
        },
        boost::asio::use_future));
  }
  for (auto& f : futures) {
    auto out = *f.get();
    EXPECT_TRUE(out.ok()) << out.error().message;
  }
  EXPECT_EQ(value_of("counter"), 6);
  EXPECT_EQ(ws->version(), 6);
}

TEST_F(WorkspaceTest, AttemptCompletionInAScriptIsReported) {
  auto ws = open(kSearch);
  ASSERT_TRUE(ws);
  auto out = exec("counter = 1; await attempt_completion('done counting');");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->at("completion").at("result"), "done counting");
}

TEST_F(WorkspaceTest, GrantedTimeAndRandomnessReplayToTheSamePatch) {
  const char* yaml = R"(
name: dice
grants: {time: true, random: true}
components:
  - id: d
    states:
      roll:
        permission: rw
        schema: {type: object}
        initial: {}
)";
  auto ws = open(yaml);
  ASSERT_TRUE(ws);
  auto out = exec("roll = {at: Date.now(), iso: new Date().toISOString(), n: Math.random()};");
  ASSERT_TRUE(out.ok()) << out.error().message;
  auto history = wait(ws->history(0, 1));
  ASSERT_TRUE(history.ok() && history->size() == 1u);
  const auto& entry = history->at(0);
  EXPECT_EQ(value_of("roll").at("at"), entry.clock_ms);
  // The same script with the recorded clock and seed gives the same values.
  RunInputs inputs{entry.clock_ms, static_cast<std::uint32_t>(entry.seed)};
  json::object empty{{"roll", json::object()}};
  jsworker::Job job;
  job.request = build_evaluation(ws->definition(), empty, entry.script, inputs);
  job.timeout = 5s;
  auto again = wait(pool_->run(std::move(job)));
  ASSERT_TRUE(again.ok()) << again.error().message;
  auto replay = read_result(ws->definition(), empty, again.value());
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(replay->state.at("roll"), value_of("roll"));
}

TEST_F(WorkspaceTest, GrantedFilesAreReadableWithinTheirPatternsOnly) {
  const char* yaml = R"(
name: files
grants: {files: ["./data/*.json"]}
components:
  - id: c
    states:
      loaded: {permission: rw, schema: {}, initial: null}
)";
  std::filesystem::create_directories(dir_ / "ws" / "data");
  write("data/prices.json", R"({"tea": 3})");
  write("secret.txt", "not granted");
  auto ws = open(yaml);
  ASSERT_TRUE(ws);
  auto out = exec("loaded = JSON.parse(readFile('data/prices.json'));");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(value_of("loaded"), boost::json::parse(R"({"tea":3})"));
  out = exec("loaded = readFile('secret.txt');");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kPermissionDenied) << out.error().message;
  out = exec("await fetch('http://127.0.0.1:1/');");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("does not grant network access"), std::string::npos);
  EXPECT_EQ(value_of("loaded"), boost::json::parse(R"({"tea":3})"));
}

TEST_F(WorkspaceTest, SourcesFeedReadOnlyStates) {
  const char* yaml = R"(
name: feed
components:
  - id: f
    states:
      todos:
        permission: r
        schema: {type: array}
        source: {service: todos, endpoint: list, path: /items, refresh: [open, commit]}
      live:
        permission: r
        schema: {type: object}
        initial: {}
        source: {service: todos, subscription: updates}
      filter:
        permission: rw
        schema: {type: string}
        initial: ""
)";
  int listed = 0;
  services_.answers["todos/list"] = [&listed](const json::value&) -> Result<json::value> {
    ++listed;
    return json::value(json::object{{"items", json::array{listed}}});
  };
  auto ws = open(yaml);
  ASSERT_TRUE(ws);
  EXPECT_EQ(value_of("todos"), boost::json::parse("[1]"));
  ASSERT_TRUE(exec("filter = 'x';").ok());
  EXPECT_EQ(value_of("todos"), boost::json::parse("[2]"));
  std::vector<ChangeEvent> events;
  std::mutex mu;
  ws->add_listener([&](const ChangeEvent& e) {
    std::lock_guard lock(mu);
    events.push_back(e);
  });
  services_.publish("todos/updates", json::object{{"n", 1}});
  for (int i = 0; i < 200 && value_of("live") == json::object(); ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(value_of("live"), boost::json::parse(R"({"n":1})"));
  std::lock_guard lock(mu);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, "source");
  EXPECT_EQ(events.back().changed, std::vector<std::string>{"live"});
}

TEST_F(WorkspaceTest, AWorkspaceThatCallsServicesNeedsThem) {
  auto opened = try_open(kSearch, /*with_services=*/false);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.error().message.find("LAVS services"), std::string::npos);
}

TEST_F(WorkspaceTest, UtilitiesThatDoNotCompileAreReportedAtOpen) {
  write("utils.js", "function broken( {\n");
  auto opened = try_open(kSearch);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.error().message.find("utilities do not load"), std::string::npos)
      << opened.error().message;
  EXPECT_NE(opened.error().message.find("utils.js"), std::string::npos) << opened.error().message;
}

TEST_F(WorkspaceTest, UtilitiesAreReadBelowTheFolderWithoutFollowingLinks) {
  std::filesystem::remove(dir_ / "ws" / "utils.js");
  std::filesystem::create_symlink("/etc/hostname", dir_ / "ws" / "utils.js");
  write("workspace.yaml", kSearch);
  Problems problems;
  EXPECT_FALSE(load_definition(dir_ / "ws", problems));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].path, "components[0].utilities[0]");
  EXPECT_NE(problems[0].message.find("symbolic link"), std::string::npos) << problems[0].message;
  std::string yaml = kSearch;
  yaml.replace(yaml.find("[utils.js]"), 10, "[../utils.js]");
  write("workspace.yaml", yaml);
  problems.clear();
  EXPECT_FALSE(load_definition(dir_ / "ws", problems));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].message.find("no '..'"), std::string::npos);
}

TEST_F(WorkspaceTest, StateAndHistoryOutliveTheProcess) {
  auto ws = open(kSearch);
  ASSERT_TRUE(ws);
  ASSERT_TRUE(exec("counter = 5;").ok());
  ws->close();
  workspace_.reset();
  pool_->stop();
  ws = open(kSearch);
  ASSERT_TRUE(ws);
  EXPECT_EQ(ws->version(), 1);
  EXPECT_EQ(value_of("counter"), 5);
}

}  // namespace
}  // namespace hearth::workspace
