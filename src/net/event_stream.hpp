#pragma once
/// A streamed route answer of server-sent events (text/event-stream), fed from any thread: what
/// MCP's Streamable HTTP and A2A's message/stream send.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "net/routes.hpp"

namespace hearth::net {

class EventStream : public BodyStream, public std::enable_shared_from_this<EventStream> {
 public:
  /// A silent stream sends a comment every `keep_alive`, so that a vanished peer is noticed.
  EventStream(const boost::asio::any_io_executor& executor, std::chrono::seconds keep_alive);

  boost::asio::awaitable<std::optional<std::string>> next() override;
  void cancel() override;
  /// Queues one event whose data is `data` (one line: JSON).
  void send(const std::string& data, std::string_view event = "message");
  /// Ends the stream once what is queued has been written.
  void end();
  /// Runs `hook` (on the stream's strand) once the peer is gone or the server stops; at once
  /// when that has happened.
  void on_cancel(std::function<void()> hook);

 private:
  static boost::asio::awaitable<std::optional<std::string>> next_on_strand(
      std::shared_ptr<EventStream> self);

  boost::asio::strand<boost::asio::any_io_executor> strand_;
  boost::asio::steady_timer timer_;
  std::chrono::seconds keep_alive_;
  std::deque<std::string> queue_;
  bool ended_ = false;
  bool cancelled_ = false;
  std::function<void()> on_cancel_;
};

}  // namespace hearth::net
