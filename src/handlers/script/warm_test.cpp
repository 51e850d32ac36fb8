#include "handlers/script/warm.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <thread>

#include "proc/testing.hpp"

namespace hearth::handlers::script {
namespace {

using namespace std::chrono_literals;

using proc::testing::wait_until;

/// WarmJails' bookkeeping with jails that hold no process (what they hold is covered end to end
/// by tests/integration/test_performance_modes.py under the real jail).
class WarmJailsTest : public ::testing::Test {
 protected:
  std::shared_ptr<WarmJails> make(std::chrono::milliseconds idle = 30s) {
    return std::make_shared<WarmJails>(
        io_.executor(),
        [this]() -> Result<WarmJail> {
          made_++;
          if (fail_) return Error::make(ErrorCode::kInternalError, "cannot");
          WarmJail jail;
          jail.program = "/bin/true";
          return jail;
        },
        "svc.ep", idle);
  }
  proc::testing::IoThread io_;
  std::atomic<int> made_{0};
  std::atomic<bool> fail_{false};
};

TEST_F(WarmJailsTest, NoneIsMadeBeforeTheFirstCallThenOneWaits) {
  auto jails = make();
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(made_, 0);
  EXPECT_FALSE(jails->take());  // the first call goes the cold way...
  ASSERT_TRUE(wait_until([&] { return jails->waiting() == 1; }));
  EXPECT_EQ(made_, 1);  // ...and the next finds one
  auto taken = jails->take();
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->program, "/bin/true");
  ASSERT_TRUE(wait_until([&] { return jails->waiting() == 1; }));  // replaced
  EXPECT_EQ(made_, 2);
  jails->stop();
}

TEST_F(WarmJailsTest, CallsThatFindNoneRaiseHowManyWaitUpToTheMost) {
  fail_ = true;  // nothing can be made yet: every call below finds none
  auto jails = make();
  for (std::size_t i = 0; i < WarmJails::kMaxWarm + 3; ++i) EXPECT_FALSE(jails->take());
  ASSERT_TRUE(wait_until([&] { return made_ >= 1; }));
  fail_ = false;
  EXPECT_FALSE(jails->take());
  ASSERT_TRUE(wait_until([&] { return jails->waiting() == WarmJails::kMaxWarm; }));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(jails->waiting(), WarmJails::kMaxWarm);
  jails->stop();
}

TEST_F(WarmJailsTest, JailsLeftUnusedAreDroppedAndNoneIsMadeAgainUntilACall) {
  auto jails = make(100ms);
  EXPECT_FALSE(jails->take());
  ASSERT_TRUE(wait_until([&] { return jails->waiting() == 1; }));
  ASSERT_TRUE(wait_until([&] { return jails->waiting() == 0; }, 2s));
  const int made = made_;
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(made_, made);  // an endpoint left alone keeps nothing waiting
  EXPECT_FALSE(jails->take());
  ASSERT_TRUE(wait_until([&] { return jails->waiting() == 1; }));
  jails->stop();
}

TEST_F(WarmJailsTest, AJailThatCannotBeMadeIsNotRetriedInALoop) {
  fail_ = true;
  auto jails = make();
  EXPECT_FALSE(jails->take());
  ASSERT_TRUE(wait_until([&] { return made_ == 1; }));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(made_, 1);
  EXPECT_EQ(jails->waiting(), 0U);
  jails->stop();
}

TEST_F(WarmJailsTest, StopDropsWhatWaitsAndMakesNoMore) {
  auto jails = make();
  EXPECT_FALSE(jails->take());
  ASSERT_TRUE(wait_until([&] { return jails->waiting() == 1; }));
  jails->stop();
  EXPECT_EQ(jails->waiting(), 0U);
  EXPECT_FALSE(jails->take());
  const int made = made_;
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(made_, made);
}

}  // namespace
}  // namespace hearth::handlers::script
