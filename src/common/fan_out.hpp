#pragma once

#include <cstddef>
#include <cstdint>

namespace hearth {

/// Marks, for the scope's life, that the current thread is handing one message to many
/// receivers (a subscription's item pushed to every subscriber).
///
/// A transport that can write a message either at once on the calling thread or through its
/// thread pool asks `hand_off()` for each message. Outside a fan-out the answer is always no: a
/// single push is written at once, by the thread that made it. Inside one, every other message is
/// handed to the pool, so that the writes run on two threads at once instead of one thread
/// writing to every receiver while the others idle. The transport must keep each receiver's
/// messages in order whichever way it sends them (a strand does: a message handed to it queues
/// behind any still waiting there).
///
/// Scopes nest; a nested one does not reset the count. Not copyable; thread-local state only.
class FanOut {
 public:
  /// Fewer receivers than this are written on the calling thread: a hand-off costs more.
  static constexpr std::size_t kMinReceivers = 16;

  explicit FanOut(std::size_t receivers) : outer_(active_) {
    if (receivers >= kMinReceivers) active_ = true;
  }
  ~FanOut() { active_ = outer_; }
  FanOut(const FanOut&) = delete;
  FanOut& operator=(const FanOut&) = delete;

  /// Whether this message should go through the pool rather than be written here.
  static bool hand_off() { return active_ && (++count_ & 1U) == 0; }

 private:
  bool outer_;
  static inline thread_local bool active_ = false;
  static inline thread_local std::uint64_t count_ = 0;
};

}  // namespace hearth
