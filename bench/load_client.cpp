/// hearth-load: an HTTP/1.1 keep-alive load generator for benchmarks.
///
/// N connections each send the same POST back to back for a duration (or until a total request
/// count), check every response (status 200, a "result" member, the expected substring), and the
/// run ends with one JSON line on stdout:
///   {"requests":..,"failures":..,"seconds":..,"rps":..,"p50_us":..,"p99_us":..,"connections":..,
///    "cpu_us":..}
/// where cpu_us is the client's own CPU time (user + system) over the run, so that a benchmark
/// can tell the server's share of a saturated machine from the client's.
/// A failed connection counts as a failure and is re-established, so a flaky server shows up in
/// `failures` rather than stopping the run. Exit status: 0 after a run (failures or not), 2 on
/// bad flags.

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);
/// One request that takes longer than this counts as failed (and its connection is replaced).
constexpr std::chrono::seconds kRequestTimeout{30};
constexpr std::chrono::milliseconds kConnectRetryPause{10};

struct Options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string path = "/rpc";
  std::string token;
  std::string body = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
  std::string expect;
  std::size_t connections = 16;
  double duration = 10;
  std::uint64_t requests = 0;  // 0: run for `duration`
  int threads = 1;
  std::vector<std::pair<std::string, std::string>> headers;  ///< extra request headers
  bool plain = false;  ///< responses are not JSON-RPC (only status and --expect are checked)
};

/// What one connection measured; merged once the run is over.
struct Stats {
  std::uint64_t requests = 0;
  std::uint64_t failures = 0;
  std::vector<std::uint32_t> latencies_us;
  std::string first_failure;
};

void usage() {
  std::cerr << "usage: hearth-load --port P [--host H] [--path /rpc] [--token-file F | --token T]\n"
               "                   [--body JSON] [--expect SUBSTR] [--connections N]\n"
               "                   [--duration S | --requests N] [--threads 1|2]\n"
               "                   [--header 'Name: value']... [--plain]\n";
}

std::optional<std::string> read_token_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string token = buffer.str();
  auto is_space = [](unsigned char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (!token.empty() && is_space(static_cast<unsigned char>(token.back()))) token.pop_back();
  std::size_t first = 0;
  while (first < token.size() && is_space(static_cast<unsigned char>(token[first]))) ++first;
  return token.substr(first);
}

template <class T>
bool parse_number(std::string_view text, T& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && ptr == text.data() + text.size();
}

bool parse_double(const std::string& text, double& out) {
  try {
    std::size_t used = 0;
    out = std::stod(text, &used);
    return used == text.size() && out > 0;
  } catch (const std::exception&) {
    return false;
  }
}

std::optional<Options> parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (flag == "--help" || flag == "-h") return std::nullopt;
    if (flag == "--plain") {  // a plain JSON service: no JSON-RPC "result" member to look for
      o.plain = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::cerr << "hearth-load: " << flag << " needs a value\n";
      return std::nullopt;
    }
    std::string value = argv[++i];
    bool ok = true;
    if (flag == "--host") {
      o.host = value;
    } else if (flag == "--port") {
      ok = parse_number(value, o.port) && o.port != 0;
    } else if (flag == "--path") {
      o.path = value;
    } else if (flag == "--token") {
      o.token = value;
    } else if (flag == "--token-file") {
      auto token = read_token_file(value);
      ok = token.has_value();
      if (token) o.token = *token;
    } else if (flag == "--body") {
      o.body = value;
    } else if (flag == "--expect") {
      o.expect = value;
    } else if (flag == "--header") {
      const auto colon = value.find(':');
      ok = colon != std::string::npos && colon > 0;
      if (ok) {
        std::string v = value.substr(colon + 1);
        while (!v.empty() && v.front() == ' ') v.erase(0, 1);
        o.headers.emplace_back(value.substr(0, colon), v);
      }
    } else if (flag == "--connections") {
      ok = parse_number(value, o.connections) && o.connections > 0;
    } else if (flag == "--duration") {
      ok = parse_double(value, o.duration);
    } else if (flag == "--requests") {
      ok = parse_number(value, o.requests) && o.requests > 0;
    } else if (flag == "--threads") {
      ok = parse_number(value, o.threads) && o.threads >= 1 && o.threads <= 2;
    } else {
      std::cerr << "hearth-load: unknown flag " << flag << "\n";
      return std::nullopt;
    }
    if (!ok) {
      std::cerr << "hearth-load: bad value for " << flag << ": '" << value << "'\n";
      return std::nullopt;
    }
  }
  if (o.port == 0) {
    std::cerr << "hearth-load: --port is required\n";
    return std::nullopt;
  }
  return o;
}

/// Shared between connections: when to stop, and how many requests are still to be sent.
struct Run {
  Clock::time_point deadline;
  std::atomic<std::uint64_t> remaining{0};
  bool counted = false;

  /// Claims the right to send one more request.
  bool take() {
    if (counted) {
      auto left = remaining.load();
      while (left > 0) {
        if (remaining.compare_exchange_weak(left, left - 1)) return true;
      }
      return false;
    }
    return Clock::now() < deadline;
  }
};

void fail(Stats& stats, std::string why) {
  ++stats.failures;
  if (stats.first_failure.empty()) stats.first_failure = std::move(why);
}

asio::awaitable<void> connection(const Options& options, const tcp::endpoint& endpoint, Run& run,
                                 Stats& stats) {
  http::request<http::string_body> req{http::verb::post, options.path, 11};
  req.set(http::field::host, options.host + ":" + std::to_string(options.port));
  if (!options.token.empty()) req.set(http::field::authorization, "Bearer " + options.token);
  req.set(http::field::content_type, "application/json");
  for (const auto& [name, value] : options.headers) req.set(name, value);
  req.body() = options.body;
  req.prepare_payload();
  req.keep_alive(true);

  auto executor = co_await asio::this_coro::executor;
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
  while (run.take()) {
    if (!stream) {
      stream.emplace(executor);
      stream->expires_after(kRequestTimeout);
      auto [ec] = co_await stream->async_connect(endpoint, kUseTuple);
      if (ec) {
        ++stats.requests;
        fail(stats, "connect: " + ec.message());
        stream.reset();
        // A refused connect returns at once: pause so a dead server does not spin the loop.
        asio::steady_timer pause(executor, kConnectRetryPause);
        auto [wait_ec] = co_await pause.async_wait(kUseTuple);
        (void)wait_ec;
        continue;
      }
      stream->socket().set_option(tcp::no_delay(true));
      buffer.clear();
    }
    auto start = Clock::now();
    stream->expires_after(kRequestTimeout);
    auto [write_ec, written] = co_await http::async_write(*stream, req, kUseTuple);
    (void)written;
    http::response<http::string_body> res;
    beast::error_code read_ec;
    if (!write_ec) {
      auto [ec, n] = co_await http::async_read(*stream, buffer, res, kUseTuple);
      (void)n;
      read_ec = ec;
    }
    auto micros =
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
    ++stats.requests;
    stats.latencies_us.push_back(
        static_cast<std::uint32_t>(std::min<std::int64_t>(micros, UINT32_MAX)));
    if (write_ec || read_ec) {
      fail(stats, std::string(write_ec ? "write: " : "read: ") +
                      (write_ec ? write_ec : read_ec).message());
      stream.reset();
      continue;
    }
    const std::string& body = res.body();
    if (res.result() != http::status::ok) {
      fail(stats, "status " + std::to_string(res.result_int()) + ": " + body.substr(0, 200));
    } else if (!options.plain && body.find("\"result\"") == std::string::npos) {
      fail(stats, "no \"result\" in: " + body.substr(0, 200));
    } else if (!options.expect.empty() && body.find(options.expect) == std::string::npos) {
      fail(stats, "expected substring missing in: " + body.substr(0, 200));
    }
    if (!res.keep_alive()) stream.reset();
  }
  if (stream) {
    beast::error_code ec;
    stream->socket().shutdown(tcp::socket::shutdown_both, ec);
  }
}

std::uint32_t percentile(const std::vector<std::uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto index =
      static_cast<std::size_t>(std::lround(p * static_cast<double>(sorted.size() - 1)));
  return sorted[std::min(index, sorted.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  auto options = parse_args(argc, argv);
  if (!options) {
    usage();
    return 2;
  }
  beast::error_code ec;
  auto address =
      asio::ip::make_address(options->host == "localhost" ? "127.0.0.1" : options->host, ec);
  if (ec) {
    std::cerr << "hearth-load: --host must be an IP address (or localhost)\n";
    return 2;
  }
  tcp::endpoint endpoint{address, options->port};

  asio::io_context ioc{options->threads};
  Run run;
  run.counted = options->requests > 0;
  run.remaining = options->requests;
  std::vector<Stats> stats(options->connections);
  auto start = Clock::now();
  run.deadline = start + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(options->duration));
  for (auto& s : stats) {
    asio::co_spawn(asio::make_strand(ioc), connection(*options, endpoint, run, s),
                   [&s](const std::exception_ptr& e) {
                     if (!e) return;
                     try {
                       std::rethrow_exception(e);
                     } catch (const std::exception& ex) {
                       fail(s, std::string("exception: ") + ex.what());
                     }
                   });
  }
  std::vector<std::thread> extra;
  for (int i = 1; i < options->threads; ++i) extra.emplace_back([&ioc] { ioc.run(); });
  ioc.run();
  for (auto& t : extra) t.join();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  std::uint64_t requests = 0;
  std::uint64_t failures = 0;
  std::vector<std::uint32_t> latencies;
  for (auto& s : stats) {
    requests += s.requests;
    failures += s.failures;
    latencies.insert(latencies.end(), s.latencies_us.begin(), s.latencies_us.end());
    if (!s.first_failure.empty() && failures == s.failures) {
      std::cerr << "hearth-load: first failure: " << s.first_failure << "\n";
    }
  }
  std::sort(latencies.begin(), latencies.end());
  rusage self{};
  ::getrusage(RUSAGE_SELF, &self);
  const auto micros = [](const timeval& t) {
    return static_cast<unsigned long long>(t.tv_sec) * 1000000ULL +
           static_cast<unsigned long long>(t.tv_usec);
  };
  std::printf(
      "{\"requests\":%llu,\"failures\":%llu,\"seconds\":%.3f,\"rps\":%.1f,\"p50_us\":%u,\"p99_us\":"
      "%u,"
      "\"connections\":%zu,\"cpu_us\":%llu}\n",
      static_cast<unsigned long long>(requests), static_cast<unsigned long long>(failures), seconds,
      seconds > 0 ? static_cast<double>(requests) / seconds : 0.0, percentile(latencies, 0.50),
      percentile(latencies, 0.99), options->connections,
      micros(self.ru_utime) + micros(self.ru_stime));
  // Failures are data (in the JSON), not a tool error: scripts tabulate them.
  return 0;
}
