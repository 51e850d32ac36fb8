// `hearth workspace render|exec|state|history|revert` and `hearth agent run`: a virtual workspace
// worked in this process (no daemon), its state and history in the state dir, shared with a
// daemon serving the same folder. `--services` loads the LAVS services its side effects and
// sources call.
#include "methods/workspace/workspace.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>

#include "agent/loop.hpp"
#include "cli/common.hpp"
#include "common/random.hpp"
#include "jail/jail.hpp"
#include "methods/vault/vault.hpp"
#include "proc/process.hpp"
#include "vault/vault.hpp"
#include "workspace/manager.hpp"

namespace hearth::cli {
namespace fs = std::filesystem;
namespace asio = boost::asio;

namespace {

struct WorkspaceArgs {
  fs::path dir;
  fs::path state_dir;
  std::vector<fs::path> services;
  bool insecure_no_sandbox = false;
  bool json = false;
  // render
  std::string format = "text";
  bool no_guide = false;
  std::size_t budget = 24000;
  // exec
  std::string script;
  fs::path script_file;
  bool dry_run = false;
  std::int64_t expected_version = -1;
  // state, history, revert
  std::string name;
  std::int64_t version = 0;
  bool to_version = false;
  std::size_t limit = 50;
  // agent run
  std::string task;
  std::string model_url;
  std::string model;
  std::string model_key;
  bool stream = false;
  std::string tools = "auto";
  int max_turns = 20;
  int max_failures = 3;
};

int fail(const std::string& what, const Error& error) {
  std::cerr << "hearth " << what << ": " << error.message << std::endl;
  if (!error.data.is_null()) std::cerr << json::serialize(error.data) << std::endl;
  return error.code == ErrorCode::kInvalidParams ? 2 : 1;
}

/// What a command works with: the workspace open in this process, and what it needs.
class Context {
 public:
  explicit Context(const WorkspaceArgs& args) : args_(args) {}

  ~Context() {
    if (manager_) manager_->shutdown();
    if (host_) host_->shutdown();
    proc::kill_all();
  }

  /// Everything up to the open workspace; runs `body` with it on the io_context.
  int run(const std::string& what,
          std::function<asio::awaitable<int>(std::shared_ptr<workspace::Workspace>)> body) {
    std::signal(SIGPIPE, SIG_IGN);
    state_dir_ = args_.state_dir.empty() ? default_state_dir() : args_.state_dir;
    std::string error;
    if (!ensure_private_dir(state_dir_, error)) {
      std::cerr << "hearth " << what << ": state dir: " << error << std::endl;
      return 1;
    }
    jail::JailOptions jail_options;
    jail_options.launcher = proc::launcher();
    jail_options.insecure_no_sandbox = args_.insecure_no_sandbox;
    auto jail = jail::Jail::create(jail_options);
    if (!jail.ok()) return fail(what, jail.error());
    auto shared_jail = std::make_shared<const jail::Jail>(std::move(jail).value());
    if (!args_.services.empty()) {
      host::HostOptions options;
      options.kinds.jail = shared_jail;
      options.kinds.warm_pools = false;
      host::LoadReport report;
      host_ = host::Host::load(args_.services, options, ioc_.get_executor(), report);
      print_load_report(report);
      if (!host_) return 2;
      if (auto st = audit_.open(state_dir_ / "audit.log"); st.ok()) host_->set_audit(&audit_);
      services_ = std::make_unique<methods::workspace::HostServices>(*host_);
    }
    workspace::ManagerOptions options;
    options.database = state_dir_ / "workspaces.db";
    options.jail = shared_jail;
    auto manager =
        workspace::Manager::create(ioc_.get_executor(), options, blocking_, services_.get());
    if (!manager.ok()) return fail(what, manager.error());
    manager_ = std::move(manager).value();
    int code = 1;
    asio::co_spawn(
        ioc_,
        [&]() -> asio::awaitable<void> {
          const fs::path dir = args_.dir;
          auto ws = co_await manager_->open(dir);
          if (!ws.ok()) {
            code = fail(what, ws.error());
          } else {
            for (const auto& note : ws.value()->notes()) spdlog::warn("{}", note);
            code = co_await body(ws.value());
          }
          ioc_.stop();
        },
        asio::detached);
    ioc_.run();
    return code;
  }

  const fs::path& state_dir() const { return state_dir_; }
  BlockingExecutor& blocking() { return blocking_; }
  asio::any_io_executor executor() { return ioc_.get_executor(); }

 private:
  const WorkspaceArgs& args_;
  fs::path state_dir_;
  asio::io_context ioc_;
  BlockingExecutor blocking_{1};
  host::AuditLog audit_;
  std::unique_ptr<host::Host> host_;
  std::unique_ptr<methods::workspace::HostServices> services_;
  std::unique_ptr<workspace::Manager> manager_;
};

void print(const json::value& v) {
  std::cout << json::serialize(v) << std::endl;
}

int render(const WorkspaceArgs& args) {
  workspace::RenderOptions options;
  if (args.format == "markdown") {
    options.format = workspace::Format::kMarkdown;
  } else if (args.format == "json") {
    options.format = workspace::Format::kJson;
  } else if (args.format != "text") {
    std::cerr << "hearth workspace render: --format is text, markdown or json" << std::endl;
    return 2;
  }
  options.guide = !args.no_guide;
  options.budget = args.budget;
  Context context(args);
  return context.run("workspace render",
                     [options](std::shared_ptr<workspace::Workspace> ws) -> asio::awaitable<int> {
                       std::cout << ws->render(options);
                       if (options.format == workspace::Format::kJson) std::cout << std::endl;
                       co_return 0;
                     });
}

int exec(const WorkspaceArgs& args) {
  std::string script = args.script;
  if (!args.script_file.empty()) {
    std::ifstream in(args.script_file, std::ios::binary);
    if (!in) {
      std::cerr << "hearth workspace exec: cannot read " << args.script_file << std::endl;
      return 2;
    }
    script.assign(std::istreambuf_iterator<char>(in), {});
  } else if (script.empty() || script == "-") {
    script.assign(std::istreambuf_iterator<char>(std::cin), {});
  }
  Context context(args);
  return context.run(
      "workspace exec",
      [&args, script](std::shared_ptr<workspace::Workspace> ws) -> asio::awaitable<int> {
        workspace::ExecuteRequest request;
        request.script = script;
        request.dry_run = args.dry_run;
        request.actor = "cli";
        if (args.expected_version >= 0) request.expected_version = args.expected_version;
        auto out = co_await ws->execute(std::move(request));
        if (!out.ok()) co_return fail("workspace exec", out.error());
        print(out.value());
        co_return 0;
      });
}

int state(const WorkspaceArgs& args) {
  Context context(args);
  return context.run("workspace state",
                     [&args](std::shared_ptr<workspace::Workspace> ws) -> asio::awaitable<int> {
                       if (!args.name.empty()) {
                         auto v = ws->state(args.name, false);
                         if (!v.ok()) co_return fail("workspace state", v.error());
                         print(v.value());
                         co_return 0;
                       }
                       json::object all;
                       for (const auto& s : ws->definition().states) {
                         if (!s.readable()) continue;
                         auto v = ws->state(s.name, false);
                         if (v.ok()) all[s.name] = v.value();
                       }
                       print(json::object{{"version", ws->version()}, {"states", all}});
                       co_return 0;
                     });
}

int history(const WorkspaceArgs& args) {
  Context context(args);
  return context.run(
      "workspace history",
      [&args](std::shared_ptr<workspace::Workspace> ws) -> asio::awaitable<int> {
        auto entries = co_await ws->history(0, 1000000);
        if (!entries.ok()) co_return fail("workspace history", entries.error());
        const auto& all = entries.value();
        const std::size_t from = all.size() > args.limit ? all.size() - args.limit : 0;
        for (std::size_t i = from; i < all.size(); ++i) {
          const auto& e = all[i];
          if (args.json) {
            print(e.to_json());
            continue;
          }
          std::string first_line = e.script.substr(0, e.script.find('\n'));
          if (first_line.size() > 60) first_line = first_line.substr(0, 57) + "...";
          std::cout << "#" << e.seq << "  "
                    << (e.version ? "v" + std::to_string(*e.version) : std::string("  -")) << "  "
                    << e.outcome << "  " << e.kind << "  " << e.actor << "  " << e.patch.size()
                    << " ops  " << first_line << "\n";
          if (!e.error.is_null() && e.error.is_object()) {
            if (const auto* m = e.error.as_object().if_contains("message")) {
              std::cout << "      " << m->as_string().c_str() << "\n";
            }
          }
        }
        std::cout << std::flush;
        co_return 0;
      });
}

int revert(const WorkspaceArgs& args) {
  Context context(args);
  return context.run("workspace revert",
                     [&args](std::shared_ptr<workspace::Workspace> ws) -> asio::awaitable<int> {
                       const std::int64_t version = args.version;
                       std::string actor = "cli";
                       Result<json::object> out =
                           Error::make(ErrorCode::kInternalError, "unreached");
                       if (args.to_version) {
                         out = co_await ws->revert_to(version, actor);
                       } else {
                         out = co_await ws->revert(version, actor);
                       }
                       if (!out.ok()) co_return fail("workspace revert", out.error());
                       print(out.value());
                       co_return 0;
                     });
}

/// A line a person reads for an agent event.
void print_event(const json::object& e) {
  const std::string type(e.at("type").as_string());
  const auto turn = e.at("turn").to_number<std::int64_t>();
  if (type == "model.delta") {
    std::cerr << e.at("text").as_string().c_str() << std::flush;
    return;
  }
  if (type == "turn.started") {
    std::cerr << "\n── turn " << turn << " ──\n";
  } else if (type == "model.completed") {
    const auto& content = e.at("content").as_string();
    if (!content.empty()) std::cerr << content.c_str() << "\n";
    for (const auto& c : e.at("toolCalls").as_array()) {
      std::cerr << "→ " << c.at("name").as_string().c_str() << " "
                << c.at("arguments").as_string().c_str() << "\n";
    }
  } else if (type == "tool.result" || type == "tool.failed") {
    const auto* r = e.if_contains("result");
    std::cerr << (type == "tool.result" ? "  ok" : "  failed");
    if (r != nullptr) std::cerr << " " << json::serialize(*r).substr(0, 400);
    if (const auto* reason = e.if_contains("reason")) {
      std::cerr << " " << reason->as_string().c_str();
    }
    std::cerr << "\n";
  } else if (type == "model.retry") {
    std::cerr << "  (model server answered " << json::serialize(e.at("status")) << ", retrying in "
              << json::serialize(e.at("waitMs")) << " ms)\n";
  }
}

int agent_run(const WorkspaceArgs& args) {
  agent::ModelConfig model;
  model.base_url =
      args.model_url.empty()
          ? std::string(std::getenv("HEARTH_MODEL_URL") ? std::getenv("HEARTH_MODEL_URL") : "")
          : args.model_url;
  model.model = args.model.empty()
                    ? std::string(std::getenv("HEARTH_MODEL") ? std::getenv("HEARTH_MODEL") : "")
                    : args.model;
  model.stream = args.stream;
  model.tools = agent::parse_tool_mode(args.tools).value_or(agent::ToolMode::kAuto);
  if (model.base_url.empty() || model.model.empty()) {
    std::cerr << "hearth agent run: give the model server: --model-url URL --model NAME (or "
                 "HEARTH_MODEL_URL and HEARTH_MODEL)"
              << std::endl;
    return 2;
  }
  Context context(args);
  const fs::path state_dir = args.state_dir.empty() ? default_state_dir() : args.state_dir;
  if (!args.model_key.empty()) {
    auto variable = methods::vault::split_variable(args.model_key);
    if (!variable) {
      std::cerr << "hearth agent run: --model-key is a vault variable SCOPE::NAME" << std::endl;
      return 2;
    }
    auto vault = open_vault(state_dir);
    if (!vault.ok()) return fail("agent run", vault.error());
    auto secret = vault.value()->get(variable->first, variable->second);
    if (!secret.ok()) return fail("agent run", secret.error());
    if (!secret.value()) {
      std::cerr << "hearth agent run: the vault has no " << args.model_key << std::endl;
      return 2;
    }
    model.api_key = secret.value()->value;
  } else if (const char* key = std::getenv("HEARTH_MODEL_KEY"); key != nullptr) {
    model.api_key = key;
  }
  BlockingExecutor writer(1);
  return context.run(
      "agent run", [&](std::shared_ptr<workspace::Workspace> ws) -> asio::awaitable<int> {
        agent::RunOptions options;
        options.run_id = "run-" + random_hex(8);
        options.task = args.task;
        options.max_turns = args.max_turns;
        options.max_failures = args.max_failures;
        std::error_code mkdir_error;
        fs::create_directories(context.state_dir() / "agent", mkdir_error);
        options.transcript = context.state_dir() / "agent" / (options.run_id + ".jsonl");
        auto client = std::make_shared<agent::ModelClient>(context.executor(), model);
        const bool as_json = args.json;
        auto run = std::make_shared<agent::Run>(
            ws, client, options,
            [as_json](const json::object& e) {
              if (as_json) {
                if (e.at("type") != "model.delta") print(e);
              } else {
                print_event(e);
              }
            },
            writer);
        // Ctrl-C cancels the run (the request in flight is aborted); the outcome is still printed.
        asio::signal_set signals(context.executor(), SIGINT, SIGTERM);
        signals.async_wait([run](const boost::system::error_code& ec, int) {
          if (!ec) run->cancel();
        });
        auto outcome = co_await run->run();
        signals.cancel();
        client->shutdown();
        json::object result = outcome.to_json();
        result["runId"] = options.run_id;
        result["transcript"] = options.transcript.string();
        print(result);
        co_return outcome.status == "completed" ? 0 : 1;
      });
}

}  // namespace

CLI::App* add_workspace_command(CLI::App& app, std::function<int()>& run) {
  static WorkspaceArgs args;
  auto* ws = app.add_subcommand(
      "workspace",
      "Work a virtual workspace in this process (render, exec, state, history, revert)");
  ws->require_subcommand(1);
  auto common = [](CLI::App* cmd) {
    cmd->add_option("dir", args.dir, "The workspace folder (holding workspace.yaml)")
        ->required()
        ->check(CLI::ExistingDirectory);
    cmd->add_option("--state-dir", args.state_dir, "The state dir (its workspaces.db)");
    cmd->add_option("--services", args.services,
                    "LAVS service folder the workspace's side effects and sources call; repeatable")
        ->check(CLI::ExistingPath);
    cmd->add_flag("--insecure-no-sandbox", args.insecure_no_sandbox,
                  "Run scripts and handlers WITHOUT the jail (development only)");
  };
  auto* render_cmd = ws->add_subcommand("render", "Print the model's view of the workspace");
  common(render_cmd);
  render_cmd->add_option("--format", args.format, "text, markdown or json")->capture_default_str();
  render_cmd->add_flag("--no-guide", args.no_guide, "Leave out utilities, examples and rules");
  render_cmd->add_option("--budget", args.budget, "Characters the view aims to stay within")
      ->capture_default_str();
  render_cmd->callback([&run] { run = [] { return render(args); }; });

  auto* exec_cmd = ws->add_subcommand(
      "exec", "Run a script (argument, --file, or stdin) and print what it changed");
  common(exec_cmd);
  exec_cmd->add_option("script", args.script, "The JavaScript (- or nothing: read stdin)");
  exec_cmd->add_option("--file", args.script_file, "Read the script from this file");
  exec_cmd->add_flag("--dry-run", args.dry_run, "Report the patch and effects; commit nothing");
  exec_cmd->add_option("--expected-version", args.expected_version,
                       "Refuse unless the workspace is at this version");
  exec_cmd->callback([&run] { run = [] { return exec(args); }; });

  auto* state_cmd = ws->add_subcommand("state", "Print the states the model may read (or one)");
  common(state_cmd);
  state_cmd->add_option("name", args.name, "One state");
  state_cmd->callback([&run] { run = [] { return state(args); }; });

  auto* history_cmd = ws->add_subcommand("history", "List the changes and failed scripts");
  common(history_cmd);
  history_cmd->add_option("--limit", args.limit, "The last N entries")->capture_default_str();
  history_cmd->add_flag("--json", args.json, "One JSON object a line, patches included");
  history_cmd->callback([&run] { run = [] { return history(args); }; });

  auto* revert_cmd =
      ws->add_subcommand("revert", "Undo the change that made VERSION, as a new change");
  common(revert_cmd);
  revert_cmd->add_option("version", args.version, "The version to undo")->required();
  revert_cmd->add_flag("--to", args.to_version,
                       "Go back to VERSION instead: undo every later change of the model");
  revert_cmd->callback([&run] { run = [] { return revert(args); }; });
  return ws;
}

CLI::App* add_agent_command(CLI::App& app, std::function<int()>& run) {
  static WorkspaceArgs args;
  auto* agent = app.add_subcommand("agent", "Agent runs against an OpenAI-compatible model server");
  agent->require_subcommand(1);
  auto* run_cmd = agent->add_subcommand(
      "run",
      "Work TASK in the workspace folder DIR with a model (tools: execute_script, "
      "attempt_completion)");
  run_cmd->add_option("dir", args.dir, "The workspace folder")
      ->required()
      ->check(CLI::ExistingDirectory);
  run_cmd->add_option("task", args.task, "What to do")->required();
  run_cmd->add_option("--model-url", args.model_url,
                      "API base URL (e.g. http://127.0.0.1:11434/v1); default $HEARTH_MODEL_URL");
  run_cmd->add_option("--model", args.model, "Model name; default $HEARTH_MODEL");
  run_cmd->add_option("--model-key", args.model_key,
                      "Vault variable with the API key (SCOPE::NAME); without it, the key in "
                      "$HEARTH_MODEL_KEY if set");
  run_cmd->add_flag("--stream", args.stream, "Stream completions (server-sent events)");
  run_cmd
      ->add_option("--tools", args.tools,
                   "How the tools reach the model: native, prompt (described in the prompt, for "
                   "servers or models without tool support) or auto")
      ->check(CLI::IsMember({"auto", "native", "prompt"}))
      ->capture_default_str();
  run_cmd->add_option("--max-turns", args.max_turns, "Turn limit")
      ->capture_default_str()
      ->check(CLI::Range(1, 200));
  run_cmd->add_option("--max-failures", args.max_failures, "Failed turns in a row that end the run")
      ->capture_default_str()
      ->check(CLI::Range(1, 50));
  run_cmd->add_option("--state-dir", args.state_dir, "The state dir");
  run_cmd->add_option("--services", args.services, "LAVS service folder; repeatable")
      ->check(CLI::ExistingPath);
  run_cmd->add_flag("--insecure-no-sandbox", args.insecure_no_sandbox,
                    "Run scripts WITHOUT the jail (development only)");
  run_cmd->add_flag("--json", args.json, "Print events as JSON lines");
  run_cmd->callback([&run] { run = [] { return agent_run(args); }; });
  return agent;
}

}  // namespace hearth::cli
