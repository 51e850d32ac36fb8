#pragma once
/// BlockingExecutor: threads for work that may block or take long (reading a file, validating a
/// large value, writing the audit log, a database call), so that none of it holds an I/O thread.
/// run() hands the work to one of its threads and resumes the awaiting coroutine on its own
/// executor with the result.

#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstddef>
#include <functional>
#include <utility>

#include "common/on_strand.hpp"

namespace hearth {

class BlockingExecutor {
 public:
  explicit BlockingExecutor(std::size_t threads = 1) : pool_(threads) {}
  ~BlockingExecutor() { join(); }
  BlockingExecutor(const BlockingExecutor&) = delete;
  BlockingExecutor& operator=(const BlockingExecutor&) = delete;

  /// Runs `work` on a blocking thread; the caller resumes on its own executor. Pass a named
  /// std::function: GCC 12 may destroy a temporary argument of a co_awaited coroutine twice
  /// (seen with lambdas and strings), so arguments of co_awaited calls are named throughout.
  template <class T>
  boost::asio::awaitable<T> run(std::function<T()> work) {
    return hearth::on(pool_.get_executor(), call(std::move(work)));
  }

  /// Runs `work` on a blocking thread without waiting for it (in the order given, with one
  /// thread).
  void post(std::function<void()> work) { boost::asio::post(pool_, std::move(work)); }

  /// Finishes the work already given and stops the threads. Idempotent.
  void join() { pool_.join(); }

  boost::asio::thread_pool::executor_type executor() { return pool_.get_executor(); }

 private:
  template <class T>
  static boost::asio::awaitable<T> call(std::function<T()> work) {
    co_return work();
  }

  boost::asio::thread_pool pool_;
};

}  // namespace hearth
