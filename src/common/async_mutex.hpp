#pragma once
/// AsyncMutex: mutual exclusion for coroutines. lock() suspends (never blocks a thread) until the
/// mutex is free and returns a guard that frees it when destroyed, handing it to the next waiter
/// in order. Thread-safe: lock and unlock from any executor.

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>

namespace hearth {

class AsyncMutex {
 public:
  AsyncMutex() = default;
  AsyncMutex(const AsyncMutex&) = delete;
  AsyncMutex& operator=(const AsyncMutex&) = delete;

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
      if (mutex_ != nullptr) mutex_->unlock();
      mutex_ = nullptr;
    }
    AsyncMutex* mutex_ = nullptr;
  };

  /// The guard; an empty guard when the mutex was closed (its owner is going away).
  boost::asio::awaitable<Guard> lock() {
    auto executor = co_await boost::asio::this_coro::executor;
    std::shared_ptr<Waiter> waiter;
    {
      std::lock_guard lock(mu_);
      if (closed_) co_return Guard();
      if (!locked_) {
        locked_ = true;
        co_return Guard(this);
      }
      waiter = std::make_shared<Waiter>(executor);
      waiters_.push_back(waiter);
    }
    // unlock() or close() cancels the timer (on its executor) once the waiter's turn is decided.
    (void)co_await waiter->timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    std::lock_guard lock(mu_);
    co_return waiter->granted ? Guard(this) : Guard();
  }

  /// Wakes every waiter with an empty guard; later lock() calls get one at once.
  void close() {
    std::deque<std::shared_ptr<Waiter>> woken;
    {
      std::lock_guard lock(mu_);
      closed_ = true;
      woken.swap(waiters_);
    }
    for (auto& w : woken) wake(w);
  }

 private:
  struct Waiter {
    explicit Waiter(const boost::asio::any_io_executor& executor)
        : timer(executor, boost::asio::steady_timer::time_point::max()) {}
    boost::asio::steady_timer timer;
    bool granted = false;  ///< guarded by the mutex's mu_
  };

  static void wake(const std::shared_ptr<Waiter>& w) {
    boost::asio::post(w->timer.get_executor(), [w] { w->timer.cancel(); });
  }

  void unlock() {
    std::shared_ptr<Waiter> next;
    {
      std::lock_guard lock(mu_);
      if (waiters_.empty()) {
        locked_ = false;
        return;
      }
      next = std::move(waiters_.front());
      waiters_.pop_front();
      next->granted = true;  // the mutex stays locked: it passes to `next`
    }
    wake(next);
  }

  std::mutex mu_;
  bool locked_ = false;
  bool closed_ = false;
  std::deque<std::shared_ptr<Waiter>> waiters_;
};

}  // namespace hearth
