#include "handlers/network.hpp"

#include <boost/asio/ip/address.hpp>

#include "egress/host.hpp"

namespace hearth::handlers {

namespace {

std::string where(std::string_view host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string_view::npos;
  return (v6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" + std::to_string(port);
}

Error denied(std::string message, std::string_view host, std::uint16_t port) {
  json::object data;
  data["host"] = host;
  data["port"] = port;
  return Error::make(ErrorCode::kPermissionDenied, std::move(message), std::move(data));
}

}  // namespace

Result<NetworkPolicy> NetworkPolicy::make(const manifest::Permissions& permissions) {
  NetworkPolicy policy;
  if (!permissions.network_access) return policy;
  if (const bool* all = std::get_if<bool>(&*permissions.network_access)) {
    policy.mode_ = *all ? Mode::kAny : Mode::kNone;
    return policy;
  }
  auto list =
      egress::AllowList::parse(std::get<std::vector<std::string>>(*permissions.network_access));
  if (!list.ok()) {
    return Error::make(ErrorCode::kInternalError, "networkAccess: " + list.error().message);
  }
  policy.mode_ = Mode::kList;
  policy.list_ = std::move(list).value();
  return policy;
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
  auto parsed = egress::parse_host(host);
  if (!parsed.ok() || !list_.allows(parsed.value(), port)) {
    return denied("networkAccess does not allow " + where(host, port), host, port);
  }
  // An address the list names is what was asked for; so is `localhost` by name.
  if (parsed->is_address() || egress::is_localhost_name(parsed.value())) return std::nullopt;
  for (const auto& text : addresses) {
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(text, ec);
    if (ec || egress::is_local_address(address)) {
      return denied(std::string(host) + " resolves to a local address (" + text +
                        "); networkAccess must name the address itself to allow it",
                    host, port);
    }
  }
  return std::nullopt;
}

}  // namespace hearth::handlers
