#include "common/fan_out.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace hearth {
namespace {

int handed_off(int messages) {
  int n = 0;
  for (int i = 0; i < messages; ++i) n += FanOut::hand_off() ? 1 : 0;
  return n;
}

TEST(FanOut, OutsideOneNothingIsHandedOff) {
  EXPECT_EQ(handed_off(100), 0);
}

TEST(FanOut, FewReceiversAreWrittenOnTheCallingThread) {
  const FanOut small(FanOut::kMinReceivers - 1);
  EXPECT_EQ(handed_off(100), 0);
}

TEST(FanOut, InsideOneEveryOtherMessageIsHandedOff) {
  {
    const FanOut many(FanOut::kMinReceivers);
    EXPECT_EQ(handed_off(100), 50);
    bool last = FanOut::hand_off();
    for (int i = 0; i < 10; ++i) {
      const bool next = FanOut::hand_off();
      EXPECT_NE(next, last);  // alternates
      last = next;
    }
  }
  EXPECT_EQ(handed_off(100), 0);  // the scope ended
}

TEST(FanOut, ScopesNestAndTheOuterOneHolds) {
  const FanOut outer(1000);
  {
    const FanOut inner(2);  // a small fan-out inside a large one does not end it
    EXPECT_EQ(handed_off(10), 5);
  }
  EXPECT_EQ(handed_off(10), 5);
  { const FanOut inner(1000); }
  EXPECT_EQ(handed_off(10), 5);
}

TEST(FanOut, IsPerThread) {
  const FanOut here(1000);
  int there = -1;
  std::thread other([&] { there = handed_off(100); });
  other.join();
  EXPECT_EQ(there, 0);
  EXPECT_EQ(handed_off(100), 50);
}

}  // namespace
}  // namespace hearth
