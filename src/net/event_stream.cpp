#include "net/event_stream.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/on_strand.hpp"

namespace hearth::net {

namespace asio = boost::asio;

EventStream::EventStream(const asio::any_io_executor& executor, std::chrono::seconds keep_alive)
    : strand_(asio::make_strand(executor)), timer_(strand_), keep_alive_(keep_alive) {}

asio::awaitable<std::optional<std::string>> EventStream::next() {
  co_return co_await on(strand_, next_on_strand(shared_from_this()));
}

void EventStream::cancel() {
  asio::post(strand_, [self = shared_from_this()] {
    self->cancelled_ = true;
    self->timer_.cancel();
    if (self->on_cancel_) {
      auto hook = std::move(self->on_cancel_);
      self->on_cancel_ = nullptr;
      hook();
    }
  });
}

void EventStream::send(const std::string& data, std::string_view event) {
  std::string piece = "event: " + std::string(event) + "\ndata: " + data + "\n\n";
  asio::post(strand_, [self = shared_from_this(), piece = std::move(piece)]() mutable {
    self->queue_.push_back(std::move(piece));
    self->timer_.cancel();
  });
}

void EventStream::end() {
  asio::post(strand_, [self = shared_from_this()] {
    self->ended_ = true;
    self->timer_.cancel();
  });
}

void EventStream::on_cancel(std::function<void()> hook) {
  asio::post(strand_, [self = shared_from_this(), hook = std::move(hook)]() mutable {
    if (self->cancelled_) {
      hook();
    } else {
      self->on_cancel_ = std::move(hook);
    }
  });
}

asio::awaitable<std::optional<std::string>> EventStream::next_on_strand(
    std::shared_ptr<EventStream> self) {
  for (;;) {
    if (self->cancelled_) co_return std::nullopt;
    if (!self->queue_.empty()) {
      std::string piece = std::move(self->queue_.front());
      self->queue_.pop_front();
      co_return piece;
    }
    if (self->ended_) co_return std::nullopt;
    self->timer_.expires_after(self->keep_alive_);
    auto [ec] = co_await self->timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    if (!ec) co_return std::string(": keep-alive\n\n");
  }
}

}  // namespace hearth::net
