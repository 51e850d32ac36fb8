#include "jail/control.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace hearth::jail {

bool send_message(int socket, std::string_view message, int fd) {
  if (socket < 0) return false;
  iovec iov{const_cast<char*>(message.data()), message.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
  }
  ssize_t n = 0;
  do {
    n = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(message.size());
}

std::optional<Message> receive_message(int socket, bool wait) {
  char buffer[1024];
  iovec iov{buffer, sizeof buffer};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = 0;
  do {
    n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC | (wait ? 0 : MSG_DONTWAIT));
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return std::nullopt;
  Message out{std::string(buffer, static_cast<std::size_t>(n)), Fd()};
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
      out.fd.reset(fd);
    }
  }
  return out;
}

std::string encode_exec(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  std::string out = std::to_string(argv.size());
  out += '\0';
  for (const auto* list : {&argv, &env}) {
    for (const auto& entry : *list) {
      out += entry;
      out += '\0';
    }
  }
  return out;
}

bool decode_exec(std::string_view data, std::vector<std::string>& argv,
                 std::vector<std::string>& env) {
  argv.clear();
  env.clear();
  if (data.empty() || data.back() != '\0') return false;
  std::size_t count = 0;
  bool first = true;
  while (!data.empty()) {
    const auto end = data.find('\0');
    const std::string_view entry = data.substr(0, end);
    data.remove_prefix(end + 1);
    if (first) {
      first = false;
      if (entry.empty() || entry.size() > 7 ||
          entry.find_first_not_of("0123456789") != std::string_view::npos) {
        return false;
      }
      count = static_cast<std::size_t>(std::stoul(std::string(entry)));
      continue;
    }
    (argv.size() < count ? argv : env).emplace_back(entry);
  }
  return count > 0 && argv.size() == count;
}

}  // namespace hearth::jail
