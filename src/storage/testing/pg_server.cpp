#include "storage/testing/pg_server.hpp"

#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>

namespace hearth::storage::testing {
namespace {

namespace fs = std::filesystem;

/// The bin folder of the newest PostgreSQL under /usr/lib/postgresql, or empty.
fs::path newest_bin() {
  fs::path best;
  int best_version = -1;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const auto name = entry.path().filename().string();
    const int version = std::atoi(name.c_str());
    if (version > best_version && fs::exists(entry.path() / "bin" / "initdb") &&
        fs::exists(entry.path() / "bin" / "pg_ctl")) {
      best_version = version;
      best = entry.path() / "bin";
    }
  }
  return best;
}

/// `text` as one shell word.
std::string shell_quote(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string url_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.') {
      out += c;
    } else {
      out += '%';
      out += kHex[static_cast<unsigned char>(c) >> 4];
      out += kHex[static_cast<unsigned char>(c) & 15];
    }
  }
  return out;
}

}  // namespace

Result<std::string> PgServer::run(const std::string& command) const {
  const std::string full = (as_postgres_ ? "runuser -u postgres -- " : "") + command + " 2>&1";
  std::FILE* pipe = ::popen(full.c_str(), "r");
  if (pipe == nullptr) {
    return Error::make(ErrorCode::kInternalError, "popen failed: " + full);
  }
  std::string output;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = ::pclose(pipe);
  if (status != 0) {
    return Error::make(ErrorCode::kInternalError, "`" + full + "` failed: " + output);
  }
  return output;
}

Result<std::unique_ptr<PgServer>> PgServer::start() {
  std::unique_ptr<PgServer> server(new PgServer());
  server->bin_ = newest_bin();
  if (server->bin_.empty()) {
    return Error::make(ErrorCode::kInternalError,
                       "no PostgreSQL server in /usr/lib/postgresql/*/bin (initdb, pg_ctl): run "
                       "scripts/install-deps.sh, which installs postgresql-15");
  }
  std::string pattern = (fs::temp_directory_path() / "hearth-pg-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Error::make(ErrorCode::kInternalError, "mkdtemp failed");
  }
  server->dir_ = pattern;
  if (::geteuid() == 0) {
    const passwd* user = ::getpwnam("postgres");
    if (user == nullptr) {
      return Error::make(ErrorCode::kInternalError,
                         "running as root, and there is no postgres user to run the server as "
                         "(initdb refuses root): run scripts/install-deps.sh");
    }
    if (::chown(server->dir_.c_str(), user->pw_uid, user->pw_gid) != 0) {
      return Error::make(ErrorCode::kInternalError, "cannot chown " + server->dir_.string());
    }
    server->as_postgres_ = true;
  }
  server->port_ = 20000 + static_cast<int>(::getpid() % 40000);
  const auto data = server->dir_ / "data";
  HEARTH_RETURN_IF_ERROR(server->run(shell_quote((server->bin_ / "initdb").string()) + " -D " +
                                     shell_quote(data.string()) +
                                     " -A trust -U hearth_admin --no-sync -E UTF8 --locale=C"));
  HEARTH_RETURN_IF_ERROR(server->start_again());
  return server;
}

Status PgServer::start_again() {
  const std::string options = "-k " + dir_.string() + " -c listen_addresses='' -p " +
                              std::to_string(port_) +
                              " -c fsync=off -c full_page_writes=off -c max_connections=300";
  HEARTH_RETURN_IF_ERROR(run(shell_quote((bin_ / "pg_ctl").string()) + " -D " +
                             shell_quote((dir_ / "data").string()) + " -o " + shell_quote(options) +
                             " -l " + shell_quote((dir_ / "log").string()) + " -w -t 60 start"));
  running_ = true;
  return Status{};
}

Status PgServer::stop() {
  HEARTH_RETURN_IF_ERROR(run(shell_quote((bin_ / "pg_ctl").string()) + " -D " +
                             shell_quote((dir_ / "data").string()) + " -m fast -w stop"));
  running_ = false;
  return Status{};
}

PgServer::~PgServer() {
  if (running_) {
    (void)run(shell_quote((bin_ / "pg_ctl").string()) + " -D " +
              shell_quote((dir_ / "data").string()) + " -m immediate -w stop");
  }
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

std::string PgServer::url(std::string_view database) const {
  return "postgresql://hearth_admin@/" + std::string(database) +
         "?host=" + url_encode(dir_.string()) + "&port=" + std::to_string(port_);
}

Result<std::string> PgServer::psql(std::string_view database, std::string_view sql) const {
  // psql is a client: it runs as whoever runs the test.
  const std::string command = shell_quote((bin_ / "psql").string()) +
                              " -X -q -t -A -v ON_ERROR_STOP=1 -h " + shell_quote(dir_.string()) +
                              " -p " + std::to_string(port_) + " -U hearth_admin -d " +
                              shell_quote(database) + " -c " + shell_quote(sql) + " 2>&1";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return Error::make(ErrorCode::kInternalError, "popen failed");
  std::string output;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  if (::pclose(pipe) != 0) {
    return Error::make(ErrorCode::kInternalError, "psql failed: " + output);
  }
  while (!output.empty() && output.back() == '\n') output.pop_back();
  return output;
}

Result<std::string> PgServer::fresh_database(std::string_view hint) {
  std::string name = "t" + std::to_string(++databases_) + "_";
  for (const char c : hint) {
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    name += std::isalnum(static_cast<unsigned char>(lower)) != 0 ? lower : '_';
  }
  name = name.substr(0, 60);
  HEARTH_RETURN_IF_ERROR(psql("postgres", "CREATE DATABASE \"" + name + "\""));
  return name;
}

namespace {
std::mutex shared_mutex;
std::unique_ptr<PgServer> shared_server;
std::string shared_failure;
bool shared_tried = false;
}  // namespace

PgServer* shared_pg_server() {
  std::lock_guard lock(shared_mutex);
  if (!shared_tried) {
    shared_tried = true;
    auto started = PgServer::start();
    if (started.ok()) {
      shared_server = std::move(started).value();
    } else {
      shared_failure = started.error().message;
    }
  }
  if (shared_server == nullptr)
    ADD_FAILURE() << "no PostgreSQL server for the test: " << shared_failure;
  return shared_server.get();
}

void PgServerEnvironment::TearDown() {
  std::lock_guard lock(shared_mutex);
  shared_server.reset();
}

}  // namespace hearth::storage::testing
