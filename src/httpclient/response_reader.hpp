#pragma once
// Reads one HTTP/1.1 response from bytes as they arrive, without doing any I/O: the part of the
// HTTP client that parses what a server sends, kept apart from the sockets so that it can be
// tested and fuzzed on its own (fuzz/http_response_fuzz.cpp).

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"

namespace hearth::httpclient {

class ResponseReader {
 public:
  struct Limits {
    /// Largest body accepted; nullopt for none (a streamed body, bounded by its consumer).
    std::optional<std::size_t> max_body;
    /// The response to a HEAD request: a head only, whatever its Content-Length says.
    bool head_request = false;
  };
  /// Receives each piece of the body in order; returning false stops the reading.
  using BodySink = std::function<bool(std::string_view)>;

  /// Response heads beyond this are refused (a sane server sends a few KiB).
  static constexpr std::size_t kHeaderLimit = std::size_t{64} * 1024;
  /// Interim (1xx) responses skipped before the real one; more is a misbehaving server.
  static constexpr int kMaxInterim = 8;

  explicit ResponseReader(Limits limits);
  ~ResponseReader();
  ResponseReader(const ResponseReader&) = delete;
  ResponseReader& operator=(const ResponseReader&) = delete;

  /// Parses from the front of `data` and returns how many bytes it used; the caller keeps the
  /// rest and gives it again with more bytes after it. Until head_done() only the head is read
  /// (interim 1xx responses are skipped) and `sink` is not called, so the caller can look at the
  /// head before choosing where the body goes. An error is final.
  Result<std::size_t> put(std::string_view data, const BodySink& sink);

  /// The server closed the connection: ends a body delimited by the close, else an error.
  Status close();

  bool head_done() const { return head_done_; }
  bool done() const;
  /// The sink returned false.
  bool stopped() const { return stopped_; }
  /// The error was the body limit.
  bool too_large() const { return too_large_; }

  int status() const;          ///< once head_done()
  std::string reason() const;  ///< once head_done()
  /// The head's fields in order, names in lower case (once head_done()).
  std::vector<std::pair<std::string, std::string>> headers() const;
  /// The connection may carry another exchange after this response (once done()).
  bool keep_alive() const;

 private:
  struct Impl;
  Error fail(std::string message);
  Error body_limit();

  Limits limits_;
  std::unique_ptr<Impl> impl_;
  int interim_ = 0;
  bool head_done_ = false;
  bool stopped_ = false;
  bool too_large_ = false;
  bool failed_ = false;
};

}  // namespace hearth::httpclient
