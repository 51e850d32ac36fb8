#include "common/blocking.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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

TEST(BlockingExecutor, ALaneThatHasQueuedMoreThanThePoolHasThreadsDoesNotHoldAnotherLane) {
  asio::io_context io;
  BlockingExecutor blocking(2);
  std::promise<void> release;
  auto released = release.get_future().share();
  std::atomic<int> released_in_time{0};
  bool other_lane_ran = false;
  // Three calls in lane "a", each waiting until lane "b" has run: without lanes they would take
  // both threads and "b" would never run (each gives up after 10 s, and the test fails).
  for (int i = 0; i < 3; ++i) {
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          std::function<bool()> work = [released] {
            return released.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
          };
          std::string lane = "a";
          if (co_await blocking.run_in(std::move(lane), std::move(work))) ++released_in_time;
        },
        asio::detached);
  }
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::function<bool()> work = [&release] {
          release.set_value();
          return true;
        };
        std::string lane = "b";
        other_lane_ran = co_await blocking.run_in(std::move(lane), std::move(work));
      },
      asio::detached);
  io.run();
  EXPECT_TRUE(other_lane_ran);
  EXPECT_EQ(released_in_time.load(), 3);
  EXPECT_EQ(blocking.lanes(), 0U);
}

TEST(BlockingExecutor, OneLanesWorkRunsInOrderAndNeverSideBySide) {
  asio::io_context io;
  BlockingExecutor blocking(4);
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  std::mutex order_mutex;
  std::vector<int> order;
  for (int i = 0; i < 20; ++i) {
    asio::co_spawn(
        io,
        [&, i]() -> asio::awaitable<void> {
          std::function<int()> work = [&, i] {
            const int now = ++inside;
            most = std::max(most.load(), now);
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            {
              const std::lock_guard lock(order_mutex);
              order.push_back(i);
            }
            --inside;
            return i;
          };
          std::string lane = "app";
          (void)co_await blocking.run_in(std::move(lane), std::move(work));
        },
        asio::detached);
  }
  io.run();
  ASSERT_EQ(order.size(), 20U);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
  EXPECT_EQ(most.load(), 1);
  EXPECT_EQ(blocking.lanes(), 0U);
}

}  // namespace
}  // namespace hearth
