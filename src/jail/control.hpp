#pragma once
/// The messages between hearth-launch and the daemon (the control socket, fd 4) and between the
/// launcher's own processes (the sync socket): SOCK_SEQPACKET datagrams of short text, each
/// optionally carrying one descriptor (SCM_RIGHTS). Launcher to daemon:
///   "listen" + fd         the proxy listener in the jail's network namespace
///   "oom"                 the jail's memory cgroup recorded an OOM kill
///   "error\tMECH\tDETAIL" a mechanism could not be applied (the launcher then exits 127)

#include <optional>
#include <string>
#include <string_view>

#include "common/fd.hpp"

namespace hearth::jail {

/// Sends `message` (and `fd`, when >= 0) as one datagram. False on failure or when socket < 0.
bool send_message(int socket, std::string_view message, int fd = -1);

/// One received datagram; `fd` is the descriptor it carried (close-on-exec), if any.
struct Message {
  std::string text;
  Fd fd;
};

/// Receives one datagram (messages longer than 1 KiB are cut). `wait`: block until one comes;
/// otherwise nullopt when none is queued. nullopt also at end of stream or on error.
std::optional<Message> receive_message(int socket, bool wait);

}  // namespace hearth::jail
