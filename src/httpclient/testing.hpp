#pragma once
/// A scripted HTTP/1.1 server for the tests of the HTTP client and of http handlers: plain
/// blocking sockets on 127.0.0.1, a thread per connection, optional TLS (OpenSSL), and a record of
/// what it saw. Written without Beast so that the client is checked against independent code.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/ascii.hpp"
#include "common/fd.hpp"

namespace hearth::httpclient::testing {

using namespace std::chrono_literals;

using ascii::lower;

struct SeenRequest {
  int connection = 0;  ///< 1-based number of the connection it came on
  int index = 0;       ///< 0-based position on that connection
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;  ///< names lower-cased
  std::string body;

  /// The first value of a header ("" when absent) and whether it is present.
  std::string header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
      if (k == lower(name)) return v;
    }
    return {};
  }
  bool has(std::string_view name) const {
    for (const auto& [k, v] : headers) {
      if (k == lower(name)) return true;
    }
    return false;
  }
};

/// What the server does with one request.
struct Reply {
  std::string bytes;  ///< sent first (usually a whole response)
  /// Then each piece after its delay (streaming, slow servers).
  std::vector<std::pair<std::chrono::milliseconds, std::string>> later;
  bool close = false;  ///< close the connection afterwards
  bool hang = false;   ///< afterwards, keep the connection open and silent until the server stops
};

/// A complete response with a Content-Length body.
inline std::string response(int status, std::string_view body,
                            const std::vector<std::pair<std::string, std::string>>& headers = {}) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " Status\r\n";
  bool has_type = false;
  for (const auto& [name, value] : headers) {
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
    if (lower(name) == "content-type") has_type = true;
  }
  if (!has_type) out += "Content-Type: text/plain\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  out += body;
  return out;
}

inline Reply reply(int status, std::string_view body,
                   const std::vector<std::pair<std::string, std::string>>& headers = {}) {
  return Reply{response(status, body, headers), {}, false, false};
}

/// One chunk of a chunked body.
inline std::string chunk(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return std::string(size) + std::string(data) + "\r\n";
}

class Server {
 public:
  using Handler = std::function<Reply(const SeenRequest&)>;

  /// Listens on 127.0.0.1 (a free port); `tls`: serve https with this context (taken over).
  explicit Server(Handler handler, SSL_CTX* tls = nullptr)
      : handler_(std::move(handler)), tls_(tls) {
    listen_fd_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    int one = 1;
    ::setsockopt(listen_fd_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(::bind(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(listen_fd_.get(), 64), 0);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    accept_thread_ = std::thread([this] { accept_loop(); });
  }

  ~Server() {
    stop();
    if (tls_ != nullptr) SSL_CTX_free(tls_);
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  std::uint16_t port() const { return port_; }
  /// "http(s)://127.0.0.1:<port>" + path.
  std::string url(std::string_view path = "/") const { return url("127.0.0.1", path); }
  std::string url(std::string_view host, std::string_view path) const {
    return std::string(tls_ != nullptr ? "https://" : "http://") + std::string(host) + ":" +
           std::to_string(port_) + std::string(path);
  }

  int connections() const { return connections_.load(); }
  /// Connections whose peer closed them (the server read end of file).
  int closed_by_peer() const { return closed_by_peer_.load(); }
  /// TLS handshakes that failed (the client refused the certificate, for instance).
  int tls_failures() const { return tls_failures_.load(); }
  std::vector<SeenRequest> requests() const {
    std::lock_guard lock(mutex_);
    return seen_;
  }

  /// Waits until `predicate` holds (polling), at most `limit`.
  static bool eventually(const std::function<bool()>& predicate,
                         std::chrono::milliseconds limit = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!predicate()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(5ms);
    }
    return true;
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    wake_.notify_all();
    ::shutdown(listen_fd_.get(), SHUT_RDWR);
    if (accept_thread_.joinable()) accept_thread_.join();
    listen_fd_.reset();
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(mutex_);
      for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
      threads.swap(threads_);
    }
    for (auto& t : threads) t.join();
  }

 private:
  struct Conn {
    int fd = -1;
    SSL* ssl = nullptr;
    std::string buffer;
  };

  void accept_loop() {
    while (true) {
      Fd fd(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!fd) {
        std::lock_guard lock(mutex_);
        if (stopping_) return;
        continue;
      }
      int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      const int number = ++connections_;
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      open_fds_.push_back(fd.get());
      threads_.emplace_back(
          [this, fd = std::move(fd), number]() mutable { serve(std::move(fd), number); });
    }
  }

  /// Sleeps unless the server stops first; false when it stopped.
  bool pause(std::chrono::milliseconds d) {
    std::unique_lock lock(mutex_);
    return !wake_.wait_for(lock, d, [this] { return stopping_; });
  }

  long receive(Conn& c, char* data, std::size_t size) {
    if (c.ssl != nullptr) {
      const int n = SSL_read(c.ssl, data, static_cast<int>(size));
      return n > 0 ? n : (SSL_get_error(c.ssl, n) == SSL_ERROR_ZERO_RETURN ? 0 : -1);
    }
    return ::recv(c.fd, data, size, 0);
  }

  bool send_all(Conn& c, std::string_view data) {
    while (!data.empty()) {
      long n = 0;
      if (c.ssl != nullptr) {
        n = SSL_write(c.ssl, data.data(), static_cast<int>(data.size()));
      } else {
        n = ::send(c.fd, data.data(), data.size(), MSG_NOSIGNAL);
      }
      if (n <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  /// Reads until `c.buffer` holds `n` bytes; false at end of file or error.
  bool fill(Conn& c, std::size_t n, bool& eof) {
    char data[16 * 1024];
    while (c.buffer.size() < n) {
      const long got = receive(c, data, sizeof data);
      if (got <= 0) {
        eof = got == 0;
        return false;
      }
      c.buffer.append(data, static_cast<std::size_t>(got));
    }
    return true;
  }

  /// Reads one request; false when the connection ended first.
  bool read_request(Conn& c, SeenRequest& out, bool& eof) {
    char data[16 * 1024];
    std::size_t end;
    while ((end = c.buffer.find("\r\n\r\n")) == std::string::npos) {
      const long got = receive(c, data, sizeof data);
      if (got <= 0) {
        eof = got == 0 && c.buffer.empty();
        return false;
      }
      c.buffer.append(data, static_cast<std::size_t>(got));
    }
    const std::string head = c.buffer.substr(0, end);
    c.buffer.erase(0, end + 4);
    std::size_t line_end = head.find("\r\n");
    const std::string request_line = head.substr(0, line_end);
    const auto sp1 = request_line.find(' ');
    const auto sp2 = request_line.find(' ', sp1 + 1);
    out.method = request_line.substr(0, sp1);
    out.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
    std::size_t length = 0;
    while (line_end != std::string::npos) {
      const auto start = line_end + 2;
      line_end = head.find("\r\n", start);
      const std::string line =
          head.substr(start, line_end == std::string::npos ? std::string::npos : line_end - start);
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      out.headers.emplace_back(lower(line.substr(0, colon)), value);
      if (lower(line.substr(0, colon)) == "content-length") length = std::stoul(value);
    }
    if (!fill(c, length, eof)) return false;
    out.body = c.buffer.substr(0, length);
    c.buffer.erase(0, length);
    return true;
  }

  void serve(Fd fd, int number) {
    Conn c;
    c.fd = fd.get();
    bool ok = true;
    if (tls_ != nullptr) {
      c.ssl = SSL_new(tls_);
      SSL_set_fd(c.ssl, fd.get());
      if (SSL_accept(c.ssl) != 1) {
        ++tls_failures_;
        ERR_clear_error();
        ok = false;
      }
    }
    for (int index = 0; ok; ++index) {
      SeenRequest request;
      request.connection = number;
      request.index = index;
      bool eof = false;
      if (!read_request(c, request, eof)) {
        if (eof) ++closed_by_peer_;
        break;
      }
      {
        std::lock_guard lock(mutex_);
        seen_.push_back(request);
      }
      const Reply r = handler_(request);
      if (!r.bytes.empty() && !send_all(c, r.bytes)) break;
      for (const auto& [delay, bytes] : r.later) {
        if (!pause(delay) || !send_all(c, bytes)) {
          ok = false;
          break;
        }
      }
      if (r.hang) {
        pause(std::chrono::hours(1));
        break;
      }
      if (r.close) break;
    }
    if (c.ssl != nullptr) SSL_free(c.ssl);
    {
      std::lock_guard lock(mutex_);
      std::erase(open_fds_, fd.get());
      fd.reset();  // under the lock: stop() must not shut down a reused number
    }
  }

  Handler handler_;
  SSL_CTX* tls_ = nullptr;
  Fd listen_fd_;
  std::uint16_t port_ = 0;
  std::thread accept_thread_;
  std::atomic<int> connections_{0};
  std::atomic<int> closed_by_peer_{0};
  std::atomic<int> tls_failures_{0};

  mutable std::mutex mutex_;  ///< guards everything below
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<int> open_fds_;  ///< borrowed: each is owned by its serve()
  std::vector<std::thread> threads_;
  std::vector<SeenRequest> seen_;
};

/// A server TLS context from PEM files (certificate chain, key).
inline SSL_CTX* server_tls(const std::string& cert_file, const std::string& key_file) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  EXPECT_EQ(SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()), 1) << cert_file;
  EXPECT_EQ(SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM), 1) << key_file;
  return ctx;
}

}  // namespace hearth::httpclient::testing
