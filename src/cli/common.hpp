#pragma once
/// Pieces shared by the CLI commands.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host/host.hpp"
#include "jail/jail.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::vault {
class Vault;
}

namespace hearth::cli {

/// `--state-dir` default: $XDG_STATE_HOME/hearth, else ~/.local/state/hearth.
std::filesystem::path default_state_dir();

/// Creates `dir` (and parents) with mode 0700 for what hearth creates.
bool ensure_private_dir(const std::filesystem::path& dir, std::string& error);

/// Prints load failures and warnings to stderr ("FILE: PATH: MESSAGE" lines).
void print_load_report(const host::LoadReport& report);

/// Sets up spdlog on stderr at `level` ("trace" ... "off").
void setup_logging(const std::string& level);

/// The jail of a serving command: the machine probed once, what is missing logged (or the loud
/// --insecure-no-sandbox warning); null, with the error logged, when it cannot be made.
std::shared_ptr<const jail::Jail> open_jail(bool insecure_no_sandbox);

/// --watch: every `interval`, reloads what changed under `paths` (on a blocking thread), logs what
/// it did, and gives `on_change` every report that changed a service. Ends when `timer` is
/// cancelled.
boost::asio::awaitable<void> watch_services(
    host::Host& host, std::vector<std::filesystem::path> paths, std::chrono::milliseconds interval,
    boost::asio::steady_timer& timer, std::function<void(const host::ReloadReport&)> on_change);

/// The names of the services a reload added, changed or removed.
std::vector<std::string> changed_services(const host::ReloadReport& report);

/// Stops `ioc` once no child process runs any more, or at `deadline`, whichever comes first
/// (looking every 20 ms with `timer`): the end of a graceful shutdown.
void stop_when_children_gone(boost::asio::io_context& ioc, boost::asio::steady_timer& timer,
                             std::chrono::steady_clock::time_point deadline);

struct ServeOptions {
  std::vector<std::filesystem::path> paths;
  std::string address = "127.0.0.1";
  int port = 5555;
  std::filesystem::path token_file;
  std::filesystem::path ready_file;
  std::filesystem::path state_dir;
  int threads = 0;     ///< 0: one per core
  int js_workers = 2;  ///< JS worker processes per pool (function handlers)
  std::size_t max_request_bytes = 1 << 20;
  int idle_timeout_s = 60;
  std::size_t max_connections = 0;  ///< 0: sized from the file limit (see serve.cpp)
  std::size_t max_websockets = 0;   ///< 0: max_connections less an eighth kept for HTTP
  int header_timeout_ms = 10000;    ///< a connection must show the token within this
  int default_timeout_ms = 30000;
  std::vector<std::string> allowed_origins;
  bool json = false;
  bool insecure_no_sandbox = false;
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

/// `hearth open`: prints the host page's URL, with the token in its fragment, for the daemon
/// running with `state_dir` (default: the default state dir); with `browser`, also opens it.
int open_page(const std::filesystem::path& state_dir, bool browser);

int serve(const ServeOptions& options);

/// The vault of `state_dir` (vault.db), under the master key of $HEARTH_VAULT_KEY or of
/// `state_dir/vault.key` (created, 0600, on first use). cli/registry.cpp.
Result<std::shared_ptr<vault::Vault>> open_vault(const std::filesystem::path& state_dir);
/// The same vault, its key read and its database opened at first use (`hearth serve`: a daemon
/// that never needs a variable never loads the key or the cryptography behind it).
std::shared_ptr<vault::Vault> open_vault_on_first_use(const std::filesystem::path& state_dir);
}  // namespace hearth::cli
namespace hearth::agentapp {
struct ReadinessContext;
}
namespace hearth::cli {
/// The readiness context of the Agent Apps of `state_dir`: the bridge's capabilities, secrets
/// from the vault (scope app.<name>). cli/app.cpp.
agentapp::ReadinessContext app_readiness(const std::filesystem::path& state_dir);

/// `hearth doctor`: the jail mechanisms of this machine. Exit 0 when confined endpoints can run.
int doctor(bool as_json);

/// LAFS envelope mode (cli/lafs.cpp): `_meta.operation` is "service.endpoint" for lavs/call and
/// lavs/subscribe, the method otherwise; `hearth call --lafs` exits with the registry's cliExit.
void name_lafs_operations(rpc::Dispatcher& dispatcher, const host::Host& host);
int lafs_exit_code(const json::value& envelope);
/// `hearth call --lafs` with input that is not JSON: prints the failure envelope, returns its
/// exit code.
int print_lafs_input_error(const std::string& service, const std::string& endpoint,
                           const Error& error);

}  // namespace hearth::cli
