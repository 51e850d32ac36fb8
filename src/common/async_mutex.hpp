#pragma once
/// AsyncMutex: mutual exclusion for coroutines. lock() suspends (never blocks a thread) until the
/// mutex is free and returns a guard that frees it when destroyed. Waiters are served in order.
/// Thread-safe: lock and unlock from any executor.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <optional>
#include <tuple>
#include <utility>

namespace hearth {

class AsyncMutex {
 public:
  explicit AsyncMutex(const boost::asio::any_io_executor& executor) : token_(executor, 1) {
    token_.try_send(boost::system::error_code{});
  }

  class Guard {
   public:
    Guard() = default;
    explicit Guard(AsyncMutex* mutex) : mutex_(mutex) {}
    Guard(Guard&& other) noexcept : mutex_(std::exchange(other.mutex_, nullptr)) {}
    Guard& operator=(Guard&& other) noexcept {
      release();
      mutex_ = std::exchange(other.mutex_, nullptr);
      return *this;
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    ~Guard() { release(); }
    explicit operator bool() const { return mutex_ != nullptr; }

   private:
    void release() {
      if (mutex_ != nullptr) mutex_->token_.try_send(boost::system::error_code{});
      mutex_ = nullptr;
    }
    AsyncMutex* mutex_ = nullptr;
  };

  /// Waits for the mutex: `auto guard = m.guard(co_await m.lock());`. The guard is empty when
  /// the mutex was closed (its owner is going away). (Two steps rather than one coroutine: GCC 12
  /// warns of mismatched frame deallocation for a coroutine awaited this way.)
  auto lock() { return token_.async_receive(boost::asio::as_tuple(boost::asio::use_awaitable)); }
  Guard guard(const std::tuple<boost::system::error_code>& waited) {
    return std::get<0>(waited) ? Guard() : Guard(this);
  }

  /// Wakes every waiter with an empty guard; later lock() calls get one at once.
  void close() { token_.close(); }

 private:
  boost::asio::experimental::concurrent_channel<void(boost::system::error_code)> token_;
};

}  // namespace hearth
