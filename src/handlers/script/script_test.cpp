#include "handlers/script/script.hpp"

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <condition_variable>
#include <set>
#include <sstream>

#include "handlers/testing.hpp"
#include "proc/process.hpp"
#include "proc/testing.hpp"

namespace hearth::handlers::script {
namespace {

using namespace handlers::testing;

const bool kSigpipeIgnored = ignore_sigpipe();

using proc::testing::IoThread;

class ScriptTest : public KindTest {
 protected:
  void SetUp() override {
    make_service("script");
    fs::create_directories(service_.dir / "sub");
    handler_path_ = "endpoints[1].handler";
    kind_ = make_kind(options_);
  }
  void TearDown() override { remove_service(); }

  /// The handler of endpoint "ep" (made again at each call: one endpoint at a time).
  Result<std::unique_ptr<Handler>> create(std::string_view handler_json,
                                          manifest::Method method = manifest::Method::kQuery) {
    endpoint_ = manifest::Endpoint{};
    endpoint_.id = "ep";
    endpoint_.method = method;
    endpoint_.handler_type = "script";
    endpoint_.handler = parse(handler_json).as_object();
    return kind_->create(service_, endpoint_);
  }

  /// Gives endpoint "ep" this input schema in the manifest as written (env mode reads it).
  void input_schema(std::string_view schema_json, std::string_view types_json = "{}") {
    service_.raw = parse(std::string(R"({"endpoints": [{"id": "ep", "schema": {"input": )") +
                         std::string(schema_json) + "}}]}");
    service_.types = parse(types_json).as_object();
  }

  Call make_call(json::value input, asio::any_io_executor executor) {
    return KindTest::make_call(std::move(input), 30s, std::move(executor), &endpoint_);
  }

  /// Creates the handler and runs one call to completion.
  Result<json::value> run(std::string_view handler_json, json::value input = json::object{},
                          std::chrono::milliseconds timeout = 30s) {
    auto handler = create(handler_json);
    if (!handler.ok()) return std::move(handler).error();
    asio::io_context io;
    Call call = make_call(std::move(input), io.get_executor());
    call.timeout = timeout;
    std::optional<Result<json::value>> result;
    asio::co_spawn(
        io, [&]() -> asio::awaitable<void> { result = co_await (*handler)->call(std::move(call)); },
        asio::detached);
    io.run();
    return std::move(result).value();
  }

  manifest::Endpoint endpoint_;
};

// ---------------------------------------------------------------------------------------------
// check / create

TEST_F(ScriptTest, CheckAcceptsAFullHandler) {
  EXPECT_EQ(problem_list(check(R"({"type": "script", "command": "node", "args": ["a.js", "{{x}}"],
      "input": "env", "cwd": "sub/../sub", "timeout": 1500.5, "env": {"NODE_ENV": "production"}})")),
            "");
  EXPECT_EQ(problem_list(check(R"({"type": "script", "command": "cat", "timeout": 0})")), "");
}

TEST_F(ScriptTest, CheckNamesEveryProblemWithItsPath) {
  EXPECT_EQ(problem_list(check(R"({"type": "script"})")),
            "endpoints[1].handler.command: is required\n");
  EXPECT_EQ(problem_list(check(R"({"type": "script", "command": ""})")),
            "endpoints[1].handler.command: must be a non-empty string\n");
  EXPECT_EQ(problem_list(check(R"({"type": "script", "command": 3})")),
            "endpoints[1].handler.command: must be a non-empty string\n");
  EXPECT_EQ(problem_list(check(R"({"type": "script", "command": "a\u0000b"})")),
            "endpoints[1].handler.command: must not contain NUL characters\n");
  EXPECT_EQ(problem_list(check(R"({"type": "script", "command": "x", "args": "a b"})")),
            "endpoints[1].handler.args: must be an array of strings\n");
  EXPECT_EQ(problem_list(check(R"({"type": "script", "command": "x", "args": ["a", 1, null]})")),
            "endpoints[1].handler.args[1]: must be a string\n"
            "endpoints[1].handler.args[2]: must be a string\n");
  EXPECT_EQ(problem_list(check(R"({"type": "script", "command": "x", "input": "file"})")),
            "endpoints[1].handler.input: must be one of \"stdin\", \"args\", \"env\"\n");
  EXPECT_EQ(problem_list(check(R"({"type": "script", "command": "x", "timeout": -1})")),
            "endpoints[1].handler.timeout: must be a non-negative number (milliseconds)\n");
  EXPECT_EQ(problem_list(check(R"({"type": "script", "command": "x", "timeout": "5"})")),
            "endpoints[1].handler.timeout: must be a non-negative number (milliseconds)\n");
  EXPECT_EQ(problem_list(check(R"({"type": "script", "command": "x", "env": ["A=1"]})")),
            "endpoints[1].handler.env: must be an object of strings\n");
  EXPECT_EQ(problem_list(check(
                R"({"type": "script", "command": "x", "env": {"1X": "a", "A B": "b", "N": 1}})")),
            "endpoints[1].handler.env.1X: is not a valid environment variable name\n"
            "endpoints[1].handler.env.A B: is not a valid environment variable name\n"
            "endpoints[1].handler.env.N: must be a string\n");
  EXPECT_EQ(
      problem_list(check(R"({"type": "script", "command": "x", "cwd": 1})")),
      "endpoints[1].handler.cwd: must be a string (a folder relative to the service folder)\n");
}

TEST_F(ScriptTest, CheckRefusesACwdThatEscapesTheFolder) {
  for (const char* cwd : {"..", "../other", "sub/../../x", "./a/../../.."}) {
    EXPECT_EQ(problem_list(check(std::string(R"({"type": "script", "command": "x", "cwd": ")") +
                                 cwd + "\"}")),
              "endpoints[1].handler.cwd: must stay inside the service folder\n")
        << cwd;
  }
  EXPECT_EQ(problem_list(check(R"({"type": "script", "command": "x", "cwd": "sub/.."})")), "");
}

TEST_F(ScriptTest, CreateRefusesAbsoluteOrLinkedCwdOutsideTheFolder) {
  auto absolute = create(R"({"type": "script", "command": "pwd", "cwd": "/etc"})");
  ASSERT_FALSE(absolute.ok());
  EXPECT_EQ(absolute.error().message, "cwd '/etc' is outside the service folder");

  fs::create_directory_symlink("/tmp", service_.dir / "link");
  auto linked = create(R"({"type": "script", "command": "pwd", "cwd": "link"})");
  ASSERT_FALSE(linked.ok());
  EXPECT_EQ(linked.error().message, "cwd 'link' is outside the service folder");

  // An absolute path inside the folder is fine.
  const std::string inside = (service_.dir / "sub").string();
  EXPECT_TRUE(create(R"({"type": "script", "command": "pwd", "cwd": ")" + inside + "\"}").ok());
}

// ---------------------------------------------------------------------------------------------
// Input modes

TEST_F(ScriptTest, StdinModeIsTheDefault) {
  auto r =
      run(R"({"type": "script", "command": "cat"})", parse(R"({"text": "hé", "n": [1, 2.5]})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, parse(R"({"text": "hé", "n": [1, 2.5]})"));

  auto explicit_mode =
      run(R"({"type": "script", "command": "cat", "input": "stdin"})", parse("[1]"));
  ASSERT_TRUE(explicit_mode.ok());
  EXPECT_EQ(*explicit_mode, parse("[1]"));
}

TEST_F(ScriptTest, ArgsModeExpandsPlaceholdersAndLeavesStdinEmpty) {
  auto r = run(R"J({"type": "script", "command": "python3", "input": "args",
      "args": ["-c", "import sys, json; print(json.dumps({'argv': sys.argv[1:], 'stdin': sys.stdin.read()}))",
               "{{name}}", "{{user.age}}", "{{missing}}", "{{obj}}", "{{flag}}", "x{{ name }}y{{nil}}",
               "{{tags.1}}", "{{ratio}}", "{{}}", "{{name}"]})J",
               parse(R"({"name": "bob smith", "user": {"age": 42}, "obj": {"a": [1, "b"]},
                         "flag": true, "nil": null, "tags": ["x", "y"], "ratio": 0.5})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r,
            parse(R"({"argv": ["bob smith", "42", "", "{\"a\":[1,\"b\"]}", "true", "xbob smithy",
                                    "y", "0.5", "{{}}", "{{name}"],
                          "stdin": ""})"));
}

TEST_F(ScriptTest, PlaceholdersAreExpandedInEveryMode) {
  auto r = run(
      R"({"type": "script", "command": "sh", "args": ["-c", "printf '%s:' \"$1\"; cat", "sh", "{{id}}"]})",
      parse(R"({"id": 7})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, json::value("7:{\"id\":7}"));
}

TEST_F(ScriptTest, ExpandPlaceholdersMatchesTheReferenceSyntax) {
  const auto input = parse(R"({"a": "A", "n": {"m": 1}, "{a": "brace"})");
  EXPECT_EQ(expand_placeholders("{{a}}-{{n.m}}", input), "A-1");
  EXPECT_EQ(expand_placeholders("{{{a}}", input), "brace");
  EXPECT_EQ(expand_placeholders("{{a}b}}", input), "{{a}b}}");
  EXPECT_EQ(expand_placeholders("{a}} {{", input), "{a}} {{");
  EXPECT_EQ(expand_placeholders("{{n}}", input), "{\"m\":1}");
  EXPECT_EQ(expand_placeholders("{{a.b}}", input), "");
  EXPECT_EQ(expand_placeholders("{{a}}", json::value(nullptr)), "");
}

TEST_F(ScriptTest, EnvModeSetsUpperCaseVariables) {
  input_schema(R"({"type": "object", "properties": {"note": {}, "count": {}, "tags": {},
      "nothing": {}, "user": {"$ref": "#/types/User"}}})",
               R"({"User": {"type": "object", "properties": {"name": {"type": "string"}}}})");
  auto r = run(R"({"type": "script", "command": "sh", "input": "env",
      "args": ["-c", "printf '%s|%s|%s|%s|%s|%s' \"$NOTE\" \"$USER_NAME\" \"$COUNT\" \"$TAGS\" \"${NOTHING-unset}\" \"$(cat)\""]})",
               parse(R"({"note": "hi there", "user": {"name": "a"}, "count": 3, "tags": [1, "x"],
                         "nothing": null})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, json::value("hi there|a|3|[1,\"x\"]|unset|"));
}

TEST_F(ScriptTest, EnvModePassesOnlyFieldsTheSchemaDeclares) {
  // An allowlist: whatever the input, only names the manifest's author declared become
  // variables. A denylist let GIT_CONFIG_COUNT/KEY_0/VALUE_0, OPENSSL_CONF, LESSOPEN, PAGER in.
  input_schema(R"({"type": "object", "properties": {"note": {"type": "string"},
      "user": {"type": "object", "properties": {"name": {}}},
      "blob": {"type": "object"}}, "additionalProperties": true})");
  struct Case {
    const char* input;
    const char* field;
  };
  for (const Case& c :
       {Case{R"({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.pager"})", "GIT_CONFIG_COUNT"},
        Case{R"({"note": "x", "OPENSSL_CONF": "/tmp/x"})", "OPENSSL_CONF"},
        Case{R"({"LESSOPEN": "|id"})", "LESSOPEN"}, Case{R"({"pager": "id"})", "pager"},
        Case{R"({"ld_preload": "/tmp/evil.so"})", "ld_preload"},
        Case{R"({"user": {"name": "a", "shell": "x"}})", "user.shell"},
        Case{R"({"Path": "/tmp"})", "Path"}, Case{R"({"a b": 1})", "a b"}}) {
    auto r = run(R"({"type": "script", "command": "env", "input": "env"})", parse(c.input));
    ASSERT_FALSE(r.ok()) << c.input;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidParams) << c.input;
    EXPECT_EQ(r.error().data,
              parse(std::string(R"({"field": ")") + c.field + R"(", "constraint": "env-name"})"))
        << c.input;
  }
  // A declared object without declared members is passed whole, as JSON: its keys name nothing.
  auto r = run(R"({"type": "script", "command": "sh", "input": "env",
      "args": ["-c", "printf '%s|%s|%s' \"$BLOB\" \"${BLOB_LD_PRELOAD-unset}\" \"$NOTE\""]})",
               parse(R"({"blob": {"LD_PRELOAD": "x"}, "note": "n"})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, json::value(R"({"LD_PRELOAD":"x"}|unset|n)"));
  // Without an input schema nothing is declared: any field is refused.
  service_.raw = json::object{};
  auto none =
      run(R"({"type": "script", "command": "env", "input": "env"})", parse(R"({"note": "x"})"));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::kInvalidParams);
}

TEST_F(ScriptTest, EnvModeRefusesDeclaredProtectedOrInvalidNamesAtLoad) {
  for (const char* schema :
       {R"({"properties": {"ld_preload": {}}})",
        R"({"properties": {"ld": {"properties": {"preload": {}}}}})",
        R"({"properties": {"Path": {}}})", R"({"allOf": [{"properties": {"bash_env": {}}}]})",
        R"({"properties": {"lavs_publish_fd": {}}})", R"({"properties": {"a b": {}}})",
        R"({"properties": {"1abc": {}}})"}) {
    input_schema(schema);
    auto h = create(R"({"type": "script", "command": "env", "input": "env"})");
    ASSERT_FALSE(h.ok()) << schema;
    EXPECT_NE(h.error().message.find("input \"env\" cannot pass"), std::string::npos)
        << h.error().message;
  }
  // The same schema is fine for another input mode: nothing becomes a variable there.
  auto stdin_mode = create(R"({"type": "script", "command": "env"})");
  EXPECT_TRUE(stdin_mode.ok());
  EXPECT_TRUE(is_protected_env_name("LD_LIBRARY_PATH"));
  EXPECT_TRUE(is_protected_env_name("MALLOC_CHECK_"));
  EXPECT_TRUE(is_protected_env_name("PERL5OPT"));
  EXPECT_TRUE(is_protected_env_name("BASH_FUNC_x%%"));
  EXPECT_TRUE(is_protected_env_name("GLIBC_TUNABLES"));
  EXPECT_FALSE(is_protected_env_name("NOTE"));
  EXPECT_FALSE(is_protected_env_name("PATHS"));
}

TEST_F(ScriptTest, ANulInAnInputValueIsInvalidParamsNamingTheField) {
  // Args mode: a C string ends at the NUL, which silently cut the argument.
  auto args = run(R"({"type": "script", "command": "echo", "input": "args",
      "args": ["--name={{user.name}}", "{{ok}}"]})",
                  parse(R"({"ok": "fine", "user": {"name": "a\u0000b"}})"));
  ASSERT_FALSE(args.ok());
  EXPECT_EQ(args.error().code, ErrorCode::kInvalidParams);
  EXPECT_EQ(args.error().data, parse(R"({"field": "user.name", "constraint": "no-nul"})"));
  // Stdin mode too, for placeholders in args (stdin itself carries JSON, where NUL is escaped).
  auto in_stdin = run(R"({"type": "script", "command": "echo", "args": ["{{x}}"]})",
                      parse(R"({"x": "\u0000"})"));
  ASSERT_FALSE(in_stdin.ok());
  EXPECT_EQ(in_stdin.error().code, ErrorCode::kInvalidParams);
  // Env mode.
  input_schema(R"({"properties": {"note": {}}})");
  auto env = run(R"({"type": "script", "command": "env", "input": "env"})",
                 parse(R"({"note": "a\u0000b"})"));
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.error().code, ErrorCode::kInvalidParams);
  EXPECT_EQ(env.error().data, parse(R"({"field": "note", "constraint": "no-nul"})"));
  // A value without NUL is passed unchanged.
  auto fine = run(R"({"type": "script", "command": "echo", "input": "args", "args": ["{{x}}"]})",
                  parse(R"({"x": "a b"})"));
  ASSERT_TRUE(fine.ok()) << fine.error().message;
  EXPECT_EQ(*fine, json::value("a b\n"));
}

TEST_F(ScriptTest, CommandsOutsideTheServiceFolderAreRefusedAtLoad) {
  // Another service beside this one, with a program and data.
  const fs::path other = service_.dir.parent_path() / (service_.dir.filename().string() + "-other");
  fs::create_directories(other);
  std::ofstream(other / "run.sh") << "#!/bin/sh\ncat data.txt\n";
  fs::permissions(other / "run.sh", fs::perms::owner_all);
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } cleanup{other};
  const std::string rel = "../" + other.filename().string() + "/run.sh";
  fs::create_symlink(other / "run.sh", service_.dir / "link.sh");
  fs::create_symlink(other, service_.dir / "otherdir");
  const std::vector<std::string> refused = {
      R"({"type": "script", "command": ")" + rel + R"("})",
      R"({"type": "script", "command": ")" + (other / "run.sh").string() + R"("})",
      std::string(R"({"type": "script", "command": "./link.sh"})"),
      std::string(R"({"type": "script", "command": "otherdir/run.sh"})"),
      R"({"type": "script", "command": "run.sh", "env": {"PATH": ")" + other.string() +
          R"(:/usr/bin"}})",
      std::string(R"({"type": "script", "command": "run.sh", "env": {"PATH": "otherdir"}})")};
  for (const std::string& handler : refused) {
    auto h = create(handler);
    ASSERT_FALSE(h.ok()) << handler;
    EXPECT_NE(h.error().message.find("outside the service folder"), std::string::npos)
        << h.error().message;
  }
  // Inside the folder, and system programs (also through the handler's PATH), are fine.
  write("run.sh", "#!/bin/sh\necho '{\"ok\": 1}'\n", true);
  EXPECT_TRUE(create(R"({"type": "script", "command": "../run.sh", "cwd": "sub"})").ok());
  EXPECT_TRUE(create(R"({"type": "script", "command": "./run.sh"})").ok());
  EXPECT_TRUE(create(R"({"type": "script", "command": "sh"})").ok());
  EXPECT_TRUE(create(R"({"type": "script", "command": "/bin/sh"})").ok());
  EXPECT_TRUE(
      create(R"({"type": "script", "command": "sh", "env": {"PATH": "/usr/bin:sub"}})").ok());

  // Checked again at each start: a program swapped for a link out of the folder is refused.
  auto h = create(R"({"type": "script", "command": "./run.sh"})");
  ASSERT_TRUE(h.ok());
  fs::remove(service_.dir / "run.sh");
  fs::create_symlink(other / "run.sh", service_.dir / "run.sh");
  auto swapped = run(R"({"type": "script", "command": "./run.sh"})");
  ASSERT_FALSE(swapped.ok());  // refused at create now
  asio::io_context io;
  std::optional<Result<json::value>> result;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        result = co_await (*h)->call(make_call(json::object{}, io.get_executor()));
      },
      asio::detached);
  io.run();
  ASSERT_FALSE(result->ok());
  EXPECT_EQ(result->error().code, ErrorCode::kPermissionDenied);
}

TEST_F(ScriptTest, EnvironmentIsMinimalAndNotTheDaemons) {
  ::setenv("HEARTH_DAEMON_SECRET", "do-not-leak", 1);
  auto r = run(R"({"type": "script", "command": "env", "env": {"FOO": "bar", "LANG": "C"}})");
  ::unsetenv("HEARTH_DAEMON_SECRET");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->is_string());
  std::set<std::string> lines;
  std::istringstream in(std::string(r->get_string()));
  for (std::string line; std::getline(in, line);) lines.insert(line);
  const std::string dir = service_.dir.string();
  EXPECT_EQ(lines, (std::set<std::string>{
                       "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                       "LANG=C", "HOME=" + dir, "LAVS_SERVICE=svc", "LAVS_ENDPOINT=ep",
                       "LAVS_SERVICE_DIR=" + dir, "LAVS_PUBLISH_FD=3", "FOO=bar"}));
}

TEST_F(ScriptTest, CommandIsResolvedWithTheHandlersPath) {
  fs::create_directories(service_.dir / "bin");
  auto r = run(R"({"type": "script", "command": "sh", "env": {"PATH": "bin"}})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_EQ(r.error().message, "command not found: sh");
  EXPECT_EQ(r.error().data, parse(R"({"command": "sh"})"));

  auto missing = run(R"({"type": "script", "command": "no-such-command-hearth"})");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "command not found: no-such-command-hearth");

  // A path with '/' is relative to the working directory.
  write("sub/tool.sh", "#!/bin/sh\necho '{\"tool\": true}'\n", true);
  auto relative = run(R"({"type": "script", "command": "./tool.sh", "cwd": "sub"})");
  ASSERT_TRUE(relative.ok()) << relative.error().message;
  EXPECT_EQ(*relative, parse(R"({"tool": true})"));
}

TEST_F(ScriptTest, WorkingDirectoryDefaultsToTheServiceFolder) {
  auto r = run(R"({"type": "script", "command": "pwd"})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, json::value(service_.dir.string() + "\n"));
  auto sub = run(R"({"type": "script", "command": "pwd", "cwd": "sub"})");
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(*sub, json::value((service_.dir / "sub").string() + "\n"));
}

// ---------------------------------------------------------------------------------------------
// Output and errors

TEST_F(ScriptTest, OutputParsing) {
  auto text = run(R"({"type": "script", "command": "echo", "args": ["hello world"]})");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, json::value("hello world\n"));  // not JSON: the raw text, as written

  auto empty = run(R"({"type": "script", "command": "true"})");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->is_null());

  auto blank = run(R"({"type": "script", "command": "printf", "args": ["  \n\t\n"]})");
  ASSERT_TRUE(blank.ok());
  EXPECT_TRUE(blank->is_null());

  auto padded = run(R"({"type": "script", "command": "printf", "args": ["\n  {\"a\": 1}  \n\n"]})");
  ASSERT_TRUE(padded.ok());
  EXPECT_EQ(*padded, parse(R"({"a": 1})"));

  auto number = run(R"({"type": "script", "command": "echo", "args": ["42"]})");
  ASSERT_TRUE(number.ok());
  EXPECT_EQ(*number, json::value(42));

  auto binary = run(R"({"type": "script", "command": "printf", "args": ["a\\377b"]})");
  ASSERT_TRUE(binary.ok());
  EXPECT_EQ(*binary, json::value("a\xEF\xBF\xBD"
                                 "b"));
}

TEST_F(ScriptTest, NonZeroExitIsAHandlerErrorWithTheStderrTail) {
  auto r = run(
      R"({"type": "script", "command": "sh", "args": ["-c", "echo partial; echo boom >&2; exit 2"]})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_EQ(r.error().message, "Handler exited with code 2");
  EXPECT_EQ(r.error().data, parse(R"({"exitCode": 2, "stderr": "boom\n"})"));

  auto long_err = run(R"J({"type": "script", "command": "python3", "args": ["-c",
      "import sys; sys.stderr.write('x' * 100000 + 'END'); sys.exit(1)"]})J");
  ASSERT_FALSE(long_err.ok());
  const auto& tail = long_err.error().data.at("stderr").get_string();
  EXPECT_EQ(tail.size(), 4096u);
  EXPECT_TRUE(tail.ends_with("END"));
}

TEST_F(ScriptTest, KilledBySignalIsAHandlerError) {
  auto r = run(
      R"({"type": "script", "command": "sh", "args": ["-c", "echo dying >&2; kill -KILL $$"]})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_EQ(r.error().message, "Handler was killed by signal 9 (SIGKILL)");
  EXPECT_EQ(r.error().data, parse(R"({"signal": 9, "stderr": "dying\n"})"));
}

TEST_F(ScriptTest, HandlerTimeoutWins) {
  auto r = run(R"({"type": "script", "command": "sleep", "args": ["30"], "timeout": 200})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kTimeout);
  EXPECT_EQ(r.error().message, "Handler timed out after 200 ms");
  EXPECT_EQ(r.error().data, parse(R"({"timeoutMs": 200})"));
  EXPECT_EQ(proc::running_count(), 0u);
}

TEST_F(ScriptTest, CallTimeoutAppliesWithoutAHandlerTimeout) {
  auto r = run(R"({"type": "script", "command": "sleep", "args": ["30"], "timeout": 0})",
               json::object{}, 250ms);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "Handler timed out after 250 ms");
}

TEST_F(ScriptTest, MaxExecutionTimeCapsTheHandlerTimeout) {
  auto handler =
      create(R"({"type": "script", "command": "sleep", "args": ["30"], "timeout": 20000})");
  ASSERT_TRUE(handler.ok());
  endpoint_.effective.max_execution_time = 150ms;
  asio::io_context io;
  std::optional<Result<json::value>> result;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        result = co_await (*handler)->call(make_call(json::object{}, io.get_executor()));
      },
      asio::detached);
  io.run();
  ASSERT_FALSE(result->ok());
  EXPECT_EQ(result->error().message, "Handler timed out after 150 ms");
}

TEST_F(ScriptTest, OutputLimit) {
  options_.max_output_bytes = 1000;
  kind_ = make_kind(options_);
  auto r = run(R"({"type": "script", "command": "yes"})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_EQ(r.error().message, "Handler output exceeds 1000 bytes");
}

TEST_F(ScriptTest, BackgroundProcessDoesNotHoldTheCall) {
  const auto started = std::chrono::steady_clock::now();
  auto r = run(
      R"({"type": "script", "command": "sh", "args": ["-c", "sleep 60 & echo '{\"ok\": true}'"]})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, parse(R"({"ok": true})"));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s);
}

// ---------------------------------------------------------------------------------------------
// Publishing

TEST_F(ScriptTest, PublishesLinesFromFd3) {
  const std::string script =
      "import os\n"
      "fd = int(os.environ['LAVS_PUBLISH_FD'])\n"
      "os.write(fd, b'{\"subscription\": \"updates\", \"data\": {\"x\": 1}}\\n')\n"
      "os.write(fd, b'not json\\n')\n"
      "os.write(fd, b'[1, 2]\\n')\n"
      "os.write(fd, b'{\"subscription\": \"nope\", \"data\": 1}\\n')\n"
      "os.write(fd, b'{\"subscription\": 5}\\n')\n"
      "os.write(fd, b'{\"subscription\": \"updates\"}')\n"
      "print('{\"done\": true}')\n";
  write("pub.py", script);
  auto r = run(R"({"type": "script", "command": "python3", "args": ["pub.py"]})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, parse(R"({"done": true})"));
  EXPECT_EQ(publisher_.published(), (std::vector<json::value>{parse(R"({"x": 1})"), nullptr}));
}

TEST_F(ScriptTest, ConcurrentCallsAreAllComplete) {
  write("blob.py",
        "import json, sys\n"
        "req = json.load(sys.stdin)\n"
        "print(json.dumps({'tag': req['tag'], 'data': 'abcdefghij' * 10240}))\n");
  auto handler = create(R"({"type": "script", "command": "python3", "args": ["blob.py"]})");
  ASSERT_TRUE(handler.ok());
  constexpr int kCalls = 32;
  std::vector<std::optional<Result<json::value>>> results(kCalls);
  asio::io_context io;
  for (int i = 0; i < kCalls; ++i) {
    Call call = make_call(json::object{{"tag", i}}, io.get_executor());
    asio::co_spawn(
        io,
        [&results, &handler, i, call = std::move(call)]() mutable -> asio::awaitable<void> {
          results[static_cast<std::size_t>(i)] = co_await (*handler)->call(std::move(call));
        },
        asio::detached);
  }
  std::thread second([&] { io.run(); });
  io.run();
  second.join();
  const std::string expected_data = [] {
    std::string s;
    for (int i = 0; i < 10240; ++i) s += "abcdefghij";
    return s;
  }();
  for (int i = 0; i < kCalls; ++i) {
    const auto& r = results[static_cast<std::size_t>(i)];
    ASSERT_TRUE(r.has_value() && r->ok()) << i;
    EXPECT_EQ(r->value().at("tag"), json::value(i));
    EXPECT_EQ(r->value().at("data"), json::value(expected_data)) << i;
  }
}

// ---------------------------------------------------------------------------------------------
// Persistent mode

TEST_F(ScriptTest, CheckPersistentSettings) {
  EXPECT_EQ(problem_list(check(R"({"type": "script", "command": "python3", "args": ["s.py"],
      "persistent": true})")),
            "");
  EXPECT_EQ(problem_list(check(R"({"type": "script", "command": "python3",
      "persistent": {"instances": 4, "maxCalls": 1000}})")),
            "");
  EXPECT_EQ(problem_list(check(R"({"type": "script", "command": "x", "input": "args",
      "args": ["{{name}}"], "persistent": false})")),
            "");
  EXPECT_EQ(
      problem_list(check(R"({"type": "script", "command": "x", "persistent": "yes"})")),
      "endpoints[1].handler.persistent: must be true, false or an object {instances, maxCalls}\n");
  EXPECT_EQ(problem_list(check(R"({"type": "script", "command": "x",
      "persistent": {"instances": 0, "maxCalls": 1.5, "warm": true}})")),
            "endpoints[1].handler.persistent.instances: must be a whole number from 1 to 16\n"
            "endpoints[1].handler.persistent.maxCalls: must be a whole number >= 0 (0: no "
            "limit)\n"
            "endpoints[1].handler.persistent.warm: is not a persistent-mode setting (instances, "
            "maxCalls)\n");
  const auto problems = problem_list(check(R"({"type": "script", "command": "x", "input": "env",
      "args": ["a", "--name={{name}}"], "persistent": {"instances": 17}})"));
  EXPECT_NE(problems.find("persistent.instances: must be a whole number from 1 to 16"),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find("handler.persistent: a persistent process receives each call's input"),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find("handler.args[1]: cannot hold a {{placeholder}} in persistent mode"),
            std::string::npos)
      << problems;
}

/// A persistent-mode server speaking the line protocol, steered by each call's input.
constexpr std::string_view kPersistentServer = R"(import json, os, sys, time
count = 0
for line in sys.stdin:
    req = json.loads(line)
    inp = req['input']
    count += 1
    op = inp.get('op')
    def answer(obj):
        sys.stdout.write(json.dumps(obj) + '\n')
        sys.stdout.flush()
    if op == 'crash':
        sys.stderr.write('boom\n'); sys.stderr.flush(); os._exit(3)
    if op == 'sleep':
        time.sleep(inp['s'])
    if op == 'garbage':
        answer('hello'); continue
    if op == 'wrong-id':
        answer({'id': req['id'] + 1000, 'result': 1}); continue
    if op == 'fail':
        answer({'id': req['id'], 'error': {'message': 'no such item', 'data': {'item': 7}}})
        continue
    if op == 'publish':
        answer({'publish': 'updates', 'data': {'n': count}})
    answer({'id': req['id'], 'result': {'pid': os.getpid(), 'count': count, 'echo': inp,
            'persistent': os.environ.get('LAVS_PERSISTENT')}})
)";

class PersistentTest : public ScriptTest {
 protected:
  void SetUp() override {
    ScriptTest::SetUp();
    write("server.py", std::string(kPersistentServer));
  }

  /// Creates the persistent handler with `settings` (the value of "persistent").
  void start(std::string_view settings = "true") {
    auto handler = create(R"({"type": "script", "command": "python3", "args": ["server.py"],
        "persistent": )" + std::string(settings) +
                          "}");
    ASSERT_TRUE(handler.ok()) << handler.error().message;
    handler_ = std::move(handler).value();
  }

  std::future<std::optional<Result<json::value>>> begin(std::string_view input,
                                                        std::chrono::milliseconds timeout = 30s) {
    Call call = KindTest::make_call(parse(input), timeout, io_.executor(), &endpoint_);
    return start_call(io_.executor(), *handler_, std::move(call));
  }

  Result<json::value> call(std::string_view input, std::chrono::milliseconds timeout = 30s) {
    return *begin(input, timeout).get();
  }

  /// The pid a successful call reports.
  static std::int64_t pid_of(const Result<json::value>& r) {
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? r.value().at("pid").as_int64() : -1;
  }

  IoThread io_;
  std::unique_ptr<Handler> handler_;  // destroyed before io_: its processes stop first
};

TEST_F(PersistentTest, OneProcessServesManyCalls) {
  start();
  std::int64_t pid = -1;
  for (int i = 1; i <= 5; ++i) {
    auto r = call(R"({"op": "echo", "i": )" + std::to_string(i) + "}");
    ASSERT_TRUE(r.ok()) << r.error().message;
    if (i == 1) pid = pid_of(r);
    EXPECT_EQ(pid_of(r), pid);
    EXPECT_EQ(r->at("count"), json::value(i));
    EXPECT_EQ(r->at("echo").at("i"), json::value(i));
    EXPECT_EQ(r->at("persistent"), json::value("1"));
  }
}

TEST_F(PersistentTest, MaxCallsReplacesTheProcess) {
  start(R"({"maxCalls": 2})");
  std::vector<std::int64_t> pids;
  pids.reserve(5);
  for (int i = 0; i < 5; ++i) pids.push_back(pid_of(call(R"({})")));
  EXPECT_EQ(pids[0], pids[1]);
  EXPECT_NE(pids[1], pids[2]);
  EXPECT_EQ(pids[2], pids[3]);
  EXPECT_NE(pids[3], pids[4]);
  EXPECT_NE(pids[0], pids[4]);
}

TEST_F(PersistentTest, ACrashFailsOnlyItsCallAndTheNextCallGetsANewProcess) {
  start();
  const auto first = pid_of(call(R"({})"));
  auto crashed = call(R"({"op": "crash"})");
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.error().code, ErrorCode::kHandlerError);
  EXPECT_EQ(crashed.error().message, "Handler exited with code 3");
  EXPECT_EQ(crashed.error().data.at("exitCode"), json::value(3));
  EXPECT_EQ(crashed.error().data.at("stderr"), json::value("boom\n"));
  auto after = call(R"({})");
  EXPECT_NE(pid_of(after), first);
  EXPECT_EQ(after->at("count"), json::value(1));  // a fresh process: nothing carried over
}

TEST_F(PersistentTest, ACallOutOfTimeKillsItsProcess) {
  start();
  const auto first = pid_of(call(R"({})"));
  auto slow = call(R"({"op": "sleep", "s": 30})", 300ms);
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.error().code, ErrorCode::kTimeout);
  EXPECT_EQ(slow.error().data.at("timeoutMs"), json::value(300));
  // The process that overran is gone; the next call gets a new one.
  for (int i = 0; i < 100 && ::kill(static_cast<pid_t>(first), 0) == 0; ++i) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_NE(::kill(static_cast<pid_t>(first), 0), 0);
  EXPECT_NE(pid_of(call(R"({})")), first);
}

TEST_F(PersistentTest, BreakingTheProtocolFailsTheCallAndReplacesTheProcess) {
  start();
  for (const char* op : {"garbage", "wrong-id"}) {
    const auto before = pid_of(call(R"({})"));
    auto r = call(R"({"op": ")" + std::string(op) + "\"}");
    ASSERT_FALSE(r.ok()) << op;
    EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
    EXPECT_NE(r.error().message.find("Handler broke the persistent line protocol"),
              std::string::npos)
        << r.error().message;
    EXPECT_NE(pid_of(call(R"({})")), before) << op;
  }
}

TEST_F(PersistentTest, AnErrorAnswerIsAHandlerErrorAndTheProcessStays) {
  start();
  const auto before = pid_of(call(R"({})"));
  auto r = call(R"({"op": "fail"})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
  EXPECT_EQ(r.error().message, "no such item");
  EXPECT_EQ(r.error().data, parse(R"({"data": {"item": 7}})"));
  EXPECT_EQ(pid_of(call(R"({})")), before);
}

TEST_F(PersistentTest, PublishLinesReachThePublisher) {
  start();
  auto r = call(R"({"op": "publish"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(publisher_.published(), std::vector<json::value>{parse(R"({"n": 1})")});
}

TEST_F(PersistentTest, InstancesServeCallsSideBySide) {
  start(R"({"instances": 2})");
  std::vector<std::future<std::optional<Result<json::value>>>> calls;
  calls.reserve(6);
  for (int i = 0; i < 6; ++i) calls.push_back(begin(R"({"op": "sleep", "s": 0.2})"));
  std::set<std::int64_t> pids;
  for (auto& f : calls) pids.insert(pid_of(*f.get()));
  EXPECT_EQ(pids.size(), 2U);
}

TEST_F(PersistentTest, AProcessThatKeepsDyingIsNotStartedAgainAtOnce) {
  write("dies.sh", "echo 'bad start' >&2\nexit 1\n");
  auto handler = create(R"({"type": "script", "command": "sh", "args": ["dies.sh"],
      "persistent": true})");
  ASSERT_TRUE(handler.ok());
  handler_ = std::move(handler).value();
  std::vector<std::string> messages;
  for (int i = 0; i < 4; ++i) {
    auto r = call(R"({})");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kHandlerError);
    messages.push_back(r.error().message);
  }
  EXPECT_EQ(messages[0], "Handler exited with code 1");
  EXPECT_EQ(messages[1], "Handler exited with code 1");
  // The second death in a row pauses the starts: the next call fails at once naming it.
  EXPECT_NE(messages[2].find("Handler exited with code 1 (the persistent process keeps exiting "
                             "before it answers; next start in"),
            std::string::npos)
      << messages[2];
}

TEST_F(PersistentTest, TheProcessStopsWithItsHandler) {
  start();
  const auto pid = pid_of(call(R"({})"));
  handler_.reset();
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = ::kill(static_cast<pid_t>(pid), 0) != 0;
    if (!gone) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(gone);
}

// ---------------------------------------------------------------------------------------------
// Subscriptions

struct SinkRecorder {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<json::value> data;
  std::vector<std::optional<Error>> ends;

  StreamSink sink() {
    return {[this](json::value v) {
              std::lock_guard lock(mutex);
              data.push_back(std::move(v));
              changed.notify_all();
            },
            [this](std::optional<Error> e) {
              std::lock_guard lock(mutex);
              ends.push_back(std::move(e));
              changed.notify_all();
            }};
  }
  bool wait(const std::function<bool()>& condition) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, 20s, condition);
  }
};

TEST_F(ScriptTest, StreamSendsLinesThenEndsCleanly) {
  IoThread io;
  SinkRecorder rec;
  input_schema(R"({"properties": {"start": {"type": "integer"}}})");
  auto handler = create(R"({"type": "script", "command": "sh", "input": "env",
      "args": ["-c", "echo \"{\\\"n\\\": $START}\"; echo hello; echo; echo '[2]'; echo \"{{start}}\""]})",
                        manifest::Method::kSubscription);
  ASSERT_TRUE(handler.ok()) << handler.error().message;
  auto stream =
      (*handler)->open_stream(make_call(parse(R"({"start": 1})"), io.executor()), rec.sink());
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  ASSERT_TRUE(rec.wait([&] { return !rec.ends.empty(); }));
  std::lock_guard lock(rec.mutex);
  EXPECT_EQ(rec.data, (std::vector<json::value>{parse(R"({"n": 1})"), json::value("hello"),
                                                parse("[2]"), json::value(1)}));
  ASSERT_EQ(rec.ends.size(), 1u);
  EXPECT_FALSE(rec.ends[0].has_value());
}

TEST_F(ScriptTest, StreamFailureEndsWithAnError) {
  IoThread io;
  SinkRecorder rec;
  auto handler = create(
      R"({"type": "script", "command": "sh", "args": ["-c", "echo 1; echo bad >&2; exit 3"]})",
      manifest::Method::kSubscription);
  ASSERT_TRUE(handler.ok());
  auto stream = (*handler)->open_stream(make_call(json::object{}, io.executor()), rec.sink());
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(rec.wait([&] { return !rec.ends.empty(); }));
  std::lock_guard lock(rec.mutex);
  EXPECT_EQ(rec.data, std::vector<json::value>{json::value(1)});
  ASSERT_TRUE(rec.ends[0].has_value());
  EXPECT_EQ(rec.ends[0]->code, ErrorCode::kHandlerError);
  EXPECT_EQ(rec.ends[0]->message, "Subscription handler exited with code 3");
  EXPECT_EQ(rec.ends[0]->data, parse(R"({"exitCode": 3, "stderr": "bad\n"})"));
}

TEST_F(ScriptTest, StreamCloseStopsTheProducer) {
  IoThread io;
  SinkRecorder rec;
  auto handler = create(R"({"type": "script", "command": "sh",
      "args": ["-c", "echo $$; i=0; while true; do i=$((i+1)); echo \"{\\\"tick\\\": $i}\"; sleep 0.02; done"]})",
                        manifest::Method::kSubscription);
  ASSERT_TRUE(handler.ok());
  auto stream = (*handler)->open_stream(make_call(json::object{}, io.executor()), rec.sink());
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(rec.wait([&] { return rec.data.size() >= 3; }));
  (*stream)->close();
  std::size_t seen;
  {
    std::lock_guard lock(rec.mutex);
    seen = rec.data.size();
  }
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (proc::running_count() != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(proc::running_count(), 0u);
  std::this_thread::sleep_for(150ms);
  std::lock_guard lock(rec.mutex);
  EXPECT_EQ(rec.data.size(), seen);
  EXPECT_TRUE(rec.ends.empty());
  EXPECT_EQ(::kill(static_cast<pid_t>(rec.data[0].as_int64()), 0), -1);
  (*stream)->close();  // idempotent
}

TEST_F(ScriptTest, StreamRefusesBadInputAndMissingCommand) {
  IoThread io;
  SinkRecorder rec;
  input_schema(R"({"properties": {"note": {}}})");
  auto env = create(R"({"type": "script", "command": "env", "input": "env"})",
                    manifest::Method::kSubscription);
  ASSERT_TRUE(env.ok());
  auto refused =
      (*env)->open_stream(make_call(parse(R"({"ld_preload": "x"})"), io.executor()), rec.sink());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidParams);

  auto missing = create(R"({"type": "script", "command": "no-such-command-hearth"})",
                        manifest::Method::kSubscription);
  ASSERT_TRUE(missing.ok());
  auto not_found = (*missing)->open_stream(make_call(json::object{}, io.executor()), rec.sink());
  ASSERT_FALSE(not_found.ok());
  EXPECT_EQ(not_found.error().message, "command not found: no-such-command-hearth");
}

}  // namespace
}  // namespace hearth::handlers::script
