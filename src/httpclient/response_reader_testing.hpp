#pragma once
// For the tests and the fuzz target of ResponseReader: a whole response fed to a reader in pieces
// of a given size, as a socket would deliver them (the unused rest given again with the next
// piece), then the close.

#include <cstdlib>
#include <string>
#include <string_view>

#include "httpclient/response_reader.hpp"

namespace hearth::httpclient::testing {

struct PiecewiseRead {
  bool ok = true;
  std::string error;  ///< when !ok
  bool done = false;
  int status = 0;
  std::string body;  ///< what reached the sink (part of it when !ok)
};

inline PiecewiseRead read_in_pieces(std::string_view wire, std::size_t step,
                                    ResponseReader::Limits limits, bool closes = true) {
  ResponseReader reader(limits);
  PiecewiseRead out;
  const auto fail = [&out](std::string message) {
    out.ok = false;
    out.error = std::move(message);
    return out;
  };
  const auto sink = [&out](std::string_view piece) {
    out.body.append(piece);
    return true;
  };
  std::string pending;
  for (std::size_t at = 0; at < wire.size() && !reader.done(); at += step) {
    pending.append(wire.substr(at, step));
    for (;;) {
      auto used = reader.put(pending, sink);
      if (!used.ok()) return fail(used.error().message);
      if (*used > pending.size()) std::abort();  // the reader used more than it was given
      pending.erase(0, *used);
      if (*used == 0 || pending.empty() || reader.done()) break;
    }
  }
  if (closes && !reader.done()) {
    if (auto end = reader.close(); !end.ok()) return fail(end.error().message);
  }
  out.done = reader.done();
  if (reader.head_done()) {
    out.status = reader.status();
    (void)reader.headers();
    (void)reader.keep_alive();
  }
  return out;
}

}  // namespace hearth::httpclient::testing
