#pragma once
/// The agent loop (docs/workspace.md, "The agent loop"): a model works a task in a workspace
/// with two tools, `execute_script` and `attempt_completion`. Every tool result carries the
/// fresh render, so the model always sees the state it acts on. Replies are read whatever shape
/// the server gives them (agent/interpret.hpp): calls written into the text, reasoning apart.
///
/// It stops when a completion is accepted (`attempt_completion`, or a plain answer, checked
/// against the workspace's completion schema), at the turn limit, after `max_failures` failed
/// turns in a row (a script that failed, a call that could not be read, an answer the schema
/// refuses, an unknown tool), when cancelled, or when the model server fails past its retries.
/// Every turn is appended to a JSONL transcript; events go to a callback as they happen
/// (agent/event), named as agentruntime names them: turn.started, model.requested,
/// model.delta, model.retry, model.fallback, model.completed, tool.started, tool.result,
/// tool.failed, task.completed, task.failed, task.cancelled.

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "agent/context.hpp"
#include "agent/model.hpp"
#include "common/blocking.hpp"
#include "common/fd.hpp"
#include "workspace/workspace.hpp"

namespace hearth::agent {

struct Interpreted;  // agent/interpret.hpp

struct RunOptions {
  std::string run_id;
  std::string task;
  int max_turns = 20;
  int max_failures = 3;
  std::filesystem::path transcript;  ///< JSONL; empty: none
  ContextBudget context;             ///< what one request to the model carries
  /// What the transcript may hold: each string of an event is capped at a tenth of it, and
  /// past the whole of it only the run's last event is written (with a line saying so).
  std::size_t max_transcript_bytes = std::size_t{32} << 20;
};

/// How a run ended.
struct Outcome {
  std::string status;  ///< "completed", "failed", "cancelled"
  std::string reason;  ///< why it failed or was cancelled
  json::value result;  ///< the completion's result
  int turns = 0;
  std::int64_t version = 0;  ///< the workspace's version at the end
  json::object to_json() const;
};

class Run : public std::enable_shared_from_this<Run> {
 public:
  using EventSink = std::function<void(const json::object& event)>;

  Run(std::shared_ptr<workspace::Workspace> workspace, std::shared_ptr<ModelClient> model,
      RunOptions options, EventSink events, BlockingExecutor& transcript_writer);

  boost::asio::awaitable<Outcome> run();
  /// Stops the run at its next step (the model request in flight is aborted).
  void cancel();

  const RunOptions& options() const { return options_; }
  /// "running" until it ends, then its outcome.
  json::object status() const;

  /// The tools offered to the model, as chat-completions `tools`.
  static json::array tools();
  /// The system message: what the workspace is and how to work in it.
  static std::string system_prompt(const workspace::Workspace& workspace);

 private:
  /// What one tool call gives: its result for the model, and the completion it proposes.
  struct ToolRun {
    json::object result;
    std::optional<json::value> completion;
  };
  /// The model's next reply to `messages` (fitted to the context), its progress told as
  /// events (turn.started, model.requested, deltas, retries, the fallback to prompt tools).
  boost::asio::awaitable<Result<Reply>> ask_model(const json::array& messages);
  /// Runs one call of execute_script or attempt_completion.
  boost::asio::awaitable<ToolRun> run_tool(const ToolCall& call);
  /// A reply without tool calls: the outcome when its text is an accepted result or the
  /// failures in a row reached their limit; otherwise the model is told to answer with a tool.
  std::optional<Outcome> answered_without_tools(const Interpreted& answer, json::array& messages,
                                                int& failures);
  void emit(json::object event);
  /// Appends `line` to the transcript (bounded: see RunOptions::max_transcript_bytes); `last`
  /// lines (the outcome) are written even past the bound.
  void write(const json::object& line, bool last = false);
  Outcome finish(std::string status, std::string reason, json::value result = nullptr);
  /// A plain answer as the task's result: accepted when it matches the completion schema.
  Result<json::value> accept_answer(const std::string& text) const;

  std::shared_ptr<workspace::Workspace> workspace_;
  std::shared_ptr<ModelClient> model_;
  RunOptions options_;
  EventSink events_;
  BlockingExecutor& writer_;
  Cancel cancel_;
  /// The transcript file, opened on the writer's thread at the first line.
  struct TranscriptFile {
    bool opened = false;
    Fd fd;
  };
  std::shared_ptr<TranscriptFile> transcript_ = std::make_shared<TranscriptFile>();
  std::size_t transcript_bytes_ = 0;  ///< written (or queued) so far
  bool transcript_full_ = false;
  int turn_ = 0;
  mutable std::mutex mu_;
  std::optional<Outcome> outcome_;
};

}  // namespace hearth::agent
