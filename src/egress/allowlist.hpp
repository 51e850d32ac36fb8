#pragma once
/// AllowList: the set of destinations a manifest's `networkAccess` list permits.
///
/// Entry forms (case-insensitive; a trailing dot on a name is ignored):
///   "api.example.com"          that exact name, any port
///   "api.example.com:443"      that exact name, that port only
///   "*.example.com[:port]"     any name below example.com (a.example.com, a.b.example.com), not
///                              example.com itself; the suffix needs at least two labels, so
///                              "*.com" is refused
///   "203.0.113.7[:port]"       that IPv4 address (strict dotted quad)
///   "[2001:db8::1][:port]"     that IPv6 address (brackets required in an entry)
/// A malformed entry makes parse() fail with ErrorCode::kInvalidParams naming the entry and its
/// index. Matching is purely textual on canonical forms (see host.hpp): a name never matches
/// an address entry or the reverse, and nothing is resolved. An empty (or default) list allows
/// nothing. Immutable after parse(), so one instance may be shared across threads.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "egress/host.hpp"

namespace hearth::egress {

class AllowList {
 public:
  /// Allows nothing.
  AllowList() = default;

  /// Parses `networkAccess` entries; the error names the first malformed one.
  static Result<AllowList> parse(const std::vector<std::string>& entries);

  /// True when some entry permits `host` (a name, an IPv4 literal, an IPv6 literal with or
  /// without brackets) on `port`. A host that does not parse is not allowed.
  bool allows(std::string_view host, std::uint16_t port) const;
  /// Same, for a host already in canonical form.
  bool allows(const Host& host, std::uint16_t port) const;

  bool empty() const { return rules_.empty(); }
  std::size_t size() const { return rules_.size(); }
  /// The entries as written (a manifest's `networkAccess` list, the JS worker's init frame).
  const std::vector<std::string>& entries() const { return entries_; }

  /// Same entries as written.
  bool operator==(const AllowList& other) const { return entries_ == other.entries_; }

 private:
  struct Rule {
    enum class Kind : std::uint8_t { kExact, kSuffix };
    Kind kind = Kind::kExact;
    Host host;               ///< kSuffix: the name below which hosts match, e.g. "example.com"
    std::uint16_t port = 0;  ///< 0: any port
  };
  std::vector<Rule> rules_;
  std::vector<std::string> entries_;
};

}  // namespace hearth::egress
