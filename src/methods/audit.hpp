#pragma once
/// What the method groups that act on services (lavs/*, view/*) share: the audit record of a
/// call (what it was about, who made it, how long it took, how it ended), the caller as the host
/// sees it, and their common errors.

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <string>

#include "common/result.hpp"
#include "host/host.hpp"
#include "json/json.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::methods {

/// What an audited method names: the service and the endpoint (or the file) it was about, and
/// the view mount it was made for.
struct Target {
  std::string service;
  std::string endpoint;
  std::string mount;
};

using Clock = std::chrono::steady_clock;

/// Records `request` in the audit log with its outcome, then returns the outcome.
boost::asio::awaitable<Result<json::value>> audited(host::Host& host, const rpc::Request& request,
                                                    const Target& target, Clock::time_point start,
                                                    Result<json::value> result);

/// -32602 for an unsubscribe naming a subscription that `where` ("this connection", "this view
/// mount") does not hold.
Error no_subscription(const std::string& id, std::string_view where);

/// Who made `request`, as the host tells mutation listeners.
host::Caller caller_of(const rpc::Request& request, std::string mount = {});

}  // namespace hearth::methods
