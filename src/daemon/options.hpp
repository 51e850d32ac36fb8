#pragma once
/// What `hearth serve` is configured with: the daemon's own settings (address, limits, files)
/// and every subsystem's. Each component reads the fields it owns (src/subsystems/).

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace hearth::daemon {

struct Options {
  std::vector<std::filesystem::path> paths;
  std::string address = "127.0.0.1";
  int port = 5555;
  std::filesystem::path token_file;
  bool rotate_token = false;  ///< a new token, though the token file holds one (--rotate-token)
  std::filesystem::path ready_file;
  std::filesystem::path state_dir;
  /// Where the state is stored (--database): empty, SQLite files in the state dir; a
  /// postgresql:// URL, one database several daemons share (docs/deployment.md).
  std::string database;
  int threads = 0;     ///< 0: one per core
  int js_workers = 2;  ///< JS worker processes per pool (function handlers)
  std::size_t max_request_bytes = 1 << 20;
  int idle_timeout_s = 60;
  std::size_t max_connections = 0;  ///< 0: sized from the file limit (daemon.cpp)
  std::size_t max_websockets = 0;   ///< 0: max_connections less an eighth kept for HTTP
  int header_timeout_ms = 10000;    ///< a connection must show the token within this
  int default_timeout_ms = 30000;
  std::vector<std::string> allowed_origins;
  bool json = false;
  bool insecure_no_sandbox = false;
  bool strict = false;          ///< a manifest with warnings (unknown keys) is refused (--strict)
  bool watch = false;           ///< reload services whose lavs.json is added, edited or removed
  int watch_interval_ms = 500;  ///< how often --watch looks
  int mcp_progress_interval_ms = 1000;    ///< how often a running MCP tool call reports progress
  std::vector<std::string> view_origins;  ///< origins `cdn` view components may load code from
  std::filesystem::path web_dir;  ///< the host page's files; empty: views::default_web_dir()
  bool open = false;              ///< open the view host in a browser once ready
  std::vector<std::filesystem::path> registry_dirs;   ///< A2S registry folders (--registry)
  std::vector<std::string> local_domains;             ///< A2S local test domains (--local-domain)
  int registry_timeout_ms = 30000;                    ///< one A2S HTTP exchange
  std::vector<std::filesystem::path> workspace_dirs;  ///< virtual workspaces (--workspace)
  std::string model_url;      ///< OpenAI-compatible base URL for agent runs (--model-url)
  std::string model;          ///< model name (--model)
  std::string model_key_ref;  ///< vault variable holding the API key (--model-key SCOPE::NAME)
  bool model_stream = false;  ///< stream completions (--model-stream)
  std::vector<std::string> model_servers;      ///< more model servers (--model-server NAME=URL)
  std::vector<std::string> model_server_keys;  ///< their keys (--model-server-key NAME=REF)
  std::size_t model_context_chars = 96000;     ///< what one model request carries
  std::string model_tools = "auto";            ///< how tools reach the models (--model-tools)
};

}  // namespace hearth::daemon
