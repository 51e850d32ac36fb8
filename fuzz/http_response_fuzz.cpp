// The HTTP client's response reader (httpclient/ResponseReader), fed what a hostile server could
// send, in pieces of varying size. The first byte chooses the limits; the outcome (an error, or
// the status and body) must not depend on where the pieces split, and a body limit must hold.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "httpclient/response_reader.hpp"

namespace {

struct Outcome {
  bool ok = true;
  bool done = false;
  int status = 0;
  std::string body;
  bool operator==(const Outcome&) const = default;
};

Outcome failed() {
  Outcome out;
  out.ok = false;
  return out;
}

Outcome run(std::string_view wire, std::size_t step, const hearth::httpclient::ResponseReader::Limits& limits) {
  hearth::httpclient::ResponseReader reader(limits);
  Outcome out;
  std::string pending;
  const auto sink = [&](std::string_view piece) {
    out.body.append(piece);
    return true;
  };
  for (std::size_t at = 0; at < wire.size() && !reader.done(); at += step) {
    pending.append(wire.substr(at, step));
    for (;;) {
      auto used = reader.put(pending, sink);
      if (!used.ok()) return failed();
      if (*used > pending.size()) std::abort();
      pending.erase(0, *used);
      if (*used == 0 || pending.empty() || reader.done()) break;
    }
  }
  if (!reader.done() && !reader.close().ok()) return failed();
  out.done = reader.done();
  if (reader.head_done()) {
    out.status = reader.status();
    (void)reader.headers();
    (void)reader.keep_alive();
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  hearth::httpclient::ResponseReader::Limits limits;
  limits.head_request = (data[0] & 1) != 0;
  if ((data[0] & 2) != 0) limits.max_body = data[0] >> 2;
  const std::string_view wire(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Outcome whole = run(wire, wire.size() + 1, limits);
  const Outcome pieces = run(wire, 1 + (size % 7), limits);
  if (!(whole == pieces)) std::abort();
  if (whole.ok && limits.max_body && whole.body.size() > *limits.max_body) std::abort();
  if (whole.ok && !whole.done) std::abort();
  if (whole.ok && (whole.status < 100 || whole.status > 999)) std::abort();
  return 0;
}
