/// hearth-fanout: how long a push takes to reach many WebSocket subscribers.
///
/// Opens N WebSocket connections to a daemon, subscribes each to one subscription endpoint, then
/// for each round sends one mutation over HTTP (a handler that publishes to that endpoint) and
/// waits until every subscriber got its `lavs/data`. Times come from the kernel: every socket has
/// SO_TIMESTAMPNS, so a message's time is when it reached the client's socket, not when this
/// single-threaded client got round to reading it (the client is then not the bottleneck it would
/// be if it timed its own reads). Delivery is measured from the arrival of the mutation's HTTP
/// response ("after the mutation returns"; negative when the push came first) and from the moment
/// the mutation was sent. Prints one JSON line:
///   {"subscribers":..,"rounds":..,"deliveries":..,"missing":..,
///    "after_return_ms":{"p50":..,"p90":..,"p99":..,"max":..},
///    "after_send_ms":{...},"mutation_ms":{...}}
/// Raw sockets and epoll, no Asio: one small translation unit.
///
/// --floor (no daemon): the machine's own floor for the same fan-out. The client listens on
/// loopback, opens N connections to itself, and each round one thread writes one message of the
/// size of a lavs/data push to each of the N accepted sockets, back to back (a write(2) each, as
/// any server must); arrival times are read the same way. No server does less per subscriber.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct Options {
  std::uint16_t port = 0;
  std::string token;
  std::size_t subscribers = 1000;
  int rounds = 10;
  std::string service;
  std::string subscription = "updates";
  std::string mutation = "bump";
  int settle_ms = 1000;  ///< after subscribing, before the first round
  bool floor = false;    ///< measure the machine's floor instead of a daemon
};

[[noreturn]] void die(const std::string& what) {
  std::cerr << "hearth-fanout: " << what
            << (errno != 0 ? std::string(": ") + std::strerror(errno) : "") << "\n";
  std::exit(1);
}

double now_realtime_ms() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

int connect_to(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) die("connect");
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
  return fd;
}

void send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      usleep(100);
      continue;
    }
    if (n <= 0) die("send");
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

/// Reads what is there (blocking for the first bytes when `block`), appending to `buffer`;
/// returns the kernel's arrival time of the first bytes read (ms, CLOCK_REALTIME), or nullopt
/// when nothing was read.
std::optional<double> receive(int fd, std::string& buffer, bool block) {
  char data[65536];
  char control[CMSG_SPACE(sizeof(timespec))];
  iovec iov{data, sizeof data};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(fd, &msg, block ? 0 : MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return std::nullopt;
  if (n <= 0) die("connection closed by the daemon");
  buffer.append(data, static_cast<std::size_t>(n));
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
      timespec ts{};
      std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
      return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
    }
  }
  return now_realtime_ms();
}

/// A masked client text frame.
std::string text_frame(std::string_view payload) {
  std::string f;
  f.push_back(static_cast<char>(0x81));
  const std::uint8_t mask[4] = {0x12, 0x34, 0x56, 0x78};
  if (payload.size() < 126) {
    f.push_back(static_cast<char>(0x80 | payload.size()));
  } else {
    f.push_back(static_cast<char>(0x80 | 126));
    f.push_back(static_cast<char>((payload.size() >> 8) & 0xff));
    f.push_back(static_cast<char>(payload.size() & 0xff));
  }
  f.append(reinterpret_cast<const char*>(mask), 4);
  for (std::size_t i = 0; i < payload.size(); ++i) {
    f.push_back(static_cast<char>(payload[i] ^ static_cast<char>(mask[i % 4])));
  }
  return f;
}

/// Takes complete server frames off the front of `buffer`: text payloads go to `messages`; a
/// ping is answered with a pong.
void take_frames(int fd, std::string& buffer, std::vector<std::string>& messages) {
  while (buffer.size() >= 2) {
    const auto b0 = static_cast<std::uint8_t>(buffer[0]);
    const auto b1 = static_cast<std::uint8_t>(buffer[1]);
    std::size_t header = 2;
    std::uint64_t length = b1 & 0x7f;
    if (length == 126) {
      if (buffer.size() < 4) return;
      length = (static_cast<std::uint8_t>(buffer[2]) << 8) | static_cast<std::uint8_t>(buffer[3]);
      header = 4;
    } else if (length == 127) {
      if (buffer.size() < 10) return;
      length = 0;
      for (int i = 0; i < 8; ++i) length = (length << 8) | static_cast<std::uint8_t>(buffer[2 + i]);
      header = 10;
    }
    if (buffer.size() < header + length) return;
    std::string payload = buffer.substr(header, length);
    buffer.erase(0, header + length);
    const int opcode = b0 & 0x0f;
    if (opcode == 0x1) {
      messages.push_back(std::move(payload));
    } else if (opcode == 0x9) {
      std::string pong = text_frame(payload);
      pong[0] = static_cast<char>(0x8A);
      send_all(fd, pong);
    } else if (opcode == 0x8) {
      die("the daemon closed a WebSocket");
    }
  }
}

struct Subscriber {
  int fd = -1;
  std::string buffer;
  bool subscribed = false;
  bool got = false;  ///< this round's lavs/data arrived
};

struct Stats {
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
};

Stats stats_of(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
  };
  s.p50 = at(0.50);
  s.p90 = at(0.90);
  s.p99 = at(0.99);
  s.max = v.back();
  return s;
}

std::string json_stats(const Stats& s) {
  char out[200];
  std::snprintf(out, sizeof out, R"({"p50":%.3f,"p90":%.3f,"p99":%.3f,"max":%.3f})", s.p50, s.p90,
                s.p99, s.max);
  return out;
}

/// Sends the mutation over HTTP on `fd` (keep-alive) and returns {sent, response arrived}.
std::pair<double, double> mutate(int fd, const Options& o, int round) {
  std::string body =
      R"({"jsonrpc":"2.0","id":)" + std::to_string(round) + R"(,"method":"lavs/call","params":{)";
  if (!o.service.empty()) body += R"("service":")" + o.service + R"(",)";
  body += R"("endpoint":")" + o.mutation + R"(","input":{"round":)" + std::to_string(round) + "}}}";
  std::string request =
      "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(o.port) +
      "\r\nAuthorization: Bearer " + o.token +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  const double sent = now_realtime_ms();
  send_all(fd, request);
  std::string buffer;
  std::optional<double> first;
  while (true) {
    auto t = receive(fd, buffer, /*block=*/true);
    if (!first && t) first = t;
    const auto end = buffer.find("\r\n\r\n");
    if (end == std::string::npos) continue;
    const auto cl = buffer.find("Content-Length: ");
    if (cl == std::string::npos || cl > end) die("mutation response without Content-Length");
    const std::size_t length = std::stoul(buffer.substr(cl + 16));
    if (buffer.size() < end + 4 + length) continue;
    if (buffer.find("\"result\"", end) == std::string::npos) {
      std::cerr << "hearth-fanout: the mutation failed: " << buffer.substr(end + 4) << "\n";
      std::exit(1);
    }
    break;
  }
  return {sent, *first};
}

/// The file limit raised to its hard limit, and beyond it to `want` where allowed (root).
void raise_file_limit(std::size_t want) {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  rlimit wanted = limit;
  wanted.rlim_max = std::max<rlim_t>(limit.rlim_max, want);
  wanted.rlim_cur = wanted.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &wanted) != 0) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

int floor_main(const Options& o) {
  raise_file_limit(o.subscribers + 64);
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener, 4096) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    die("listen");
  }
  const auto port = ntohs(addr.sin_port);
  // Two processes, as a daemon and its subscribers would be (and each within its file limit):
  // the parent sends, the child receives. `go` carries each round's send time to the child,
  // `done` tells the parent the round arrived in full.
  int go[2];
  int done[2];
  if (::pipe(go) != 0 || ::pipe(done) != 0) die("pipe");
  const pid_t child = ::fork();
  if (child < 0) die("fork");
  if (child == 0) {
    std::vector<int> clients(o.subscribers);
    for (auto& fd : clients) {
      fd = connect_to(port);
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    std::vector<double> after_send;
    std::string buffer;
    for (int round = 1; round <= o.rounds; ++round) {
      double sent = 0;
      if (::read(go[0], &sent, sizeof sent) != sizeof sent) die("read");
      std::vector<bool> got(clients.size(), false);
      std::size_t count = 0;
      while (count < clients.size()) {
        for (std::size_t i = 0; i < clients.size(); ++i) {
          if (got[i]) continue;
          buffer.clear();
          if (auto t = receive(clients[i], buffer, false)) {
            got[i] = true;
            ++count;
            after_send.push_back(*t - sent);
          }
        }
      }
      const char ok = 1;
      if (::write(done[1], &ok, 1) != 1) die("write");
    }
    std::cout << R"({"floor":true,"subscribers":)" << o.subscribers << R"(,"rounds":)" << o.rounds
              << R"(,"after_send_ms":)" << json_stats(stats_of(after_send)) << "}" << std::endl;
    std::_Exit(0);
  }
  std::vector<int> servers(o.subscribers);
  for (auto& fd : servers) {
    fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) die("accept");
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  // About a lavs/data push with its WebSocket frame header.
  const std::string message(130, 'x');
  for (int round = 1; round <= o.rounds; ++round) {
    usleep(100000);
    const double sent = now_realtime_ms();
    if (::write(go[1], &sent, sizeof sent) != sizeof sent) die("write");
    for (const int fd : servers) send_all(fd, message);
    char ok = 0;
    if (::read(done[0], &ok, 1) != 1) die("read");
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--port") {
      o.port = static_cast<std::uint16_t>(std::stoi(value));
    } else if (flag == "--token-file") {
      std::ifstream in(value);
      std::getline(in, o.token);
    } else if (flag == "--subscribers") {
      o.subscribers = std::stoul(value);
    } else if (flag == "--rounds") {
      o.rounds = std::stoi(value);
    } else if (flag == "--service") {
      o.service = value;
    } else if (flag == "--subscription") {
      o.subscription = value;
    } else if (flag == "--mutation") {
      o.mutation = value;
    } else if (flag == "--settle-ms") {
      o.settle_ms = std::stoi(value);
    } else if (flag == "--floor") {
      o.floor = value == "1";
    } else {
      std::cerr
          << "usage: hearth-fanout --port P --token-file F [--subscribers N] [--rounds R]\n"
             "  [--service S] [--subscription updates] [--mutation bump] [--settle-ms 1000]\n";
      return 2;
    }
  }
  if (o.floor) return floor_main(o);
  if (o.port == 0 || o.token.empty()) {
    std::cerr << "hearth-fanout: --port and --token-file are required\n";
    return 2;
  }
  raise_file_limit(2 * o.subscribers + 64);

  // Connect and subscribe, a batch at a time (the daemon closes connections that stay silent).
  std::vector<Subscriber> subs(o.subscribers);
  std::string subscribe = R"({"jsonrpc":"2.0","id":1,"method":"lavs/subscribe","params":{)";
  if (!o.service.empty()) subscribe += R"("service":")" + o.service + R"(",)";
  subscribe += R"("endpoint":")" + o.subscription + R"("}})";
  const std::string upgrade = "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(o.port) +
                              "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                              "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                              "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer " +
                              o.token + "\r\n\r\n";
  const std::string subscribe_frame = text_frame(subscribe);
  constexpr std::size_t kBatch = 250;
  for (std::size_t start = 0; start < subs.size(); start += kBatch) {
    const std::size_t end = std::min(subs.size(), start + kBatch);
    for (std::size_t i = start; i < end; ++i) {
      subs[i].fd = connect_to(o.port);
      send_all(subs[i].fd, upgrade);
    }
    for (std::size_t i = start; i < end; ++i) {
      auto& s = subs[i];
      while (s.buffer.find("\r\n\r\n") == std::string::npos) receive(s.fd, s.buffer, true);
      if (s.buffer.rfind("HTTP/1.1 101", 0) != 0) {
        errno = 0;
        die("upgrade refused: " + s.buffer.substr(0, s.buffer.find("\r\n")));
      }
      s.buffer.erase(0, s.buffer.find("\r\n\r\n") + 4);
      send_all(s.fd, subscribe_frame);
      ::fcntl(s.fd, F_SETFL, ::fcntl(s.fd, F_GETFL) | O_NONBLOCK);
    }
  }

  const int ep = epoll_create1(EPOLL_CLOEXEC);
  for (std::size_t i = 0; i < subs.size(); ++i) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, subs[i].fd, &ev) != 0) die("epoll_ctl");
  }
  std::vector<epoll_event> events(4096);
  std::vector<std::string> messages;

  // Reads whatever is ready for up to `wait_ms`; `on_message(i, arrival, text)` per message.
  auto pump = [&](int wait_ms, auto&& on_message) {
    const int n = epoll_wait(ep, events.data(), static_cast<int>(events.size()), wait_ms);
    for (int k = 0; k < n; ++k) {
      const auto i = static_cast<std::size_t>(events[static_cast<std::size_t>(k)].data.u64);
      auto& s = subs[i];
      while (auto t = receive(s.fd, s.buffer, false)) {
        messages.clear();
        take_frames(s.fd, s.buffer, messages);
        for (const auto& m : messages) on_message(i, *t, m);
      }
    }
  };

  std::size_t subscribed = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (subscribed < subs.size()) {
    if (std::chrono::steady_clock::now() > deadline) {
      errno = 0;
      die("only " + std::to_string(subscribed) + " subscriptions were answered");
    }
    pump(100, [&](std::size_t i, double, const std::string& m) {
      if (m.find("\"error\"") != std::string::npos && m.find("\"id\":1") != std::string::npos) {
        errno = 0;
        die("lavs/subscribe failed: " + m);
      }
      if (!subs[i].subscribed && m.find("\"subscriptionId\"") != std::string::npos &&
          m.find("\"result\"") != std::string::npos) {
        subs[i].subscribed = true;
        ++subscribed;
      }
    });
  }
  // Let snapshots and anything else in flight arrive before measuring.
  const auto settle = std::chrono::steady_clock::now() + std::chrono::milliseconds(o.settle_ms);
  while (std::chrono::steady_clock::now() < settle) pump(50, [](std::size_t, double, auto&) {});

  const int http = connect_to(o.port);
  std::vector<double> after_return;
  std::vector<double> after_send;
  std::vector<double> mutation;
  std::size_t missing = 0;
  for (int round = 1; round <= o.rounds; ++round) {
    for (auto& s : subs) s.got = false;
    const auto [sent, returned] = mutate(http, o, round);
    mutation.push_back(returned - sent);
    std::size_t got = 0;
    const auto round_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (got < subs.size() && std::chrono::steady_clock::now() < round_deadline) {
      pump(100,
           [&, sent = sent, returned = returned](std::size_t i, double t, const std::string& m) {
             if (subs[i].got || m.find("\"lavs/data\"") == std::string::npos) return;
             subs[i].got = true;
             ++got;
             after_return.push_back(t - returned);
             after_send.push_back(t - sent);
           });
    }
    missing += subs.size() - got;
    // A pause between rounds, reading stragglers.
    const auto pause = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    while (std::chrono::steady_clock::now() < pause) pump(20, [](std::size_t, double, auto&) {});
  }
  std::cout << R"({"subscribers":)" << subs.size() << R"(,"rounds":)" << o.rounds
            << R"(,"deliveries":)" << after_return.size() << R"(,"missing":)" << missing
            << R"(,"after_return_ms":)" << json_stats(stats_of(after_return))
            << R"(,"after_send_ms":)" << json_stats(stats_of(after_send)) << R"(,"mutation_ms":)"
            << json_stats(stats_of(mutation)) << "}\n";
  for (auto& s : subs) ::close(s.fd);
  ::close(http);
  return missing == 0 ? 0 : 1;
}
