#pragma once
/// The Streamable HTTP transport (MCP 2025-06-18, "Transports"): every message hearth sends is a
/// POST to the server's URL with `Accept: application/json, text/event-stream`. A request's answer
/// is either one JSON body or an SSE stream carrying the server's notifications and requests
/// and, last, the response. Notifications and responses are acknowledged with 202.
/// - The `Mcp-Session-Id` the server gives at initialize is sent with every later message, and
///   `MCP-Protocol-Version` once negotiated. A 404 to a message carrying the session id means the
///   session expired: the transport closes and the owner starts a new session.
/// - After initialize, a GET stream receives what the server sends on its own (list_changed);
///   405 means the server offers none. A dropped stream is opened again, backing off to 30 s.
/// - A request the session abandons (`notifications/cancelled`) has its POST stream aborted.
/// - An HTTP failure of a request becomes a JSON-RPC error response to it, so only that request
///   fails. close() sends DELETE to end the session on the server.
/// - `allow` is asked before any connection (the endpoint's networkAccess).

#include <boost/asio/any_io_executor.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "httpclient/client.hpp"
#include "mcp/config.hpp"
#include "mcp/transport.hpp"

namespace hearth::mcp {

class HttpTransport final : public Transport {
 public:
  using Allow = std::function<std::optional<Error>(const httpclient::Url& url,
                                                   const std::vector<std::string>& addresses)>;

  HttpTransport(boost::asio::any_io_executor executor, std::shared_ptr<httpclient::Client> client,
                HttpServer server, std::string label, Allow allow,
                std::size_t max_message = std::size_t{16} << 20);
  ~HttpTransport() override;

  Status open(Handlers handlers) override;
  void send(json::value message) override;
  void initialized(std::string_view protocol_version) override;
  void close() override;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace hearth::mcp
