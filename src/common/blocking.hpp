#pragma once
/// BlockingExecutor: threads for work that may block or take long (reading a file, validating a
/// large value, writing the audit log, a database call), so that none of it holds an I/O thread.
/// run() hands the work to one of its threads and resumes the awaiting coroutine on its own
/// executor with the result. run_in() does the same in a lane: work given with one lane's name
/// runs one at a time, in order, while other lanes' work runs beside it (one app's database calls
/// queue behind each other, never behind another app's).

#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
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

  /// Runs `work` on a blocking thread once the work given earlier in `lane` is done, never beside
  /// it. A lane waits in its own queue, not on a thread, so N threads serve N lanes at once
  /// however much one lane has queued. A lane lasts while it has work (lanes().size() is bounded
  /// by the work in flight, whatever names callers pass).
  template <class T>
  boost::asio::awaitable<T> run_in(std::string lane, std::function<T()> work) {
    const LaneUse use(*this, std::move(lane));
    co_return co_await hearth::on(use.strand(), call(std::move(work)));
  }

  /// How many lanes have work given and not finished (for tests).
  std::size_t lanes() {
    const std::lock_guard lock(lanes_mutex_);
    return lanes_.size();
  }

  /// Runs `work` on a blocking thread without waiting for it (in the order given, with one
  /// thread).
  void post(std::function<void()> work) { boost::asio::post(pool_, std::move(work)); }

  /// Finishes the work already given and stops the threads. Idempotent.
  void join() { pool_.join(); }

  boost::asio::thread_pool::executor_type executor() { return pool_.get_executor(); }

 private:
  using Strand = boost::asio::strand<boost::asio::thread_pool::executor_type>;
  struct Lane {
    explicit Lane(Strand s) : strand(std::move(s)) {}
    Strand strand;
    std::size_t users = 0;
  };

  /// One piece of work's hold on its lane: made on first use, dropped with its last user.
  class LaneUse {
   public:
    LaneUse(BlockingExecutor& owner, std::string name) : owner_(owner), name_(std::move(name)) {
      const std::lock_guard lock(owner_.lanes_mutex_);
      auto it = owner_.lanes_.find(name_);
      if (it == owner_.lanes_.end()) {
        it = owner_.lanes_
                 .emplace(name_, std::make_shared<Lane>(
                                     boost::asio::make_strand(owner_.pool_.get_executor())))
                 .first;
      }
      lane_ = it->second;
      ++lane_->users;
    }
    ~LaneUse() {
      const std::lock_guard lock(owner_.lanes_mutex_);
      if (--lane_->users == 0) owner_.lanes_.erase(name_);
    }
    LaneUse(const LaneUse&) = delete;
    LaneUse& operator=(const LaneUse&) = delete;
    const Strand& strand() const { return lane_->strand; }

   private:
    BlockingExecutor& owner_;
    std::string name_;
    std::shared_ptr<Lane> lane_;
  };

  template <class T>
  static boost::asio::awaitable<T> call(std::function<T()> work) {
    co_return work();
  }

  boost::asio::thread_pool pool_;
  std::mutex lanes_mutex_;
  std::map<std::string, std::shared_ptr<Lane>, std::less<>> lanes_;
};

}  // namespace hearth
