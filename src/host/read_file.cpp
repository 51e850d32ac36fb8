// Host: a file of a service read on a view's behalf (lavs/readFile), within its fileAccess.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/base64.hpp"
#include "common/beneath.hpp"
#include "common/utf8.hpp"
#include "host/host.hpp"
#include "jail/glob.hpp"

namespace hearth::host {
namespace asio = boost::asio;

namespace {
Error permission_denied(const std::string& message, std::string_view path) {
  json::object data;
  data["path"] = path;
  return Error::make(ErrorCode::kPermissionDenied, "Permission denied: " + message,
                     std::move(data));
}
}  // namespace

asio::awaitable<Result<json::value>> Host::read_file(const Service& service, std::string path) {
  std::function<Result<json::value>()> work = [this, &service, p = std::move(path)] {
    return read_file_now(service, p);
  };
  co_return co_await blocking_->run(std::move(work));
}

Result<json::value> Host::read_file_now(const Service& service, std::string_view requested) const {
  const auto& m = service.manifest;
  if (!m.permissions.file_access || m.permissions.file_access->empty()) {
    return permission_denied("service '" + m.name + "' declares no fileAccess", requested);
  }
  if (requested.empty() || requested.find('\0') != std::string_view::npos) {
    return invalid_param("'path' must be a non-empty path", "path", "format");
  }
  jail::GlobSet globs(*m.permissions.file_access);
  std::filesystem::path rel;
  switch (jail::check_requested_path(m.dir, globs, requested, rel)) {
    case jail::PathVerdict::kOutside:
      return permission_denied("'" + std::string(requested) + "' is outside the service folder",
                               requested);
    case jail::PathVerdict::kNotCovered:
      return permission_denied(
          "'" + rel.generic_string() + "' is not covered by the service's fileAccess", requested);
    case jail::PathVerdict::kAllowed:
      break;
  }
  // Opened relative to the service folder, following no link in any component: what is opened
  // is exactly the path the globs allowed, whatever a handler does to the folder meanwhile.
  BeneathFailure failure;
  Fd file = open_beneath(m.dir, rel, O_RDONLY | O_NONBLOCK, failure);
  if (!file && failure.link) {
    return permission_denied("'" + rel.generic_string() +
                                 "' is or passes through a symbolic link (links are not followed)",
                             requested);
  }
  struct stat st {};
  if (!file || ::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    std::string why = !file ? std::strerror(failure.error) : "not a regular file";
    return Error::make(ErrorCode::kHandlerError,
                       "cannot read '" + rel.generic_string() + "': " + why,
                       json::object{{"path", rel.generic_string()}, {"reason", why}});
  }
  if (static_cast<std::uint64_t>(st.st_size) > options_.max_read_file_bytes) {
    return Error::make(ErrorCode::kHandlerError,
                       "'" + rel.generic_string() + "' is larger than " +
                           std::to_string(options_.max_read_file_bytes) + " bytes",
                       json::object{{"path", rel.generic_string()}, {"size", st.st_size}});
  }
  std::string content(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < content.size()) {
    const ssize_t n = ::read(file.get(), content.data() + got, content.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  content.resize(got);
  json::object out;
  out["path"] = rel.generic_string();
  out["size"] = content.size();
  if (is_utf8(content)) {
    out["encoding"] = "utf-8";
    out["content"] = content;
  } else {
    out["encoding"] = "base64";
    out["content"] = base64_encode(content);
  }
  return json::value(std::move(out));
}

}  // namespace hearth::host
