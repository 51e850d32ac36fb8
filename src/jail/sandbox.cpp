#include "jail/sandbox.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "common/ascii.hpp"

namespace hearth::jail::sandbox {

namespace {

// Landlock, defined here because Debian bookworm's kernel headers stop at ABI 3.
constexpr std::uint64_t kFsExecute = 1ULL << 0;
constexpr std::uint64_t kFsWriteFile = 1ULL << 1;
constexpr std::uint64_t kFsReadFile = 1ULL << 2;
constexpr std::uint64_t kFsReadDir = 1ULL << 3;
constexpr std::uint64_t kFsRemoveDir = 1ULL << 4;
constexpr std::uint64_t kFsRemoveFile = 1ULL << 5;
constexpr std::uint64_t kFsMakeChar = 1ULL << 6;
constexpr std::uint64_t kFsMakeDir = 1ULL << 7;
constexpr std::uint64_t kFsMakeReg = 1ULL << 8;
constexpr std::uint64_t kFsMakeSock = 1ULL << 9;
constexpr std::uint64_t kFsMakeFifo = 1ULL << 10;
constexpr std::uint64_t kFsMakeBlock = 1ULL << 11;
constexpr std::uint64_t kFsMakeSym = 1ULL << 12;
constexpr std::uint64_t kFsRefer = 1ULL << 13;     // ABI 2
constexpr std::uint64_t kFsTruncate = 1ULL << 14;  // ABI 3
constexpr std::uint64_t kFsIoctlDev = 1ULL << 15;  // ABI 5
// Connecting or sending to a pathname unix socket (LANDLOCK_ACCESS_FS_RESOLVE_UNIX, newer than
// ABI 7): handled when the kernel knows it, granted nowhere. Seccomp refuses unix sockets anyway.
constexpr std::uint64_t kFsResolveUnix = 1ULL << 16;
constexpr std::uint64_t kNetBindTcp = 1ULL << 0;         // ABI 4
constexpr std::uint64_t kNetConnectTcp = 1ULL << 1;      // ABI 4
constexpr std::uint64_t kScopeAbstractUnix = 1ULL << 0;  // ABI 6
constexpr std::uint64_t kScopeSignal = 1ULL << 1;        // ABI 6
constexpr int kRulePathBeneath = 1;
constexpr int kRuleNetPort = 2;
constexpr unsigned kCreateRulesetVersion = 1U << 0;

struct RulesetAttr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;
  std::uint64_t scoped;
};

struct __attribute__((packed)) PathBeneathAttr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
};

struct NetPortAttr {
  std::uint64_t allowed_access;
  std::uint64_t port;
};

/// Rights that only make sense on a file (the kernel refuses others on a file rule).
constexpr std::uint64_t kFileRights =
    kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate | kFsIoctlDev;

std::uint64_t fs_rights_for_abi(int abi) {
  std::uint64_t all = kFsExecute | kFsWriteFile | kFsReadFile | kFsReadDir | kFsRemoveDir |
                      kFsRemoveFile | kFsMakeChar | kFsMakeDir | kFsMakeReg | kFsMakeSock |
                      kFsMakeFifo | kFsMakeBlock | kFsMakeSym;
  if (abi >= 2) all |= kFsRefer;
  if (abi >= 3) all |= kFsTruncate;
  if (abi >= 5) all |= kFsIoctlDev;
  return all;
}

Failure failure(std::string mechanism, std::string_view what, int error) {
  std::string detail(what);
  if (error != 0) {
    detail += ": ";
    detail += std::strerror(error);
  }
  return Failure{std::move(mechanism), std::move(detail)};
}

bool write_file(const std::string& path, std::string_view text, int& error) {
  const Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) {
    error = errno;
    return false;
  }
  const ssize_t n = ::write(fd.get(), text.data(), text.size());
  error = n < 0 ? errno : 0;
  return n == static_cast<ssize_t>(text.size());
}

std::string read_small_file(const std::string& path) {
  std::string out;
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return out;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = ::read(fd.get(), buffer, sizeof buffer)) > 0) {
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

/// What a confined program may always read: the system's programs and libraries, and the few
/// files under /etc that the C library, interpreters and TLS need. Not all of /etc: it holds
/// secrets (shadow, ssh host keys, credentials of other services).
constexpr const char* kSystemReadExec[] = {"/usr",   "/bin",   "/sbin",  "/lib",
                                           "/lib32", "/lib64", "/libx32"};
constexpr const char* kSystemReadOnly[] = {
    "/etc/ld.so.cache",  "/etc/ld.so.conf",     "/etc/ld.so.conf.d", "/etc/localtime",
    "/etc/timezone",     "/etc/nsswitch.conf",  "/etc/passwd",       "/etc/group",
    "/etc/hosts",        "/etc/host.conf",      "/etc/resolv.conf",  "/etc/gai.conf",
    "/etc/services",     "/etc/protocols",      "/etc/ssl",          "/etc/ca-certificates",
    "/etc/alternatives", "/etc/mime.types",     "/etc/python3",      "/etc/python3.11",
    "/etc/os-release",   "/etc/debian_version", "/etc/inputrc",      "/etc/magic",
    "/dev/random",       "/dev/urandom"};
constexpr const char* kDevicesReadWrite[] = {"/dev/null", "/dev/zero", "/dev/full"};

}  // namespace

int landlock_abi() {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

namespace {

struct Rights {
  std::uint64_t read_exec, read_only, read_write, read_write_keep, device_rw;
};

Rights rights_for(std::uint64_t handled) {
  // Never granted: execute in writable folders, device nodes, and (when the kernel has it)
  // connecting to the pathname unix sockets found there.
  const std::uint64_t rw =
      handled & ~(kFsExecute | kFsMakeChar | kFsMakeBlock | kFsIoctlDev | kFsResolveUnix);
  return {(kFsExecute | kFsReadFile | kFsReadDir) & handled, (kFsReadFile | kFsReadDir) & handled,
          rw, rw & ~kFsRemoveDir, (kFsReadFile | kFsWriteFile | kFsTruncate) & handled};
}

/// Adds a path-beneath rule for `path` (file rules keep only file rights); an absent path adds
/// nothing.
Outcome add_path_rule(int ruleset, const std::string& path, std::uint64_t access) {
  const Fd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
  if (!fd) return std::nullopt;
  struct stat st {};
  if (::fstat(fd.get(), &st) == 0 && !S_ISDIR(st.st_mode)) access &= kFileRights;
  PathBeneathAttr rule{access, fd.get()};
  Outcome result;
  if (access != 0 && ::syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &rule, 0U) != 0) {
    result = failure("landlock", "landlock_add_rule " + path, errno);
  }
  return result;
}

}  // namespace

Fd landlock_ruleset(const LaunchOptions& options, int abi, Outcome& result) {
  if (abi < 1) {
    result = Failure{"landlock", "not supported by this kernel"};
    return Fd();
  }
  RulesetAttr attr{};
  attr.handled_access_fs = fs_rights_for_abi(abi);
  std::size_t attr_size = sizeof(std::uint64_t);
  // Network rules (ABI 4): when the jail has no network of its own to lose (host mode), TCP is
  // left alone; otherwise no bind at all and connect only to the proxy port.
  if (abi >= 4 && options.net != NetMode::kHost) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
    attr_size = 2 * sizeof(std::uint64_t);
  } else if (abi >= 4) {
    attr_size = 2 * sizeof(std::uint64_t);
  }
  // Scoping (ABI 6): no signals to, and no abstract unix sockets of, processes outside the jail.
  if (abi >= 6) {
    attr.scoped = kScopeAbstractUnix | kScopeSignal;
    attr_size = sizeof(RulesetAttr);
  }
  // Pathname unix sockets (a right newer than ABI 7): handled, and so refused outside the jail's
  // own, when this kernel accepts the bit; a kernel that does not know it says EINVAL.
  Fd ruleset;
  if (abi >= 8) {
    attr.handled_access_fs |= kFsResolveUnix;
    ruleset.reset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0U)));
    if (!ruleset) attr.handled_access_fs &= ~kFsResolveUnix;
  }
  if (!ruleset) {
    ruleset.reset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0U)));
  }
  if (!ruleset) {
    result = failure("landlock", "landlock_create_ruleset", errno);
    return Fd();
  }
  const Rights r = rights_for(attr.handled_access_fs);
  auto add = [&](const std::string& path, std::uint64_t access) {
    if (!result) result = add_path_rule(ruleset.get(), path, access);
  };
  for (const char* p : kSystemReadExec) add(p, r.read_exec);
  for (const char* p : kSystemReadOnly) add(p, r.read_only);
  for (const char* p : kDevicesReadWrite) add(p, r.device_rw);
  for (const auto& p : options.read_exec) add(p, r.read_exec);
  for (const auto& p : options.read_only) add(p, r.read_only);
  for (const auto& p : options.read_write) add(p, r.read_write);
  // Folders above a covered (negated) entry: entries can be created and written there, but not
  // removed, renamed or linked elsewhere, so nothing covered moves to a name no negation matches.
  for (const auto& p : options.read_write_keep) add(p, r.read_write_keep);
  if (!result && attr.handled_access_net != 0 && options.net == NetMode::kProxy) {
    NetPortAttr port{kNetConnectTcp, options.proxy_port};
    if (::syscall(SYS_landlock_add_rule, ruleset.get(), kRuleNetPort, &port, 0U) != 0) {
      result = failure("landlock", "landlock_add_rule (proxy port)", errno);
    }
  }
  if (result) return Fd();
  return ruleset;
}

Outcome landlock_restrict(Fd ruleset, int abi, const std::string& scratch) {
  const Rights r = rights_for(fs_rights_for_abi(abi));
  // The jail's own /proc and scratch folder exist only in its mount namespace.
  Outcome result = add_path_rule(ruleset.get(), "/proc", r.read_only);
  if (!result && !scratch.empty()) result = add_path_rule(ruleset.get(), scratch, r.read_write);
  if (!result && ::syscall(SYS_landlock_restrict_self, ruleset.get(), 0U) != 0) {
    result = failure("landlock", "landlock_restrict_self", errno);
  }
  return result;
}

Outcome apply_landlock(const LaunchOptions& options, int abi, const std::string& scratch) {
  Outcome result;
  Fd ruleset = landlock_ruleset(options, abi, result);
  if (!ruleset) return result;
  return landlock_restrict(std::move(ruleset), abi, scratch);
}

namespace {

/// The filter, built with libseccomp; nullptr with `error` set on failure.
scmp_filter_ctx build_filter(NetMode net, int& failure_code) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) {
    failure_code = ENOMEM;
    return nullptr;
  }
  int rc = 0;
  auto deny = [&](int syscall_nr, int error = EPERM) {
    if (rc == 0 && syscall_nr >= 0) {
      rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(error), syscall_nr, 0);
    }
  };
  auto deny_if = [&](int syscall_nr, int error, scmp_arg_cmp cmp) {
    if (rc == 0 && syscall_nr >= 0) {
      rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(error), syscall_nr, 1, cmp);
    }
  };
  // Debugging and reading other processes' memory.
  for (int nr : {SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev),
                 SCMP_SYS(kcmp), SCMP_SYS(pidfd_getfd)}) {
    deny(nr);
  }
  // The file system tree and namespaces.
  for (int nr : {SCMP_SYS(mount), SCMP_SYS(umount2), SCMP_SYS(pivot_root), SCMP_SYS(chroot),
                 SCMP_SYS(open_tree), SCMP_SYS(move_mount), SCMP_SYS(fsopen), SCMP_SYS(fsconfig),
                 SCMP_SYS(fsmount), SCMP_SYS(fspick), SCMP_SYS(mount_setattr), SCMP_SYS(unshare),
                 SCMP_SYS(setns), SCMP_SYS(open_by_handle_at), SCMP_SYS(name_to_handle_at)}) {
    deny(nr);
  }
  // The kernel and the machine.
  for (int nr : {SCMP_SYS(kexec_load),    SCMP_SYS(kexec_file_load), SCMP_SYS(init_module),
                 SCMP_SYS(finit_module),  SCMP_SYS(delete_module),   SCMP_SYS(reboot),
                 SCMP_SYS(swapon),        SCMP_SYS(swapoff),         SCMP_SYS(acct),
                 SCMP_SYS(quotactl),      SCMP_SYS(syslog),          SCMP_SYS(settimeofday),
                 SCMP_SYS(clock_settime), SCMP_SYS(clock_adjtime),   SCMP_SYS(adjtimex),
                 SCMP_SYS(sethostname),   SCMP_SYS(setdomainname),   SCMP_SYS(iopl),
                 SCMP_SYS(ioperm),        SCMP_SYS(vhangup),         SCMP_SYS(uselib),
                 SCMP_SYS(lookup_dcookie)}) {
    deny(nr);
  }
  // Kernel attack surface that handlers do not need; io_uring performs socket and file
  // operations that this filter would not see.
  for (int nr : {SCMP_SYS(bpf), SCMP_SYS(perf_event_open), SCMP_SYS(userfaultfd), SCMP_SYS(keyctl),
                 SCMP_SYS(add_key), SCMP_SYS(request_key), SCMP_SYS(fanotify_init),
                 SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register)}) {
    deny(nr);
  }
  // clone3 passes its flags in memory, which seccomp cannot inspect: ENOSYS makes the C library
  // fall back to clone, whose namespace flags are refused one by one.
  deny(SCMP_SYS(clone3), ENOSYS);
  for (std::uint64_t flag :
       {std::uint64_t{CLONE_NEWNS}, std::uint64_t{CLONE_NEWUTS}, std::uint64_t{CLONE_NEWIPC},
        std::uint64_t{CLONE_NEWUSER}, std::uint64_t{CLONE_NEWPID}, std::uint64_t{CLONE_NEWNET},
        std::uint64_t{CLONE_NEWCGROUP}, std::uint64_t{0x00000080} /* CLONE_NEWTIME */}) {
    deny_if(SCMP_SYS(clone), EPERM, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
  }
  // Typing into a terminal (TIOCSTI) and the console's ioctl (TIOCLINUX).
  deny_if(SCMP_SYS(ioctl), EPERM, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCSTI));
  deny_if(SCMP_SYS(ioctl), EPERM, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCLINUX));
  // Unix sockets, in every network mode. A handler must reach no unix socket outside its jail:
  // the host's system and container sockets (docker, dbus, /dev/log, the daemon's), which the
  // root daemon's handler could otherwise open with its CAP_DAC_OVERRIDE, and Landlock (up to
  // ABI 7) does not mediate connect() or sendto() of a pathname socket. So:
  // - socket(AF_UNIX) is refused: no socket can be made that could connect() or sendto() a path
  //   (or an abstract name). The family is compared on its low 32 bits, as the kernel reads it;
  // - socketpair() only for AF_UNIX SOCK_STREAM and SOCK_SEQPACKET (pipes between the handler's
  //   own processes: libuv's child stdio, Python's socket.socketpair): both ends are connected to
  //   each other for good; a stream socket refuses a destination address (EISCONN/EOPNOTSUPP)
  //   and a seqpacket one ignores it. SOCK_DGRAM (and SOCK_RAW, which AF_UNIX turns into
  //   SOCK_DGRAM) is refused: an unconnected datagram end can sendto() any named socket. The
  //   type is compared on its low 4 bits (SOCK_TYPE_MASK), so SOCK_NONBLOCK and SOCK_CLOEXEC
  //   change nothing.
  // Abstract sockets are out of reach anyway (a network namespace of the jail's own, Landlock
  // scoping), and so are the unix sockets of other processes' descriptors (a pid namespace of
  // its own; pidfd_getfd and ptrace refused; opening a socket's path or /proc/<pid>/fd entry
  // gives ENXIO).
  constexpr std::uint64_t kLow32 = 0xffffffffULL;
  constexpr std::uint64_t kSockTypeMask = 0xf;
  deny_if(SCMP_SYS(socket), EAFNOSUPPORT,
          SCMP_A0(SCMP_CMP_MASKED_EQ, kLow32, static_cast<std::uint64_t>(AF_UNIX)));
  deny_if(SCMP_SYS(socketpair), EPERM, SCMP_A0(SCMP_CMP_NE, static_cast<std::uint64_t>(AF_UNIX)));
  for (std::uint64_t type = 0; type <= kSockTypeMask; ++type) {
    if (type == SOCK_STREAM || type == SOCK_SEQPACKET) continue;
    deny_if(SCMP_SYS(socketpair), EPERM, SCMP_A1(SCMP_CMP_MASKED_EQ, kSockTypeMask, type));
  }
  // Other socket families: AF_INET/AF_INET6 only to reach the proxy (in its own network
  // namespace) or in host mode, where nothing else is restricted.
  if (net != NetMode::kHost) {
    constexpr int kAfInet6 = AF_INET6;
    for (int family = 0; family <= kAfInet6; ++family) {
      if (family == AF_UNIX) continue;  // above
      const bool allowed = net == NetMode::kProxy && (family == AF_INET || family == AF_INET6);
      if (!allowed) {
        deny_if(SCMP_SYS(socket), EAFNOSUPPORT,
                SCMP_A0(SCMP_CMP_EQ, static_cast<std::uint64_t>(family)));
      }
    }
    deny_if(SCMP_SYS(socket), EAFNOSUPPORT,
            SCMP_A0(SCMP_CMP_GT, static_cast<std::uint64_t>(kAfInet6)));
  }
  if (rc != 0) {
    seccomp_release(ctx);
    failure_code = -rc;
    return nullptr;
  }
  return ctx;
}

}  // namespace

Outcome apply_seccomp(NetMode net, std::string_view precompiled_hex) {
  if (!precompiled_hex.empty()) {
    // The daemon's copy of the same filter, compiled once at its start (libseccomp takes a few
    // hundred microseconds to build it, on every launch otherwise).
    if (precompiled_hex.size() % 16 != 0) return Failure{"seccomp", "malformed precompiled filter"};
    std::vector<sock_filter> program(precompiled_hex.size() / 16);
    auto* bytes = reinterpret_cast<unsigned char*>(program.data());
    for (std::size_t i = 0; i < precompiled_hex.size(); i += 2) {
      const int hi = ascii::hex_value(precompiled_hex[i]);
      const int lo = ascii::hex_value(precompiled_hex[i + 1]);
      if (hi < 0 || lo < 0) return Failure{"seccomp", "malformed precompiled filter"};
      bytes[i / 2] = static_cast<unsigned char>(hi * 16 + lo);
    }
    sock_fprog fprog{static_cast<unsigned short>(program.size()), program.data()};
    if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0) {
      return failure("seccomp", "loading the filter", errno);
    }
    return std::nullopt;
  }
  int error = 0;
  scmp_filter_ctx ctx = build_filter(net, error);
  if (ctx == nullptr) return failure("seccomp", "building the filter", error);
  const int rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc != 0) return failure("seccomp", "seccomp_load", -rc);
  return std::nullopt;
}

std::string export_seccomp(NetMode net) {
  int error = 0;
  scmp_filter_ctx ctx = build_filter(net, error);
  if (ctx == nullptr) return {};
  std::string hex;
  const Fd fd(::memfd_create("hearth-seccomp", MFD_CLOEXEC));
  if (fd && seccomp_export_bpf(ctx, fd.get()) == 0) {
    const off_t size = ::lseek(fd.get(), 0, SEEK_END);
    std::string bytes(static_cast<std::size_t>(size > 0 ? size : 0), '\0');
    if (size > 0 && ::pread(fd.get(), bytes.data(), bytes.size(), 0) == size) {
      static const char* kDigits = "0123456789abcdef";
      for (unsigned char b : bytes) {
        hex += kDigits[b >> 4];
        hex += kDigits[b & 15];
      }
    }
  }
  seccomp_release(ctx);
  return hex;
}

namespace {

bool under_tmp(const std::string& path) {
  return path.rfind("/tmp/", 0) == 0;
}

/// mkdir -p of `path`'s parents on the private /tmp, then an empty mount point of the right kind.
bool make_mount_point(const std::string& path, bool directory) {
  for (std::size_t at = path.find('/', 5); at != std::string::npos; at = path.find('/', at + 1)) {
    const std::string parent = path.substr(0, at);
    if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  if (directory) return ::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST;
  return Fd(::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644)).valid();
}

}  // namespace

Outcome setup_proc(const LaunchOptions& /*options*/) {
  const char* kWhat = "mount namespace";
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return failure(kWhat, "making / private", errno);
  }
  // A /proc of the new pid namespace: the jail sees its own processes only, never the daemon's.
  if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    return failure(kWhat, "mounting /proc", errno);
  }
  return std::nullopt;
}

Outcome setup_mounts(const LaunchOptions& options, std::string& scratch) {
  const char* kWhat = "mount namespace";

  // The private /tmp hides the host's. What the jail must still reach below /tmp (a service
  // folder under /tmp, its rules, the working directory) is bound back into it, at the same path.
  struct Keep {
    std::string path;
    Fd fd;
    bool directory;
  };
  std::vector<Keep> keep;
  auto remember = [&keep](const std::string& path) {
    if (!under_tmp(path)) return;
    for (const auto& k : keep) {
      if (k.path == path) return;
    }
    Fd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
    if (!fd) return;
    struct stat st {};
    ::fstat(fd.get(), &st);
    keep.push_back({path, std::move(fd), S_ISDIR(st.st_mode)});
  };
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd) != nullptr) remember(cwd);
  for (const auto* list :
       {&options.read_exec, &options.read_only, &options.read_write, &options.read_write_keep}) {
    for (const auto& p : *list) remember(p);
  }
  // Parents before children, so that a folder bound back does not cover a file bound into it.
  std::sort(keep.begin(), keep.end(), [](const Keep& a, const Keep& b) { return a.path < b.path; });

  Outcome result;
  const std::string data =
      "mode=1777,size=" + std::to_string(options.tmp_size > 0 ? options.tmp_size : 1 << 20);
  if (::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, data.c_str()) != 0) {
    result = failure(kWhat, "mounting a private /tmp", errno);
  }
  for (const auto& k : keep) {
    if (result) break;
    const std::string source = "/proc/self/fd/" + std::to_string(k.fd.get());
    if (!make_mount_point(k.path, k.directory) ||
        ::mount(source.c_str(), k.path.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      result = failure(kWhat, "binding " + k.path + " into the private /tmp", errno);
    }
  }
  for (auto& k : keep) k.fd.reset();
  if (result) return result;
  // The writable scratch space: /tmp itself, unless something was bound back into it - then a
  // folder of its own, since a Landlock rule on /tmp would reach into what was bound back.
  scratch = "/tmp";
  if (!keep.empty()) {
    scratch = "/tmp/.hearth-tmp";
    if (::mkdir(scratch.c_str(), 01777) != 0 || ::chmod(scratch.c_str(), 01777) != 0) {
      return failure(kWhat, "creating " + scratch, errno);
    }
  }
  if (::chdir(cwd) != 0) {
    // The working directory keeps its old inode anyway; only a relative lookup through it fails.
  }

  if (!options.hide.empty()) {
    // The covers: an empty file and an empty folder, mode 0, bound read-only over each hidden
    // path. Seccomp later refuses umount, so the program cannot lift them.
    const char* kFile = "/tmp/.hearth-cover-file";
    const char* kDir = "/tmp/.hearth-cover-dir";
    if (!Fd(::open(kFile, O_CREAT | O_WRONLY | O_CLOEXEC, 0))) {
      return failure(kWhat, "creating the cover file", errno);
    }
    if (::mkdir(kDir, 0) != 0) return failure(kWhat, "creating the cover folder", errno);
    for (const auto& path : options.hide) {
      struct stat st {};
      if (::lstat(path.c_str(), &st) != 0) continue;  // nothing to hide
      const char* cover = S_ISDIR(st.st_mode) ? kDir : kFile;
      if (::mount(cover, path.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
          ::mount(nullptr, path.c_str(), nullptr,
                  MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  nullptr) != 0) {
        return failure(kWhat, "covering " + path, errno);
      }
    }
    ::unlink(kFile);
    ::rmdir(kDir);
  }
  return std::nullopt;
}

Outcome loopback_up() {
  Fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd) return failure("network namespace", "socket", errno);
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  int rc = ::ioctl(fd.get(), SIOCGIFFLAGS, &request);
  if (rc == 0) {
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP | IFF_RUNNING);
    rc = ::ioctl(fd.get(), SIOCSIFFLAGS, &request);
  }
  const int error = errno;
  fd.reset();
  if (rc != 0) return failure("network namespace", "bringing up the loopback interface", error);
  return std::nullopt;
}

Fd open_listener(std::uint16_t port, std::string& error) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) {
    error = std::string("socket: ") + std::strerror(errno);
    return Fd();
  }
  const int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd.get(), 64) != 0) {
    error = "listening on 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(errno);
    return Fd();
  }
  return fd;
}

Outcome write_id_maps(pid_t child, std::optional<std::uint32_t> jail_uid,
                      std::optional<std::uint32_t> jail_gid) {
  const std::string base = "/proc/" + std::to_string(child) + "/";
  std::string uid_map, gid_map;
  if (jail_uid) {
    // Root launcher: 0 stays 0 (C, the jail's init, sets up as root of the namespace), the jail
    // id maps to itself.
    const std::uint32_t gid = jail_gid.value_or(*jail_uid);
    uid_map = "0 0 1\n";
    if (*jail_uid != 0) {
      uid_map += std::to_string(*jail_uid) + " " + std::to_string(*jail_uid) + " 1\n";
    }
    gid_map = "0 0 1\n";
    if (gid != 0) gid_map += std::to_string(gid) + " " + std::to_string(gid) + " 1\n";
  } else {
    uid_map = "0 " + std::to_string(::geteuid()) + " 1\n";
    gid_map = "0 " + std::to_string(::getegid()) + " 1\n";
  }
  int error = 0;
  if (!write_file(base + "uid_map", uid_map, error)) {
    return failure("user namespace", "writing uid_map", error);
  }
  if (!write_file(base + "setgroups", "deny", error)) {
    return failure("user namespace", "writing setgroups", error);
  }
  if (!write_file(base + "gid_map", gid_map, error)) {
    return failure("user namespace", "writing gid_map", error);
  }
  return std::nullopt;
}

namespace {

bool set_caps(std::uint64_t effective, std::uint64_t permitted, std::uint64_t inheritable) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  data[0].effective = static_cast<std::uint32_t>(effective);
  data[1].effective = static_cast<std::uint32_t>(effective >> 32);
  data[0].permitted = static_cast<std::uint32_t>(permitted);
  data[1].permitted = static_cast<std::uint32_t>(permitted >> 32);
  data[0].inheritable = static_cast<std::uint32_t>(inheritable);
  data[1].inheritable = static_cast<std::uint32_t>(inheritable >> 32);
  return ::syscall(SYS_capset, &header, data) == 0;
}

}  // namespace

Outcome drop_privileges(std::optional<std::uint32_t> jail_uid,
                        std::optional<std::uint32_t> jail_gid) {
  const char* kWhat = "capabilities";
  constexpr std::uint64_t kAll = ~0ULL;
  constexpr std::uint64_t kDac = (1ULL << CAP_DAC_OVERRIDE) | (1ULL << CAP_DAC_READ_SEARCH);
  const std::uint64_t keep = jail_uid ? kDac : 0;
  if (jail_uid) {
    if (::prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) return failure(kWhat, "PR_SET_KEEPCAPS", errno);
    const std::uint32_t gid = jail_gid.value_or(*jail_uid);
    if (::setresgid(gid, gid, gid) != 0) return failure("user namespace", "setresgid", errno);
    if (::setresuid(*jail_uid, *jail_uid, *jail_uid) != 0) {
      return failure("user namespace", "setresuid", errno);
    }
  }
  // Everything still permitted becomes effective for the steps below (which need CAP_SETPCAP).
  if (!set_caps(kAll, kAll, keep) &&
      !set_caps(kAll & 0xffffffffffULL, kAll & 0xffffffffffULL, keep)) {
    return failure(kWhat, "capset", errno);
  }
  for (int cap = 0; cap < 64; ++cap) {
    if (keep & (1ULL << cap)) {
      if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0) {
        return failure(kWhat, "raising an ambient capability", errno);
      }
    }
  }
  for (int cap = 0; cap < 64; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
      return failure(kWhat, "emptying the bounding set", errno);
    }
  }
  const unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                             SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                             SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
  if (::prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) return failure(kWhat, "securebits", errno);
  if (!set_caps(keep, keep, keep)) return failure(kWhat, "capset", errno);
  return std::nullopt;
}

Outcome apply_rlimits(const LaunchOptions& options) {
  auto set = [](int resource, rlim_t value) {
    const rlimit limit{value, value};
    return ::setrlimit(resource, &limit) == 0;
  };
  if (!set(RLIMIT_CORE, 0)) return failure("rlimits", "RLIMIT_CORE", errno);
  if (options.address_space > 0 && !set(RLIMIT_AS, options.address_space)) {
    return failure("rlimits", "RLIMIT_AS", errno);
  }
  if (options.nproc > 0 && !set(RLIMIT_NPROC, options.nproc)) {
    return failure("rlimits", "RLIMIT_NPROC", errno);
  }
  if (options.nofile > 0 && !set(RLIMIT_NOFILE, options.nofile)) {
    return failure("rlimits", "RLIMIT_NOFILE", errno);
  }
  return std::nullopt;
}

Outcome Cgroups::create(const LaunchOptions& options, pid_t member) {
  const std::string self = std::to_string(::getpid());
  const std::string member_text = std::to_string(member);
  auto make = [&](const std::string& parent, std::string& dir, const char* mechanism,
                  const std::vector<std::pair<const char*, std::string>>& settings) -> Outcome {
    if (parent.empty()) return std::nullopt;
    dir = parent + "/j" + self;
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      const int e = errno;
      dir.clear();
      return failure(mechanism, "creating " + parent + "/j" + self, e);
    }
    int error = 0;
    for (const auto& [file, value] : settings) {
      const std::string path = dir + "/" + file;
      if (!write_file(path, value, error)) {
        // memsw exists only with swap accounting; anything else is a real failure.
        if (error == ENOENT && std::strstr(file, "memsw") != nullptr) continue;
        return failure(mechanism, std::string("writing ") + file, error);
      }
    }
    if (!write_file(dir + "/cgroup.procs", member_text, error)) {
      return failure(mechanism, "joining " + dir, error);
    }
    return std::nullopt;
  };
  if (options.memory > 0) {
    const std::string limit = std::to_string(options.memory);
    if (auto f = make(options.cgroup_memory, memory_, "memory cgroup",
                      {{"memory.limit_in_bytes", limit}, {"memory.memsw.limit_in_bytes", limit}})) {
      return f;
    }
  }
  if (options.nproc > 0) {
    if (auto f = make(options.cgroup_pids, pids_, "pids cgroup",
                      {{"pids.max", std::to_string(options.nproc)}})) {
      return f;
    }
  }
  return std::nullopt;
}

bool Cgroups::oom_killed() const {
  if (memory_.empty()) return false;
  const std::string text = read_small_file(memory_ + "/memory.oom_control");
  const auto at = text.find("oom_kill ");
  if (at == std::string::npos) return false;
  return std::strtoull(text.c_str() + at + 9, nullptr, 10) > 0;
}

void Cgroups::remove() {
  for (std::string* dir : {&memory_, &pids_}) {
    if (dir->empty()) continue;
    ::rmdir(dir->c_str());
    dir->clear();
  }
}

// ---------------------------------------------------------------------------------------------
// Probing.

namespace {

/// Runs `body` in a child created by clone(flags); true when it exits 0. `detail` gets its
/// message (written to a pipe) or the clone error.
template <class Body>
bool try_in_child(unsigned long flags, std::string& detail, Body&& body) {
  FdPair pipe;
  if (const int error = open_pipe(pipe); error != 0) {
    detail = std::strerror(error);
    return false;
  }
  const long pid = ::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
  if (pid < 0) {
    detail = std::string("clone: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    // The child (a copy of this single-threaded launcher) ends with _exit: no destructor runs.
    pipe[0].reset();
    std::string message;
    const bool ok = body(message);
    if (::write(pipe[1].get(), message.data(), message.size()) < 0) {
    }
    ::_exit(ok ? 0 : 1);
  }
  pipe[1].reset();
  char buffer[512];
  ssize_t n = 0;
  detail.clear();
  while ((n = ::read(pipe[0].get(), buffer, sizeof buffer)) > 0) {
    detail.append(buffer, static_cast<size_t>(n));
  }
  pipe[0].reset();
  int status = 0;
  while (::waitpid(static_cast<pid_t>(pid), &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string json_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

void report(const char* mechanism, bool ok, std::string_view detail) {
  std::printf("{\"mechanism\":\"%s\",\"ok\":%s,\"detail\":\"%s\"}\n", mechanism,
              ok ? "true" : "false", json_escape(detail).c_str());
}

}  // namespace

void probe(const LaunchOptions& options) {
  std::string detail;
  const int abi = landlock_abi();
  report("landlock", abi >= 1, abi >= 1 ? "ABI " + std::to_string(abi) : "not available");
  report("landlock-network", abi >= 4, abi >= 4 ? "TCP bind/connect rules" : "needs ABI 4");

  bool ok = try_in_child(0, detail, [](std::string& message) {
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
      message = std::strerror(errno);
      return false;
    }
    if (auto f = apply_seccomp(NetMode::kNone)) {
      message = f->detail;
      return false;
    }
    message = "filter loaded";
    return true;
  });
  report("seccomp", ok, detail);

  // The namespaces, the way the jail creates them: the user namespace first (its maps written
  // from outside are not needed to create the others).
  struct Ns {
    const char* name;
    unsigned long flag;
  };
  const Ns namespaces[] = {{"user namespace", CLONE_NEWUSER},
                           {"pid namespace", CLONE_NEWUSER | CLONE_NEWPID},
                           {"mount namespace", CLONE_NEWUSER | CLONE_NEWNS},
                           {"network namespace", CLONE_NEWUSER | CLONE_NEWNET},
                           {"ipc namespace", CLONE_NEWUSER | CLONE_NEWIPC},
                           {"uts namespace", CLONE_NEWUSER | CLONE_NEWUTS}};
  for (const auto& ns : namespaces) {
    ok = try_in_child(ns.flag, detail, [](std::string& message) {
      message = "created";
      return true;
    });
    report(ns.name, ok, detail);
  }

  auto probe_cgroup = [&](const char* name, const std::string& parent) {
    if (parent.empty()) {
      report(name, false, "no writable cgroup v1 hierarchy");
      return;
    }
    const std::string dir = parent + "/probe" + std::to_string(::getpid());
    if (::mkdir(dir.c_str(), 0755) != 0) {
      report(name, false, "cannot create a group under " + parent + ": " + std::strerror(errno));
      return;
    }
    ::rmdir(dir.c_str());
    report(name, true, parent);
  };
  probe_cgroup("memory cgroup", options.cgroup_memory);
  probe_cgroup("pids cgroup", options.cgroup_pids);
  std::fflush(stdout);
}

}  // namespace hearth::jail::sandbox
