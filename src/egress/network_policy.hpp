#pragma once
/// NetworkPolicy: an endpoint's `networkAccess`, parsed once when the manifest loads, and the
/// check applied to connections opened on the endpoint's behalf without the egress proxy: by
/// the daemon (http handlers, MCP servers over Streamable HTTP) and by a JS worker's ctx.fetch.
/// Jailed processes are held to the same list by the egress proxy instead (the jail plans it from
/// this policy).
///
/// - absent or false: nothing may be reached; true: anything.
/// - a list (AllowList entries): the host (and port, when an entry gives one) must be listed;
///   checked before any connection. Once the host is resolved, a listed *name* whose addresses
///   lead back to this machine (loopback, link-local...: is_local_address) is refused, unless it
///   is `localhost` by name; a listed address is what was asked for.
/// check()'s refusals are kPermissionDenied (-32001) with data {host, port}.
/// Immutable once made, so one instance may be shared across threads.

#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "egress/allowlist.hpp"

namespace hearth::egress {

class NetworkPolicy {
 public:
  enum class Mode : std::uint8_t { kNone, kAny, kList };

  /// Allows nothing.
  NetworkPolicy() = default;
  /// `networkAccess: true` (anything) or `false` (nothing).
  explicit NetworkPolicy(bool all) : mode_(all ? Mode::kAny : Mode::kNone) {}
  /// A host list.
  explicit NetworkPolicy(AllowList list) : mode_(Mode::kList), list_(std::move(list)) {}

  /// Parses a `networkAccess` host list; the error (kInvalidParams) names the first malformed
  /// entry and its index (AllowList::parse). The one place a host list is parsed.
  static Result<NetworkPolicy> parse(const std::vector<std::string>& entries);

  Mode mode() const { return mode_; }
  /// The list (empty unless mode() is kList).
  const AllowList& list() const { return list_; }

  /// As written in a manifest: true, false, or the list's entries.
  boost::json::value to_json() const;

  /// The check of a connection to `host`:`port`. `addresses`: what `host` resolved to (empty:
  /// not resolved yet; only host and port are checked).
  std::optional<Error> check(std::string_view host, std::uint16_t port,
                             const std::vector<std::string>& addresses) const;

  bool operator==(const NetworkPolicy&) const = default;

 private:
  Mode mode_ = Mode::kNone;
  AllowList list_;
};

}  // namespace hearth::egress
