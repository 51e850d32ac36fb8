// The JS worker messages (src/jsworker/protocol.hpp) read from untrusted JSON, as the daemon reads
// what a worker sends (a worker runs endpoint code, so its output is not trusted): decoding never
// crashes, and whatever decodes encodes back to a message that decodes and encodes to the same
// text. (Not always to an equal value: a double with an integral value is written as JavaScript
// writes it, 2.0 as 2, and comes back as an integer; corpus/jsworker_message/integral-double.)
#include <cstdlib>
#include <string_view>

#include "json/json.hpp"
#include "jsworker/protocol.hpp"

namespace {

template <class Message>
void check_round_trip(const hearth::Result<Message>& decoded,
                      hearth::Result<Message> (*decode)(const boost::json::value&)) {
  if (!decoded.ok()) return;
  auto text = hearth::json::parse_text(hearth::jsworker::encode(decoded.value()));
  if (!text.ok()) std::abort();
  auto again = decode(text.value());
  if (!again.ok()) std::abort();
  if (hearth::jsworker::encode(again.value()) != hearth::jsworker::encode(decoded.value())) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto parsed =
      hearth::json::parse_text(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!parsed.ok()) return 0;
  check_round_trip(hearth::jsworker::decode_from_worker(parsed.value()),
                   &hearth::jsworker::decode_from_worker);
  check_round_trip(hearth::jsworker::decode_to_worker(parsed.value()),
                   &hearth::jsworker::decode_to_worker);
  return 0;
}
