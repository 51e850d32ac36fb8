#include "methods/agent/agent.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>

#include "common/random.hpp"
#include "rpc/params.hpp"

namespace hearth::methods::agent {
namespace asio = boost::asio;
using hearth::workspace::Manager;
using rpc::Request;

// --- runs -------------------------------------------------------------------------------------

std::shared_ptr<hearth::agent::Run> Runs::find(const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = runs_.find(id);
  return it != runs_.end() ? it->second : nullptr;
}

void Runs::add(std::shared_ptr<hearth::agent::Run> run) {
  std::lock_guard lock(mu_);
  const std::string id = run->options().run_id;
  runs_[id] = std::move(run);
  order_.push_back(id);
  // Ended runs are forgotten, oldest first, past 200.
  for (std::size_t i = 0; runs_.size() > 200 && i < order_.size();) {
    auto it = runs_.find(order_[i]);
    if (it != runs_.end() && it->second->status().at("status") != "running") {
      runs_.erase(it);
      order_.erase(order_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

void Runs::cancel_all() {
  std::lock_guard lock(mu_);
  for (auto& [id, run] : runs_) run->cancel();
}

namespace {

asio::awaitable<Result<json::value>> agent_run(Manager& manager, AgentSettings& settings,
                                               Runs& runs, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto workspace_id, rpc::required_string(*params, "workspaceId"));
  HEARTH_CO_ASSIGN_OR_RETURN(auto ws, manager.find(workspace_id));
  HEARTH_CO_ASSIGN_OR_RETURN(auto task, rpc::required_string(*params, "task"));
  hearth::agent::ModelChoice choice;
  if (const auto* m = params->if_contains("model"); m != nullptr && !m->is_null()) {
    if (!m->is_object()) co_return rpc::invalid_param("model must be an object", "model", "type");
    const auto& mo = m->get_object();
    HEARTH_CO_ASSIGN_OR_RETURN(choice.server, rpc::string_param(mo, "server", false));
    HEARTH_CO_ASSIGN_OR_RETURN(choice.base_url, rpc::string_param(mo, "baseUrl", false));
    HEARTH_CO_ASSIGN_OR_RETURN(choice.model, rpc::string_param(mo, "model", false));
    HEARTH_CO_ASSIGN_OR_RETURN(choice.key_ref, rpc::string_param(mo, "apiKeyRef", false));
    HEARTH_CO_ASSIGN_OR_RETURN(auto stream, rpc::bool_param(mo, "stream"));
    if (mo.contains("stream")) choice.stream = stream;
    HEARTH_CO_ASSIGN_OR_RETURN(auto tools, rpc::string_param(mo, "tools", false));
    if (tools) {
      choice.tools = hearth::agent::parse_tool_mode(*tools);
      if (!choice.tools) {
        co_return rpc::invalid_param("model.tools must be auto, native or prompt", "model.tools",
                                     "enum");
      }
    }
  }
  HEARTH_CO_ASSIGN_OR_RETURN(auto resolved, settings.servers.resolve(choice, settings.limits));
  hearth::agent::ModelConfig model = std::move(resolved.config);
  if (!resolved.key_ref.empty()) {
    if (!settings.read_key) {
      co_return Error::make(ErrorCode::kInternalError, "this daemon has no vault for apiKeyRef");
    }
    auto read = settings.read_key;
    std::function<Result<std::string>()> work =
        [read, ref = resolved.key_ref, domain = resolved.key_domain] { return read(ref, domain); };
    auto key = co_await settings.writer->run(work);
    if (!key.ok()) co_return key.error();
    model.api_key = std::move(key).value();
  }
  HEARTH_CO_ASSIGN_OR_RETURN(auto max_turns, rpc::int_param(*params, "maxTurns", 1));
  HEARTH_CO_ASSIGN_OR_RETURN(auto max_failures, rpc::int_param(*params, "maxFailures", 1));
  hearth::agent::RunOptions options;
  options.run_id = "run-" + random_hex(8);
  options.task = task;
  options.context = settings.context;
  if (max_turns) options.max_turns = static_cast<int>(std::min<std::int64_t>(*max_turns, 200));
  if (max_failures) {
    options.max_failures = static_cast<int>(std::min<std::int64_t>(*max_failures, 50));
  }
  if (!settings.transcripts.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(settings.transcripts, ec);
    options.transcript = settings.transcripts / (options.run_id + ".jsonl");
  }
  std::weak_ptr<rpc::Session> weak_session = request.session;
  const bool push = request.session && request.session->can_push();
  hearth::agent::Run::EventSink sink = [weak_session, push](const json::object& event) {
    if (!push) return;
    if (auto s = weak_session.lock()) {
      s->push(json::serialize(rpc::make_notification("agent/event", event)));
    }
  };
  auto executor = co_await asio::this_coro::executor;
  auto client = std::make_shared<hearth::agent::ModelClient>(executor, model);
  auto run = std::make_shared<hearth::agent::Run>(ws, client, options, sink, *settings.writer);
  runs.add(run);
  // Started after the answer is written, so the runId reaches the client before any event.
  auto start = [run, client, executor] {
    asio::co_spawn(
        executor,
        [run, client]() -> asio::awaitable<void> {
          (void)co_await run->run();
          client->shutdown();
        },
        asio::detached);
  };
  if (request.after_reply != nullptr) {
    request.after_reply->push_back(start);
  } else {
    start();
  }
  co_return json::value(
      json::object{{"runId", options.run_id},
                   {"workspaceId", ws->name()},
                   {"model", model.model},
                   {"server", resolved.server.empty() ? json::value(model.base_url)
                                                      : json::value(resolved.server)},
                   {"transcript", options.transcript.string()}});
}

asio::awaitable<Result<json::value>> agent_cancel(Runs& runs, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto id, rpc::required_string(*params, "runId"));
  auto run = runs.find(id);
  if (!run) co_return rpc::invalid_param("no run " + id, "runId", "exists");
  run->cancel();
  co_return json::value(run->status());
}

asio::awaitable<Result<json::value>> agent_read(Runs& runs, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto id, rpc::required_string(*params, "runId"));
  auto run = runs.find(id);
  if (!run) co_return rpc::invalid_param("no run " + id, "runId", "exists");
  co_return json::value(run->status());
}

}  // namespace

void add_methods(rpc::Dispatcher& dispatcher, Manager& workspaces, AgentSettings& settings,
                 Runs& runs) {
  dispatcher.add("agent/run", [&workspaces, &settings, &runs](const Request& r) {
    return agent_run(workspaces, settings, runs, r);
  });
  dispatcher.add("agent/cancel", [&runs](const Request& r) { return agent_cancel(runs, r); });
  dispatcher.add("agent/read", [&runs](const Request& r) { return agent_read(runs, r); });
}

}  // namespace hearth::methods::agent
