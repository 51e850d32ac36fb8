/// hearth-echo-server: the ceiling for the HTTP benchmarks. A bare Beast HTTP/1.1 keep-alive
/// server in the same coroutine style as hearth's, without JSON-RPC, auth or handlers: every POST
/// gets the same small JSON-RPC-shaped body. Prints its port on stdout, runs until SIGINT/SIGTERM.
///
///   hearth-echo-server [--address 127.0.0.1] [--port 0] [--threads 1]

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <cstdint>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::string_view kBody = R"({"jsonrpc":"2.0","id":1,"result":{"ok":true}})";
constexpr std::chrono::seconds kIdleTimeout{60};

asio::awaitable<void> serve(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  stream.socket().set_option(tcp::no_delay(true));
  beast::flat_buffer buffer;
  for (;;) {
    http::request<http::string_body> req;
    stream.expires_after(kIdleTimeout);
    auto [read_ec, read_n] = co_await http::async_read(stream, buffer, req, kUseTuple);
    (void)read_n;
    if (read_ec) break;
    bool post = req.method() == http::verb::post;
    http::response<http::string_body> res{post ? http::status::ok : http::status::not_found,
                                          req.version()};
    res.set(http::field::server, "hearth-echo");
    res.set(http::field::content_type, "application/json");
    res.body() = post ? std::string(kBody) : std::string(R"({"error":"not found"})");
    res.content_length(res.body().size());
    res.keep_alive(req.keep_alive());
    auto [write_ec, write_n] = co_await http::async_write(stream, res, kUseTuple);
    (void)write_n;
    if (write_ec || !res.keep_alive()) break;
  }
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
}

asio::awaitable<void> accept_loop(asio::io_context& ioc, tcp::acceptor& acceptor) {
  for (;;) {
    // Each connection on its own strand, so that --threads > 1 spreads them.
    auto [ec, socket] = co_await acceptor.async_accept(asio::make_strand(ioc), kUseTuple);
    if (ec) {
      if (!acceptor.is_open()) break;
      continue;
    }
    asio::co_spawn(socket.get_executor(), serve(tcp::socket(std::move(socket))), asio::detached);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string address_text = "127.0.0.1";
  std::uint16_t port = 0;
  int threads = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string_view flag = argv[i];
    std::string_view value = argv[i + 1];
    bool ok = true;
    if (flag == "--address") {
      address_text = value;
    } else if (flag == "--port") {
      ok = std::from_chars(value.data(), value.data() + value.size(), port).ec == std::errc{};
    } else if (flag == "--threads") {
      ok = std::from_chars(value.data(), value.data() + value.size(), threads).ec == std::errc{} &&
           threads > 0;
    } else {
      ok = false;
    }
    if (!ok) {
      std::cerr << "usage: hearth-echo-server [--address A] [--port P] [--threads N]\n";
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::cerr << "usage: hearth-echo-server [--address A] [--port P] [--threads N]\n";
    return 2;
  }

  asio::io_context ioc{threads};
  beast::error_code ec;
  auto address = asio::ip::make_address(address_text, ec);
  if (ec) {
    std::cerr << "hearth-echo-server: bad address '" << address_text << "'\n";
    return 2;
  }
  tcp::acceptor acceptor(asio::make_strand(ioc));
  tcp::endpoint endpoint{address, port};
  if (acceptor.open(endpoint.protocol(), ec); !ec)
    acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    std::cerr << "hearth-echo-server: cannot listen on " << address_text << ":" << port << ": "
              << ec.message() << "\n";
    return 1;
  }
  auto bound = acceptor.local_endpoint(ec);
  if (ec) {
    std::cerr << "hearth-echo-server: " << ec.message() << "\n";
    return 1;
  }
  std::cout << bound.port() << std::endl;

  asio::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&](beast::error_code, int) {
    // Stopping the context ends every connection at once: fine for a benchmark ceiling.
    ioc.stop();
  });
  asio::co_spawn(acceptor.get_executor(), accept_loop(ioc, acceptor), [](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      std::cerr << "hearth-echo-server: " << ex.what() << "\n";
    }
  });
  std::vector<std::thread> extra;
  for (int i = 1; i < threads; ++i) extra.emplace_back([&ioc] { ioc.run(); });
  ioc.run();
  for (auto& t : extra) t.join();
  return 0;
}
