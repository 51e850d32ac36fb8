// Commands that talk to a running daemon, found through STATE_DIR/daemon.json (written by
// `hearth serve` once it is ready) and its token file: `hearth open` and `hearth call --daemon`.
#include "cli/remote.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/common.hpp"
#include "common/ascii.hpp"
#include "daemon/instance.hpp"

namespace hearth::cli {
namespace fs = std::filesystem;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

extern "C" char** environ;

namespace {

std::optional<std::string> read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

Result<Daemon> find_daemon(const fs::path& state_dir_option) {
  const fs::path state_dir = state_dir_option.empty() ? default_state_dir() : state_dir_option;
  const fs::path file = state_dir / "daemon.json";
  const auto not_running = [&](const std::string& why) {
    return Error::make(ErrorCode::kInternalError,
                       "no running hearth daemon for state dir " + state_dir.string() + ": " + why +
                           " (start one with `hearth serve`, or pass --state-dir)");
  };
  // Whether a daemon serves is whether it holds the folder's lock: a daemon.json left by a
  // killed daemon says nothing.
  const auto instance = daemon::find_instance(state_dir);
  if (!instance.running) return not_running("none holds " + (state_dir / "daemon.lock").string());
  if (!instance.document) {
    return not_running("the daemon (pid " + std::to_string(instance.pid) + ") is still starting; " +
                       file.string() + " is written once it is ready");
  }
  const auto& obj = *instance.document;
  Daemon daemon;
  const auto string_of = [&obj](std::string_view key) {
    const auto* v = obj.if_contains(key);
    return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  daemon.url = string_of("url");
  const auto* port = obj.if_contains("port");
  if (daemon.url.empty() || port == nullptr || !port->is_int64()) {
    return not_running(file.string() + " is incomplete");
  }
  daemon.port = static_cast<std::uint16_t>(port->get_int64());
  auto token = read_text(string_of("tokenFile"));
  if (!token) return not_running("its token file cannot be read");
  daemon.token = std::string(ascii::trim(*token, " \t\r\n"));
  // The host part of the URL ("http://127.0.0.1:5555"): what the daemon checks Host against.
  const std::size_t scheme = daemon.url.find("://");
  daemon.host = scheme == std::string::npos ? daemon.url : daemon.url.substr(scheme + 3);
  const std::size_t colon = daemon.host.rfind(':');
  daemon.address = colon == std::string::npos ? daemon.host : daemon.host.substr(0, colon);
  if (daemon.address.size() > 1 && daemon.address.front() == '[') {
    daemon.address = daemon.address.substr(1, daemon.address.size() - 2);
  }
  return daemon;
}

Result<std::string> post_rpc(const Daemon& daemon, const std::string& body) {
  try {
    asio::io_context ioc;
    asio::ip::tcp::resolver resolver(ioc);
    beast::tcp_stream stream(ioc);
    stream.expires_after(std::chrono::seconds(600));
    stream.connect(resolver.resolve(daemon.address, std::to_string(daemon.port)));
    http::request<http::string_body> req(http::verb::post, "/rpc", 11);
    req.set(http::field::host, daemon.host);
    req.set(http::field::authorization, "Bearer " + daemon.token);
    req.set(http::field::content_type, "application/json");
    req.set("X-Hearth-Client", "hearth-cli");
    req.body() = body;
    req.prepare_payload();
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(std::size_t{64} << 20);
    http::read(stream, buffer, parser);
    auto res = parser.release();
    beast::error_code ec;
    stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    if (res.result() != http::status::ok) {
      return Error::make(
          ErrorCode::kInternalError,
          "the daemon answered HTTP " + std::to_string(res.result_int()) + ": " + res.body());
    }
    return std::move(res.body());
  } catch (const std::exception& e) {
    return Error::make(ErrorCode::kInternalError,
                       "cannot reach the daemon at " + daemon.url + ": " + e.what());
  }
}

bool launch_browser(const std::string& url) {
  pid_t pid = 0;
  std::string program = "xdg-open";
  std::string arg = url;
  std::vector<char*> argv{program.data(), arg.data(), nullptr};
  if (posix_spawnp(&pid, program.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    return false;
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int open_page(const fs::path& state_dir, bool browser) {
  auto daemon = find_daemon(state_dir);
  if (!daemon.ok()) {
    std::cerr << "hearth open: " << daemon.error().message << std::endl;
    return 1;
  }
  const std::string url = daemon.value().url + "/ui/#token=" + daemon.value().token;
  std::cout << url << std::endl;
  if (!browser) return 0;
  if (!launch_browser(url)) {
    std::cerr << "hearth open: xdg-open could not open a browser: open the URL above in one"
              << std::endl;
    return 1;
  }
  return 0;
}

}  // namespace hearth::cli
