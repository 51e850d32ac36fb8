#pragma once
/// The messages between hearth-launch and the daemon (the control socket, fd 4) and between the
/// launcher's own processes (the sync socket): SOCK_SEQPACKET datagrams of short text, each
/// optionally carrying one descriptor (SCM_RIGHTS). Launcher to daemon:
///   "listen" + fd         the proxy listener in the jail's network namespace
///   "oom"                 the jail's memory cgroup recorded an OOM kill
///   "error\tMECH\tDETAIL" a mechanism could not be applied (the launcher then exits 127)
///   "ready"               a warm jail (--exec-on-request) is built and waits for its call
/// Daemon to launcher, only with --exec-on-request (a warm jail):
///   "exec" + fd           the call: a sealed memfd holding its arguments and environment
///                         (encode_exec below); the jail then starts the program with them. The
///                         control socket closing instead tells the waiting jail to exit.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

/// A call's argv (argv[0] included) and environment ("KEY=VALUE"), as the "exec" message's memfd
/// holds them: the decimal count of argv entries, then every argv entry, then every environment
/// entry, each ended by a NUL. (Neither can contain a NUL: execve could not pass it.)
std::string encode_exec(const std::vector<std::string>& argv, const std::vector<std::string>& env);
/// The reverse; false when `data` is not in that form or argv is empty.
bool decode_exec(std::string_view data, std::vector<std::string>& argv,
                 std::vector<std::string>& env);

/// The largest "exec" memfd the launcher reads (execve's own limit is lower).
inline constexpr std::size_t kMaxExecSpec = std::size_t{8} << 20;

}  // namespace hearth::jail
