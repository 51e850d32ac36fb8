#include "common/blocking.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <future>
#include <thread>

namespace hearth {
namespace {
namespace asio = boost::asio;

TEST(BlockingExecutor, WorkRunsOffTheCallersThreadWhichResumesWithTheResult) {
  asio::io_context io;
  BlockingExecutor blocking(1);
  const auto io_thread = std::this_thread::get_id();
  std::thread::id work_thread;
  std::thread::id resumed_on;
  int result = 0;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::function<int()> work = [&] {
          work_thread = std::this_thread::get_id();
          return 42;
        };
        result = co_await blocking.run(std::move(work));
        resumed_on = std::this_thread::get_id();
      },
      asio::detached);
  io.run();
  EXPECT_EQ(result, 42);
  EXPECT_NE(work_thread, io_thread);
  EXPECT_EQ(resumed_on, io_thread);
}

TEST(BlockingExecutor, SlowWorkDoesNotHoldTheIoThread) {
  asio::io_context io;
  BlockingExecutor blocking(1);
  std::promise<void> release;
  auto released = release.get_future().share();
  bool slow_done = false;
  bool other_ran_first = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::function<bool()> work = [released] {
          released.wait();
          return true;
        };
        slow_done = co_await blocking.run(std::move(work));
      },
      asio::detached);
  // Runs on the io thread while the slow work waits: it lets the work finish.
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        other_ran_first = !slow_done;
        release.set_value();
        co_return;
      },
      asio::detached);
  io.run();
  EXPECT_TRUE(other_ran_first);
  EXPECT_TRUE(slow_done);
}

TEST(BlockingExecutor, SeveralThreadsRunWorkConcurrently) {
  asio::io_context io;
  BlockingExecutor blocking(2);
  std::atomic<int> arrived{0};  // only grows: each waits for the other to have arrived
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  int finished = 0;
  for (int i = 0; i < 2; ++i) {
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          std::function<int()> work = [&] {
            const int now = ++inside;
            most = std::max(most.load(), now);
            ++arrived;
            // Wait (bounded) for the other one to be inside too.
            for (int k = 0; k < 2000 && arrived.load() < 2; ++k) {
              std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            --inside;
            return 1;
          };
          finished += co_await blocking.run(std::move(work));
        },
        asio::detached);
  }
  io.run();
  EXPECT_EQ(finished, 2);
  EXPECT_EQ(most.load(), 2);
}

}  // namespace
}  // namespace hearth
