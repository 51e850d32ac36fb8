#pragma once
/// Pipes and socket pairs as owned descriptors, with failures as errors (request-path code).
/// The jail launcher, which links no other hearth code, uses open_pipe/open_socket_pair of
/// fd.hpp instead.

#include <cstring>
#include <string>

#include "common/fd.hpp"
#include "common/result.hpp"

namespace hearth {

/// A pipe: [0] reads, [1] writes. Both close-on-exec unless `flags` says otherwise.
inline Result<FdPair> make_pipe(int flags = O_CLOEXEC) {
  FdPair ends;
  if (int error = open_pipe(ends, flags); error != 0) {
    return Error::make(ErrorCode::kInternalError, std::string("pipe: ") + std::strerror(error));
  }
  return ends;
}

/// A connected pair of AF_UNIX sockets of `type` (e.g. SOCK_SEQPACKET | SOCK_CLOEXEC).
inline Result<FdPair> make_socket_pair(int type) {
  FdPair ends;
  if (int error = open_socket_pair(ends, type); error != 0) {
    return Error::make(ErrorCode::kInternalError,
                       std::string("socketpair: ") + std::strerror(error));
  }
  return ends;
}

}  // namespace hearth
