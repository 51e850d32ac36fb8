#include "daemon/instance.hpp"

#include <fcntl.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "common/random.hpp"
#include "daemon/state_dir.hpp"

namespace hearth::daemon {
namespace fs = std::filesystem;

namespace {

constexpr const char* kLockName = "daemon.lock";

std::string read_small(int fd) {
  std::string text(64, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return text;
}

pid_t parse_pid(const std::string& text) {
  pid_t pid = 0;
  for (char c : text) {
    if (c < '0' || c > '9') break;
    if (pid > 4194304) return 0;  // beyond any pid_max
    pid = pid * 10 + (c - '0');
  }
  return pid;
}

std::optional<json::object> read_document(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto parsed = json::parse_text(text);
  if (!parsed.ok() || !parsed.value().is_object()) return std::nullopt;
  return std::move(parsed).value().as_object();
}

}  // namespace

Result<InstanceLock> InstanceLock::acquire(const fs::path& state_dir) {
  const fs::path path = state_dir / kLockName;
  Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) {
    return Error::make(ErrorCode::kInternalError,
                       path.string() + ": cannot open the lock: " + std::strerror(errno));
  }
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      return Error::make(ErrorCode::kInternalError,
                         path.string() + ": cannot lock: " + std::strerror(errno));
    }
    const pid_t pid = parse_pid(read_small(fd.get()));
    json::object data;
    data["stateDir"] = state_dir.string();
    data["pid"] = pid;
    std::string message = "another hearth daemon";
    if (pid > 0) message += " (pid " + std::to_string(pid) + ")";
    message += " is already serving the state folder " + state_dir.string();
    if (auto doc = read_document(state_dir / "daemon.json")) {
      if (const auto* url = doc->if_contains("url"); url != nullptr && url->is_string()) {
        message += " on " + std::string(url->get_string());
        data["url"] = *url;
      }
    }
    message += " (`hearth stop` stops it; a second daemon needs another --state-dir)";
    return Error::make(ErrorCode::kInternalError, std::move(message), std::move(data));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd.get(), 0) != 0 ||
      ::pwrite(fd.get(), pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    return Error::make(ErrorCode::kInternalError,
                       path.string() + ": cannot write the pid: " + std::strerror(errno));
  }
  return InstanceLock(std::move(fd));
}

Instance find_instance(const fs::path& state_dir) {
  Instance out;
  Fd fd(::open((state_dir / kLockName).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return out;
  if (::flock(fd.get(), LOCK_SH | LOCK_NB) == 0) {
    ::flock(fd.get(), LOCK_UN);
    return out;  // nobody holds it
  }
  if (errno != EWOULDBLOCK) return out;
  out.running = true;
  out.pid = parse_pid(read_small(fd.get()));
  out.document = read_document(state_dir / "daemon.json");
  return out;
}

Result<std::string> load_or_create_token(const fs::path& file, bool rotate) {
  if (!rotate) {
    Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    struct stat st {};
    if (fd && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::getuid() &&
        (st.st_mode & 077) == 0) {
      std::string text = read_small(fd.get());
      while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
      const bool hex =
          text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
      if (hex) return text;
    }
  }
  std::string token = random_hex(32);
  std::string error;
  if (!write_private_file(file, token + "\n", error)) {
    return Error::make(ErrorCode::kInternalError, "token file: " + error);
  }
  return token;
}

Result<FileLog> FileLog::open(const fs::path& file) {
  std::shared_ptr<spdlog::sinks::rotating_file_sink_mt> sink;
  try {
    sink =
        std::make_shared<spdlog::sinks::rotating_file_sink_mt>(file.string(), 5 * 1024 * 1024, 3);
  } catch (const spdlog::spdlog_ex& e) {
    return Error::make(ErrorCode::kInternalError, file.string() + ": " + e.what());
  }
  ::chmod(file.c_str(), 0600);
  // UTC, as the audit log's times: `hearth logs` interleaves the two by time.
  sink->set_formatter(std::make_unique<spdlog::pattern_formatter>("%Y-%m-%dT%H:%M:%S.%eZ %l %v",
                                                                  spdlog::pattern_time_type::utc));
  const spdlog::sink_ptr base = sink;
  auto logger = spdlog::default_logger();
  logger->sinks().push_back(base);
  // Written out within a second (`hearth logs -f`), at once for warnings and errors.
  logger->flush_on(spdlog::level::warn);
  spdlog::flush_every(std::chrono::seconds(1));
  return FileLog(std::static_pointer_cast<void>(base));
}

FileLog::~FileLog() {
  if (!sink_) return;
  auto logger = spdlog::default_logger();
  logger->flush();
  auto& sinks = logger->sinks();
  std::erase_if(sinks, [this](const spdlog::sink_ptr& s) { return s.get() == sink_.get(); });
}

}  // namespace hearth::daemon
