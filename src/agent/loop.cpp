#include "agent/loop.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/interpret.hpp"
#include "common/clock.hpp"

namespace hearth::agent {
namespace asio = boost::asio;

json::object Outcome::to_json() const {
  json::object o{{"status", status}, {"turns", turns}, {"version", version}};
  if (!reason.empty()) o["reason"] = reason;
  if (!result.is_null()) o["result"] = result;
  return o;
}

Run::Run(std::shared_ptr<workspace::Workspace> workspace, std::shared_ptr<ModelClient> model,
         RunOptions options, EventSink events, BlockingExecutor& transcript_writer)
    : workspace_(std::move(workspace)),
      model_(std::move(model)),
      options_(std::move(options)),
      events_(std::move(events)),
      writer_(transcript_writer) {}

void Run::cancel() {
  cancel_();
}

json::object Run::status() const {
  std::lock_guard lock(mu_);
  json::object o{{"runId", options_.run_id}, {"workspaceId", workspace_->name()}};
  if (outcome_) {
    for (const auto& kv : outcome_->to_json()) o[kv.key()] = kv.value();
  } else {
    o["status"] = "running";
    o["turns"] = turn_;
  }
  if (!options_.transcript.empty()) o["transcript"] = options_.transcript.string();
  return o;
}

json::array Run::tools() {
  return json::array{
      json::object{
          {"type", "function"},
          {"function",
           json::object{
               {"name", "execute_script"},
               {"description",
                "Run JavaScript against the workspace's states. It runs as the body of an async "
                "function: assign the states you may write, call the utilities, return a value "
                "to see it. Every changed state is validated; on any error nothing changes and "
                "the error says which state, path and rule. The result carries the fresh view."},
               {"parameters",
                json::object{{"type", "object"},
                             {"properties",
                              json::object{{"script",
                                            json::object{{"type", "string"},
                                                         {"description", "the JavaScript to run"}}},
                                           {"expectedVersion",
                                            json::object{{"type", "integer"},
                                                         {"description",
                                                          "refuse the change unless the "
                                                          "workspace is still at this version"}}}}},
                             {"required", json::array{"script"}}}}}}},
      json::object{
          {"type", "function"},
          {"function",
           json::object{
               {"name", "attempt_completion"},
               {"description",
                "Finish the task: give a short summary of what was done (and the answer, if the "
                "task asked a question). Call it only once the workspace shows the task done."},
               {"parameters",
                json::object{
                    {"type", "object"},
                    {"properties", json::object{{"result", json::object{{"type", "string"}}}}},
                    {"required", json::array{"result"}}}}}}}};
}

std::string Run::system_prompt(const workspace::Workspace& workspace) {
  std::string out =
      "You work in a virtual workspace: typed states you read and change by writing JavaScript. "
      "Use the execute_script tool to run a script, and attempt_completion (or a plain answer "
      "with the result) when the task is done. Each tool result shows the workspace again as it "
      "is after your call.\n\n";
  workspace::RenderOptions options;
  options.guide = true;
  out += workspace.render(options);
  return out;
}

void Run::emit(json::object event) {
  event["runId"] = options_.run_id;
  event["turn"] = turn_;
  event["at"] = utc_timestamp(std::chrono::system_clock::now());
  if (events_) events_(event);
  const auto* type = event.if_contains("type");
  const bool last = type != nullptr && type->is_string() && type->get_string().starts_with("task.");
  if (last) transcript_full_ = false;  // the outcome is always written
  write(event, last);
}

namespace {

/// `v` with every string longer than `max` capped (cap_text).
json::value bounded(const json::value& v, std::size_t max) {
  if (const auto* s = v.if_string(); s != nullptr && s->size() > max) {
    return json::string(cap_text(*s, max));
  }
  if (const auto* o = v.if_object()) {
    json::object out;
    for (const auto& kv : *o) out[kv.key()] = bounded(kv.value(), max);
    return out;
  }
  if (const auto* a = v.if_array()) {
    json::array out;
    for (const auto& e : *a) out.push_back(bounded(e, max));
    return out;
  }
  return v;
}

}  // namespace

void Run::write(const json::object& line, bool last) {
  if (options_.transcript.empty() || transcript_full_) return;
  const std::size_t max_string =
      std::min<std::size_t>(std::size_t{256} << 10, options_.max_transcript_bytes / 10);
  std::string text = json::serialize(bounded(line, max_string)) + "\n";
  if (transcript_bytes_ + text.size() > options_.max_transcript_bytes && !last) {
    // The rest of the run goes unrecorded but for its outcome.
    transcript_full_ = true;
    text = json::serialize(json::object{
               {"type", "transcript.truncated"},
               {"runId", options_.run_id},
               {"limitBytes", options_.max_transcript_bytes},
               {"reason", "the transcript reached its limit; only the outcome follows"}}) +
           "\n";
  }
  transcript_bytes_ += text.size();
  // On the writer's one thread, in order: the file is opened once (0600, appended to, never
  // through a symbolic link), then each line is written whole.
  writer_.post([file = transcript_, path = options_.transcript, text = std::move(text)] {
    if (!file->opened) {
      file->opened = true;
      file->fd =
          Fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
      if (!file->fd) spdlog::warn("agent transcript {}: {}", path.string(), std::strerror(errno));
    }
    if (!file->fd) return;
    std::string_view rest = text;
    while (!rest.empty()) {
      const ssize_t n = ::write(file->fd.get(), rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        spdlog::warn("agent transcript {}: {}", path.string(), std::strerror(errno));
        return;
      }
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
  });
}

Result<json::value> Run::accept_answer(const std::string& text) const {
  // Without a completion schema the text is the result; with one, the JSON the text holds if
  // it matches, else the text itself (a schema of a string).
  if (!workspace_->definition().completion_schema) return json::value(json::string(text));
  std::optional<Error> first;
  if (auto v = json_in_text(text)) {
    auto checked = workspace_->check_completion(*v);
    if (checked.ok()) return *v;
    first = checked.error();
  }
  const json::value as_text = json::string(text);
  auto checked = workspace_->check_completion(as_text);
  if (checked.ok()) return as_text;
  return first ? *first : checked.error();
}

Outcome Run::finish(std::string status, std::string reason, json::value result) {
  Outcome o;
  o.status = std::move(status);
  o.reason = std::move(reason);
  o.result = std::move(result);
  o.turns = turn_;
  o.version = workspace_->version();
  json::object event{{"type", "task." + o.status}};
  if (!o.reason.empty()) event["reason"] = o.reason;
  if (!o.result.is_null()) event["result"] = o.result;
  event["version"] = o.version;
  emit(std::move(event));
  std::lock_guard lock(mu_);
  outcome_ = o;
  return o;
}

asio::awaitable<Result<Reply>> Run::ask_model(const json::array& messages) {
  emit(json::object{{"type", "turn.started"}});
  FitReport fitted;
  json::array request_messages = fit(messages, 2, options_.context, &fitted);
  json::object requested{
      {"type", "model.requested"}, {"messages", request_messages.size()}, {"chars", fitted.chars}};
  if (fitted.elided > 0) requested["elided"] = fitted.elided;
  if (fitted.dropped > 0) requested["dropped"] = fitted.dropped;
  emit(std::move(requested));
  json::array tool_list = tools();
  Cancel cancel = cancel_;
  // Streamed text as it comes, with <think> sections held back (reasoning is not the answer).
  auto think = std::make_shared<ThinkFilter>();
  std::function<void(std::string_view)> on_delta = [this, think](std::string_view text) {
    const std::string shown = think->feed(text);
    if (shown.empty()) return;
    json::object event{
        {"type", "model.delta"}, {"text", shown}, {"runId", options_.run_id}, {"turn", turn_}};
    if (events_) events_(event);  // not in the transcript: model.completed has the whole text
  };
  std::function<void(int, std::chrono::milliseconds)> on_retry =
      [this](int status, std::chrono::milliseconds wait) {
        emit(json::object{{"type", "model.retry"}, {"status", status}, {"waitMs", wait.count()}});
      };
  std::function<void(std::string_view)> on_notice = [this](std::string_view notice) {
    emit(json::object{{"type", "model.fallback"}, {"tools", "prompt"}, {"reason", notice}});
  };
  co_return co_await model_->complete(std::move(request_messages), std::move(tool_list), cancel,
                                      on_delta, on_retry, on_notice);
}

asio::awaitable<Run::ToolRun> Run::run_tool(const ToolCall& call) {
  ToolRun out;
  auto args = json::parse_text(call.arguments.empty() ? "{}" : call.arguments);
  if (!call.problem.empty()) {
    out.result = json::object{{"ok", false}, {"error", call.problem}};
  } else if (auto problem = arguments_problem(call.name, call.arguments); !problem.empty()) {
    out.result = json::object{{"ok", false}, {"error", problem}};
  } else if (call.name == "execute_script") {
    const auto* script = args->get_object().if_contains("script");
    if (script == nullptr || !script->is_string()) {
      out.result = json::object{{"ok", false}, {"error", "execute_script needs a string 'script'"}};
      co_return out;
    }
    workspace::ExecuteRequest request;
    request.script = std::string(script->get_string());
    request.actor = "agent:" + options_.run_id;
    if (const auto* v = args->get_object().if_contains("expectedVersion"); v && v->is_int64()) {
      request.expected_version = v->get_int64();
    }
    auto executed = co_await workspace_->execute(std::move(request));
    if (!executed.ok()) {
      out.result = json::object{{"ok", false}, {"error", to_json(executed.error())}};
      co_return out;
    }
    out.result = json::object{{"ok", true},
                              {"version", executed->at("version")},
                              {"changed", executed->at("changed")},
                              {"output", executed->at("output")},
                              {"console", executed->at("console")},
                              {"effects", executed->at("effects")}};
    if (const auto* c = executed->if_contains("completion")) out.completion = c->at("result");
  } else if (call.name == "attempt_completion") {
    const auto* r = args->get_object().if_contains("result");
    out.completion = r != nullptr ? *r : json::value("");
  } else {
    out.result = json::object{
        {"ok", false},
        {"error", "unknown tool '" + call.name + "': use execute_script or attempt_completion"}};
  }
  co_return out;
}

std::optional<Outcome> Run::answered_without_tools(const Interpreted& answer, json::array& messages,
                                                   int& failures) {
  ++failures;
  std::string why = "the reply called no tool and gave no answer";
  std::string nudge =
      "Answer with a tool call: execute_script to change the workspace, or "
      "attempt_completion when the task is done.";
  if (!answer.text.empty()) {
    // A plain answer ends the task when it is a result the workspace accepts.
    auto accepted = accept_answer(answer.text);
    if (accepted.ok()) {
      emit(json::object{{"type", "tool.result"},
                        {"tool", "answer"},
                        {"ok", true},
                        {"completion", accepted.value()}});
      return finish("completed", "", accepted.value());
    }
    why = "the answer is not a result the workspace accepts: " + accepted.error().message;
    nudge = "Your answer does not end the task: " + accepted.error().message +
            ". Answer again with a result that matches, or keep working with execute_script.";
  }
  messages.push_back(json::object{{"role", "user"}, {"content", nudge}});
  emit(json::object{{"type", "tool.failed"}, {"reason", why}});
  if (failures >= options_.max_failures) {
    return finish("failed", std::to_string(failures) + " turns in a row without progress");
  }
  return std::nullopt;
}

asio::awaitable<Outcome> Run::run() {
  auto self = shared_from_this();
  json::array messages;
  messages.push_back(json::object{{"role", "system"}, {"content", system_prompt(*workspace_)}});
  messages.push_back(json::object{
      {"role", "user"}, {"content", cap_text(options_.task, options_.context.message_cap())}});
  write(json::object{{"type", "run.started"},
                     {"runId", options_.run_id},
                     {"workspaceId", workspace_->name()},
                     {"model", model_->config().model},
                     {"task", options_.task},
                     {"messages", messages}});
  int failures = 0;
  for (turn_ = 1; turn_ <= options_.max_turns; ++turn_) {
    if (cancel_.cancelled()) {
      co_return finish("cancelled", "cancelled before turn " + std::to_string(turn_));
    }
    auto reply = co_await ask_model(messages);
    if (cancel_.cancelled()) co_return finish("cancelled", "cancelled while the model answered");
    if (!reply.ok()) co_return finish("failed", reply.error().message);
    // What the reply means, whatever shape the server gave it (agent/interpret.hpp).
    const Interpreted answer = interpret(*reply, {"execute_script", "attempt_completion"});
    json::array calls_json;
    for (const auto& c : answer.calls) {
      calls_json.push_back(
          json::object{{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
    }
    json::object completed{{"type", "model.completed"},
                           {"content", answer.text},
                           {"toolCalls", calls_json},
                           {"finishReason", reply->finish_reason},
                           {"usage", reply->usage}};
    if (!answer.format.empty()) completed["callFormat"] = answer.format;
    if (!answer.reasoning.empty()) completed["reasoning"] = answer.reasoning;
    emit(std::move(completed));
    // The conversation keeps the answer and the calls, never the reasoning.
    Reply kept;
    kept.content = answer.text;
    kept.tool_calls = answer.calls;
    messages.push_back(kept_message(kept.message(), options_.context.message_cap()));

    if (answer.calls.empty()) {
      if (auto outcome = answered_without_tools(answer, messages, failures)) co_return *outcome;
      continue;
    }
    bool failed_turn = false;
    for (const auto& call : answer.calls) {
      emit(json::object{{"type", "tool.started"}, {"tool", call.name}, {"toolCallId", call.id}});
      ToolRun ran = co_await run_tool(call);
      if (ran.completion) {
        auto accepted = workspace_->check_completion(*ran.completion);
        if (accepted.ok()) {
          messages.push_back(json::object{
              {"role", "tool"}, {"tool_call_id", call.id}, {"content", "Task completed."}});
          emit(json::object{{"type", "tool.result"},
                            {"tool", call.name},
                            {"toolCallId", call.id},
                            {"ok", true},
                            {"completion", *ran.completion}});
          co_return finish("completed", "", *ran.completion);
        }
        ran.result = json::object{{"ok", false}, {"error", to_json(accepted.error())}};
      }
      const bool ok = ran.result.at("ok").as_bool();
      failed_turn |= !ok;
      emit(json::object{{"type", ok ? "tool.result" : "tool.failed"},
                        {"tool", call.name},
                        {"toolCallId", call.id},
                        {"result", ran.result}});
      workspace::RenderOptions view;
      view.guide = false;
      std::string content =
          cap_text(json::serialize(ran.result), options_.context.message_cap() / 2) + "\n\n" +
          workspace_->render(view);
      messages.push_back(json::object{
          {"role", "tool"}, {"tool_call_id", call.id}, {"content", std::move(content)}});
    }
    failures = failed_turn ? failures + 1 : 0;
    if (failures >= options_.max_failures) {
      co_return finish(
          "failed", std::to_string(failures) + " failed turns in a row (last: see the transcript)");
    }
  }
  turn_ = options_.max_turns;
  co_return finish("failed", "the turn limit of " + std::to_string(options_.max_turns) +
                                 " was reached without a completion");
}

}  // namespace hearth::agent
