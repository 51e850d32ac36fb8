/// hearth-pipe-hop: the floor of handing a request to another process and reading its answer,
/// with nothing else done. A parent writes fixed-size requests into one pipe per peer process;
/// each peer reads them and writes one fixed-size answer per request into a second pipe, as a
/// JavaScript worker answers the daemon (one write a request, one write an answer). Whatever
/// a design that runs handlers in processes of their own does besides, it pays at least this:
/// two writes, two reads and the wake-ups they cause.
///
///   hearth-pipe-hop [--peers P] [--in-flight K] [--seconds S] [--request-bytes N]
///                   [--answer-bytes M]
///
/// P peers (default 2), K requests in flight to each (default 1), for S seconds (default 3);
/// requests of N bytes (default 170, a call frame of bench/seed's `add`), answers of M (default
/// 50). The parent waits in epoll and writes the next request to a peer as each answer arrives.
/// Prints one JSON line:
///   {"peers","in_flight","round_trips","seconds","per_second","cpu_us","p50_us","p99_us"}
/// cpu_us: the CPU time (user + system) of the parent and the peers together, per round trip.
/// p50_us / p99_us: from a request's write to its answer's read.

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int peers = 2;
  int in_flight = 1;
  double seconds = 3;
  std::size_t request_bytes = 170;
  std::size_t answer_bytes = 50;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (i + 1 >= argc) return false;
    const char* value = argv[++i];
    char* end = nullptr;
    const double v = std::strtod(value, &end);
    if (end == value || *end != '\0' || v <= 0 || v > 1e6) return false;
    if (arg == "--peers") {
      o.peers = static_cast<int>(v);
    } else if (arg == "--in-flight") {
      o.in_flight = static_cast<int>(v);
    } else if (arg == "--seconds") {
      o.seconds = v;
    } else if (arg == "--request-bytes") {
      o.request_bytes = static_cast<std::size_t>(v);
    } else if (arg == "--answer-bytes") {
      o.answer_bytes = static_cast<std::size_t>(v);
    } else {
      return false;
    }
  }
  return o.peers >= 1 && o.peers <= 64 && o.in_flight >= 1 && o.request_bytes <= 4096 &&
         o.answer_bytes <= 4096;
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

/// A peer: reads requests until EOF, one answer written for each whole request.
[[noreturn]] void serve(int in, int out, const Options& o) {
  const std::string answer(o.answer_bytes, 'a');
  std::vector<char> buffer(65536);
  std::size_t partial = 0;  // bytes of a request read so far
  for (;;) {
    const ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(0);
    partial += static_cast<std::size_t>(n);
    for (; partial >= o.request_bytes; partial -= o.request_bytes) {
      if (!write_all(out, answer.data(), answer.size())) ::_exit(1);
    }
  }
}

struct Peer {
  pid_t pid = -1;
  int to = -1;    ///< the parent's end of the request pipe
  int from = -1;  ///< the parent's end of the answer pipe
  std::size_t partial = 0;
  std::deque<Clock::time_point> sent;
};

std::uint64_t micros(const timeval& t) {
  return static_cast<std::uint64_t>(t.tv_sec) * 1000000U + static_cast<std::uint64_t>(t.tv_usec);
}

/// The nearest-rank percentile, as hearth-load reports it.
std::uint64_t percentile(const std::vector<std::uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto at = static_cast<std::size_t>(std::lround(p * static_cast<double>(sorted.size() - 1)));
  return sorted[std::min(sorted.size() - 1, at)];
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: hearth-pipe-hop [--peers P] [--in-flight K] [--seconds S] "
                 "[--request-bytes N] [--answer-bytes M]\n");
    return 2;
  }
  std::vector<Peer> peers(static_cast<std::size_t>(o.peers));
  for (auto& p : peers) {
    int requests[2];
    int answers[2];
    if (::pipe2(requests, O_CLOEXEC) != 0 || ::pipe2(answers, O_CLOEXEC) != 0) {
      std::perror("hearth-pipe-hop: pipe2");
      return 1;
    }
    p.pid = ::fork();
    if (p.pid < 0) {
      std::perror("hearth-pipe-hop: fork");
      return 1;
    }
    if (p.pid == 0) {
      // Other peers' parent ends, inherited before this fork, are closed so that their EOF comes.
      for (const auto& q : peers) {
        if (q.to >= 0) ::close(q.to);
        if (q.from >= 0) ::close(q.from);
      }
      ::close(requests[1]);
      ::close(answers[0]);
      serve(requests[0], answers[1], o);
    }
    ::close(requests[0]);
    ::close(answers[1]);
    p.to = requests[1];
    p.from = answers[0];
  }

  const int epoll = ::epoll_create1(EPOLL_CLOEXEC);
  for (std::size_t i = 0; i < peers.size(); ++i) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    if (epoll < 0 || ::epoll_ctl(epoll, EPOLL_CTL_ADD, peers[i].from, &ev) != 0) {
      std::perror("hearth-pipe-hop: epoll");
      return 1;
    }
  }

  const std::string request(o.request_bytes, 'r');
  std::vector<char> buffer(65536);
  std::vector<std::uint32_t> latencies;
  std::uint64_t round_trips = 0;
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  const auto start = Clock::now();
  const auto stop =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  const auto send = [&](Peer& p) {
    p.sent.push_back(Clock::now());
    return write_all(p.to, request.data(), request.size());
  };
  for (auto& p : peers) {
    for (int k = 0; k < o.in_flight; ++k) {
      if (!send(p)) return 1;
    }
  }
  std::size_t waiting = peers.size() * static_cast<std::size_t>(o.in_flight);
  bool sending = true;
  epoll_event events[64];
  while (waiting > 0) {
    const int ready = ::epoll_wait(epoll, events, 64, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      std::perror("hearth-pipe-hop: epoll_wait");
      return 1;
    }
    const auto now = Clock::now();
    if (sending && now >= stop) sending = false;
    for (int e = 0; e < ready; ++e) {
      Peer& p = peers[events[e].data.u64];
      const ssize_t n = ::read(p.from, buffer.data(), buffer.size());
      if (n <= 0) {
        std::fprintf(stderr, "hearth-pipe-hop: a peer ended early\n");
        return 1;
      }
      p.partial += static_cast<std::size_t>(n);
      for (; p.partial >= o.answer_bytes; p.partial -= o.answer_bytes) {
        latencies.push_back(static_cast<std::uint32_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(now - p.sent.front()).count()));
        p.sent.pop_front();
        ++round_trips;
        --waiting;
        if (sending) {
          if (!send(p)) return 1;
          ++waiting;
        }
      }
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  rusage self{};
  ::getrusage(RUSAGE_SELF, &self);
  for (auto& p : peers) ::close(p.to);
  for (auto& p : peers) {
    int status = 0;
    while (::waitpid(p.pid, &status, 0) < 0 && errno == EINTR) {
    }
    ::close(p.from);
  }
  rusage children{};
  ::getrusage(RUSAGE_CHILDREN, &children);
  const std::uint64_t cpu = micros(self.ru_utime) + micros(self.ru_stime) -
                            micros(before.ru_utime) - micros(before.ru_stime) +
                            micros(children.ru_utime) + micros(children.ru_stime);
  std::sort(latencies.begin(), latencies.end());
  std::printf(
      "{\"peers\":%d,\"in_flight\":%d,\"round_trips\":%llu,\"seconds\":%.3f,\"per_second\":%.0f,"
      "\"cpu_us\":%.2f,\"p50_us\":%llu,\"p99_us\":%llu}\n",
      o.peers, o.in_flight, static_cast<unsigned long long>(round_trips), seconds,
      static_cast<double>(round_trips) / seconds,
      round_trips > 0 ? static_cast<double>(cpu) / static_cast<double>(round_trips) : 0.0,
      static_cast<unsigned long long>(percentile(latencies, 0.50)),
      static_cast<unsigned long long>(percentile(latencies, 0.99)));
  return 0;
}
