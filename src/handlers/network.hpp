#pragma once
/// NetworkPolicy: an endpoint's `networkAccess` as the daemon applies it to connections it opens
/// on the endpoint's behalf (http handlers, MCP servers over Streamable HTTP). Jailed processes
/// are held to the same list by the egress proxy instead.
///
/// - absent or false: nothing may be reached; true: anything.
/// - a list: the host (and port, when an entry gives one) must be listed; checked before any
///   connection. Once the host is resolved, a listed *name* whose addresses lead back to this
///   machine (loopback, link-local...: egress::is_local_address) is refused, unless it is
///   `localhost` by name; a listed address is what was asked for.
/// Refusals are kPermissionDenied (-32001) with data {host, port}.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "egress/allowlist.hpp"
#include "manifest/manifest.hpp"

namespace hearth::handlers {

class NetworkPolicy {
 public:
  /// kInternalError for a list the manifest loader should have refused.
  static Result<NetworkPolicy> make(const manifest::Permissions& permissions);

  /// `addresses`: what `host` resolved to (empty: not resolved yet; only host and port are
  /// checked).
  std::optional<Error> check(std::string_view host, std::uint16_t port,
                             const std::vector<std::string>& addresses) const;

 private:
  enum class Mode { kNone, kAny, kList };
  Mode mode_ = Mode::kNone;
  egress::AllowList list_;
};

}  // namespace hearth::handlers
