#include "egress/network_policy.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "egress/host.hpp"

namespace hearth::egress {

namespace {

std::string where(std::string_view host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string_view::npos;
  return (v6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" + std::to_string(port);
}

Error denied(std::string message, std::string_view host, std::uint16_t port) {
  boost::json::object data;
  data["host"] = host;
  data["port"] = port;
  return Error::make(ErrorCode::kPermissionDenied, std::move(message), std::move(data));
}

}  // namespace

Result<NetworkPolicy> NetworkPolicy::parse(const std::vector<std::string>& entries) {
  auto list = AllowList::parse(entries);
  if (!list.ok()) return std::move(list).error();
  return NetworkPolicy(std::move(list).value());
}

boost::json::value NetworkPolicy::to_json() const {
  if (mode_ != Mode::kList) return mode_ == Mode::kAny;
  boost::json::array hosts;
  for (const auto& entry : list_.entries()) hosts.emplace_back(entry);
  return hosts;
}

std::optional<Error> NetworkPolicy::check(std::string_view host, std::uint16_t port,
                                          const std::vector<std::string>& addresses) const {
  switch (mode_) {
    case Mode::kNone:
      return denied("networkAccess does not allow " + where(host, port) +
                        ": the endpoint has no networkAccess permission",
                    host, port);
    case Mode::kAny:
      return std::nullopt;
    case Mode::kList:
      break;
  }
  auto parsed = parse_host(host);
  if (!parsed.ok() || !list_.allows(parsed.value(), port)) {
    return denied("networkAccess does not allow " + where(host, port), host, port);
  }
  // An address the list names is what was asked for; so is `localhost` by name.
  if (parsed->is_address() || is_localhost_name(parsed.value())) return std::nullopt;
  for (const auto& text : addresses) {
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(text, ec);
    if (ec || is_local_address(address)) {
      return denied(std::string(host) + " resolves to a local address (" + text +
                        "); networkAccess must name the address itself to allow it",
                    host, port);
    }
  }
  return std::nullopt;
}

}  // namespace hearth::egress
