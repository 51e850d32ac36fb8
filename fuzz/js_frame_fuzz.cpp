// The daemon's reader of JS worker frames: bytes fed in random chunk sizes give the same frames,
// and every frame read encodes back to the bytes it came from.
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "js/frame.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto read_all = [&](std::size_t chunk) {
    hearth::js::FrameReader reader;
    std::vector<std::string> frames;
    for (std::size_t at = 0; at < bytes.size(); at += chunk) {
      reader.feed(bytes.substr(at, chunk));
      while (auto frame = reader.next()) frames.push_back(std::move(*frame));
      if (reader.failed()) break;
    }
    return std::make_pair(frames, reader.failed());
  };
  const auto whole = read_all(bytes.size() + 1);
  const auto pieces = read_all(1 + (size % 7));
  if (whole != pieces) std::abort();
  std::string encoded;
  for (const auto& f : whole.first) encoded += hearth::js::encode_frame(f);
  if (bytes.substr(0, encoded.size()) != encoded) std::abort();
  return 0;
}
