#pragma once
/// Ids of client connections: an rpc::Session's, and those of the host's subscribers inside the
/// daemon (host::LocalSubscriber). One counter for all of them, so that what is kept per
/// connection (subscriptions and their limits, view mounts) never mixes two.

#include <atomic>
#include <cstdint>

namespace hearth {

/// A new connection id: unique in the process, never 0.
inline std::uint64_t next_connection_id() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1);
}

}  // namespace hearth
