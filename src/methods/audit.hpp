#pragma once
/// The audit record of a method call, shared by the method groups that act on services
/// (lavs/*, view/*): what the call was about, who made it, how long it took, how it ended.

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

/// Who made `request`, as the host tells mutation listeners.
host::Caller caller_of(const rpc::Request& request, std::string mount = {});

}  // namespace hearth::methods
