/// hearth-echo-server: the ceiling for the HTTP benchmarks. A bare Beast HTTP/1.1 keep-alive
/// server in the same coroutine style as hearth's, without JSON-RPC, auth or handlers: every POST
/// gets the same small JSON-RPC-shaped body. Prints its port on stdout, runs until SIGINT/SIGTERM.
///
///   hearth-echo-server [--address 127.0.0.1] [--port 0] [--threads 1] [--reply FILE]
///
/// --reply FILE: answer every POST with the headers and body of the HTTP response in FILE (as
/// `curl -si` prints one; its Content-Length, Connection and Date are the server's own), each
/// header set per response as hearth sets its own: the same bytes on the wire as the response
/// that was captured, with none of the work that made it (bench/threads/run.py).

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
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::string_view kBody = R"({"jsonrpc":"2.0","id":1,"result":{"ok":true}})";
constexpr std::chrono::seconds kIdleTimeout{60};

/// The answer to a POST: by default kBody with two headers; with --reply, a captured response.
struct Reply {
  std::vector<std::pair<std::string, std::string>> headers = {{"Server", "hearth-echo"},
                                                              {"Content-Type", "application/json"}};
  std::string body = std::string(kBody);
};
Reply g_reply;

bool load_reply(const std::string& file, Reply& reply) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  auto end = all.find("\r\n\r\n");
  std::size_t skip = 4;
  if (end == std::string::npos) {
    end = all.find("\n\n");
    skip = 2;
  }
  if (end == std::string::npos) return false;
  reply.headers.clear();
  reply.body = all.substr(end + skip);
  std::istringstream lines(all.substr(0, end));
  std::string line;
  std::getline(lines, line);  // the status line
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto colon = line.find(':');
    if (colon == std::string::npos) return false;
    std::string name = line.substr(0, colon);
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    std::string lower = name;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "content-length" || lower == "connection" || lower == "date") continue;
    reply.headers.emplace_back(std::move(name), std::move(value));
  }
  return true;
}

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
    if (post) {
      for (const auto& [name, value] : g_reply.headers) res.set(name, value);
      res.body() = g_reply.body;
    } else {
      res.set(http::field::content_type, "application/json");
      res.body() = R"({"error":"not found"})";
    }
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
    } else if (flag == "--reply") {
      ok = load_reply(std::string(value), g_reply);
    } else if (flag == "--threads") {
      ok = std::from_chars(value.data(), value.data() + value.size(), threads).ec == std::errc{} &&
           threads > 0;
    } else {
      ok = false;
    }
    if (!ok) {
      std::cerr
          << "usage: hearth-echo-server [--address A] [--port P] [--threads N] [--reply FILE]\n";
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::cerr
        << "usage: hearth-echo-server [--address A] [--port P] [--threads N] [--reply FILE]\n";
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
