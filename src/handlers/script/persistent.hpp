#pragma once
/// Persistent: the processes of one script endpoint in persistent mode (`"persistent": true` in
/// its handler), each started once under the endpoint's jail and then serving many calls over a
/// line protocol on its stdin and stdout, instead of a process per call.
///
/// --- The persistent line protocol (copied into docs/protocol.md) -----------------------------
/// hearth writes one request per line on the process's stdin, and sends a process its next
/// request only after it answered the previous one:
///     {"id": 7, "input": <the call's input>}
/// The process answers with one line on stdout, echoing the id:
///     {"id": 7, "result": <any JSON>}
///     {"id": 7, "error": {"message": "text", "data": <any, optional>}}
/// An error answer is the call's -32003 Handler error with that message (data {data} when
/// given). Before its answer, a process may publish to a subscription endpoint of its service:
///     {"publish": "<subscription endpoint id>", "data": <any>}
/// Everything else on stdout (a line that is not such an object, an answer with another id, a
/// line longer than the output limit) breaks the protocol: the call fails with -32003 and the
/// process is killed. Diagnostics go to stderr (its last 4 KiB are in the data of a crash).
///
/// Life of the processes: up to `instances` of them (default 1) are started when calls need them
/// and stay. A process that exits or is killed during a call fails that call (-32003 "Handler
/// exited with code N" with {exitCode, stderr}, or the jail's verdict such as "memory limit
/// exceeded"); a call that runs out of time kills its process (-32002); after `maxCalls` answered
/// calls a process is stopped and the next call starts a new one. A process that keeps dying
/// before it answers anything is started again only after a pause that doubles up to 5 s (calls
/// meanwhile fail at once, naming the last exit). Processes stop when the endpoint is reloaded or
/// removed and when the daemon stops.
///
/// What persistent mode gives up: a process keeps what one call leaves (files in its /tmp, module
/// state, background processes, its environment) for the calls after it. That is why it is a
/// choice written in the manifest; the default, a fresh jailed process per call, shares nothing.

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "confine/confine.hpp"
#include "handlers/handler.hpp"
#include "proc/process.hpp"

namespace hearth::handlers::script {

/// How much of a handler process's stderr is kept for a crash report (per call and persistent).
inline constexpr std::size_t kStderrTail = 4096;

struct PersistentSpec {
  std::string label;            ///< "service.endpoint", in logs
  std::size_t instances = 1;    ///< processes at most
  std::uint64_t max_calls = 0;  ///< answered calls after which a process is replaced; 0: never
  std::size_t max_line = std::size_t{16} << 20;  ///< a longer stdout line breaks the protocol
};

class Persistent : public std::enable_shared_from_this<Persistent> {
 public:
  /// Fills in the command of a new process and puts it under the jail (null confinement: none,
  /// as in unit tests). Called on the strand for each start.
  using Prepare = std::function<Result<std::shared_ptr<confine::Confinement>>(proc::Command&)>;

  /// The longest pause between starts of a process that keeps dying before it answers.
  static constexpr std::chrono::milliseconds kMaxBackoff{5000};

  Persistent(const boost::asio::any_io_executor& executor, PersistentSpec spec, Prepare prepare);
  ~Persistent();
  Persistent(const Persistent&) = delete;
  Persistent& operator=(const Persistent&) = delete;

  /// Runs one call on a free process (starting one when allowed), waiting for one within
  /// `timeout` (zero or less: no limit). `publisher` receives the process's publish lines while
  /// it serves this call. Any executor.
  boost::asio::awaitable<Result<json::value>> call(json::value input,
                                                   std::chrono::milliseconds timeout,
                                                   Publisher* publisher);

  /// Kills every process and fails what waits ("the endpoint is stopping"). Any thread;
  /// idempotent.
  void stop();

  /// How many processes were started (tests check restarts with it).
  std::uint64_t starts() const { return starts_.load(); }

 private:
  struct Slot;
  struct Instance;

  boost::asio::awaitable<Result<json::value>> call_on_strand(json::value input,
                                                             std::chrono::milliseconds timeout,
                                                             Publisher* publisher);
  void dispatch();
  std::shared_ptr<Instance> spawn(Error& error);
  void send(Instance& instance, const std::shared_ptr<Slot>& slot);
  void on_bytes(const std::shared_ptr<Instance>& instance, std::string_view bytes);
  void on_line(const std::shared_ptr<Instance>& instance, std::string_view line);
  void on_exit(const std::shared_ptr<Instance>& instance, const proc::RunResult& result);
  void broke_protocol(const std::shared_ptr<Instance>& instance, const std::string& why);
  void retire(const std::shared_ptr<Instance>& instance, std::optional<Error> error);
  static void complete(Slot& slot, Result<json::value> result);

  boost::asio::any_io_executor executor_;
  boost::asio::strand<boost::asio::any_io_executor> strand_;
  PersistentSpec spec_;
  Prepare prepare_;

  // Strand state.
  std::deque<std::shared_ptr<Slot>> queue_;
  std::uint64_t next_id_ = 0;
  std::uint64_t next_serial_ = 0;
  int quick_deaths_ = 0;  ///< processes in a row that died before answering anything
  std::chrono::steady_clock::time_point next_start_{};
  std::optional<Error> last_death_;

  std::mutex mutex_;  ///< guards instances_ (stop() comes from any thread)
  std::vector<std::shared_ptr<Instance>> instances_;
  std::atomic<bool> stopped_{false};
  std::atomic<std::uint64_t> starts_{0};
};

}  // namespace hearth::handlers::script
