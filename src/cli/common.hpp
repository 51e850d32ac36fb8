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

#include "daemon/daemon.hpp"
#include "daemon/state_dir.hpp"
#include "host/host.hpp"
#include "jail/jail.hpp"
#include "rpc/dispatcher.hpp"
#include "subsystems/apps.hpp"
#include "subsystems/registry.hpp"
#include "subsystems/sandbox.hpp"
#include "subsystems/services.hpp"

namespace hearth::cli {

using daemon::ensure_private_dir;
using daemon::stop_when_children_gone;
using subsystems::changed_services;
using subsystems::open_jail;
using subsystems::open_vault;
using subsystems::open_vault_on_first_use;
using subsystems::print_load_report;
using subsystems::watch_services;
using ServeOptions = daemon::Options;

/// The state folder a command uses when given none: the configuration file's [serve] state-dir
/// (so that `hearth status`, `stop`, `logs`, `open` find the daemon it configures), else
/// daemon::default_state_dir().
std::filesystem::path default_state_dir();
/// Called once the command line and the configuration file are read.
void set_configured_state_dir(std::filesystem::path dir);

/// Sets up spdlog on stderr at `level` ("trace" ... "off").
void setup_logging(const std::string& level);

/// `hearth open`: prints the host page's URL, with the token in its fragment, for the daemon
/// running with `state_dir` (default: the default state dir); with `browser`, also opens it.
int open_page(const std::filesystem::path& state_dir, bool browser);

int serve(const ServeOptions& options);
}  // namespace hearth::cli
namespace hearth::cli {
using subsystems::app_readiness;

/// `hearth doctor`: the jail mechanisms of this machine. Exit 0 when confined endpoints can run.
int doctor(bool as_json);

/// `hearth call --lafs` exits with the LAFS registry's cliExit (cli/lafs.cpp).
int lafs_exit_code(const json::value& envelope);
/// `hearth call --lafs` with input that is not JSON: prints the failure envelope, returns its
/// exit code.
int print_lafs_input_error(const std::string& service, const std::string& endpoint,
                           const Error& error);

}  // namespace hearth::cli
