// The JSON-RPC dispatcher on any message text: a request, a batch or garbage. Every answer must
// be JSON whose ids are those of the requests.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdlib>
#include <string_view>

#include "json/json.hpp"
#include "rpc/dispatcher.hpp"
#include "rpc/session.hpp"

namespace asio = boost::asio;
using hearth::json::value;

namespace {
asio::awaitable<hearth::Result<value>> echo(const hearth::rpc::Request& r) {
  co_return r.params;
}
asio::awaitable<hearth::Result<value>> fail(const hearth::rpc::Request&) {
  co_return hearth::Error::make(hearth::ErrorCode::kHandlerError, "failed");
}
asio::awaitable<void> run(const hearth::rpc::Dispatcher& dispatcher, const std::string& text,
                          std::optional<std::string>& reply, bool& done) {
  auto session = std::make_shared<hearth::rpc::Session>("fuzz", nullptr);
  reply = co_await dispatcher.handle(text, session);
  done = true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const hearth::rpc::Dispatcher* dispatcher = [] {
    auto* d = new hearth::rpc::Dispatcher();
    d->add("echo", echo);
    d->add("fail", fail);
    return d;
  }();
  const std::string text(reinterpret_cast<const char*>(data), size);
  asio::io_context ioc;
  std::optional<std::string> reply;
  bool done = false;
  asio::co_spawn(ioc, run(*dispatcher, text, reply, done), asio::detached);
  ioc.run();
  if (!done) std::abort();
  std::vector<hearth::json::RawNumber> raw;
  if (reply && !hearth::json::parse_message(*reply, {}, raw).ok()) std::abort();
  return 0;
}
