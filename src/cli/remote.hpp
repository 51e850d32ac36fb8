#pragma once
/// A running daemon as the CLI finds it (STATE_DIR/daemon.json and its token file), and a
/// JSON-RPC request sent to it over HTTP.

#include <cstdint>
#include <filesystem>
#include <string>

#include "common/result.hpp"

namespace hearth::cli {

struct Daemon {
  std::string url;      ///< "http://127.0.0.1:5555"
  std::string host;     ///< "127.0.0.1:5555": the Host header
  std::string address;  ///< "127.0.0.1"
  std::uint16_t port = 0;
  std::string token;
};

/// The daemon serving with `state_dir` (empty: the default state dir); an error saying why
/// there is none (no daemon.json, its process gone, the token unreadable).
Result<Daemon> find_daemon(const std::filesystem::path& state_dir);

/// POSTs `body` to the daemon's /rpc with its token (client "hearth-cli") and returns the
/// response body.
Result<std::string> post_rpc(const Daemon& daemon, const std::string& body);

/// Opens `url` with xdg-open and waits for it; false when it could not.
bool launch_browser(const std::string& url);

}  // namespace hearth::cli
