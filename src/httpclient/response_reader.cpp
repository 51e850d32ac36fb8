#include "httpclient/response_reader.hpp"

#include <array>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>

#include "common/ascii.hpp"

namespace hearth::httpclient {

namespace http = boost::beast::http;

namespace {

/// Size of the pieces a body is delivered in, at most.
constexpr std::size_t kPiece = std::size_t{16} * 1024;

}  // namespace

struct ResponseReader::Impl {
  std::optional<http::response_parser<http::buffer_body>> parser;
  std::array<char, kPiece> piece{};

  void start(const Limits& limits) {
    parser.emplace();
    parser->header_limit(static_cast<std::uint32_t>(kHeaderLimit));
    if (limits.max_body) {
      parser->body_limit(*limits.max_body);
    } else {
      parser->body_limit(boost::none);
    }
    if (limits.head_request) parser->skip(true);
  }
};

ResponseReader::ResponseReader(Limits limits) : limits_(limits), impl_(std::make_unique<Impl>()) {
  impl_->start(limits_);
}

ResponseReader::~ResponseReader() = default;

Error ResponseReader::fail(std::string message) {
  failed_ = true;
  return Error::make(ErrorCode::kHandlerError, std::move(message));
}

Error ResponseReader::body_limit() {
  too_large_ = true;
  return fail("response larger than " + std::to_string(limits_.max_body.value_or(0)) + " bytes");
}

Result<std::size_t> ResponseReader::put(std::string_view data, const BodySink& sink) {
  if (failed_) return fail("the response could not be read");
  boost::beast::error_code ec;
  std::size_t used = 0;

  if (!head_done_) {
    for (;;) {
      auto& p = *impl_->parser;
      const std::size_t n =
          p.put(boost::asio::const_buffer(data.data() + used, data.size() - used), ec);
      used += n;
      if (ec == http::error::need_more) return used;
      if (ec == http::error::header_limit) {
        return fail("the response head is larger than " + std::to_string(kHeaderLimit) + " bytes");
      }
      if (ec == http::error::body_limit) return body_limit();  // by its Content-Length
      if (ec) return fail("malformed response: " + ec.message());
      if (!p.is_header_done()) {
        if (n == 0) return used;
        continue;
      }
      const int code = static_cast<int>(p.get().result_int());
      if (code >= 200 || code == 101) break;
      if (++interim_ > kMaxInterim) return fail("too many interim (1xx) responses");
      impl_->start(limits_);  // the real response follows
    }
    head_done_ = true;
    return used;  // the caller looks at the head before the body flows
  }

  auto& p = *impl_->parser;
  while (!p.is_done() && !stopped_) {
    auto& body = p.get().body();
    body.data = impl_->piece.data();
    body.size = impl_->piece.size();
    const std::size_t n =
        p.put(boost::asio::const_buffer(data.data() + used, data.size() - used), ec);
    used += n;
    const std::size_t got = impl_->piece.size() - body.size;
    if (got > 0 && !sink(std::string_view(impl_->piece.data(), got))) stopped_ = true;
    if (ec == http::error::need_buffer) {
      ec = {};
    } else if (ec == http::error::need_more) {
      return used;
    } else if (ec == http::error::body_limit) {
      return body_limit();
    } else if (ec) {
      return fail("malformed response body: " + ec.message());
    }
    if (n == 0 && got == 0) return used;  // nothing more to do with these bytes
  }
  return used;
}

Status ResponseReader::close() {
  if (failed_) return fail("the response could not be read");
  auto& p = *impl_->parser;
  if (p.is_done()) return {};
  if (!p.got_some()) {  // nothing of this response (Beast's put_eof requires some)
    return fail(interim_ == 0 ? "the connection closed before a response"
                              : "the connection closed in the middle of the response");
  }
  boost::beast::error_code ec;
  p.put_eof(ec);
  if (ec || !p.is_done()) return fail("the connection closed in the middle of the response");
  return {};
}

bool ResponseReader::done() const {
  return head_done_ && impl_->parser->is_done();
}

int ResponseReader::status() const {
  return static_cast<int>(impl_->parser->get().result_int());
}

std::string ResponseReader::reason() const {
  return std::string(impl_->parser->get().reason());
}

std::vector<std::pair<std::string, std::string>> ResponseReader::headers() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& field : impl_->parser->get()) {
    out.emplace_back(ascii::lower(field.name_string()), std::string(field.value()));
  }
  return out;
}

bool ResponseReader::keep_alive() const {
  return impl_->parser->keep_alive();
}

}  // namespace hearth::httpclient
